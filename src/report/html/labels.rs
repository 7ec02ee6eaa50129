//! Labels cut to fit a plot that stay as distinct as the full labels: two long test names that
//! differ only at the end (`… [spark-01 -> spark-02]` / `… [spark-02 -> spark-01]`) never
//! render the same.

/// `full` cut to at most `max` characters each. A long label keeps its head and its tail; where
/// two cut labels of different full labels still read the same, the part where the full labels
/// differ is shown; as a last resort a ` #n` suffix tells them apart. The full text belongs in
/// the element's tooltip.
pub(super) fn short_labels(full: &[String], max: usize) -> Vec<String> {
    let max = max.max(8);
    let first: Vec<String> = full.iter().map(|l| elide_middle(l, max)).collect();
    let mut out = first.clone();
    for i in 0..full.len() {
        let differ_at = (0..full.len())
            .filter(|&j| j != i && first[j] == first[i] && full[j] != full[i])
            .map(|j| common_prefix(&full[i], &full[j]))
            .min();
        if let Some(d) = differ_at {
            out[i] = window(&full[i], d, max);
        }
    }
    for i in 0..out.len() {
        let clash = (0..i).any(|j| out[j] == out[i] && full[j] != full[i]);
        if clash {
            let tag = format!(" #{}", i + 1);
            let keep = max.saturating_sub(tag.chars().count() + 1);
            out[i] = format!("{}…{tag}", out[i].chars().take(keep).collect::<String>());
        }
    }
    out
}

/// `l` with its middle replaced by `…` when longer than `max` characters: two fifths head, the
/// rest tail (test names differ most at their end: nodes, pairs, rails).
fn elide_middle(l: &str, max: usize) -> String {
    let chars: Vec<char> = l.chars().collect();
    if chars.len() <= max {
        return l.to_string();
    }
    let head = (max - 1) * 2 / 5;
    let tail = max - 1 - head;
    let mut s: String = chars[..head].iter().collect();
    s.push('…');
    s.extend(&chars[chars.len() - tail..]);
    s
}

/// About `max` characters of `l` around character `at` (where it differs from another label),
/// with `…` where it was cut.
fn window(l: &str, at: usize, max: usize) -> String {
    let chars: Vec<char> = l.chars().collect();
    if chars.len() <= max {
        return l.to_string();
    }
    let start = at
        .saturating_sub(max / 3)
        .min(chars.len().saturating_sub(max - 1));
    let end = (start + max - 2).min(chars.len());
    let mut s = String::new();
    if start > 0 {
        s.push('…');
    }
    s.extend(&chars[start..end]);
    if end < chars.len() {
        s.push('…');
    }
    s
}

/// How many leading characters `a` and `b` share.
fn common_prefix(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::short_labels;

    fn v(l: &[&str]) -> Vec<String> {
        l.iter().map(|s| s.to_string()).collect()
    }

    fn distinct(l: &[String]) -> bool {
        l.iter()
            .enumerate()
            .all(|(i, a)| l[..i].iter().all(|b| a != b))
    }

    #[test]
    fn long_names_differing_at_the_end_stay_distinct() {
        let full = v(&[
            "five_step_acceptance / step 3: nccl all_reduce busbw and transport [spark-01 -> spark-02]",
            "five_step_acceptance / step 3: nccl all_reduce busbw and transport [spark-02 -> spark-01]",
        ]);
        let s = short_labels(&full, 40);
        assert!(distinct(&s), "{s:?}");
        assert!(s.iter().all(|l| l.chars().count() <= 40), "{s:?}");
        assert!(s[0].contains("spark-01 -> spark-02"), "{s:?}");
        // Short labels are kept as they are.
        assert_eq!(short_labels(&v(&["a", "b"]), 40), v(&["a", "b"]));
    }

    #[test]
    fn names_differing_in_the_middle_stay_distinct() {
        let tail = " and then a long common tail that fills the label";
        let full = v(&[
            &format!("suite one / test with a long common head, node-a{tail}"),
            &format!("suite one / test with a long common head, node-b{tail}"),
            &format!("suite one / test with a long common head, node-b{tail}"),
        ]);
        let s = short_labels(&full, 40);
        assert!(s[0] != s[1], "{s:?}");
        assert_eq!(s[1], s[2], "the same full label reads the same");
        assert!(s[0].contains("node-a") && s[1].contains("node-b"), "{s:?}");
        assert!(s.iter().all(|l| l.chars().count() <= 40), "{s:?}");
    }
}
