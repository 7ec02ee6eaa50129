//! A typo must never pass: a field a result does not have is an error with "did you mean"
//! (at run time always, in `fabcheck check` where the kind is known), and so is an unknown
//! option key; an unknown test option is an error of that test alone.

use crate::common;
use crate::shipped::sim;
use common::Fab;

/// A custom speed check on the simulated cluster, spelled wrong and spelled right; and what a
/// result still does like a map.
const SPEED: &str = r#"
test_each(nodes(), "typo", |n| {
    let e = n.ethtool(n.interfaces[0]);
    if e.speed_mpbs < 200000 { fail(`${n.name}: slow`); }
});
test_each(nodes(), "spelled right", |n| {
    let e = n.ethtool(n.interfaces[0]);
    if e.speed_mbps < 200000 { fail(`${n.name}: slow`); }
});
test("a result reads like a map", || {
    let n = node("spark-01");
    let e = n.ethtool(n.interfaces[0]);
    assert("speed_mbps" in e, "in");
    assert(!("speed_mpbs" in e), "not in");
    assert(e.keys().contains("speed_mbps"), "keys");
    assert_eq(type_of(e), "map", "type_of");
    assert(e != (), "compared to ()");
    assert_eq(e["speed_mbps"], 200000, "indexed");
    assert(`${e}`.contains("\"speed_mbps\": 200000"), `interpolated: ${e}`);
    assert_eq(e.link_detected_reason, (), "a declared field without a value reads ()");
    assert_eq(e.to_map().speed_mpbs, (), "a plain copy is a plain map");
    metric("speed", e.speed_mbps, "Mb/s");
    let names = [];
    for a in n.addresses() { names.push(a.ifname); }
    assert(names.contains(n.interfaces[0]), `iterated: ${names}`);
    let a = n.addresses()[0].addresses[0];
    assert(a.local != (), "nested field");
});
test("nested typo", || {
    let n = node("spark-01");
    log(n.addresses()[0].addresses[0].locl);
});
test("run result typo", || {
    let r = node("spark-01").run("uname -r");
    log(r.stdot);
});
"#;

#[test]
fn a_misspelt_result_field_is_an_error_with_the_suggestion_on_the_simulation() {
    let o = Fab::new()
        .file("speed.rhai", SPEED)
        .args(["run", "speed.rhai", "-i", &sim()])
        .reports()
        .run();
    o.code(1);
    for node in ["spark-01", "spark-02"] {
        let t = format!("typo [{node}]");
        assert_eq!(o.status(&t), "error", "{}", o.stdout);
        let m = o.message(&t);
        assert!(
            m.contains("`speed_mpbs` is not a field of the ethtool result")
                && m.contains("did you mean `speed_mbps`")
                && m.contains("speed.rhai:4"),
            "{m}"
        );
        assert_eq!(o.status(&format!("spelled right [{node}]")), "pass");
    }
    assert_eq!(
        o.status("a result reads like a map"),
        "pass",
        "{}",
        o.message("a result reads like a map")
    );
    let m = o.message("nested typo");
    assert!(
        m.contains("`locl` is not a field of the address") && m.contains("did you mean `local`"),
        "{m}"
    );
    let m = o.message("run result typo");
    assert!(m.contains("did you mean `stdout`"), "{m}");
}

#[test]
fn parser_results_are_typed_to_the_nested_level() {
    let fixtures = common::repo().join("tests/fixtures");
    let bond = fixtures.join("bonding/8023ad-2x25g-healthy-layer3+4-v3.7.1.txt");
    let perf = fixtures.join("perftest/ib_read_bw-cx7-ndr-ib-gbits-cpufreq-warning.txt");
    let script = format!(
        r#"
let here = nodes()[0];
test("bond slave right", || {{
    let b = parse::bonding(here.sh("cat '{bond}'"));
    assert_eq(b.slaves[0].mii_status, "up", "slave");
}});
test("bond slave typo", || {{
    let b = parse::bonding(here.sh("cat '{bond}'"));
    if b.slaves[0].mii_statu != "up" {{ fail("down"); }}
}});
test("perftest row typo", || {{
    let r = parse::perftest(here.sh("cat '{perf}'"));
    assert_ge(r.rows[0].bw_avg_gbz, 1.0, "bw");
}});
"#,
        bond = bond.display(),
        perf = perf.display()
    );
    let o = Fab::new()
        .file("nested.rhai", &script)
        .args(["run", "nested.rhai"])
        .reports()
        .run();
    o.code(1);
    assert_eq!(o.status("bond slave right"), "pass", "{}", o.stdout);
    let m = o.message("bond slave typo");
    assert_eq!(o.status("bond slave typo"), "error");
    assert!(m.contains("did you mean `mii_status`"), "{m}");
    let m = o.message("perftest row typo");
    assert_eq!(o.status("perftest row typo"), "error");
    assert!(
        m.contains("perftest row") && m.contains("did you mean `bw_avg_gbps`"),
        "{m}"
    );
}

#[test]
fn an_unknown_test_option_is_an_error_of_that_test_alone() {
    let script = r#"
test("bad option", #{ timout: "5m" }, || { log("never runs"); });
test_each(nodes(), "bad each", #{ tags: ["x"], retires: 2 }, |n| { log("never runs"); });
test("good", || { assert(true, "fine"); });
"#;
    let o = Fab::new()
        .file("opts.rhai", script)
        .args(["run", "opts.rhai"])
        .reports()
        .run();
    o.code(1);
    assert_eq!(o.status("good"), "pass", "{}", o.stdout);
    assert_eq!(o.status("bad option"), "error");
    let m = o.message("bad option");
    assert!(
        m.contains("unknown test option `timout`") && m.contains("did you mean `timeout`"),
        "{m}"
    );
    assert!(!o.stdout.contains("never runs"), "{}", o.stdout);
    let each: Vec<_> = o
        .tests()
        .into_iter()
        .filter(|t| t["name"].as_str().unwrap_or("").starts_with("bad each"))
        .collect();
    assert!(!each.is_empty());
    for t in each {
        assert_eq!(t["status"], "error");
        assert!(t["message"]
            .as_str()
            .unwrap()
            .contains("did you mean `retries`"));
    }
    let junit = o.junit.clone().expect("a JUnit report");
    assert!(junit.contains(r#"testcase name="good""#), "{junit}");
    assert!(junit.contains(r#"testcase name="bad option""#), "{junit}");
}

#[test]
fn check_finds_field_and_option_typos_at_their_place() {
    let script = r#"test_each(nodes(), "speed", |n| {
    let e = n.ethtool(n.interfaces[0]);
    if e.speed_mpbs < 200000 { fail("slow"); }
    let r = ib_write_bw(n, n, #{ gid_indx: 3 });
    log(`${r.rows[0].bw_avg_gbz}`);
    let b = n.bond("bond0");
    for s in b.slaves { log(s.mii_statu); }
    metric("x", 1, "s", #{ treshold: 1 });
});
test("t", #{ timout: "5m" }, || {});
"#;
    let o = Fab::new()
        .file("typo.rhai", script)
        .args(["check", "typo.rhai"])
        .run();
    o.code(2);
    for (place, text) in [
        ("typo.rhai:3:10", "did you mean `speed_mbps`"),
        (
            "typo.rhai:4:34",
            "unknown ib_write_bw option `gid_indx` (did you mean `gid_index`?)",
        ),
        ("typo.rhai:5:22", "did you mean `bw_avg_gbps`"),
        ("typo.rhai:7:31", "did you mean `mii_status`"),
        ("typo.rhai:8:28", "did you mean `threshold`"),
        (
            "typo.rhai:10:14",
            "unknown test option `timout` (did you mean `timeout`?)",
        ),
    ] {
        let at = o
            .stderr
            .find(place)
            .unwrap_or_else(|| panic!("{place}:\n{}", o.stderr));
        let before = &o.stderr[..at];
        let message = &before[before.rfind("error: ").unwrap_or(0)..];
        assert!(message.contains(text), "{place}: {message}\n{}", o.stderr);
    }
    assert!(!o.stdout.contains("ok:"), "{}", o.stdout);
}

#[test]
fn check_does_not_flag_what_is_right() {
    let script = r#"test_each(nodes(), "speed", |n| {
    let e = n.ethtool(n.interfaces[0]);
    if e.speed_mbps < 200000 { fail("slow"); }
    let e = #{ speed_mpbs: 1 };
    log(e.speed_mpbs);
    let p = n.ping("10.0.0.1", #{ count: 3, dont_fragment: true });
    log(`${p.stderr} ${p.loss_pct}`);
});
fn helper(e) { e.anything }
test("t", #{ timeout: "5m", tags: ["a"] }, || {});
"#;
    let o = Fab::new()
        .file("right.rhai", script)
        .args(["check", "right.rhai"])
        .run();
    o.code(0);
    let stdlib: Vec<String> = std::fs::read_dir(common::repo().join("stdlib"))
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    let o = Fab::new().args(["check"]).args(&stdlib).run();
    o.code(0);
}

/// Issue 31 item 8: a typo in a counter name read from a parsed counter map (`ethtool -S`, a
/// real mlx5 capture) is an ERROR naming the key and the closest keys the map has, never a FAIL
/// "expected 0, actual null"; a counter spelled right still reads, `in` still tests.
#[test]
fn a_misspelt_counter_name_is_an_error_naming_the_closest_counters() {
    let stats = common::repo().join(
        "tests/fixtures/ethtool/ethtool-S-mlx5-phy-section-crc-symbol-pcs-errors-fec-corrected-bits-lane3-comments-stripped.txt",
    );
    let script = format!(
        r#"
let here = nodes()[0];
test("counter typo", || {{
    let s = parse::ethtool_stats(here.sh("cat '{stats}'"));
    assert_eq(s.counters["rx_crc_error_phy"], 0, "CRC errors");
}});
test("counter spelled right", || {{
    let s = parse::ethtool_stats(here.sh("cat '{stats}'"));
    assert(s.counters["rx_crc_errors_phy"] > 0, "the capture has CRC errors");
    assert(!("rx_crc_error_phy" in s.counters), "in");
    assert(s.counters.keys().contains("rx_crc_errors_phy"), "keys");
    assert_eq(type_of(s.counters), "map", "type_of");
}});
"#,
        stats = stats.display()
    );
    let o = Fab::new()
        .file("counters.rhai", &script)
        .args(["run", "counters.rhai"])
        .reports()
        .run();
    o.code(1);
    let right = "counter spelled right";
    assert_eq!(o.status(right), "pass", "{}", o.message(right));
    assert_eq!(o.status("counter typo"), "error", "{}", o.stdout);
    let m = o.message("counter typo");
    assert!(
        m.contains("`rx_crc_error_phy` is not a key of `counters` of the ethtool -S result")
            && m.contains("did you mean `rx_crc_errors_phy`")
            && m.contains("counters.rhai:5")
            && !m.contains("null"),
        "{m}"
    );
}
