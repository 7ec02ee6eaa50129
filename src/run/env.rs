//! The run environment: inventory, transports by kind, safety switches, and the one timeout
//! policy every primitive's commands go through. Every command runs through [`RunEnv::exec`]
//! (logged into the test record it is handed) or [`RunEnv::run_raw`] (the caller logs).

use super::context;
use super::dry::listed;
use super::model::{cap, CommandLog};
use crate::inventory::{Inventory, Node, TransportKind};
use crate::transport::{CmdOutput, CmdRequest, NoticeKind, Transport, TransportError};
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Transports by kind; `force` (from `--replay`) sends every node to one of them.
pub struct Transports {
    pub ssh: Arc<dyn Transport>,
    pub local: Arc<dyn Transport>,
    pub replay: Arc<dyn Transport>,
    pub force: Option<TransportKind>,
}

impl Transports {
    pub fn for_node(&self, n: &Node) -> &Arc<dyn Transport> {
        match self.force.as_ref().unwrap_or(&n.transport) {
            TransportKind::Ssh => &self.ssh,
            TransportKind::Local => &self.local,
            TransportKind::Replay => &self.replay,
        }
    }
    pub fn all(&self) -> [&Arc<dyn Transport>; 3] {
        [&self.ssh, &self.local, &self.replay]
    }
}

/// Everything a run shares: inventory, transports, parameters, safety switches.
pub struct RunEnv {
    pub inventory: Inventory,
    pub transports: Transports,
    /// `--set KEY=VALUE`, typed (numbers and booleans) as JSON values.
    pub params: BTreeMap<String, serde_json::Value>,
    pub allow_changes: bool,
    pub dry_run: bool,
    /// `--dry-run`: what the listed commands would need on each node (for the preflight).
    pub needs: super::dry::Needs,
    pub fanout: usize,
    pub stdlib_dir: Option<PathBuf>,
    /// `--timeout`: the timeout of every command that names none itself (see
    /// [`RunEnv::command_timeout`]) and the default test timeout.
    pub timeout: Option<Duration>,
    /// The run's one output channel (the console): the dry run's listing, what scripts print.
    pub observer: Arc<dyn super::observer::Observer>,
    /// The Slurm allocation fabcheck runs in (`SLURM_JOB_ID`), if any: the srun launcher runs
    /// the ranks as a step of it.
    pub slurm: Option<crate::inventory::slurm::Allocation>,
    /// Each node's platform profile, detected once per run (`primitives::profile`).
    pub profiles: super::profile::Cache,
    /// The kinds of transport notice the console was warned of in this run (once each).
    pub told: Mutex<HashSet<NoticeKind>>,
    /// The deadlines of the tests being evaluated now (what stops a script's own endless loop).
    pub running: context::Running,
}

/// A test's timeout when neither the test nor `--timeout` gives one.
pub(crate) const DEFAULT_TEST_TIMEOUT: Duration = Duration::from_secs(600);

/// Capture kept per command in reports (head + tail).
pub(crate) const LOG_CAP: usize = 8 * 1024;

/// The shortest timeout a command is given (a test with 10 ms left still gets a try).
const MIN_TIMEOUT: Duration = Duration::from_millis(100);

impl RunEnv {
    /// The environment of a local-only run with no settings: what registering the script
    /// functions for their declarations needs (no command runs).
    pub fn local() -> RunEnv {
        let t: Arc<dyn Transport> = Arc::new(crate::transport::local::LocalTransport);
        RunEnv {
            inventory: Inventory::local(),
            transports: Transports {
                ssh: t.clone(),
                local: t.clone(),
                replay: t,
                force: None,
            },
            params: BTreeMap::new(),
            allow_changes: false,
            dry_run: false,
            needs: Default::default(),
            fanout: 4,
            stdlib_dir: None,
            timeout: None,
            observer: Arc::new(crate::run::observer::NoObserver),
            slurm: None,
            profiles: Default::default(),
            told: Default::default(),
            running: Default::default(),
        }
    }

    /// The timeout of a test that names none itself: `--timeout`, else 10 minutes.
    pub fn test_timeout(&self) -> Duration {
        self.timeout.unwrap_or(DEFAULT_TEST_TIMEOUT)
    }

    /// The one timeout policy, for every command of every primitive (node methods, `run`/`sh`,
    /// pair runs, NCCL launches, dry-run checks):
    ///
    /// 1. the call's own `timeout` option, if the script gave one;
    /// 2. else `--timeout`, if given (it raises or lowers);
    /// 3. else the node's `command_timeout` (inventory, default 120 s), raised to what the work
    ///    asked needs (`work`: e.g. an `ib_write_bw` of `duration: 60` needs 60 s plus start-up);
    ///
    /// and never more than the time left in the current test (outside a test, `fabcheck exec`,
    /// nothing caps it).
    pub fn command_timeout(
        &self,
        node: &Node,
        explicit: Option<Duration>,
        work: Option<Duration>,
        log: Option<&context::TestLog>,
    ) -> Duration {
        let t = explicit
            .or(self.timeout)
            .unwrap_or_else(|| node.command_timeout.max(work.unwrap_or(Duration::ZERO)));
        log.map(context::TestLog::remaining)
            .map_or(t, |left| t.min(left))
            .max(MIN_TIMEOUT)
    }

    /// `--dry-run`: note that the current test needs `tool` on `node` (checked by the
    /// preflight). Outside dry runs it does nothing.
    pub fn need_tool(&self, node: &Node, tool: &str, log: Option<&context::TestLog>) {
        if self.dry_run {
            self.needs.tool(&node.name, tool, &test_name(log));
        }
    }

    /// `--dry-run`: note that the current test uses `node`'s RDMA devices.
    pub fn need_rdma(&self, node: &Node, log: Option<&context::TestLog>) {
        if self.dry_run {
            self.needs.rdma(&node.name, &test_name(log));
        }
    }

    /// Run a command on a node (any thread); the caller logs it. A dry run lists it instead
    /// (printed, its needs noted for the test `log` records, if any) and answers
    /// [`TransportError::NotRun`].
    pub fn run_raw(
        &self,
        node: &Node,
        req: &CmdRequest,
        log: Option<&context::TestLog>,
    ) -> Result<CmdOutput, TransportError> {
        if self.dry_run {
            let test = test_name(log);
            let dry = super::dry::DryRun {
                observer: self.observer.as_ref(),
                needs: &self.needs,
                force: self.transports.force.as_ref(),
                test: &test,
            };
            return dry.run(node, req);
        }
        tracing::debug!(
            "{}: {} (timeout {})",
            node.name,
            req.command,
            crate::util::duration::human(req.timeout)
        );
        let res = self.transports.for_node(node).run(node, req);
        self.tell(&res);
        res
    }

    /// Send on what the transport met reaching the node for this command: a warning the first
    /// time of each kind in the run, a `-v` line after (the reports get theirs in
    /// [`log_command`]).
    fn tell(&self, res: &Result<CmdOutput, TransportError>) {
        let Ok(out) = res else { return };
        for n in &out.notices {
            let first = self
                .told
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(n.kind);
            self.observer.event(&super::observer::Event::Notice {
                line: &n.text,
                first,
            });
        }
    }

    /// A read-only lookup that runs in a dry run too, because its answer decides what the test
    /// sends next (`n.which`); logged like any command.
    pub fn exec_lookup(
        &self,
        node: &Node,
        req: &CmdRequest,
        log: Option<&context::TestLog>,
    ) -> Result<CmdOutput, TransportError> {
        let res = self.transports.for_node(node).run(node, req);
        self.tell(&res);
        log_command(log, node, req, &res);
        res
    }

    /// Run and log into the test `log` records (none: `fabcheck exec`, not logged).
    pub fn exec(
        &self,
        node: &Node,
        req: &CmdRequest,
        log: Option<&context::TestLog>,
    ) -> Result<CmdOutput, TransportError> {
        let res = self.run_raw(node, req, log);
        log_command(log, node, req, &res);
        res
    }

    /// Run one request per node, up to the fan-out at once; results in node order (not logged).
    pub fn run_many(
        &self,
        nodes: &[Arc<Node>],
        reqs: &[CmdRequest],
    ) -> Vec<Result<CmdOutput, TransportError>> {
        let pairs: Vec<(&Arc<Node>, &CmdRequest)> = nodes.iter().zip(reqs).collect();
        crate::util::pool::map(
            &pairs,
            self.fanout,
            |_, (n, r)| self.run_raw(n, r, None),
            |_, (n, _)| {
                Err(TransportError::Other {
                    node: n.name.clone(),
                    message: "internal error: the command's thread panicked".into(),
                })
            },
        )
    }
}

/// The name of the test `log` records ("" outside a test).
fn test_name(log: Option<&context::TestLog>) -> String {
    log.map(context::TestLog::name).unwrap_or_default()
}

/// Record a command and its outcome in the test `log` records (capped head + tail); nothing
/// outside a test.
pub(crate) fn log_command(
    log: Option<&context::TestLog>,
    node: &Node,
    req: &CmdRequest,
    res: &Result<CmdOutput, TransportError>,
) {
    let entry = command_log(node, req, res);
    let Some(log) = log else {
        tracing::debug!(node = %entry.node, command = %entry.command, "command outside a test");
        return;
    };
    // What the transport had to tell the reports (a changed host key accepted) goes into the
    // test whose command met it.
    match res {
        Ok(o) => {
            for n in o.notices.iter().filter(|n| n.kind.for_reports()) {
                log.with(|c| c.warnings.push(n.text.clone()));
            }
        }
        // The diagnosis explains every red of this node by it (`run::diagnosis`).
        Err(TransportError::Unreachable { node, .. }) => {
            log.add_subject(super::model::Subject::new(
                super::model::Finding::Unreachable,
                node,
            ));
        }
        Err(_) => {}
    }
    let versions = super::versions::seen_in(&entry);
    log.with(|c| {
        c.tool_versions.extend(versions);
        if c.commands.len() < context::MAX_COMMANDS {
            c.commands.push(entry);
        } else {
            c.commands_dropped += 1;
        }
    });
}

/// A command and its outcome as reports keep it (output capped head + tail).
pub(crate) fn command_log(
    node: &Node,
    req: &CmdRequest,
    res: &Result<CmdOutput, TransportError>,
) -> CommandLog {
    match res {
        Ok(o) => CommandLog {
            node: node.name.clone(),
            command: req.command.clone(),
            exit_code: o.exit_code,
            duration_ms: o.duration.as_millis() as u64,
            stdout: cap(&o.stdout, LOG_CAP),
            stderr: cap(&o.stderr, LOG_CAP),
            error: None,
            dry_run: false,
        },
        Err(TransportError::NotRun { .. }) => CommandLog {
            node: node.name.clone(),
            command: listed(req),
            exit_code: None,
            duration_ms: 0,
            stdout: String::new(),
            stderr: String::new(),
            error: None,
            dry_run: true,
        },
        // A timed-out command: what it printed until it was killed, and how long it ran.
        Err(e @ TransportError::Timeout { printed, .. }) => CommandLog {
            node: node.name.clone(),
            command: req.command.clone(),
            exit_code: None,
            duration_ms: printed.duration.as_millis() as u64,
            stdout: cap(&printed.stdout, LOG_CAP),
            stderr: cap(&printed.stderr, LOG_CAP),
            error: Some(e.to_string()),
            dry_run: false,
        },
        Err(e) => CommandLog {
            node: node.name.clone(),
            command: req.command.clone(),
            exit_code: None,
            duration_ms: 0,
            stdout: String::new(),
            stderr: String::new(),
            error: Some(e.to_string()),
            dry_run: false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(timeout: Option<Duration>) -> RunEnv {
        RunEnv {
            timeout,
            ..RunEnv::local()
        }
    }

    #[test]
    fn one_timeout_policy() {
        let mut node = Node::bare("n");
        node.command_timeout = Duration::from_secs(120);
        let s = Duration::from_secs;
        let log = context::TestLog::new(context::TestCtx::new("t", s(3600)), "t.rhai");
        let log = Some(&log);
        // The node's command_timeout, raised to what the work needs.
        assert_eq!(env(None).command_timeout(&node, None, None, log), s(120));
        assert_eq!(
            env(None).command_timeout(&node, None, Some(s(300)), log),
            s(300)
        );
        // --timeout raises and lowers everything without an explicit option…
        assert_eq!(
            env(Some(s(1800))).command_timeout(&node, None, None, log),
            s(1800)
        );
        assert_eq!(
            env(Some(s(3))).command_timeout(&node, None, Some(s(65)), log),
            s(3)
        );
        // …and the call's own option wins over both.
        assert_eq!(
            env(Some(s(3))).command_timeout(&node, Some(s(20)), Some(s(65)), log),
            s(20)
        );
        // Never more than the time left in the test.
        let short = context::TestLog::new(context::TestCtx::new("t", s(5)), "t.rhai");
        assert!(env(None).command_timeout(&node, Some(s(60)), None, Some(&short)) <= s(5));
    }

    #[test]
    fn outside_a_test_nothing_caps_the_timeout() {
        // `fabcheck exec --timeout 1h` runs outside any test: no test deadline (there used to
        // be a hidden 600 s one) caps what it asked.
        let node = Node::bare("n");
        let s = Duration::from_secs;
        let log = None;
        assert_eq!(
            env(Some(s(3600))).command_timeout(&node, None, None, log),
            s(3600)
        );
        assert_eq!(
            env(Some(s(700))).command_timeout(&node, None, None, log),
            s(700)
        );
    }

    /// A command that times out keeps what it printed (the line that explains the hang) and
    /// its real duration, in the error and in the report's command log.
    #[test]
    fn a_timed_out_command_keeps_its_output_and_duration() {
        let node = Node::bare("n");
        let req = CmdRequest {
            command:
                "echo started; echo 'srun: job 8 queued and waiting for resources' >&2; sleep 30"
                    .into(),
            timeout: Duration::from_millis(700),
            ..Default::default()
        };
        let res = env(None).run_raw(&node, &req, None);
        let Err(e @ TransportError::Timeout { .. }) = &res else {
            panic!("{res:?}")
        };
        let m = e.to_string();
        assert!(
            m.contains("timed out after 700ms")
                && m.contains("last stderr: srun: job 8 queued and waiting for resources"),
            "{m}"
        );
        let log = command_log(&node, &req, &res);
        assert!(log.duration_ms >= 700, "{log:?}");
        assert_eq!(log.stdout, "started\n");
        assert!(log.stderr.contains("srun: job 8 queued"), "{log:?}");
        assert_eq!(log.error.as_deref(), Some(m.as_str()));
        // Nothing printed: said so.
        let quiet = CmdRequest {
            command: "sleep 30".into(),
            ..req
        };
        let m = env(None)
            .run_raw(&node, &quiet, None)
            .unwrap_err()
            .to_string();
        assert!(m.contains("and printed nothing"), "{m}");
    }
    /// Notices of the transport: the console is warned once per kind in the run (the other
    /// nodes' for -v); only a changed host key reaches the reports, in the test whose command
    /// met it.
    #[test]
    fn transport_notices_warn_once_per_kind_and_only_host_keys_reach_the_reports() {
        use crate::run::observer::{Event, Observer};
        use crate::transport::{Notice, NoticeKind};
        struct Noting;
        impl Transport for Noting {
            fn run(&self, node: &Node, _: &CmdRequest) -> Result<CmdOutput, TransportError> {
                let notice = |kind, what| Notice {
                    kind,
                    text: format!("{}: {what}", node.name),
                };
                Ok(CmdOutput {
                    exit_code: Some(0),
                    notices: vec![
                        notice(NoticeKind::ChangedHostKey, "key"),
                        notice(NoticeKind::NoisyShell, "shell"),
                    ],
                    ..Default::default()
                })
            }
        }
        #[derive(Default)]
        struct Seen(Mutex<Vec<(String, bool)>>);
        impl Observer for Seen {
            fn event(&self, e: &Event) {
                if let Event::Notice { line, first } = e {
                    self.0.lock().unwrap().push((line.to_string(), *first));
                }
            }
        }
        let t: Arc<dyn Transport> = Arc::new(Noting);
        let seen = Arc::new(Seen::default());
        let mut env = env(None);
        env.transports.ssh = t;
        env.observer = seen.clone();
        let log = context::TestLog::new(context::TestCtx::new("t", Duration::from_secs(60)), "t");
        for name in ["a", "b"] {
            env.exec(&Node::bare(name), &CmdRequest::default(), Some(&log))
                .unwrap();
        }
        let told = seen.0.lock().unwrap().clone();
        let told: Vec<(&str, bool)> = told.iter().map(|(l, f)| (l.as_str(), *f)).collect();
        assert_eq!(
            told,
            [
                ("a: key", true),
                ("a: shell", true),
                ("b: key", false),
                ("b: shell", false)
            ]
        );
        let ctx = log.take();
        assert_eq!(ctx.warnings, ["a: key", "b: key"]);
    }

    /// A node a command could not reach is a subject of the test that ran the command (the
    /// diagnosis explains the node's reds by it), kept by the log every command goes through,
    /// whatever the primitive then makes of the error (`primitives::error` keeps nothing).
    #[test]
    fn an_unreachable_node_is_kept_by_the_command_log() {
        use super::super::model::Finding;
        let unreachable = || TransportError::Unreachable {
            node: "dead-04".into(),
            host: "127.0.0.1".into(),
            cause: "Connection refused".into(),
        };
        let log = context::TestLog::new(context::TestCtx::new("t", Duration::from_secs(60)), "t");
        let (node, req) = (Node::bare("dead-04"), CmdRequest::default());
        log_command(Some(&log), &node, &req, &Err(unreachable()));
        log_command(Some(&log), &node, &req, &Err(unreachable()));
        log_command(
            Some(&log),
            &node,
            &req,
            &Err(TransportError::Other {
                node: "other-01".into(),
                message: "x".into(),
            }),
        );
        let subjects = log.take().subjects;
        assert_eq!(subjects.len(), 1, "{subjects:?}");
        assert_eq!(
            subjects[0],
            super::super::model::Subject::new(Finding::Unreachable, "dead-04")
        );
    }
}
