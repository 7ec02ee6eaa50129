//! `nvidia-smi topo -m` (and `-mp`): the GPU/NIC connection matrix, the legend and the NIC
//! legend (`NIC0: mlx5_0`).
//!
//! Handles: tab- or space-separated matrices, the header wrapped in ANSI underline codes,
//! `" X "` self cells, `CPU Affinity` / `NUMA Affinity` / `GPU NUMA ID` columns (present or
//! not, `N/A`, an empty field before `N/A`), NIC rows without affinity columns or with trailing
//! empty fields, two-digit NIC names, `-mp` matrices (no NV#), single-GPU nodes, and older
//! outputs naming the NIC columns by device (`mlx5_0`) instead of `NICn`.
//!
//! For each GPU, `nearest` is its closest NIC relation (PIX < PXB < PHB < NODE < SYS) and
//! `nearest_nics` the NICs at that distance, by device name when the NIC legend names them.
//!
//! Recognised evidence: a header row with a `GPU0` column and at least one `GPU0` row.
//!
//! Output linear in the input (issue 50: 200 KB of repeated rows took GBs, every GPU row
//! naming every NIC row): a row whose name was seen already is skipped (the first counts),
//! device columns are named in at most [`MAX_NAME`] characters (real ones: `GPU7`, `NIC17`,
//! `mlx5_bond_0`), and a legend's device name longer than that is not taken.

use super::util::{numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

const KIND: &str = "nvidia-smi-topo";

/// The longest device column or NIC legend name taken (each is copied into every row).
pub const MAX_NAME: usize = 32;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Topo {
    /// Matrix columns as printed (`GPU0`..., `NIC0`...).
    pub columns: Vec<String>,
    pub gpus: Vec<Gpu>,
    pub nics: Vec<Nic>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Gpu {
    /// `GPU0`.
    pub name: String,
    pub index: u32,
    /// Column → relation (`X`, `NV18`, `PIX`, `NODE`, `SYS`...).
    pub links: BTreeMap<String, String>,
    pub cpu_affinity: Option<String>,
    pub numa_affinity: Option<String>,
    pub gpu_numa_id: Option<String>,
    /// Closest relation to any NIC (`PIX`), `None` without NICs.
    pub nearest: Option<String>,
    /// The NICs at that relation, by device name (`mlx5_0`) where the legend names them.
    pub nearest_nics: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Nic {
    /// `NIC0` (or the device name on older outputs).
    pub name: String,
    /// From the NIC legend, e.g. `mlx5_0`.
    pub device: Option<String>,
    pub links: BTreeMap<String, String>,
}

/// PCIe distance rank of a relation; smaller is closer. NV# and X are not NIC paths.
pub fn rank(rel: &str) -> Option<u32> {
    match rel {
        "PIX" => Some(1),
        "PXB" => Some(2),
        "PHB" => Some(3),
        "NODE" => Some(4),
        "SYS" | "SOC" => Some(5),
        _ => None,
    }
}

fn is_device(col: &str) -> bool {
    !col.contains("Affinity") && col != "GPU NUMA ID"
}

fn header(t: &str) -> Vec<String> {
    let sep = if t.contains('\t') {
        regex!(r"\t+")
    } else {
        regex!(r"\s{2,}")
    };
    sep.split(t.trim())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn nearest(gpu: &mut Gpu, nics: &[Nic]) {
    let best = nics
        .iter()
        .filter_map(|n| gpu.links.get(&n.name).and_then(|r| rank(r).map(|k| (k, r))))
        .min_by_key(|(k, _)| *k);
    let Some((best, rel)) = best else { return };
    gpu.nearest = Some(rel.clone());
    gpu.nearest_nics = nics
        .iter()
        .filter(|n| gpu.links.get(&n.name).and_then(|r| rank(r)) == Some(best))
        .map(|n| n.device.clone().unwrap_or_else(|| n.name.clone()))
        .collect();
}

pub fn parse(text: &str) -> Result<Topo, ParseError> {
    let text = regex!(r"\x1b\[[0-9;]*m").replace_all(text, "");
    let mut out = Topo::default();
    let mut legend: BTreeMap<String, String> = BTreeMap::new();
    let mut in_legend = false;
    // Row names taken: a repeated row is skipped (rows are at most the columns).
    let mut seen = std::collections::HashSet::new();
    for (n, line) in numbered(&text) {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if t == "Legend:" || t == "NIC Legend:" {
            in_legend = true;
            continue;
        }
        if in_legend {
            if let Some(c) = regex!(r"^(NIC\d+):\s*(\S+)$").captures(t) {
                if c[1].len() <= MAX_NAME && c[2].len() <= MAX_NAME {
                    legend.insert(c[1].to_string(), c[2].to_string());
                }
            }
            continue;
        }
        if out.columns.is_empty() {
            let cols = header(line);
            if cols.first().map(String::as_str) != Some("GPU0") {
                return Err(ParseError::new(
                    KIND,
                    n,
                    line,
                    "expected the `GPU0 ...` header row",
                ));
            }
            out.columns = cols.into_iter().filter(|c| is_device(c)).collect();
            if let Some(c) = out.columns.iter().find(|c| c.chars().count() > MAX_NAME) {
                return Err(ParseError::new(
                    KIND,
                    n,
                    line,
                    format!(
                        "a column name of {} characters (a device is named in at most \
                         {MAX_NAME}, like GPU0 or NIC1)",
                        c.chars().count()
                    ),
                ));
            }
            continue;
        }
        let cells: Vec<&str> = t.split_whitespace().collect();
        let ndev = out.columns.len();
        if cells.len() < ndev + 1 || !out.columns.iter().any(|c| c == cells[0]) {
            return Err(ParseError::new(
                KIND,
                n,
                line,
                format!("expected a row of {ndev} relations after a column name"),
            ));
        }
        if !seen.insert(cells[0].to_string()) {
            continue;
        }
        let links: BTreeMap<String, String> = out
            .columns
            .iter()
            .cloned()
            .zip(cells[1..=ndev].iter().map(|s| s.to_string()))
            .collect();
        let rest = &cells[ndev + 1..];
        if let Some(i) = cells[0].strip_prefix("GPU").and_then(|i| i.parse().ok()) {
            out.gpus.push(Gpu {
                name: cells[0].to_string(),
                index: i,
                links,
                cpu_affinity: rest.first().map(|s| s.to_string()),
                numa_affinity: rest.get(1).map(|s| s.to_string()),
                gpu_numa_id: rest.get(2).map(|s| s.to_string()),
                ..Gpu::default()
            });
        } else {
            out.nics.push(Nic {
                name: cells[0].to_string(),
                device: None,
                links,
            });
        }
    }
    if out.gpus.is_empty() {
        return Err(unrecognised(KIND, &text, "no `GPU0` header and row"));
    }
    for nic in &mut out.nics {
        nic.device = legend.get(&nic.name).cloned();
        if nic.device.is_none() && !nic.name.starts_with("NIC") {
            nic.device = Some(nic.name.clone());
        }
    }
    let nics = out.nics.clone();
    for g in &mut out.gpus {
        nearest(g, &nics);
    }
    Ok(out)
}

crate::impl_shape!(Gpu, parsed("topo GPU"));
crate::impl_shape!(Nic, parsed("topo NIC"));
crate::impl_shape!(
    Topo,
    parsed("nvidia-smi topo result")
        .many::<Gpu>("gpus")
        .many::<Nic>("nics")
);

crate::parser!("nvidia-smi-topo", "nvidia-smi topo -m (or -mp)", sample: "nvidia-smi/topo-m-8xB200-8xmlx5-gke-a4.txt");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_row_is_skipped_and_long_names_refused() {
        let row = "GPU0\t X \tPIX\nNIC0\tPIX\t X \n";
        let t = parse(&format!("\tGPU0\tNIC0\n{}", row.repeat(3))).unwrap();
        assert_eq!((t.gpus.len(), t.nics.len()), (1, 1));
        assert_eq!(t.gpus[0].nearest_nics, ["NIC0"]);
        let long = "N".repeat(MAX_NAME + 1);
        let e = parse(&format!("\tGPU0\t{long}\nGPU0\t X \tPIX\n")).unwrap_err();
        assert!(
            e.to_string().contains("column name of 33 characters"),
            "{e}"
        );
    }
}
