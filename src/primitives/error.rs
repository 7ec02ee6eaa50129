//! How a primitive says it could not give a result.

use crate::transport::TransportError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The fabric is wrong (e.g. `n.sh` of a command that exited non-zero): a test failure.
    Failure,
    /// The check could not be made (unreachable node, timeout, missing tool, bad output).
    Error,
    /// `--dry-run`: the commands were listed, not run: there is no result (the script gets a
    /// stand-in value that stops the test where its answer would decide what happens next).
    DryRun,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct PrimError {
    pub kind: Kind,
    /// One line, naming the node and what is wrong.
    pub message: String,
    /// Longer story for the report body (stderr tail, unparsed output).
    pub detail: Option<String>,
    /// `--dry-run`: what of the result is known without an answer (from the plan); `null`
    /// fields stand for what only the run can tell.
    pub known: Option<serde_json::Value>,
}

impl PrimError {
    pub fn error(message: impl Into<String>) -> PrimError {
        PrimError {
            kind: Kind::Error,
            message: message.into(),
            detail: None,
            known: None,
        }
    }
    pub fn error_with(message: impl Into<String>, detail: impl Into<String>) -> PrimError {
        PrimError {
            kind: Kind::Error,
            message: message.into(),
            detail: Some(detail.into()),
            known: None,
        }
    }
    pub fn failure_with(message: impl Into<String>, detail: Option<String>) -> PrimError {
        PrimError {
            kind: Kind::Failure,
            message: message.into(),
            detail,
            known: None,
        }
    }
    /// `--dry-run`: the answer of `what` (a command, a tool run) on `node` is not known; the
    /// message names it for the script value that stands for it.
    pub fn dry_run(node: &str, what: &str) -> PrimError {
        PrimError {
            kind: Kind::DryRun,
            message: format!("the answer of `{what}` on {node}"),
            detail: None,
            known: None,
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

pub type PResult<T> = Result<T, PrimError>;
