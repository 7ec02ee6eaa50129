//! `iperf3 -J` JSON (client side), iperf 3.6 – 3.16.
//!
//! Handles: TCP (`end.sum_sent` / `end.sum_received` with `retransmits`), UDP (`end.sum` with
//! `lost_percent` / `jitter_ms`, plus `sum_sent` / `sum_received` in newer versions), the 3.9+
//! `"sender": true` fields, tab-indented cJSON with duplicate keys, and error outputs (`"error"`
//! key with an empty `end`), which parse successfully with `error` set.
//!
//! Plain-text iperf3 output is rejected with a ParseError asking for `-J`: its summary lines
//! differ between versions and `-P` runs, and the JSON carries the same numbers unambiguously.
//!
//! `sent_bps` / `received_bps` are bits per second from `sum_sent` / `sum_received` (UDP
//! without those: `sum`); `duration_s` is the measured `sum_sent.seconds` (falling back to the
//! configured `test_start.duration`); `streams` is `test_start.num_streams` (fallback: the number
//! of `end.streams`).

use super::util::{first_nonblank, json_at, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};
use serde_json::Value;

const KIND: &str = "iperf3";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Iperf3 {
    /// e.g. `iperf 3.12`.
    pub version: Option<String>,
    /// `TCP` / `UDP`.
    pub protocol: Option<String>,
    pub streams: Option<u64>,
    pub reverse: Option<bool>,
    pub duration_s: Option<f64>,
    pub sent_bytes: Option<u64>,
    pub received_bytes: Option<u64>,
    pub sent_bps: Option<f64>,
    pub received_bps: Option<f64>,
    /// TCP only.
    pub retransmits: Option<u64>,
    /// UDP only.
    pub lost_percent: Option<f64>,
    pub jitter_ms: Option<f64>,
    pub error: Option<String>,
}

pub fn parse(text: &str) -> Result<Iperf3, ParseError> {
    let trimmed = text.trim_start();
    if !trimmed.starts_with('{') {
        let plain = regex!(
            r"(?m)^(Connecting to host|\[ ID\]|\[SUM\]|iperf Done|Server listening|- - - -)"
        );
        let reason = if plain.is_match(text) {
            "plain-text iperf3 output; run iperf3 with -J (JSON) so the result can be parsed"
        } else {
            "not iperf3 -J JSON (expected a JSON object)"
        };
        return Err(unrecognised(KIND, text, reason));
    }
    let v: Value = json_at(KIND, text, "iperf3 JSON")?;
    if v.get("start").is_none() && v.get("end").is_none() && v.get("error").is_none() {
        let (n, l) = first_nonblank(text);
        return Err(ParseError::new(
            KIND,
            n,
            l,
            "JSON object without start/end/error keys",
        ));
    }
    let f = |p: &str| v.pointer(p).and_then(Value::as_f64);
    let u = |p: &str| v.pointer(p).and_then(Value::as_u64);
    let mut out = Iperf3 {
        version: v
            .pointer("/start/version")
            .and_then(Value::as_str)
            .map(str::to_string),
        protocol: v
            .pointer("/start/test_start/protocol")
            .and_then(Value::as_str)
            .map(str::to_string),
        streams: u("/start/test_start/num_streams")
            .or_else(|| {
                v.pointer("/end/streams")
                    .and_then(Value::as_array)
                    .map(|a| a.len() as u64)
            })
            .filter(|n| *n > 0),
        reverse: u("/start/test_start/reverse").map(|r| r != 0),
        error: v.get("error").and_then(Value::as_str).map(str::to_string),
        ..Iperf3::default()
    };
    let sent = ["/end/sum_sent", "/end/sum"]
        .into_iter()
        .find(|p| v.pointer(p).is_some());
    let received = ["/end/sum_received", "/end/sum"]
        .into_iter()
        .find(|p| v.pointer(p).is_some());
    if let Some(s) = sent {
        out.sent_bps = f(&format!("{s}/bits_per_second"));
        out.sent_bytes = u(&format!("{s}/bytes"));
        out.retransmits = u(&format!("{s}/retransmits"));
        out.duration_s = f(&format!("{s}/seconds"));
    }
    if let Some(r) = received {
        out.received_bps = f(&format!("{r}/bits_per_second"));
        out.received_bytes = u(&format!("{r}/bytes"));
        out.lost_percent = f(&format!("{r}/lost_percent")).or_else(|| f("/end/sum/lost_percent"));
        out.jitter_ms = f(&format!("{r}/jitter_ms")).or_else(|| f("/end/sum/jitter_ms"));
    }
    if out.protocol.as_deref() != Some("UDP") {
        out.lost_percent = None;
        out.jitter_ms = None;
    }
    if out.duration_s.is_none() && out.error.is_none() {
        out.duration_s = f("/start/test_start/duration");
    }
    if out.error.is_none() && out.sent_bps.is_none() && out.received_bps.is_none() {
        let (n, l) = first_nonblank(text);
        return Err(ParseError::new(
            KIND,
            n,
            l,
            "iperf3 JSON without end summary and without error",
        ));
    }
    Ok(out)
}

crate::impl_shape!(Iperf3, parsed("iperf3 result"));

crate::parser!("iperf3", "iperf3 -J JSON", sample: "lab/iperf3-3.12-J-P4-t2.json");
