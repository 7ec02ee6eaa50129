//! `fabcheck doc`: reference of every script function, generated from the engine.

use super::common::{build_env, usage, EnvOptions};
use super::EXIT_OK;
use crate::inventory::Inventory;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// What each script function does, for `fabcheck doc` (signatures come from the engine).
const DESCRIPTIONS: &[(&str, &str)] = &[
    ("test", "register a test: test(name, fn) or test(name, #{ timeout, tags, retries, changes }, fn)"),
    ("test_pairs", "test_pairs(nodes, name, |a, b| ..., #{ pattern: \"ring\"|\"mesh\"|\"bisection\", both_directions, split, pairs, fanout, rounds, per_node, timeout, tags, retries, changes }) — one testcase `name [a -> b]` per pair, both directions unless both_directions: false (given pairs: as given), run in rounds (each node in at most one pair per round), or with rounds: false all together, at most per_node (8) pairs per node as first and as second (pings, ssh hops: checks that do not conflict); a node listed twice counts once; fewer than two nodes is one error testcase"),
    ("test_each", "one testcase per node, run concurrently: test_each(nodes, name, |n| ...)"),
    ("assert", "fail unless the condition holds"),
    ("assert_eq", "fail unless actual == expected (numbers compare by value)"),
    ("assert_ge", "fail unless actual >= min; a null actual is an error"),
    ("assert_le", "fail unless actual <= max; a null actual is an error"),
    ("assert_within", "fail unless actual is within tolerance_pct % of reference"),
    ("fail", "fail the test with a message"),
    ("skip", "skip the test with a reason"),
    ("error", "end the test as an error (the check could not be made)"),
    ("warn", "record a warning (does not fail)"),
    ("nccl_ib_hca", "nccl_ib_hca(value): NCCL_IB_HCA read as NCCL reads it (`^` exclude list, `=` exact names else prefixes, comma-separated `dev[:port]`) -> #{ raw, exclude, exact, entries: [#{ hca, port }] }"),
    ("nccl_ib_hca_uses", "nccl_ib_hca_uses(value, device, port) -> #{ used, why }: does NCCL use that RDMA device port under this NCCL_IB_HCA, and why"),
    ("metric", "record a number for reports and --baseline: metric(name, value, unit[, #{ threshold, tolerance_pct, higher_is_better }])"),
    ("param", "a --set value: param(key) (missing: the test is skipped) or param(key, default)"),
    ("log", "add a line to the test's output"),
    ("trimmed", "a trimmed copy of a string (Rhai's trim() trims in place)"),
    ("nodes", "nodes of the inventory, or of a node set / @group"),
    ("inventory_nodes", "every node of the inventory, whatever -w selected: the ground truth of checks that judge against the whole cluster"),
    ("node", "one node by name"),
    ("allow_changes", "true when --allow-changes was given"),
    ("simulated", "true when the inventory is a simulated cluster"),
    ("run", "n.run(cmd[, #{ timeout, sudo, env }]) -> #{ stdout, stderr, exit_code, duration_ms }; non-zero exit is data"),
    ("sh", "n.sh(cmd) -> stdout; a non-zero exit fails the test (127: error, command not found)"),
    ("run_all", "run_all(nodes, cmd) -> map node name -> run result, concurrently"),
    ("ethtool", "n.ethtool(iface) -> parsed `ethtool IFACE`"),
    ("ethtool_driver", "n.ethtool_driver(iface) -> parsed `ethtool -i`"),
    ("ethtool_stats", "n.ethtool_stats(iface) -> parsed `ethtool -S`"),
    ("eee", "n.eee(iface) -> parsed `ethtool --show-eee` (unsupported: supported/enabled/active false)"),
    ("bond", "n.bond(name) -> parsed /proc/net/bonding/NAME"),
    ("addresses", "n.addresses() -> parsed `ip -j addr`"),
    ("ibdev2netdev", "n.ibdev2netdev() -> parsed `ibdev2netdev`"),
    ("rdma_links", "n.rdma_links() -> parsed `rdma link`"),
    ("mgmt_address", "n.mgmt_address() -> the address fabcheck's SSH connection really reached (server side of $SSH_CONNECTION), else the inventory host"),
    ("ofed_version", "n.ofed_version() -> parsed `ofed_info -s`"),
    ("ping", "n.ping(ip[, #{ count, iface, size, dont_fragment, interval, wait }]) -> parsed ping (loss is data)"),
    ("file_info", "n.file_info(path) -> #{ sha256, owner, group, mode, size } (sudo -n when needed)"),
    ("needs", "n.needs([programs]) declares the programs a check runs on the node, for --dry-run's preflight (which looks for them even where the listing stops before their commands); nothing outside a dry run"),
    ("which", "n.which(program[, dirs]) -> its path on the node (PATH with /usr/sbin and /sbin, else the first of dirs; `~/` is home), \"\" when nowhere; a read-only lookup that a dry run asks too"),
    ("ib_write_bw", "ib_write_bw(server, client[, opts]): server started, readiness awaited, client run against the server's fabric address, both sides parsed, server always stopped"),
    ("ib_read_bw", "as ib_write_bw, for ib_read_bw"),
    ("ib_send_bw", "as ib_write_bw, for ib_send_bw"),
    ("ib_write_bw_port", "all logical rails of one physical port at once, summed -> #{ port, total_gbps, rails }"),
    ("ib_read_bw_port", "as ib_write_bw_port, for ib_read_bw"),
    ("ib_send_bw_port", "as ib_write_bw_port, for ib_send_bw"),
    ("iperf3", "iperf3(server, client[, #{ parallel, window, duration, bind, port }]) -> parsed iperf3 -J"),
    ("all_reduce_perf", "all_reduce_perf(nodes[, #{ launcher, binary, args, env, np, hosts, timeout }]) -> parsed nccl-tests output incl. transport"),
    ("nccl_test", "nccl_test(name, nodes[, opts]): any nccl-tests binary, as all_reduce_perf"),
    ("ssh_hop", "ssh_hop(from, address) -> #{ ok, user, hostname, error }: passwordless SSH, BatchMode"),
];
/// A Rust signature from the engine in the words of a script author.
fn script_signature(sig: &str) -> String {
    let mut s = sig.to_string();
    for (from, to) in [
        ("core::result::Result<(),alloc::boxed::Box<rhai::types::error::EvalAltResult>>", "()"),
        ("alloc::collections::btree::map::BTreeMap<smartstring::SmartString<smartstring::config::LazyCompact>,rhai::types::dynamic::Dynamic>", "map"),
        ("alloc::vec::Vec<rhai::types::dynamic::Dynamic>", "array"),
        ("fabcheck::primitives::NodeRef", "Node"),
        ("rhai::types::dynamic::Dynamic", "Dynamic"),
        ("types::dynamic::Dynamic", "Dynamic"),
        ("alloc::string::String", "string"),
    ] {
        s = s.replace(from, to);
    }
    static RESULT: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RESULT.get_or_init(|| {
        regex::Regex::new(
            r"core::result::Result<(.*),alloc::boxed::Box<rhai::types::error::EvalAltResult>>",
        )
        .expect("regex")
    });
    s = re.replace(&s, "$1").into_owned();
    s.replace("&mut Node", "Node").replace(" -> ()", "")
}

pub fn doc() -> i32 {
    let env = match build_env(Inventory::local(), EnvOptions::dry(BTreeMap::new())) {
        Ok(e) => e,
        Err(e) => return usage(e),
    };
    let reg = Arc::new(std::sync::Mutex::new(
        crate::engine::registry::Registry::default(),
    ));
    let engine = crate::engine::new_engine(&env, reg, Path::new("."));
    let mut sigs: Vec<String> = engine
        .gen_fn_signatures(false)
        .iter()
        .filter(|s| !s.starts_with("parse::"))
        // a result's own map-like functions (keys, contains, ...): see "Options and returned fields"
        .filter(|s| !s.contains("(_: &mut map"))
        .map(|s| script_signature(s))
        // The dry run's stand-in answer is not for scripts to call (README: --dry-run).
        .filter(|s| !s.contains("dry-runanswer"))
        .collect();
    sigs.sort();
    sigs.dedup();
    println!("# fabcheck script functions\n\nGenerated from the engine (`fabcheck doc`). See README.md for the test model.\n");
    let mut last = String::new();
    for s in sigs {
        let name = s.split('(').next().unwrap_or("").to_string();
        let desc = DESCRIPTIONS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, d)| format!(" — {d}"))
            .unwrap_or_default();
        if name.starts_with("get$") {
            println!("- `n.{}` (node property)", name.trim_start_matches("get$"));
        } else if name != last {
            println!("- `{s}`{desc}");
        } else {
            println!("- `{s}`");
        }
        last = name;
    }
    println!("\n## Options and returned fields\n");
    println!(
        "An unknown option key is an error (with \"did you mean\"). Every `timeout` follows the"
    );
    println!("timeout policy in README.md. A result reads like a map (`r.field`, `r[\"field\"]`,");
    println!("`\"field\" in r`, `r.keys()`, `r.values()`, `r.len()`, printing, `r.to_json()`; `r.to_map()`");
    println!(
        "is a plain copy) but has exactly the fields listed: reading another is an error (with"
    );
    println!("\"did you mean\"); a listed field without a value reads `()`. In a `--dry-run` a");
    println!("listed field not known yet reads a stand-in; reading another is the same error.\n");
    for (call, opts, fields) in crate::engine::bindings::reference() {
        let o = if opts.is_empty() {
            "none".to_string()
        } else {
            opts.join(", ")
        };
        let f = if fields.is_empty() {
            "nothing".to_string()
        } else {
            fields.join(", ")
        };
        println!("- `{call}` — options: {o}; returns: {f}");
    }
    println!("\n## Results inside results\n");
    for (name, fields) in crate::engine::bindings::nested_kinds() {
        println!("- {name}: {}", fields.join(", "));
    }
    println!("\n## Parsers (`parse::KIND(text)`, same as `fabcheck parse KIND`)\n");
    for (kind, f, input) in crate::parse::KINDS {
        println!("- `parse::{f}(text)` — `{kind}`: {input}");
    }
    println!("\n## stdlib modules (`import \"NAME\" as NAME;`)\n");
    for (name, src) in crate::engine::stdlib::EMBEDDED {
        let fns: Vec<&str> = src
            .lines()
            .filter_map(|l| l.trim().strip_prefix("fn "))
            .map(|l| l.trim_end_matches('{').trim())
            .collect();
        println!("- `{name}`: {}", fns.join(", "));
    }
    EXIT_OK
}
