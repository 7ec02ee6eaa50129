//! perftest (`ib_write_bw`, `ib_read_bw`, `ib_send_bw`, `ib_*_lat`), client or server side.
//!
//! Handles: old (mlx4 era) and newest (2026) headers, tab- or space-separated header pairs
//! (`Device         : mlx5_0` and the unpadded server variant `Device: rxe0`), whole blocks
//! indented (docs), `Waiting for client to connect` banners, `Connected:`/`Completed:`/`Total
//! run time` lines, ROCm/CUDA buffer lines, CPU-frequency warnings inside the table, rows with
//! tabs and trailing spaces, first rows with 6 decimals, latency tables (with percentiles)
//! including two columns fused by printf overflow (`2465.901216.65` is split after the second
//! decimal, perftest prints `%.2f`), result tables without rows (latency servers, servers whose
//! client died), `run_perftest_loopback` output with server and client interleaved (duplicate
//! header lines: the first value wins; both result rows are kept, with a warning), and
//! error-only outputs (couldn't connect, device not found, rdma_cm failures), which parse
//! successfully with `errors` filled and no rows.
//!
//! Bandwidth is converted to Gbit/s: `MB/sec` and `MiB/sec` are 2^20 bytes/s (× 0.008388608),
//! `Gb/sec` is 10^9 bit/s. A server's header says `MB/sec` even when the client ran with
//! `--report_gbits`; when the values agree with `MsgRate × bytes × 8` only when read as Gb/s,
//! they are taken as Gb/s and a warning says so. `BW peak` is kept as printed (perftest prints
//! 0.00 when it does not measure the peak).
//!
//! `side`: `server` when the waiting banner or an `RX depth` line is printed, `client` when a
//! `TX depth` line is printed (perftest prints it only on clients and bidirectional servers),
//! `server` when a complete header has neither, otherwise `None`.
//!
//! Recognised evidence: a `... BW Test` / `... Latency Test` title, a `#bytes` table header or
//! at least one known error line.

use super::util::{float, numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};

const KIND: &str = "perftest";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Perftest {
    /// Title as printed, e.g. `RDMA_Write BW Test`, `Send Latency Test`.
    pub test: Option<String>,
    pub side: Option<String>,
    pub device: Option<String>,
    pub transport_type: Option<String>,
    pub link_type: Option<String>,
    pub mtu: Option<u32>,
    pub gid_index: Option<u32>,
    pub qps: Option<u32>,
    /// `RC`, `UC`, `UD`, `DC`...
    pub connection: Option<String>,
    pub tx_depth: Option<u32>,
    pub rx_depth: Option<u32>,
    pub rdma_cm: Option<bool>,
    /// Bandwidth unit from the table header (`MB/sec`, `MiB/sec`, `Gb/sec`), or `usec`.
    pub units_reported: Option<String>,
    pub rows: Vec<Row>,
    /// Of the largest message size (last such row).
    pub bw_avg_gbps: Option<f64>,
    pub bw_peak_gbps: Option<f64>,
    pub t_typical_usec: Option<f64>,
    pub t_avg_usec: Option<f64>,
    /// Latency tests: the 99 % percentile and the maximum of the largest message size.
    pub t_p99_usec: Option<f64>,
    pub t_max_usec: Option<f64>,
    pub warnings: Vec<String>,
    pub errors: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub bytes: u64,
    pub iterations: u64,
    pub bw_peak_gbps: Option<f64>,
    pub bw_avg_gbps: Option<f64>,
    pub msg_rate_mpps: Option<f64>,
    pub t_min_usec: Option<f64>,
    pub t_max_usec: Option<f64>,
    pub t_typical_usec: Option<f64>,
    pub t_avg_usec: Option<f64>,
    pub t_stdev_usec: Option<f64>,
    pub t_p99_usec: Option<f64>,
    pub t_p999_usec: Option<f64>,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Col {
    Peak,
    Avg,
    MsgRate,
    TMin,
    TMax,
    TTypical,
    TAvg,
    TStdev,
    P99,
    P999,
}

fn columns(header: &str) -> Vec<Col> {
    let re = regex!(
        r"BW peak|BW average|MsgRate|t_min|t_max|t_typical|t_avg|t_stdev|99\.9% percentile|99% percentile"
    );
    re.find_iter(header)
        .map(|m| match m.as_str() {
            "BW peak" => Col::Peak,
            "BW average" => Col::Avg,
            "MsgRate" => Col::MsgRate,
            "t_min" => Col::TMin,
            "t_max" => Col::TMax,
            "t_typical" => Col::TTypical,
            "t_avg" => Col::TAvg,
            "t_stdev" => Col::TStdev,
            "99% percentile" => Col::P99,
            _ => Col::P999,
        })
        .collect()
}

/// Split tokens like `2465.901216.65` (two `%.2f` values without a space) into two.
fn unfuse(tokens: Vec<&str>) -> Vec<String> {
    let mut out = Vec::new();
    for t in tokens {
        if t.matches('.').count() == 2 {
            if let Some(c) = regex!(r"^(\d+\.\d{2})(\d+\.\d+)$").captures(t) {
                out.push(c[1].to_string());
                out.push(c[2].to_string());
                continue;
            }
        }
        out.push(t.to_string());
    }
    out
}

/// A result row starts with two integer columns (bytes, iterations).
fn is_row(line: &str) -> bool {
    let mut it = line.split_whitespace();
    let int =
        |t: Option<&str>| t.is_some_and(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()));
    int(it.next()) && int(it.next())
}

fn is_error(line: &str) -> bool {
    const PREFIXES: &[&str] = &["couldn't", "could not", "unable to", "failed to", "error"];
    let lower = line.to_ascii_lowercase();
    PREFIXES.iter().any(|p| lower.starts_with(p))
        || lower.contains(": couldn't")
        || lower.contains("not found")
        || lower.starts_with("no ib device")
        || port_not_active(&lower)
}

/// perftest's ` Port number 1 state is Down` (the port is not ACTIVE: no link, or disabled).
fn port_not_active(lower: &str) -> bool {
    lower.starts_with("port number ")
        && lower
            .split_once(" state is ")
            .is_some_and(|(_, st)| !st.trim().eq_ignore_ascii_case("active"))
}

fn is_warning(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    [
        "warning",
        "conflicting cpu frequency",
        "using sampled cpu speed",
    ]
    .iter()
    .any(|p| lower.starts_with(p))
}

/// Factor from the reported unit to Gbit/s, `None` for unknown units.
fn to_gbps(unit: &str) -> Option<f64> {
    match unit {
        "MB/sec" | "MiB/sec" => Some(0.008388608),
        "Gb/sec" => Some(1.0),
        _ => None,
    }
}

fn header_pairs(line: &str) -> Vec<(String, String)> {
    regex!(r"([A-Za-z][\w .*-]*?)\s*:\s*(\S+)")
        .captures_iter(line)
        .map(|c| (c[1].trim().to_string(), c[2].to_string()))
        .collect()
}

fn leading_u32(v: &str) -> Option<u32> {
    regex!(r"^(\d+)")
        .captures(v)
        .and_then(|c| c[1].parse().ok())
}

pub fn parse(text: &str) -> Result<Perftest, ParseError> {
    let mut out = Perftest::default();
    let mut cols: Option<Vec<Col>> = None;
    let mut factor: Option<f64> = None;
    let mut banner = false;
    let mut header_complete = false;
    let mut table_headers = 0;
    for (n, line) in numbered(text) {
        let t = line.trim();
        if t.is_empty() || t.starts_with("---") || t.starts_with("****") {
            continue;
        }
        if let Some(cols) = cols.as_ref() {
            if is_row(t) {
                let tokens = unfuse(t.split_whitespace().collect());
                let bytes = tokens.first().and_then(|v| v.parse::<u64>().ok());
                let iterations = tokens.get(1).and_then(|v| v.parse::<u64>().ok());
                let (Some(bytes), Some(iterations)) = (bytes, iterations) else {
                    out.warnings
                        .push(format!("line {n}: row numbers out of range, skipped"));
                    continue;
                };
                let mut row = Row {
                    bytes,
                    iterations,
                    ..Row::default()
                };
                if tokens.len() != cols.len() + 2 {
                    out.warnings.push(format!(
                        "line {n}: expected {} columns, found {}",
                        cols.len() + 2,
                        tokens.len()
                    ));
                }
                for (col, tok) in cols.iter().zip(tokens.iter().skip(2)) {
                    let v = float(tok);
                    let slot = match col {
                        Col::Peak => &mut row.bw_peak_gbps,
                        Col::Avg => &mut row.bw_avg_gbps,
                        Col::MsgRate => &mut row.msg_rate_mpps,
                        Col::TMin => &mut row.t_min_usec,
                        Col::TMax => &mut row.t_max_usec,
                        Col::TTypical => &mut row.t_typical_usec,
                        Col::TAvg => &mut row.t_avg_usec,
                        Col::TStdev => &mut row.t_stdev_usec,
                        Col::P99 => &mut row.t_p99_usec,
                        Col::P999 => &mut row.t_p999_usec,
                    };
                    *slot = v;
                }
                out.rows.push(row);
                continue;
            }
        }
        if t.contains("Waiting for client to connect") {
            banner = true;
            continue;
        }
        if t.ends_with(" Test") && regex!(r"^\S.*\s(?:BW|Latency) Test$").is_match(t) {
            out.test.get_or_insert_with(|| t.to_string());
            continue;
        }
        if t.starts_with("#bytes") {
            table_headers += 1;
            if table_headers == 2 {
                out.warnings.push(format!(
                    "line {n}: second result table header (server and client output interleaved)"
                ));
            }
            let c = columns(t);
            if c.contains(&Col::Avg) {
                let unit = regex!(r"BW average\[([^\]]*)\]")
                    .captures(t)
                    .map(|c| c[1].to_string());
                factor = unit.as_deref().and_then(to_gbps);
                if factor.is_none() {
                    out.warnings
                        .push(format!("line {n}: unknown bandwidth unit {unit:?}"));
                }
                out.units_reported = unit;
            } else {
                out.units_reported = Some("usec".into());
            }
            cols = Some(c);
            continue;
        }
        if is_warning(t) {
            out.warnings.push(t.to_string());
            continue;
        }
        if is_error(t) {
            out.errors.push(t.to_string());
            continue;
        }
        if t.starts_with("local address:") || t.starts_with("remote address:") {
            continue;
        }
        if t.starts_with("GID:") {
            continue;
        }
        if !t.contains(':') {
            continue;
        }
        for (key, value) in header_pairs(t) {
            match key.as_str() {
                "Device" => set(&mut out.device, value),
                "Transport type" => set(&mut out.transport_type, value),
                "Link type" => set(&mut out.link_type, value),
                "Connection type" => set(&mut out.connection, value),
                "Mtu" => set(&mut out.mtu, leading_u32(&value)),
                "GID index" => set(&mut out.gid_index, leading_u32(&value)),
                "Number of qps" => set(&mut out.qps, leading_u32(&value)),
                "TX depth" => set(&mut out.tx_depth, leading_u32(&value)),
                "RX depth" => set(&mut out.rx_depth, leading_u32(&value)),
                "rdma_cm QPs" => set(&mut out.rdma_cm, super::util::yes_no(&value)),
                "Data ex. method" => header_complete = true,
                _ => {}
            }
        }
    }
    if out.test.is_none() && table_headers == 0 && out.errors.is_empty() {
        return Err(unrecognised(
            KIND,
            text,
            "no perftest title (`... BW Test` / `... Latency Test`), result table or error line",
        ));
    }
    convert_units(&mut out, factor);
    out.side = if banner || out.rx_depth.is_some() {
        Some("server".into())
    } else if out.tx_depth.is_some() {
        Some("client".into())
    } else if header_complete {
        Some("server".into())
    } else {
        None
    };
    let max_bytes = out.rows.iter().map(|r| r.bytes).max();
    if let Some(last) = out.rows.iter().rev().find(|r| Some(r.bytes) == max_bytes) {
        out.bw_avg_gbps = last.bw_avg_gbps;
        out.bw_peak_gbps = last.bw_peak_gbps;
        out.t_typical_usec = last.t_typical_usec;
        out.t_avg_usec = last.t_avg_usec;
        out.t_p99_usec = last.t_p99_usec;
        out.t_max_usec = last.t_max_usec;
    }
    Ok(out)
}

fn set<T>(slot: &mut Option<T>, v: impl Into<Option<T>>) {
    if slot.is_none() {
        *slot = v.into();
    }
}

/// Convert row bandwidths to Gbit/s, detecting servers whose header unit is wrong.
fn convert_units(out: &mut Perftest, factor: Option<f64>) {
    let Some(mut factor) = factor else {
        for r in &mut out.rows {
            r.bw_avg_gbps = None;
            r.bw_peak_gbps = None;
        }
        return;
    };
    if factor != 1.0 {
        // Cross-check with MsgRate: Mpps × bytes × 8 / 1000 = Gbit/s.
        let mut as_gbits = 0;
        let mut as_header = 0;
        for r in &out.rows {
            if let (Some(avg), Some(rate)) = (r.bw_avg_gbps, r.msg_rate_mpps) {
                let expected = rate * r.bytes as f64 * 8.0 / 1000.0;
                if expected > 0.0 {
                    if (avg / expected - 1.0).abs() < 0.15 {
                        as_gbits += 1;
                    } else if (avg * factor / expected - 1.0).abs() < 0.15 {
                        as_header += 1;
                    }
                }
            }
        }
        if as_gbits > 0 && as_header == 0 {
            out.warnings.push(format!(
                "header says {} but the values match MsgRate only as Gb/sec (the client ran with \
                 --report_gbits); reading them as Gb/sec",
                out.units_reported.as_deref().unwrap_or("?")
            ));
            factor = 1.0;
        }
    }
    for r in &mut out.rows {
        r.bw_avg_gbps = r.bw_avg_gbps.map(|v| v * factor);
        r.bw_peak_gbps = r.bw_peak_gbps.map(|v| v * factor);
    }
}

crate::impl_shape!(Row, parsed("perftest row"));
crate::impl_shape!(Perftest, parsed("perftest result").many::<Row>("rows"));

crate::parser!("perftest", "ib_write_bw / ib_read_bw / ib_send_bw / *_lat, client or server", sample: "perftest/ib_read_bw-cx7-ndr-ib-gbits-cpufreq-warning.txt");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fused_latency_columns_are_split() {
        assert_eq!(
            unfuse(vec!["928.05", "2465.901216.65", "37330.73"]),
            ["928.05", "2465.90", "1216.65", "37330.73"]
        );
        assert_eq!(unfuse(vec!["1.2.3"]), ["1.2.3"]);
    }

    #[test]
    fn rows_and_units() {
        assert!(is_row(" 65536      1000             328.64"));
        assert!(!is_row("#bytes #iterations"));
        assert!(!is_row("2e3f9af7 1 2"));
        assert_eq!(to_gbps("MB/sec"), Some(0.008388608));
        assert_eq!(to_gbps("Gb/sec"), Some(1.0));
        assert_eq!(to_gbps("furlongs"), None);
    }

    #[test]
    fn error_and_warning_lines() {
        assert!(is_error("Couldn't connect to 1.2.3.4:18515"));
        assert!(is_error("IB device rxe2 not found"));
        assert!(!is_error(" Dual-port       : OFF"));
        assert!(is_warning(
            "WARNING: BW peak won't be measured in this run."
        ));
    }
}
