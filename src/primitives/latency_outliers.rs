//! Which pairs' latency stands out from the others' (pure).

/// The pairs whose latency is far above the others': above `factor` × the median of all pairs
/// and at least 1 µs above it (2 µs against 1.5 µs is noise on any fabric, not a bad link).
/// Each message names the pair, its latency, the median and how many pairs it was judged
/// against; fewer than three pairs have no "others" to judge against.
pub(crate) fn latency_outliers(rows: &[(String, f64)], factor: f64) -> Vec<String> {
    if rows.len() < 3 {
        return vec![];
    }
    let mut v: Vec<f64> = rows.iter().map(|r| r.1).collect();
    v.sort_by(|a, b| a.total_cmp(b));
    let median = if v.len() % 2 == 1 {
        v[v.len() / 2]
    } else {
        (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2.0
    };
    rows.iter()
        .filter(|(_, u)| *u > factor * median && *u - median >= 1.0)
        .map(|(pair, u)| {
            format!(
                "{pair}: {u:.2} usec, {:.1}x the median {median:.2} usec of the {} pairs (a slow path: that pair's cables, HCAs or switch ports)",
                u / median.max(f64::MIN_POSITIVE),
                rows.len()
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_latency_pair_is_named() {
        let rows: Vec<(String, f64)> = [
            ("h100-01 mlx5_0 -> h100-02 mlx5_0", 2.31),
            ("h100-01 mlx5_1 -> h100-02 mlx5_1", 2.28),
            ("h100-03 mlx5_0 -> h100-04 mlx5_0", 2.35),
            ("h100-03 mlx5_1 -> h100-04 mlx5_1", 9.87),
        ]
        .iter()
        .map(|(p, u)| (p.to_string(), *u))
        .collect();
        let o = latency_outliers(&rows, 2.0);
        assert_eq!(o.len(), 1, "{o:?}");
        assert!(
            o[0].starts_with("h100-03 mlx5_1 -> h100-04 mlx5_1: 9.87 usec"),
            "{}",
            o[0]
        );
        // all alike: nobody named; two pairs: nothing to compare with
        assert!(latency_outliers(&rows[..3], 2.0).is_empty());
        assert!(latency_outliers(&rows[2..], 2.0).is_empty());
    }
}
