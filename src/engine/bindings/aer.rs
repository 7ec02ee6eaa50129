//! The kernel's AER statistics (`primitives::aer`): `n.aer_stats(dirs)`.

use super::api::{Api, Binder, BINDINGS};
use crate::primitives::aer;

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.method("n.aer_stats(dirs)")
        .doc("the kernel's AER statistics (aer_dev_correctable/nonfatal/fatal, one `head -v`) of the sysfs device directories `dirs` (space-separated): per file its device, the port above it, severity, counters and TOTAL; a directory without the files is left out")
        .node1(aer::aer_stats);
}
