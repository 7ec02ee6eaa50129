//! How a check ends when it does not pass: one type for a primitive's error
//! (`primitives::PrimError`), the signal that leaves a running test (`engine::signal`), and,
//! through [`Status::from`], the status every report shows.

use super::model::Status;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The fabric is wrong (an assertion did not hold, `n.sh` of a command that exited
    /// non-zero): a test failure.
    Failure,
    /// The check could not be made (unreachable node, timeout, missing tool, bad output).
    Error,
    /// `skip(reason)`, missing `--allow-changes`, missing input.
    Skip,
    /// `--dry-run`: an answer a dry run does not have. A primitive's error of this kind gives
    /// the script a stand-in value; a test ended by it (a branch or loop on a stand-in) ends
    /// its listing there.
    DryRun,
    /// The script itself is wrong (it reads a field its result does not have): an error that
    /// no answer of the nodes changes, so a dry run reports it as an error too.
    ScriptError,
}

impl From<Outcome> for Status {
    /// The status of a test that ended so (a dry run's own outcomes are the listing's:
    /// `engine::runner`).
    fn from(o: Outcome) -> Status {
        match o {
            Outcome::Failure => Status::Failure,
            Outcome::Error | Outcome::ScriptError | Outcome::DryRun => Status::Error,
            Outcome::Skip => Status::Skipped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_as_report_statuses() {
        assert_eq!(Status::from(Outcome::Failure), Status::Failure);
        assert_eq!(Status::from(Outcome::Skip), Status::Skipped);
        // No answer of the nodes makes these a failure of the fabric.
        for o in [Outcome::Error, Outcome::ScriptError, Outcome::DryRun] {
            assert_eq!(Status::from(o), Status::Error, "{o:?}");
        }
    }
}
