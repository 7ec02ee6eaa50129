//! `fabcheck parse KIND [FILE]`: parse captured tool output, print JSON.

use super::common::usage;
use super::EXIT_OK;
use std::io::Read;
use std::path::Path;

pub fn parse(kind: &str, file: Option<&Path>) -> i32 {
    let mut text = String::new();
    let res = match file {
        Some(p) => std::fs::read(p).map(|b| text = String::from_utf8_lossy(&b).into_owned()),
        None => std::io::stdin().read_to_string(&mut text).map(|_| ()),
    };
    if let Err(e) = res {
        return usage(format!(
            "cannot read {}: {e}",
            file.map(|p| p.display().to_string())
                .unwrap_or("stdin".into())
        ));
    }
    match crate::parse::parse(kind, &text) {
        Ok(v) => {
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            EXIT_OK
        }
        Err(e) => usage(e),
    }
}
