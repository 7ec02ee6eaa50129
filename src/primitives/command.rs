//! `n.run`, `n.sh`, `run_all`: commands on nodes.

use super::{tail, NodeRef, PResult, PrimError};
use crate::inventory::Node;
use crate::run::env::log_command;
use crate::transport::{CmdOutput, CmdRequest, TransportError};
use std::sync::Arc;
use std::time::Duration;

/// Options of `n.run` / `n.sh` / `run_all`: the script's option keys are these fields.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct RunOpts {
    #[serde(deserialize_with = "crate::util::duration::optional")]
    pub timeout: Option<Duration>,
    pub sudo: bool,
    /// Validated variable names.
    #[serde(deserialize_with = "crate::util::names::env_map")]
    pub env: Vec<(String, String)>,
}

pub(crate) fn request(n: &NodeRef, spec: &Node, cmd: &str, o: &RunOpts) -> CmdRequest {
    CmdRequest {
        command: cmd.to_string(),
        timeout: n.env.command_timeout(spec, o.timeout, None, n.log.as_ref()),
        env: o.env.clone(),
        sudo: o.sudo,
    }
}

/// Shell words that are not programs to look for.
const SHELL_WORDS: &[&str] = &[
    "command", "cd", "test", "[", "echo", "printf", "true", "false", "for", "if", "while", "case",
    "export", "set", "unset", "exec", "read", "eval", ".", ":", "{", "(", "!", "exit", "return",
    "local", "type", "ulimit", "umask", "wait", "trap", "shift",
];

/// The program a shell command starts with (`rdma link` → `rdma`), when it names one.
pub(crate) fn first_program(cmd: &str) -> Option<&str> {
    let w = cmd.split_whitespace().next()?;
    let w = w.trim_end_matches(';');
    (!w.contains('=') && !SHELL_WORDS.contains(&w) && crate::util::names::valid_program(w))
        .then_some(w)
}

/// `--dry-run`: what a script's own command needs on its node (its first program).
fn need(n: &NodeRef, spec: &Node, cmd: &str) {
    if let Some(p) = first_program(cmd) {
        n.env.need_tool(spec, p, n.log.as_ref());
    }
}

/// `n.run(cmd)`: a non-zero exit is data; an unreachable node or a timeout is an error.
pub(crate) fn run(n: &NodeRef, cmd: &str, o: &RunOpts) -> PResult<CmdOutput> {
    let req = request(n, &n.spec, cmd, o);
    need(n, &n.spec, cmd);
    Ok(n.exec(&req)?)
}

/// `n.sh(cmd)`: stdout, or a failure with exit code and stderr tail (exit 127 is an error: the
/// command is missing).
pub(crate) fn sh(n: &NodeRef, cmd: &str, o: &RunOpts) -> PResult<String> {
    let out = run(n, cmd, o)?;
    sh_result(n.name(), cmd, out)
}

pub(crate) fn sh_result(node: &str, cmd: &str, o: CmdOutput) -> PResult<String> {
    match o.exit_code {
        Some(0) => Ok(o.stdout),
        Some(127) => Err(PrimError::error_with(
            format!("{node}: `{cmd}`: command not found (exit 127)"),
            tail(&o.stderr, 10),
        )),
        code => Err(PrimError::failure_with(
            format!(
                "{node}: `{cmd}` exited with {}{}",
                code.map(|c| c.to_string()).unwrap_or("a signal".into()),
                match tail(&o.stderr, 1).trim() {
                    "" => String::new(),
                    t => format!(": {t}"),
                }
            ),
            Some(tail(&o.stderr, 20)),
        )),
    }
}

/// `run_all(nodes, cmd)`: all nodes at once (up to the fan-out); (name, result) in node order.
/// Any node that could not be reached makes the whole call an error listing them.
pub(crate) fn run_all(
    nodes: &[NodeRef],
    cmd: &str,
    o: &RunOpts,
) -> PResult<Vec<(String, CmdOutput)>> {
    let Some(first) = nodes.first() else {
        return Ok(vec![]);
    };
    let env = first.env.clone();
    let specs: Vec<Arc<Node>> = nodes.iter().map(|n| n.spec.clone()).collect();
    let reqs: Vec<CmdRequest> = specs.iter().map(|s| request(first, s, cmd, o)).collect();
    for s in &specs {
        need(first, s, cmd);
    }
    let results = env.run_many(&specs, &reqs);
    let mut out = Vec::new();
    let mut errors = Vec::new();
    let mut listed = false;
    for ((spec, req), res) in specs.iter().zip(&reqs).zip(results) {
        log_command(first.log.as_ref(), spec, req, &res);
        match res {
            Ok(o) => out.push((spec.name.clone(), o)),
            Err(TransportError::NotRun { .. }) => listed = true,
            Err(e) => errors.push(e.to_string()),
        }
    }
    // A dry run listed the command on every node: one stand-in for the whole answer.
    if listed {
        return Err(PrimError::dry_run("every node", cmd));
    }
    if !errors.is_empty() {
        return Err(PrimError::error_with(
            format!(
                "run_all: {} of {} nodes failed: {}",
                errors.len(),
                specs.len(),
                errors[0]
            ),
            errors.join("\n"),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn first_program_of_a_shell_command() {
        let f = super::first_program;
        assert_eq!(f("rdma link"), Some("rdma"));
        assert_eq!(f("/usr/sbin/ethtool -i eth0"), Some("/usr/sbin/ethtool"));
        assert_eq!(f("cat -- '/x' | wc -l"), Some("cat"));
        // Shell words and assignments are not programs to look for.
        assert_eq!(f("command -v x || true"), None);
        assert_eq!(f("FOO=1 make"), None);
        assert_eq!(f("  "), None);
    }
}
