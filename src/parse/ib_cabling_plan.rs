//! A site's InfiniBand cabling plan (docs/infiniband.md, "The cabling plan"): one cable per
//! line, `END <-> END`, where an END is `SWITCH:PORT` (a switch by its GUID, `0x…`, or its node
//! description as iblinkinfo prints it, and a port number) or `HOST:HCA` (a host's HCA, as its
//! node description `HOST HCA` says, port 1). `#` starts a comment; blank lines are skipped.
//! The last `:` of an end separates the port (switch node descriptions may hold `:`, as
//! `MF0;SB7700:MSB7700/U1`): a number is a switch port, anything else an HCA.
//!
//! Not a tool's output: a file the site writes, so a line that does not fit is an error naming
//! the file, line and column.
//!
//! Or a saved `ibnetdiscover` output (`ibnetdiscover > fabric.topo` on the day the fabric was
//! accepted), recognised by its `Switch N "S-GUID"` / `Ca N "H-GUID"` node lines: each link of
//! it is a planned cable, a switch end by its GUID and port, an HCA end by its CA's node
//! description (`HOST HCA`) and port; a cable listed from both of its ends (a switch's section
//! and a CA's) is one cable, on the line it was first listed. Such a plan is the whole fabric
//! ([`Plan::whole_fabric`]): a cable it does not list is a new one.

use super::util::regex;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// One end of a planned cable.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub(crate) enum End {
    /// A switch (GUID `0x…` or node description) and its port.
    Switch { switch: String, port: u32 },
    /// A host's HCA (node description `HOST HCA`; `hca` empty when the description has no
    /// space) and its port (1 in the site's format).
    Host {
        host: String,
        hca: String,
        port: u32,
    },
}

impl End {
    /// As a site writes it: `SWITCH:PORT` or `HOST:HCA` (`HOST:HCA port N` past port 1).
    pub(crate) fn shown(&self) -> String {
        match self {
            End::Switch { switch, port } => format!("{switch}:{port}"),
            End::Host { host, hca, port } if *port == 1 => format!("{host}:{hca}"),
            End::Host { host, hca, port } => format!("{host}:{hca} port {port}"),
        }
    }
}

/// A plan: its cables, and whether it is the whole fabric (a saved ibnetdiscover: a cable it
/// does not list is new) or the site's list (cables it does not list are not judged).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Plan {
    pub cables: Vec<Cable>,
    pub whole_fabric: bool,
    /// `the site's plan` or `a saved ibnetdiscover`, for the log.
    pub format: &'static str,
    /// Switch ends of cables left out of the comparison (an HCA end whose node description
    /// names several HCAs): a live cable there is not new.
    pub unjudged: Vec<End>,
    /// Why cables were left out, for the log.
    pub notes: Vec<String>,
}

/// One planned cable and the line it was written on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Cable {
    pub a: End,
    pub b: End,
    pub line: usize,
}

/// A plan that cannot be read: `SOURCE:LINE:COL: what; what to do`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct PlanError(pub String);

fn end(text: &str) -> Result<End, PlanError> {
    let t = text.trim();
    let Some((name, port)) = t.rsplit_once(':') else {
        return Err(PlanError(format!(
            "`{t}` is not SWITCH:PORT or HOST:HCA (no `:`)"
        )));
    };
    let (name, port) = (name.trim(), port.trim());
    if name.is_empty() || port.is_empty() {
        return Err(PlanError(format!("`{t}`: a switch (GUID or node description) or host before `:`, a port number or HCA after it")));
    }
    Ok(match port.parse::<u32>() {
        Ok(p) => End::Switch {
            switch: name.to_string(),
            port: p,
        },
        Err(_) => End::Host {
            host: name.to_string(),
            hca: port.to_string(),
            port: 1,
        },
    })
}

/// The plan's cables; `source` names the file in errors (`SOURCE:LINE:COL: what; what to do`).
pub(crate) fn parse(text: &str, source: &str) -> Result<Vec<Cable>, PlanError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("");
        if line.trim().is_empty() {
            continue;
        }
        let col = raw.len() - raw.trim_start().len() + 1;
        let Some((a, b)) = line.split_once("<->") else {
            return Err(PlanError(format!(
                "{source}:{}:{col}: expected `SWITCH:PORT <-> SWITCH:PORT|HOST:HCA`, got `{}` (one cable per line, ends joined by `<->`; or give a saved `ibnetdiscover > FILE`, whose `Switch N \"S-GUID\"` sections are recognised)",
                i + 1,
                line.trim()
            )));
        };
        let at = |e: PlanError, c: usize| PlanError(format!("{source}:{}:{c}: {}", i + 1, e.0));
        let a = end(a).map_err(|e| at(e, col))?;
        let b_col = line.find("<->").unwrap_or(0) + 3 + (b.len() - b.trim_start().len()) + 1;
        let b = end(b).map_err(|e| at(e, b_col))?;
        if matches!((&a, &b), (End::Host { .. }, End::Host { .. })) {
            return Err(at(
                PlanError("a cable between two hosts: one end must be a switch port".into()),
                col,
            ));
        }
        out.push(Cable { a, b, line: i + 1 });
    }
    if out.is_empty() {
        return Err(PlanError(format!(
            "{source}: no cable in the plan (lines `SWITCH:PORT <-> SWITCH:PORT|HOST:HCA`)"
        )));
    }
    Ok(out)
}

/// The plan in `text`, either format: a saved ibnetdiscover (a `Switch N "S-GUID"` or
/// `Ca N "H-GUID"` node line anywhere) or the site's `END <-> END` lines. `source` names the
/// file in errors.
pub(crate) fn read(text: &str, source: &str) -> Result<Plan, PlanError> {
    let node_line = regex!(r#"^(Switch|Ca|Rt)\s+\d+\s+"[SHR]-[0-9a-fA-F]+""#);
    if text.lines().any(|l| node_line.is_match(l.trim())) {
        return from_ibnetdiscover(text, source);
    }
    Ok(Plan {
        cables: parse(text, source)?,
        whole_fabric: false,
        format: "the site's plan",
        unjudged: Vec::new(),
        notes: Vec::new(),
    })
}

/// An HCA end from its CA's node description (`HOST HCA`: split at the first space).
fn host_end(desc: &str, port: u32) -> End {
    let (host, hca) = desc.split_once(' ').unwrap_or((desc, ""));
    End::Host {
        host: host.to_string(),
        hca: hca.trim().to_string(),
        port,
    }
}

fn switch_end(guid: &str, port: u32) -> End {
    End::Switch {
        switch: format!("0x{}", guid.trim_start_matches("0x").to_lowercase()),
        port,
    }
}

/// A saved ibnetdiscover's links, read or named as `FILE:LINE:COL` with what to do.
fn ibnetdiscover_links(
    text: &str,
    source: &str,
) -> Result<Vec<(usize, super::ibnetdiscover::TopoLink)>, PlanError> {
    super::ibnetdiscover::parse_numbered(text).map_err(|e| {
        let raw = text.lines().nth(e.line.saturating_sub(1)).unwrap_or("");
        let col = raw.len() - raw.trim_start().len() + 1;
        PlanError(format!(
            "{source}:{}:{col}: read as a saved ibnetdiscover (it has `Switch`/`Ca` node lines), but this line does not fit: {} (got `{}`); give the output of `ibnetdiscover` unedited, or the site's `SWITCH:PORT <-> SWITCH:PORT|HOST:HCA` lines",
            e.line,
            e.reason,
            e.text.trim()
        ))
    })
}

/// The cables of a saved ibnetdiscover: one per link, listed from either end once; links of
/// routers are left out (no router end in a plan). An HCA whose node description another HCA
/// (another node GUID) shares cannot be found by it: its cables are left out, said in the notes,
/// and their switch ends are not judged.
fn from_ibnetdiscover(text: &str, source: &str) -> Result<Plan, PlanError> {
    let links: Vec<_> = ibnetdiscover_links(text, source)?
        .into_iter()
        .filter(|(_, l)| l.node_type != "Rt" && l.peer_type != "R")
        .collect();
    // node description -> (node GUIDs, first line)
    let mut descs: BTreeMap<&str, (BTreeSet<String>, usize)> = BTreeMap::new();
    for (line, l) in &links {
        for (is_ca, desc, guid) in [
            (
                l.node_type == "Ca",
                l.node_desc.as_str(),
                l.node_guid.as_str(),
            ),
            (
                l.peer_type == "H",
                l.peer_desc.as_str(),
                l.peer_guid.as_str(),
            ),
        ] {
            if is_ca {
                let e = descs
                    .entry(desc)
                    .or_insert_with(|| (BTreeSet::new(), *line));
                e.0.insert(guid.to_lowercase());
            }
        }
    }
    let shared = |d: &str| descs.get(d).is_some_and(|(g, _)| g.len() > 1);
    let mut seen = BTreeSet::new();
    let mut plan = Plan {
        cables: Vec::new(),
        whole_fabric: true,
        format: "a saved ibnetdiscover",
        unjudged: Vec::new(),
        notes: Vec::new(),
    };
    let mut left: BTreeMap<&str, usize> = BTreeMap::new();
    for (line, l) in &links {
        let a = if l.node_type == "Ca" {
            host_end(&l.node_desc, l.port)
        } else {
            switch_end(&l.node_guid, l.port)
        };
        let b = if l.peer_type == "H" {
            host_end(&l.peer_desc, l.peer_port)
        } else {
            switch_end(&l.peer_guid, l.peer_port)
        };
        let key = if a <= b {
            (a.clone(), b.clone())
        } else {
            (b.clone(), a.clone())
        };
        if !seen.insert(key) {
            continue;
        }
        let ambiguous = [
            (l.node_type == "Ca", l.node_desc.as_str()),
            (l.peer_type == "H", l.peer_desc.as_str()),
        ]
        .into_iter()
        .find(|(ca, d)| *ca && shared(d));
        if let Some((_, d)) = ambiguous {
            *left.entry(d).or_default() += 1;
            plan.unjudged.extend(
                [a, b]
                    .into_iter()
                    .filter(|e| matches!(e, End::Switch { .. })),
            );
            continue;
        }
        plan.cables.push(Cable { a, b, line: *line });
    }
    for (d, n) in left {
        let (guids, first) = &descs[d];
        plan.notes.push(format!(
            "{n} cable(s) of the plan {source} not compared: the node description \"{d}\" names {} HCAs (node GUIDs {}; first on line {first}), and HCA ends are found by node description: set each HCA's to `HOST HCA` (rdma-ndd's default) and save ibnetdiscover again",
            guids.len(),
            guids.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    if plan.cables.is_empty() {
        return Err(PlanError(format!(
            "{source}: a saved ibnetdiscover with no link to compare (every node's ports unconnected, or every HCA's node description shared): save it again from a node of the fabric (`ibnetdiscover > FILE`) after setting each HCA's node description to `HOST HCA`"
        )));
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_are_switch_ports_or_host_hcas() {
        let p = parse(
            "# rack 1\n0xfc6a1c0300e40100:33 <-> spine-1:4\nMF0;SB7700:MSB7700/U1:17 <-> n02:mlx5_0  # node\n",
            "plan.txt",
        )
        .unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(
            p[0].b,
            End::Switch {
                switch: "spine-1".into(),
                port: 4
            }
        );
        // the last `:` splits: a switch description holding `:` keeps it
        assert_eq!(
            p[1].a,
            End::Switch {
                switch: "MF0;SB7700:MSB7700/U1".into(),
                port: 17
            }
        );
        assert_eq!(
            p[1].b,
            End::Host {
                host: "n02".into(),
                hca: "mlx5_0".into(),
                port: 1
            }
        );
        assert_eq!(p[1].line, 3);
    }

    #[test]
    fn bad_lines_name_file_line_and_column() {
        let e = parse(
            "leaf-1:1 <-> h1:mlx5_0\n  leaf-1:2 -> h2:mlx5_0\n",
            "plan.txt",
        )
        .unwrap_err();
        assert!(
            e.0.starts_with("plan.txt:2:3: expected `SWITCH:PORT <->"),
            "{e}"
        );
        let e = parse("leaf-1:1 <-> h1\n", "plan.txt").unwrap_err();
        assert!(
            e.0.starts_with("plan.txt:1:14: `h1` is not SWITCH:PORT"),
            "{e}"
        );
        let e = parse("h1:mlx5_0 <-> h2:mlx5_0\n", "p").unwrap_err();
        assert!(e.0.contains("between two hosts"), "{e}");
        assert!(parse("# nothing\n", "p")
            .unwrap_err()
            .0
            .contains("no cable"));
    }

    /// The real capture tests/fixtures/ibdiags/ibnetdiscover-edr-switchib-two-switch-sections-uplink-4xddr.txt
    const EDR: &str = include_str!(
        "../../tests/fixtures/ibdiags/ibnetdiscover-edr-switchib-two-switch-sections-uplink-4xddr.txt"
    );

    #[test]
    fn a_saved_ibnetdiscover_is_recognised_and_its_links_are_the_planned_cables() {
        let p = read(EDR, "fabric.topo").unwrap();
        assert!(p.whole_fabric);
        assert_eq!(p.format, "a saved ibnetdiscover");
        // 36 links of the leaf (24 HCAs, 12 uplinks) and 12 of the second switch
        assert_eq!(p.cables.len(), 48);
        assert_eq!(
            p.cables[0],
            Cable {
                a: End::Switch {
                    switch: "0xec0d9a0300ec8240".into(),
                    port: 1
                },
                b: End::Host {
                    host: "node018".into(),
                    hca: "HCA-1".into(),
                    port: 1
                },
                line: 10
            }
        );
        assert_eq!(
            (&p.cables[12].b, p.cables[12].line),
            (
                &End::Switch {
                    switch: "0xec0d9a0300ec81e0".into(),
                    port: 19
                },
                22
            )
        );
        let hosts = p
            .cables
            .iter()
            .filter(|c| matches!(c.b, End::Host { .. }))
            .count();
        assert_eq!(hosts, 24);
        // the site's format is still its own
        assert!(!read("leaf-1:1 <-> h1:mlx5_0\n", "p").unwrap().whole_fabric);
    }

    #[test]
    fn a_cable_listed_from_both_ends_is_one_and_a_shared_description_is_refused() {
        // node018's own CA section lists its cable to the leaf's port 1 again
        let ca = "caguid=0x506b4b03003fa9b6\nCa\t1 \"H-506b4b03003fa9b6\"\t\t# \"node018 HCA-1\"\n[1](506b4b03003fa9b6) \t\"S-ec0d9a0300ec8240\"[1]\t\t# lid 67 lmc 0 \"SwitchIB Mellanox Technologies\" lid 48 4xEDR\n";
        let p = read(&format!("{EDR}{ca}"), "fabric.topo").unwrap();
        assert_eq!(p.cables.len(), 48);
        // another HCA (another node GUID) on port 37 with node018's description: which is
        // which? Both cables left out, said, their switch ends not judged
        let twin = ca
            .replace("506b4b03003fa9b6", "506b4b03003fa9b7")
            .replace("[1]\t\t#", "[37]\t\t#");
        let p = read(&format!("{EDR}{twin}"), "fabric.topo").unwrap();
        assert_eq!(p.cables.len(), 47);
        assert_eq!(p.unjudged.len(), 2, "{:?}", p.unjudged);
        assert!(p.notes[0].starts_with("2 cable(s) of the plan fabric.topo not compared: the node description \"node018 HCA-1\" names 2 HCAs (node GUIDs 506b4b03003fa9b6, 506b4b03003fa9b7; first on line 10)"), "{:?}", p.notes);
    }

    #[test]
    fn a_plan_of_neither_format_or_a_broken_ibnetdiscover_names_the_line() {
        // neither: the site's format's error, which names the other format too
        let e = read("# saved\nleaf-1 port 1 to h1\n", "plan.txt").unwrap_err();
        assert!(e.0.starts_with("plan.txt:2:1: expected `SWITCH:PORT <-> SWITCH:PORT|HOST:HCA`, got `leaf-1 port 1 to h1`"), "{e}");
        assert!(e.0.contains("saved `ibnetdiscover > FILE`"), "{e}");
        // an ibnetdiscover cut or edited by hand: its line, column and what to do
        let cut = EDR.replace(
            "[13]\t\"S-ec0d9a0300ec81e0\"[19]",
            "  [13]\t\"S-ec0d9a0300ec81e0\"",
        );
        let e = read(&cut, "fabric.topo").unwrap_err();
        assert!(
            e.0.starts_with("fabric.topo:22:3: read as a saved ibnetdiscover"),
            "{e}"
        );
        assert!(
            e.0.contains("give the output of `ibnetdiscover` unedited"),
            "{e}"
        );
    }
}
