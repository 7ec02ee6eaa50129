//! `fabcheck parse KIND [FILE]`: parse captured tool output, print JSON.

use super::common::usage;
use super::EXIT_OK;
use crate::util::fs::{read_all_capped, read_capped_bytes, CAPTURE_CAP};
use std::path::Path;

pub fn parse(kind: &str, file: Option<&Path>) -> i32 {
    // A regular file (a FIFO or a device is refused at once) or stdin, at most CAPTURE_CAP.
    let read = match file {
        Some(p) => read_capped_bytes(p, CAPTURE_CAP, "captured output"),
        None => read_all_capped(std::io::stdin().lock(), CAPTURE_CAP, "captured output"),
    };
    let bytes = match read {
        Ok(b) => b,
        Err(e) => {
            return usage(format!(
                "cannot read {}: {e}",
                file.map(|p| p.display().to_string())
                    .unwrap_or("stdin".into())
            ))
        }
    };
    match crate::parse::parse(kind, &String::from_utf8_lossy(&bytes)) {
        Ok(v) => {
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            EXIT_OK
        }
        Err(e) => usage(e),
    }
}
