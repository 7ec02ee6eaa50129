//! `nvidia-smi -q`: per GPU (a `GPU 00000000:1B:00.0` section) its name and its PCI section's
//! link and replay counter:
//!
//! ```text
//! GPU 00000000:00:06.0
//!     Product Name                          : NVIDIA H100 80GB HBM3
//!     PCI
//!         Bus Id                            : 00000000:00:06.0
//!         GPU Link Info
//!             PCIe Generation
//!                 Max                       : 5
//!                 Current                   : 5
//!             Link Width
//!                 Max                       : 16x
//!                 Current                   : 16x
//!         Replays Since Reset               : 0
//!         Replay Number Rollovers           : 0
//! ```
//!
//! `Replays Since Reset` is the GPU's own PCIe replay counter (the TLPs it sent again after its
//! link partner refused them, since the GPU's last reset); `Replay Number Rollovers` how often a
//! TLP was replayed until REPLAY_NUM rolled over (the link then retrains). Older drivers print
//! `Replays since reset` and no rollovers; `N/A` is no value. The GPU's address is also given
//! as a PCI address of sysfs (`bdf`: a 4-digit domain, lower case: `0000:1b:00.0`).
//!
//! Recognised evidence: a `GPU DOMAIN:BUS:DEV.FN` section header.

use super::util::{key_value, numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};

const KIND: &str = "nvidia-smi-q";

/// One GPU's section.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SmiGpu {
    /// As the section header prints it: `00000000:1B:00.0`.
    pub bus_id: String,
    /// As sysfs names it: `0000:1b:00.0`.
    pub bdf: String,
    pub name: Option<String>,
    /// `Replays Since Reset`.
    pub replays: Option<u64>,
    /// `Replay Number Rollovers`.
    pub replay_rollovers: Option<u64>,
    /// PCIe generation now and at most (`GPU Link Info` / `PCIe Generation`).
    pub link_gen_current: Option<u64>,
    pub link_gen_max: Option<u64>,
    /// Lanes now and at most (`Link Width`, `16x`).
    pub link_width_current: Option<u64>,
    pub link_width_max: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NvidiaSmiQ {
    pub driver_version: Option<String>,
    pub gpus: Vec<SmiGpu>,
}

/// `00000000:1B:00.0` -> `0000:1b:00.0` (the domain's last four digits).
fn sysfs_bdf(bus_id: &str) -> String {
    let (dom, rest) = bus_id.split_once(':').unwrap_or(("0", bus_id));
    let dom = &dom[dom.len().saturating_sub(4)..];
    format!("{dom:0>4}:{rest}").to_lowercase()
}

fn number(v: &str) -> Option<u64> {
    v.trim().trim_end_matches('x').parse().ok()
}

/// A `Max` / `Current` line under `PCIe Generation` or `Link Width`.
fn link_value(g: &mut SmiGpu, section: &str, key: &str, v: &str) {
    let slot = match (section, key) {
        ("PCIe Generation", "Max") => &mut g.link_gen_max,
        ("PCIe Generation", "Current") => &mut g.link_gen_current,
        ("Link Width", "Max") => &mut g.link_width_max,
        ("Link Width", "Current") => &mut g.link_width_current,
        _ => return,
    };
    *slot = number(v);
}

pub fn parse(text: &str) -> Result<NvidiaSmiQ, ParseError> {
    let mut out = NvidiaSmiQ::default();
    let mut section = String::new();
    for (_, line) in numbered(text) {
        let t = line.trim();
        if let Some(c) =
            regex!(r"^GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])$").captures(t)
        {
            out.gpus.push(SmiGpu {
                bus_id: c[1].to_string(),
                bdf: sysfs_bdf(&c[1]),
                ..SmiGpu::default()
            });
            section.clear();
            continue;
        }
        let Some((k, v)) = key_value(t) else {
            // a section title (`PCI`, `PCIe Generation`, `Single Bit`): the next values' context
            section = t.to_string();
            continue;
        };
        if k == "Driver Version" {
            out.driver_version = Some(v.to_string());
        }
        let Some(g) = out.gpus.last_mut() else {
            continue;
        };
        match k.to_ascii_lowercase().as_str() {
            "product name" => g.name = Some(v.to_string()),
            "replays since reset" => g.replays = number(v),
            "replay number rollovers" => g.replay_rollovers = number(v),
            _ => link_value(g, &section, k, v),
        }
    }
    if out.gpus.is_empty() {
        return Err(unrecognised(
            KIND,
            text,
            "no `GPU 00000000:BB:DD.F` section (nvidia-smi -q lists each GPU under one)",
        ));
    }
    Ok(out)
}

crate::impl_shape!(SmiGpu, parsed("nvidia-smi -q GPU"));
crate::impl_shape!(
    NvidiaSmiQ,
    parsed("nvidia-smi -q result").many::<SmiGpu>("gpus")
);

crate::parser!("nvidia-smi-q", "nvidia-smi -q", sample: "nvidia-smi/q-1xH100-pcie-gen5-x16-replays-0-firecracker-580.txt");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replays_of_each_gpu_and_the_older_spelling() {
        let t = "Driver Version : 470.82\nGPU 00000000:1B:00.0\n    Product Name : X\n    PCI\n        Replays since reset : 12\n        Tx Throughput : 1000 KB/s\nGPU 00000000:DF:00.0\n    PCI\n        Replays Since Reset : N/A\n        Replay Number Rollovers : 1\n";
        let q = parse(t).unwrap();
        assert_eq!(q.driver_version.as_deref(), Some("470.82"));
        assert_eq!(q.gpus[0].bdf, "0000:1b:00.0");
        assert_eq!(
            (q.gpus[0].replays, q.gpus[0].replay_rollovers),
            (Some(12), None)
        );
        assert_eq!(
            (q.gpus[1].replays, q.gpus[1].replay_rollovers),
            (None, Some(1))
        );
        assert!(parse("").is_err());
        assert!(parse("No devices were found\n").is_err());
    }
}
