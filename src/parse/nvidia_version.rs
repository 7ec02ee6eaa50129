//! `/proc/driver/nvidia/version`: the loaded NVIDIA kernel module, proprietary
//! (`NVRM version: NVIDIA UNIX x86_64 Kernel Module  515.76  Mon Sep 12 …`) or the open GPU
//! kernel modules (`NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release
//! Build …`). GPUDirect RDMA through DMA-BUF (instead of nvidia-peermem) needs the open modules.
//!
//! Handles: both forms, any architecture word (`x86_64`, `aarch64`), the `GCC version:` line
//! (kept).
//!
//! Recognised evidence: an `NVRM version:` line with a version number.

use super::util::{numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};

const KIND: &str = "nvidia-version";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NvidiaVersion {
    /// `580.95.05`.
    pub version: String,
    /// The open GPU kernel modules (`Open Kernel Module`).
    pub open: bool,
    /// `x86_64`, `aarch64`.
    pub arch: Option<String>,
    pub gcc: Option<String>,
}

pub fn parse(text: &str) -> Result<NvidiaVersion, ParseError> {
    let mut out: Option<NvidiaVersion> = None;
    for (_, line) in numbered(text) {
        let t = line.trim();
        if let Some(c) =
            regex!(r"^NVRM version: NVIDIA UNIX Open Kernel Module for (\S+)\s+(\d[\d.]*)")
                .captures(t)
        {
            out = Some(NvidiaVersion {
                version: c[2].to_string(),
                open: true,
                arch: Some(c[1].to_string()),
                gcc: None,
            });
        } else if let Some(c) =
            regex!(r"^NVRM version: NVIDIA UNIX (\S+) Kernel Module\s+(\d[\d.]*)").captures(t)
        {
            out = Some(NvidiaVersion {
                version: c[2].to_string(),
                open: false,
                arch: Some(c[1].to_string()),
                gcc: None,
            });
        } else if let (Some(o), Some(g)) = (out.as_mut(), t.strip_prefix("GCC version:")) {
            o.gcc = Some(g.trim().to_string());
        }
    }
    out.ok_or_else(|| {
        unrecognised(
            KIND,
            text,
            "no `NVRM version: NVIDIA UNIX ... Kernel Module VERSION` line",
        )
    })
}

crate::impl_shape!(NvidiaVersion, parsed("nvidia kernel module"));

crate::parser!("nvidia-version", "cat /proc/driver/nvidia/version", sample: "nvidia-smi/proc-driver-nvidia-version-open-kernel-module-580.txt");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_and_proprietary_modules_are_told_apart() {
        let o = parse(include_str!(
            "../../tests/fixtures/nvidia-smi/proc-driver-nvidia-version-open-kernel-module-580.txt"
        ))
        .unwrap();
        assert_eq!(
            (o.version.as_str(), o.open, o.arch.as_deref()),
            ("580.95.05", true, Some("x86_64"))
        );
        let p = parse(include_str!(
            "../../tests/fixtures/nvidia-smi/proc-driver-nvidia-version-proprietary-515.txt"
        ))
        .unwrap();
        assert_eq!((p.version.as_str(), p.open), ("515.76", false));
        assert!(parse("cat: /proc/driver/nvidia/version: No such file or directory\n").is_err());
    }
}
