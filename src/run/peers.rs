//! The odd one out: a measurement compared with its peers (issue 32 part 2).
//!
//! Pure policy, no I/O. Given the same measurement taken across several pairs or nodes (for
//! example the RDMA write bandwidth of every pair), a result far below the median of its peers is
//! an outlier even when it passes the fixed threshold. The spread is robust: the median absolute
//! deviation (MAD), so one bad pair cannot widen the band that should catch it. A result is an
//! outlier when it is below the median by more than both `min_drop` (a fraction of the median)
//! and `mad_factor` × MAD. Fewer than `min_peers` comparable results: no comparison at all.
//! An outlier is a WARN-level note, not a failure (see docs/diagnosis.md).

use super::model::{Diagnosis, Metric, RunResult};

/// Knobs of the peer comparison; the defaults are documented in docs/diagnosis.md.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PeerPolicy {
    /// Fewest comparable results before any is compared (default 4).
    pub min_peers: usize,
    /// Least drop below the median, as a fraction of it, that counts (default 0.10 = 10 %).
    pub min_drop: f64,
    /// Least drop below the median, in median absolute deviations (default 3).
    pub mad_factor: f64,
}

impl Default for PeerPolicy {
    fn default() -> Self {
        PeerPolicy {
            min_peers: 4,
            min_drop: 0.10,
            mad_factor: 3.0,
        }
    }
}

impl PeerPolicy {
    /// The defaults with the run's `--set` knobs applied: `odd_min_peers=N`, `odd_min_drop=F`
    /// (a fraction: 0.1 = 10 %), `odd_mad_factor=F`; `odd_one_out=false` turns the comparison
    /// off (None). The keys and defaults are rows of `run::settings` (a test holds the defaults
    /// to these); the command line refuses a knob that is not a number, and one that reaches
    /// here otherwise (a number as text) is read, anything else ignored.
    pub(crate) fn from_params(params: &serde_json::Map<String, serde_json::Value>) -> Option<Self> {
        let num = |k: &str| knob(params, k);
        if turned_off(params, "odd_one_out") {
            return None;
        }
        let d = PeerPolicy::default();
        Some(PeerPolicy {
            min_peers: num("odd_min_peers").map_or(d.min_peers, |v| v.max(2.0) as usize),
            min_drop: num("odd_min_drop").map_or(d.min_drop, |v| v.clamp(0.0, 1.0)),
            mad_factor: num("odd_mad_factor").map_or(d.mad_factor, |v| v.max(0.0)),
        })
    }
}

/// A number `--set KEY=N` gave (as a number or as text), else None.
pub(crate) fn knob(params: &serde_json::Map<String, serde_json::Value>, key: &str) -> Option<f64> {
    params.get(key).and_then(|v| {
        v.as_f64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
    })
}

/// Whether `--set KEY=false` turns a comparison off.
pub(crate) fn turned_off(params: &serde_json::Map<String, serde_json::Value>, key: &str) -> bool {
    params
        .get(key)
        .is_some_and(|v| v.as_bool() == Some(false) || v.as_str() == Some("false"))
}

/// One result far below its peers: which one, its value, and the peers' median.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Outlier {
    pub name: String,
    pub value: f64,
    pub median: f64,
    /// How far below the median, as a fraction of it (0.15 = 15 % below).
    pub drop: f64,
}

pub(crate) fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

pub(crate) fn sorted(values: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut v: Vec<f64> = values.collect();
    v.sort_by(f64::total_cmp);
    v
}

/// The results (name, value; higher is better, as bandwidth) that lie far below their peers.
/// Non-finite values are not comparable and are ignored. For latency (lower is better) pass the
/// negated value or use [`high_outliers`].
pub(crate) fn low_outliers(results: &[(String, f64)], policy: &PeerPolicy) -> Vec<Outlier> {
    let usable: Vec<&(String, f64)> = results.iter().filter(|(_, v)| v.is_finite()).collect();
    if usable.len() < policy.min_peers.max(1) {
        return Vec::new();
    }
    let values = sorted(usable.iter().map(|(_, v)| *v));
    let med = median(&values);
    if med <= 0.0 {
        return Vec::new();
    }
    let mad = median(&sorted(values.iter().map(|v| (v - med).abs())));
    let band = (policy.min_drop * med).max(policy.mad_factor * mad);
    usable
        .iter()
        .filter(|(_, v)| med - v > band)
        .map(|(name, v)| Outlier {
            name: name.clone(),
            value: *v,
            median: med,
            drop: (med - v) / med,
        })
        .collect()
}

/// The results (lower is better, as latency) that lie far above their peers; `drop` is then how
/// far above the median, as a fraction of it.
pub(crate) fn high_outliers(results: &[(String, f64)], policy: &PeerPolicy) -> Vec<Outlier> {
    let usable: Vec<&(String, f64)> = results.iter().filter(|(_, v)| v.is_finite()).collect();
    if usable.len() < policy.min_peers.max(1) {
        return Vec::new();
    }
    let values = sorted(usable.iter().map(|(_, v)| *v));
    let med = median(&values);
    if med <= 0.0 {
        return Vec::new();
    }
    let mad = median(&sorted(values.iter().map(|v| (v - med).abs())));
    let band = (policy.min_drop * med).max(policy.mad_factor * mad);
    usable
        .iter()
        .filter(|(_, v)| v - med > band)
        .map(|(name, v)| Outlier {
            name: name.clone(),
            value: *v,
            median: med,
            drop: (v - med) / med,
        })
        .collect()
}

/// Which way a unit is better: bandwidth higher, latency lower. Other units are not compared.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Better {
    Higher,
    Lower,
}

/// The direction of `unit`, when it is a bandwidth (Gbit/s, GB/s, ...) or a latency (us, ms).
pub(crate) fn better(unit: &str) -> Option<Better> {
    match unit {
        "Gbit/s" | "Gb/s" | "Mbit/s" | "GB/s" | "MB/s" => Some(Better::Higher),
        "us" | "µs" | "ms" => Some(Better::Lower),
        _ => None,
    }
}

/// `rdma_write_gbps[spark-01:rocep1s0f1]` → `rdma_write_gbps`; a name with no `[key]` is no
/// member of any group (nothing says what its peers are).
fn base(name: &str) -> Option<&str> {
    let (base, key) = name.split_once('[')?;
    key.ends_with(']').then_some(base)
}

/// One measurement across its peers: the same script, metric base name, unit and message size.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Group<'a> {
    pub suite: &'a str,
    pub base: &'a str,
    pub unit: &'a str,
    pub size_bytes: Option<u64>,
    pub better: Better,
    /// Each member: its metric and the testcase that recorded it.
    pub members: Vec<(&'a Metric, &'a str)>,
}

impl Group<'_> {
    fn same(&self, suite: &str, base: &str, m: &Metric) -> bool {
        self.suite == suite
            && self.base == base
            && self.unit == m.unit
            && self.size_bytes == m.size_bytes
    }
}

/// The metrics of `run` grouped by measurement, in the order met (see [`Group`]).
pub(crate) fn groups(run: &RunResult) -> Vec<Group<'_>> {
    let mut out: Vec<Group> = vec![];
    for s in &run.suites {
        for t in &s.tests {
            for m in &t.metrics {
                let (Some(b), Some(better)) = (base(&m.name), better(&m.unit)) else {
                    continue;
                };
                match out.iter_mut().find(|g| g.same(&s.name, b, m)) {
                    Some(g) => g.members.push((m, &t.name)),
                    None => out.push(Group {
                        suite: &s.name,
                        base: b,
                        unit: &m.unit,
                        size_bytes: m.size_bytes,
                        better,
                        members: vec![(m, &t.name)],
                    }),
                }
            }
        }
    }
    out
}

/// `passes its fixed threshold 90`: how the outlier stands against its own line.
fn against_line(m: &Metric) -> String {
    match m.threshold {
        Some(t) => format!(
            "passes its fixed threshold {}",
            crate::util::fmt::fmt_num(t)
        ),
        None => "no fixed threshold".into(),
    }
}

/// Whether `m` is on the wrong side of its own line: its test is red and diagnosed already.
fn fails_its_line(m: &Metric) -> bool {
    m.threshold.is_some_and(|t| !m.meets(t))
}

/// The WARN-level note of outlier `o` of group `g` (its `name` is the member's index: a metric
/// name repeats across the pairs of a mesh), its part named by `part`.
fn note(g: &Group, o: &Outlier, part: String) -> Option<Diagnosis> {
    let (m, test) = g.members.get(o.name.parse::<usize>().ok()?)?;
    let way = match g.better {
        Better::Higher => "below",
        Better::Lower => "above",
    };
    let num = crate::util::fmt::fmt_num;
    let cause = format!(
        "odd one out: {} {} {} is {:.0} % {way} the median {} {} of the {} comparable results ({})",
        m.name,
        num(m.value),
        m.unit,
        o.drop * 100.0,
        num(o.median),
        m.unit,
        g.members.len(),
        against_line(m)
    );
    Some(Diagnosis {
        rule: "odd_one_out".into(),
        metric: Some(m.name.clone()),
        cause,
        part,
        evidence: vec![test.to_string()],
        next: vec![format!(
            "re-run `{test}` to confirm (one dip can be noise); if it repeats, compare the part's link speed, PCIe width and error counters with its peers'"
        )],
    })
}

/// The outliers of one group, by its direction, each named by its member's index (the same
/// metric name is recorded by every pair a node is the first of).
fn outliers(g: &Group, policy: &PeerPolicy) -> Vec<Outlier> {
    let values: Vec<(String, f64)> = g
        .members
        .iter()
        .enumerate()
        .map(|(i, (m, _))| (i.to_string(), m.value))
        .collect();
    match g.better {
        Better::Higher => low_outliers(&values, policy),
        Better::Lower => high_outliers(&values, policy),
    }
}

/// One WARN-level [`Diagnosis`] (rule `odd_one_out`) per result far from its peers that passes
/// its own line (one past it is a red, diagnosed by the rules); `part` names a metric's part
/// (node, port, rail). Never a failure: the run's status is unchanged.
pub(crate) fn odd_ones(
    run: &RunResult,
    policy: &PeerPolicy,
    part: impl Fn(&Metric) -> String,
) -> Vec<Diagnosis> {
    groups(run)
        .iter()
        .flat_map(|g| {
            outliers(g, policy)
                .into_iter()
                .filter_map(|o| {
                    let (m, _) = g.members.get(o.name.parse::<usize>().ok()?)?;
                    (!fails_its_line(m)).then(|| note(g, &o, part(m)))?
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::model::TestResult;

    fn rail(node: &str, dev: &str, v: f64) -> Metric {
        Metric {
            node: Some(node.into()),
            rail: Some(dev.into()),
            threshold: Some(70.0),
            ..Metric::new(&format!("rdma_write_gbps[{node}:{dev}]"), v, "Gbit/s")
        }
    }

    fn run_of(metrics: Vec<Metric>) -> RunResult {
        let t = TestResult {
            metrics,
            ..TestResult::new("rdma: write [x]", "s")
        };
        RunResult::of_tests("s", vec![t])
    }

    #[test]
    fn metrics_group_by_base_name_and_unit_with_direction_by_unit() {
        let mut ms = vec![rail("a", "r0", 93.0), rail("b", "r0", 92.0)];
        ms.push(Metric::new("ping_rtt_avg_ms[a->b]", 0.2, "ms"));
        ms.push(Metric::new("rdma_write_gbps[a:total]", 1.0, "count"));
        ms.push(Metric::new("plain_gbps", 1.0, "Gbit/s"));
        let run = run_of(ms);
        let g = groups(&run);
        let got: Vec<(&str, &str, Better, usize)> = g
            .iter()
            .map(|g| (g.base, g.unit, g.better, g.members.len()))
            .collect();
        assert_eq!(
            got,
            [
                ("rdma_write_gbps", "Gbit/s", Better::Higher, 2),
                ("ping_rtt_avg_ms", "ms", Better::Lower, 1)
            ]
        );
    }

    #[test]
    fn a_passing_rail_fifteen_percent_low_gets_a_note_naming_it() {
        let v = [93.1, 92.8, 93.4, 79.0, 92.9, 93.2];
        let ms = v
            .iter()
            .enumerate()
            .map(|(i, v)| rail("h", &format!("mlx5_{i}"), *v))
            .collect();
        let notes = odd_ones(&run_of(ms), &PeerPolicy::default(), |m| {
            format!(
                "{} {}",
                m.node.as_deref().unwrap_or("?"),
                m.rail.as_deref().unwrap_or("?")
            )
        });
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert_eq!(notes[0].rule, "odd_one_out");
        assert_eq!(notes[0].part, "h mlx5_3");
        assert_eq!(
            notes[0].cause,
            "odd one out: rdma_write_gbps[h:mlx5_3] 79 Gbit/s is 15 % below the median 93 Gbit/s of the 6 comparable results (passes its fixed threshold 70)"
        );
        assert_eq!(notes[0].evidence, ["rdma: write [x]"]);
        // below its own line too: a red, which the rules diagnose; no second note
        let v = [93.1, 92.8, 93.4, 52.0, 92.9, 93.2];
        let ms = v
            .iter()
            .enumerate()
            .map(|(i, v)| rail("h", &format!("mlx5_{i}"), *v))
            .collect();
        assert!(odd_ones(&run_of(ms), &PeerPolicy::default(), |_| String::new()).is_empty());
    }

    fn named(values: &[f64]) -> Vec<(String, f64)> {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| (format!("pair{i}"), *v))
            .collect()
    }

    #[test]
    fn one_pair_fifteen_percent_below_is_flagged() {
        // Six Spark pairs near 93 Gbit/s per rail, one at ~79 (15 % low, still above a 70 floor).
        let r = named(&[93.1, 92.8, 93.4, 79.0, 92.9, 93.2]);
        let out = low_outliers(&r, &PeerPolicy::default());
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0].name, "pair3");
        assert!((out[0].drop - 0.15).abs() < 0.01, "{out:?}");
    }

    #[test]
    fn ordinary_spread_is_not_flagged() {
        let r = named(&[93.1, 90.5, 94.0, 88.9, 92.2, 91.7]);
        assert!(low_outliers(&r, &PeerPolicy::default()).is_empty());
    }

    #[test]
    fn fewer_than_four_results_are_not_compared() {
        let r = named(&[93.0, 93.0, 60.0]);
        assert!(low_outliers(&r, &PeerPolicy::default()).is_empty());
        let loose = PeerPolicy {
            min_peers: 3,
            ..PeerPolicy::default()
        };
        assert_eq!(low_outliers(&r, &loose).len(), 1);
    }

    #[test]
    fn a_noisy_fabric_widens_the_band() {
        // Spread (MAD ~6) makes a 12 % drop ordinary noise here: 3 × MAD exceeds it.
        let r = named(&[100.0, 94.0, 106.0, 88.0, 112.0, 100.0, 93.0, 107.0]);
        assert!(low_outliers(&r, &PeerPolicy::default()).is_empty());
    }

    #[test]
    fn latency_far_above_peers_is_flagged_and_nan_ignored() {
        let r = named(&[2.1, 2.0, 2.2, 2.1, 3.4, f64::NAN]);
        let out = high_outliers(&r, &PeerPolicy::default());
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].name, "pair4");
        assert!(low_outliers(&r, &PeerPolicy::default()).is_empty());
    }

    #[test]
    fn set_knobs_change_the_policy_and_false_turns_it_off() {
        let params = |pairs: &[(&str, serde_json::Value)]| {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect::<serde_json::Map<_, _>>()
        };
        assert_eq!(
            PeerPolicy::from_params(&params(&[])),
            Some(PeerPolicy::default())
        );
        let p = PeerPolicy::from_params(&params(&[
            ("odd_min_peers", serde_json::json!(6)),
            ("odd_min_drop", serde_json::json!("0.2")),
            ("odd_mad_factor", serde_json::json!(2.5)),
        ]))
        .unwrap();
        assert_eq!((p.min_peers, p.min_drop, p.mad_factor), (6, 0.2, 2.5));
        // a 15 % dip among four: flagged by default, not with a 20 % minimum drop
        let r: Vec<(String, f64)> = [95.0, 94.8, 95.1, 81.0]
            .iter()
            .enumerate()
            .map(|(i, v)| (format!("r{i}"), *v))
            .collect();
        assert_eq!(low_outliers(&r, &PeerPolicy::default()).len(), 1);
        assert!(low_outliers(&r, &p).is_empty());
        for off in [serde_json::json!(false), serde_json::json!("false")] {
            assert_eq!(
                PeerPolicy::from_params(&params(&[("odd_one_out", off)])),
                None
            );
        }
    }
}
