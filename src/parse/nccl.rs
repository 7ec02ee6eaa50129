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
//! Recognised evidence (text): the `# nThread` header, the table header, a `# nccl-tests
//! version` / `# Collective test` line or a failure line.

use super::util::{float, numbered, regex, unrecognised};
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
    /// `NCCL WARN` lines.
    pub warnings: Vec<String>,
    pub errors: Vec<String>,
    /// `text` or `json`.
    pub format: String,
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
}

/// One half of a row. `wrong`: `#wrong` count or old `error` value; `None` for `N/A`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub time_us: Option<f64>,
    pub algbw_gbs: Option<f64>,
    pub busbw_gbs: Option<f64>,
    pub wrong: Option<f64>,
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

#[derive(Clone, Copy)]
struct Layout {
    redop: bool,
    root: bool,
}

fn measurement(t: &[&str]) -> Measurement {
    Measurement {
        time_us: t.first().and_then(|v| float(v)),
        algbw_gbs: t.get(1).and_then(|v| float(v)),
        busbw_gbs: t.get(2).and_then(|v| float(v)),
        wrong: t.get(3).and_then(|v| float(v)),
    }
}

fn parse_row(line: &str, layout: Layout) -> Option<Row> {
    let t: Vec<&str> = line.split_whitespace().collect();
    let fixed = 3 + layout.redop as usize + layout.root as usize;
    if t.len() != fixed + 8 {
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
    let nums = &t[i..];
    // Every value must be a number or N/A, otherwise this is not a table row.
    if !nums.iter().all(|v| *v == "N/A" || float(v).is_some()) {
        return None;
    }
    row.out_of_place = measurement(&nums[0..4]);
    row.in_place = measurement(&nums[4..8]);
    Some(row)
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
    let mut net_using: Vec<(String, Vec<String>)> = Vec::new();
    let mut library_code: Option<u64> = None;
    for (_, raw) in numbered(text) {
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
                layout = Some(Layout {
                    redop: cols.contains(&"redop"),
                    root: cols.contains(&"root"),
                });
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
        if let Some(l) = layout {
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
        if t.contains("NCCL WARN") {
            out.warnings.push(t.to_string());
            continue;
        }
        if let Some(c) = regex!(r"NCCL INFO Using network (.+)$").captures(t) {
            using_network = Some(c[1].trim().to_string());
        } else if let Some(c) = regex!(r"via NET/([^/]+)/").captures(t) {
            via_net = Some(c[1].trim().to_string());
        } else if let Some(c) = regex!(r"NCCL INFO NET/(\w+)\s*: Using (.*)$").captures(t) {
            let devs = c[2].split(';').next().unwrap_or("");
            let devs = regex!(r"\[\d+\](\S+)")
                .captures_iter(devs)
                .map(|d| d[1].to_string())
                .collect::<Vec<_>>();
            net_using.push((c[1].to_string(), devs));
        }
    }
    if !evidence {
        return Err(unrecognised(
            KIND,
            text,
            "no nccl-tests header (`# nThread ...`), result table, version line or failure line",
        ));
    }
    if out.nccl_version.is_none() {
        out.nccl_version = library_code.map(version_from_code);
    }
    out.transport = using_network
        .or(via_net)
        .or_else(|| net_using.last().map(|(t, _)| t.clone()));
    if let Some(tr) = out.transport.as_deref() {
        for (t, devs) in &net_using {
            if t == tr {
                for d in devs {
                    if !out.net_devices.contains(d) {
                        out.net_devices.push(d.clone());
                    }
                }
            }
        }
    }
    finish(&mut out);
    Ok(out)
}

fn finish(out: &mut Nccl) {
    if !out.devices.is_empty() {
        out.nranks = u32::try_from(out.devices.len()).ok();
    }
    out.max_busbw_gbs = out
        .rows
        .iter()
        .flat_map(|r| [r.out_of_place.busbw_gbs, r.in_place.busbw_gbs])
        .flatten()
        .reduce(f64::max);
}

fn parse_json(text: &str) -> Result<Nccl, ParseError> {
    let v: Value = serde_json::from_str(text).map_err(|e| {
        let line = e.line().max(1);
        let l = text.lines().nth(line - 1).unwrap_or("");
        ParseError::new(KIND, line, l, format!("invalid nccl-tests -J JSON: {e}"))
    })?;
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
    let meas = |m: Option<&Value>| Measurement {
        time_us: m.and_then(|m| m.get("time")).and_then(Value::as_f64),
        algbw_gbs: m.and_then(|m| m.get("alg_bw")).and_then(Value::as_f64),
        busbw_gbs: m.and_then(|m| m.get("bus_bw")).and_then(Value::as_f64),
        wrong: m.and_then(|m| m.get("nwrong")).and_then(Value::as_f64),
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
            out_of_place: meas(r.get("out_of_place")),
            in_place: meas(r.get("in_place")),
        });
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

    #[test]
    fn row_layouts() {
        let new = Layout {
            redop: true,
            root: true,
        };
        let r = parse_row("8 2 float sum -1 6.94 0.00 0.00 0 0.60 0.01 0.00 N/A", new).unwrap();
        assert_eq!(
            (r.size_bytes, r.root, r.in_place.wrong),
            (8, Some(-1), None)
        );
        let old = Layout {
            redop: false,
            root: false,
        };
        let r = parse_row(
            "48 12 float 57.30 0.00 0.00 1e+00 57.09 0.00 0.00 0e+00",
            old,
        )
        .unwrap();
        assert_eq!(r.out_of_place.wrong, Some(1.0));
        assert!(parse_row("8 2 float sum -1 6.94 0.00 0.00 0 0.60 0.01 0.00", new).is_none());
        assert!(parse_row("8 2 float sum -1 x 0.00 0.00 0 0.60 0.01 0.00 0", new).is_none());
    }
}
