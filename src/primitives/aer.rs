//! `n.aer_stats(dirs)`: the kernel's AER statistics of PCIe devices (`head -v -n 40` of each
//! sysfs device directory's `aer_dev_correctable`, `aer_dev_nonfatal`, `aer_dev_fatal`).

use super::tools::{failed, tool};
use super::{parsed, NodeRef, PResult, PrimError};
use crate::parse::aer;

/// A sysfs device directory as the check passes it (`/sys/devices/pci0000:17/…/0000:1b:00.0`):
/// no quoting needed, nothing else accepted.
fn sysfs_dir(d: &str) -> PResult<&str> {
    let ok = d.starts_with("/sys/")
        && !d.contains("..")
        && d.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | ':' | '.' | '_' | '-'));
    if ok {
        Ok(d)
    } else {
        Err(PrimError::error(format!(
            "n.aer_stats: {d:?} is not a sysfs device directory (/sys/..., letters, digits, / : . _ -)"
        )))
    }
}

/// `n.aer_stats(dirs)`: `dirs` (sysfs device directories, space-separated) read with one
/// `head -v -n 40` of their three AER files, parsed (`parse::aer`). A file that is not there
/// (no AER capability, AER off in firmware, a kernel without CONFIG_PCIEAER, a VM's virtual
/// PCIe) is left out of the result, not an error: head says so on stderr and exits 1. Nothing
/// read at all: an empty list.
pub(crate) fn aer_stats(n: &NodeRef, dirs: &str) -> PResult<aer::Aer> {
    let mut files = vec![];
    for d in dirs.split_whitespace() {
        let d = sysfs_dir(d)?.trim_end_matches('/');
        for s in ["correctable", "nonfatal", "fatal"] {
            files.push(format!("{d}/aer_dev_{s}"));
        }
    }
    if files.is_empty() {
        return Ok(aer::Aer::default());
    }
    let cmd = format!("head -v -n 40 {}", files.join(" "));
    let o = tool(n, "head", &cmd, None, None)?;
    if o.stdout.trim().is_empty() {
        if matches!(o.exit_code, Some(0) | Some(1)) {
            return Ok(aer::Aer::default());
        }
        return Err(failed(n, "head -v -n 40 …/aer_dev_*", &o));
    }
    parsed(n.name(), &o.stdout, aer::parse)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_sysfs_directories_are_read() {
        assert!(sysfs_dir("/sys/devices/pci0000:17/0000:17:01.0/0000:1b:00.0").is_ok());
        assert!(sysfs_dir("/etc/passwd").is_err());
        assert!(sysfs_dir("/sys/devices/../../etc").is_err());
        assert!(sysfs_dir("/sys/x;reboot").is_err());
        assert!(sysfs_dir("/sys/a b").is_err());
    }
}
