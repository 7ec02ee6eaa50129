//! Run-wide interruption (Ctrl-C / SIGTERM): set once, polled by long operations and awaited
//! (without polling) by the SSH transport's waits.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use tokio::sync::watch;

fn flag() -> &'static Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

fn channel() -> &'static watch::Sender<bool> {
    static CHAN: OnceLock<watch::Sender<bool>> = OnceLock::new();
    CHAN.get_or_init(|| watch::channel(false).0)
}

pub fn interrupt() {
    flag().store(true, Ordering::SeqCst);
    channel().send_replace(true);
}

pub fn interrupted() -> bool {
    flag().load(Ordering::SeqCst)
}

/// Resolves once the run is interrupted.
pub async fn cancelled() {
    if interrupted() {
        return;
    }
    // The sender lives for the whole process, so this only returns once the value is true.
    let _ = channel().subscribe().wait_for(|&v| v).await;
}

/// SIGINT/SIGTERM set the flag; a second one exits at once with code 3. A thread blocked on
/// the signals wakes the waiters of `cancelled()`.
pub fn install_handlers() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    for sig in [SIGINT, SIGTERM] {
        // Registered first, so it sees the flag as it was before this signal.
        let _ = signal_hook::flag::register_conditional_shutdown(sig, 3, flag().clone());
        let _ = signal_hook::flag::register(sig, flag().clone());
    }
    if let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) {
        let _ = std::thread::Builder::new()
            .name("fabcheck-signals".into())
            .spawn(move || {
                if signals.forever().next().is_some() {
                    interrupt();
                }
            });
    }
}
