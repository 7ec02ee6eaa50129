//! Feed arbitrary UTF-8 to every parser KIND; any panic is a bug.
//! Run with `cargo +nightly fuzz run parse_all` (seed corpus: `cp -r tests/fixtures/* fuzz/corpus/parse_all/`).
//! `fuzz/corpus/parse_all/` keeps the pathological inputs found so far (issue 50: the
//! `nvidia-smi topo -m` inputs whose output was quadratic); `tests/it/parse_linear.rs` feeds
//! them to every parser and bounds the output per input byte.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        for p in fabcheck::parse::parsers() {
            let _ = (p.parse)(text);
        }
    }
});
