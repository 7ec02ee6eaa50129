//! `n.ethtool_driver(iface)`: driver, firmware and bus address of an interface (`ethtool -i`).

use super::ethtool::ethtool_run;
use super::{parsed, NodeRef, PResult};
use crate::parse;

pub fn ethtool_driver(n: &NodeRef, iface: &str) -> PResult<parse::ethtool_driver::EthtoolDriver> {
    let o = ethtool_run(n, iface, "-i")?;
    let d = parsed(n.name(), &o.stdout, parse::ethtool_driver::parse)?;
    if let Some(driver) = d.driver.as_deref().filter(|x| !x.is_empty()) {
        let version = format!(
            "{driver} {}, firmware {}",
            d.version.as_deref().unwrap_or_default(),
            d.firmware_version.as_deref().unwrap_or_default()
        );
        crate::run::versions::record(n.name(), &format!("driver/firmware {iface}"), &version);
    }
    Ok(d)
}
