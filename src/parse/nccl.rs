//! nccl-tests `*_perf` / `*_perf_mpi` text output (NCCL_DEBUG lines may be interleaved) and its
//! `-J` JSON output.
//!
//! Text variants handled: table generations with and without `redop` / `root` columns and with
//! `#wrong` or the old `error` column (`2e-07`, `0e+00`); `N/A` in `#wrong` (alltoall in-place);
//! `%g` numbers (`2e+06` algbw, `Avg bus bandwidth : 0`); old (`#   Rank  0 Pid ...`) and new
//! (`Group`) rank lines with `[0x36]`, `[0000:8f:00]` or `[0000:03:00.0]` bus ids; rccl-tests'
//! `# nThreads: 1 nGpus: 2 nRanks: 1 ...` header and `RCCL version` line; mpirun
//! `--tag-output` prefixes (`[1,0]<stdout>:`); whole blocks indented (markdown); NCCL INFO /
//! MPI help / ssh warning lines anywhere, including inside the table; nccl-tests >= 2.18
//! `# nccl-tests version`, `# Collective test starting/concluded` lines; failure trailers
//! (`Test NCCL failure ...`, `Test failure ...`, `Invalid number of GPUs`), which go to `errors`
//! together with `Out of bounds values : N FAILED`.
//!
//! `transport` comes from NCCL_DEBUG=INFO lines: the last `Using network X`, else the last
//! `via NET/X/...`, else the last `NET/X : Using [...]`; `None` when no such line is shown.
//! `net_devices` are the `[N]dev` entries of the `NET/<transport> : Using` lines.
//!
//! `wrong` is `Option<f64>`: the `#wrong` count (an integer, as a float), or the old `error`
//! column's maximum error value (e.g. `2e-07`); `None` for `N/A` (not validated).
//! Bandwidths are GB/s = 10^9 bytes/s as nccl-tests prints them.
//!
//! Columns are mapped by the table's header lines, not by position: the column line (`size
//! count type [redop] [root] time algbw busbw #wrong ...`) and the group line above it
//! (`out-of-place ... in-place`). Each `time` / `cputime` column starts a half; known columns
//! are `algbw busbw #wrong|error #bitdiff i_min i_max i_p99 i_cv%` and a trailing `timestamp`
//! (nccl-tests 2.19 `-I 1`, `-C 1`, `-S 1`, bitwise check). A line that looks like a table row
//! but does not fit the header's columns is an error naming its line; parsing fails when no
//! row fits. `nranks` is the NCCL INFO `nranks N` value when shown, else the highest rank + 1
//! of the `#  Rank N ...` lines (or their number, if larger).
//!
//! Recognised evidence (text): the `# nThread` header, the table header, a `# nccl-tests
//! version` / `# Collective test` line or a failure line.

use super::util::{float, json_at, numbered, regex, unrecognised};
use super::ParseError;
use serde::{Deserialize, Serialize};
use serde_json::Value;

const KIND: &str = "nccl";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Nccl {
    /// `all_reduce`, `all_gather`, ... (binary name without `_perf` / `_perf_mpi`); `None` for
    /// old outputs that do not print it.
    pub collective: Option<String>,
    pub nccl_tests_version: Option<String>,
    /// `2.28.9+cuda13.0` from the `NCCL version` line, else decoded from the library code
    /// (`22809` → `2.28.9`).
    pub nccl_version: Option<String>,
    /// `NCCL` or `RCCL` (from the version line), `None` when not shown.
    pub library: Option<String>,
    /// Number of ranks listed under `# Using devices`.
    pub nranks: Option<u32>,
    /// `nGpus` of the header (GPUs per thread).
    pub ngpus: Option<u32>,
    pub devices: Vec<Device>,
    pub rows: Vec<Row>,
    pub out_of_bounds: Option<u64>,
    pub avg_busbw_gbs: Option<f64>,
    /// Maximum busbw over all rows, out-of-place and in-place.
    pub max_busbw_gbs: Option<f64>,
    pub transport: Option<String>,
    pub net_devices: Vec<String>,
    /// The same per host: the `[N]dev` entries of the `NET/<transport> : Using` lines of each
    /// host (the `HOST:PID:TID [GPU] NCCL INFO` prefix), so that a rail one node lost is seen
    /// although the other nodes list it. Empty when the lines carry no host prefix.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub net_devices_by_host: std::collections::BTreeMap<String, Vec<String>>,
    /// What NCCL's INFO log says about GPUDirect RDMA ([`gdr`]).
    #[serde(default)]
    pub gdr: Gdr,
    /// `NCCL WARN` lines.
    pub warnings: Vec<String>,
    pub errors: Vec<String>,
    /// `text` or `json`.
    pub format: String,
    /// The table's time columns are CPU time (`cputime`, nccl-tests `-C 1`), not GPU time.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cpu_time: bool,
}

/// GPUDirect RDMA in NCCL's INFO log: `NET/IB : GPU Direct RDMA Enabled|Disabled for HCA N
/// 'dev'` (also `... Disabled for GPU X / HCA N (distance ...)`) and the network channels
/// (`Channel NN/M : a[x] -> b[y] [send|receive] via NET/IB/0[/GDRDMA]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Gdr {
    /// HCAs NCCL enabled GPUDirect RDMA for (`'name'`, else `HCA N`), in order, no repeats.
    pub enabled_hcas: Vec<String>,
    /// The `GPU Direct RDMA Disabled ...` lines' HCAs with the line's reason.
    pub disabled: Vec<String>,
    /// Channel lines over a network transport (`via NET/...`).
    pub net_channels: u32,
    /// Of those, the ones going `/GDRDMA`.
    pub gdrdma_channels: u32,
    /// The same two counts per host, where the INFO lines name it (`HOST:PID:TID [GPU] NCCL
    /// INFO ...`): the node whose channels stage through host memory while its peers' use
    /// GPUDirect RDMA.
    pub by_host: std::collections::BTreeMap<String, HostChannels>,
}

/// One host's network channels and how many of them go `/GDRDMA`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostChannels {
    pub net_channels: u32,
    pub gdrdma_channels: u32,
    /// The network devices its channels use (`via NET/IB/3`: index 3 of the host's `NET/IB :
    /// Using [0]... [3]...` list), sorted, once each.
    pub devices_used: Vec<u32>,
}

/// Read one INFO line into `g` (see [`Gdr`]).
fn gdr_line(g: &mut Gdr, t: &str) {
    if let Some(c) =
        regex!(r"GPU Direct RDMA (Enabled|Disabled) for (?:GPU \S+ / )?HCA (\d+)(?: ['‘]([^'’]*)['’])?(.*)$")
            .captures(t)
    {
        let hca = c.get(3).map_or(format!("HCA {}", &c[2]), |m| m.as_str().to_string());
        if &c[1] == "Enabled" {
            if !g.enabled_hcas.contains(&hca) {
                g.enabled_hcas.push(hca);
            }
        } else {
            let why = c[4].trim();
            let d = if why.is_empty() { hca } else { format!("{hca} {why}") };
            if !g.disabled.contains(&d) {
                g.disabled.push(d);
            }
        }
    } else if let Some(c) = regex!(r"\bvia NET/(\S+)").captures(t) {
        let direct = c[1].ends_with("/GDRDMA");
        g.net_channels += 1;
        g.gdrdma_channels += u32::from(direct);
        if let Some(h) = regex!(r"^\s*([^\s:]+):\d+:\d+ \[").captures(t) {
            let e = g.by_host.entry(h[1].to_string()).or_default();
            e.net_channels += 1;
            e.gdrdma_channels += u32::from(direct);
            let dev = c[1].split('/').nth(1).and_then(|d| d.parse::<u32>().ok());
            if let Some(d) = dev.filter(|d| !e.devices_used.contains(d)) {
                e.devices_used.push(d);
                e.devices_used.sort_unstable();
            }
        }
    }
}

/// GPUDirect RDMA as NCCL's INFO lines in `text` say (any log: nccl-tests, a training job).
pub fn gdr(text: &str) -> Gdr {
    let mut g = Gdr::default();
    for line in text.lines() {
        if line.contains("NCCL INFO") {
            gdr_line(&mut g, line);
        }
    }
    g
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Device {
    pub rank: u32,
    pub group: Option<u32>,
    pub pid: Option<u64>,
    pub host: String,
    pub device: u32,
    pub bus_id: String,
    pub name: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub size_bytes: u64,
    pub count: u64,
    pub r#type: String,
    /// `None` in old tables without the column.
    pub redop: Option<String>,
    /// `None` in tables without the column; `-1` when the collective has no root.
    pub root: Option<i64>,
    pub out_of_place: Measurement,
    pub in_place: Measurement,
    /// `2026-12-03 10:11:12`, the `timestamp` column of `-S 1`; `None` without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

/// One half of a row. `wrong`: `#wrong` count or old `error` value; `None` for `N/A`.
/// `time_us` is the `cputime` column when the table reports CPU time (`-C 1`, see
/// [`Nccl::cpu_time`]). The `i_*` fields are the per-iteration columns of `-I 1`
/// (`i_min i_max i_p99 i_cv%`), `bitdiff` the `#bitdiff` column of the bitwise check; all
/// `None` (and left out of JSON) when the table has no such column.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub time_us: Option<f64>,
    pub algbw_gbs: Option<f64>,
    pub busbw_gbs: Option<f64>,
    pub wrong: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iter_min_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iter_max_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iter_p99_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iter_cv_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bitdiff: Option<f64>,
}

pub fn parse(text: &str) -> Result<Nccl, ParseError> {
    if text.trim_start().starts_with('{') {
        parse_json(text)
    } else {
        parse_text(text)
    }
}

/// Decode nccl's integer version code: 22809 → 2.28.9, 2708 → 2.7.8 (pre-2.9 codes).
fn version_from_code(code: u64) -> String {
    if code >= 10000 {
        format!("{}.{}.{}", code / 10000, (code % 10000) / 100, code % 100)
    } else {
        format!("{}.{}.{}", code / 1000, (code % 1000) / 100, code % 100)
    }
}

fn collective_from_binary(name: &str) -> Option<String> {
    let base = name.rsplit('/').next().unwrap_or(name);
    let base = base.strip_suffix("_mpi").unwrap_or(base);
    base.strip_suffix("_perf")
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// One column of a result table, as named by the column header line.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Col {
    /// `time` or `cputime`: starts a half (out-of-place, then in-place).
    Time,
    AlgBw,
    BusBw,
    /// `#wrong` (nccl-tests >= 2.x) or `error` (old tables).
    Wrong,
    BitDiff,
    IterMin,
    IterMax,
    IterP99,
    IterCv,
    /// `timestamp` of `-S 1`: a `YYYY-MM-DD HH:MM:SS` value (two words) at the row's end.
    Timestamp,
    /// A column this parser does not know: one numeric word, skipped.
    Other,
}

/// The columns of a result table, mapped from its header lines: the fixed prefix
/// (`size count type [redop] [root]`) and then the columns of each half in printed order.
#[derive(Clone, Debug, PartialEq)]
struct Layout {
    redop: bool,
    root: bool,
    /// (half, column): half 0 is the first group of the group line (`out-of-place`), 1 the next.
    cols: Vec<(usize, Col)>,
    /// Which measurement each half fills: `false` out-of-place, `true` in-place.
    half_in_place: [bool; 2],
    cpu_time: bool,
}

/// Map a column header line (`#  size  count  type  redop  root  time  algbw ...`) to a layout.
/// `groups` is the group line above it (`out-of-place  in-place`), when there is one. `None`
/// when the line is not a result table header (`size` / `count` / `type` prefix missing, or no
/// time column).
fn layout_from_header(cols: &[&str], groups: Option<&str>) -> Option<Layout> {
    if cols.len() < 4 || cols[0] != "size" || cols[1] != "count" || cols[2] != "type" {
        return None;
    }
    let mut i = 3;
    let redop = cols.get(i) == Some(&"redop");
    i += redop as usize;
    let root = cols.get(i) == Some(&"root");
    i += root as usize;
    let mut half: Option<usize> = None;
    let mut mapped = Vec::new();
    let mut cpu_time = false;
    for c in &cols[i..] {
        let col = match c.to_ascii_lowercase().as_str() {
            "time" => Col::Time,
            "cputime" => {
                cpu_time = true;
                Col::Time
            }
            "algbw" => Col::AlgBw,
            "busbw" => Col::BusBw,
            "#wrong" | "wrong" | "error" | "errors" => Col::Wrong,
            "#bitdiff" => Col::BitDiff,
            "i_min" => Col::IterMin,
            "i_max" => Col::IterMax,
            "i_p99" => Col::IterP99,
            "i_cv%" | "i_cv" => Col::IterCv,
            "timestamp" => Col::Timestamp,
            _ => Col::Other,
        };
        if col == Col::Time {
            half = Some(half.map_or(0, |h| h + 1));
        }
        let Some(h) = half else {
            // A column before the first time column: not a layout this parser can map.
            return None;
        };
        if h > 1 {
            return None;
        }
        mapped.push((h, col));
    }
    half?;
    // The group line names the halves in order; by default out-of-place then in-place.
    let mut half_in_place = [false, true];
    if let Some(g) = groups {
        let names: Vec<bool> = g
            .split_whitespace()
            .filter(|w| w.contains("place"))
            .map(|w| w.starts_with("in-place"))
            .collect();
        if names.len() == 1 && mapped.iter().all(|(h, _)| *h == 0) {
            half_in_place[0] = names[0];
        } else if names.len() == 2 && names[0] != names[1] {
            half_in_place = [names[0], names[1]];
        }
    }
    Some(Layout {
        redop,
        root,
        cols: mapped,
        half_in_place,
        cpu_time,
    })
}

fn is_value(v: &str) -> bool {
    v == "N/A" || float(v).is_some()
}

/// Map a table row to `layout`; `None` when its words do not fit the header's columns.
fn parse_row(line: &str, layout: &Layout) -> Option<Row> {
    let t: Vec<&str> = line.split_whitespace().collect();
    let fixed = 3 + layout.redop as usize + layout.root as usize;
    if t.len() < fixed {
        return None;
    }
    let mut row = Row {
        size_bytes: t[0].parse().ok()?,
        count: t[1].parse().ok()?,
        r#type: t[2].to_string(),
        ..Row::default()
    };
    if !regex!(r"^[A-Za-z]\w*$").is_match(&row.r#type) {
        return None;
    }
    let mut i = 3;
    if layout.redop {
        row.redop = Some(t[i].to_string());
        i += 1;
    }
    if layout.root {
        row.root = Some(t[i].parse().ok()?);
        i += 1;
    }
    for &(half, col) in &layout.cols {
        if col == Col::Timestamp {
            let date = *t.get(i)?;
            if !regex!(r"^\d{4}-\d{2}-\d{2}$").is_match(date) {
                return None;
            }
            i += 1;
            let mut ts = date.to_string();
            if let Some(time) = t
                .get(i)
                .filter(|w| regex!(r"^\d{2}:\d{2}:\d{2}$").is_match(w))
            {
                ts = format!("{ts} {time}");
                i += 1;
            }
            row.timestamp = Some(ts);
            continue;
        }
        let v = *t.get(i)?;
        // Every value must be a number or N/A, otherwise this is not a table row.
        if !is_value(v) {
            return None;
        }
        i += 1;
        let m = if layout.half_in_place[half] {
            &mut row.in_place
        } else {
            &mut row.out_of_place
        };
        let slot = match col {
            Col::Time => &mut m.time_us,
            Col::AlgBw => &mut m.algbw_gbs,
            Col::BusBw => &mut m.busbw_gbs,
            Col::Wrong => &mut m.wrong,
            Col::BitDiff => &mut m.bitdiff,
            Col::IterMin => &mut m.iter_min_us,
            Col::IterMax => &mut m.iter_max_us,
            Col::IterP99 => &mut m.iter_p99_us,
            Col::IterCv => &mut m.iter_cv_pct,
            Col::Timestamp | Col::Other => continue,
        };
        *slot = float(v);
    }
    (i == t.len()).then_some(row)
}

/// A line that looks like a result row (`size count type ...`, two integers then a type
/// name) whatever its number of columns.
fn looks_like_row(line: &str) -> bool {
    regex!(r"^\d+\s+\d+\s+[A-Za-z]\w*\s+\S").is_match(line)
}

fn is_error(line: &str) -> bool {
    regex!(r"Test (?:NCCL |CUDA |HIP )?failure|^Invalid number of GPUs|NCCL ERROR|^Error:")
        .is_match(line)
}

fn parse_text(text: &str) -> Result<Nccl, ParseError> {
    let mut out = Nccl {
        format: "text".into(),
        ..Nccl::default()
    };
    let mut evidence = false;
    let mut layout: Option<Layout> = None;
    let mut using_network: Option<String> = None;
    let mut via_net: Option<String> = None;
    let mut net_using: Vec<(Option<String>, String, Vec<String>)> = Vec::new();
    let mut library_code: Option<u64> = None;
    let mut groups_line: Option<String> = None;
    let mut info_nranks: Option<u32> = None;
    // First table row that could not be mapped to its header: (line number, line).
    let mut bad_row: Option<(usize, String)> = None;
    for (n, raw) in numbered(text) {
        let line = regex!(r"^\[\d+,\d+\]<\w+>:").replace(raw, "");
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(c) = regex!(r"^# nccl-tests version (\S+)(?:.*nccl-library=(\d+))?").captures(t)
        {
            evidence = true;
            out.nccl_tests_version = Some(c[1].to_string());
            library_code = c.get(2).and_then(|m| m.as_str().parse().ok());
            continue;
        }
        if let Some(c) = regex!(r"^# Collective test (?:starting|concluded): (\S+)").captures(t) {
            evidence = true;
            if out.collective.is_none() {
                out.collective = collective_from_binary(&c[1]);
            }
            continue;
        }
        if t.starts_with("# nThread") {
            evidence = true;
            out.ngpus = regex!(r"nGpus:?\s+(\d+)")
                .captures(t)
                .and_then(|c| c[1].parse().ok());
            continue;
        }
        if let Some(c) = regex!(
            r"^#\s+Rank\s+(\d+)\s+(?:Group\s+(\d+)\s+)?Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)\s+\[([^\]]*)\]\s*(.*)$"
        )
        .captures(t)
        {
            let (Ok(rank), Ok(device)) = (c[1].parse(), c[5].parse()) else {
                continue;
            };
            out.devices.push(Device {
                rank,
                group: c.get(2).and_then(|m| m.as_str().parse().ok()),
                pid: c[3].parse().ok(),
                host: c[4].to_string(),
                device,
                bus_id: c[6].to_string(),
                name: c[7].trim().to_string(),
            });
            continue;
        }
        if let Some(c) = regex!(r"\b(NCCL|RCCL) version (\S+)").captures(t) {
            out.library.get_or_insert_with(|| c[1].to_string());
            out.nccl_version.get_or_insert_with(|| c[2].to_string());
            if !t.contains(" INFO ") {
                continue;
            }
        }
        if t.starts_with('#') {
            let cols: Vec<&str> = t.trim_start_matches('#').split_whitespace().collect();
            if cols.first() == Some(&"size") && cols.contains(&"count") {
                evidence = true;
                layout = layout_from_header(&cols, groups_line.as_deref());
                if let Some(l) = &layout {
                    out.cpu_time |= l.cpu_time;
                } else {
                    out.errors.push(format!(
                        "line {n}: result table header with columns this parser cannot map: {t}"
                    ));
                }
            } else if cols
                .iter()
                .any(|c| *c == "out-of-place" || *c == "in-place")
            {
                groups_line = Some(t.to_string());
            } else if let Some(c) =
                regex!(r"^# Out of bounds values\s*:\s*(\d+)\s*(\w*)").captures(t)
            {
                out.out_of_bounds = c[1].parse().ok();
                if &c[2] == "FAILED" {
                    out.errors
                        .push(t.trim_start_matches('#').trim().to_string());
                }
            } else if let Some(c) = regex!(r"^# Avg bus bandwidth\s*:\s*(\S+)").captures(t) {
                out.avg_busbw_gbs = float(&c[1]);
            }
            continue;
        }
        if let Some(l) = &layout {
            if let Some(row) = parse_row(t, l) {
                out.rows.push(row);
                continue;
            }
        }
        if is_error(t) {
            evidence = true;
            out.errors.push(t.to_string());
            continue;
        }
        if layout.is_some() && looks_like_row(t) {
            out.errors.push(format!(
                "line {n}: table row does not match the columns of the table header: {t}"
            ));
            bad_row.get_or_insert((n, raw.to_string()));
            continue;
        }
        if let Some(c) = regex!(r"NCCL INFO .*\bnranks (\d+)").captures(t) {
            if let Ok(k) = c[1].parse::<u32>() {
                info_nranks = Some(info_nranks.map_or(k, |m| m.max(k)));
            }
        }
        if t.contains("NCCL WARN") {
            out.warnings.push(t.to_string());
            continue;
        }
        if t.contains("NCCL INFO") {
            gdr_line(&mut out.gdr, t);
        }
        if let Some(c) = regex!(r"NCCL INFO Using network (.+)$").captures(t) {
            using_network = Some(c[1].trim().to_string());
        } else if let Some(c) = regex!(r"via NET/([^/]+)/").captures(t) {
            via_net = Some(c[1].trim().to_string());
        } else if let Some(u) = net_using_line(t) {
            net_using.push((u.host, u.transport, u.devices));
        }
    }
    if !evidence {
        return Err(unrecognised(
            KIND,
            text,
            "no nccl-tests header (`# nThread ...`), result table, version line or failure line",
        ));
    }
    if let Some((n, l)) = bad_row.filter(|_| out.rows.is_empty()) {
        return Err(ParseError::new(
            KIND,
            n,
            &l,
            "table row does not match the columns of the table header (and no row does)",
        ));
    }
    if out.nccl_version.is_none() {
        out.nccl_version = library_code.map(version_from_code);
    }
    out.transport = using_network
        .or(via_net)
        .or_else(|| net_using.last().map(|(_, t, _)| t.clone()));
    if let Some(tr) = out.transport.as_deref() {
        for (host, t, devs) in &net_using {
            // `Using network IBext_v8` (a net plugin) lists its devices on the `NET/IB` line
            if t == tr || tr.starts_with(t.as_str()) {
                for d in devs {
                    if !out.net_devices.contains(d) {
                        out.net_devices.push(d.clone());
                    }
                    if let Some(h) = host {
                        let v = out.net_devices_by_host.entry(h.clone()).or_default();
                        if !v.contains(d) {
                            v.push(d.clone());
                        }
                    }
                }
            }
        }
    }
    finish(&mut out);
    if info_nranks.is_some() {
        out.nranks = info_nranks;
    }
    Ok(out)
}

/// One `NET/<transport> : Using ...` line of NCCL's INFO log.
#[derive(Debug, Clone, PartialEq)]
pub struct NetUsing {
    /// The `HOST:PID:TID [GPU]` prefix's host, when the line has one.
    pub host: Option<String>,
    /// `IB`, `Socket`, ...
    pub transport: String,
    /// `mlx5_0:1/IB`, `rocep1s0f1:1/RoCE`, `eth0:10.0.0.1<0>`: each device NCCL lists; the
    /// members of a merged virtual device (`[0]={[0] mlx5_2:1/RoCE, [1] mlx5_3:1/RoCE}`, NCCL
    /// 2.20+) each on their own.
    pub devices: Vec<String>,
}

/// A `NET/<transport> : Using [0]dev [1]dev ...; OOB ...` line, else None.
pub fn net_using_line(t: &str) -> Option<NetUsing> {
    let c = regex!(r"NCCL INFO NET/(\w+)\s*: Using (.*)$").captures(t)?;
    let list = c[2].split(';').next().unwrap_or("");
    // RDMA devices as `name:port/link`, also inside merged `={...}` groups; else (sockets) the
    // `[N]entry` words.
    let mut devices: Vec<String> = regex!(r"([A-Za-z0-9_.\-]+:\d+/[A-Za-z]+)")
        .captures_iter(list)
        .map(|d| d[1].to_string())
        .collect();
    if devices.is_empty() {
        devices = regex!(r"\[\d+\](\S+)")
            .captures_iter(list)
            .map(|d| d[1].to_string())
            .collect();
    }
    let host = regex!(r"^\s*([^\s:\[]+):\d+:\d+ \[")
        .captures(t)
        .map(|h| h[1].to_string());
    Some(NetUsing {
        host,
        transport: c[1].to_string(),
        devices,
    })
}

/// `nranks` from the `# Using devices` rank lines: the highest rank + 1, or the number of
/// lines if larger, so that an abridged listing (lines cut, `...`) still counts every rank.
/// The text parser prefers an NCCL INFO `nranks N` line when the output has one.
fn finish(out: &mut Nccl) {
    if !out.devices.is_empty() {
        let by_rank = out
            .devices
            .iter()
            .map(|d| d.rank)
            .filter(|r| *r != u32::MAX)
            .max()
            .map(|r| r.saturating_add(1));
        let by_lines = u32::try_from(out.devices.len()).ok();
        out.nranks = by_rank.max(by_lines);
    }
    out.max_busbw_gbs = out
        .rows
        .iter()
        .flat_map(|r| [r.out_of_place.busbw_gbs, r.in_place.busbw_gbs])
        .flatten()
        .reduce(f64::max);
}

fn parse_json(text: &str) -> Result<Nccl, ParseError> {
    let v: Value = json_at(KIND, text, "nccl-tests -J JSON")?;
    if v.get("results").is_none() && v.get("config").is_none() {
        return Err(ParseError::new(
            KIND,
            1,
            text.lines().next().unwrap_or(""),
            "JSON without `results` or `config`: not nccl-tests -J output",
        ));
    }
    let mut out = Nccl {
        format: "json".into(),
        ..Nccl::default()
    };
    out.collective = v
        .pointer("/args/0")
        .and_then(Value::as_str)
        .and_then(collective_from_binary);
    out.nccl_version = v
        .get("nccl_version")
        .and_then(Value::as_u64)
        .map(version_from_code);
    out.ngpus = v
        .pointer("/config/ngpus")
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok());
    let u32_of = |d: &Value, k: &str| {
        d.get(k)
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
    };
    let str_of = |d: &Value, k: &str| d.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    for d in v
        .pointer("/config/devices")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        out.devices.push(Device {
            rank: u32_of(d, "rank").unwrap_or(u32::MAX),
            group: u32_of(d, "group"),
            pid: d.get("pid").and_then(Value::as_u64),
            host: str_of(d, "hostname"),
            device: u32_of(d, "device").unwrap_or(u32::MAX),
            bus_id: str_of(d, "device_hex"),
            name: str_of(d, "device_info"),
        });
    }
    // `cpu_time` replaces `time` with -C 1; `*_per_iter` objects come with -I 1.
    let meas = |m: Option<&Value>, per_iter: Option<&Value>| {
        let f = |o: Option<&Value>, k: &str| o.and_then(|o| o.get(k)).and_then(Value::as_f64);
        Measurement {
            time_us: f(m, "time").or_else(|| f(m, "cpu_time")),
            algbw_gbs: f(m, "alg_bw"),
            busbw_gbs: f(m, "bus_bw"),
            wrong: f(m, "nwrong"),
            iter_min_us: f(per_iter, "min_us"),
            iter_max_us: f(per_iter, "max_us"),
            iter_p99_us: f(per_iter, "p99_us"),
            iter_cv_pct: f(per_iter, "cv_pct"),
            bitdiff: m
                .and_then(|m| m.pointer("/bitwise/different_bits"))
                .and_then(Value::as_f64),
        }
    };
    for r in v
        .get("results")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let root = match r.get("root") {
            Some(Value::String(s)) => s.trim().parse().ok(),
            Some(x) => x.as_i64(),
            None => None,
        };
        out.rows.push(Row {
            size_bytes: r.get("size").and_then(Value::as_u64).unwrap_or(0),
            count: r.get("count").and_then(Value::as_u64).unwrap_or(0),
            r#type: str_of(r, "type"),
            redop: r.get("redop").and_then(Value::as_str).map(str::to_string),
            root,
            out_of_place: meas(r.get("out_of_place"), r.get("out_of_place_per_iter")),
            in_place: meas(r.get("in_place"), r.get("in_place_per_iter")),
            timestamp: None,
        });
        if r.pointer("/out_of_place/cpu_time").is_some()
            || r.pointer("/in_place/cpu_time").is_some()
        {
            out.cpu_time = true;
        }
    }
    out.out_of_bounds = v.pointer("/out_of_bounds/count").and_then(Value::as_u64);
    if v.pointer("/out_of_bounds/okay").and_then(Value::as_str) == Some("false") {
        out.errors.push(format!(
            "Out of bounds values : {} FAILED",
            out.out_of_bounds.unwrap_or(0)
        ));
    }
    out.avg_busbw_gbs = v
        .pointer("/average_bus_bandwidth/bandwidth")
        .and_then(Value::as_f64);
    for e in v
        .get("errors")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(s) = e.as_str().filter(|s| !s.trim().is_empty()) {
            out.errors.push(s.to_string());
        }
    }
    finish(&mut out);
    Ok(out)
}

crate::impl_shape!(Measurement, parsed("nccl measurement"));
crate::impl_shape!(
    Row,
    parsed("nccl row")
        .one::<Measurement>("out_of_place")
        .one::<Measurement>("in_place")
);
crate::impl_shape!(Device, parsed("nccl device"));
crate::impl_shape!(
    Nccl,
    parsed("nccl result")
        .many::<Device>("devices")
        .many::<Row>("rows")
);

crate::parser!("nccl", "nccl-tests *_perf text output or its -J JSON", sample: "nccl-real/h200-all_reduce_1gpu.json");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_codes() {
        assert_eq!(version_from_code(22809), "2.28.9");
        assert_eq!(version_from_code(23003), "2.30.3");
        assert_eq!(version_from_code(2708), "2.7.8");
    }

    #[test]
    fn collective_names() {
        assert_eq!(
            collective_from_binary("./build/all_reduce_perf").as_deref(),
            Some("all_reduce")
        );
        assert_eq!(
            collective_from_binary("all_reduce_perf_mpi").as_deref(),
            Some("all_reduce")
        );
        assert_eq!(collective_from_binary("_perf"), None);
        assert_eq!(collective_from_binary("hostname"), None);
    }

    fn layout(header: &str) -> Layout {
        let cols: Vec<&str> = header.trim_start_matches('#').split_whitespace().collect();
        layout_from_header(&cols, None).unwrap()
    }

    #[test]
    fn row_layouts() {
        let new = layout("#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong");
        let r = parse_row("8 2 float sum -1 6.94 0.00 0.00 0 0.60 0.01 0.00 N/A", &new).unwrap();
        assert_eq!(
            (r.size_bytes, r.root, r.in_place.wrong),
            (8, Some(-1), None)
        );
        let old = layout("#       size         count    type     time   algbw   busbw  error     time   algbw   busbw  error");
        let r = parse_row(
            "48 12 float 57.30 0.00 0.00 1e+00 57.09 0.00 0.00 0e+00",
            &old,
        )
        .unwrap();
        assert_eq!(r.out_of_place.wrong, Some(1.0));
        assert!(parse_row("8 2 float sum -1 6.94 0.00 0.00 0 0.60 0.01 0.00", &new).is_none());
        assert!(parse_row("8 2 float sum -1 x 0.00 0.00 0 0.60 0.01 0.00 0", &new).is_none());
    }

    #[test]
    fn header_layouts() {
        // Column names as nccl-tests' writeResultHeader prints them (util.cu): -I 1, -C 1, -S 1.
        let l = layout("# size count type redop root time algbw busbw #wrong i_min i_max i_p99 i_cv% time algbw busbw #wrong i_min i_max i_p99 i_cv%");
        assert_eq!(l.cols.len(), 16);
        assert_eq!(l.cols[4], (0, Col::IterMin));
        assert_eq!(l.cols[8], (1, Col::Time));
        let c = layout(
            "# size count type redop root cputime algbw busbw #wrong cputime algbw busbw #wrong",
        );
        assert!(c.cpu_time);
        let s = layout("# size count type redop root time algbw busbw #wrong time algbw busbw #wrong timestamp");
        assert_eq!(s.cols.last(), Some(&(1, Col::Timestamp)));
        let cols = ["size", "count", "type", "algbw", "time"];
        assert_eq!(layout_from_header(&cols, None), None);
        let cols = ["size", "count", "type", "redop", "root"];
        assert_eq!(layout_from_header(&cols, None), None);
    }
}

/// Tables in the layouts of nccl-tests' `-I 1` / `-C 1` / `-S 1` flags, rendered here with the
/// printf formats of nccl-tests' `writeResultHeader` / `writeBenchmarkLine*` /
/// `writePerIterReport` / `writeTimestamp` (src/util.cu). The values are made up for the
/// layout, not measured: real captures of these flags live in tests/fixtures when available.
#[cfg(test)]
mod flag_layouts {
    use super::*;

    fn head(group: &str, names: &[&str]) -> String {
        let mut s = format!("#                                                     {group}\n");
        s += &format!(
            "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}",
            "size", "count", "type", "redop", "root"
        );
        for n in names {
            s += &format!("  {n:>7}");
        }
        s + "\n"
    }

    fn half(t: f64, extra: &[f64]) -> String {
        let mut s = format!("  {t:>7.2}  {:>6.2}  {:>6.2}  {:>6}", 1.5, 0.0, 0);
        for x in extra {
            s += &format!("  {x:>7.2}");
        }
        s
    }

    fn row(size: u64, halves: [String; 2], tail: &str) -> String {
        format!(
            "{size:>12}  {:>12}  {:>8}  {:>6}  {:>6}{}{}{tail}\n",
            size / 4,
            "float",
            "sum",
            -1,
            halves[0],
            halves[1]
        )
    }

    const PRE: &str = "# nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=22809\n# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0\n#\n";

    #[test]
    fn per_iteration_columns() {
        let names = [
            "time", "algbw", "busbw", "#wrong", "i_min", "i_max", "i_p99", "i_cv%",
        ];
        let mut t = PRE.to_string();
        t += &head(
            "out-of-place (+ per-iteration)      in-place (+ per-iteration)",
            &[&names[..], &names[..]].concat(),
        );
        t += &row(
            8,
            [
                half(6.5, &[5.9, 9.1, 9.1, 12.25]),
                half(0.6, &[0.31, 2.2, 2.2, 70.1]),
            ],
            "",
        );
        t += &row(
            16,
            [
                half(6.4, &[5.8, 8.0, 8.0, 10.5]),
                half(0.5, &[0.3, 1.9, 1.9, 60.0]),
            ],
            "",
        );
        t += "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0 \n";
        let n = parse(&t).unwrap();
        assert_eq!(n.rows.len(), 2, "{:?}", n.errors);
        let r = &n.rows[0];
        assert_eq!(r.out_of_place.time_us, Some(6.5));
        assert_eq!(r.out_of_place.iter_min_us, Some(5.9));
        assert_eq!(r.out_of_place.iter_cv_pct, Some(12.25));
        assert_eq!(r.in_place.time_us, Some(0.6));
        assert_eq!(r.in_place.iter_p99_us, Some(2.2));
        assert_eq!(r.in_place.wrong, Some(0.0));
        assert!(n.errors.is_empty());
        assert!(!n.cpu_time);
    }

    #[test]
    fn cputime_and_timestamp_columns() {
        let mut t = PRE.to_string();
        let names = [
            "cputime",
            "algbw",
            "busbw",
            "#wrong",
            "cputime",
            "algbw",
            "busbw",
            "#wrong",
            "timestamp",
        ];
        t += &head("out-of-place                       in-place", &names);
        t += &row(
            8,
            [half(7.25, &[]), half(1.5, &[])],
            &format!("{:>21}", "2026-12-03 10:11:12"),
        );
        let n = parse(&t).unwrap();
        assert!(n.cpu_time);
        assert_eq!(n.rows.len(), 1, "{:?}", n.errors);
        assert_eq!(n.rows[0].out_of_place.time_us, Some(7.25));
        assert_eq!(n.rows[0].in_place.time_us, Some(1.5));
        assert_eq!(n.rows[0].timestamp.as_deref(), Some("2026-12-03 10:11:12"));
    }
}
