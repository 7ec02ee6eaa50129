//! JSON results (`--json`): the whole [`RunResult`]; the input of `compare` and `--baseline`.

use crate::run::model::RunResult;

pub(crate) fn render(run: &RunResult) -> String {
    serde_json::to_string_pretty(run)
        .unwrap_or_else(|e| format!("{{\"error\": \"cannot serialise results: {e}\"}}"))
}

pub(crate) fn load(path: &std::path::Path) -> Result<RunResult, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| {
        format!(
            "{}:{}:{}: not a fabcheck --json result: {e}",
            path.display(),
            e.line(),
            e.column()
        )
    })
}
