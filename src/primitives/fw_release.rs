//! NVIDIA's release table (issue 46 item 5): the ConnectX firmware each DOCA-Host release
//! bundles, by the driver stream its out-of-tree `mlx5_core` reports (`ethtool -i`'s `version:
//! 24.10-1.1.4`, `25.07-0.9.7`). A node whose firmware is of another stream than the one its
//! running driver's release bundles is outside the combinations NVIDIA released and tested:
//! a warning naming the node, its devices, both versions and the source, even when every node
//! is the same (drift cannot see that). Pure: no node is asked.
//!
//! Sources, one "General Support" page per release (the "Adapter Card / Bundled Firmware
//! Version" table), docs.nvidia.com/doca/archive/<release>/General+Support:
//! 2-9-0, 2-9-1, 2-9-2, 2-9-3, 2-10-0, 3-0-0, 3-1-0. The driver stream of a release: DOCA 2.9.x
//! ships OFED 24.10 (its page lists `fwctl-modules 24.10.OFED.24.10.2.1.8.1`); DOCA 3.1.0 ships
//! `OFED-internal-25.07-0.9.7` (its download page, as quoted in public READMEs); DOCA 2.10.0 and
//! 3.0.0 carry BMC firmware and clusterkit builds of 25.01 and 25.04, the streams their OFED
//! versions are numbered by. docs/checks.md "Firmware against the driver's release" lists them.
//!
//! Not judged: the inbox kernel driver (its version is the kernel release: no NVIDIA release
//! table applies, and DGX Spark runs it), a driver stream or a device family not in the table
//! (said in the log, never a warning), and a site that names its firmware (`firmware`: the
//! site validated its own combination, and the intent check judges it).

use serde::{Deserialize, Serialize};

/// One DOCA-Host release: its driver stream and the firmware it bundles per device family.
struct Release {
    doca: &'static str,
    stream: &'static str,
    bundled: &'static [&'static str],
}

const RELEASES: &[Release] = &[
    Release {
        doca: "2.9.0",
        stream: "24.10",
        bundled: &["28.43.1014", "22.43.1014", "26.43.1014", "20.43.1014"],
    },
    Release {
        doca: "2.9.1",
        stream: "24.10",
        bundled: &["28.43.2026", "22.43.2026", "26.43.2026", "20.43.2026"],
    },
    Release {
        doca: "2.9.2",
        stream: "24.10",
        bundled: &["28.43.2566", "22.43.2566", "26.43.2566", "20.43.2566"],
    },
    Release {
        doca: "2.9.3",
        stream: "24.10",
        bundled: &["28.43.3608", "22.43.3608", "26.43.3608", "20.43.3608"],
    },
    Release {
        doca: "2.10.0",
        stream: "25.01",
        bundled: &[
            "40.44.1036",
            "28.44.1036",
            "22.44.1036",
            "26.44.1036",
            "20.43.2026",
        ],
    },
    Release {
        doca: "3.0.0",
        stream: "25.04",
        bundled: &[
            "40.45.1020",
            "28.45.1020",
            "22.45.1020",
            "26.45.1020",
            "20.43.2566",
        ],
    },
    Release {
        doca: "3.1.0",
        stream: "25.07",
        bundled: &[
            "40.46.1006",
            "28.46.1006",
            "22.46.1006",
            "26.46.1006",
            "20.43.3608",
        ],
    },
];

/// The device family a firmware's first number names.
fn family(major: &str) -> Option<&'static str> {
    Some(match major {
        "40" => "ConnectX-8",
        "28" => "ConnectX-7",
        "26" => "ConnectX-6 Lx",
        "22" => "ConnectX-6 Dx",
        "20" => "ConnectX-6",
        _ => return None,
    })
}

/// The verdict on one (driver, firmware) combination.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct FwRelease {
    /// `ok`: the firmware is of the stream the driver's release bundles; `outside`: another
    /// stream (a warning); `unknown`: the table does not say (inbox driver, a stream or a
    /// family it lacks, a version it cannot read).
    pub verdict: String,
    /// What was judged, for the log or the warning.
    pub note: String,
}

fn verdict(v: &str, note: String) -> FwRelease {
    FwRelease {
        verdict: v.to_string(),
        note,
    }
}

/// `28.45.4028 (NVD0000000087)` -> ("28", "45").
fn fw_stream(firmware: &str) -> Option<(&str, &str)> {
    let word = firmware.split_whitespace().next()?;
    let mut parts = word.split('.');
    let (major, minor, _) = (parts.next()?, parts.next()?, parts.next()?);
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(major) && digits(minor)).then_some((major, minor))
}

/// `24.10-1.1.4` -> "24.10"; a kernel release (`6.11.0-1016-nvidia`) or anything else: None.
fn driver_stream(version: &str) -> Option<&str> {
    let (stream, _) = version.split_once('-')?;
    let (yy, mm) = stream.split_once('.')?;
    let two = |s: &str| s.len() == 2 && s.bytes().all(|b| b.is_ascii_digit());
    (two(yy) && two(mm)).then_some(stream)
}

/// Judge firmware `firmware` (as `ethtool -i` prints it) under the driver of version
/// `driver_version`; `kernel` is the node's release (`uname -r`): a driver of that version is
/// the inbox one.
pub(crate) fn fw_release(driver_version: &str, firmware: &str, kernel: &str) -> FwRelease {
    if driver_version == kernel {
        return verdict(
            "unknown",
            format!("the inbox driver of kernel {kernel}: no NVIDIA release table applies"),
        );
    }
    let Some(stream) = driver_stream(driver_version) else {
        return verdict(
            "unknown",
            format!("driver version {driver_version} is not a DOCA/MLNX_OFED release number"),
        );
    };
    let Some((major, minor)) = fw_stream(firmware) else {
        return verdict(
            "unknown",
            format!("firmware {firmware} is not read as XX.YY.ZZZZ"),
        );
    };
    let Some(fam) = family(major) else {
        return verdict(
            "unknown",
            format!("firmware {firmware}: a device family the release table does not list"),
        );
    };
    let rel: Vec<&Release> = RELEASES.iter().filter(|r| r.stream == stream).collect();
    if rel.is_empty() {
        return verdict(
            "unknown",
            format!("driver stream {stream} is not in the release table (DOCA 2.9.0 to 3.1.0)"),
        );
    }
    let bundled: Vec<&str> = rel
        .iter()
        .filter_map(|r| {
            r.bundled
                .iter()
                .find(|f| f.starts_with(&format!("{major}.")))
        })
        .copied()
        .collect();
    let docas: Vec<&str> = rel.iter().map(|r| r.doca).collect();
    let within = bundled
        .iter()
        .any(|b| fw_stream(b).map(|s| s.1) == Some(minor));
    let said = format!(
        "{fam} firmware {} under driver {driver_version} (DOCA {}, which bundles {fam} firmware {})",
        firmware.split_whitespace().next().unwrap_or(firmware),
        docas.join("/"),
        bundled.join(", ")
    );
    if within {
        verdict("ok", said)
    } else {
        verdict(
            "outside",
            format!("{said}: a combination outside NVIDIA's release table (docs/checks.md#firmware-against-the-drivers-release); update the firmware with the driver (mlxfwmanager), or name the firmware the site validated with --set firmware=VERSION"),
        )
    }
}

crate::impl_shape!(FwRelease, parsed("fw_release result"));

#[cfg(test)]
mod tests {
    use super::*;

    const KERNEL: &str = "6.11.0-1016-nvidia";

    #[test]
    fn firmware_of_the_drivers_release_stream_is_within() {
        let r = fw_release("24.10-1.1.4", "28.43.2566 (MT_0000000838)", KERNEL);
        assert_eq!(r.verdict, "ok", "{r:?}");
        let r = fw_release("25.07-0.9.7", "28.46.1006", KERNEL);
        assert_eq!(r.verdict, "ok", "{r:?}");
    }

    #[test]
    fn firmware_of_another_stream_is_outside_naming_both() {
        let r = fw_release("25.07-0.9.7", "28.43.1014 (NVD0000000087)", KERNEL);
        assert_eq!(r.verdict, "outside", "{r:?}");
        assert!(r
            .note
            .contains("ConnectX-7 firmware 28.43.1014 under driver 25.07-0.9.7"));
        assert!(r
            .note
            .contains("DOCA 3.1.0, which bundles ConnectX-7 firmware 28.46.1006"));
        // a newer firmware than the driver's release is outside too
        let r = fw_release("24.10-2.1.8", "28.46.1006", KERNEL);
        assert_eq!(r.verdict, "outside", "{r:?}");
        assert!(r.note.contains("DOCA 2.9.0/2.9.1/2.9.2/2.9.3"), "{r:?}");
    }

    #[test]
    fn the_inbox_driver_an_unknown_stream_or_family_is_not_judged() {
        for (drv, fw) in [
            (KERNEL, "28.45.4028 (NVD0000000087)"),
            ("23.10-1.1.9", "28.39.1002"),
            ("25.07-0.9.7", "16.35.4030"),
            ("25.07-0.9.7", "garbage"),
            ("5.8-1.1.2", "28.43.1014"),
        ] {
            let r = fw_release(drv, fw, KERNEL);
            assert_eq!(r.verdict, "unknown", "{drv} {fw}: {r:?}");
        }
    }
}
