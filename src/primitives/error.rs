//! How a primitive says it could not give a result.

pub(crate) use crate::run::outcome::Outcome;
use crate::transport::TransportError;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub(crate) struct PrimError {
    /// Failure, Error or DryRun.
    pub kind: Outcome,
    /// One line, naming the node and what is wrong.
    pub message: String,
    /// Longer story for the report body (stderr tail, unparsed output).
    pub detail: Option<String>,
    /// `--dry-run`: what of the result is known without an answer (from the plan); `null`
    /// fields stand for what only the run can tell.
    pub known: Option<serde_json::Value>,
}

impl PrimError {
    pub(crate) fn error(message: impl Into<String>) -> PrimError {
        PrimError {
            kind: Outcome::Error,
            message: message.into(),
            detail: None,
            known: None,
        }
    }
    pub(crate) fn error_with(message: impl Into<String>, detail: impl Into<String>) -> PrimError {
        PrimError {
            kind: Outcome::Error,
            message: message.into(),
            detail: Some(detail.into()),
            known: None,
        }
    }
    pub(crate) fn failure_with(message: impl Into<String>, detail: Option<String>) -> PrimError {
        PrimError {
            kind: Outcome::Failure,
            message: message.into(),
            detail,
            known: None,
        }
    }
    /// `--dry-run`: the answer of `what` (a command, a tool run) on `node` is not known; the
    /// message names it for the script value that stands for it.
    pub(crate) fn dry_run(node: &str, what: &str) -> PrimError {
        PrimError {
            kind: Outcome::DryRun,
            message: format!("the answer of `{what}` on {node}"),
            detail: None,
            known: None,
        }
    }
}

impl PrimError {
    /// A transport error met doing `what` (`iperf3 a -> b`): a command the dry run listed
    /// stays the dry run's stand-in; any other is an error saying `what: e`.
    pub(crate) fn doing(what: impl FnOnce() -> String, e: TransportError) -> PrimError {
        match e {
            TransportError::NotRun { node, command } => PrimError::dry_run(&node, &command),
            e => PrimError::error(format!("{}: {e}", what())),
        }
    }

    /// A dry run's stand-in becomes `stand_in()` (what the plan knows of the whole result);
    /// any other error is kept.
    pub(crate) fn standing_for(self, stand_in: impl FnOnce() -> PrimError) -> PrimError {
        match self.kind {
            Outcome::DryRun => stand_in(),
            _ => self,
        }
    }
}

impl From<TransportError> for PrimError {
    fn from(e: TransportError) -> PrimError {
        match e {
            TransportError::NotRun { node, command } => PrimError::dry_run(&node, &command),
            e => PrimError::error(e.to_string()),
        }
    }
}

pub(crate) type PResult<T> = Result<T, PrimError>;

#[cfg(test)]
mod tests {
    use super::*;

    /// Turning a transport error into a primitive's error is a conversion and nothing else (it
    /// is handed no test record): an unreachable node is kept by the command log
    /// (`run::env::log_command`).
    #[test]
    fn an_unreachable_error_converts() {
        let e = PrimError::from(TransportError::Unreachable {
            node: "dead-04".into(),
            host: "127.0.0.1".into(),
            cause: "Connection refused".into(),
        });
        assert_eq!(e.kind, Outcome::Error);
        assert!(e.message.contains("dead-04"), "{}", e.message);
    }
}
