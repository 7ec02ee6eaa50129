//! Tool versions in the output of commands a run sends anyway: `X --version`, `ofed_info -s`,
//! `uname -r`, a driver and its firmware from `ethtool -i`, a package from `dpkg-query`, the
//! NCCL and nccl-tests banners, iperf3's JSON. Pure: the run reads every logged command
//! through [`seen`] (`run::versions`).

use std::sync::OnceLock;

/// The (tool, version) pairs that command `command`, ended with `exit`, shows in its output.
pub(crate) fn seen(
    command: &str,
    exit: Option<i64>,
    stdout: &str,
    stderr: &str,
) -> Vec<(String, String)> {
    static NCCL: OnceLock<regex::Regex> = OnceLock::new();
    static TESTS: OnceLock<regex::Regex> = OnceLock::new();
    static IPERF: OnceLock<regex::Regex> = OnceLock::new();
    let nccl = NCCL.get_or_init(|| regex::Regex::new(r"NCCL version (\S+)").expect("regex"));
    let tests =
        TESTS.get_or_init(|| regex::Regex::new(r"# nccl-tests version (\S+)").expect("regex"));
    let iperf =
        IPERF.get_or_init(|| regex::Regex::new(r#""version":\s*"(iperf [^"]+)""#).expect("regex"));
    let mut out = Vec::new();
    let mut add = |tool: &str, version: &str| {
        if !tool.is_empty() && !version.is_empty() {
            out.push((tool.to_string(), version.to_string()));
        }
    };
    let ok = exit == Some(0);
    let cmd = command.trim();
    if ok && cmd == "uname -r" {
        add("kernel", stdout.trim());
    }
    if ok && (cmd.ends_with("--version") || cmd == "ofed_info -s") {
        let program = cmd.split_whitespace().next().unwrap_or("");
        let first_line = stdout
            .lines()
            .chain(stderr.lines())
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("");
        add(program.rsplit('/').next().unwrap_or(""), first_line);
    }
    let unquoted = |w: &str| w.trim().trim_matches('\'').to_string();
    if let (true, Some(iface)) = (ok, cmd.strip_prefix("ethtool -i ")) {
        if let Ok(d) = super::ethtool_driver::parse(stdout) {
            if let Some(driver) = d.driver.as_deref().filter(|x| !x.is_empty()) {
                let version = format!(
                    "{driver} {}, firmware {}",
                    d.version.as_deref().unwrap_or_default(),
                    d.firmware_version.as_deref().unwrap_or_default()
                );
                add(&format!("driver/firmware {}", unquoted(iface)), &version);
            }
        }
    }
    if let (true, Some(package)) = (ok, cmd.strip_prefix("dpkg-query -W -f='${Version}' ")) {
        add(&unquoted(package), stdout.trim());
    }
    for (re, tool) in [(nccl, "nccl"), (tests, "nccl-tests"), (iperf, "iperf3")] {
        if let Some(m) = re.captures(stdout) {
            add(tool, &m[1]);
        }
    }
    out
}
