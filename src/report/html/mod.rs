//! HTML report (`--html FILE`): one self-contained file (inline CSS and SVG, no scripts, no
//! network loads) for the engineer who opens it after a maintenance window.
//!
//! Order: SIMULATED or REPLAYED banner (if any) · verdict header (PASSED/FAILED, run time, inventory,
//! counts) · diagnosis · unreachable nodes · the rack (node × rail heat maps, each with its
//! node × node matrix per rail) · failures and errors with message, detail and command output ·
//! plots · pair matrices without a rail · every test per suite · metrics tables · tool versions.
//!
//! Plots read metric fields (see docs/reports.md): **busbw vs message size** from metrics with
//! `size_bytes` (one series per test; a `test_each` test gives one per node), with the
//! threshold of the test's other metrics in that unit (the best busbw's) as a dashed line;
//! **node × rail heat maps** from metrics with `rail` and a node ([`crate::report::heatmap`]):
//! the value in each cell in its own unit, coloured by its distance from the map's median,
//! red only past a `threshold`, the parts the diagnosis names marked. **Pair matrices**
//! colour each cell by that pair's verdict (threshold and test status), never by rank. A
//! colour always has a legend; long labels are cut so that different labels stay different.

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
    charts::rack(&mut h, run);
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
