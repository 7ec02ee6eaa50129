//! Commands that may still run on their node: sent, and no exit status came back (the run
//! was interrupted, the connection dropped, the node's sshd died or stopped). The interrupt's
//! cleanup ends them over the node's connection, or over a fresh one when that connection is
//! gone; a node where neither works is reported with what may be left there and until when
//! (the node-side cap: every command runs under `timeout -k 5 T`).

use super::super::{CmdOutput, Leftover, TransportError};
use std::time::{Duration, SystemTime};

/// One command in flight on a node.
#[derive(Debug, Clone)]
pub(super) struct Pending {
    pub command: String,
    /// When the node's own `timeout -k 5` has ended it at the latest.
    pub until: SystemTime,
}

impl Pending {
    pub(super) fn new(command: &str, timeout: Duration) -> Pending {
        Pending {
            command: command.to_string(),
            until: SystemTime::now() + timeout + Duration::from_secs(5),
        }
    }
}

/// Whether the command's end on the node is known: an exit status came back, it never
/// started (not connected, refused before running), or its timeout killed it on the node.
/// Otherwise (interrupted, connection dropped, no answer, output lost) it may still run.
pub(super) fn settled(r: &Result<CmdOutput, TransportError>) -> bool {
    match r {
        Ok(o) => o.exit_code.is_some(),
        Err(
            TransportError::Interrupted { .. }
            | TransportError::Dropped { .. }
            | TransportError::NoAnswer { .. }
            | TransportError::ShellFlood { .. }
            | TransportError::OutputLost { .. },
        ) => false,
        Err(_) => true,
    }
}

/// What a node that could not be cleaned up may still run, as the reports show it.
pub(super) fn leftover(node: &str, pending: &[Pending]) -> Option<Leftover> {
    let until = pending.iter().map(|p| p.until).max()?;
    let mut commands: Vec<String> = pending
        .iter()
        .map(|p| {
            let mut c = p.command.clone();
            if c.len() > 200 {
                let mut cut = 200;
                while !c.is_char_boundary(cut) {
                    cut -= 1;
                }
                c.truncate(cut);
                c.push('…');
            }
            c
        })
        .collect();
    commands.sort();
    commands.dedup();
    Some(Leftover {
        node: node.to_string(),
        commands,
        until: chrono::DateTime::<chrono::Utc>::from(until)
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_commands_whose_end_is_unknown_stay_pending() {
        let out = |code| {
            Ok(CmdOutput {
                notices: Vec::new(),
                stdout: String::new(),
                stderr: String::new(),
                exit_code: code,
                duration: Duration::ZERO,
            })
        };
        assert!(settled(&out(Some(0))));
        assert!(!settled(&out(None)));
        let node = "n1".to_string();
        assert!(!settled(&Err(TransportError::Interrupted {
            node: node.clone()
        })));
        assert!(!settled(&Err(TransportError::Dropped {
            node: node.clone(),
            command: "sleep 60".into(),
            cause: "closed".into(),
        })));
        assert!(settled(&Err(TransportError::Other {
            node,
            message: "refused".into(),
        })));
    }

    #[test]
    fn a_leftover_names_the_commands_and_the_latest_cap() {
        let p = [
            Pending::new("sleep 60", Duration::from_secs(120)),
            Pending::new("sleep 60", Duration::from_secs(10)),
            Pending::new(&"x".repeat(300), Duration::from_secs(1)),
        ];
        let l = leftover("lab03", &p).unwrap();
        assert_eq!(l.node, "lab03");
        assert_eq!(l.commands.len(), 2);
        assert!(l.commands.iter().any(|c| c == "sleep 60"));
        let want = chrono::Utc::now() + chrono::Duration::seconds(125);
        let until = chrono::DateTime::parse_from_rfc3339(&l.until).unwrap();
        assert!(
            (until.timestamp() - want.timestamp()).abs() <= 2,
            "{}",
            l.until
        );
        assert!(leftover("n", &[]).is_none());
    }
}
