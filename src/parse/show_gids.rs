//! `show_gids` (MLNX_OFED / DOCA `mlnx-tools`): the RoCE GID table of every RDMA port, read by
//! the script from `/sys/class/infiniband/DEV/ports/PORT/gids/INDEX` and
//! `gid_attrs/{types,ndevs}/INDEX`.
//!
//! Handles: the tab-separated output as printed (`IPv4` column padded with spaces, empty for
//! link-local GIDs), terminal copies with spaces instead of tabs, the `n_gids_found=N` trailer
//! (checked against the rows), a missing netdev column (InfiniBand ports), `VER` and `DEV`
//! glued in the header (`VERDEV`), grep-filtered output without header.
//!
//! Recognised evidence: the `DEV PORT INDEX GID` header or at least one GID row; any other
//! non-blank line is an error.

use super::util::{numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};
use std::net::Ipv4Addr;

const KIND: &str = "show-gids";

/// One GID table entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Gid {
    /// RDMA device, e.g. `mlx5_0`, `mlx5_bond_0`.
    pub device: String,
    pub port: u32,
    /// GID index (what `ib_write_bw -x` and `NCCL_IB_GID_INDEX` take).
    pub index: u32,
    /// The GID as printed, e.g. `0000:0000:0000:0000:0000:ffff:0a60:531a`.
    pub gid: String,
    /// The IPv4 address of an IPv4-mapped GID (the `IPv4` column), `None` for other GIDs.
    pub ipv4: Option<String>,
    /// RoCE version: `v1` or `v2` (the `VER` column).
    pub roce_version: String,
    /// The netdev the GID belongs to (the last `DEV` column); `None` when empty (InfiniBand).
    pub netdev: Option<String>,
}

fn is_header(t: &str) -> bool {
    regex!(r"^DEV\s+PORT\s+INDEX\s+GID\s+IPv4\s+VER\s*DEV$").is_match(t)
        || regex!(r"^---\s+----\s+-----\s+---\s+-+\s+---\s*---$").is_match(t)
}

fn row(t: &str) -> Option<Gid> {
    let c = regex!(
        r"^(\S+)\s+(\d+)\s+(\d+)\s+((?:[0-9a-fA-F]{4}:){7}[0-9a-fA-F]{4})\s+(?:(\d+\.\d+\.\d+\.\d+)\s+)?(v1|v2)(?:\s+(\S+))?$"
    )
    .captures(t)?;
    let ipv4 = c.get(5).map(|m| m.as_str().to_string());
    if ipv4
        .as_deref()
        .is_some_and(|a| a.parse::<Ipv4Addr>().is_err())
    {
        return None;
    }
    Some(Gid {
        device: c[1].to_string(),
        port: c[2].parse().ok()?,
        index: c[3].parse().ok()?,
        gid: c[4].to_string(),
        ipv4,
        roce_version: c[6].to_string(),
        netdev: c.get(7).map(|m| m.as_str().to_string()),
    })
}

pub fn parse(text: &str) -> Result<Vec<Gid>, ParseError> {
    let mut out = Vec::new();
    let mut header = false;
    for (n, line) in numbered(text) {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if is_header(t) {
            header = true;
            continue;
        }
        if let Some(c) = regex!(r"^n_gids_found=(\d+)$").captures(t) {
            if c[1].parse::<usize>().ok() != Some(out.len()) {
                return Err(ParseError::new(
                    KIND,
                    n,
                    line,
                    format!(
                        "trailer counts {} GIDs but {} rows were read",
                        &c[1],
                        out.len()
                    ),
                ));
            }
            continue;
        }
        match row(t) {
            Some(g) => out.push(g),
            None => {
                return Err(ParseError::new(
                    KIND,
                    n,
                    line,
                    "expected `DEV PORT INDEX GID [IPv4] v1|v2 [NETDEV]`",
                ))
            }
        }
    }
    if !header && out.is_empty() {
        return Err(unrecognised(
            KIND,
            text,
            "no `show_gids` header and no GID rows",
        ));
    }
    Ok(out)
}

crate::impl_shape!(Gid, parsed("show_gids entry"));

crate::parser!("show-gids", "show_gids", sample: "rdma/show_gids-mlx5_bond_0-tabs-ipv4-v1-v2-n_gids_found.txt");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glued_ver_dev_header_and_errors() {
        let t = "DEV     PORT    INDEX   GID                                     IPv4            VERDEV\n---     ----    -----   ---                                     ------------    ------\nmlx5_0  1       3       0000:0000:0000:0000:0000:ffff:0ac8:0301 10.200.3.1      v2 fabric-06\n";
        let g = parse(t).unwrap();
        assert_eq!(g[0].index, 3);
        assert_eq!(g[0].ipv4.as_deref(), Some("10.200.3.1"));
        assert_eq!(g[0].netdev.as_deref(), Some("fabric-06"));
        let e = parse("mlx5_0 1 0 fe80::1 v2 eth0\n").unwrap_err();
        assert_eq!(e.line, 1);
        let e =
            parse("mlx5_0  1  0  fe80:0000:0000:0000:0000:0000:0000:0001  v1  e\nn_gids_found=2\n")
                .unwrap_err();
        assert!(e.reason.contains("trailer"), "{e}");
        assert!(parse("").is_err());
        assert!(
            parse("mlx5_0 1 2 0000:0000:0000:0000:0000:ffff:0ac8:0301 999.1.1.1 v2 e\n").is_err()
        );
    }
}
