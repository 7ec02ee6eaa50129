//! nccl-tests through a launcher: `all_reduce_perf(nodes, opts)`, `nccl_test(name, nodes, opts)`.
//! The launch runs on the first node; NCCL variables travel in the launcher's environment
//! (`mpirun -x NAME`, `srun --export=ALL`), so that their values never appear on a logged
//! command line.

use super::{
    arg_words, check_addr, check_name, check_program, parsed, NodeRef, PResult, PrimError,
};
use crate::parse;
use crate::transport::CmdRequest;
use serde::Serialize;
use std::time::Duration;

pub const DEFAULT_ARGS: &str = "-b 8 -e 1G -f 2 -g 1";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launcher {
    Mpirun,
    Srun,
    Local,
}

impl Launcher {
    pub fn parse(s: &str) -> PResult<Launcher> {
        match s {
            "mpirun" => Ok(Launcher::Mpirun),
            "srun" => Ok(Launcher::Srun),
            "local" => Ok(Launcher::Local),
            other => Err(PrimError::error(format!(
                "unknown launcher `{other}`; use mpirun, srun or local"
            ))),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Launcher::Mpirun => "mpirun",
            Launcher::Srun => "srun",
            Launcher::Local => "local",
        }
    }
}

/// Options of an nccl-tests run.
#[derive(Debug, Clone, Default)]
pub struct NcclOpts {
    pub binary: Option<String>,
    pub args: Option<String>,
    /// Validated variable names.
    pub env: Vec<(String, String)>,
    /// Default: mpirun for several nodes, local for one.
    pub launcher: Option<Launcher>,
    pub np: Option<i64>,
    /// Default: the nodes' fabric addresses.
    pub hosts: Option<Vec<String>>,
    pub timeout: Option<Duration>,
}

/// A planned launch: the command line on the first node and its environment.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    pub command: String,
    pub env: Vec<(String, String)>,
    pub launcher: Launcher,
    /// The program asked for (named when missing).
    pub program: String,
}

/// The launch of nccl-tests program `name` on `nodes` (inventory entries).
pub fn launch(name: &str, nodes: &[&crate::inventory::Node], o: &NcclOpts) -> PResult<Launch> {
    check_program(name)?;
    if nodes.is_empty() {
        return Err(PrimError::error(
            "nccl tests need at least one node (an array from nodes())",
        ));
    }
    let bin = o.binary.clone().unwrap_or_else(|| name.to_string());
    check_program(&bin)?;
    let words = arg_words("args", o.args.as_deref().unwrap_or(DEFAULT_ARGS))?;
    let mut env = o.env.clone();
    // So that the transport NCCL really used is known.
    for (k, v) in [("NCCL_DEBUG", "INFO"), ("NCCL_DEBUG_SUBSYS", "INIT,NET")] {
        if !env.iter().any(|(x, _)| x == k) {
            env.push((k.into(), v.into()));
        }
    }
    let launcher = o.launcher.unwrap_or(if nodes.len() > 1 {
        Launcher::Mpirun
    } else {
        Launcher::Local
    });
    let np = o.np.unwrap_or(nodes.len() as i64).clamp(1, 1 << 20);
    let hosts: Vec<String> = match &o.hosts {
        Some(h) => h.clone(),
        None => nodes
            .iter()
            .map(|n| super::pair::fabric_ip_for(n, None))
            .collect(),
    };
    for h in &hosts {
        check_addr(h)?;
    }
    let tail = format!("{bin} {}", words.join(" "));
    let command = match launcher {
        Launcher::Mpirun => {
            let slots = (np as usize).div_ceil(hosts.len().max(1)).max(1);
            let h: Vec<String> = hosts.iter().map(|h| format!("{h}:{slots}")).collect();
            let x: Vec<String> = env.iter().map(|(k, _)| format!("-x {k}")).collect();
            format!(
                "mpirun -np {np} -H {} --bind-to none {} {tail}",
                h.join(","),
                x.join(" ")
            )
        }
        Launcher::Srun => {
            let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
            for n in &names {
                check_name("node", n)?;
            }
            // srun's --export splits at commas (NCCL_DEBUG_SUBSYS=INIT,NET would break): the
            // variables are srun's own environment, passed on with --export=ALL.
            format!(
                "srun -N {} -n {np} -w {} --export=ALL {tail}",
                nodes.len(),
                names.join(","),
            )
        }
        Launcher::Local => tail,
    };
    Ok(Launch {
        command,
        env,
        launcher,
        program: bin,
    })
}

/// The nccl parse plus how it was launched.
#[derive(Debug, Clone, Default, Serialize)]
pub struct NcclResult {
    #[serde(flatten)]
    pub parsed: parse::nccl::Nccl,
    pub launcher: String,
    pub command: String,
    pub exit_code: Option<i64>,
}

/// Run nccl-tests program `name` across `nodes` (launched from the first).
pub fn nccl_test(name: &str, nodes: &[NodeRef], o: &NcclOpts) -> PResult<NcclResult> {
    let specs: Vec<&crate::inventory::Node> = nodes.iter().map(|n| n.spec.as_ref()).collect();
    let l = launch(name, &specs, o)?;
    let first = &nodes[0];
    let env = &first.env;
    if l.launcher != Launcher::Local {
        env.need_tool(&first.spec, l.launcher.name());
    }
    // The launcher starts the program on every node of the launch, at the same path.
    let ranks: &[NodeRef] = if l.launcher == Launcher::Local {
        &nodes[..1]
    } else {
        nodes
    };
    for n in ranks {
        env.need_tool(&n.spec, &l.program);
        env.need_rdma(&n.spec);
    }
    let req = CmdRequest {
        command: l.command.clone(),
        timeout: env.command_timeout(&first.spec, o.timeout, None),
        env: l.env.clone(),
        sudo: false,
    };
    let out = env.exec(&first.spec, &req)?;
    let missing = if l.launcher != Launcher::Local && out.stderr.contains(l.launcher.name()) {
        l.launcher.name()
    } else {
        l.program.as_str()
    };
    super::tools::installed(&out, first.name(), missing)?;
    let text = format!("{}\n{}", out.stdout, out.stderr);
    let p = parsed(first.name(), &text, parse::nccl::parse)?;
    if out.exit_code != Some(0) || p.rows.is_empty() {
        let why = if p.errors.is_empty() {
            format!(
                "exit {}, {} result rows",
                out.exit_code.unwrap_or(-1),
                p.rows.len()
            )
        } else {
            p.errors.join(" | ")
        };
        return Err(PrimError::error_with(
            format!("{name} on {}: {why}", first.name()),
            crate::run::model::cap(&text, 4000),
        ));
    }
    Ok(NcclResult {
        parsed: p,
        launcher: l.launcher.name().to_string(),
        command: l.command,
        exit_code: out.exit_code,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::Node;

    fn node(name: &str, ip: &str) -> Node {
        let mut n = Node::bare(name);
        n.fabric_ips = vec![ip.to_string()];
        n
    }

    #[test]
    fn mpirun_line_names_variables_but_not_their_values() {
        let (a, b) = (
            node("spark-01", "192.168.100.10"),
            node("spark-02", "192.168.100.11"),
        );
        let o = NcclOpts {
            env: vec![("NCCL_IB_TOKEN".into(), "s3cret".into())],
            ..Default::default()
        };
        let l = launch("all_reduce_perf", &[&a, &b], &o).unwrap();
        assert_eq!(
            l.command,
            "mpirun -np 2 -H 192.168.100.10:1,192.168.100.11:1 --bind-to none -x NCCL_IB_TOKEN -x NCCL_DEBUG -x NCCL_DEBUG_SUBSYS all_reduce_perf -b 8 -e 1G -f 2 -g 1"
        );
        assert!(!l.command.contains("s3cret"));
        assert!(l
            .env
            .contains(&("NCCL_DEBUG_SUBSYS".into(), "INIT,NET".into())));
        assert_eq!(l.launcher, Launcher::Mpirun);
    }

    #[test]
    fn srun_and_local_lines() {
        let (a, b) = (node("gpu1", "10.0.0.1"), node("gpu2", "10.0.0.2"));
        let o = NcclOpts {
            launcher: Some(Launcher::Srun),
            np: Some(16),
            args: Some("-b 1G -e 8G -f 2 -g 1".into()),
            ..Default::default()
        };
        assert_eq!(
            launch("all_reduce_perf", &[&a, &b], &o).unwrap().command,
            "srun -N 2 -n 16 -w gpu1,gpu2 --export=ALL all_reduce_perf -b 1G -e 8G -f 2 -g 1"
        );
        let l = launch("all_gather_perf", &[&a], &NcclOpts::default()).unwrap();
        assert_eq!(l.command, "all_gather_perf -b 8 -e 1G -f 2 -g 1");
        assert_eq!(l.launcher, Launcher::Local);
    }

    #[test]
    fn hostile_arguments_are_refused() {
        let a = node("gpu1", "10.0.0.1");
        let bad_args = NcclOpts {
            args: Some("-b 8 $(reboot)".into()),
            ..Default::default()
        };
        assert!(launch("all_reduce_perf", &[&a], &bad_args).is_err());
        let bad_bin = NcclOpts {
            binary: Some("x;y".into()),
            ..Default::default()
        };
        assert!(launch("all_reduce_perf", &[&a], &bad_bin).is_err());
        let bad_host = NcclOpts {
            hosts: Some(vec!["-oProxyCommand=x".into()]),
            ..Default::default()
        };
        assert!(launch("all_reduce_perf", &[&a], &bad_host).is_err());
    }
}
