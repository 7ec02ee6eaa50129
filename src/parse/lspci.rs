//! `lspci -vv` (pciutils), whole or for some devices (`-s BUS`, `-d VENDOR:`): per device the bus
//! address, class, name and the PCIe link, capability (`LnkCap`) against status (`LnkSta`).
//!
//! Handles: tab-indented output as printed, devices without a PCIe capability (no link fields),
//! `(downgraded)` / `(ok)` markers (pciutils >= 3.6 prints them), `Speed unknown` and `Width x0`
//! (an SR-IOV virtual function), bus addresses with or without a PCI domain (`-D`), the VPD part
//! number and product name of NICs, the `Kernel driver in use` line, the `ACSCtl:` line of a
//! port with Access Control Services (`acs_redirect`: peer-to-peer redirected), and the link lines alone
//! (`lspci -vv -s BUS | grep -E 'LnkCap:|LnkSta:'`) as one device with an empty address.
//! lspci does not print `(downgraded)` for every device (not for the DGX Spark's root ports,
//! which were seen trained at 2.5GT/s x4 of 32GT/s x4 without it): compare the numbers.
//!
//! Recognised evidence: the first non-blank line is a device line (`BB:DD.F Class: Name`) or a
//! `LnkCap:` / `LnkSta:` line; indented lines belong to the device above; any other line is an
//! error.

use super::util::{numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};

const KIND: &str = "lspci";

/// One PCI function.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PciDevice {
    /// Bus address as printed: `b1:00.1`, or `0000:b1:00.1` with `-D`.
    pub address: String,
    /// e.g. `Ethernet controller`, `Infiniband controller`, `3D controller`.
    pub class: String,
    /// e.g. `Mellanox Technologies MT2910 Family [ConnectX-7]`.
    pub name: String,
    /// `LnkCap` speed in GT/s (2.5, 5, 8, 16, 32, 64); `None` without a PCIe capability.
    pub lnk_cap_speed_gts: Option<f64>,
    /// `LnkCap` width in lanes (`Width x16` → 16).
    pub lnk_cap_width: Option<u32>,
    /// `LnkSta` (negotiated) speed in GT/s; `None` when lspci prints `Speed unknown`.
    pub lnk_sta_speed_gts: Option<f64>,
    /// `LnkSta` (negotiated) width in lanes; 0 for a function without its own link (a VF).
    pub lnk_sta_width: Option<u32>,
    /// lspci marked the negotiated speed `(downgraded)`.
    pub lnk_sta_speed_downgraded: bool,
    /// lspci marked the negotiated width `(downgraded)`.
    pub lnk_sta_width_downgraded: bool,
    /// VPD `Product Name:` (NVIDIA/Mellanox NICs print it).
    pub product_name: Option<String>,
    /// VPD `[PN] Part number:`, e.g. `MCX713106AC-VEAT`.
    pub part_number: Option<String>,
    /// `Kernel driver in use:`, e.g. `mlx5_core`.
    pub kernel_driver: Option<String>,
    /// `ACSCtl:` (Access Control Services enabled on this port) as printed, e.g.
    /// `SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-`;
    /// `None` without an ACS capability (or lspci run without root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acs_ctl: Option<String>,
    /// ACS redirects or blocks peer-to-peer traffic at this port (`ReqRedir+`, `CmpltRedir+`
    /// or `EgressCtrl+` in `ACSCtl`): requests between devices below it go up to the root
    /// complex instead of across the switch (GPUDirect RDMA between a GPU and its NIC).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub acs_redirect: bool,
}

/// `Speed 16GT/s (downgraded), Width x8 (downgraded)` and the `LnkCap` form.
fn link(v: &str) -> (Option<f64>, bool, Option<u32>, bool) {
    let speed = regex!(r"Speed (\S+?)(?:GT/s)?(?: \((downgraded|ok)\))?,").captures(v);
    let width = regex!(r"Width x(\d+)(?: \((downgraded|ok)\))?").captures(v);
    let down = |c: &Option<regex::Captures>| {
        c.as_ref()
            .and_then(|c| c.get(2))
            .is_some_and(|m| m.as_str() == "downgraded")
    };
    (
        speed.as_ref().and_then(|c| c[1].parse().ok()),
        down(&speed),
        width.as_ref().and_then(|c| c[1].parse().ok()),
        down(&width),
    )
}

fn detail(dev: &mut PciDevice, t: &str) {
    if let Some(v) = t.strip_prefix("LnkCap:") {
        let (s, _, w, _) = link(v);
        (dev.lnk_cap_speed_gts, dev.lnk_cap_width) = (s, w);
    } else if let Some(v) = t.strip_prefix("LnkSta:") {
        let (s, sd, w, wd) = link(v);
        dev.lnk_sta_speed_gts = s;
        dev.lnk_sta_speed_downgraded = sd;
        dev.lnk_sta_width = w;
        dev.lnk_sta_width_downgraded = wd;
    } else if let Some(v) = t.strip_prefix("Product Name:") {
        dev.product_name = Some(v.trim().to_string());
    } else if let Some(v) = t.strip_prefix("[PN] Part number:") {
        dev.part_number = Some(v.trim().to_string());
    } else if let Some(v) = t.strip_prefix("Kernel driver in use:") {
        dev.kernel_driver = Some(v.trim().to_string());
    } else if let Some(v) = t.strip_prefix("ACSCtl:") {
        let v = v.trim();
        dev.acs_redirect = ["ReqRedir+", "CmpltRedir+", "EgressCtrl+"]
            .iter()
            .any(|f| v.split_whitespace().any(|w| w == *f));
        dev.acs_ctl = Some(v.to_string());
    }
}

pub fn parse(text: &str) -> Result<Vec<PciDevice>, ParseError> {
    let mut out: Vec<PciDevice> = Vec::new();
    for (n, line) in numbered(text) {
        if line.trim().is_empty() {
            continue;
        }
        if line.starts_with(['\t', ' ']) {
            // `lspci -vv -s BUS | grep Lnk` prints only the link lines: one unnamed device.
            if out.is_empty() && regex!(r"^\s+Lnk(Cap|Sta):").is_match(line) {
                out.push(PciDevice::default());
            }
            let Some(dev) = out.last_mut() else {
                return Err(ParseError::new(
                    KIND,
                    n,
                    line,
                    "expected a device line first",
                ));
            };
            detail(dev, line.trim());
            continue;
        }
        let Some(c) = regex!(
            r"^((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]) ([^:]+): (.+?)\s*$"
        )
        .captures(line) else {
            return Err(ParseError::new(
                KIND,
                n,
                line,
                "expected `BUS:DEV.FN Class: Name` or an indented detail line",
            ));
        };
        out.push(PciDevice {
            address: c[1].to_string(),
            class: c[2].to_string(),
            name: c[3].to_string(),
            ..PciDevice::default()
        });
    }
    if out.is_empty() {
        return Err(unrecognised(
            KIND,
            text,
            "no `BUS:DEV.FN Class: Name` device line",
        ));
    }
    Ok(out)
}

crate::impl_shape!(PciDevice, parsed("lspci device"));

crate::parser!("lspci", "lspci -vv [-s BUS]", sample: "lspci/lspci-vv-h200-firecracker-vm-virtio-gen5-x16.txt");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_forms() {
        assert_eq!(
            link(" Speed 32GT/s (ok), Width x16 (ok)"),
            (Some(32.0), false, Some(16), false)
        );
        assert_eq!(
            link(" Speed 2.5GT/s (downgraded), Width x1 (downgraded)"),
            (Some(2.5), true, Some(1), true)
        );
        assert_eq!(
            link(" Port #0, Speed 8GT/s, Width x16, ASPM L1"),
            (Some(8.0), false, Some(16), false)
        );
        assert_eq!(
            link(" Speed unknown (downgraded), Width x0 (downgraded)"),
            (None, true, Some(0), true)
        );
    }

    #[test]
    fn garbage_and_orphan_details() {
        assert_eq!(
            parse("\tLnkCtl:\tASPM Disabled; RCB 64 bytes\n")
                .unwrap_err()
                .line,
            1
        );
        assert!(parse("hello world\n").is_err());
        assert!(parse("").is_err());
    }
}
