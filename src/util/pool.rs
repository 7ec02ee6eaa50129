//! The one worker pool: run a function over items on up to `workers` threads, results in item
//! order. A panicking item becomes that item's `on_panic` result; the others still run.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Stack size of pool threads (Rhai evaluation of deep scripts needs more than the default).
pub const STACK: usize = 16 * 1024 * 1024;

pub fn map<T: Sync, R: Send>(
    items: &[T],
    workers: usize,
    f: impl Fn(usize, &T) -> R + Sync,
    on_panic: impl Fn(usize, &T) -> R + Sync,
) -> Vec<R> {
    let n = items.len();
    if n == 0 {
        return Vec::new();
    }
    let slots: Vec<Mutex<Option<R>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let work = || loop {
        let k = next.fetch_add(1, Ordering::SeqCst);
        if k >= n {
            break;
        }
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(k, &items[k])))
            .unwrap_or_else(|_| on_panic(k, &items[k]));
        *slots[k].lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
    };
    std::thread::scope(|s| {
        let mut spawned = 0;
        for _ in 0..workers.max(1).min(n) {
            // A thread that cannot be spawned (ulimit -u) leaves its share to the others.
            if std::thread::Builder::new()
                .stack_size(STACK)
                .spawn_scoped(s, work)
                .is_ok()
            {
                spawned += 1;
            }
        }
        if spawned == 0 {
            work();
        }
    });
    slots
        .into_iter()
        .enumerate()
        .map(|(k, s)| {
            s.into_inner()
                .unwrap_or_else(|p| p.into_inner())
                .unwrap_or_else(|| on_panic(k, &items[k]))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_in_order_and_panics_contained() {
        let items: Vec<usize> = (0..20).collect();
        let out = super::map(
            &items,
            4,
            |_, &i| if i == 7 { panic!("boom") } else { i * 2 },
            |_, _| 999,
        );
        assert_eq!(out[3], 6);
        assert_eq!(out[7], 999);
        assert_eq!(out.len(), 20);
    }
}
