//! `test_pairs(…, #{ rounds: false })` (issue 22 item 5): pair checks that do not conflict run
//! together, within the per-node limit, with the same testcases and verdicts as in rounds.

use crate::common::Fab;
use std::collections::HashMap;

/// Six local nodes.
const SIX: &str = "[defaults]\ntransport = \"local\"\n[[node]]\nname = \"n[1-6]\"\n";

/// Each pair's command appends `+ A B` to the log, waits (5 s at most) until its first node `A`
/// has started `want` pairs, then appends `- A B`: pairs of one node overlap whenever the
/// scheduler lets them, without any timing threshold. n3 -> n4 fails (the verdicts must stay).
fn script(opts: &str) -> String {
    format!(
        r#"
let log = param("log", "");
let want = param("want", 1);
test_pairs(nodes(), "hop", #{{ pattern: "mesh"{opts} }}, |a, b| {{
    let cmd = `echo "+ ${{a.name}} ${{b.name}}" >> ${{log}}; i=0; while [ "$(grep -c '^+ ${{a.name}} ' ${{log}})" -lt ${{want}} ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; echo "- ${{a.name}} ${{b.name}}" >> ${{log}}`;
    let r = a.run(cmd);
    assert_eq(r.exit_code, 0, "logged");
    assert(!(a.name == "n3" && b.name == "n4"), "n3 -> n4 is made to fail");
}});
"#
    )
}

/// The most pairs each node was in at once as first and as second, replayed from the log.
fn most_at_once(log: &str) -> (HashMap<String, usize>, HashMap<String, usize>) {
    let (mut now_a, mut now_b) = (HashMap::new(), HashMap::new());
    let (mut most_a, mut most_b) = (HashMap::new(), HashMap::new());
    for line in log.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        assert_eq!(f.len(), 3, "log line {line:?}");
        let d: i64 = if f[0] == "+" { 1 } else { -1 };
        for (node, now, most) in [
            (f[1], &mut now_a, &mut most_a),
            (f[2], &mut now_b, &mut most_b),
        ] {
            let n: &mut i64 = now.entry(node.to_string()).or_insert(0);
            *n += d;
            let m: &mut usize = most.entry(node.to_string()).or_insert(0);
            *m = (*m).max(*n as usize);
        }
    }
    (most_a, most_b)
}

fn run(opts: &str, want: usize) -> (crate::common::Outcome, String) {
    let o = Fab::new()
        .file("inv.toml", SIX)
        .file("p.rhai", &script(opts))
        .args(["run", "p.rhai", "-i", "inv.toml", "--set", "log={dir}/log"])
        .args(["--set", &format!("want={want}")])
        .reports()
        .run();
    let log = std::fs::read_to_string(o.dir.join("log")).unwrap_or_default();
    (o, log)
}

/// Names, order, nodes, peers and verdicts of the testcases.
fn verdicts(o: &crate::common::Outcome) -> Vec<(String, String, String, String)> {
    o.tests()
        .iter()
        .map(|t| {
            let s = |k: &str| t[k].as_str().unwrap_or("").to_string();
            (s("name"), s("node"), s("peer"), s("status"))
        })
        .collect()
}

#[test]
fn pairs_that_do_not_conflict_run_together_within_the_per_node_limit() {
    let (o, log) = run(", rounds: false, per_node: 2", 2);
    o.code(1);
    let (first, second) = most_at_once(&log);
    assert_eq!(
        log.lines().count(),
        2 * 30,
        "every ordered pair once:\n{log}"
    );
    // Together: a node is first of two pairs at once (never in rounds) ...
    assert!(
        first.values().any(|&m| m == 2),
        "no node in two pairs at once: {first:?}\n{log}"
    );
    // ... and never more than per_node, as first or as second.
    for (role, most) in [("first", &first), ("second", &second)] {
        assert!(
            most.values().all(|&m| m <= 2),
            "a node {role} of more than 2 pairs at once: {most:?}\n{log}"
        );
    }
    // No rounds to report: `round` is absent from the results.
    assert!(o.tests().iter().all(|t| t["round"].is_null()));
}

#[test]
fn pairs_together_keep_the_testcases_and_verdicts_of_rounds() {
    let (together, _) = run(", rounds: false", 1);
    let (rounds, log) = run("", 1);
    let (first, second) = most_at_once(&log);
    assert!(
        first.values().chain(second.values()).all(|&m| m == 1),
        "in rounds a node is in one pair at a time: {first:?} {second:?}"
    );
    let v = verdicts(&together);
    assert_eq!(v.len(), 30);
    assert_eq!(v, verdicts(&rounds));
    let failed: Vec<_> = v.iter().filter(|t| t.3 != "pass").collect();
    assert_eq!(failed.len(), 1, "{v:?}");
    assert_eq!(failed[0].0, "hop [n3 -> n4]");
    assert_eq!(failed[0].3, "failure");
}

#[test]
fn list_says_at_once_and_bad_options_are_named() {
    let o = Fab::new()
        .file("inv.toml", SIX)
        .file("p.rhai", &script(", rounds: false"))
        .args(["list", "p.rhai", "-i", "inv.toml"])
        .run();
    o.code(0);
    assert_eq!(o.stdout.lines().count(), 30);
    assert!(
        o.stdout.lines().all(|l| l.ends_with("\tat once")),
        "{}",
        o.stdout
    );
    for (opts, says) in [
        (
            ", per_node: 4",
            "per_node applies to pairs run together: add rounds: false",
        ),
        (", rounds: \"no\"", "rounds must be true or false"),
        (
            ", rounds: false, per_node: 0",
            "per_node must be a positive whole number",
        ),
    ] {
        let o = Fab::new()
            .file("inv.toml", SIX)
            .file("p.rhai", &script(opts))
            .args(["list", "p.rhai", "-i", "inv.toml"])
            .run();
        assert_ne!(o.code, 0, "{opts}");
        assert!(o.stderr.contains(says), "{opts}: {}", o.stderr);
    }
}

/// `at_once(items, f)` (issue 49): the calls of one test run at once. Each call marks its item
/// in a directory, then waits (20 s at most, a bound for a broken build, not a threshold) until
/// all three are marked: one after another, the first call would give up (exit 7). The calls'
/// commands are the test's (its command log), answers come back in item order, and an error in
/// one call is the test's error once the others have ended.
#[test]
fn at_once_runs_a_tests_calls_together_and_keeps_their_commands() {
    let f = Fab::new();
    let dir = f.dir().join("marks");
    std::fs::create_dir(&dir).unwrap();
    let script = format!(
        r#"
test("together", || {{
    let got = at_once(["a", "b", "c"], |x| {{
        let r = node("n1").run(`touch {d}/${{x}}; i=0; while [ "$(ls {d} | wc -l)" -lt 3 ]; do sleep 0.05; i=$((i+1)); [ $i -gt 400 ] && exit 7; done; echo ${{x}}`);
        assert_eq(r.exit_code, 0, `${{x}} saw the others`);
        r.stdout.trim();
        r.stdout
    }});
    assert_eq(got, ["a", "b", "c"], "in item order");
    metric("calls", got.len(), "");
}});
test("one fails", || {{
    at_once([1, 2, 3], |k| {{
        node("n2").run(`echo call${{k}}`);
        if k == 2 {{ throw "call 2 broke"; }}
        k
    }});
}});
"#,
        d = dir.display()
    );
    let o = f
        .file("inv.toml", SIX)
        .file("s.rhai", &script)
        .args(["run", "s.rhai", "-i", "inv.toml"])
        .reports()
        .run();
    assert_eq!(o.status("together"), "pass", "{}", o.message("together"));
    let cmds = o.test("together")["commands"].as_array().unwrap().len();
    assert_eq!(cmds, 3, "the three calls' commands are the test's");
    assert_eq!(o.status("one fails"), "error", "{}", o.stdout);
    assert!(
        o.message("one fails").contains("call 2 broke"),
        "{}",
        o.message("one fails")
    );
    let cmds = o.test("one fails")["commands"].as_array().unwrap().len();
    assert_eq!(cmds, 3, "every call ran to its end");
}

/// `stash_once(key, f)` (issue 49): six tests at once ask for one value; `f` runs once and the
/// others get its value. Each test notes its ask, then asks; `f` waits (20 s at most, a bound
/// for a broken build) until all six have asked, so without the per-key lock every one of them
/// would compute it. An error is not kept: the next caller computes again.
#[test]
fn stash_once_computes_a_value_once_for_tests_that_ask_at_once() {
    let f = Fab::new();
    let log = f.dir().join("log");
    let script = format!(
        r#"
test_each(nodes(), "ask", |n| {{
    n.run(`echo ask >> {log}`);
    let v = stash_once("answer", || {{
        let r = n.run(`i=0; while [ "$(grep -c ask {log})" -lt 6 ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; echo computed >> {log}; echo 42`);
        r.stdout.trim();
        r.stdout.parse_int()
    }});
    assert_eq(v, 42, "the one value");
}});
test("an error is not kept", || {{
    try {{ stash_once("broken", || {{ throw "first try broke"; }}); }} catch {{ }}
    assert_eq(stash_once("broken", || 7), 7, "computed again");
}});
"#,
        log = log.display()
    );
    let o = f
        .file("inv.toml", SIX)
        .file("s.rhai", &script)
        .args(["run", "s.rhai", "-i", "inv.toml"])
        .reports()
        .run();
    o.code(0);
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text.matches("computed").count(), 1, "{text}");
    assert_eq!(text.matches("ask").count(), 6, "{text}");
}
