//! The first day of a newcomer (issue 31): what the simulation says it is, what the README
//! teaches, and what `cargo test` leaves on the host.

use crate::common::{repo, Fab};

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
}

/// The `simulation = "..."` line of an inventory (the banner of every simulated report).
fn banner_of(inventory: &str) -> String {
    let text = read(inventory);
    let line = text
        .lines()
        .find(|l| l.starts_with("simulation = "))
        .unwrap_or_else(|| panic!("{inventory} has no simulation line"));
    line["simulation = ".len()..].trim_matches('"').to_string()
}

/// The key of a command in SOURCES.md: its first word, and its first option if it has one
/// (`ethtool -m`, not every `ethtool`).
fn command_key(cell: &str) -> Option<String> {
    let inner = cell.split('`').nth(1)?;
    let mut words = inner.split_whitespace();
    let first = words.next()?;
    match words.next() {
        Some(opt) if opt.starts_with('-') => Some(format!("{first} {opt}")),
        _ => Some(first.to_string()),
    }
}

/// Issue 31 item 10: the banner says what is synthesised and points at the per-kind table,
/// and that table names every answer SOURCES.md marks as a real capture.
#[test]
fn simulation_banner_says_what_is_real_and_what_is_synthesised() {
    for inv in [
        "examples/sim/two-sparks.toml",
        "examples/sim/discover-defaults.toml",
    ] {
        let b = banner_of(inv);
        assert!(
            !b.contains("real captured output") || b.contains("synthesised"),
            "{inv}: the banner claims real output only: {b}"
        );
        assert!(b.contains("synthesised"), "{inv}: {b}");
        assert!(
            b.contains("docs/simulation.md#real-and-synthesised-per-answer-kind"),
            "{inv}: {b}"
        );
    }
    let docs = read("docs/simulation.md");
    assert!(docs.contains("### Real and synthesised, per answer kind"));
    let real_rows: Vec<&str> = docs
        .lines()
        .filter(|l| l.starts_with('|') && l.contains("**real**"))
        .collect();
    let sources = read("examples/sim/transcripts/SOURCES.md");
    let mut real = Vec::new();
    for line in sources.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let verdict = cells.get(2).copied().unwrap_or_default();
        if verdict.starts_with("**real**")
            || verdict.starts_with("real ")
            || verdict == "real capture"
        {
            if let Some(key) = command_key(cells[0]) {
                real.push(key);
            }
        }
    }
    assert!(real.len() >= 4, "SOURCES.md real rows not found: {real:?}");
    for key in &real {
        assert!(
            real_rows.iter().any(|r| r.contains(key.as_str())),
            "SOURCES.md marks `{key}` as real; docs/simulation.md's per-kind table does not"
        );
    }
    // the console of a simulated run carries the banner
    let o = Fab::new()
        .args(["nodes", "-i"])
        .args([repo()
            .join("examples/sim/two-sparks.toml")
            .display()
            .to_string()])
        .run();
    assert!(
        o.stdout.contains("synthesised"),
        "fabcheck nodes on the simulation: {}{}",
        o.stdout,
        o.stderr
    );
}

/// Issue 31 item 8: exit codes in --help; --allow-changes says what changes (and that netplan
/// is never applied); exec's --fanout and --timeout are explained.
#[test]
fn help_says_exit_codes_what_allow_changes_changes_and_exec_options() {
    let top = Fab::new().args(["--help"]).run();
    assert_eq!(top.code, 0, "{}", top.stderr);
    for line in [
        "Exit codes:",
        "0  every test passed",
        "1  a test failed",
        "2  usage",
        "3  interrupted",
    ] {
        assert!(
            top.stdout.contains(line),
            "fabcheck --help lacks `{line}`:\n{}",
            top.stdout
        );
    }
    let run = Fab::new().args(["run", "--help"]).run();
    assert!(run.stdout.contains("Exit codes:"), "{}", run.stdout);
    let allow = run
        .stdout
        .split("--allow-changes")
        .nth(1)
        .and_then(|s| s.split("\n      --").next())
        .unwrap_or_default()
        .to_string();
    assert!(
        allow.contains("`netplan apply` is never run") && !allow.contains("apply netplan"),
        "--allow-changes help: {allow}"
    );
    let exec = Fab::new().args(["exec", "--help"]).run();
    for (opt, words) in [("--fanout", "at once"), ("--timeout", "on each node")] {
        let text = exec.stdout.split(opt).nth(1).unwrap_or_default();
        let first = text.split("\n  -").next().unwrap_or_default();
        assert!(first.contains(words), "exec {opt} help: {first}");
    }
    assert!(
        exec.stdout.contains("255: a node was not reached"),
        "{}",
        exec.stdout
    );
}

/// Issue 31 item 8: `check` reports every error of every file (like a compiler), and says
/// which files are fine.
#[test]
fn check_reports_every_error_not_only_the_first() {
    let o = Fab::new()
        .file(
            "two.rhai",
            "test(\"a\", || {\n    asert_eq(1, 1, \"x\");\n    asert(true, \"y\");\n});\n",
        )
        .file("syntax.rhai", "test(\"a\", || {\n    let y = (1 + ;\n});\n")
        .file(
            "good.rhai",
            "test(\"a\", || { assert(true, \"fine\"); });\n",
        )
        .args(["check", "two.rhai", "syntax.rhai", "good.rhai"])
        .run();
    o.code(2);
    assert!(
        o.stderr.contains("unknown function `asert_eq`"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.contains("unknown function `asert`"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("syntax.rhai:2"), "{}", o.stderr);
    assert!(o.stdout.contains("ok: good.rhai"), "{}", o.stdout);
    assert!(
        o.stderr.contains("check: 3 error(s) in 2 of 3 file(s)"),
        "{}",
        o.stderr
    );
}

/// Issue 50 (first day): `n.interface` (the likeliest typo of the README's own example) is
/// caught by `check`, at its place, with "did you mean"; so is a node field elsewhere (a
/// `test_pairs` node, `node(name)`, an element of `nodes(...)`), and the README's example as
/// written passes.
#[test]
fn check_catches_an_unknown_node_field_with_did_you_mean() {
    let readme = readme_first_check();
    assert!(readme.contains("n.interfaces"), "{readme}");
    let typo = readme.replace("n.interfaces", "n.interface");
    let o = Fab::new()
        .file("mtu.rhai", &typo)
        .file(
            "more.rhai",
            "test_pairs(nodes(), \"p\", |a, b| { a.nam; });\nnode(\"x\").hots;\nfor n in nodes(\"@fabric\") { n.fabric_ip; }\n",
        )
        .file("good.rhai", &readme)
        .args(["check", "mtu.rhai", "more.rhai", "good.rhai"])
        .run();
    o.code(2);
    let line = typo
        .lines()
        .position(|l| l.contains("n.interface"))
        .unwrap()
        + 1;
    for want in [
        format!("mtu.rhai:{line}:"),
        "`interface` is not a field of the node (did you mean `interfaces`?)".to_string(),
        "`nam` is not a field of the node (did you mean `name`?)".to_string(),
        "`hots` is not a field of the node".to_string(),
        "`fabric_ip` is not a field of the node (did you mean `fabric_ips`?)".to_string(),
    ] {
        assert!(o.stderr.contains(&want), "{want}:\n{}", o.stderr);
    }
    assert!(o.stdout.contains("ok: good.rhai"), "{}", o.stdout);
    assert!(
        o.stderr.contains("check: 4 error(s) in 2 of 3 file(s)"),
        "{}",
        o.stderr
    );
}

/// Every node field `check` knows is one a script can read (the list `check` uses is the
/// `Node` type's properties): read on the simulation, each one passes.
#[test]
fn every_node_field_check_knows_is_readable_in_a_run() {
    let fields = [
        "fabric_ips",
        "fabric_ports",
        "host",
        "interfaces",
        "name",
        "ports",
        "rdma_devices",
        "user",
        "vars",
    ];
    let body: String = fields.iter().map(|f| format!("    n.{f};\n")).collect();
    let script = format!("test_each(nodes(), \"fields\", |n| {{\n{body}}});\n");
    let inv = sim_with_dead_nodes(0);
    let o = Fab::new()
        .file("f.rhai", &script)
        .file("cluster.toml", &inv)
        .args(["check", "f.rhai"])
        .run();
    o.code(0);
    let o = Fab::new()
        .file("f.rhai", &script)
        .file("cluster.toml", &inv)
        .args(["run", "f.rhai", "-i", "cluster.toml"])
        .reports()
        .run();
    o.code(0);
    assert_eq!(o.status("fields [spark-01]"), "pass", "{}", o.stdout);
}

/// The README's first custom check (its first ```rhai block).
fn readme_first_check() -> String {
    let readme = read("README.md");
    let start = readme.find("```rhai\n").expect("README has a rhai example") + "```rhai\n".len();
    let len = readme[start..].find("```").expect("closed rhai block");
    readme[start..start + len].to_string()
}

/// The simulation plus dead nodes (nothing listens on ports 1, 2, ...: connection refused at
/// once), all in group `fabric`.
fn sim_with_dead_nodes(dead: usize) -> String {
    let transcripts = repo().join("examples/sim/transcripts");
    let mut extra = String::new();
    let mut names = vec!["spark-[01-02]".to_string()];
    for i in 0..dead {
        let name = format!("dead-{:02}", i + 3);
        extra.push_str(&format!(
            "[[node]]\nname = \"{name}\"\nhost = \"127.0.0.1\"\nport = {}\ntransport = \"ssh\"\n\
             connect_timeout = \"3s\"\ninterfaces = [\"enp1s0f1np1\"]\n\n",
            i + 1
        ));
        names.push(name);
    }
    let inv = read("examples/sim/two-sparks.toml")
        .replace(
            "replay_dir = \"transcripts\"",
            &format!("replay_dir = \"{}\"", transcripts.display()),
        )
        .replace(
            "[groups]\nfabric = \"spark-[01-02]\"",
            &format!("{extra}[groups]\nfabric = \"{}\"", names.join(",")),
        );
    assert!(
        dead == 0 || inv.contains("dead-03"),
        "two-sparks.toml changed shape"
    );
    inv
}

/// Issue 31 item 4: dead nodes are said once, at the top of the console summary and of every
/// report, with why; each of their testcases keeps a short error.
#[test]
fn unreachable_nodes_are_summarised_once_at_the_top() {
    let o = Fab::new()
        .file("checks/mtu.rhai", &readme_first_check())
        .file("cluster.toml", &sim_with_dead_nodes(2))
        .args([
            "run",
            "checks/",
            "-i",
            "cluster.toml",
            "--html",
            "out/r.html",
        ])
        .reports()
        .run();
    o.code(1);
    let top = o
        .stdout
        .find("Unreachable nodes (2)")
        .unwrap_or_else(|| panic!("{}", o.stdout));
    // Their testcases are counted under it, not listed again under Problems (issue 50).
    assert!(!o.stdout.contains("Problems:"), "{}", o.stdout);
    assert!(o.stdout[top..].contains("2 testcase(s) ERROR for these nodes alone"));
    for (node, port) in [("dead-03", 1), ("dead-04", 2)] {
        let line = format!("  {node}: cannot connect to 127.0.0.1: ");
        assert_eq!(o.stdout.matches(&line).count(), 1, "{}", o.stdout);
        assert!(o
            .stdout
            .contains(&format!("port {port}: Connection refused")));
        let m = o.message(&format!("fabric MTU [{node}]"));
        assert_eq!(
            m,
            format!("{node}: cannot connect to 127.0.0.1 (Connection refused)")
        );
    }
    let json = o.json.as_ref().unwrap();
    assert_eq!(json["unreachable"][0]["node"], "dead-03", "{json}");
    let junit = o.junit.as_deref().unwrap();
    assert!(junit.contains("UNREACHABLE NODES: dead-03 (cannot connect to 127.0.0.1"));
    let html = std::fs::read_to_string(o.dir.join("out/r.html")).unwrap();
    let sec = html
        .find("<h2>Unreachable nodes (2)</h2>")
        .expect("html section");
    assert!(sec < html.find("id=\"problems\"").unwrap());
}

/// Issue 50 (first day): once "Unreachable nodes (N)" has named the dead nodes, the closing
/// list does not repeat the refusal for every testcase of theirs (81 lines for 5 nodes): one
/// line counts them, Problems keeps the other reds, and the reports keep every testcase.
#[test]
fn a_dead_nodes_refusal_is_said_once_not_once_per_testcase() {
    let o = Fab::new()
        .file("checks/mtu.rhai", &readme_first_check())
        .file(
            "checks/more.rhai",
            "let fabric = nodes(\"@fabric\");\n\
             test_each(fabric, \"kernel\", |n| { n.sh(\"uname -r\"); });\n\
             test_each(fabric, \"hostname\", |n| { n.sh(\"hostname\"); });\n\
             test(\"a red of its own\", || { assert_eq(1, 2, \"one\"); });\n",
        )
        .file("cluster.toml", &sim_with_dead_nodes(2))
        .args(["run", "checks/", "-i", "cluster.toml"])
        .reports()
        .run();
    o.code(1);
    let summary = &o.stdout[o
        .stdout
        .find("Unreachable nodes (2)")
        .unwrap_or_else(|| panic!("{}", o.stdout))..];
    for node in ["dead-03", "dead-04"] {
        assert_eq!(
            summary.matches(&format!("{node}: cannot connect")).count(),
            1,
            "{node}'s refusal repeated:\n{summary}"
        );
        // Every testcase of theirs is still an ERROR in the reports.
        for t in ["fabric MTU", "kernel", "hostname"] {
            assert_eq!(o.status(&format!("{t} [{node}]")), "error");
        }
    }
    assert!(
        summary.contains("  6 testcase(s) ERROR for these nodes alone"),
        "{summary}"
    );
    // A red that is not about them is still listed.
    assert!(
        summary.contains("Problems:\n  FAIL a red of its own"),
        "{summary}"
    );
}

/// Issue 34 item 3: a node a command could not reach is the diagnosis's subject whatever the
/// script function made of the error: `run_all` joins its nodes' errors into one message (no
/// transport error reaches the script), and the diagnosis still names the dead node, not its
/// fabric; the live nodes' answers are no subject.
#[test]
fn a_dead_node_met_by_run_all_is_what_the_diagnosis_names() {
    let o = Fab::new()
        .file(
            "checks/all.rhai",
            "test(\"uname on every node\", || { run_all(nodes(\"@fabric\"), \"uname -r\"); });\n",
        )
        .file("cluster.toml", &sim_with_dead_nodes(1))
        .args(["run", "checks/", "-i", "cluster.toml"])
        .reports()
        .run();
    o.code(1);
    let json = o.json.as_ref().unwrap();
    let d = json["diagnosis"].as_array().cloned().unwrap_or_default();
    let first = &d
        .first()
        .unwrap_or_else(|| panic!("no diagnosis\n{}", o.stdout));
    assert_eq!(first["rule"], "unreachable", "{json}");
    let part = first["part"].as_str().unwrap_or("");
    assert!(part.starts_with("dead-03 (127.0.0.1)"), "{part}");
    assert!(!part.contains("spark-0"), "{part}");
}

/// Issue 31 item 5: the README's first example teaches `test_each` for a per-node fact, so one
/// dead node is one ERROR and the live nodes still show their values.
#[test]
fn readme_first_example_keeps_live_nodes_values_when_one_node_is_dead() {
    let script = readme_first_check();
    assert!(
        script.contains("test_each("),
        "README's first check:\n{script}"
    );
    let inv = sim_with_dead_nodes(1);
    let o = Fab::new()
        .file("checks/mtu.rhai", &script)
        .file("cluster.toml", &inv)
        .args(["run", "checks/", "-i", "cluster.toml"])
        .reports()
        .run();
    o.code(1);
    for n in ["spark-01", "spark-02"] {
        let t = format!("fabric MTU [{n}]");
        assert_eq!(o.status(&t), "pass", "{t}: {}", o.message(&t));
    }
    assert_eq!(o.status("fabric MTU [dead-03]"), "error", "{}", o.stdout);
}

/// Issue 31 item 6: without a terminal a long test is not silent: a plain progress line on
/// stderr at a steady interval says which test runs, for how long, and how many are done.
#[test]
fn without_a_terminal_progress_lines_come_at_a_steady_interval() {
    // The slow test lasts until this test has seen two progress lines (it then makes `go`),
    // however slowly a busy machine runs the progress thread.
    let f = Fab::new()
        .file(
            "inv.toml",
            "[[node]]\nname = \"n1\"\nhost = \"localhost\"\ntransport = \"local\"\n",
        )
        .file(
            "s.rhai",
            "test(\"quick\", || { assert(true, \"ok\"); });\n\
             test(\"slow sweep\", #{ timeout: \"2h\" }, || { node(\"n1\").run(\"until [ -e go ]; do sleep 0.05; done\", #{ timeout: \"2h\" }); });\n",
        )
        .env("FABCHECK_PROGRESS_SECS", "0.5")
        .args(["run", "s.rhai", "-i", "inv.toml"]);
    let run = f.spawn_watched();
    let two = run.wait_stderr(
        "fabcheck: running `slow sweep` for ",
        2,
        crate::common::HANG,
    );
    std::fs::write(f.dir().join("go"), "").unwrap();
    let o = f.outcome(run.output_within(crate::common::HANG, "the slow sweep after `go`"));
    assert!(two, "two progress lines: {}", o.stderr);
    o.code(0);
    let lines: Vec<&str> = o
        .stderr
        .lines()
        .filter(|l| l.starts_with("fabcheck: running `slow sweep` for "))
        .collect();
    assert!(lines.len() >= 2, "{}", o.stderr);
    assert!(
        lines.iter().all(|l| l.ends_with("; 1 of 2 testcases done")),
        "{lines:?}"
    );
    // and nothing after the summary
    let quiet = Fab::new()
        .file(
            "inv.toml",
            "[[node]]\nname = \"n1\"\nhost = \"localhost\"\ntransport = \"local\"\n",
        )
        .file(
            "s.rhai",
            "test(\"slow\", || { node(\"n1\").run(\"sleep 1\"); });\n",
        )
        .env("FABCHECK_PROGRESS_SECS", "0")
        .args(["run", "s.rhai", "-i", "inv.toml"])
        .run();
    assert!(
        !quiet.stderr.contains("fabcheck: running"),
        "{}",
        quiet.stderr
    );
}

/// Issue 31 item 7: every run writes JUnit, JSON and HTML into a directory of its own under
/// ./fabcheck-results (said at the end), unless --no-results.
#[test]
fn every_run_keeps_its_reports_in_a_results_directory_of_its_own() {
    let sim = repo()
        .join("examples/sim/two-sparks.toml")
        .display()
        .to_string();
    let f = Fab::new().file("s.rhai", "test(\"a\", || { assert(true, \"x\"); });\n");
    let dir = f.dir().to_path_buf();
    let first = f.args(["run", "s.rhai", "-i", &sim]).run();
    first.code(0);
    let line = first
        .stdout
        .lines()
        .find(|l| l.starts_with("Results: fabcheck-results/"))
        .unwrap_or_else(|| panic!("{}", first.stdout));
    let rel = line["Results: ".len()..].split(' ').next().unwrap();
    let results = first.dir.join(rel);
    for f in ["junit.xml", "result.json", "report.html"] {
        assert!(results.join(f).is_file(), "{} lacks {f}", results.display());
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(results.join("result.json")).unwrap())
            .unwrap();
    assert_eq!(json["suites"][0]["tests"][0]["name"], "a");
    assert!(rel.ends_with("-s"), "{rel}");
    // a second run never overwrites the first
    let again = Fab::new()
        .args([
            "run",
            &dir.join("s.rhai").display().to_string(),
            "-i",
            &sim,
            "--results",
        ])
        .args([dir.join("fabcheck-results").display().to_string()])
        .run();
    again.code(0);
    let runs = std::fs::read_dir(dir.join("fabcheck-results"))
        .unwrap()
        .count();
    assert_eq!(runs, 2, "{}", again.stdout);
    // --no-results: none
    let none = Fab::new()
        .file("s.rhai", "test(\"a\", || {});\n")
        .args(["run", "s.rhai", "-i", &sim, "--no-results"])
        .run();
    assert!(!none.dir.join("fabcheck-results").exists());
    assert!(!none.stdout.contains("Results:"), "{}", none.stdout);
}

/// Issue 31 item 3: a node that lacks what the selected scripts read (here `fabric_ips` and RDMA
/// devices) is said first, once per field, in the run, in --dry-run and in `nodes`.
#[test]
fn inventory_mistakes_come_first_and_once() {
    let five = repo()
        .join("scripts/five_step_acceptance.rhai")
        .display()
        .to_string();
    for extra in [&["--dry-run"][..], &["--filter", "step 1"][..]] {
        let o = Fab::new()
            .file("cluster.toml", &sim_with_dead_nodes(1))
            .args(["run", five.as_str(), "-i", "cluster.toml", "--no-results"])
            .args(extra)
            .run();
        let first_test = o.stdout.find("\n== ").unwrap_or(o.stdout.len());
        let at = o
            .stdout
            .find("Inventory problems (2)")
            .unwrap_or_else(|| panic!("{extra:?}: {}", o.stdout));
        assert!(at < first_test, "{extra:?}: {}", o.stdout);
        for field in ["fabric_ips", "rdma_devices"] {
            let line = format!("  dead-03: no `{field}` in the inventory");
            assert_eq!(
                o.stdout.matches(&line).count(),
                1,
                "{extra:?}: {}",
                o.stdout
            );
        }
    }
    // a script that reads neither field has no such problem
    let o = Fab::new()
        .file("checks/mtu.rhai", &readme_first_check())
        .file("cluster.toml", &sim_with_dead_nodes(1))
        .args(["run", "checks/", "-i", "cluster.toml", "--no-results"])
        .run();
    assert!(!o.stdout.contains("Inventory problems"), "{}", o.stdout);
    // `nodes`: what some nodes have and another lacks
    let o = Fab::new()
        .file("cluster.toml", &sim_with_dead_nodes(1))
        .args(["nodes", "-i", "cluster.toml"])
        .run();
    o.code(0);
    assert!(
        o.stderr
            .contains("dead-03: no `fabric_ips` in the inventory while 2 other node(s) have them"),
        "{}",
        o.stderr
    );
}

/// Issue 31 item 8: on a 200G port at 100G, the RDMA failure names both weak rails (47.51 and
/// the weaker 47.42) and the link-speed failure says what tells a cable from a setting: lanes,
/// auto-negotiation, what the link partner advertises.
#[test]
fn rdma_failure_names_every_weak_rail_and_the_speed_hint_useful_facts() {
    let sim = repo()
        .join("examples/sim/two-sparks.toml")
        .display()
        .to_string();
    let five = repo()
        .join("scripts/five_step_acceptance.rhai")
        .display()
        .to_string();
    let o = Fab::new()
        .args([
            "run",
            five.as_str(),
            "-i",
            sim.as_str(),
            "--scenario",
            "negotiated-100g",
        ])
        .args([
            "--filter",
            "step 3: rdma write",
            "--filter",
            "step 3: link speed",
            "--no-results",
            "--html",
            "{dir}/r.html",
        ])
        .reports()
        .run();
    o.code(1);
    let m = o.message("step 3: rdma write per port [spark-01 -> spark-02]");
    assert!(
        m.contains("rocep1s0f1 47.51") && m.contains("roceP2p1s0f1 47.42"),
        "{m}"
    );
    // the rails are judged (each against its share of the port): the HTML draws them red
    // against a threshold, never "not judged"
    let h = std::fs::read_to_string(o.dir.join("r.html")).expect("HTML report");
    let row = crate::common::heat_row(&h, "rdma_write_gbps", "spark-01").expect("heat map row");
    for rail in ["rocep1s0f1", "roceP2p1s0f1"] {
        let cell = row
            .split("<td ")
            .find(|c| c.contains(&format!("title=\"spark-01 {rail}: ")))
            .unwrap_or_else(|| panic!("no cell of {rail}: {row}"));
        assert!(
            cell.starts_with("class=\"hc h-fail") && cell.contains("past their line"),
            "{cell}"
        );
    }
    assert!(h.contains(" · line 90 · "), "the line is said");
    assert!(
        !h.contains("not judged"),
        "a judged rail drawn as not judged"
    );
    let m = o.message("step 3: link speed [spark-01]");
    assert!(m.contains("negotiated 100000 Mb/s"), "{m}");
    assert!(
        m.contains("auto-negotiation ") && m.contains("link partner advertises"),
        "{m}"
    );
}
