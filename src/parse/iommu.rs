//! The IOMMU mode of a node's GPUs and HCAs, as fabcheck's IOMMU check prints it: the kernel
//! command line (`cat /proc/cmdline`), then one `PATH TYPE` line per device (`printf '%s '
//! PATH; cat PATH/iommu_group/type || echo none`):
//!
//! ```text
//! BOOT_IMAGE=/boot/vmlinuz-5.15.0-1063-nvidia root=UUID=… ro iommu=pt
//! /sys/bus/pci/devices/0000:1b:00.0 identity
//! /sys/class/infiniband/mlx5_0/device DMA-FQ
//! ```
//!
//! TYPE is the kernel's (Documentation/ABI/testing/sysfs-kernel-iommu_groups): `identity`
//! (passthrough: DMA untranslated), `DMA` / `DMA-FQ` (translated, strict or with a flush
//! queue), `blocked`, `auto`, `unmanaged` (owned by VFIO); `none`: the device has no IOMMU
//! group (no IOMMU, or it is off). Either part alone parses.
//!
//! Recognised evidence: a `/sys/… TYPE` line or a command line of `key=value` / word tokens.

use super::util::{numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};

const KIND: &str = "iommu";

/// One device's IOMMU group type.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IommuDevice {
    pub path: String,
    /// As printed: `identity`, `DMA`, `DMA-FQ`, `blocked`, `auto`, `unmanaged`, `none`.
    pub group_type: String,
    /// DMA addresses translated by the IOMMU (`DMA`, `DMA-FQ`).
    pub translated: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Iommu {
    /// The kernel command line, when printed.
    pub cmdline: Option<String>,
    /// Its IOMMU parameters in order (`intel_iommu=on`, `iommu=pt`, `amd_iommu=…`,
    /// `iommu.passthrough=…`, `iommu.strict=…`): the last of a key is the one the kernel uses.
    pub params: Vec<String>,
    pub devices: Vec<IommuDevice>,
}

fn iommu_param(word: &str) -> bool {
    let key = word.split('=').next().unwrap_or("");
    matches!(key, "iommu" | "intel_iommu" | "amd_iommu") || key.starts_with("iommu.")
}

pub fn parse(text: &str) -> Result<Iommu, ParseError> {
    let mut out = Iommu::default();
    for (n, line) in numbered(text) {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(c) = regex!(r"^(/sys/\S+)\s+(\S+)$").captures(t) {
            let ty = c[2].to_string();
            out.devices.push(IommuDevice {
                path: c[1].to_string(),
                translated: ty == "DMA" || ty == "DMA-FQ",
                group_type: ty,
            });
            continue;
        }
        // a kernel command line: `key=value` words (root=, ro, BOOT_IMAGE=, ...), no `key:`
        let cmdline = t
            .split_whitespace()
            .any(|w| regex!(r"^[A-Za-z_][\w.-]*=\S*$").is_match(w))
            && !t
                .split_whitespace()
                .any(|w| w.ends_with(':') || w.starts_with('{') || w.starts_with('['));
        if cmdline && out.cmdline.is_none() && out.devices.is_empty() {
            out.params = t
                .split_whitespace()
                .filter(|w| iommu_param(w))
                .map(str::to_string)
                .collect();
            out.cmdline = Some(t.to_string());
            continue;
        }
        return Err(ParseError::new(
            KIND,
            n,
            line,
            "expected a kernel command line (`key=value` words) first, then `PATH TYPE` lines (a sysfs device path and its iommu_group type)",
        ));
    }
    if out.cmdline.is_none() && out.devices.is_empty() {
        return Err(unrecognised(
            KIND,
            text,
            "no kernel command line and no `/sys/... TYPE` line",
        ));
    }
    Ok(out)
}

crate::impl_shape!(IommuDevice, parsed("iommu device"));
crate::impl_shape!(Iommu, parsed("iommu result").many::<IommuDevice>("devices"));

crate::parser!("iommu", "cat /proc/cmdline; printf '%s ' PATH; cat PATH/iommu_group/type || echo none", sample: "iommu/proc-cmdline-fdio-csit-denverton-intel_iommu-on-iommu-pt.txt");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn translated_groups_and_the_last_parameter_are_told() {
        let t = parse("BOOT_IMAGE=/vmlinuz ro intel_iommu=on iommu.passthrough=0\n/sys/bus/pci/devices/0000:1b:00.0 DMA-FQ\n/sys/class/infiniband/mlx5_0/device identity\n").unwrap();
        assert_eq!(t.params, ["intel_iommu=on", "iommu.passthrough=0"]);
        assert!(t.devices[0].translated);
        assert!(!t.devices[1].translated);
        assert!(parse("").is_err());
        assert!(parse("/sys/bus/pci/devices/0000:1b:00.0 DMA\nstray words here\n").is_err());
        assert!(parse("hello world\n").is_err());
    }
}
