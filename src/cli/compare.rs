//! `fabcheck compare RESULT.json...`: side-by-side metrics of several runs.

use super::common::usage;
use super::EXIT_OK;

pub fn compare(results: &[std::path::PathBuf], format: &str) -> i32 {
    use crate::report::compare;
    if !matches!(format, "markdown" | "md" | "csv") {
        return usage(format!("--format {format}: expected `markdown` or `csv`"));
    }
    let inputs = match compare::load_all(results) {
        Ok(i) => i,
        Err(e) => return usage(format!("cannot read a result: {e}")),
    };
    let table = compare::build(&inputs);
    if format == "csv" {
        print!("{}", compare::csv(&table));
    } else {
        print!("{}", compare::markdown(&table));
        print!("{}", compare::matrices_markdown(&inputs));
    }
    EXIT_OK
}
