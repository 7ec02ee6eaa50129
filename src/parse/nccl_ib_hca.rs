//! `NCCL_IB_HCA` read the way NCCL reads it, so a check can say which RDMA devices and ports a
//! workload's NCCL will use.
//!
//! Source: NCCL `src/transport/net_ib/init.cc` (the `^` then `=` prefixes, then
//! `parseStringList` and `matchIfList(name, port, …) ^ searchNot` per active port) and
//! `src/misc/utils.cc` (`parseStringList`, `matchIf`, `matchPort`), NVIDIA/nccl at
//! 5067397c2676d5aed50042fc39e5c8ee96eb0027; documented in `docs/userguide/source/env.rst`:
//! - a leading `^` makes the list an exclude list; a following `=` makes the names exact
//!   (otherwise each name is a prefix: `mlx5_1` also selects `mlx5_10`…`mlx5_19`);
//! - entries are comma-separated (empty entries ignored), each `hca[:port[:rail[:plane]]]`; an
//!   empty or absent port means every port; an entry with an empty name is ignored;
//! - no entry at all (unset or empty) selects every device, and `^` with no entry excludes all;
//! - names are compared case-sensitively (`rocep` does not select `roceP2p1s0f1`).

use serde::Serialize;

/// NCCL's fixed upper limit of entries (MAX_IB_DEVS).
const MAX_ENTRIES: usize = 32;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct HcaEntry {
    /// Device name, or its prefix when the list is not exact.
    pub hca: String,
    /// `None`: every port of the device.
    pub port: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct HcaFilter {
    /// The value as given.
    pub raw: String,
    /// `^`: the listed devices are NOT used.
    pub exclude: bool,
    /// `=`: names are exact, otherwise prefixes.
    pub exact: bool,
    pub entries: Vec<HcaEntry>,
}

/// C's atoi on the start of a field: optional sign, leading digits, 0 when none.
fn atoi(s: &str) -> i64 {
    let t = s.trim_start();
    let (neg, rest) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let v = digits.parse::<i64>().unwrap_or(0);
    if neg {
        -v
    } else {
        v
    }
}

/// Parse an `NCCL_IB_HCA` value.
pub(crate) fn parse(value: &str) -> HcaFilter {
    let mut rest = value;
    let exclude = rest.starts_with('^');
    if exclude {
        rest = &rest[1..];
    }
    let exact = rest.starts_with('=');
    if exact {
        rest = &rest[1..];
    }
    let entries = rest
        .split(',')
        .filter_map(|entry| {
            let mut fields = entry.split(':');
            let hca = fields.next().unwrap_or("");
            if hca.is_empty() {
                return None;
            }
            let port = fields.next().filter(|p| !p.is_empty()).map(atoi);
            Some(HcaEntry {
                hca: hca.to_string(),
                port,
            })
        })
        .take(MAX_ENTRIES)
        .collect();
    HcaFilter {
        raw: value.to_string(),
        exclude,
        exact,
        entries,
    }
}

impl HcaFilter {
    /// The entry that names `device` port `port` (matchIfList), if any.
    pub(crate) fn matching_entry(&self, device: &str, port: i64) -> Option<&HcaEntry> {
        self.entries.iter().find(|e| {
            let name = if self.exact {
                device == e.hca
            } else {
                device.starts_with(&e.hca)
            };
            name && e.port.is_none_or(|p| p == port)
        })
    }

    /// Does NCCL use `device` port `port` under this value?
    pub(crate) fn selects(&self, device: &str, port: i64) -> bool {
        let listed = self.entries.is_empty() || self.matching_entry(device, port).is_some();
        listed != self.exclude
    }

    /// Why `device` port `port` is or is not used, in words (for a check's message).
    pub(crate) fn explain(&self, device: &str, port: i64) -> String {
        let raw = &self.raw;
        let kind = if self.exact { "exact name" } else { "prefix" };
        match (self.matching_entry(device, port), self.exclude) {
            (Some(e), false) => format!("NCCL_IB_HCA={raw:?} selects {device} port {port} ({kind} `{}`)", e.hca),
            (Some(e), true) => format!("NCCL_IB_HCA={raw:?} EXCLUDES {device} port {port} (`^` makes it an exclude list; {kind} `{}`)", e.hca),
            (None, _) if self.entries.is_empty() && !self.exclude => {
                format!("NCCL_IB_HCA={raw:?} lists nothing: NCCL uses every device, {device} included")
            }
            (None, true) if self.entries.is_empty() => {
                format!("NCCL_IB_HCA={raw:?} excludes every device ({device} included)")
            }
            (None, true) => format!("NCCL_IB_HCA={raw:?} excludes other devices only: {device} port {port} is used"),
            (None, false) => {
                let hint = if self.exact { "" } else { "; names are prefixes and case-sensitive" };
                format!("NCCL_IB_HCA={raw:?} does not select {device} port {port}: no entry names it ({kind}es{hint})")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(hca: &str, port: Option<i64>) -> HcaEntry {
        HcaEntry {
            hca: hca.into(),
            port,
        }
    }

    /// The examples of NCCL's env.rst, read as NCCL reads them.
    #[test]
    fn nccl_documented_examples() {
        let f = parse("mlx5");
        assert!(!f.exclude && !f.exact);
        assert_eq!(f.entries, vec![e("mlx5", None)]);
        assert!(f.selects("mlx5_0", 1) && f.selects("mlx5_3", 2));
        assert!(!f.selects("rocep1s0f0", 1));

        let f = parse("=mlx5_0:1,mlx5_1:1");
        assert!(f.exact && !f.exclude);
        assert_eq!(f.entries, vec![e("mlx5_0", Some(1)), e("mlx5_1", Some(1))]);
        assert!(f.selects("mlx5_0", 1) && f.selects("mlx5_1", 1));
        assert!(!f.selects("mlx5_0", 2), "port 2 is not listed");
        assert!(!f.selects("mlx5_10", 1), "exact: mlx5_1 is not a prefix");

        let f = parse("^=mlx5_1,mlx5_4");
        assert!(f.exclude && f.exact);
        assert!(!f.selects("mlx5_1", 1) && !f.selects("mlx5_4", 1));
        assert!(f.selects("mlx5_0", 1) && f.selects("mlx5_10", 1));

        let f = parse("=mlx5_0:1:0:0,mlx5_1:1:0:1");
        assert_eq!(f.entries, vec![e("mlx5_0", Some(1)), e("mlx5_1", Some(1))]);

        let f = parse("=mlx5_0::0:0,mlx5_1::0:1");
        assert_eq!(f.entries, vec![e("mlx5_0", None), e("mlx5_1", None)]);
        assert!(f.selects("mlx5_0", 2), "empty port field: every port");

        // "using mlx5_1 without a preceding = will select mlx5_1 as well as mlx5_10 to mlx5_19"
        let f = parse("mlx5_1");
        assert!(f.selects("mlx5_1", 1) && f.selects("mlx5_12", 1));
        assert!(!f.selects("mlx5_2", 1));
    }

    /// The wrong green of issue 20: a substring test let `^rocep1s0f0` "name" rocep1s0f0.
    #[test]
    fn caret_excludes_and_case_matters_on_spark_names() {
        let f = parse("^rocep1s0f0");
        assert!(!f.selects("rocep1s0f0", 1));
        assert!(f.selects("rocep1s0f1", 1) && f.selects("roceP2p1s0f0", 1));
        assert!(f.explain("rocep1s0f0", 1).contains("EXCLUDES"));
        let f = parse("rocep1s0f");
        assert!(f.selects("rocep1s0f0", 1) && f.selects("rocep1s0f1", 1));
        assert!(!f.selects("roceP2p1s0f1", 1), "prefixes are case-sensitive");
        assert!(f.explain("roceP2p1s0f1", 1).contains("does not select"));
        let f = parse("rocep1s0f1,roceP2p1s0f1");
        assert!(f.selects("rocep1s0f1", 1) && f.selects("roceP2p1s0f1", 1));
        assert!(!f.selects("rocep1s0f0", 1));
    }

    #[test]
    fn empty_lists_and_odd_entries() {
        assert!(
            parse("").selects("anything", 1),
            "unset/empty: every device"
        );
        assert!(
            !parse("^").selects("anything", 1),
            "^ with no entry excludes all"
        );
        let f = parse(",mlx5_0,,:1,mlx5_2:");
        assert_eq!(f.entries, vec![e("mlx5_0", None), e("mlx5_2", None)]);
        assert_eq!(
            parse("mlx5_0:x").entries,
            vec![e("mlx5_0", Some(0))],
            "atoi"
        );
        let many = (0..40)
            .map(|i| format!("d{i}"))
            .collect::<Vec<_>>()
            .join(",");
        assert_eq!(parse(&many).entries.len(), MAX_ENTRIES);
        // `=` before `^` is not an exclude list: the name starts with '^'
        let f = parse("=^mlx5_0");
        assert!(f.exact && !f.exclude && f.entries[0].hca == "^mlx5_0");
    }
}
