//! ClusterShell/pdsh node sets: `spark-[01-06]`, `gpu[1-3,7]`, comma lists, `@group`.

use std::collections::BTreeMap;

/// A node set expression that could not be expanded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("bad node set `{expr}`: {reason}")]
pub struct NodesetError {
    pub expr: String,
    pub reason: String,
}

fn err(expr: &str, reason: impl Into<String>) -> NodesetError {
    NodesetError {
        expr: expr.to_string(),
        reason: reason.into(),
    }
}

/// Split at top-level commas (commas inside `[...]` belong to a range list).
fn split_top(expr: &str) -> Result<Vec<&str>, NodesetError> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in expr.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth < 0 {
                    return Err(err(expr, "`]` without `[`"));
                }
            }
            ',' if depth == 0 => {
                parts.push(&expr[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(err(expr, "`[` without `]`"));
    }
    parts.push(&expr[start..]);
    Ok(parts)
}

/// Expand one `prefix[ranges]suffix...` pattern (several bracket groups allowed).
fn expand_pattern(full: &str, pat: &str) -> Result<Vec<String>, NodesetError> {
    let Some(open) = pat.find('[') else {
        return Ok(vec![pat.to_string()]);
    };
    let close = pat[open..]
        .find(']')
        .map(|i| i + open)
        .ok_or_else(|| err(full, "`[` without `]`"))?;
    let (prefix, body, rest) = (&pat[..open], &pat[open + 1..close], &pat[close + 1..]);
    if body.is_empty() {
        return Err(err(full, "empty range `[]`"));
    }
    let mut items = Vec::new();
    for r in body.split(',') {
        let r = r.trim();
        let (lo, hi) = match r.split_once('-') {
            Some((a, b)) => (a, b),
            None => (r, r),
        };
        if lo.is_empty()
            || hi.is_empty()
            || !lo.bytes().all(|b| b.is_ascii_digit())
            || !hi.bytes().all(|b| b.is_ascii_digit())
        {
            return Err(err(
                full,
                format!("`{r}` is not a number or a range like 01-06"),
            ));
        }
        let width = if lo.len() > 1 && lo.starts_with('0') {
            lo.len()
        } else {
            0
        };
        let a: u64 = lo
            .parse()
            .map_err(|_| err(full, format!("`{lo}` is too large")))?;
        let b: u64 = hi
            .parse()
            .map_err(|_| err(full, format!("`{hi}` is too large")))?;
        if b < a {
            return Err(err(full, format!("range `{r}` runs backwards")));
        }
        if b - a > 100_000 {
            return Err(err(full, format!("range `{r}` has more than 100000 nodes")));
        }
        for v in a..=b {
            items.push(format!("{v:0width$}"));
        }
    }
    let tails = expand_pattern(full, rest)?;
    let mut out = Vec::with_capacity(items.len() * tails.len());
    for i in &items {
        for t in &tails {
            out.push(format!("{prefix}{i}{t}"));
        }
    }
    Ok(out)
}

/// Expand a node set to node names, in order, without duplicates. `@group` is looked up in
/// `groups` (whose values are node sets themselves); `!expr` after a comma removes nodes.
pub fn expand(expr: &str, groups: &BTreeMap<String, String>) -> Result<Vec<String>, NodesetError> {
    expand_depth(expr, groups, 0)
}

fn expand_depth(
    expr: &str,
    groups: &BTreeMap<String, String>,
    depth: usize,
) -> Result<Vec<String>, NodesetError> {
    if depth > 16 {
        return Err(err(expr, "groups refer to each other in a loop"));
    }
    let mut out: Vec<String> = Vec::new();
    for part in split_top(expr.trim())? {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let (exclude, part) = match part.strip_prefix('!') {
            Some(p) => (true, p),
            None => (false, part),
        };
        let names = if let Some(g) = part.strip_prefix('@') {
            let Some(def) = groups.get(g) else {
                let known: Vec<&str> = groups.keys().map(String::as_str).collect();
                return Err(err(
                    expr,
                    if known.is_empty() {
                        format!("unknown group `@{g}` (the inventory defines no [groups])")
                    } else {
                        format!("unknown group `@{g}`; known groups: {}", known.join(", "))
                    },
                ));
            };
            expand_depth(def, groups, depth + 1)?
        } else {
            if let Some(bad) = part
                .chars()
                .find(|c| !(c.is_ascii_alphanumeric() || "-_.[]:,".contains(*c)))
            {
                return Err(err(
                    expr,
                    format!("character `{bad}` is not allowed in a node name"),
                ));
            }
            expand_pattern(expr, part)?
        };
        if exclude {
            out.retain(|n| !names.contains(n));
        } else {
            for n in names {
                if !out.contains(&n) {
                    out.push(n);
                }
            }
        }
    }
    if out.is_empty() {
        return Err(err(expr, "it names no node"));
    }
    Ok(out)
}

/// Fold names back into a compact node set (`spark-[01-03,05]`), for display.
pub fn fold(names: &[String]) -> String {
    // (prefix, numbers with their zero-padding width)
    let mut groups: Vec<(String, Vec<(u64, usize)>)> = Vec::new();
    let mut plain: Vec<String> = Vec::new();
    for n in names {
        let digits = n.chars().rev().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            plain.push(n.clone());
            continue;
        }
        let (prefix, num) = n.split_at(n.len() - digits);
        let width = if num.len() > 1 && num.starts_with('0') {
            num.len()
        } else {
            0
        };
        let Ok(v) = num.parse::<u64>() else {
            plain.push(n.clone());
            continue;
        };
        match groups.iter_mut().find(|g| g.0 == prefix) {
            Some(g) => g.1.push((v, width)),
            None => groups.push((prefix.to_string(), vec![(v, width)])),
        }
    }
    let mut out: Vec<String> = Vec::new();
    for (prefix, mut nums) in groups {
        nums.sort();
        if nums.len() == 1 {
            let (v, w) = nums[0];
            out.push(format!("{prefix}{v:0w$}"));
            continue;
        }
        let mut ranges: Vec<String> = Vec::new();
        let mut i = 0;
        while i < nums.len() {
            let (start, w) = nums[i];
            let mut j = i;
            // 09 -> 10 continues a zero-padded range: "10" has no padding of its own.
            while j + 1 < nums.len()
                && nums[j + 1].0 == nums[j].0 + 1
                && (nums[j + 1].1 == w
                    || (nums[j + 1].1 == 0 && nums[j + 1].0.to_string().len() == w))
            {
                j += 1;
            }
            let end = nums[j].0;
            ranges.push(if start == end {
                format!("{start:0w$}")
            } else {
                format!("{start:0w$}-{end:0w$}")
            });
            i = j + 1;
        }
        out.push(format!("{prefix}[{}]", ranges.join(",")));
    }
    out.extend(plain);
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g() -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        m.insert("fabric".into(), "spark-[01-03]".into());
        m.insert("loop".into(), "@loop".into());
        m
    }

    #[test]
    fn ranges_keep_zero_padding_and_lists() {
        assert_eq!(
            expand("spark-[01-03]", &g()).unwrap(),
            ["spark-01", "spark-02", "spark-03"]
        );
        assert_eq!(
            expand("gpu[1-3,7]", &g()).unwrap(),
            ["gpu1", "gpu2", "gpu3", "gpu7"]
        );
        assert_eq!(expand("a,b,a", &g()).unwrap(), ["a", "b"]);
        assert_eq!(
            expand("r[1-2]n[1-2]", &g()).unwrap(),
            ["r1n1", "r1n2", "r2n1", "r2n2"]
        );
    }

    #[test]
    fn groups_and_exclusion() {
        assert_eq!(
            expand("@fabric,!spark-02", &g()).unwrap(),
            ["spark-01", "spark-03"]
        );
        let e = expand("@nope", &g()).unwrap_err();
        assert!(
            e.reason.contains("unknown group `@nope`") && e.reason.contains("fabric"),
            "{e}"
        );
        assert!(expand("@loop", &g()).unwrap_err().reason.contains("loop"));
    }

    #[test]
    fn bad_sets_are_errors() {
        assert!(expand("spark-[03-01]", &g()).is_err());
        assert!(expand("spark-[01-", &g()).is_err());
        assert!(expand("a;rm", &g()).is_err());
        assert!(expand("", &g()).unwrap_err().reason.contains("no node"));
    }

    #[test]
    fn fold_round_trips() {
        let names = expand("spark-[01-03,05],gpu[1-2],head", &g()).unwrap();
        assert_eq!(fold(&names), "spark-[01-03,05],gpu[1-2],head");
        let names = expand("lab[01-16],gpu[8-12]", &g()).unwrap();
        assert_eq!(fold(&names), "lab[01-16],gpu[8-12]");
    }
}
