//! nccl-tests through a launcher: `all_reduce_perf(nodes, opts)`, `nccl_test(name, nodes, opts)`.
//! The launch runs on the first node; NCCL variables travel in the launcher's environment
//! (`mpirun -x NAME`, `srun --export=ALL`), so that their values never appear on a logged
//! command line.
//!
//! srun inside a Slurm allocation (`SLURM_JOB_ID` where fabcheck runs) runs the ranks as a step
//! of it (`--jobid=J --overlap`); outside one it makes a new job, and the test says so. srun
//! runs with `-v`, whose launch lines name the job, the step and its hosts (parse::srun).

use super::{
    arg_words, check_addr, check_name, check_program, parsed, NodeRef, PResult, PrimError,
};
use crate::inventory::slurm::Allocation;
use crate::parse;
use crate::run::context::Kept;
use crate::transport::{CmdRequest, TransportError};
use serde::Serialize;
use std::time::Duration;

pub(crate) const DEFAULT_ARGS: &str = "-b 8 -e 1G -f 2 -g 1";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Launcher {
    Mpirun,
    Srun,
    Local,
}

impl Launcher {
    pub(crate) fn parse(s: &str) -> PResult<Launcher> {
        match s {
            "mpirun" => Ok(Launcher::Mpirun),
            "srun" => Ok(Launcher::Srun),
            "local" => Ok(Launcher::Local),
            other => Err(PrimError::error(format!(
                "unknown launcher `{other}`; use mpirun, srun or local"
            ))),
        }
    }
    pub(crate) fn name(self) -> &'static str {
        match self {
            Launcher::Mpirun => "mpirun",
            Launcher::Srun => "srun",
            Launcher::Local => "local",
        }
    }
}

/// Options of an nccl-tests run: the script's option keys are these fields.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct NcclOpts {
    pub binary: Option<String>,
    pub args: Option<String>,
    /// Validated variable names.
    #[serde(deserialize_with = "crate::util::names::env_map")]
    pub env: Vec<(String, String)>,
    /// Default: mpirun for several nodes, local for one.
    #[serde(deserialize_with = "launcher")]
    pub launcher: Option<Launcher>,
    pub np: Option<i64>,
    /// One rank per GPU of every node (a full-node collective) instead of one per node: the
    /// ranks per node are `n.expect("gpus_per_node")` (`--set`, node var, the platform profile,
    /// else the GPUs the node shows; the fewest where nodes differ). Ignored when `np` is given.
    pub per_gpu: bool,
    /// Default: the nodes' fabric addresses.
    pub hosts: Option<Vec<String>>,
    #[serde(deserialize_with = "crate::util::duration::optional")]
    pub timeout: Option<Duration>,
}

/// `launcher: "srun"`: one of the launchers.
fn launcher<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Launcher>, D::Error> {
    match <Option<String> as serde::Deserialize>::deserialize(d)? {
        None => Ok(None),
        Some(s) => Launcher::parse(&s)
            .map(Some)
            .map_err(|e| serde::de::Error::custom(e.message)),
    }
}

/// A planned launch: the command line on the first node and its environment.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Launch {
    pub command: String,
    pub env: Vec<(String, String)>,
    pub launcher: Launcher,
    /// The program asked for (named when missing).
    pub program: String,
}

/// The launch of nccl-tests program `name` on `nodes` (inventory entries), from inside the
/// Slurm allocation `alloc` if any.
pub(crate) fn launch(
    name: &str,
    nodes: &[&crate::inventory::Node],
    o: &NcclOpts,
    alloc: Option<&Allocation>,
) -> PResult<Launch> {
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
            // variables are srun's own environment, passed on with --export=ALL. In an
            // allocation: a step of it (sharing the nodes with the step fabcheck may run in).
            let step = match alloc {
                Some(a) => format!("--jobid={} --overlap ", a.job_id),
                None => String::new(),
            };
            format!(
                "srun {step}-v -N {} -n {np} -w {} --export=ALL {tail}",
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
pub(crate) struct NcclResult {
    #[serde(flatten)]
    pub parsed: parse::nccl::Nccl,
    pub launcher: String,
    pub command: String,
    pub exit_code: Option<i64>,
    /// srun: the Slurm job and step the ranks ran as (`8`, `8.0`) and the hosts of the step.
    pub slurm_job: Option<String>,
    pub slurm_step: Option<String>,
    pub slurm_hosts: Vec<String>,
    /// Ranks launched per node (1: one per node; `per_gpu`: the GPUs per node).
    pub ranks_per_node: i64,
}

/// The ranks per node of a `per_gpu` launch: every node's `gpus_per_node` expectation (the GPUs
/// it shows where nothing else says; at least 1); where they differ (nodes of different
/// platforms), the fewest, said in the test's log. A node showing fewer GPUs than expected is a
/// failure. A dry run reads nothing: one rank per node is listed then.
fn ranks_per_node(nodes: &[NodeRef]) -> PResult<i64> {
    let mut seen: Vec<(String, i64, String)> = Vec::new();
    let dry = |e: &PrimError| e.kind == crate::run::outcome::Outcome::DryRun;
    for n in nodes {
        let gpus = match super::profile::detect(n) {
            Ok(d) => d.gpus as i64,
            Err(e) if dry(&e) => 0,
            Err(e) => return Err(e),
        };
        // a dry run reads nothing: --set gpus_per_node (or the node var) is listed, else 1
        let e = match super::profile::expect(
            n,
            "gpus_per_node",
            None,
            serde_json::json!(gpus.max(1)),
        ) {
            Err(e) if dry(&e) => return Ok(1),
            r => r?,
        };
        let k = match &e.value {
            serde_json::Value::Number(x) => x.as_i64(),
            serde_json::Value::String(x) => x.trim().parse().ok(),
            _ => None,
        }
        .filter(|k| *k >= 1)
        .ok_or_else(|| {
            PrimError::error(format!(
                "{}: gpus_per_node {} ({}) is not a whole number of GPUs",
                n.name(),
                e.value,
                e.from
            ))
        })?;
        if gpus > 0 && gpus < k {
            n.keep(Kept::Subject(crate::run::model::Subject {
                part: Some(format!(
                    "{}: {gpus} of its {k} GPUs seen (a GPU fallen off the bus: nvidia-smi, dmesg | grep -i xid)",
                    n.name()
                )),
                ..crate::run::model::Subject::new(crate::run::model::Finding::Other, n.name())
            }));
            return Err(PrimError::failure_with(format!(
                "{}: {gpus} GPU(s) seen, {k} expected ({}): a full-node collective needs every GPU (a GPU fallen off the bus, a driver problem?); --set gpus_per_node={gpus} runs on the GPUs there are",
                n.name(),
                e.from
            ), None));
        }
        seen.push((n.name().to_string(), k, e.from));
    }
    // Nodes of different platforms: the same ranks on every node (mpirun's slots), as many
    // as the node with the fewest GPUs has; said in the test's log.
    let k = seen.iter().map(|x| x.1).min().unwrap_or(1);
    if seen.iter().any(|x| x.1 != k) {
        let each: Vec<String> = seen
            .iter()
            .map(|(n, k, from)| format!("{n} {k} ({from})"))
            .collect();
        nodes[0].keep(Kept::Line(format!(
            "GPUs per node differ: {}; {k} rank(s) per node, the fewest (--set gpus_per_node=N to choose)",
            each.join(", ")
        )));
    }
    Ok(k)
}

/// Run nccl-tests program `name` across `nodes` (launched from the first).
pub(crate) fn nccl_test(name: &str, nodes: &[NodeRef], o: &NcclOpts) -> PResult<NcclResult> {
    let specs: Vec<&crate::inventory::Node> = nodes.iter().map(|n| n.spec.as_ref()).collect();
    let first = &nodes[0];
    let env = &first.env;
    let alloc = env.slurm.as_ref();
    let mut o = o.clone();
    let per_node = if o.per_gpu && o.np.is_none() && !nodes.is_empty() {
        let k = ranks_per_node(nodes)?;
        o.np = Some(k * nodes.len() as i64);
        k
    } else {
        let np = o.np.unwrap_or(nodes.len() as i64);
        (np / nodes.len().max(1) as i64).max(1)
    };
    let l = launch(name, &specs, &o, alloc)?;
    if l.launcher == Launcher::Srun {
        if let Some(a) = alloc {
            refuse_foreign_allocation(a, &first.spec)?;
        }
    }
    if l.launcher != Launcher::Local {
        first.need_tool(l.launcher.name());
    }
    // The launcher starts the program on every node of the launch, at the same path.
    let ranks: &[NodeRef] = if l.launcher == Launcher::Local {
        &nodes[..1]
    } else {
        nodes
    };
    for n in ranks {
        n.need_tool(&l.program);
        env.need_rdma(&n.spec, n.log.as_ref());
    }
    let req = CmdRequest {
        command: l.command.clone(),
        timeout: first.command_timeout(o.timeout, None),
        env: l.env.clone(),
        sudo: false,
    };
    let out = match first.exec(&req) {
        Err(e) if l.launcher == Launcher::Srun => return Err(srun_timeout(e, alloc)),
        r => r?,
    };
    let missing = if l.launcher != Launcher::Local && out.stderr.contains(l.launcher.name()) {
        l.launcher.name()
    } else {
        l.program.as_str()
    };
    super::tools::installed(&out, first.name(), missing)?;
    let srun = (l.launcher == Launcher::Srun).then(|| parse::srun::parse(&out.stderr));
    if let Some(s) = &srun {
        first.keep(slurm_step_told(s, alloc));
    }
    let text = format!("{}\n{}", out.stdout, out.stderr);
    let p = parse::nccl::parse(&text);
    if let Some(e) = launcher_failure(&l, first.name(), &out, &srun, &p) {
        return Err(e);
    }
    let p = parsed(first.name(), &text, |_| p)?;
    // Results with `#wrong` > 0 are data corruption whatever the exit code (older nccl-tests
    // exit 0, newer exit non-zero): the script's evidence check fails on them, naming sizes.
    let wrong = p.rows.iter().any(|r| {
        [r.out_of_place.wrong, r.in_place.wrong]
            .iter()
            .any(|w| w.is_some_and(|w| w > 0.0))
    });
    if (out.exit_code != Some(0) && !wrong) || p.rows.is_empty() {
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
    let srun = srun.unwrap_or_default();
    Ok(NcclResult {
        parsed: p,
        launcher: l.launcher.name().to_string(),
        command: l.command,
        exit_code: out.exit_code,
        slurm_job: srun.job,
        slurm_step: srun.step,
        slurm_hosts: srun.hosts,
        ranks_per_node: per_node,
    })
}

/// Slurm lets only an allocation's owner (or an administrator) run steps in it: a launch that
/// would run srun as another user on the first node is refused before anything runs. Known
/// only when Slurm names the owner (`SLURM_JOB_USER`: batch jobs and steps) and the inventory
/// the first node's `user`; otherwise (salloc sets no owner, and fabcheck may run as another
/// user than the allocation's, e.g. through sudo) Slurm's own refusal is told, with the why.
fn refuse_foreign_allocation(a: &Allocation, first: &crate::inventory::Node) -> PResult<()> {
    match (a.user.as_deref(), first.user.as_deref()) {
        (Some(owner), Some(user)) if owner != user && user != "root" => {
            Err(PrimError::error(format!(
                "srun: fabcheck runs inside Slurm allocation {} (SLURM_JOB_ID) of user `{owner}` (SLURM_JOB_USER), but the launch on {} runs as `{user}` (the inventory's user), and Slurm lets only the allocation's owner run steps in it; run fabcheck as `{user}` in an allocation of its own, or give the nodes user `{owner}`",
                a.job_id, first.name
            )))
        }
        _ => Ok(()),
    }
}

/// For the test's output: the Slurm job and step the ranks ran as; a warning when srun made a
/// job of its own (no allocation where fabcheck runs). What srun -v did not say is left out.
fn slurm_step_told(s: &parse::srun::Srun, alloc: Option<&Allocation>) -> Kept {
    let step = match (&s.step, s.hosts.is_empty()) {
        (Some(step), false) => format!("step {step} on {}", s.hosts.join(", ")),
        (Some(step), true) => format!("step {step}"),
        (None, _) => "a step srun -v did not name".to_string(),
    };
    match alloc {
        Some(a) => Kept::Line(format!(
            "srun: the ranks ran as {step} of Slurm allocation {} (SLURM_JOB_ID)",
            a.job_id
        )),
        None => {
            let job = match &s.job {
                Some(j) => format!("Slurm made job {j} for the ranks ({step})"),
                None => "srun asked Slurm for a job of its own for the ranks".to_string(),
            };
            Kept::Warning(format!(
                "srun ran outside a Slurm allocation (no SLURM_JOB_ID where fabcheck runs): {job}; run fabcheck inside salloc or sbatch to test the allocation's nodes as a step of it"
            ))
        }
    }
}

/// A launcher that failed before nccl-tests printed its results is told as the launcher's
/// failure with its own message (srun's and slurmstepd's error lines, else the end of its
/// stderr), never as nccl output that cannot be parsed.
fn launcher_failure(
    l: &Launch,
    node: &str,
    out: &crate::transport::CmdOutput,
    srun: &Option<parse::srun::Srun>,
    p: &Result<parse::nccl::Nccl, parse::ParseError>,
) -> Option<PrimError> {
    let results = matches!(p, Ok(n) if !n.rows.is_empty() || !n.errors.is_empty());
    if l.launcher == Launcher::Local || out.exit_code == Some(0) || results {
        return None;
    }
    let lines: Vec<String> = match srun {
        // The why (`slurmstepd-NODE: error: execve(): …`) before the per-task exit codes.
        Some(s) if !s.errors.is_empty() => {
            let mut e = s.errors.clone();
            e.sort_by_key(|l| l.contains(": Exited with exit code "));
            e
        }
        _ => super::tail(&out.stderr, 3)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.trim().to_string())
            .collect(),
    };
    let exit = out
        .exit_code
        .map(|c| format!("exit {c}"))
        .unwrap_or_else(|| "killed by a signal".into());
    let mut message = format!(
        "{} (the launcher) failed on {node} ({exit}) before {} printed results: {}",
        l.launcher.name(),
        l.program,
        lines.first().map(String::as_str).unwrap_or("(no message)")
    );
    let says = |what: &str| lines.iter().any(|e| e.contains(what));
    if says("Access/permission denied") {
        message.push_str(
            " (the Slurm allocation belongs to another user than the one fabcheck connects as)",
        );
    } else if says("Requested node configuration is not available") {
        message.push_str(" (is every node of the launch in the Slurm allocation?)");
    }
    Some(PrimError::error_with(
        message,
        crate::run::model::cap(&format!("{}\n{}", lines.join("\n"), out.stderr), 4000),
    ))
}

/// srun that timed out outside an allocation while its new job waited in the queue: said so.
fn srun_timeout(e: TransportError, alloc: Option<&Allocation>) -> PrimError {
    if let TransportError::Timeout { printed, .. } = &e {
        let s = parse::srun::parse(&printed.stderr);
        if s.queued && alloc.is_none() {
            return PrimError::error(format!(
                "{e} — srun ran outside a Slurm allocation and its new job {} waited for the nodes until the timeout; run fabcheck inside the allocation (salloc, sbatch) to launch the ranks as a step of it",
                s.job.as_deref().unwrap_or("?")
            ));
        }
    }
    e.into()
}

crate::impl_shape!(
    NcclResult,
    serialised("all_reduce_perf result").flat::<crate::parse::nccl::Nccl>()
);

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
        let l = launch("all_reduce_perf", &[&a, &b], &o, None).unwrap();
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
            launch("all_reduce_perf", &[&a, &b], &o, None)
                .unwrap()
                .command,
            "srun -v -N 2 -n 16 -w gpu1,gpu2 --export=ALL all_reduce_perf -b 1G -e 8G -f 2 -g 1"
        );
        // Inside an allocation: a step of it.
        let alloc = Allocation {
            job_id: "8".into(),
            user: None,
        };
        assert_eq!(
            launch("all_reduce_perf", &[&a, &b], &o, Some(&alloc)).unwrap().command,
            "srun --jobid=8 --overlap -v -N 2 -n 16 -w gpu1,gpu2 --export=ALL all_reduce_perf -b 1G -e 8G -f 2 -g 1"
        );
        let l = launch("all_gather_perf", &[&a], &NcclOpts::default(), None).unwrap();
        assert_eq!(l.command, "all_gather_perf -b 8 -e 1G -f 2 -g 1");
        assert_eq!(l.launcher, Launcher::Local);
    }

    fn srun_launch() -> Launch {
        let (a, b) = (node("lab01", "10.0.0.1"), node("lab04", "10.0.0.4"));
        let o = NcclOpts {
            launcher: Some(Launcher::Srun),
            ..Default::default()
        };
        launch("all_reduce_perf", &[&a, &b], &o, None).unwrap()
    }

    fn failed(stderr: &str, exit: i64) -> crate::transport::CmdOutput {
        crate::transport::CmdOutput {
            notices: Vec::new(),
            stdout: String::new(),
            stderr: stderr.into(),
            exit_code: Some(exit),
            duration: Duration::from_millis(30),
        }
    }

    /// srun refusing the step (real Slurm 22.05 lines): told as srun's failure with its own
    /// message, not as nccl output that cannot be parsed.
    #[test]
    fn a_launcher_failure_names_the_launcher_and_its_message() {
        let l = srun_launch();
        for (fixture, says) in [
            (
                include_str!("../../tests/fixtures/slurm/srun-22.05-v-node-not-in-allocation.txt"),
                "srun: error: Unable to create step for job 1: Requested node configuration is not available (is every node of the launch in the Slurm allocation?)",
            ),
            (
                include_str!(
                    "../../tests/fixtures/slurm/srun-22.05-v-other-users-job-access-denied.txt"
                ),
                "srun: error: Unable to create step for job 1: Access/permission denied",
            ),
        ] {
            let out = failed(fixture, 1);
            let text = format!("{}\n{}", out.stdout, out.stderr);
            let p = parse::nccl::parse(&text);
            assert!(p.is_err(), "no nccl header: today's parse error");
            let srun = Some(parse::srun::parse(&out.stderr));
            let e = launcher_failure(&l, "lab01", &out, &srun, &p).expect("a launcher failure");
            let m = e.to_string();
            assert!(
                m.contains("srun (the launcher) failed on lab01 (exit 1) before all_reduce_perf printed results")
                    && m.contains(says)
                    && !m.contains("cannot parse"),
                "{m}"
            );
        }
        // mpirun (no capture of its own): the end of its stderr.
        let mut m = l.clone();
        m.launcher = Launcher::Mpirun;
        let out = failed(
            "some banner\nmpirun was unable to launch the specified application\n",
            1,
        );
        let p = parse::nccl::parse(&out.stderr);
        let e = launcher_failure(&m, "n1", &out, &None, &p)
            .unwrap()
            .to_string();
        assert!(
            e.contains("mpirun (the launcher) failed on n1 (exit 1)") && e.contains("some banner"),
            "{e}"
        );
        // Results came back (or nccl said why it failed), or the launch worked: not the launcher.
        let ok = failed("", 0);
        assert!(launcher_failure(&l, "n1", &ok, &None, &parse::nccl::parse("")).is_none());
        let local = Launch {
            launcher: Launcher::Local,
            ..l.clone()
        };
        assert!(launcher_failure(&local, "n1", &out, &None, &p).is_none());
    }

    /// The test's output names the job and step srun -v reported; outside an allocation it is
    /// a warning too.
    #[test]
    fn the_test_names_the_slurm_job_and_step() {
        use crate::run::context;
        let told = |fixture: &str, alloc: Option<&Allocation>| {
            let log =
                context::TestLog::new(context::TestCtx::new("t", Duration::from_secs(60)), "t");
            log.keep(slurm_step_told(&parse::srun::parse(fixture), alloc));
            let c = log.take();
            (c.output, c.warnings)
        };
        let alloc = Allocation {
            job_id: "1".into(),
            user: None,
        };
        let step = include_str!("../../tests/fixtures/slurm/srun-22.05-v-step-of-allocation.txt");
        let (out, warnings) = told(step, Some(&alloc));
        assert_eq!(
            out,
            "srun: the ranks ran as step 1.0 on lab01, lab02, lab03 of Slurm allocation 1 (SLURM_JOB_ID)\n"
        );
        assert!(warnings.is_empty(), "{warnings:?}");
        let own =
            include_str!("../../tests/fixtures/slurm/srun-22.05-v-new-job-outside-allocation.txt");
        let (_, warnings) = told(own, None);
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].starts_with("srun ran outside a Slurm allocation")
                && warnings[0]
                    .contains("Slurm made job 3 for the ranks (step 3.0 on lab01, lab02, lab03)"),
            "{warnings:?}"
        );
        // srun that said nothing (no -v lines): nothing made up.
        let (_, warnings) = told("", None);
        assert!(
            warnings[0].contains("srun asked Slurm for a job of its own")
                && !warnings[0].contains('?'),
            "{warnings:?}"
        );
    }

    #[test]
    fn another_users_allocation_is_refused_before_launching() {
        let mut first = node("lab01", "10.0.0.1");
        first.user = Some("fclab".into());
        let mine = Allocation {
            job_id: "8".into(),
            user: Some("fclab".into()),
        };
        assert!(refuse_foreign_allocation(&mine, &first).is_ok());
        let theirs = Allocation {
            job_id: "8".into(),
            user: Some("alice".into()),
        };
        let m = refuse_foreign_allocation(&theirs, &first)
            .unwrap_err()
            .to_string();
        assert!(
            m.contains("allocation 8") && m.contains("`alice`") && m.contains("runs as `fclab`"),
            "{m}"
        );
        // No owner named (salloc) or no inventory user: not known here; Slurm's refusal is
        // told (a_launcher_failure_names_the_launcher_and_its_message).
        let unnamed = Allocation {
            job_id: "8".into(),
            user: None,
        };
        assert!(refuse_foreign_allocation(&unnamed, &first).is_ok());
        first.user = None;
        assert!(refuse_foreign_allocation(&theirs, &first).is_ok());
    }

    #[test]
    fn hostile_arguments_are_refused() {
        let a = node("gpu1", "10.0.0.1");
        let bad_args = NcclOpts {
            args: Some("-b 8 $(reboot)".into()),
            ..Default::default()
        };
        assert!(launch("all_reduce_perf", &[&a], &bad_args, None).is_err());
        let bad_bin = NcclOpts {
            binary: Some("x;y".into()),
            ..Default::default()
        };
        assert!(launch("all_reduce_perf", &[&a], &bad_bin, None).is_err());
        let bad_host = NcclOpts {
            hosts: Some(vec!["-oProxyCommand=x".into()]),
            ..Default::default()
        };
        assert!(launch("all_reduce_perf", &[&a], &bad_host, None).is_err());
    }
}
