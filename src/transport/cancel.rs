//! Run-wide interruption (Ctrl-C / SIGTERM): set once, polled by long operations and awaited
//! (without polling) by the SSH transport's waits.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use tokio::sync::watch;

/// A plain static (no lazy initialisation): the signal handler sets it.
fn flag() -> &'static AtomicBool {
    static FLAG: AtomicBool = AtomicBool::new(false);
    &FLAG
}

fn channel() -> &'static watch::Sender<bool> {
    static CHAN: OnceLock<watch::Sender<bool>> = OnceLock::new();
    CHAN.get_or_init(|| watch::channel(false).0)
}

pub(crate) fn interrupt() {
    flag().store(true, Ordering::SeqCst);
    channel().send_replace(true);
}

pub(crate) fn interrupted() -> bool {
    flag().load(Ordering::SeqCst)
}

/// Resolves once the run is interrupted.
pub(crate) async fn cancelled() {
    if interrupted() {
        return;
    }
    // The sender lives for the whole process, so this only returns once the value is true.
    let _ = channel().subscribe().wait_for(|&v| v).await;
}

/// Set by a second (or later) SIGINT/SIGTERM: the operator (or GNU `timeout`, which signals
/// the child and then its process group) wants out sooner. Grace periods shrink; the reports
/// and the cleanup of the nodes still happen.
fn hurry_flag() -> &'static AtomicBool {
    static HURRY: AtomicBool = AtomicBool::new(false);
    &HURRY
}

/// Another signal came after the run was interrupted: shorten waits, skip nothing.
pub(crate) fn hurried() -> bool {
    hurry_flag().load(Ordering::SeqCst)
}

/// `normal`, or a short grace once the operator has signalled more than once.
pub(crate) fn grace(normal: std::time::Duration) -> std::time::Duration {
    if hurried() {
        normal.min(std::time::Duration::from_millis(300))
    } else {
        normal
    }
}

/// How long a run may still take after a second signal. The cleanup of the nodes (5 s at
/// most), closing the masters (2 s) and the reports take a few seconds; this only ends a run
/// that something outside fabcheck holds (a blocked filesystem), which the operator would
/// otherwise have to `kill -9`.
pub(crate) const LAST_RESORT: std::time::Duration = std::time::Duration::from_secs(20);

/// What fabcheck says as the last resort ends the process (the caller's output channel shows
/// it: this layer prints nothing).
pub(crate) fn last_resort_message(limit: std::time::Duration) -> String {
    format!(
        "fabcheck: still not finished {:.1} s after the second signal; exiting now (the reports may be missing)",
        limit.as_secs_f64()
    )
}

fn start_watchdog(say: fn(&str)) {
    let _ = std::thread::Builder::new()
        .name("fabcheck-last-resort".into())
        .spawn(move || {
            // Tests shorten it (FABCHECK_TEST_LAST_RESORT_MS) to prove the bound quickly.
            let limit = std::env::var("FABCHECK_TEST_LAST_RESORT_MS")
                .ok()
                .and_then(|v| v.parse().ok())
                .map(std::time::Duration::from_millis)
                .unwrap_or(LAST_RESORT);
            std::thread::sleep(limit);
            say(&last_resort_message(limit));
            std::process::exit(3);
        });
}

/// SIGINT/SIGTERM set the flag in the handler itself (polling code sees it at once), and from
/// the second signal on [`hurried`]; a thread blocked on the signals wakes the waiters of
/// `cancelled()`. No signal ends the process: a run that is interrupted, however often, still
/// ends its remote commands, removes its control directories and writes its reports, all
/// bounded by the transports' own timeouts ([`LAST_RESORT`] after the second signal is the
/// outer bound). `say` is the caller's output channel, for the last resort's one line.
pub(crate) fn install_handlers(say: fn(&str)) {
    // SIGHUP (the terminal closed) is a TERM too: reports written, exit 3.
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        // SAFETY: the handler only touches atomics (async-signal-safe).
        let _ = unsafe {
            signal_hook::low_level::register(sig, || {
                if flag().swap(true, Ordering::SeqCst) {
                    hurry_flag().store(true, Ordering::SeqCst);
                }
            })
        };
    }
    if let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) {
        let _ = std::thread::Builder::new()
            .name("fabcheck-signals".into())
            .spawn(move || {
                let mut watchdog = false;
                for _ in signals.forever() {
                    interrupt();
                    if hurried() && !watchdog {
                        watchdog = true;
                        start_watchdog(say);
                    }
                }
            });
    }
}
