//! The odd one out: a measurement compared with its peers (issue 32 part 2).
//!
//! Pure policy, no I/O. Given the same measurement taken across several pairs or nodes (for
//! example the RDMA write bandwidth of every pair), a result far below the median of its peers is
//! an outlier even when it passes the fixed threshold. The spread is robust: the median absolute
//! deviation (MAD), so one bad pair cannot widen the band that should catch it. A result is an
//! outlier when it is below the median by more than both `min_drop` (a fraction of the median)
//! and `mad_factor` × MAD. Fewer than `min_peers` comparable results: no comparison at all.
//! An outlier is a WARN-level note, not a failure (see docs/diagnosis.md).

// Not yet wired into the results (see docs/diagnosis.md): only the unit tests call it today.
#![allow(dead_code)]

/// Knobs of the peer comparison; the defaults are documented in docs/diagnosis.md.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PeerPolicy {
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

/// One result far below its peers: which one, its value, and the peers' median.
#[derive(Debug, Clone, PartialEq)]
pub struct Outlier {
    pub name: String,
    pub value: f64,
    pub median: f64,
    /// How far below the median, as a fraction of it (0.15 = 15 % below).
    pub drop: f64,
}

fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

fn sorted(values: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut v: Vec<f64> = values.collect();
    v.sort_by(f64::total_cmp);
    v
}

/// The results (name, value; higher is better, as bandwidth) that lie far below their peers.
/// Non-finite values are not comparable and are ignored. For latency (lower is better) pass the
/// negated value or use [`high_outliers`].
pub fn low_outliers(results: &[(String, f64)], policy: &PeerPolicy) -> Vec<Outlier> {
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
pub fn high_outliers(results: &[(String, f64)], policy: &PeerPolicy) -> Vec<Outlier> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
