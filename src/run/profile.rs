//! Platform profiles (issue 30 section 1, docs/profiles.md): which platform a node is, told from
//! facts read on it (DMI product name, GPU names, the RDMA adapters and their PCIe paths), and
//! what its fabric should be there. Pure: `primitives::profile` reads the facts; [`choose`] is
//! the one precedence `--set` > inventory (the part's field, the node var) > profile > hardware.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

/// The run's detections, one per node (in `RunEnv`: each node is read once).
#[derive(Default)]
pub struct Cache {
    pub cells: Mutex<BTreeMap<String, Arc<OnceLock<Detected>>>>,
}

/// What detection reads on a node; `None`/empty where it could not be read.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Facts {
    /// `/sys/class/dmi/id/product_name`.
    pub dmi_product_name: Option<String>,
    /// `nvidia-smi --query-gpu=name`: one name per GPU.
    pub gpu_names: Vec<String>,
    /// NVIDIA GPUs listed in `/proc/driver/nvidia/gpus` (when nvidia-smi gave no names).
    pub gpu_count: usize,
    /// RDMA adapters: sys_image_guid -> the PCI addresses of its functions.
    pub adapters: BTreeMap<String, Vec<String>>,
    /// What could not be read, and why.
    pub unread: Vec<String>,
    /// RDMA device -> the link layer of each of its ports (sysfs `ports/N/link_layer`).
    pub link_layers: BTreeMap<String, Vec<String>>,
}

/// The profile a node got, and why.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Detected {
    /// `dgx-spark`, `dgx-h100-class` or `generic`.
    pub name: String,
    /// false: no known platform matched (or nothing could be read): judged by what the
    /// hardware reports, and said so.
    pub known: bool,
    /// The facts that decided it, in words.
    pub reason: String,
    /// RDMA device -> the link layer of each of its ports, as read (not in the reports:
    /// `n.link_layer()` says what a node's fabric is).
    #[serde(skip)]
    pub link_layers: BTreeMap<String, Vec<String>>,
    /// The NVIDIA GPUs seen (nvidia-smi names, else /proc/driver/nvidia/gpus); 0: none read.
    #[serde(default)]
    pub gpus: usize,
}

pub(crate) const SPARK: &str = "dgx-spark";
pub(crate) const DGX: &str = "dgx-h100-class";
/// DGX B300 / HGX B300: eight ConnectX-8 at 800 Gb/s (XDR), otherwise as the H100 class.
pub(crate) const B300: &str = "dgx-b300-class";
/// Every named profile, in the order the docs list them.
pub(crate) const PROFILES: [&str; 3] = [SPARK, DGX, B300];
pub(crate) const GENERIC: &str = "generic";

/// `NVIDIA_DGX_Spark` / `NVIDIA DGX Spark` -> `nvidiadgxspark`.
fn squash(s: &str) -> String {
    s.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// The PCIe domain:bus of each function (`0002:01:00.1` -> `0002:01`): the paths an adapter is
/// reached over.
fn paths(pci: &[String]) -> Vec<String> {
    let mut p: Vec<String> = pci
        .iter()
        .map(|a| {
            a.rsplit_once(':')
                .map_or(a.as_str(), |(h, _)| h)
                .to_string()
        })
        .collect();
    p.sort();
    p.dedup();
    p
}

fn gpu_words(f: &Facts) -> String {
    if !f.gpu_names.is_empty() {
        let mut by: BTreeMap<&str, usize> = BTreeMap::new();
        for g in &f.gpu_names {
            *by.entry(g.as_str()).or_default() += 1;
        }
        let v: Vec<String> = by.iter().map(|(g, k)| format!("{k} x {g}")).collect();
        format!("GPUs {}", v.join(", "))
    } else if f.gpu_count > 0 {
        format!("{} NVIDIA GPU(s), names not read", f.gpu_count)
    } else {
        "no NVIDIA GPU seen".into()
    }
}

fn adapter_words(f: &Facts) -> String {
    if f.adapters.is_empty() {
        return "no RDMA adapter seen".into();
    }
    let v: Vec<String> = f
        .adapters
        .iter()
        .map(|(g, pci)| {
            let p = paths(pci);
            format!(
                "adapter {g} over {} PCIe path(s) ({})",
                p.len(),
                p.join(", ")
            )
        })
        .collect();
    v.join("; ")
}

fn facts_words(f: &Facts) -> String {
    let dmi = match &f.dmi_product_name {
        Some(d) => format!("DMI product name {d:?}"),
        None => "no DMI product name".into(),
    };
    let mut s = format!("{dmi}, {}, {}", gpu_words(f), adapter_words(f));
    if !f.unread.is_empty() {
        s.push_str(&format!(" (not read: {})", f.unread.join("; ")));
    }
    s
}

fn gpus(f: &Facts) -> usize {
    f.gpu_names.len().max(f.gpu_count)
}

/// Which profile the facts make, with the link layers read.
pub(crate) fn detect(f: &Facts) -> Detected {
    Detected {
        link_layers: f.link_layers.clone(),
        gpus: gpus(f),
        ..platform(f)
    }
}

/// The node's fabric from the link layers read: `infiniband` when a port of the `listed` RDMA
/// devices (every device when none is listed) is InfiniBand and none of the listed ones is
/// Ethernet, `ethernet` when every port read is Ethernet; `None` when no port of those devices
/// was read. An 8-rail IB node with its Ethernet storage/in-band adapters unlisted is IB.
pub(crate) fn link_layer(
    layers: &BTreeMap<String, Vec<String>>,
    listed: &[String],
) -> Option<(String, String)> {
    let mut ports: Vec<(String, String)> = Vec::new();
    for (dev, ll) in layers {
        if listed.is_empty() || listed.contains(dev) {
            for (i, l) in ll.iter().enumerate() {
                ports.push((format!("{dev}/{}", i + 1), l.to_ascii_lowercase()));
            }
        }
    }
    let of = |k: &str| -> Vec<String> {
        ports
            .iter()
            .filter(|p| p.1 == k)
            .map(|p| p.0.clone())
            .collect()
    };
    let (ib, eth) = (of("infiniband"), of("ethernet"));
    let which = if listed.is_empty() {
        "the node's RDMA devices"
    } else {
        "the inventory's rdma_devices"
    };
    if !ib.is_empty() && (eth.is_empty() || listed.is_empty()) {
        let also = if eth.is_empty() {
            String::new()
        } else {
            format!("; Ethernet {} left to RoCE", eth.join(" "))
        };
        Some((
            "infiniband".into(),
            format!(
                "sysfs link_layer of {which}: InfiniBand {}{also}",
                ib.join(" ")
            ),
        ))
    } else if !eth.is_empty() {
        let also = if ib.is_empty() {
            String::new()
        } else {
            format!(
                "; InfiniBand {} among them: list one fabric per node",
                ib.join(" ")
            )
        };
        Some((
            "ethernet".into(),
            format!(
                "sysfs link_layer of {which}: Ethernet {}{also}",
                eth.join(" ")
            ),
        ))
    } else {
        None
    }
}

fn platform(f: &Facts) -> Detected {
    let dmi = f
        .dmi_product_name
        .as_deref()
        .map(squash)
        .unwrap_or_default();
    let gb10 = f.gpu_names.iter().any(|g| squash(g).contains("gb10"));
    let words = facts_words(f);
    // The DMI product name is the whole name, compared without case, spaces or `_` and with
    // an optional `NVIDIA` in front: `Not a DGX Spark` is not one.
    let dmi_is = |names: &[&str]| {
        let bare = dmi.strip_prefix("nvidia").unwrap_or(&dmi);
        names.contains(&bare)
    };
    let spark_dmi = dmi_is(&["dgxspark"]);
    let other_gpus = f
        .gpu_names
        .iter()
        .filter(|g| !squash(g).contains("gb10"))
        .count();
    if spark_dmi && !gb10 && (gpus(f) > 1 || other_gpus > 0) {
        // One GB10 per DGX Spark: a Spark's name over other GPUs is not trusted either way.
        return Detected {
            name: GENERIC.into(),
            known: false,
            reason: format!(
                "the DMI product name says DGX Spark but the node has {} GPU(s), not one GB10: \
                 judged as an unknown platform by what its hardware reports (check the DMI \
                 name or the GPUs): {words}",
                gpus(f)
            ),
            ..Default::default()
        };
    }
    if spark_dmi || gb10 {
        return Detected {
            name: SPARK.into(),
            known: true,
            reason: format!("DGX Spark (GB10): {words}"),
            ..Default::default()
        };
    }
    let b300 = dmi_is(&["dgxb300"])
        || (f.gpu_names.iter().any(|g| squash(g).contains("b300")) && gpus(f) == 8);
    if b300 {
        return Detected {
            name: B300.into(),
            known: true,
            reason: format!("8-GPU DGX/HGX B300 host (ConnectX-8, XDR): {words}"),
            ..Default::default()
        };
    }
    let dgx_dmi = dmi_is(&["dgxh100", "dgxh200", "dgxh800", "dgxb200"]);
    let hopper = f.gpu_names.iter().any(|g| {
        let g = squash(g);
        ["h100", "h200", "h800", "b200"]
            .iter()
            .any(|m| g.contains(m))
    });
    if dgx_dmi || (hopper && gpus(f) == 8) {
        return Detected {
            name: DGX.into(),
            known: true,
            reason: format!("8-GPU DGX/HGX H100/H200/B200-class host: {words}"),
            ..Default::default()
        };
    }
    Detected {
        name: GENERIC.into(),
        known: false,
        reason: format!("unknown platform, judged by what its hardware reports: {words}"),
        ..Default::default()
    }
}

/// What a profile expects, per key: the value and the public source of the figure.
pub(crate) fn expectations(profile: &str) -> Vec<(&'static str, Value, &'static str)> {
    match profile {
        SPARK => vec![
            ("gpus_per_node", json!(1), "one GB10 per DGX Spark: one NCCL rank per node"),
            ("gdr", json!(false), "DGX Spark has no GPUDirect RDMA (GB10: GPU and CPU share one LPDDR5x memory; NCCL stages through it, docs/profiles.md)"),
            ("pcie_width", json!(4), "the ConnectX-7 is reached over two PCIe Gen5 x4 paths (\"GB10 GEN5 X4 PCIe host\" root ports): LnkSta x4 of its x16 LnkCap is healthy"),
            ("pcie_gts", json!(32), "PCIe Gen5 (32 GT/s) paths of the GB10"),
            ("rails_per_port", json!(2), "a QSFP port is two rails, one per PCIe path"),
            ("shared_limit_gbps", json!(200), "both rails of a port (and both QSFP ports) share the two x4 paths: about 200 Gbit/s per Spark (a Gen5 x4 path is roughly 100 Gbit/s, ServeTheHome; one rail measured 102.2 Gbit/s RoCE SEND and 97.2 TCP, NVIDIA DAQIRI DGX Spark benchmark)"),
            ("iperf3_min_gbps", json!(130), "iperf3 -P 16 over a bond of both ports: 160-198 Gbit/s with jumbo frames (ServeTheHome, \"The NVIDIA GB10 ConnectX-7 200GbE Networking is Really Different\"); one PCIe path alone carries about 96-112 (96.2 Gbit/s untuned, catharsis.net.au \"From 96 to 340 Gbit/s\"; 97.2 Gbit/s TCP per rail, NVIDIA DAQIRI DGX Spark benchmark): 130 tells two working slaves from one"),
        ],
        DGX => vec![
            ("gdr", json!(true), "DGX H100/H200/B200: GPUDirect RDMA between each GPU and its own NIC (nvidia_peermem or DMA-BUF)"),
            ("pcie_width", json!(16), "each ConnectX-7/8 at PCIe x16"),
            ("pcie_gts", json!(32), "PCIe Gen5 (32 GT/s)"),
            ("rails_per_port", json!(1), "one rail per GPU, one port per rail"),
            ("gpus_per_node", json!(8), "eight GPUs per DGX H100/H200/B200: full-node collectives run one NCCL rank per GPU"),
            ("ib_rate_gbps", json!(400), "DGX H100/H200/B200: eight ConnectX-7 ports at 4X NDR, 400 Gb/s (DGX H100/H200 User Guide); a faster port (XDR) passes, a port at HDR or 2X fails"),
        ],
        B300 => expectations(DGX)
            .into_iter()
            .map(|(k, v, why)| match k {
                "ib_rate_gbps" => (k, json!(800), "DGX B300: eight ConnectX-8 SuperNIC ports at 4X XDR, 800 Gb/s (DGX B300 datasheet: 8x OSFP, up to 800 Gb/s InfiniBand); a port at NDR 400 fails"),
                "gdr" => (k, v, "DGX B300: GPUDirect RDMA between each GPU and its own ConnectX-8 (nvidia_peermem or DMA-BUF)"),
                _ => (k, v, why),
            })
            .collect(),
        _ => vec![],
    }
}

/// The profile's value for `key`, with its source, if it has one.
pub(crate) fn expectation(d: &Detected, key: &str) -> Option<(Value, String)> {
    expectations(&d.name)
        .into_iter()
        .find(|(k, _, _)| *k == key)
        .map(|(_, v, why)| (v, format!("profile {}: {why}", d.name)))
}

/// Everything an expectation can come from, most binding first: the one precedence rule of
/// every expectation (issue 48 item 3). `primitives::profile::expect` fills it for a node;
/// the scripts (`n.expect`) and the Rust checks read their expectations through it.
#[derive(Debug, Default)]
pub(crate) struct Levels<'a> {
    pub key: &'a str,
    /// `--set KEY`.
    pub set: Option<&'a Value>,
    /// The inventory's own field of the part judged (a port's `speed_mbps`), with where it
    /// is: more specific than the node var of the same name, so it ranks above it.
    pub part: Option<(Value, String)>,
    /// The inventory's node var `KEY`, with the node's name.
    pub node_var: Option<(&'a Value, &'a str)>,
    /// The node's platform profile (`None`: not consulted).
    pub profile: Option<&'a Detected>,
    /// What the caller read on the hardware (`Null`: nothing; the source then says the
    /// hardware must tell, and the caller reads it itself).
    pub hardware: Value,
}

/// The value and its source: `--set` > the part's inventory field > the inventory's node var >
/// the platform profile > the hardware. `Null` where nothing gives one (the source says why).
pub(crate) fn choose(l: Levels) -> (Value, String) {
    let key = l.key;
    if let Some(v) = l.set {
        return (v.clone(), format!("--set {key}"));
    }
    if let Some(p) = l.part.filter(|(v, _)| !v.is_null()) {
        return p;
    }
    if let Some((v, node)) = l.node_var.filter(|(v, _)| !v.is_null()) {
        return (v.clone(), format!("inventory var {key} of {node}"));
    }
    if let Some(x) = l.profile.and_then(|d| expectation(d, key)) {
        return x;
    }
    let why = match l.profile {
        Some(d) => format!("hardware (profile {} has no {key})", d.name),
        None => "hardware".to_string(),
    };
    (l.hardware, why)
}

/// One expectation as a check used it: its value and where it came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Expectation {
    pub key: String,
    /// As text (`false`, `4`); `()` where only the hardware can tell.
    pub value: String,
    /// `--set`, `inventory …`, `profile …` or `hardware …`.
    pub from: String,
}

/// The profile of one node and the expectations the run's checks took for it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeProfile {
    pub node: String,
    #[serde(flatten)]
    pub profile: Detected,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expectations: Vec<Expectation>,
}

/// One entry per node (the first detection), its expectations once per key (the first taken),
/// in the order met.
pub(crate) fn merge(all: impl IntoIterator<Item = NodeProfile>) -> Vec<NodeProfile> {
    let mut out: Vec<NodeProfile> = Vec::new();
    for p in all {
        match out.iter_mut().find(|o| o.node == p.node) {
            Some(o) => {
                for e in p.expectations {
                    if !o.expectations.iter().any(|x| x.key == e.key) {
                        o.expectations.push(e);
                    }
                }
            }
            None => out.push(p),
        }
    }
    out
}

crate::impl_shape!(Detected, parsed("profile result"));

#[cfg(test)]
mod tests {
    use super::*;

    /// The one precedence rule: each level wins over every level below it, and the source
    /// says which gave the value.
    #[test]
    fn one_rule_set_part_node_var_profile_hardware() {
        let spark = detect(&Facts {
            dmi_product_name: Some("NVIDIA_DGX_Spark".into()),
            adapters: spark_adapters(),
            ..Default::default()
        });
        let (set, var) = (json!(8), json!(2));
        let full = || Levels {
            key: "pcie_width",
            set: Some(&set),
            part: Some((json!(1), "inventory pcie_width of port p".into())),
            node_var: Some((&var, "spark-01")),
            profile: Some(&spark),
            hardware: json!(16),
        };
        assert_eq!(choose(full()), (json!(8), "--set pcie_width".into()));
        let l = Levels {
            set: None,
            ..full()
        };
        assert_eq!(
            choose(l),
            (json!(1), "inventory pcie_width of port p".into())
        );
        let l = Levels {
            set: None,
            part: Some((Value::Null, "x".into())),
            ..full()
        };
        assert_eq!(
            choose(l),
            (json!(2), "inventory var pcie_width of spark-01".into())
        );
        let l = Levels {
            set: None,
            part: None,
            node_var: None,
            ..full()
        };
        let (v, from) = choose(l);
        assert_eq!(v, json!(4));
        assert!(from.starts_with("profile dgx-spark: "), "{from}");
        let l = Levels {
            key: "mtu",
            set: None,
            part: None,
            node_var: None,
            ..full()
        };
        assert_eq!(
            choose(l),
            (json!(16), "hardware (profile dgx-spark has no mtu)".into())
        );
        let l = Levels {
            key: "mtu",
            hardware: Value::Null,
            profile: None,
            ..Default::default()
        };
        assert_eq!(choose(l), (Value::Null, "hardware".into()));
    }

    fn spark_adapters() -> BTreeMap<String, Vec<String>> {
        BTreeMap::from([(
            "4cbb:4703:002d:1a16".to_string(),
            vec!["0000:01:00.1".to_string(), "0002:01:00.1".to_string()],
        )])
    }

    #[test]
    fn spark_by_dmi_as_real_units_write_it_or_by_its_gpu() {
        for dmi in ["NVIDIA_DGX_Spark", "NVIDIA DGX Spark", "DGX Spark"] {
            let f = Facts {
                dmi_product_name: Some(dmi.into()),
                adapters: spark_adapters(),
                ..Default::default()
            };
            let d = detect(&f);
            assert_eq!(d.name, SPARK, "{dmi}");
            assert!(d.known);
            assert!(d.reason.contains(dmi), "{}", d.reason);
            assert!(
                d.reason.contains("over 2 PCIe path(s) (0000:01, 0002:01)"),
                "{}",
                d.reason
            );
        }
        // A name that only contains the words is not the name; a Spark's name over eight
        // H100s is contradicted by the GPUs: generic, saying why (issue 50, low).
        for dmi in [
            "Not a DGX Spark",
            "DGX Spark Emulator X1",
            "DGXH100 lookalike",
        ] {
            let f = Facts {
                dmi_product_name: Some(dmi.into()),
                ..Default::default()
            };
            assert_eq!(detect(&f).name, GENERIC, "{dmi}");
        }
        let f = Facts {
            dmi_product_name: Some("NVIDIA_DGX_Spark".into()),
            gpu_names: vec!["NVIDIA H100 80GB HBM3".into(); 8],
            ..Default::default()
        };
        let d = detect(&f);
        assert_eq!(d.name, GENERIC);
        assert!(
            d.reason
                .contains("says DGX Spark but the node has 8 GPU(s)"),
            "{}",
            d.reason
        );
        // An OEM GB10 box (another DMI name) is a Spark by its GPU.
        let f = Facts {
            dmi_product_name: Some("ASUS Ascent GX10".into()),
            gpu_names: vec!["NVIDIA GB10".into()],
            ..Default::default()
        };
        assert_eq!(detect(&f).name, SPARK);
    }

    #[test]
    fn eight_hopper_gpus_are_dgx_class_fewer_are_generic() {
        let names = |k: usize| vec!["NVIDIA H100 80GB HBM3".to_string(); k];
        let f = Facts {
            gpu_names: names(8),
            ..Default::default()
        };
        assert_eq!(detect(&f).name, DGX);
        let f = Facts {
            gpu_names: names(2),
            ..Default::default()
        };
        let d = detect(&f);
        assert_eq!(d.name, GENERIC);
        assert!(!d.known);
        assert!(d.reason.starts_with("unknown platform"), "{}", d.reason);
        assert!(
            d.reason.contains("2 x NVIDIA H100 80GB HBM3"),
            "{}",
            d.reason
        );
        let f = Facts {
            dmi_product_name: Some("DGXH100".into()),
            ..Default::default()
        };
        assert_eq!(detect(&f).name, DGX);
    }

    /// Issue 51 item 6: a B300 host expects XDR (800), an H100/B200 host NDR (400).
    #[test]
    fn b300_hosts_expect_xdr_800() {
        let rate = |name: &str| {
            expectations(name)
                .into_iter()
                .find(|e| e.0 == "ib_rate_gbps")
                .map(|e| e.1)
        };
        for f in [
            Facts {
                dmi_product_name: Some("DGXB300".into()),
                ..Default::default()
            },
            Facts {
                gpu_names: vec!["NVIDIA B300 SXM6 AC".to_string(); 8],
                ..Default::default()
            },
        ] {
            assert_eq!(detect(&f).name, B300, "{f:?}");
        }
        assert_eq!(rate(B300), Some(json!(800)));
        assert_eq!(rate(DGX), Some(json!(400)));
        let f = Facts {
            dmi_product_name: Some("DGXB200".into()),
            ..Default::default()
        };
        assert_eq!(detect(&f).name, DGX);
    }

    #[test]
    fn link_layer_from_the_ports_read() {
        let l = |v: &[(&str, &str)]| -> BTreeMap<String, Vec<String>> {
            v.iter()
                .map(|(d, l)| (d.to_string(), vec![l.to_string()]))
                .collect()
        };
        let s = |v: &[&str]| -> Vec<String> { v.iter().map(|x| x.to_string()).collect() };
        // a DGX H100: 8 IB rails and two Ethernet adapters (storage), none listed: IB
        let dgx = l(&[
            ("mlx5_0", "InfiniBand"),
            ("mlx5_1", "Ethernet"),
            ("mlx5_3", "InfiniBand"),
        ]);
        let (v, why) = link_layer(&dgx, &[]).unwrap();
        assert_eq!(v, "infiniband");
        assert!(
            why.contains("InfiniBand mlx5_0/1 mlx5_3/1; Ethernet mlx5_1/1 left to RoCE"),
            "{why}"
        );
        // the inventory lists the IB rails: IB; it lists the Ethernet one: RoCE, and says so
        assert_eq!(
            link_layer(&dgx, &s(&["mlx5_0", "mlx5_3"])).unwrap().0,
            "infiniband"
        );
        let (v, why) = link_layer(&dgx, &s(&["mlx5_0", "mlx5_1"])).unwrap();
        assert_eq!(v, "ethernet");
        assert!(why.contains("InfiniBand mlx5_0/1 among them"), "{why}");
        // a Spark (RoCE): ethernet; nothing read (older kernel, no device): not known
        let spark = l(&[("rocep1s0f1", "Ethernet"), ("roceP2p1s0f1", "Ethernet")]);
        assert_eq!(link_layer(&spark, &[]).unwrap().0, "ethernet");
        assert_eq!(link_layer(&BTreeMap::new(), &[]), None);
        assert_eq!(link_layer(&dgx, &s(&["mlx5_7"])), None);
    }

    #[test]
    fn nothing_read_is_unknown_and_says_what_was_not_read() {
        let f = Facts {
            unread: vec!["nvidia-smi: not installed".into()],
            ..Default::default()
        };
        let d = detect(&f);
        assert_eq!(d.name, GENERIC);
        assert!(!d.known);
        assert!(
            d.reason.contains("nvidia-smi: not installed"),
            "{}",
            d.reason
        );
    }

    #[test]
    fn spark_expects_no_gdr_and_x4_generic_nothing() {
        let spark = detect(&Facts {
            dmi_product_name: Some("NVIDIA_DGX_Spark".into()),
            ..Default::default()
        });
        assert_eq!(expectation(&spark, "gdr").map(|e| e.0), Some(json!(false)));
        assert_eq!(
            expectation(&spark, "pcie_width").map(|e| e.0),
            Some(json!(4))
        );
        assert!(expectation(&spark, "gdr")
            .unwrap()
            .1
            .starts_with("profile dgx-spark: "));
        let g = detect(&Facts::default());
        assert_eq!(expectation(&g, "gdr"), None);
        assert_eq!(expectation(&g, "pcie_width"), None);
    }

    #[test]
    fn merge_keeps_one_entry_per_node_and_key() {
        let e = |k: &str, v: &str| Expectation {
            key: k.into(),
            value: v.into(),
            from: "x".into(),
        };
        let p = |n: &str, ex: Vec<Expectation>| NodeProfile {
            node: n.into(),
            profile: Detected::default(),
            expectations: ex,
        };
        let m = merge([
            p("a", vec![e("gdr", "false")]),
            p("b", vec![]),
            p("a", vec![e("gdr", "true"), e("pcie_width", "4")]),
        ]);
        assert_eq!(m.len(), 2);
        assert_eq!(
            m[0].expectations,
            vec![e("gdr", "false"), e("pcie_width", "4")]
        );
    }
}
