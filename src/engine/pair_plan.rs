//! The pair scheduler behind `test_pairs`: which pairs a pattern makes, and the rounds they run
//! in — a round-robin tournament where each node is in at most one pair per round (no two
//! perftest servers on one node's port, no node's NIC shared by two measurements), rounds no
//! larger than the fan-out.

/// `test_pairs(…, #{ rounds: false })`: pair checks that do not conflict (pings, `ssh_hop`,
/// MTU pings) run together instead of in rounds: at most `per_node` pairs at a time in which
/// a node is first (its commands on its one SSH connection) and `per_node` in which it is
/// second (e.g. `ssh_hop` handshakes arriving at its sshd), `max` pairs in all.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AtOnce {
    pub per_node: usize,
    pub max: usize,
}

/// Default `per_node`: the commands one SSH connection runs at once (below sshd's default
/// `MaxSessions 10`, and below its `MaxStartups 10` for handshakes arriving at a node).
pub(crate) const PER_NODE: usize = crate::run::PER_CONNECTION;

/// Which pairs of `n` nodes (by index) to test.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Pattern {
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
/// the other way round (b, a), unless the pattern already has it. Linear in the pairs.
pub(crate) fn pairs(
    n: usize,
    p: &Pattern,
    both_directions: bool,
) -> Result<Vec<(usize, usize)>, PatternError> {
    let mut v = one_way(n, p)?;
    if both_directions {
        let have: std::collections::HashSet<(usize, usize)> = v.iter().copied().collect();
        let back: Vec<(usize, usize)> = v
            .iter()
            .map(|&(a, b)| (b, a))
            .filter(|r| !have.contains(r))
            .collect();
        v.extend(back);
    }
    Ok(v)
}

/// A pattern that makes no pairs of these nodes.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PatternError {
    #[error("bisection split {split} of {n} nodes leaves one side empty; give split: 1..{}", n.saturating_sub(1))]
    EmptySide { split: usize, n: usize },
    #[error("pair {0} -> {0}: a node cannot be paired with itself")]
    SelfPair(usize),
}

fn one_way(n: usize, p: &Pattern) -> Result<Vec<(usize, usize)>, PatternError> {
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
                return Err(PatternError::EmptySide { split: k, n });
            }
            (0..k.min(n - k)).map(|i| (i, k + i)).collect()
        }
        Pattern::Explicit(v) => {
            if let Some(&(a, _)) = v.iter().find(|(a, b)| a == b) {
                return Err(PatternError::SelfPair(a));
            }
            v.clone()
        }
    })
}

/// Rounds of a round-robin tournament (circle method) over `n` nodes: every unordered pair
/// exactly once, each node at most once per round, n-1 rounds (n even) or n (odd). Each round
/// is given to `visit` as it is made (nothing but the circle is kept: O(n) memory).
fn round_robin(n: usize, mut visit: impl FnMut(&mut dyn Iterator<Item = (usize, usize)>)) {
    let m = if n.is_multiple_of(2) { n } else { n + 1 }; // with a bye
    if m < 2 {
        return;
    }
    // The node at position i of the circle in round r: position 0 keeps node 0, the others
    // turn one step a round.
    let at = |r: usize, i: usize| {
        if i == 0 {
            0
        } else {
            1 + (i - 1 + (m - 1) - r % (m - 1)) % (m - 1)
        }
    };
    for r in 0..m - 1 {
        let mut round = (0..m / 2)
            .map(|i| (at(r, i), at(r, m - 1 - i)))
            .filter(|&(a, b)| a < n && b < n)
            .map(|(a, b)| (a.min(b), a.max(b)));
        visit(&mut round);
    }
}

/// Where each ordered pair is in the list: `slot[a * n + b]` is its index + 1 (0: absent or
/// taken). A second copy of a pair (a given list may repeat one) is left to the greedy pass.
struct PairIndex {
    n: usize,
    slot: Vec<u32>,
    /// Pairs indexed and not yet taken.
    left: usize,
}

impl PairIndex {
    fn new(n: usize, pairs: &[(usize, usize)]) -> PairIndex {
        let mut slot = vec![0u32; n * n];
        let mut left = 0;
        for (k, &(a, b)) in pairs.iter().enumerate() {
            let s = &mut slot[a * n + b];
            if *s == 0 {
                *s = k as u32 + 1;
                left += 1;
            }
        }
        PairIndex { n, slot, left }
    }

    /// The first in list order of (a, b) and (b, a) still untaken; takes it.
    fn take_either(&mut self, a: usize, b: usize) -> Option<usize> {
        let (ab, ba) = (a * self.n + b, b * self.n + a);
        let at = match (self.slot[ab], self.slot[ba]) {
            (0, 0) => return None,
            (0, _) => ba,
            (x, y) if y != 0 && y < x => ba,
            _ => ab,
        };
        let k = std::mem::take(&mut self.slot[at]) as usize - 1;
        self.left -= 1;
        Some(k)
    }
}

/// Order `pairs` into rounds: no node twice in a round, at most `fanout` pairs per round,
/// every pair exactly once. A full mesh uses the round-robin tournament (optimal: n-1 rounds
/// per direction); the rest is packed greedily. Time and memory linear in the pairs (a mesh
/// of 1000 nodes: 999,000 ordered pairs, planned in well under a second); the greedy pass is
/// O(pairs x its rounds), small for rings, bisections and given lists.
pub(crate) fn rounds(
    n: usize,
    pairs: &[(usize, usize)],
    fanout: usize,
) -> Vec<Vec<(usize, usize)>> {
    let fanout = fanout.max(1);
    let mut base: Vec<Vec<(usize, usize)>> = Vec::new();
    let mut taken = vec![false; pairs.len()];
    let whole = n * n.saturating_sub(1) / 2;
    if n >= 2 && pairs.len() >= whole {
        let mut index = PairIndex::new(n, pairs);
        // One tournament per direction while a whole one's worth of pairs is left.
        loop {
            let before = index.left;
            round_robin(n, |r| {
                let round: Vec<(usize, usize)> = r
                    .filter_map(|(a, b)| index.take_either(a, b))
                    .map(|k| {
                        taken[k] = true;
                        pairs[k]
                    })
                    .collect();
                if !round.is_empty() {
                    base.push(round);
                }
            });
            if index.left == before || index.left < whole {
                break;
            }
        }
    }
    base.extend(greedy(n, pairs, &taken));
    // Rounds no larger than the fan-out.
    base.into_iter()
        .flat_map(|r| r.chunks(fanout).map(<[_]>::to_vec).collect::<Vec<_>>())
        .collect()
}

/// The pairs not yet `taken`, in list order, each in the first round where neither of its
/// nodes is busy: round after round, every pair left that fits goes in (the same rounds as
/// placing pair by pair, without keeping a busy set per round).
fn greedy(n: usize, pairs: &[(usize, usize)], taken: &[bool]) -> Vec<Vec<(usize, usize)>> {
    let mut todo: Vec<usize> = (0..pairs.len()).filter(|&k| !taken[k]).collect();
    let mut busy = vec![usize::MAX; n]; // the round a node was last put in
    let mut out = Vec::new();
    while !todo.is_empty() {
        let r = out.len();
        let mut round = Vec::new();
        todo.retain(|&k| {
            let (a, b) = pairs[k];
            if busy[a] == r || busy[b] == r {
                return true;
            }
            busy[a] = r;
            busy[b] = r;
            round.push((a, b));
            false
        });
        out.push(round);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn check(n: usize, ps: &[(usize, usize)], rs: &[Vec<(usize, usize)>], fanout: usize) {
        let mut seen = Vec::new();
        for r in rs {
            let mut busy = BTreeSet::new();
            assert!(!r.is_empty() && r.len() <= fanout);
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

    /// Issue 22 item 4: every pair exactly once, no node twice in a round, the optimal round
    /// count, for even and odd n up to the README's 1000 nodes, one way and both ways.
    #[test]
    fn mesh_plans_are_complete_and_optimal_up_to_1000_nodes() {
        for n in [2, 3, 7, 16, 33, 64, 101, 1000] {
            let per_pass = if n % 2 == 0 { n - 1 } else { n };
            for both in [false, true] {
                let ps = pairs(n, &Pattern::Mesh, both).unwrap();
                let want = if both { n * (n - 1) } else { n * (n - 1) / 2 };
                assert_eq!(ps.len(), want, "n={n}");
                let rs = rounds(n, &ps, usize::MAX);
                check(n, &ps, &rs, usize::MAX);
                let passes = if both { 2 } else { 1 };
                assert_eq!(rs.len(), passes * per_pass, "n={n} both={both}");
            }
        }
        let ps = pairs(1000, &Pattern::Mesh, false).unwrap();
        assert_eq!(ps.len(), 499_500);
        assert_eq!(rounds(1000, &ps, usize::MAX).len(), 999);
        // the fan-out splits rounds, nothing else
        let rs = rounds(1000, &ps, 64);
        check(1000, &ps, &rs, 64);
        assert_eq!(rs.len(), 999 * 8);
    }

    /// The greedy pass places each pair in the first round where neither node is busy, as
    /// placing pair by pair would (the reference below), for lists with repeats and stars.
    #[test]
    fn greedy_rounds_are_first_fit_in_list_order() {
        fn first_fit(ps: &[(usize, usize)]) -> Vec<Vec<(usize, usize)>> {
            let mut out: Vec<Vec<(usize, usize)>> = Vec::new();
            for &p in ps {
                let free = |r: &Vec<(usize, usize)>| {
                    r.iter()
                        .all(|&(a, b)| a != p.0 && a != p.1 && b != p.0 && b != p.1)
                };
                match out.iter_mut().find(|r| free(r)) {
                    Some(r) => r.push(p),
                    None => out.push(vec![p]),
                }
            }
            out
        }
        let lists: Vec<Vec<(usize, usize)>> = vec![
            vec![(0, 1), (1, 2), (2, 3), (3, 0), (0, 2), (1, 4), (4, 3)],
            vec![(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (3, 4)],
            vec![(0, 1), (0, 1), (1, 0), (2, 3), (1, 2)],
            pairs(9, &Pattern::Ring, true).unwrap(),
            pairs(10, &Pattern::Bisection { split: Some(3) }, true).unwrap(),
        ];
        for ps in lists {
            let n = ps.iter().map(|&(a, b)| a.max(b)).max().unwrap() + 1;
            let rs = rounds(n, &ps, usize::MAX);
            check(n, &ps, &rs, usize::MAX);
            assert_eq!(rs, first_fit(&ps), "{ps:?}");
        }
    }

    /// A mesh given as a list with a repeated pair: the tournament takes one copy, the
    /// repeat still runs (every listed pair exactly once).
    #[test]
    fn a_mesh_list_with_repeats_keeps_every_copy() {
        let mut ps = pairs(6, &Pattern::Mesh, false).unwrap();
        ps.push((2, 4));
        ps.push((4, 2));
        let rs = rounds(6, &ps, usize::MAX);
        check(6, &ps, &rs, usize::MAX);
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
