//! Progress while a run works: without a terminal (CI logs, Jenkins) a plain line on stderr at
//! a steady interval — which test runs, for how long, how many testcases (nodes, for the per-node
//! ones) are done — so a 20-minute NCCL sweep is not twenty silent minutes that a CI system
//! kills; on a terminal the console's live line shows the same. `FABCHECK_PROGRESS_SECS` sets
//! the interval (30 s; 0 turns the plain lines off).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

/// The default interval between two progress lines without a terminal.
pub(crate) const DEFAULT_INTERVAL: Duration = Duration::from_secs(30);

#[derive(Default)]
struct State {
    running: Vec<(String, Instant)>,
    done: usize,
    total: usize,
}

pub(crate) struct Progress {
    state: Mutex<State>,
    stopped: AtomicBool,
    ticker: Once,
}

impl Default for Progress {
    fn default() -> Progress {
        Progress {
            state: Mutex::default(),
            stopped: AtomicBool::new(false),
            ticker: Once::new(),
        }
    }
}

impl Progress {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn suite(&self, tests: usize) {
        self.state().total += tests;
    }

    pub(crate) fn started(&self, name: &str) {
        self.state()
            .running
            .push((name.to_string(), Instant::now()));
    }

    pub(crate) fn finished(&self, name: &str) {
        let mut s = self.state();
        if let Some(i) = s.running.iter().position(|(n, _)| n == name) {
            s.running.remove(i);
        }
        s.done += 1;
    }

    /// No more lines (the summary is being printed).
    pub(crate) fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
    }

    /// The line: `running `NAME` for 1m30s (+2 more); 4 of 12 testcases done`, None when
    /// nothing runs.
    pub(crate) fn line(&self) -> Option<String> {
        let s = self.state();
        let (name, since) = s.running.iter().min_by_key(|(_, t)| *t)?;
        let more = match s.running.len() {
            1 => String::new(),
            n => format!(" (+{} more)", n - 1),
        };
        // Test names are the script's (and its nodes') words: the console's one sanitiser.
        Some(format!(
            "running `{}` for {}{more}; {} of {} testcases done",
            crate::util::fmt::clean_text(name).replace('\n', " "),
            human(since.elapsed()),
            s.done,
            s.total.max(s.done)
        ))
    }

    /// Starts, once, the thread that prints [`Progress::line`] on stderr every `interval`.
    pub(crate) fn tick_on_stderr(self: &Arc<Self>, interval: Duration) {
        if interval.is_zero() {
            return;
        }
        let me = self.clone();
        self.ticker.call_once(move || {
            let _ = std::thread::Builder::new()
                .name("progress".into())
                .spawn(move || me.ticker_loop(interval));
        });
    }

    fn ticker_loop(&self, interval: Duration) {
        let step = Duration::from_millis(100).min(interval);
        let mut next = Instant::now() + interval;
        while !self.stopped.load(Ordering::SeqCst) {
            std::thread::sleep(step);
            if Instant::now() < next {
                continue;
            }
            next += interval;
            if let Some(l) = self.line() {
                if !self.stopped.load(Ordering::SeqCst) {
                    eprintln!("fabcheck: {l}");
                }
            }
        }
    }
}

/// The longest interval taken: a larger `FABCHECK_PROGRESS_SECS` (up to 1.8e19 and beyond,
/// where a `Duration` or an `Instant` would overflow) is clamped to it.
const MAX_INTERVAL: Duration = Duration::from_secs(366 * 24 * 3600);

/// The interval of the plain progress lines: `FABCHECK_PROGRESS_SECS`, else 30 s.
pub(crate) fn interval() -> Duration {
    interval_of(std::env::var("FABCHECK_PROGRESS_SECS").ok().as_deref())
}

/// [`interval`] of the variable's value: a number of seconds (at most [`MAX_INTERVAL`]).
fn interval_of(v: Option<&str>) -> Duration {
    v.and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| !s.is_nan() && *s >= 0.0)
        .map_or(DEFAULT_INTERVAL, |s| {
            Duration::from_secs_f64(s.min(MAX_INTERVAL.as_secs_f64()))
        })
}

/// `45s`, `1m30s`, `1h02m`.
pub(crate) fn human(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_interval_is_clamped_not_a_panic() {
        for v in ["1.8e19", "1e300", "inf", "18446744073709551616"] {
            assert_eq!(interval_of(Some(v)), MAX_INTERVAL, "{v}");
        }
        assert_eq!(interval_of(Some("2")), Duration::from_secs(2));
        assert_eq!(interval_of(Some("-1")), DEFAULT_INTERVAL);
        assert_eq!(interval_of(Some("NaN")), DEFAULT_INTERVAL);
        // The ticker adds it to now: no overflow.
        let _ = Instant::now() + MAX_INTERVAL;
    }

    #[test]
    fn the_line_names_the_longest_running_test_and_the_count_done() {
        let p = Progress::default();
        assert_eq!(p.line(), None);
        p.suite(3);
        p.started("nccl sweep");
        std::thread::sleep(Duration::from_millis(5));
        p.started("ping [a]");
        p.finished("ping [a]");
        p.started("ping [b]");
        p.started("evil \u{1b}]0;title\u{7}\u{202e}name");
        let l = p.line().unwrap();
        assert!(
            l.starts_with("running `nccl sweep` for 0s (+2 more); 1 of 3 testcases done"),
            "{l}"
        );
        p.finished("nccl sweep");
        p.finished("ping [b]");
        let l = p.line().unwrap();
        assert!(l.starts_with("running `evil name` for"), "{l:?}");
        assert_eq!(human(Duration::from_secs(90)), "1m30s");
        assert_eq!(human(Duration::from_secs(3720)), "1h02m");
    }
}
