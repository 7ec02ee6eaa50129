//! `ssh_hop(from, to_address)`: passwordless SSH from one node to another address as the same
//! user, asked exactly as a workload (mpirun, NCCL's bootstrap) asks it: the node user's own ssh
//! config and known_hosts, `BatchMode=yes`. With `strict_host_key: true` the peer's host key
//! must already be trusted (`StrictHostKeyChecking=yes`).

use super::{check_addr, NodeRef, PResult};
use crate::transport::CmdRequest;
use crate::util::names::quote;
use serde::Serialize;
use std::time::Duration;

/// Options of `ssh_hop`: the script's option keys are these fields.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct SshHopOpts {
    pub strict_host_key: bool,
    #[serde(deserialize_with = "crate::util::duration::optional")]
    pub timeout: Option<Duration>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct SshHop {
    pub ok: bool,
    pub from: String,
    pub to: String,
    pub user: Option<String>,
    pub hostname: Option<String>,
    /// ssh's own reason when it failed.
    pub error: Option<String>,
    /// When ssh refused for trust, not reach: `host_key_unknown`, `host_key_changed` or
    /// `login_refused` (from ssh's own words in `error`).
    pub refused: Option<String>,
}

/// Why ssh refused the hop for trust, from its stderr (OpenSSH's messages), if it did.
pub(crate) fn refusal(stderr: &str) -> Option<&'static str> {
    if stderr.contains("REMOTE HOST IDENTIFICATION HAS CHANGED")
        || (stderr.contains("Host key for") && stderr.contains("has changed"))
    {
        Some("host_key_changed")
    } else if stderr.contains("Host key verification failed")
        || (stderr.contains("No ") && stderr.contains("host key is known for"))
    {
        Some("host_key_unknown")
    } else if stderr.contains("Permission denied (") {
        Some("login_refused")
    } else {
        None
    }
}

pub(crate) fn hop_command(to: &str, o: &SshHopOpts) -> PResult<String> {
    check_addr(to)?;
    let strict = if o.strict_host_key {
        " -o StrictHostKeyChecking=yes"
    } else {
        ""
    };
    Ok(format!(
        "ssh -o BatchMode=yes -o ConnectTimeout=10 -o NumberOfPasswordPrompts=0{strict} {} 'echo fabcheck-hop $(id -un) $(hostname)'",
        quote(to)
    ))
}

/// User and hostname from the hop's answer line. The peer's login shell may print before the
/// echo (a banner, a last line without a newline): the answer is what follows the tag,
/// wherever in a line it starts.
pub(crate) fn hop_answer(stdout: &str) -> (Option<String>, Option<String>) {
    let line = stdout
        .lines()
        .find_map(|l| l.find("fabcheck-hop ").map(|i| &l[i..]));
    let mut f = line
        .map(|l| {
            l.split_whitespace()
                .skip(1)
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
        .into_iter();
    (f.next(), f.next())
}

pub(crate) fn ssh_hop(from: &NodeRef, to: &str, o: &SshHopOpts) -> PResult<SshHop> {
    let cmd = hop_command(to, o)?;
    let req = CmdRequest {
        command: cmd,
        timeout: from.command_timeout(o.timeout, Some(Duration::from_secs(15))),
        env: vec![],
        sudo: false,
    };
    from.need_tool("ssh");
    let out = from.exec(&req)?;
    let (user, hostname) = hop_answer(&out.stdout);
    let ok = out.exit_code == Some(0) && hostname.is_some();
    let err = out
        .stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("Warning: Permanently added"))
        .collect::<Vec<_>>()
        .join(" | ");
    Ok(SshHop {
        ok,
        from: from.name().to_string(),
        to: to.to_string(),
        user,
        hostname,
        refused: (!ok)
            .then(|| refusal(&out.stderr))
            .flatten()
            .map(str::to_string),
        error: if ok {
            None
        } else if err.is_empty() {
            Some(format!("ssh exited {}", out.exit_code.unwrap_or(-1)))
        } else {
            Some(err)
        },
    })
}

crate::impl_shape!(SshHop, serialised("ssh_hop result"));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_for_trust_is_told_from_one_for_reach() {
        let unknown = "No ED25519 host key is known for 10.214.0.2 and you have requested strict checking.\nHost key verification failed.\n";
        assert_eq!(refusal(unknown), Some("host_key_unknown"));
        assert_eq!(
            refusal("Host key verification failed.\n"),
            Some("host_key_unknown")
        );
        let changed = "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\n@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\nHost key for 10.214.0.2 has changed and you have requested strict checking.\nHost key verification failed.\n";
        assert_eq!(refusal(changed), Some("host_key_changed"));
        assert_eq!(
            refusal("fclab@10.214.0.2: Permission denied (publickey).\n"),
            Some("login_refused")
        );
        assert_eq!(
            refusal("ssh: connect to host 10.214.0.2 port 22: No route to host\n"),
            None
        );
        assert_eq!(
            refusal("ssh: connect to host 10.214.0.2 port 22: Connection timed out\n"),
            None
        );
    }

    #[test]
    fn hop_asks_what_the_workload_asks_unless_strict() {
        let plain = hop_command("192.168.100.11", &SshHopOpts::default()).unwrap();
        assert!(
            plain.contains("BatchMode=yes") && !plain.contains("StrictHostKeyChecking"),
            "{plain}"
        );
        let strict = hop_command(
            "192.168.100.11",
            &SshHopOpts {
                strict_host_key: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(strict.contains("-o StrictHostKeyChecking=yes"), "{strict}");
        assert!(hop_command("-oProxyCommand=x", &SshHopOpts::default()).is_err());
    }

    #[test]
    fn hop_answer_survives_a_noisy_peer_shell() {
        let some = |a: &str, b: &str| (Some(a.to_string()), Some(b.to_string()));
        assert_eq!(
            hop_answer("fabcheck-hop fclab lab02\n"),
            some("fclab", "lab02")
        );
        // A banner, then a last line without newline glued to the answer.
        let noisy = "Welcome to lab02\nmotd: last login from 10.0.0.1fabcheck-hop fclab lab02\n";
        assert_eq!(hop_answer(noisy), some("fclab", "lab02"));
        assert_eq!(hop_answer("Welcome\n"), (None, None));
        assert_eq!(
            hop_answer("fabcheck-hop fclab\n"),
            (Some("fclab".into()), None)
        );
    }
}
