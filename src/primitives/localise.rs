//! Localise a bad node or link among many nodes with few pair tests (plain planning and
//! inference; the measurement is the script's).
//!
//! 1. Rings: pair every node with the one `shift` places after it (shift 1, then 2, ...): one
//!    ring covers every node twice in N tests.
//! 2. Inference over the pair results so far: a node with a passing test is proven good (a bad
//!    node fails every test it is in); a node whose tests all failed is a suspect. A suspect is
//!    convicted when it failed against `confirm` distinct nodes proven good (one bad link or one
//!    bad peer cannot explain that); until then it is re-tested against good nodes it has not
//!    met yet, and one pass exonerates it. A failed pair whose two nodes are both proven good is
//!    a link suspect: re-tested once, it is a bad link when it fails again, flaky when it passes.
//! 3. The result: the convicted nodes as a node set to exclude, the bad links, the flaky pairs,
//!    and the evidence of each.

use crate::inventory::nodeset;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// One pair test: its two nodes and whether it passed; `note` (the measured value) is quoted in
/// the evidence.
#[derive(Debug, Clone, Default)]
pub(crate) struct Trial {
    pub a: String,
    pub b: String,
    pub ok: bool,
    pub note: String,
}

/// What the results so far prove, and the re-tests still needed.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub(crate) struct Verdict {
    /// Pairs to test next (each `[suspect, good node]` or a failed link again); empty: done.
    pub retests: Vec<Vec<String>>,
    /// Nodes proven good (a passing test).
    pub good: Vec<String>,
    /// Nodes with failing tests only, not yet convicted.
    pub suspects: Vec<String>,
    /// Convicted nodes.
    pub nodes: Vec<String>,
    /// `nodes` in node-set syntax (`lab[03,07]`): what to exclude; "" when none.
    pub exclude: String,
    /// Bad links `[a, b]`: failed twice between two nodes proven good.
    pub links: Vec<Vec<String>>,
    /// Pairs that failed and then passed: reported, not blamed.
    pub flaky: Vec<Vec<String>>,
    /// Suspects that could not be settled (no good node left to test them against).
    pub unresolved: Vec<String>,
    /// One line per finding.
    pub evidence: Vec<String>,
    /// Pair tests so far.
    pub tests: i64,
}

/// The pairs of `rounds` shifted rings over `names` (shift 1..=rounds), each unordered pair once.
pub(crate) fn rings(names: &[String], rounds: usize) -> Vec<(String, String)> {
    let n = names.len();
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    if n < 2 {
        return out;
    }
    for shift in 1..=rounds.clamp(1, n - 1) {
        for i in 0..n {
            let j = (i + shift) % n;
            if seen.insert((i.min(j), i.max(j))) {
                out.push((names[i].clone(), names[j].clone()));
            }
        }
    }
    out
}

/// `pairs` in rounds: each pair goes into the first round in which neither of its nodes is
/// yet (first fit, in plan order), so no node is in two pairs of a round. A ring's pairs take two
/// rounds (three for an odd count); re-tests of one suspect take one round each. The pairs'
/// indices, round by round.
pub(crate) fn rounds(pairs: &[(String, String)]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut busy: Vec<BTreeSet<&str>> = Vec::new();
    for (k, (a, b)) in pairs.iter().enumerate() {
        let r = busy
            .iter()
            .position(|s| !s.contains(a.as_str()) && !s.contains(b.as_str()))
            .unwrap_or_else(|| {
                busy.push(BTreeSet::new());
                out.push(Vec::new());
                busy.len() - 1
            });
        busy[r].insert(a);
        busy[r].insert(b);
        out[r].push(k);
    }
    out
}

fn key(a: &str, b: &str) -> (String, String) {
    if a <= b {
        (a.into(), b.into())
    } else {
        (b.into(), a.into())
    }
}

#[derive(Default)]
struct Seen {
    /// node -> peers it passed with
    passed: BTreeMap<String, BTreeSet<String>>,
    /// node -> peers it failed with
    failed: BTreeMap<String, BTreeSet<String>>,
    /// unordered pair -> (fails, passes, notes)
    pairs: BTreeMap<(String, String), (usize, usize, Vec<String>)>,
}

fn seen(trials: &[Trial]) -> Seen {
    let mut s = Seen::default();
    for t in trials {
        let side = if t.ok { &mut s.passed } else { &mut s.failed };
        side.entry(t.a.clone()).or_default().insert(t.b.clone());
        side.entry(t.b.clone()).or_default().insert(t.a.clone());
        let e = s.pairs.entry(key(&t.a, &t.b)).or_default();
        if t.ok {
            e.1 += 1;
        } else {
            e.0 += 1;
        }
        if !t.note.is_empty() {
            e.2.push(t.note.clone());
        }
    }
    s
}

fn notes(v: &[String]) -> String {
    if v.is_empty() {
        String::new()
    } else {
        format!(" ({})", v.join(", "))
    }
}

/// What `trials` (all pair results so far, rings and re-tests) prove over `names`, and the
/// re-tests still needed: a suspect is convicted after failing against `confirm` (at least 1)
/// distinct good nodes.
pub(crate) fn infer(names: &[String], trials: &[Trial], confirm: usize) -> Verdict {
    let confirm = confirm.max(1);
    let s = seen(trials);
    let empty = BTreeSet::new();
    let passed = |n: &str| s.passed.get(n).unwrap_or(&empty);
    let failed = |n: &str| s.failed.get(n).unwrap_or(&empty);
    let mut v = Verdict {
        tests: trials.len() as i64,
        ..Verdict::default()
    };
    v.good = names
        .iter()
        .filter(|n| !passed(n).is_empty())
        .cloned()
        .collect();
    let is_good = |n: &str| !passed(n).is_empty();
    for (i, n) in names.iter().enumerate() {
        if is_good(n) || failed(n).is_empty() {
            continue;
        }
        let against: Vec<&String> = failed(n).iter().filter(|p| is_good(p)).collect();
        if against.len() >= confirm {
            v.nodes.push(n.clone());
            let list: Vec<&str> = against.iter().map(|p| p.as_str()).collect();
            v.evidence.push(format!(
                "{n}: failed against {} nodes proven good ({}) and passed with none",
                against.len(),
                list.join(", ")
            ));
            continue;
        }
        // good nodes it has not met, from the one after it in ring order (spreads the load)
        let fresh: Vec<&String> = names[i + 1..]
            .iter()
            .chain(names[..i].iter())
            .filter(|p| is_good(p) && !failed(n).contains(*p))
            .take(confirm - against.len())
            .collect();
        if fresh.is_empty() {
            v.unresolved.push(n.clone());
            v.evidence.push(format!(
                "{n}: failed every test ({}) and no node proven good is left to re-test it against",
                failed(n).iter().cloned().collect::<Vec<_>>().join(", ")
            ));
        } else {
            v.suspects.push(n.clone());
            v.retests
                .extend(fresh.into_iter().map(|g| vec![n.clone(), g.clone()]));
        }
    }
    links(&s, &is_good, &mut v);
    v.exclude = nodeset::fold(&v.nodes);
    v
}

/// Failed pairs between two good nodes: re-test, bad link, or flaky.
fn links(s: &Seen, is_good: &dyn Fn(&str) -> bool, v: &mut Verdict) {
    for ((a, b), (fails, passes, ns)) in &s.pairs {
        if *fails == 0 {
            continue;
        }
        let pair = vec![a.clone(), b.clone()];
        if *passes > 0 {
            v.flaky.push(pair);
            v.evidence.push(format!(
                "{a} - {b}: failed {fails} time(s) and passed {passes} time(s){}: flaky, not blamed",
                notes(ns)
            ));
        } else if is_good(a) && is_good(b) {
            if *fails >= 2 {
                v.links.push(pair);
                v.evidence.push(format!(
                    "link {a} - {b}: failed {fails} times{} while both nodes passed with other peers: the link (ports, cable, switch path) between them",
                    notes(ns)
                ));
            } else {
                v.retests.push(pair);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("lab{i:02}")).collect()
    }

    /// Every pair test of `plan` run on a fabric where `bad` nodes and `bad_links` fail.
    fn run(plan: &[(String, String)], bad: &[&str], bad_links: &[(&str, &str)]) -> Vec<Trial> {
        plan.iter()
            .map(|(a, b)| Trial {
                a: a.clone(),
                b: b.clone(),
                ok: !bad.contains(&a.as_str())
                    && !bad.contains(&b.as_str())
                    && !bad_links.iter().any(|l| key(l.0, l.1) == key(a, b)),
                note: String::new(),
            })
            .collect()
    }

    /// Rings then re-tests until none is asked for; the final verdict.
    fn localise(n: usize, bad: &[&str], bad_links: &[(&str, &str)]) -> Verdict {
        let ns = names(n);
        let mut trials = run(&rings(&ns, 1), bad, bad_links);
        for _ in 0..10 {
            let v = infer(&ns, &trials, 3);
            if v.retests.is_empty() {
                return v;
            }
            let plan: Vec<(String, String)> = v
                .retests
                .iter()
                .map(|p| (p[0].clone(), p[1].clone()))
                .collect();
            trials.extend(run(&plan, bad, bad_links));
        }
        panic!("no end");
    }

    #[test]
    fn a_ring_covers_every_node_twice_in_n_tests() {
        let ns = names(16);
        let r = rings(&ns, 1);
        assert_eq!(r.len(), 16);
        for n in &ns {
            assert_eq!(r.iter().filter(|(a, b)| a == n || b == n).count(), 2, "{n}");
        }
        assert_eq!(r[15], ("lab16".to_string(), "lab01".to_string()));
        // two shifted rings: 2N distinct pairs; on 4 nodes shift 2 gives each pair once
        assert_eq!(rings(&ns, 2).len(), 32);
        assert_eq!(rings(&names(4), 2).len(), 6);
        assert_eq!(rings(&names(2), 3).len(), 1);
        assert!(rings(&names(1), 1).is_empty());
    }

    /// No node twice in a round, every pair in exactly one round.
    fn check_rounds(plan: &[(String, String)], rs: &[Vec<usize>]) {
        let mut all: Vec<usize> = rs.iter().flatten().copied().collect();
        all.sort();
        assert_eq!(all, (0..plan.len()).collect::<Vec<_>>());
        for r in rs {
            let mut seen = BTreeSet::new();
            for &k in r {
                assert!(seen.insert(&plan[k].0), "{} twice in {r:?}", plan[k].0);
                assert!(seen.insert(&plan[k].1), "{} twice in {r:?}", plan[k].1);
            }
        }
    }

    #[test]
    fn a_ring_runs_in_two_rounds_three_for_an_odd_count() {
        for (n, want) in [(16, 2), (4, 2), (1000, 2), (17, 3), (3, 3), (999, 3)] {
            let plan = rings(&names(n), 1);
            let rs = rounds(&plan);
            assert_eq!(rs.len(), want, "{n} nodes: {rs:?}");
            check_rounds(&plan, &rs);
        }
        // two shifted rings over 16: 32 pairs, each node in four, so at least four rounds
        let plan = rings(&names(16), 2);
        let rs = rounds(&plan);
        check_rounds(&plan, &rs);
        assert!((4..=5).contains(&rs.len()), "{rs:?}");
        // a suspect's re-tests share the suspect: one round each; two suspects side by side
        let retests: Vec<(String, String)> = [
            ("lab03", "lab05"),
            ("lab03", "lab06"),
            ("lab09", "lab11"),
            ("lab09", "lab12"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        assert_eq!(rounds(&retests), vec![vec![0, 2], vec![1, 3]]);
        assert!(rounds(&[]).is_empty());
    }

    #[test]
    fn one_bad_node_is_named_in_at_most_3n_tests() {
        for bad in ["lab01", "lab07", "lab16"] {
            let v = localise(16, &[bad], &[]);
            assert_eq!(v.nodes, vec![bad.to_string()], "{v:?}");
            assert_eq!(v.exclude, bad);
            assert!(v.links.is_empty() && v.flaky.is_empty(), "{v:?}");
            assert!(v.tests <= 48, "{}", v.tests);
            assert_eq!(v.good.len(), 15);
        }
    }

    #[test]
    fn two_adjacent_bad_nodes_are_both_named_as_a_nodeset() {
        let v = localise(16, &["lab03", "lab04"], &[]);
        assert_eq!(v.exclude, "lab[03-04]", "{v:?}");
        assert!(v.tests <= 48);
        let v = localise(16, &["lab03", "lab09"], &[]);
        assert_eq!(v.exclude, "lab[03,09]", "{v:?}");
    }

    #[test]
    fn a_bad_link_is_told_from_a_bad_node() {
        let v = localise(16, &[], &[("lab04", "lab03")]);
        assert!(v.nodes.is_empty(), "{v:?}");
        assert_eq!(
            v.links,
            vec![vec!["lab03".to_string(), "lab04".to_string()]]
        );
        assert_eq!(v.tests, 17, "the ring and one re-test of the link");
        assert!(
            v.evidence[0].contains("link lab03 - lab04"),
            "{:?}",
            v.evidence
        );
    }

    #[test]
    fn a_suspect_that_passes_a_retest_is_exonerated_and_a_single_failure_is_flaky() {
        let ns = names(8);
        // lab03 failed both ring tests (lab02, lab04) but passes with lab05 on the re-test:
        // exonerated (good), its two failed pairs become link suspects to re-test
        let mut trials = run(&rings(&ns, 1), &["lab03"], &[]);
        let v = infer(&ns, &trials, 3);
        assert_eq!(v.suspects, vec!["lab03".to_string()]);
        assert_eq!(
            v.retests,
            vec![vec!["lab03".to_string(), "lab05".to_string()]]
        );
        trials.extend(run(&[("lab03".into(), "lab05".into())], &[], &[]));
        let v = infer(&ns, &trials, 3);
        assert!(v.nodes.is_empty() && v.suspects.is_empty(), "{v:?}");
        assert_eq!(v.retests.len(), 2, "{v:?}");
        // both pass again: flaky, nothing excluded
        trials.extend(run(
            &[
                ("lab02".into(), "lab03".into()),
                ("lab03".into(), "lab04".into()),
            ],
            &[],
            &[],
        ));
        let v = infer(&ns, &trials, 3);
        assert!(v.retests.is_empty() && v.exclude.is_empty(), "{v:?}");
        assert_eq!(v.flaky.len(), 2);
    }

    #[test]
    fn without_a_good_node_nothing_is_blamed() {
        let ns = names(2);
        let v = infer(&ns, &run(&rings(&ns, 1), &["lab01"], &[]), 3);
        assert!(v.nodes.is_empty() && v.retests.is_empty(), "{v:?}");
        assert_eq!(v.unresolved, ns);
    }
}
