//! ClusterShell/pdsh node sets: `spark-[01-06]`, `gpu[1-3,7]`, comma lists, `@group`.

use std::collections::{BTreeMap, HashMap, HashSet};

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

/// The most node names one node set may expand to (`a[0-99999]b[0-99999]` would be 10^10
/// names, 240 GB). A cluster with more nodes than this is not a fabcheck inventory.
pub(crate) const MAX_NODES: usize = 1_000_000;

/// One piece of a pattern: literal text, or a bracket list of ranges `(first, last, width)`.
enum Seg<'a> {
    Lit(&'a str),
    Ranges(Vec<(u64, u64, usize)>),
}

fn too_many(full: &str, n: u128) -> NodesetError {
    err(
        full,
        format!("it names {n} nodes; at most {MAX_NODES} are allowed"),
    )
}

/// Parse one `prefix[ranges]suffix...` pattern (several bracket groups allowed) and count the
/// names it stands for, without expanding it.
fn parse_pattern<'a>(full: &str, pat: &'a str) -> Result<(Vec<Seg<'a>>, u128), NodesetError> {
    let mut segs = Vec::new();
    let mut count: u128 = 1;
    let mut rest = pat;
    while let Some(open) = rest.find('[') {
        let close = rest[open..]
            .find(']')
            .map(|i| i + open)
            .ok_or_else(|| err(full, "`[` without `]`"))?;
        if open > 0 {
            segs.push(Seg::Lit(&rest[..open]));
        }
        let body = &rest[open + 1..close];
        if body.is_empty() {
            return Err(err(full, "empty range `[]`"));
        }
        let mut ranges = Vec::new();
        let mut size: u128 = 0;
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
            size += u128::from(b - a) + 1;
            ranges.push((a, b, width));
        }
        // Saturates far above MAX_NODES: u128 cannot overflow before the check below.
        count = count.saturating_mul(size);
        if count > MAX_NODES as u128 {
            return Err(too_many(full, count));
        }
        segs.push(Seg::Ranges(ranges));
        rest = &rest[close + 1..];
    }
    if rest.contains(']') {
        return Err(err(full, "`]` without `[`"));
    }
    if !rest.is_empty() {
        segs.push(Seg::Lit(rest));
    }
    Ok((segs, count))
}

/// Expand parsed segments: the first bracket group varies slowest (`r[1-2]n[1-2]` is r1n1,
/// r1n2, r2n1, r2n2, as ClusterShell and Slurm order them).
fn expand_segs(segs: &[Seg], count: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(count);
    out.push(String::new());
    for seg in segs {
        match seg {
            Seg::Lit(l) => out.iter_mut().for_each(|s| s.push_str(l)),
            Seg::Ranges(ranges) => {
                let mut next = Vec::with_capacity(count);
                for s in &out {
                    for &(a, b, width) in ranges {
                        for v in a..=b {
                            next.push(format!("{s}{v:0width$}"));
                        }
                    }
                }
                out = next;
            }
        }
    }
    out
}

/// Expand a node set to node names, in order, without duplicates. `@group` is looked up in
/// `groups` (whose values are node sets themselves); `!expr` after a comma removes nodes.
/// At most [`MAX_NODES`] names; linear in the number of names.
pub(crate) fn expand(
    expr: &str,
    groups: &BTreeMap<String, String>,
) -> Result<Vec<String>, NodesetError> {
    expand_depth(expr, groups, &mut Vec::new())
}

/// How deep groups may name groups (`@all` → `@racks` → `@rack1` …).
pub(crate) const MAX_GROUP_DEPTH: usize = 16;

/// The error of entering group `g` with `chain` the groups being expanded: a loop (a group
/// that is already being expanded), or nesting deeper than [`MAX_GROUP_DEPTH`].
fn chain_error(chain: &[String], g: &str) -> Option<String> {
    let shown = |upto: &[String]| {
        upto.iter()
            .map(|c| format!("@{c}"))
            .chain([format!("@{g}")])
            .collect::<Vec<_>>()
            .join(" -> ")
    };
    if let Some(i) = chain.iter().position(|c| c == g) {
        return Some(format!(
            "groups refer to each other in a loop: {}",
            shown(&chain[i..])
        ));
    }
    (chain.len() >= MAX_GROUP_DEPTH).then(|| {
        format!(
            "groups nest deeper than {MAX_GROUP_DEPTH} levels (MAX_GROUP_DEPTH): {}; name \
             the nodes of an inner group directly",
            shown(chain)
        )
    })
}

fn expand_depth(
    expr: &str,
    groups: &BTreeMap<String, String>,
    chain: &mut Vec<String>,
) -> Result<Vec<String>, NodesetError> {
    let mut out: Vec<String> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    // Names produced so far, before duplicates and exclusions: bounds the work of one
    // expression (`a[0-99999],b[0-99999],...` must not get around the cap part by part).
    let mut produced: u128 = 0;
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
            if let Some(reason) = chain_error(chain, g) {
                let top = chain.first().map(|c| format!("@{c}"));
                return Err(err(top.as_deref().unwrap_or(expr), reason));
            }
            chain.push(g.to_string());
            let names = expand_depth(def, groups, chain);
            chain.pop();
            let names = names?;
            produced += names.len() as u128;
            if produced > MAX_NODES as u128 {
                return Err(too_many(expr, produced));
            }
            names
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
            let (segs, count) = parse_pattern(expr, part)?;
            produced += count;
            if produced > MAX_NODES as u128 {
                return Err(too_many(expr, produced));
            }
            expand_segs(&segs, count as usize)
        };
        if exclude {
            let drop: HashSet<&String> = names.iter().collect();
            if out.iter().any(|n| drop.contains(n)) {
                out.retain(|n| !drop.contains(n));
                seen.retain(|n| !drop.contains(n));
            }
        } else {
            out.reserve(names.len());
            for n in names {
                if !seen.contains(&n) {
                    seen.insert(n.clone());
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
pub(crate) fn fold(names: &[String]) -> String {
    // (prefix, numbers with their zero-padding width)
    let mut groups: Vec<(String, Vec<(u64, usize)>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
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
        match index.get(prefix) {
            Some(&i) => groups[i].1.push((v, width)),
            None => {
                index.insert(prefix.to_string(), groups.len());
                groups.push((prefix.to_string(), vec![(v, width)]));
            }
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
    fn deep_nesting_names_the_depth_limit_and_a_loop_names_its_groups() {
        let mut m = BTreeMap::new();
        for i in 0..20 {
            m.insert(format!("g{i}"), format!("@g{}", i + 1));
        }
        m.insert("g20".into(), "n1".into());
        let e = expand("@g0", &m).unwrap_err();
        assert!(
            e.reason.contains("deeper than 16") && !e.reason.contains("loop"),
            "{e}"
        );
        assert_eq!(e.expr, "@g0");
        // 16 levels are fine.
        assert_eq!(expand("@g5", &m).unwrap(), ["n1"]);
        m.insert("a".into(), "@b".into());
        m.insert("b".into(), "x,@a".into());
        let e = expand("@a", &m).unwrap_err();
        assert!(e.reason.contains("loop: @a -> @b -> @a"), "{e}");
    }

    #[test]
    fn bad_sets_are_errors() {
        assert!(expand("spark-[03-01]", &g()).is_err());
        assert!(expand("spark-[01-", &g()).is_err());
        assert!(expand("a;rm", &g()).is_err());
        assert!(expand("", &g()).unwrap_err().reason.contains("no node"));
    }

    #[test]
    fn the_product_of_ranges_is_capped_before_anything_is_allocated() {
        // 10^10 names (240 GB) used to be allocated before anything said no.
        let e = expand("a[0-99999]b[0-99999]", &g()).unwrap_err();
        assert!(
            e.reason.contains("10000000000 nodes") && e.reason.contains("at most 1000000"),
            "{e}"
        );
        // Part by part, and through a group, the same cap.
        let many = (0..11)
            .map(|i| format!("{i}n[0-99999]"))
            .collect::<Vec<_>>()
            .join(",");
        assert!(expand(&many, &g()).unwrap_err().reason.contains("at most"));
        let mut big = g();
        big.insert("big".into(), "x[1-600000]".into());
        assert!(expand("@big,@big", &big)
            .unwrap_err()
            .reason
            .contains("at most"));
        assert!(expand("a[1-9]b[1-99999999999999999999]", &g()).is_err());
        // Exactly at the cap is fine.
        assert_eq!(expand("a[1-1000]b[1-1000]", &g()).unwrap().len(), MAX_NODES);
    }

    #[test]
    fn large_sets_keep_order_dedup_and_exclusion() {
        let names = expand("n[1-100000],n[50001-100010],!n[2-99999]", &g()).unwrap();
        assert_eq!(names.len(), 12);
        assert_eq!(names[0], "n1");
        assert_eq!(names[1], "n100000");
        assert_eq!(names[11], "n100010");
        // excluded names may come back later in the list
        assert_eq!(expand("a,b,!a,a", &g()).unwrap(), ["b", "a"]);
        // Slurm forms: several bracket groups, lists, plain names
        assert_eq!(
            expand("gpu-[01-03,07],login1", &g()).unwrap(),
            ["gpu-01", "gpu-02", "gpu-03", "gpu-07", "login1"]
        );
        assert_eq!(
            expand("a[1-2]-b[3-4]", &g()).unwrap(),
            ["a1-b3", "a1-b4", "a2-b3", "a2-b4"]
        );
    }

    #[test]
    fn fold_round_trips() {
        let names = expand("spark-[01-03,05],gpu[1-2],head", &g()).unwrap();
        assert_eq!(fold(&names), "spark-[01-03,05],gpu[1-2],head");
        let names = expand("lab[01-16],gpu[8-12]", &g()).unwrap();
        assert_eq!(fold(&names), "lab[01-16],gpu[8-12]");
    }
}
