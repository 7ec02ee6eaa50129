//! fabcheck: scripted acceptance and regression harness for GPU cluster network fabrics.
//!
//! Data flows one way: `cli` → `inventory` + `engine` → `primitives` → `run` → `transport`;
//! results (`run::model`) → `report`. `engine` is the only folder that knows Rhai; `parse` and
//! `util` depend on nothing else in the crate.

pub mod cli;
pub mod engine;
pub mod inventory;
pub mod parse;
pub mod primitives;
pub mod report;
pub mod run;
pub mod transport;
pub mod util;
