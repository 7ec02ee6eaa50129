//! The `NCCL_*` settings a recipe gives NCCL, read from the recipe's text, and
//! `NCCL_SOCKET_IFNAME` read as NCCL reads it.
//!
//! A recipe sets NCCL's variables in one of the ways a workload's launch does: a shell or env
//! file (`export NCCL_IB_HCA=mlx5_0`, `NCCL_IB_HCA=mlx5_0`, also NCCL's own `nccl.conf` format
//! `VAR=value`), a launcher's flags (`-x NCCL_X=v`, `-e NCCL_X=v`, `--env NCCL_X=v`), or a YAML /
//! JSON mapping (`NCCL_X: v`, `"NCCL_X": "v"`). A value is the shell word after `=` (or `:`):
//! quoted (`"…"`, `'…'`) or up to whitespace or `#`. The last setting of a variable wins, as
//! in a shell. Lines starting with `#` are comments. Not read: variables set indirectly (`$VAR`
//! expansions are kept as written), Kubernetes `- name: NCCL_X` / `value:` pairs.
//!
//! `NCCL_SOCKET_IFNAME` (NCCL `src/misc/socket.cc` `ncclFindInterfaces`, with
//! `parseStringList` / `matchIfList` of `src/misc/utils.cc`, NVIDIA/nccl at
//! 5067397c2676d5aed50042fc39e5c8ee96eb0027): a leading `^` excludes the listed names, a
//! following `=` makes them exact, otherwise each is a prefix (`en` selects every `en…`
//! interface); comma-separated. The same list syntax as `NCCL_IB_HCA` ([`super::nccl_ib_hca`]),
//! matched with port -1 (any).

use super::nccl_ib_hca;
use serde::Serialize;

/// One `NCCL_*` setting of a recipe.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Setting {
    pub name: String,
    pub value: String,
    /// 1-based line of the recipe.
    pub line: i64,
}

/// A value as written after `=` / `:`: quoted, or up to whitespace, `#`, `,` before a next
/// key (`,` inside a value such as `mlx5_0,mlx5_1` is kept), `;`, `}` or a closing quote.
fn value_at(rest: &str) -> String {
    let r = rest.trim_start_matches([' ', '\t']);
    for q in ['"', '\''] {
        if let Some(inner) = r.strip_prefix(q) {
            return inner.split(q).next().unwrap_or("").to_string();
        }
    }
    let end = r
        .find(|c: char| c.is_whitespace() || matches!(c, '#' | ';' | '}' | '"' | '\''))
        .unwrap_or(r.len());
    r[..end].trim_end_matches(',').to_string()
}

/// Every `NCCL_*` setting of a recipe's text, in the order written (see the module doc).
pub(crate) fn settings(text: &str) -> Vec<Setting> {
    let re = regex::Regex::new(r#"(?:^|[\s"'\-\[{,(])(NCCL_[A-Z0-9_]+)["']?[ \t]*(=|:)"#)
        .expect("static regex");
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if t.starts_with('#') {
            continue;
        }
        for c in re.captures_iter(line) {
            let (name, sep) = (c.get(1).unwrap(), c.get(2).unwrap());
            let rest = &line[sep.end()..];
            // `NCCL_X: v` (YAML) needs a space or end after the colon; `::` is no setting.
            if sep.as_str() == ":" && !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
                continue;
            }
            out.push(Setting {
                name: name.as_str().to_string(),
                value: value_at(rest),
                line: i as i64 + 1,
            });
        }
    }
    out
}

/// The settings in effect: the last of each variable, in the order of first appearance.
pub(crate) fn effective(text: &str) -> Vec<Setting> {
    let mut out: Vec<Setting> = Vec::new();
    for s in settings(text) {
        match out.iter_mut().find(|o| o.name == s.name) {
            Some(o) => *o = s,
            None => out.push(s),
        }
    }
    out
}

/// Does NCCL pick interface `ifname` under `NCCL_SOCKET_IFNAME=value`, and why (in words)?
pub(crate) fn socket_ifname_uses(value: &str, ifname: &str) -> (bool, String) {
    let f = nccl_ib_hca::parse(value);
    let listed = f.entries.iter().find(|e| {
        if f.exact {
            ifname == e.hca
        } else {
            ifname.starts_with(&e.hca)
        }
    });
    let kind = if f.exact { "exact name" } else { "prefix" };
    let used = (f.entries.is_empty() || listed.is_some()) != f.exclude;
    let why = match (listed, f.exclude) {
        (Some(e), false) => {
            format!(
                "NCCL_SOCKET_IFNAME={value:?} selects {ifname} ({kind} `{}`)",
                e.hca
            )
        }
        (Some(e), true) => format!(
            "NCCL_SOCKET_IFNAME={value:?} excludes {ifname} (`^`; {kind} `{}`)",
            e.hca
        ),
        (None, _) if f.entries.is_empty() => {
            format!("NCCL_SOCKET_IFNAME={value:?} lists no name")
        }
        (None, true) => {
            format!("NCCL_SOCKET_IFNAME={value:?} excludes other interfaces only: {ifname} is used")
        }
        (None, false) => format!(
            "NCCL_SOCKET_IFNAME={value:?} does not select {ifname} ({kind}es, case-sensitive)"
        ),
    };
    (used, why)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(text: &str, name: &str) -> Option<(String, i64)> {
        effective(text)
            .into_iter()
            .find(|s| s.name == name)
            .map(|s| (s.value, s.line))
    }

    #[test]
    fn export_lines_plain_lines_and_quotes_are_read_as_the_shell_reads_them() {
        let t = "#!/bin/sh\n# NCCL_IB_DISABLE=1 is commented out\nexport NCCL_IB_HCA==rocep1s0f1,roceP2p1s0f1\nNCCL_SOCKET_IFNAME=\"enp1s0f1np1\"  # rail 0\nexport NCCL_IB_GID_INDEX='3'\nexport MASTER_ADDR=192.168.100.10\n";
        assert_eq!(
            get(t, "NCCL_IB_HCA"),
            Some(("=rocep1s0f1,roceP2p1s0f1".into(), 3))
        );
        assert_eq!(
            get(t, "NCCL_SOCKET_IFNAME"),
            Some(("enp1s0f1np1".into(), 4))
        );
        assert_eq!(get(t, "NCCL_IB_GID_INDEX"), Some(("3".into(), 5)));
        assert_eq!(get(t, "NCCL_IB_DISABLE"), None);
        assert_eq!(effective(t).len(), 3);
    }

    #[test]
    fn the_last_setting_wins_and_keeps_its_line() {
        let t = "export NCCL_IB_DISABLE=0\nexport NCCL_IB_DISABLE=1\n";
        assert_eq!(get(t, "NCCL_IB_DISABLE"), Some(("1".into(), 2)));
    }

    #[test]
    fn launcher_flags_yaml_and_json_mappings_are_read() {
        let t = "mpirun -np 2 -x NCCL_IB_HCA=mlx5_0 -x NCCL_DEBUG=INFO ./a.out\nenv:\n  NCCL_SOCKET_IFNAME: eth1\n{\"NCCL_IB_GID_INDEX\": \"5\", \"NCCL_NET_GDR_LEVEL\": 2}\ndocker run -e NCCL_IB_DISABLE=1 img";
        assert_eq!(get(t, "NCCL_IB_HCA"), Some(("mlx5_0".into(), 1)));
        assert_eq!(get(t, "NCCL_DEBUG"), Some(("INFO".into(), 1)));
        assert_eq!(get(t, "NCCL_SOCKET_IFNAME"), Some(("eth1".into(), 3)));
        assert_eq!(get(t, "NCCL_IB_GID_INDEX"), Some(("5".into(), 4)));
        assert_eq!(get(t, "NCCL_NET_GDR_LEVEL"), Some(("2".into(), 4)));
        assert_eq!(get(t, "NCCL_IB_DISABLE"), Some(("1".into(), 5)));
    }

    #[test]
    fn words_that_only_contain_nccl_are_not_settings() {
        let t = "echo MY_NCCL_IB_HCA=x\nSOMENCCL_IB_DISABLE=1\nurl: http://NCCL_X::y\n";
        assert!(effective(t).is_empty(), "{:?}", effective(t));
    }

    #[test]
    fn socket_ifname_prefix_exact_and_exclude_as_nccl() {
        assert!(socket_ifname_uses("en", "enP7s7").0);
        assert!(socket_ifname_uses("en", "enp1s0f1np1").0);
        assert!(!socket_ifname_uses("=enp1s0f1np1", "enp1s0f1np10").0);
        assert!(socket_ifname_uses("enp1s0f1np1", "enp1s0f1np10").0);
        assert!(!socket_ifname_uses("^wl,lo", "wlP9s9").0);
        assert!(socket_ifname_uses("^wl,lo", "enP7s7").0);
        assert!(!socket_ifname_uses("ENP", "enp1s0f1np1").0);
        let (used, why) = socket_ifname_uses("wlP9s9", "enp1s0f1np1");
        assert!(
            !used && why.contains("does not select enp1s0f1np1"),
            "{why}"
        );
    }
}
