//! What `srun -v` says about a launch (its stderr; Slurm 22.05): the job and step the ranks ran
//! as, the hosts it launched them on, whether it had to wait in the queue, and its own error
//! lines (`srun: error: …`, `srun: fatal: …`, `slurmstepd-NODE: error: …`).
//!
//! ```text
//! srun: jobid 1: nodes(3):`lab[01-03]', cpu counts: 2(x3)
//! srun: launching StepId=1.0 on host lab01, 1 tasks: 0
//! srun: job 2 queued and waiting for resources
//! srun: error: Unable to create step for job 1: Access/permission denied
//! ```
//!
//! Every other line (the program's own output, `srun: launch/slurm: …` chatter) is ignored:
//! the parse never fails.

use super::util::regex;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Srun {
    /// The job the ranks ran in (`srun: jobid J: …`, or the job of the step).
    pub job: Option<String>,
    /// The step, `JOB.STEP` (`StepId=1.0`).
    pub step: Option<String>,
    /// Hosts the step was launched on, in launch order, once each.
    pub hosts: Vec<String>,
    /// srun waited for resources (`srun: job N queued and waiting for resources`): it made a
    /// new job, and the nodes were busy.
    pub queued: bool,
    /// srun's and slurmstepd's error lines, in order, trimmed.
    pub errors: Vec<String>,
}

pub fn parse(text: &str) -> Srun {
    let mut s = Srun::default();
    for line in text.lines().map(str::trim) {
        if let Some(c) = regex!(r"^srun: jobid (\d+): nodes\(").captures(line) {
            s.job.get_or_insert_with(|| c[1].to_string());
        } else if let Some(c) =
            regex!(r"^srun: launching StepId=((\d+)\.\S+) on host ([^,\s]+),").captures(line)
        {
            s.step.get_or_insert_with(|| c[1].to_string());
            s.job.get_or_insert_with(|| c[2].to_string());
            if !s.hosts.iter().any(|h| h == &c[3]) {
                s.hosts.push(c[3].to_string());
            }
        } else if let Some(c) =
            regex!(r"^srun: job (\d+) queued and waiting for resources").captures(line)
        {
            s.queued = true;
            s.job.get_or_insert_with(|| c[1].to_string());
        } else if regex!(r"^(srun|slurmstepd(-\S+)?): (error|fatal): ").is_match(line) {
            s.errors.push(line.to_string());
        }
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_line_of_each_kind() {
        let s = super::parse(
            "lab01\nsrun: jobid 7: nodes(2):`n[1-2]', cpu counts: 2(x2)\n\
             srun: launching StepId=7.3 on host n1, 1 tasks: 0\n\
             srun: launching StepId=7.3 on host n2, 1 tasks: 1\n\
             srun: launching StepId=7.3 on host n2, 1 tasks: 2\n\
             srun: error: n2: task 1: Exited with exit code 2\n",
        );
        assert_eq!(s.job.as_deref(), Some("7"));
        assert_eq!(s.step.as_deref(), Some("7.3"));
        assert_eq!(s.hosts, ["n1", "n2"]);
        assert_eq!(
            s.errors,
            ["srun: error: n2: task 1: Exited with exit code 2"]
        );
        assert!(!s.queued);
        assert_eq!(
            super::parse("# nccl-tests output only\n"),
            super::Srun::default()
        );
    }
}
