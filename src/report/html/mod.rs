//! HTML report (`--html FILE`): one self-contained file (inline CSS and SVG, no scripts, no
//! network loads) for the engineer who opens it after a maintenance window.
//!
//! Order: SIMULATED or REPLAYED banner (if any) · verdict header (PASSED/FAILED, run time, inventory,
//! counts) · failures and errors with message, detail and command output · plots · every test
//! per suite · metrics tables · tool versions.
//!
//! Plots read metric fields (see docs/reports.md): **busbw vs message size** from metrics with
//! `size_bytes` (one series per test; a `test_each` test gives one per node), with the
//! threshold of the test's other metrics in that unit (the best busbw's) as a dashed line;
//! **per-rail bandwidth** from metrics with `rail`, one bar each, grouped by `node` (else the
//! test's node): green or red only against a `threshold` (solid line), neutral grey with a
//! dotted mark for a `reference`. **Pair matrices** colour each cell by that pair's verdict
//! (threshold and test status), never by rank. A colour always has a legend; long labels are
//! cut so that different labels stay different.

mod charts;
mod health;
mod labels;
mod page;
mod styles;
mod tables;

use crate::run::model::RunResult;

pub(crate) fn render(run: &RunResult) -> String {
    let mut h = String::new();
    page::header(&mut h, run);
    page::diagnosis(&mut h, run);
    page::unreachable(&mut h, run);
    page::problems(&mut h, run);
    charts::section(&mut h, run);
    charts::matrices(&mut h, run);
    health::section(&mut h, run);
    tables::all_tests(&mut h, run);
    tables::metrics(&mut h, run);
    tables::profiles(&mut h, run);
    tables::tool_versions(&mut h, run);
    page::footer(&mut h, run);
    h
}
