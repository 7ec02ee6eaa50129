//! iputils `ping` (also busybox `round-trip` summaries).
//!
//! Handles: successful runs, 100% loss without an rtt line (rtt fields `None`), `+N errors` /
//! `+N duplicates` in the statistics line, and one-line failures such as
//! `ping: HOST: Temporary failure in name resolution`, which parse successfully with `error`
//! set and all counters `None` (like an iperf3 error JSON; the engine reports it).
//!
//! Recognised evidence: the `N packets transmitted, M received` line or a `ping: ...` error.

use super::util::{float, numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};

const KIND: &str = "ping";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ping {
    pub destination: Option<String>,
    pub transmitted: Option<u64>,
    pub received: Option<u64>,
    pub errors: Option<u64>,
    pub duplicates: Option<u64>,
    pub loss_pct: Option<f64>,
    pub rtt_min_ms: Option<f64>,
    pub rtt_avg_ms: Option<f64>,
    pub rtt_max_ms: Option<f64>,
    pub rtt_mdev_ms: Option<f64>,
    pub error: Option<String>,
}

pub fn parse(text: &str) -> Result<Ping, ParseError> {
    let mut out = Ping::default();
    let mut stats = false;
    for (_, line) in numbered(text) {
        let t = line.trim();
        if let Some(c) = regex!(r"^PING (\S+)").captures(t) {
            out.destination = Some(c[1].to_string());
        } else if let Some(c) = regex!(
            r"^(\d+) packets transmitted, (\d+) (?:packets )?received,(?: \+(\d+) duplicates,)?(?: \+(\d+) errors,)? ([\d.]+)% packet loss"
        )
        .captures(t)
        {
            stats = true;
            out.transmitted = c[1].parse().ok();
            out.received = c[2].parse().ok();
            out.duplicates = c.get(3).and_then(|m| m.as_str().parse().ok());
            out.errors = c.get(4).and_then(|m| m.as_str().parse().ok());
            out.loss_pct = float(&c[5]);
        } else if let Some(c) = regex!(
            r"^(?:rtt|round-trip) min/avg/max(?:/(?:mdev|stddev))? = ([\d.]+)/([\d.]+)/([\d.]+)(?:/([\d.]+))? ms"
        )
        .captures(t)
        {
            out.rtt_min_ms = float(&c[1]);
            out.rtt_avg_ms = float(&c[2]);
            out.rtt_max_ms = float(&c[3]);
            out.rtt_mdev_ms = c.get(4).and_then(|m| float(m.as_str()));
        } else if regex!(r"^ping6?: ").is_match(t) && out.error.is_none() {
            out.error = Some(t.to_string());
        }
    }
    if !stats && out.error.is_none() {
        return Err(unrecognised(
            KIND,
            text,
            "no `N packets transmitted, M received` line",
        ));
    }
    Ok(out)
}

crate::impl_shape!(Ping, parsed("ping result"));

crate::parser!("ping", "iputils ping", sample: "lab/ping-4-ok.txt");
