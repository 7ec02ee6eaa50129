//! The sysfs listing `fabcheck discover` reads on a node (the command is
//! `primitives::discover::SYSFS_COMMAND`): one line per network interface, per RDMA device, the
//! DMI product name and one per NVIDIA GPU, each `KIND NAME key=value ...` (values hold no
//! spaces, except the DMI product name, which is the rest of its line):
//!
//! ```text
//! net enp1s0f1np1 pci=0000:01:00.1 driver=mlx5_core kind= master= carrier=1 speed=200000 port_name=p1
//! rdma rocep1s0f1 pci=0000:01:00.1 sys_image_guid=4cbb:4703:002d:1a16 node_guid=4cbb:4703:002d:1a17 netdevs=enp1s0f1np1, link_layer=Ethernet,
//! dmi product_name=NVIDIA_DGX_Spark
//! gpu 000f:01:00.0
//! ```
//!
//! Empty values are files sysfs does not have for that interface (a veth has no PCI device; a
//! link without carrier cannot tell its speed). Unknown keys are kept out, unknown kinds are
//! an error (the output is not this listing).

use super::util::numbered;
use super::ParseError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

const KIND: &str = "sysfs-net";

/// One network interface (`/sys/class/net/NAME`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Netdev {
    pub name: String,
    /// PCI address of the function (`device` link), `None` for virtual interfaces.
    pub pci: Option<String>,
    /// Kernel driver of that function (`mlx5_core`).
    pub driver: Option<String>,
    /// `bridge`, `bond`, `wireless`, or `None` for any other interface.
    pub kind: Option<String>,
    /// The bond or bridge this interface is enslaved to.
    pub master: Option<String>,
    /// `carrier`: Some(true) when the link is up.
    pub carrier: Option<bool>,
    /// `speed` in Mb/s; `None` without a link (sysfs answers -1 or nothing).
    pub speed_mbps: Option<u64>,
    /// `phys_port_name` (`p1`; switchdev representors `pf0vf1`).
    pub port_name: Option<String>,
}

/// One RDMA device (`/sys/class/infiniband/NAME`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RdmaDev {
    pub name: String,
    pub pci: Option<String>,
    /// The adapter's system image GUID: the same on every PCI function of one card.
    pub sys_image_guid: Option<String>,
    pub node_guid: Option<String>,
    /// The netdevs of the device's PCI function (`device/net/`).
    pub netdevs: Vec<String>,
    /// The link layer of each port (`ports/N/link_layer`: `InfiniBand` or `Ethernet`), in
    /// port order; empty where not read (older listings).
    #[serde(default)]
    pub link_layers: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SysfsNet {
    pub netdevs: Vec<Netdev>,
    pub rdma: Vec<RdmaDev>,
    /// `/sys/class/dmi/id/product_name` (`None` where the board has no DMI, e.g. some Arm boards).
    pub dmi_product_name: Option<String>,
    /// NVIDIA GPUs by PCI address (`/proc/driver/nvidia/gpus/`).
    pub gpus: Vec<String>,
}

fn fields(rest: &str) -> BTreeMap<&str, &str> {
    rest.split_whitespace()
        .filter_map(|w| w.split_once('='))
        .collect()
}

fn opt(m: &BTreeMap<&str, &str>, k: &str) -> Option<String> {
    m.get(k)
        .map(|v| v.trim())
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

fn netdev(name: &str, m: &BTreeMap<&str, &str>) -> Netdev {
    Netdev {
        name: name.to_string(),
        pci: opt(m, "pci"),
        driver: opt(m, "driver"),
        kind: opt(m, "kind"),
        master: opt(m, "master"),
        carrier: opt(m, "carrier").map(|c| c == "1"),
        speed_mbps: opt(m, "speed")
            .and_then(|s| s.parse::<i64>().ok())
            .filter(|s| *s > 0)
            .map(|s| s as u64),
        port_name: opt(m, "port_name"),
    }
}

/// A comma-separated field (`a,b,`), empty entries dropped.
fn list(m: &BTreeMap<&str, &str>, k: &str) -> Vec<String> {
    opt(m, k)
        .map(|v| {
            v.split(',')
                .filter(|x| !x.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn rdma(name: &str, m: &BTreeMap<&str, &str>) -> RdmaDev {
    RdmaDev {
        name: name.to_string(),
        pci: opt(m, "pci"),
        sys_image_guid: opt(m, "sys_image_guid"),
        node_guid: opt(m, "node_guid"),
        netdevs: list(m, "netdevs"),
        link_layers: list(m, "link_layer"),
    }
}

pub fn parse(text: &str) -> Result<SysfsNet, ParseError> {
    let mut out = SysfsNet::default();
    for (n, line) in numbered(text) {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let (kind, rest) = t.split_once(' ').unwrap_or((t, ""));
        match kind {
            "dmi" => {
                out.dmi_product_name = rest
                    .strip_prefix("product_name=")
                    .map(str::trim)
                    .filter(|v| !v.is_empty())
                    .map(str::to_string);
            }
            "gpu" if !rest.trim().is_empty() => out.gpus.push(rest.trim().to_string()),
            "net" | "rdma" => {
                let (name, kv) = rest.split_once(' ').unwrap_or((rest, ""));
                if name.is_empty() {
                    return Err(ParseError::new(KIND, n, line, "a line without a name"));
                }
                let m = fields(kv);
                if kind == "net" {
                    out.netdevs.push(netdev(name, &m));
                } else {
                    out.rdma.push(rdma(name, &m));
                }
            }
            _ => {
                return Err(ParseError::new(
                    KIND,
                    n,
                    line,
                    "not a line of the sysfs listing (net, rdma, dmi, gpu)",
                ))
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_each_kind() {
        let s = parse(
            "net lo pci= driver= kind= master= carrier=1 speed= port_name=\n\
             net enp1s0f1np1 pci=0000:01:00.1 driver=mlx5_core kind= master= carrier=1 speed=200000 port_name=p1\n\
             net enp1s0f0np0 pci=0000:01:00.0 driver=mlx5_core kind= master= carrier=0 speed=-1 port_name=p0\n\
             rdma rocep1s0f1 pci=0000:01:00.1 sys_image_guid=4cbb:4703:002d:1a16 node_guid=4cbb:4703:002d:1a17 netdevs=enp1s0f1np1,\n\
             rdma mlx5_0 pci=0000:1a:00.0 sys_image_guid=a088:c203:00b8:0001 node_guid=a088:c203:00b8:0001 netdevs= link_layer=InfiniBand,\n\
             dmi product_name=NVIDIA DGX Spark\n\
             gpu 000f:01:00.0\n",
        )
        .unwrap();
        assert_eq!(s.netdevs.len(), 3);
        assert_eq!(s.netdevs[0].pci, None);
        assert_eq!(s.netdevs[1].speed_mbps, Some(200000));
        assert_eq!(s.netdevs[1].driver.as_deref(), Some("mlx5_core"));
        assert_eq!(s.netdevs[2].carrier, Some(false));
        assert_eq!(s.netdevs[2].speed_mbps, None);
        assert_eq!(s.rdma[0].netdevs, ["enp1s0f1np1"]);
        // an older listing without link_layer= reads as not known
        assert!(s.rdma[0].link_layers.is_empty());
        assert!(s.rdma[1].netdevs.is_empty());
        assert_eq!(s.rdma[1].link_layers, ["InfiniBand"]);
        assert_eq!(
            s.rdma[0].sys_image_guid.as_deref(),
            Some("4cbb:4703:002d:1a16")
        );
        assert_eq!(s.dmi_product_name.as_deref(), Some("NVIDIA DGX Spark"));
        assert_eq!(s.gpus, ["000f:01:00.0"]);
    }

    #[test]
    fn other_output_is_an_error() {
        let e = parse("net eth0 carrier=1\nPING 10.0.0.1\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(parse("").unwrap().netdevs.is_empty());
    }
}
