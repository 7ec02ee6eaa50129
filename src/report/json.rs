//! JSON results (`--json`): the whole [`RunResult`]; the input of `compare` and `--baseline`.

use crate::run::model::RunResult;

pub(crate) fn render(run: &RunResult) -> String {
    serde_json::to_string_pretty(run)
        .unwrap_or_else(|e| format!("{{\"error\": \"cannot serialise results: {e}\"}}"))
}

pub(crate) fn load(path: &std::path::Path) -> Result<RunResult, LoadError> {
    use crate::util::fs::{read_capped, RESULT_CAP};
    // A regular file of at most RESULT_CAP: a FIFO or /dev/zero is refused at once.
    let text = read_capped(path, RESULT_CAP, "fabcheck --json result").map_err(|error| {
        LoadError::Read {
            path: path.into(),
            error,
        }
    })?;
    serde_json::from_str(&text).map_err(|error| LoadError::NotAResult {
        path: path.into(),
        error,
    })
}

/// A `--json` result file that could not be read back (`fabcheck compare`, `--baseline`).
#[derive(Debug, thiserror::Error)]
pub(crate) enum LoadError {
    #[error("{}: {error}", path.display())]
    Read {
        path: std::path::PathBuf,
        error: std::io::Error,
    },
    #[error("{}:{}:{}: not a fabcheck --json result: {error}", path.display(), error.line(), error.column())]
    NotAResult {
        path: std::path::PathBuf,
        error: serde_json::Error,
    },
}
