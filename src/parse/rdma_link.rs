//! `rdma link` / `rdma link show` (iproute2).
//!
//! Handles: the current format `link rocep0s8/1 state ACTIVE physical_state LINK_UP netdev
//! enp0s8` and the old one with an index prefix `8/1: mlx5_bond_0/1: state ACTIVE ...`
//! (indexes of any width), IB ports with `subnet_prefix` / `lid` / `sm_lid` / `lmc` and no
//! netdev, trailing spaces and indentation. Every non-blank line must match.

use super::util::{numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};

const KIND: &str = "rdma-link";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Link {
    pub rdma_device: String,
    pub port: u32,
    pub state: Option<String>,
    pub physical_state: Option<String>,
    pub netdev: Option<String>,
    pub lid: Option<u64>,
    pub sm_lid: Option<u64>,
    pub subnet_prefix: Option<String>,
}

pub fn parse(text: &str) -> Result<Vec<Link>, ParseError> {
    let mut out = Vec::new();
    for (n, line) in numbered(text) {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let c = regex!(r"^link (\S+)/(\d+)\s*(.*)$")
            .captures(t)
            .or_else(|| regex!(r"^\d+/\d+:\s+(\S+)/(\d+):\s*(.*)$").captures(t));
        let Some(c) = c else {
            return Err(ParseError::new(
                KIND,
                n,
                line,
                "expected `link DEV/PORT state ...`",
            ));
        };
        let Ok(port) = c[2].parse() else {
            return Err(ParseError::new(KIND, n, line, "port number out of range"));
        };
        let mut link = Link {
            rdma_device: c[1].to_string(),
            port,
            ..Link::default()
        };
        let words: Vec<&str> = c[3].split_whitespace().collect();
        for pair in words.windows(2) {
            let v = pair[1].to_string();
            match pair[0] {
                "state" => link.state = Some(v),
                "physical_state" => link.physical_state = Some(v),
                "netdev" => link.netdev = Some(v),
                "lid" => link.lid = v.parse().ok(),
                "sm_lid" => link.sm_lid = v.parse().ok(),
                "subnet_prefix" => link.subnet_prefix = Some(v),
                _ => {}
            }
        }
        out.push(link);
    }
    // With no RDMA device at all the tool prints nothing: that is an answer (an empty list),
    // not unrecognisable output.
    if out.is_empty() && !text.trim().is_empty() {
        return Err(unrecognised(KIND, text, "no `link DEV/PORT ...` line"));
    }
    Ok(out)
}

crate::impl_shape!(Link, parsed("rdma link entry"));

crate::parser!("rdma-link", "rdma link", sample: "rdma/rdma-link-softroce-rxe-renamed-rocep-trailing-space.txt");

#[cfg(test)]
mod empty_output_tests {
    #[test]
    fn no_device_prints_nothing_and_parses_as_an_empty_list() {
        assert!(super::parse("").unwrap().is_empty());
        assert!(super::parse("\n").unwrap().is_empty());
        assert!(super::parse("garbage line\n").is_err());
    }
}
