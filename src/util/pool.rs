//! The one worker pool: run a function over items on up to `workers` threads, results in item
//! order. A panicking item becomes that item's `on_panic` result; the others still run.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// Stack size of pool threads (Rhai evaluation of deep scripts needs more than the default).
pub(crate) const STACK: usize = 16 * 1024 * 1024;

pub(crate) fn map<T: Sync, R: Send>(
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

/// Like [`map`], but an item starts only while each of its `keys` (small numbers: slots of a
/// dense table) is held by fewer than `cap` running items; items start in order, skipping
/// those whose keys are full (a node already in `cap` pairs), except that among the first
/// [`LOOKAHEAD`] items that may start, the one whose keys have the most items still to start
/// goes first (a node with more pairs left is not left with a wave of its own at the end).
/// Results in item order.
pub(crate) fn map_capped<T: Sync, R: Send>(
    items: &[T],
    workers: usize,
    cap: usize,
    keys: impl Fn(usize, &T) -> Vec<usize>,
    f: impl Fn(usize, &T) -> R + Sync,
    on_panic: impl Fn(usize, &T) -> R + Sync,
) -> Vec<R> {
    let keys: Vec<Vec<usize>> = items.iter().enumerate().map(|(k, t)| keys(k, t)).collect();
    let slots = keys.iter().flatten().max().map_or(0, |k| k + 1);
    let gate = Gate {
        cap: cap.max(1),
        keys: &keys,
        state: Mutex::new(GateState {
            busy: vec![0; slots],
            left: keys.iter().flatten().fold(vec![0; slots], |mut l, &x| {
                l[x] += 1;
                l
            }),
            started: vec![false; items.len()],
            first: 0,
        }),
        freed: Condvar::new(),
    };
    // Each call of the pool takes the next item that may start (as many calls as items).
    let order: Vec<usize> = (0..items.len()).collect();
    let done = map(
        &order,
        workers,
        |_, _| {
            let k = gate.next()?;
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(k, &items[k])))
                .unwrap_or_else(|_| on_panic(k, &items[k]));
            gate.release(k);
            Some((k, r))
        },
        |_, _| None,
    );
    let mut out: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    for (k, r) in done.into_iter().flatten() {
        out[k] = Some(r);
    }
    out.into_iter()
        .enumerate()
        .map(|(k, r)| r.unwrap_or_else(|| on_panic(k, &items[k])))
        .collect()
}

/// How many items that may start [`map_capped`] compares (bounded: a 1000-node mesh has a
/// million items).
pub(crate) const LOOKAHEAD: usize = 64;
/// How many items past the first that may start it looks at, at most.
const SCAN: usize = 4096;

/// Which items of [`map_capped`] have started and how many running items hold each key.
struct Gate<'a> {
    cap: usize,
    keys: &'a [Vec<usize>],
    state: Mutex<GateState>,
    freed: Condvar,
}

struct GateState {
    busy: Vec<usize>,
    /// Per key: items holding it that have not started.
    left: Vec<usize>,
    started: Vec<bool>,
    /// Every item before it has started.
    first: usize,
}

impl Gate<'_> {
    /// The first item not started whose keys all have room (waiting while there is none);
    /// None when every item has started.
    fn next(&self) -> Option<usize> {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            let n = st.started.len();
            if let Some(k) = self.pick(&st) {
                st.started[k] = true;
                for &x in &self.keys[k] {
                    st.busy[x] += 1;
                    st.left[x] -= 1;
                }
                while st.first < n && st.started[st.first] {
                    st.first += 1;
                }
                return Some(k);
            }
            if st.first >= n {
                return None;
            }
            st = self.freed.wait(st).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Among the first [`LOOKAHEAD`] items not started whose keys all have room (looking at
    /// most [`SCAN`] items past the first of them), the one whose keys have the most items
    /// left to start; the earliest on a tie.
    fn pick(&self, st: &GateState) -> Option<usize> {
        let n = st.started.len();
        let room = |k: usize| !st.started[k] && self.keys[k].iter().all(|&x| st.busy[x] < self.cap);
        let first = (st.first..n).find(|&k| room(k))?;
        let work = |k: usize| self.keys[k].iter().map(|&x| st.left[x]).sum::<usize>();
        let mut best = (work(first), first);
        for k in (first + 1..n.min(first + SCAN))
            .filter(|&k| room(k))
            .take(LOOKAHEAD - 1)
        {
            let w = work(k);
            if w > best.0 {
                best = (w, k);
            }
        }
        Some(best.1)
    }

    fn release(&self, k: usize) {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        self.keys[k].iter().for_each(|&x| st.busy[x] -= 1);
        drop(st);
        self.freed.notify_all();
    }
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

    /// `f` over `items` capped by `keys`: returns the results and, per key, the most running
    /// items that held it at once. `wait(k)` runs while item k holds its keys.
    fn run_capped(
        items: &[Vec<usize>],
        workers: usize,
        cap: usize,
        wait: impl Fn(usize) + Sync,
    ) -> (Vec<Option<usize>>, Vec<usize>) {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Mutex;
        let held: Vec<AtomicUsize> = (0..16).map(|_| AtomicUsize::new(0)).collect();
        let most = Mutex::new(vec![0usize; 16]);
        let out = super::map_capped(
            items,
            workers,
            cap,
            |_, ks| ks.clone(),
            |k, ks| {
                for &x in ks {
                    let now = held[x].fetch_add(1, Ordering::SeqCst) + 1;
                    let mut m = most.lock().unwrap();
                    m[x] = m[x].max(now);
                }
                wait(k);
                for &x in ks {
                    held[x].fetch_sub(1, Ordering::SeqCst);
                }
                if k == 7 {
                    panic!("boom");
                }
                Some(k)
            },
            |_, _| None,
        );
        (out, most.into_inner().unwrap())
    }

    /// Every item runs once, results in item order, a panic contained; no key is ever held
    /// by more than `cap` running items (keys: 2a for node a as first of a pair, 2b + 1 for b
    /// as second, every ordered pair of 6 nodes).
    #[test]
    fn capped_items_never_hold_a_key_more_than_the_cap() {
        let items: Vec<Vec<usize>> = (0..6)
            .flat_map(|a| {
                (0..6)
                    .filter(move |&b| b != a)
                    .map(move |b| vec![2 * a, 2 * b + 1])
            })
            .collect();
        let (out, most) = run_capped(&items, 16, 2, |_| std::thread::yield_now());
        for (k, r) in out.iter().enumerate() {
            assert_eq!(*r, if k == 7 { None } else { Some(k) });
        }
        assert!(
            most.iter().all(|&m| m <= 2),
            "a key held more than twice: {most:?}"
        );
    }

    /// Items of one key do run together up to the cap: each of a key's first `cap` items
    /// waits until `cap` of them have started (no timing involved; a 60 s guard against a
    /// hang only).
    #[test]
    fn capped_items_run_together_up_to_the_cap() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let items: Vec<Vec<usize>> = (0..30).map(|i| vec![i % 6]).collect();
        let started: Vec<AtomicUsize> = (0..6).map(|_| AtomicUsize::new(0)).collect();
        let (out, most) = run_capped(&items, 64, 3, |k| {
            started[k % 6].fetch_add(1, Ordering::SeqCst);
            let guard = std::time::Instant::now();
            while started[k % 6].load(Ordering::SeqCst) < 3 && guard.elapsed().as_secs() < 60 {
                std::thread::yield_now();
            }
        });
        assert_eq!(out.iter().filter(|r| r.is_some()).count(), 29);
        assert_eq!(
            &most[..6],
            &[3; 6],
            "each key held by exactly 3 items at once at most"
        );
    }

    /// How many waves the gate needs when every wave runs until nothing more may start and
    /// then all its items end together (one thread, no timing).
    fn waves(keys: &[Vec<usize>], cap: usize) -> usize {
        let slots = keys.iter().flatten().max().map_or(0, |k| k + 1);
        let gate = super::Gate {
            cap,
            keys,
            state: std::sync::Mutex::new(super::GateState {
                busy: vec![0; slots],
                left: keys.iter().flatten().fold(vec![0; slots], |mut l, &x| {
                    l[x] += 1;
                    l
                }),
                started: vec![false; keys.len()],
                first: 0,
            }),
            freed: std::sync::Condvar::new(),
        };
        let mut waves = 0;
        loop {
            let mut running = vec![];
            while gate.pick(&gate.state.lock().unwrap()).is_some() {
                running.push(gate.next().unwrap());
            }
            if running.is_empty() {
                return waves;
            }
            running.into_iter().for_each(|k| gate.release(k));
            waves += 1;
        }
    }

    /// Every ordered pair of 4 nodes, 2 per node as first and as second at once: in this
    /// order, starting whatever may start first takes 3 waves (node 1 and node 3 keep
    /// pairs for a third); the node with more pairs left going first takes the least, 2.
    #[test]
    fn nodes_with_more_pairs_left_go_first() {
        let order = [
            (2, 0),
            (1, 0),
            (0, 2),
            (0, 1),
            (1, 2),
            (3, 2),
            (0, 3),
            (2, 1),
            (3, 1),
            (3, 0),
            (1, 3),
            (2, 3),
        ];
        let keys: Vec<Vec<usize>> = order.iter().map(|&(a, b)| vec![2 * a, 2 * b + 1]).collect();
        assert_eq!(waves(&keys, 2), 2);
        // With one item per key at a time there is no choice: one wave per item of a key.
        let one: Vec<Vec<usize>> = (0..5).map(|_| vec![0]).collect();
        assert_eq!(waves(&one, 1), 5);
    }
}
