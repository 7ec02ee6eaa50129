//! Feed arbitrary UTF-8 to every parser KIND; any panic is a bug.
//! Run with `cargo +nightly fuzz run parse_all fuzz/corpus/parse_all fuzz/seeds/parse_all
//! tests/fixtures` (the first folder, not kept in git, receives what the run finds).
//! `fuzz/seeds/parse_all/` (kept in git) holds the pathological inputs found so far (issue 50:
//! the `nvidia-smi topo -m` inputs whose output was quadratic, synthesised from the real
//! capture `tests/fixtures/nvidia-smi/topo-m-8xB200-8xmlx5-gke-a4.txt`); copy a new one there.
//! `tests/it/parse_linear.rs` feeds them (and a local `fuzz/corpus/parse_all/`) to every parser
//! and bounds the output per input byte.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        for p in fabcheck::parse::parsers() {
            let _ = (p.parse)(text);
        }
    }
});
