//! Command line (SPEC §1): clap-derive definitions and dispatch. Exit codes: 0 all passed or
//! skipped, 1 a test failed or errored, 2 usage/inventory/compile error, 3 interrupted.

pub mod check;
pub mod common;
pub mod compare;
pub mod disconnect;
pub mod discover;
pub mod doc;
pub mod exec;
pub mod health;
pub mod list;
pub mod nodes;
pub mod parse;
pub mod run;

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

pub const EXIT_OK: i32 = 0;
pub const EXIT_FAILED: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_INTERRUPTED: i32 = 3;

/// The exit codes, as `fabcheck --help` and `fabcheck run --help` print them.
pub const EXIT_CODES_HELP: &str = "Exit codes:
  0  every test passed or was skipped
  1  a test failed or errored
  2  usage, inventory or script error: nothing was run
  3  interrupted (Ctrl-C, SIGTERM)
  exec: the highest exit code of the command on any node (255: a node was not reached)";

/// `fabcheck exec --help`'s exit codes.
pub const EXEC_EXIT_CODES_HELP: &str = "Exit codes:
  0    the command exited 0 on every node
  N    the highest exit code of the command on any node (255: a node was not reached)
  2    usage or inventory error: nothing was run
  3    interrupted (Ctrl-C, SIGTERM)";

#[derive(Parser, Debug)]
#[command(
    name = "fabcheck",
    version,
    about = "Scripted acceptance and regression tests for GPU cluster network fabrics",
    after_help = EXIT_CODES_HELP
)]
pub struct Cli {
    /// More logs on stderr (-v debug, -vv trace); RUST_LOG is honoured.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    /// Print only failures and the summary.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Keep the SSH connections after the run, DURATION without use (default 10m), for the
    /// next run with the same inventory and ssh settings; `fabcheck disconnect` ends them.
    #[arg(long, global = true, value_name = "DURATION", num_args = 0..=1, require_equals = true, default_missing_value = "10m")]
    pub persist: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Args, Debug, Clone, Default)]
pub struct Target {
    /// Inventory file (TOML), or `slurm` / `slurm:DEFAULTS.toml` for the nodes of the current
    /// Slurm allocation (SLURM_JOB_NODELIST).
    #[arg(short = 'i', long = "inventory")]
    pub inventory: Option<PathBuf>,
    /// Node set to work on: `spark-[01-06]`, `gpu[1-3,7]`, `@group`.
    #[arg(short = 'w', long = "nodes")]
    pub nodes: Option<String>,
}

#[derive(Args, Debug, Clone, Default)]
pub struct RunArgs {
    /// Script files, directories (every *.rhai) or quoted glob patterns.
    #[arg(required = true)]
    pub scripts: Vec<String>,
    #[command(flatten)]
    pub target: Target,
    /// Write JUnit XML here.
    #[arg(long)]
    pub junit: Option<PathBuf>,
    /// Write JSON results here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write a self-contained HTML report here.
    #[arg(long)]
    pub html: Option<PathBuf>,
    /// Every run also writes junit.xml, result.json and report.html into a directory of its own
    /// under DIR (default ./fabcheck-results; named by start time and script), made before the
    /// first test and printed at the end. A DIR given here that cannot be made is exit 2 unless
    /// --junit/--json/--html are given; the default one that cannot be made (a read-only
    /// working directory, as under Slurm or cron) is a warning and the run goes on.
    #[arg(long, value_name = "DIR")]
    pub results: Option<PathBuf>,
    /// Do not write the per-run results directory (only the reports asked for by --junit,
    /// --json, --html).
    #[arg(long)]
    pub no_results: bool,
    /// Write DIR/fabcheck-run.prom (node_exporter's textfile collector) at the end, atomically:
    /// the run's verdict and the last measured RDMA and NCCL bandwidth with their thresholds
    /// (docs/continuous.md). Not written: a warning, never the verdict. A dry run writes none.
    #[arg(long, value_name = "DIR")]
    pub prom: Option<PathBuf>,
    /// Run only tests whose name contains this (repeatable; `tag:NAME` selects by tag).
    #[arg(long)]
    pub filter: Vec<String>,
    /// Script parameter, read with param("KEY") (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Parallel nodes at most.
    #[arg(long)]
    pub fanout: Option<usize>,
    /// Default test timeout and cap of every command (500ms, 30s, 5m).
    #[arg(long)]
    pub timeout: Option<String>,
    /// Print remote commands instead of running them; check reachability only.
    #[arg(long)]
    pub dry_run: bool,
    /// Allow tests marked as changing nodes. The shipped one is five-step's step 5: it writes a
    /// backup of /etc/netplan/*.yaml and writes the files back with their own content
    /// (`netplan apply` is never run). Without this flag such tests are skipped.
    #[arg(long)]
    pub allow_changes: bool,
    /// Save every remote command and its output in DIR.
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// Answer commands from transcripts in DIR instead of real nodes.
    #[arg(long, value_name = "DIR")]
    pub replay: Option<PathBuf>,
    /// Replay only: overlay fault scenario NAME (`<transcripts>/scenarios/NAME/`) on the
    /// transcripts (e.g. `negotiated-100g` on the bundled simulation).
    #[arg(long, value_name = "NAME")]
    pub scenario: Option<String>,
    /// Compare metrics with an earlier --json result.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Directory overriding the embedded stdlib modules (also FABCHECK_STDLIB).
    #[arg(long, value_name = "DIR")]
    pub stdlib: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run scripts and write reports.
    #[command(after_help = EXIT_CODES_HELP)]
    Run(Box<RunArgs>),
    /// Compile only: syntax and unknown-function errors.
    Check {
        #[arg(required = true)]
        scripts: Vec<String>,
    },
    /// The test names a run would produce.
    List {
        #[arg(required = true)]
        scripts: Vec<String>,
        #[command(flatten)]
        target: Target,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        #[arg(long)]
        filter: Vec<String>,
    },
    /// Ad-hoc fan-out of one command; identical outputs grouped (like clush -b).
    #[command(after_help = EXEC_EXIT_CODES_HELP)]
    Exec {
        #[command(flatten)]
        target: Target,
        /// Nodes contacted at once at most (default: the inventory's `fanout`, else 64).
        #[arg(long)]
        fanout: Option<usize>,
        /// Cap of the command on each node (500ms, 30s, 5m; default: the inventory's
        /// `command_timeout`); a node past it is reported as timed out.
        #[arg(long)]
        timeout: Option<String>,
        /// Relay the nodes' output as it is, control sequences included (by default escape
        /// sequences and control characters are removed: a node's output could set the
        /// terminal's title, clear it, or write the clipboard).
        #[arg(long)]
        raw: bool,
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
    /// Expand and print the inventory.
    Nodes {
        #[arg(short = 'i', long = "inventory")]
        inventory: Option<PathBuf>,
        /// Node set to expand (also accepted as `-w NODESET`, as for run and exec).
        #[arg(short = 'w', long = "nodes", conflicts_with = "nodeset")]
        w: Option<String>,
        nodeset: Option<String>,
    },
    /// Parse captured tool output (stdin if no FILE) and print JSON.
    Parse { kind: String, file: Option<PathBuf> },
    /// Read the nodes' fabric and write a commented inventory, or list what differs from one
    /// (docs/discover.md).
    Discover(Box<discover::DiscoverArgs>),
    /// Side-by-side table of metrics from several --json results.
    Compare {
        #[arg(required = true)]
        results: Vec<PathBuf>,
        #[arg(long, default_value = "markdown")]
        format: String,
    },
    /// Judge this node's fabric for Slurm's Prolog / HealthCheckProgram, with Prometheus
    /// gauges (docs/continuous.md).
    #[command(after_help = health::HEALTH_EXIT_CODES_HELP)]
    Health(Box<health::HealthArgs>),
    /// Reference of every script function, generated from the engine.
    Doc,
    /// End the SSH connections kept by `--persist` (docs/reliability.md).
    Disconnect,
}

/// An argument that is not UTF-8 (a script or file name in another encoding), named: clap
/// alone says only that one of them is.
fn non_utf8_argument() -> Option<String> {
    let (i, a) = std::env::args_os()
        .enumerate()
        .skip(1)
        .find(|(_, a)| a.to_str().is_none())?;
    Some(format!(
        "argument {i} ({}, U+FFFD where it is not UTF-8) is not valid UTF-8: fabcheck takes \
         script, inventory and report names as UTF-8 text; rename the file to a UTF-8 name \
         (`mv` with the name your shell's completion types)",
        crate::util::fmt::clean_text(&a.to_string_lossy()),
    ))
}

fn init_tracing(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "fabcheck=debug,info",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // Colours only for a person at a terminal: a log file or CI capture gets plain text.
    use std::io::IsTerminal;
    let ansi = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .with_target(false)
        .try_init();
}

pub fn main() -> i32 {
    if let Some(e) = non_utf8_argument() {
        eprintln!("error: {e}");
        return EXIT_USAGE;
    }
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
            let _ = e.print();
            return code;
        }
    };
    init_tracing(cli.verbose);
    if !matches!(
        cli.command,
        Command::Run(_) | Command::Exec { .. } | Command::Discover(_) | Command::Health(_)
    ) {
        // Printing-only commands end quietly when their reader goes away (`fabcheck doc | head`).
        // Not for run/exec: their SSH sockets must see EPIPE as an error, not kill fabcheck.
        // SAFETY: setting a signal disposition before any thread is started.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    if let Err(code) = disconnect::persist(cli.persist.as_deref()) {
        return code;
    }
    match cli.command {
        Command::Run(a) => run::run(*a, cli.quiet, cli.verbose),
        Command::Check { scripts } => check::check(&scripts),
        Command::List {
            scripts,
            target,
            set,
            filter,
        } => list::list(&scripts, &target, &set, &filter),
        Command::Exec {
            target,
            fanout,
            timeout,
            raw,
            command,
        } => exec::exec(
            &target,
            fanout,
            timeout.as_deref(),
            raw,
            &command,
            cli.verbose,
        ),
        Command::Nodes {
            inventory,
            w,
            nodeset,
        } => nodes::nodes(inventory.as_deref(), w.or(nodeset).as_deref()),
        Command::Parse { kind, file } => parse::parse(&kind, file.as_deref()),
        Command::Compare { results, format } => compare::compare(&results, &format),
        Command::Doc => doc::doc(),
        Command::Disconnect => disconnect::disconnect(),
        Command::Discover(a) => discover::discover(&a, cli.verbose),
        Command::Health(a) => health::health(&a, cli.verbose),
    }
}
