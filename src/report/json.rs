//! JSON results (`--json`): the whole [`RunResult`]; the input of `compare` and `--baseline`.

use crate::run::model::RunResult;

pub(crate) fn render(run: &RunResult) -> String {
    serde_json::to_string_pretty(run)
        .unwrap_or_else(|e| format!("{{\"error\": \"cannot serialise results: {e}\"}}"))
}

pub(crate) fn load(path: &std::path::Path) -> Result<RunResult, LoadError> {
    let text = std::fs::read_to_string(path).map_err(|error| LoadError::Read {
        path: path.into(),
        error,
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
