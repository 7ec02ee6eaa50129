//! Run-wide interruption (Ctrl-C / SIGTERM): set once, polled by long operations.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

fn flag() -> &'static Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

pub fn interrupt() {
    flag().store(true, Ordering::SeqCst);
}

pub fn interrupted() -> bool {
    flag().load(Ordering::SeqCst)
}

/// SIGINT/SIGTERM set the flag; a second one exits at once with code 3.
pub fn install_handlers() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    for sig in [SIGINT, SIGTERM] {
        // Registered first, so it sees the flag as it was before this signal.
        let _ = signal_hook::flag::register_conditional_shutdown(sig, 3, flag().clone());
        let _ = signal_hook::flag::register(sig, flag().clone());
    }
}
