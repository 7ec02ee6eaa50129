//! The kernel's AER statistics of PCIe devices (sysfs `aer_dev_correctable`, `aer_dev_nonfatal`,
//! `aer_dev_fatal`; Documentation/ABI/testing/sysfs-bus-pci-devices-aer, kernel 4.19 on): one
//! `NAME COUNT` line per error type, the file's `TOTAL_ERR_COR` / `TOTAL_ERR_NONFATAL` /
//! `TOTAL_ERR_FATAL` last. Current kernels print short names (`RxErr`, `BadTLP`, `BadDLLP`,
//! `Rollover`, `Timeout`, ...; `CmpltTO`, `MalfTLP`, `UnsupReq`, ...), older ones (and the ABI
//! document's sample) long names with spaces (`Receiver Error 2`, `RELAY_NUM Rollover 0`): the
//! count is the line's last word, the name everything before it.
//!
//! One file as `cat` prints it, or several as `head -v -n 40 FILE...` prints them (coreutils:
//! a `==> PATH <==` line before each file, a blank line between):
//!
//! ```text
//! ==> /sys/devices/pci0000:17/0000:17:01.0/0000:18:00.0/0000:19:01.0/0000:1b:00.0/aer_dev_correctable <==
//! RxErr 0
//! BadTLP 37
//! ...
//! TOTAL_ERR_COR 37
//! ```
//!
//! From a path, the device (the directory holding the file, a PCI address) and the one above it
//! (its parent in the sysfs device tree: the switch or root port the device's link goes to),
//! where those are PCI addresses. The TOTAL counts ERR_* messages: several errors reported in
//! one message count once there (the kernel's note), so it may be below the sum of the lines.
//!
//! Recognised evidence: a `TOTAL_ERR_*` line.

use super::util::{numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

const KIND: &str = "aer";

/// One `aer_dev_*` file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AerFile {
    /// The `==> PATH <==` header's path (`head -v`), when there was one.
    pub path: Option<String>,
    /// The PCI address of the device the file belongs to (`0000:1b:00.0`), from the path.
    pub device: Option<String>,
    /// The PCI address of the port above it in the path (`0000:19:01.0`): where its link goes.
    pub parent: Option<String>,
    /// `correctable`, `nonfatal` or `fatal` (from the TOTAL line, else the file name).
    pub severity: String,
    /// Every error type's count, by the name the kernel prints.
    pub counters: BTreeMap<String, u64>,
    /// The `TOTAL_ERR_*` count (messages received), 0 when the file was cut before it.
    pub total: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Aer {
    pub files: Vec<AerFile>,
}

fn is_bdf(s: &str) -> bool {
    regex!(r"^[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$").is_match(s)
}

/// A file begun by a `==> PATH <==` header: its device and parent from the path.
fn from_path(path: &str) -> AerFile {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let at = |back: usize| {
        parts
            .len()
            .checked_sub(back)
            .map(|i| parts[i])
            .filter(|p| is_bdf(p))
            .map(str::to_string)
    };
    let name = parts.last().copied().unwrap_or("");
    AerFile {
        path: Some(path.to_string()),
        device: at(2),
        parent: at(3),
        severity: name.strip_prefix("aer_dev_").unwrap_or("").to_string(),
        ..AerFile::default()
    }
}

fn severity_of_total(name: &str) -> Option<&'static str> {
    match name {
        "TOTAL_ERR_COR" => Some("correctable"),
        "TOTAL_ERR_NONFATAL" => Some("nonfatal"),
        "TOTAL_ERR_FATAL" => Some("fatal"),
        _ => None,
    }
}

/// Close the file being read (if it has anything): a file without a TOTAL line needs its
/// severity from its path.
fn close(out: &mut Aer, cur: &mut Option<AerFile>, n: usize, line: &str) -> Result<(), ParseError> {
    if let Some(f) = cur.take() {
        if !matches!(f.severity.as_str(), "correctable" | "nonfatal" | "fatal") {
            return Err(ParseError::new(
                KIND,
                n,
                line,
                "an AER statistics file ended without its TOTAL_ERR_* line and its path names no aer_dev_correctable/nonfatal/fatal",
            ));
        }
        out.files.push(f);
    }
    Ok(())
}

pub fn parse(text: &str) -> Result<Aer, ParseError> {
    let mut out = Aer::default();
    let mut cur: Option<AerFile> = None;
    let mut totals = 0;
    for (n, line) in numbered(text) {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(c) = regex!(r"^==> (.+) <==$").captures(t) {
            close(&mut out, &mut cur, n, line)?;
            cur = Some(from_path(&c[1]));
            continue;
        }
        let Some(c) = regex!(r"^(\S.*?)\s+(\d+)$").captures(t) else {
            return Err(ParseError::new(
                KIND,
                n,
                line,
                "expected `NAME COUNT` (an AER statistics line) or a `==> PATH <==` header",
            ));
        };
        let (name, count) = (c[1].to_string(), c[2].parse::<u64>().unwrap_or(u64::MAX));
        let f = cur.get_or_insert_with(AerFile::default);
        if let Some(sev) = severity_of_total(&name) {
            f.severity = sev.to_string();
            f.total = count;
            totals += 1;
            close(&mut out, &mut cur, n, line)?;
        } else {
            f.counters.insert(name, count);
        }
    }
    close(&mut out, &mut cur, 0, "")?;
    if totals == 0 {
        return Err(unrecognised(
            KIND,
            text,
            "no TOTAL_ERR_COR / TOTAL_ERR_NONFATAL / TOTAL_ERR_FATAL line",
        ));
    }
    Ok(out)
}

crate::impl_shape!(AerFile, parsed("aer statistics file"));
crate::impl_shape!(Aer, parsed("aer result").many::<AerFile>("files"));

crate::parser!("aer", "head -v -n 40 /sys/bus/pci/devices/BDF/aer_dev_{correctable,nonfatal,fatal} (or cat of one)", sample: "aer/aer_dev_correctable-node-exporter-sys-ttar-nvme-01-00-0-all-zero.txt");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_v_headers_name_the_device_and_the_port_above() {
        let t = "==> /sys/devices/pci0000:17/0000:17:01.0/0000:19:01.0/0000:1b:00.0/aer_dev_correctable <==\nRxErr 3\nBadTLP 37\nTOTAL_ERR_COR 38\n\n==> /sys/devices/pci0000:17/0000:17:01.0/0000:19:01.0/aer_dev_nonfatal <==\nCmpltTO 1\nTOTAL_ERR_NONFATAL 1\n";
        let a = parse(t).unwrap();
        assert_eq!(a.files.len(), 2);
        let f = &a.files[0];
        assert_eq!(
            (f.device.as_deref(), f.parent.as_deref()),
            (Some("0000:1b:00.0"), Some("0000:19:01.0"))
        );
        assert_eq!((f.severity.as_str(), f.total), ("correctable", 38));
        assert_eq!(f.counters["BadTLP"], 37);
        let p = &a.files[1];
        assert_eq!(
            (p.device.as_deref(), p.parent.as_deref()),
            (Some("0000:19:01.0"), Some("0000:17:01.0"))
        );
        assert_eq!((p.severity.as_str(), p.total), ("nonfatal", 1));
        // a port straight on the root bus has no parent address
        let r = parse(
            "==> /sys/devices/pci0000:00/0000:00:06.0/aer_dev_fatal <==\nTOTAL_ERR_FATAL 0\n",
        )
        .unwrap();
        assert_eq!(r.files[0].parent, None);
    }

    #[test]
    fn other_input_is_refused() {
        assert!(parse("").is_err());
        assert!(parse("RxErr 0\nBadTLP 0\n").is_err());
        assert!(parse("RxErr zero\nTOTAL_ERR_COR 0\n").is_err());
        assert!(parse(
            "==> /tmp/x <==\nRxErr 1\n==> /tmp/y/aer_dev_fatal <==\nTOTAL_ERR_FATAL 0\n"
        )
        .is_err());
    }
}
