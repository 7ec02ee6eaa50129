//! Mutation test: no parser may panic (or take unreasonably long) on any input.
//!
//! Every fixture is mutated deterministically — truncated at line boundaries (every line for
//! files up to `MAX_TRUNCATIONS` lines, evenly spaced points beyond that) and then given
//! `FABCHECK_FUZZ_ITERS` (default 20) pseudo-random mutants each: lines deleted / duplicated /
//! swapped, bytes flipped, garbage inserted, numbers replaced by huge or odd values, very long
//! lines, truncation mid-line — plus a few synthetic inputs. Every KIND's parser runs on every mutant
//! inside `catch_unwind`. The PRNG is a seeded xorshift64*, so failures are reproducible; set
//! `FABCHECK_FUZZ_SEED` to explore other sequences.

use fabcheck::parse;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const MAX_TRUNCATIONS: usize = 32;
/// Larger fixtures are mutated through a window of their first and last lines (header, table
/// start, trailer); the full text is still parsed unmutated and truncated.
const WINDOW_ABOVE_BYTES: usize = 16 * 1024;
/// A parse that takes this much CPU time is a hang or a blow-up (a parse of these inputs takes
/// milliseconds). CPU time of the parsing thread, not wall-clock time: a busy 2-core CI machine
/// stretches the wall clock, not the work. Quadratic cost is proven by `parse_linear.rs`
/// (memory per input byte), not by time.
const SLOW: Duration = Duration::from_secs(10);

/// CPU time this thread has used so far.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec it is given.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

fn fixtures() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("fixture dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(text) = std::fs::read_to_string(&p) {
                let name = p
                    .strip_prefix(&root)
                    .expect("under root")
                    .display()
                    .to_string();
                out.push((name, text));
            }
        }
    }
    out.sort();
    out
}

const ODD_VALUES: &[&str] = &[
    "99999999999999999999999999999999",
    "18446744073709551616",
    "-1",
    "-0",
    "1e400",
    "-1e400",
    "NaN",
    "inf",
    "0x",
    "N/A",
    "",
    ":",
    "::::",
    "[",
    "]",
    "(",
    "{",
    "\"",
    "#",
    "==>",
    "é",
    "\u{0}",
    "\t\t",
    "2465.901216.65.1",
];

const GARBAGE_LINES: &[&str] = &[
    "#bytes #iterations BW peak[MB/sec] BW average[MB/sec] MsgRate[Mpps]",
    "#bytes #iterations t_min[usec] t_max[usec]",
    " 65536 1000 1 2 3 4 5 6 7 8 9 10 11 12",
    " 1 1",
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong",
    "           8             2     float     sum  99999999999999999999  1 2 3 4 5 6 7 8",
    "# Avg bus bandwidth    : 1e999",
    "# Out of bounds values : 99999999999999999999999 FAILED",
    "#  Rank 99999999999 Group 99999999999 Pid 9 on h device 99999999999 [x] n",
    "Slave Interface: x",
    "details actor lacp pdu:",
    "    port state: 99999999999999999999999",
    "Active Aggregator Info:",
    "Settings for :",
    "Speed: 99999999999999999999999Mb/s",
    "Lanes: -1",
    "Link detected: (",
    "driver:",
    "EEE status:",
    "link x/99999999999 state",
    "1/1: x/1:",
    "x port 99999999999 ==> y (Up)",
    "OFED-",
    "3 packets transmitted, 99999999999999999999999 received, 1e999% packet loss",
    "rtt min/avg/max/mdev = 1/2/3/4 ms",
    "[1,0]<stdout>:",
    "NCCL INFO NET/IB : Using [0]",
    "via NET/",
    "{\"start\": {}, \"end\": {\"sum_sent\": {\"bits_per_second\": 1e308}}}",
    "[{\"ifname\": 1}]",
];

fn mutate(text: &str, rng: &mut Rng) -> (String, String) {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let n = lines.len();
    let kind = rng.below(10);
    let desc;
    match kind {
        0 if n > 0 => {
            let i = rng.below(n);
            lines.remove(i);
            desc = format!("delete line {i}");
        }
        1 if n > 0 => {
            let i = rng.below(n);
            let l = lines[i].clone();
            lines.insert(i, l);
            desc = format!("duplicate line {i}");
        }
        2 if n > 1 => {
            let (i, j) = (rng.below(n), rng.below(n));
            lines.swap(i, j);
            desc = format!("swap lines {i} {j}");
        }
        3 => {
            let mut bytes = text.as_bytes().to_vec();
            let flips = 1 + rng.below(8);
            for _ in 0..flips {
                if !bytes.is_empty() {
                    let i = rng.below(bytes.len());
                    bytes[i] ^= 1 << rng.below(8);
                }
            }
            return (
                String::from_utf8_lossy(&bytes).into_owned(),
                format!("flip {flips} bits"),
            );
        }
        4 => {
            let i = rng.below(n + 1);
            lines.insert(i, rng.pick(GARBAGE_LINES).to_string());
            desc = format!("insert garbage line at {i}");
        }
        5 if n > 0 => {
            // replace one whitespace-separated token by an odd value
            let i = rng.below(n);
            let mut toks: Vec<String> = lines[i].split(' ').map(str::to_string).collect();
            let t = rng.below(toks.len());
            toks[t] = rng.pick(ODD_VALUES).to_string();
            lines[i] = toks.join(" ");
            desc = format!("odd token in line {i}");
        }
        6 => {
            let i = rng.below(n + 1);
            let unit = rng.pick(&["a", "9", " ", "9.", ":", "#", "[0]x ", "\t"]);
            lines.insert(i, unit.repeat(10_000 + rng.below(30_000)));
            desc = format!("very long line at {i}");
        }
        7 => {
            // truncate at a random char boundary (mid-line)
            let mut cut = rng.below(text.len() + 1);
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            return (text[..cut].to_string(), format!("truncate at byte {cut}"));
        }
        8 if n > 0 => {
            // append odd values to the end of a line
            let i = rng.below(n);
            lines[i].push_str(rng.pick(ODD_VALUES));
            desc = format!("append odd value to line {i}");
        }
        _ => {
            // several mutations at once
            let (a, _) = mutate(text, rng);
            let (b, _) = mutate(&a, rng);
            return (b, "double mutation".into());
        }
    }
    (lines.join("\n"), desc)
}

fn run_all(text: &str, what: &str, failures: &mut Vec<String>) {
    for kind in parse::parsers().iter().map(|p| p.kind) {
        let start = thread_cpu();
        let r = panic::catch_unwind(AssertUnwindSafe(|| parse::parse(kind, text)));
        let took = thread_cpu() - start;
        if r.is_err() {
            failures.push(format!("`{kind}` panicked on {what}"));
        } else if took > SLOW {
            failures.push(format!("`{kind}` took {took:?} on {what}"));
        }
    }
}

#[test]
fn no_parser_panics_on_mutated_fixtures() {
    let iters: usize = std::env::var("FABCHECK_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let seed: u64 = std::env::var("FABCHECK_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_fab0_c4ec_0001);
    let fixtures = fixtures();
    assert!(
        fixtures.len() > 100,
        "expected the fixture corpus, found {}",
        fixtures.len()
    );
    let default_hook = panic::take_hook();
    panic::set_hook(Box::new(|_| {}));
    let mut failures = Vec::new();
    let mut cases = 0usize;

    for synthetic in [
        "",
        "\n",
        " ",
        "\u{feff}",
        "\r\n\r\n",
        "{",
        "[",
        "null",
        "#",
        "# nThread",
        "#bytes",
    ] {
        run_all(
            synthetic,
            &format!("synthetic {synthetic:?}"),
            &mut failures,
        );
        cases += 1;
    }
    for (name, text) in &fixtures {
        let t0 = Instant::now();
        // truncation at line boundaries
        let starts: Vec<usize> = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        let step = if text.len() > WINDOW_ABOVE_BYTES {
            starts.len() / 20
        } else {
            starts.len() / MAX_TRUNCATIONS
        }
        .max(1);
        for &cut in starts.iter().step_by(step) {
            run_all(
                &text[..cut],
                &format!("{name} truncated at byte {cut}"),
                &mut failures,
            );
            cases += 1;
        }
        let base = if text.len() > WINDOW_ABOVE_BYTES {
            let lines: Vec<&str> = text.lines().collect();
            let head = &lines[..lines.len().min(200)];
            let tail = &lines[lines.len().saturating_sub(40)..];
            let mut w = head.join("\n");
            w.push('\n');
            w.push_str(&tail.join("\n"));
            w
        } else {
            text.clone()
        };
        let mut rng = Rng(seed
            ^ (name.len() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ text.len() as u64
            | 1);
        for i in 0..iters {
            let (mutant, desc) = mutate(&base, &mut rng);
            run_all(
                &mutant,
                &format!("{name} mutant {i} ({desc})"),
                &mut failures,
            );
            cases += 1;
        }
        if std::env::var("FUZZ_TIMING").is_ok() {
            eprintln!("{:>8.2?} {name}", t0.elapsed());
        }
        if failures.len() > 50 {
            break;
        }
    }
    panic::set_hook(default_hook);
    assert!(
        failures.is_empty(),
        "{} failures in {cases} cases, first: {:#?}",
        failures.len(),
        &failures[..failures.len().min(20)]
    );
}
