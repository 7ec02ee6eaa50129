//! "Did you mean": the closest known word by edit distance.

pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().take(300).collect();
    let b: Vec<char> = b.chars().take(300).collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The known word closest to `word` within `max` edits (ties: the first in `known`).
pub(crate) fn closest<'a, I: IntoIterator<Item = &'a str>>(
    word: &str,
    known: I,
    max: usize,
) -> Option<&'a str> {
    known
        .into_iter()
        .map(|k| (edit_distance(word, k), k))
        .filter(|(d, _)| *d <= max)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// ` (did you mean `x`?)` or nothing.
pub(crate) fn did_you_mean<'a, I: IntoIterator<Item = &'a str>>(word: &str, known: I) -> String {
    let max = (word.chars().count() / 3).clamp(1, 3);
    closest(word, known, max)
        .map(|k| format!(" (did you mean `{k}`?)"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #[test]
    fn suggests_the_nearest() {
        assert_eq!(super::edit_distance("rdma_pc", "rdma_pct"), 1);
        assert_eq!(
            super::did_you_mean("rdma_pc", ["speed_mbps", "rdma_pct"]),
            " (did you mean `rdma_pct`?)"
        );
        assert_eq!(super::did_you_mean("zzz", ["speed_mbps"]), "");
    }
}
