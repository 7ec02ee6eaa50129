//! How a primitive says it could not give a result.

use crate::transport::TransportError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The fabric is wrong (e.g. `n.sh` of a command that exited non-zero): a test failure.
    Failure,
    /// The check could not be made (unreachable node, timeout, missing tool, bad output).
    Error,
    /// `--dry-run`: the commands were printed, there is no result.
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
}

impl PrimError {
    pub fn error(message: impl Into<String>) -> PrimError {
        PrimError {
            kind: Kind::Error,
            message: message.into(),
            detail: None,
        }
    }
    pub fn error_with(message: impl Into<String>, detail: impl Into<String>) -> PrimError {
        PrimError {
            kind: Kind::Error,
            message: message.into(),
            detail: Some(detail.into()),
        }
    }
    pub fn failure_with(message: impl Into<String>, detail: Option<String>) -> PrimError {
        PrimError {
            kind: Kind::Failure,
            message: message.into(),
            detail,
        }
    }
    pub fn dry_run() -> PrimError {
        PrimError {
            kind: Kind::DryRun,
            message: "dry run: no result".into(),
            detail: None,
        }
    }
}

impl From<TransportError> for PrimError {
    fn from(e: TransportError) -> PrimError {
        PrimError::error(e.to_string())
    }
}

pub type PResult<T> = Result<T, PrimError>;
