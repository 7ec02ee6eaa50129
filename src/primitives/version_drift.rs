//! The comparisons across nodes that the health checks share: `majority(values)` and
//! `version_drift(rows, fail_items)`. Pure: no node is asked.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The value that more than half of `values` have, if one has (`None` when no value has a
/// strict majority: two nodes that differ, or three-way splits).
pub(crate) fn majority(values: &[String]) -> Option<String> {
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for v in values {
        *count.entry(v.as_str()).or_default() += 1;
    }
    count
        .into_iter()
        .find(|(_, c)| 2 * c > values.len())
        .map(|(v, _)| v.to_string())
}

/// One item of the version table of a node (`firmware` of `rocep1s0f1`, `kernel`, ...).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Version {
    pub node: String,
    pub item: String,
    pub value: String,
}

/// The verdict of [`version_drift`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Drift {
    /// Items whose differences fail, each naming the item, the odd nodes and their values.
    pub failures: Vec<String>,
    /// Items whose differences warn.
    pub warnings: Vec<String>,
    /// item -> (node -> value), for the report.
    pub table: BTreeMap<String, BTreeMap<String, String>>,
    /// The nodes named in failures (not a script field: the run's diagnosis is told).
    #[serde(skip)]
    pub odd_nodes: Vec<String>,
}

/// Compare each item across nodes: a difference is a failure when the item is in `fail_items`,
/// else a warning. The message names the expected value (the majority, else "no majority")
/// and each node that differs with its value.
pub(crate) fn version_drift(rows: &[Version], fail_items: &[String]) -> Drift {
    let mut out = Drift::default();
    for r in rows {
        out.table
            .entry(r.item.clone())
            .or_default()
            .insert(r.node.clone(), r.value.clone());
    }
    for (item, by_node) in &out.table {
        let values: Vec<String> = by_node.values().cloned().collect();
        if values.iter().all(|v| *v == values[0]) {
            continue;
        }
        let maj = majority(&values);
        let odd: Vec<String> = by_node
            .iter()
            .filter(|(_, v)| maj.as_ref() != Some(*v))
            .map(|(n, v)| format!("{n} has {v}"))
            .collect();
        let msg = match &maj {
            Some(m) => format!("{item} differs: most nodes have {m}; {}", odd.join(", ")),
            None => format!("{item} differs (no majority): {}", odd.join(", ")),
        };
        if fail_items
            .iter()
            .any(|f| item == f || item.starts_with(&format!("{f} ")))
        {
            out.failures.push(msg);
            for (n, v) in by_node {
                if maj.as_ref() != Some(v) && !out.odd_nodes.contains(n) {
                    out.odd_nodes.push(n.clone());
                }
            }
        } else {
            out.warnings.push(msg);
        }
    }
    out
}

crate::impl_shape!(Drift, parsed("version_drift result"));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn majority_needs_more_than_half() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(majority(&v(&["a", "a", "b"])), Some("a".into()));
        assert_eq!(majority(&v(&["a", "b"])), None);
        assert_eq!(majority(&v(&["a", "b", "c", "a"])), None);
        assert_eq!(majority(&v(&["x"])), Some("x".into()));
    }

    #[test]
    fn drift_fails_for_listed_items_and_warns_for_the_others() {
        let row = |n: &str, i: &str, v: &str| Version {
            node: n.into(),
            item: i.into(),
            value: v.into(),
        };
        let rows = vec![
            row("s1", "firmware rocep1s0f1", "28.45.4028"),
            row("s2", "firmware rocep1s0f1", "28.45.4028"),
            row("s3", "firmware rocep1s0f1", "28.43.1014"),
            row("s1", "kernel", "6.11.0-1016-nvidia"),
            row("s2", "kernel", "6.11.0-1015-nvidia"),
            row("s1", "driver", "mlx5_core 25.07"),
            row("s2", "driver", "mlx5_core 25.07"),
        ];
        let d = version_drift(&rows, &["firmware".to_string(), "driver".to_string()]);
        assert_eq!(d.failures.len(), 1, "{d:?}");
        assert!(
            d.failures[0].contains("most nodes have 28.45.4028; s3 has 28.43.1014"),
            "{:?}",
            d.failures
        );
        assert_eq!(d.warnings.len(), 1);
        assert!(
            d.warnings[0].contains("kernel differs (no majority)"),
            "{:?}",
            d.warnings
        );
        assert_eq!(d.table["kernel"]["s2"], "6.11.0-1015-nvidia");
    }
}
