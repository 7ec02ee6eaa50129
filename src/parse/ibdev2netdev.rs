//! `ibdev2netdev` (MLNX_OFED / DOCA helper script), plain and `-v`.
//!
//! Handles: any RDMA device naming (`mlx5_0`, `mlx5_bond_0`, `hrn3_bond_0`, `rocep1s0f0`,
//! `roceP2p1s0f0`), netdevs with PCI-domain names, `(Up)` / `(Down)` states, and the `-v` form
//! `0000:08:00.0 mlx5_0 (MT4123 - ...) ... fw X port 1 (ACTIVE) ==> ib0 (Up)` (port state kept
//! in `port_state`). Every non-blank line must match.

use super::util::{numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};

const KIND: &str = "ibdev2netdev";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Mapping {
    pub rdma_device: String,
    pub port: u32,
    pub netdev: String,
    /// Netdev state as printed (`Up`, `Down`).
    pub state: String,
    /// `-v` only: IB port state (`ACTIVE`, `DOWN`, ...).
    pub port_state: Option<String>,
    /// `-v` only: PCI address.
    pub pci: Option<String>,
}

pub fn parse(text: &str) -> Result<Vec<Mapping>, ParseError> {
    let mut out = Vec::new();
    for (n, line) in numbered(text) {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(c) = regex!(r"^(\S+) port (\d+) <?==> (\S+) \((\w+)\)$").captures(t) {
            if let Ok(port) = c[2].parse() {
                out.push(Mapping {
                    rdma_device: c[1].to_string(),
                    port,
                    netdev: c[3].to_string(),
                    state: c[4].to_string(),
                    ..Mapping::default()
                });
                continue;
            }
        }
        if let Some(c) =
            regex!(r"^(\S+) (\S+) \(.*\bport (\d+) \((\w+)\) <?==> (\S+) \((\w+)\)$").captures(t)
        {
            if let Ok(port) = c[3].parse() {
                out.push(Mapping {
                    rdma_device: c[2].to_string(),
                    port,
                    netdev: c[5].to_string(),
                    state: c[6].to_string(),
                    port_state: Some(c[4].to_string()),
                    pci: Some(c[1].to_string()),
                });
                continue;
            }
        }
        return Err(ParseError::new(
            KIND,
            n,
            line,
            "expected `DEV port N ==> NETDEV (State)`",
        ));
    }
    // With no RDMA device at all the tool prints nothing: that is an answer (an empty list),
    // not unrecognisable output.
    if out.is_empty() && !text.trim().is_empty() {
        return Err(unrecognised(
            KIND,
            text,
            "no `DEV port N ==> NETDEV (State)` line",
        ));
    }
    Ok(out)
}

crate::impl_shape!(Mapping, parsed("ibdev2netdev entry"));

crate::parser!("ibdev2netdev", "ibdev2netdev", sample: "rdma/ibdev2netdev-roce-lag-bond-mlx5_bond_0-and-huawei-hrn3.txt");

#[cfg(test)]
mod empty_output_tests {
    #[test]
    fn no_device_prints_nothing_and_parses_as_an_empty_list() {
        assert!(super::parse("").unwrap().is_empty());
        assert!(super::parse("\n").unwrap().is_empty());
        assert!(super::parse("garbage line\n").is_err());
    }
}
