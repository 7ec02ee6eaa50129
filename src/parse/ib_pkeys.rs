//! The P_Key tables of a node's InfiniBand ports from sysfs, as a terminal shows `cat` of each
//! entry: `cat /sys/class/infiniband/DEV/ports/PORT/pkeys/INDEX` followed by its value
//! (`0x800b`). fabcheck prints the non-zero entries that way (`n.ib_pkeys()`); the values are
//! the kernel's `%#06x` of the 16-bit P_Key: bit 15 is membership (1 full, 0 limited), the low
//! 15 bits the partition (`0x7fff` the default partition).
//!
//! Handles: any number of `cat PATH` / value pairs, blank lines, values without a `cat` line
//! before them (an error naming the line).
//!
//! Recognised evidence: at least one `cat /sys/class/infiniband/…/pkeys/N` line with a value.

use super::util::{numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};

const KIND: &str = "ib-pkeys";

/// One P_Key table entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Pkey {
    pub device: String,
    pub port: u32,
    pub index: u32,
    /// As printed (`0x800b`).
    pub pkey: String,
    /// The partition (low 15 bits), `0x000b`.
    pub partition: String,
    /// Bit 15: a full member (may talk to every member); else limited (only to full members).
    pub full: bool,
}

pub fn parse(text: &str) -> Result<Vec<Pkey>, ParseError> {
    let mut out = Vec::new();
    let mut at: Option<(String, u32, u32)> = None;
    for (n, line) in numbered(text) {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(c) =
            regex!(r"^cat\s+/sys/class/infiniband/([^/\s]+)/ports/(\d+)/pkeys/(\d+)$").captures(t)
        {
            at = Some((
                c[1].to_string(),
                c[2].parse().unwrap_or(0),
                c[3].parse().unwrap_or(0),
            ));
            continue;
        }
        let (Some((device, port, index)), Some(c)) =
            (at.take(), regex!(r"^0x([0-9a-fA-F]{1,4})$").captures(t))
        else {
            return Err(ParseError::new(
                KIND,
                n,
                line,
                "expected `cat /sys/class/infiniband/DEV/ports/N/pkeys/I` followed by its value (0xNNNN)",
            ));
        };
        let v = u16::from_str_radix(&c[1], 16).unwrap_or(0);
        out.push(Pkey {
            device,
            port,
            index,
            pkey: t.to_string(),
            partition: format!("{:#06x}", v & 0x7fff),
            full: v & 0x8000 != 0,
        });
    }
    if out.is_empty() {
        return Err(unrecognised(
            KIND,
            text,
            "no `cat .../pkeys/N` line with its value",
        ));
    }
    Ok(out)
}

crate::impl_shape!(Pkey, parsed("ib pkey"));

crate::parser!("ib-pkeys", "cat /sys/class/infiniband/DEV/ports/N/pkeys/I (each entry after its cat line)", sample: "rdma/sysfs-pkeys-azure-hpc-tenant-0x800b-default-limited-0x7fff.txt");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_and_limited_members_are_told_apart() {
        let p = parse(include_str!(
            "../../tests/fixtures/rdma/sysfs-pkeys-azure-hpc-tenant-0x800b-default-limited-0x7fff.txt"
        ))
        .unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!((p[0].partition.as_str(), p[0].full), ("0x000b", true));
        assert_eq!((p[1].partition.as_str(), p[1].full), ("0x7fff", false));
        assert_eq!(
            (p[1].device.as_str(), p[1].port, p[1].index),
            ("mlx5_0", 1, 1)
        );
        assert!(parse("0xffff\n").is_err());
    }
}
