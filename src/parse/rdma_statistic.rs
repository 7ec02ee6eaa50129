//! `rdma statistic show [link DEV/PORT]` (iproute2): the RDMA port counters that the kernel also
//! exposes as `/sys/class/infiniband/DEV/ports/PORT/hw_counters/*` (`out_of_sequence`,
//! `packet_seq_err`, `local_ack_timeout_err`, `rnr_nak_retry_err`, `duplicate_request`,
//! `np_cnp_sent`, `rp_cnp_handled`, ...).
//!
//! Handles: one `link DEV/PORT name value name value ...` line per port; the same wrapped over
//! several lines (terminal or mail wrapping, even between a name and its value); the `-p` form
//! (`link DEV/PORT` then one `name value` per indented line); `Optional-set:` lines of optional
//! counters (kept apart in `optional_counters`). Which counters exist depends on the driver and
//! kernel, so counters are a map keyed by the kernel's names.
//!
//! Also `show_counters DEV` (mlnx-tools), which reads the same `hw_counters` files and prints
//! `Port N hw counters:` then `name: value` lines; it does not print the device, so `device` is
//! empty (the caller knows which DEV it asked for).
//!
//! Recognised evidence: at least one `link DEV/PORT` or `Port N hw counters:` line; a name
//! without an integer value, or anything before the first of those lines, is an error.

use super::util::{numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

const KIND: &str = "rdma-statistic";

/// One RDMA port's counters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PortCounters {
    /// RDMA device, e.g. `mlx5_0`, `rocep1s0f1`.
    pub device: String,
    /// Port number (1-based).
    pub port: u32,
    /// Counter name (the `hw_counters` file name) → value.
    pub counters: BTreeMap<String, u64>,
    /// Optional counters enabled with `rdma statistic add ... optional-set` (e.g. `cc_rx_ce_pkts`).
    pub optional_counters: BTreeMap<String, u64>,
}

pub fn parse(text: &str) -> Result<Vec<PortCounters>, ParseError> {
    let mut out: Vec<PortCounters> = Vec::new();
    let mut optional = false;
    // A counter name whose value is on a later line (wrapped output): (name, line number, line).
    let mut pending: Option<(String, usize, String)> = None;
    // `show_counters DEV` (mlnx-tools) prints `Port N hw counters:` then `name: value` lines.
    let mut show_counters = false;
    for (n, line) in numbered(text) {
        if let Some(c) = regex!(r"^Port (\d+) hw counters:$").captures(line.trim()) {
            out.push(PortCounters {
                port: c[1]
                    .parse()
                    .map_err(|_| ParseError::new(KIND, n, line, "bad port"))?,
                ..PortCounters::default()
            });
            show_counters = true;
            continue;
        }
        if show_counters && !line.trim().is_empty() {
            let c = regex!(r"^(\w+):\s*(\d+)$").captures(line.trim());
            let (Some(c), Some(cur)) = (c, out.last_mut()) else {
                return Err(ParseError::new(
                    KIND,
                    n,
                    line,
                    "expected `counter_name: integer`",
                ));
            };
            let v = c[2].parse().map_err(|_| missing_value(&c[1], n, line))?;
            cur.counters.insert(c[1].to_string(), v);
            continue;
        }
        let mut words = line.split_whitespace().peekable();
        if words.peek() == Some(&"link") {
            if let Some((name, pn, pl)) = pending.take() {
                return Err(missing_value(&name, pn, &pl));
            }
            words.next();
            let target = words.next().unwrap_or("");
            let Some(c) = regex!(r"^(\S+)/(\d+)$").captures(target) else {
                return Err(ParseError::new(KIND, n, line, "expected `link DEV/PORT`"));
            };
            out.push(PortCounters {
                device: c[1].to_string(),
                port: c[2]
                    .parse()
                    .map_err(|_| ParseError::new(KIND, n, line, "port number too large"))?,
                ..PortCounters::default()
            });
            optional = false;
        } else if words.peek().is_some() && out.is_empty() {
            return Err(ParseError::new(
                KIND,
                n,
                line,
                "expected `link DEV/PORT` first",
            ));
        }
        for w in words {
            let Some(cur) = out.last_mut() else { break };
            if w == "Optional-set:" {
                optional = true;
                continue;
            }
            let Some((name, _, _)) = pending.take() else {
                pending = Some((w.to_string(), n, line.to_string()));
                continue;
            };
            let Ok(value) = w.parse::<u64>() else {
                return Err(missing_value(&name, n, line));
            };
            let map = if optional {
                &mut cur.optional_counters
            } else {
                &mut cur.counters
            };
            map.insert(name, value);
        }
    }
    if let Some((name, pn, pl)) = pending {
        return Err(missing_value(&name, pn, &pl));
    }
    if out.is_empty() {
        return Err(unrecognised(
            KIND,
            text,
            "no `link DEV/PORT` or `Port N hw counters:` line",
        ));
    }
    Ok(out)
}

fn missing_value(name: &str, n: usize, line: &str) -> ParseError {
    ParseError::new(
        KIND,
        n,
        line,
        format!("counter `{name}` has no integer value"),
    )
}

crate::impl_shape!(PortCounters, parsed("rdma statistic port"));

crate::parser!("rdma-statistic", "rdma statistic show [link DEV/PORT] (the hw_counters)", sample: "rdma/rdma-statistic-show-link-rocep8s0f0-wrapped-optional-set-cc-counters.txt");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pretty_form_and_errors() {
        let p = parse("link mlx5_0/1\n\tout_of_sequence 3\n\tnp_cnp_sent 7\n").unwrap();
        assert_eq!((p[0].device.as_str(), p[0].port), ("mlx5_0", 1));
        assert_eq!(p[0].counters["out_of_sequence"], 3);
        assert_eq!(p[0].counters["np_cnp_sent"], 7);
        let e = parse("link mlx5_0/1 out_of_sequence x\n").unwrap_err();
        assert!(e.reason.contains("out_of_sequence"), "{e}");
        let e = parse("link mlx5_0/1 out_of_sequence\n").unwrap_err();
        assert_eq!(e.line, 1);
        assert!(parse("hello world\n").unwrap_err().reason.contains("link"));
        assert!(parse("").is_err());
        assert!(parse("link mlx5_0 a 1\n").is_err());
    }
}
