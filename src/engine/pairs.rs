//! The pair scheduler behind `test_pairs`: which pairs a pattern makes, and the rounds they run
//! in — a round-robin tournament where each node is in at most one pair per round (no two
//! perftest servers on one node's port, no node's NIC shared by two measurements), rounds no
//! larger than the fan-out.

/// Which pairs of `n` nodes (by index) to test.
#[derive(Debug, Clone, PartialEq)]
pub enum Pattern {
    /// Each node to its successor (the last to the first).
    Ring,
    /// All pairs.
    Mesh,
    /// The first `split` nodes against the rest, one to one (default split: half).
    Bisection { split: Option<usize> },
    /// Given pairs.
    Explicit(Vec<(usize, usize)>),
}

/// The ordered pairs (a, b) of a pattern over `n` nodes; with `both_directions` each pair also
/// the other way round (b, a), unless the pattern already has it.
pub fn pairs(n: usize, p: &Pattern, both_directions: bool) -> Result<Vec<(usize, usize)>, String> {
    let mut v = one_way(n, p)?;
    if both_directions {
        let back: Vec<(usize, usize)> = v
            .iter()
            .map(|&(a, b)| (b, a))
            .filter(|r| !v.contains(r))
            .collect();
        v.extend(back);
    }
    Ok(v)
}

fn one_way(n: usize, p: &Pattern) -> Result<Vec<(usize, usize)>, String> {
    Ok(match p {
        Pattern::Ring if n < 2 => vec![],
        Pattern::Ring if n == 2 => vec![(0, 1)],
        Pattern::Ring => (0..n).map(|i| (i, (i + 1) % n)).collect(),
        Pattern::Mesh => {
            let mut v = Vec::new();
            for i in 0..n {
                for j in i + 1..n {
                    v.push((i, j));
                }
            }
            v
        }
        Pattern::Bisection { split } => {
            let k = split.unwrap_or(n / 2);
            if k == 0 || k >= n {
                return Err(format!(
                    "bisection split {k} of {n} nodes leaves one side empty; give split: 1..{}",
                    n.saturating_sub(1)
                ));
            }
            (0..k.min(n - k)).map(|i| (i, k + i)).collect()
        }
        Pattern::Explicit(v) => {
            if let Some(&(a, _)) = v.iter().find(|(a, b)| a == b) {
                return Err(format!(
                    "pair {a} -> {a}: a node cannot be paired with itself"
                ));
            }
            v.clone()
        }
    })
}

/// Rounds of a round-robin tournament (circle method) over `n` nodes: every unordered pair
/// exactly once, each node at most once per round, n-1 rounds (n even) or n (odd).
fn round_robin(n: usize) -> Vec<Vec<(usize, usize)>> {
    let m = if n.is_multiple_of(2) { n } else { n + 1 }; // with a bye
    let mut circle: Vec<usize> = (0..m).collect();
    let mut rounds = Vec::new();
    for _ in 0..m - 1 {
        let mut r = Vec::new();
        for i in 0..m / 2 {
            let (a, b) = (circle[i], circle[m - 1 - i]);
            if a < n && b < n {
                r.push((a.min(b), a.max(b)));
            }
        }
        rounds.push(r);
        // Keep the first fixed, rotate the rest.
        let last = circle.pop().expect("m >= 2");
        circle.insert(1, last);
    }
    rounds
}

/// Order `pairs` into rounds: no node twice in a round, at most `fanout` pairs per round,
/// every pair exactly once. A full mesh uses the round-robin tournament (optimal: n-1 rounds);
/// other lists are packed greedily.
pub fn rounds(n: usize, pairs: &[(usize, usize)], fanout: usize) -> Vec<Vec<(usize, usize)>> {
    let fanout = fanout.max(1);
    let mut base: Vec<Vec<(usize, usize)>> = Vec::new();
    let mut todo: Vec<(usize, usize)> = pairs.to_vec();
    // Use the tournament for the unordered pairs it covers, in the given direction.
    if n >= 2 && todo.len() >= n * (n - 1) / 2 {
        for r in round_robin(n) {
            let mut round = Vec::new();
            for (a, b) in r {
                if let Some(k) = todo.iter().position(|&p| p == (a, b) || p == (b, a)) {
                    round.push(todo.remove(k));
                }
            }
            if !round.is_empty() {
                base.push(round);
            }
        }
    }
    // Greedy for the rest: first round where neither node is busy.
    let mut greedy: Vec<Vec<(usize, usize)>> = Vec::new();
    for p in todo {
        match greedy.iter_mut().find(|r| {
            r.iter()
                .all(|&(a, b)| a != p.0 && a != p.1 && b != p.0 && b != p.1)
        }) {
            Some(r) => r.push(p),
            None => greedy.push(vec![p]),
        }
    }
    base.extend(greedy);
    // Rounds no larger than the fan-out.
    base.into_iter()
        .flat_map(|r| r.chunks(fanout).map(<[_]>::to_vec).collect::<Vec<_>>())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn check(n: usize, ps: &[(usize, usize)], rs: &[Vec<(usize, usize)>], fanout: usize) {
        let mut seen = Vec::new();
        for r in rs {
            let mut busy = BTreeSet::new();
            assert!(r.len() <= fanout);
            for &(a, b) in r {
                assert!(
                    busy.insert(a) && busy.insert(b),
                    "node twice in round {r:?}"
                );
                assert!(a < n && b < n);
                seen.push((a, b));
            }
        }
        let mut want = ps.to_vec();
        want.sort();
        seen.sort();
        assert_eq!(seen, want, "every pair exactly once");
    }

    #[test]
    fn mesh_is_a_round_robin_tournament() {
        for n in 2..=12 {
            let ps = pairs(n, &Pattern::Mesh, false).unwrap();
            assert_eq!(ps.len(), n * (n - 1) / 2);
            let rs = rounds(n, &ps, 64);
            check(n, &ps, &rs, 64);
            assert_eq!(rs.len(), if n % 2 == 0 { n - 1 } else { n }, "n={n}");
        }
        let ps = pairs(8, &Pattern::Mesh, true).unwrap();
        let rs = rounds(8, &ps, 64);
        check(8, &ps, &rs, 64);
        assert_eq!(rs.len(), 14);
        for (a, b) in &ps {
            assert!(ps.contains(&(*b, *a)), "{a} -> {b} without {b} -> {a}");
        }
    }

    #[test]
    fn ring_bisection_explicit_and_fanout() {
        let ps = pairs(5, &Pattern::Ring, false).unwrap();
        assert_eq!(ps, vec![(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)]);
        let rs = rounds(5, &ps, 64);
        check(5, &ps, &rs, 64);
        assert_eq!(rs.len(), 3);
        let ps = pairs(6, &Pattern::Bisection { split: None }, false).unwrap();
        assert_eq!(ps, vec![(0, 3), (1, 4), (2, 5)]);
        assert_eq!(rounds(6, &ps, 64).len(), 1);
        let rs = rounds(6, &ps, 2);
        check(6, &ps, &rs, 2);
        assert_eq!(rs.len(), 2);
        assert!(pairs(4, &Pattern::Bisection { split: Some(4) }, true).is_err());
        assert!(pairs(4, &Pattern::Explicit(vec![(1, 1)]), false).is_err());
        // both directions: a two-node ring is one pair each way, not the same pair twice
        assert_eq!(
            pairs(2, &Pattern::Ring, true).unwrap(),
            vec![(0, 1), (1, 0)]
        );
        let ps = pairs(6, &Pattern::Bisection { split: None }, true).unwrap();
        assert_eq!(ps.len(), 6);
        check(6, &ps, &rounds(6, &ps, 64), 64);
        let ps = vec![(0, 1), (1, 2), (0, 2)];
        let rs = rounds(3, &ps, 8);
        check(3, &ps, &rs, 8);
        assert_eq!(rs.len(), 3);
    }
}
