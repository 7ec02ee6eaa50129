//! Feed arbitrary UTF-8 to every parser KIND; any panic is a bug.
//! Run with `cargo +nightly fuzz run parse_all` (seed corpus: `cp -r tests/fixtures fuzz/corpus/parse_all`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        for (kind, _, _) in fabcheck::parse::KINDS {
            let _ = fabcheck::parse::parse(kind, text);
        }
    }
});
