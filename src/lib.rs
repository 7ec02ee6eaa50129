//! fabcheck: scripted acceptance and regression harness for GPU cluster network fabrics.
//!
//! Data flows one way: `cli` → `inventory` + `engine` → `primitives` → `run` → `transport`;
//! results (`run::model`) → `report`. `engine` is the only folder that knows Rhai; `parse` and
//! `util` depend on nothing else in the crate.

#![warn(unreachable_pub)]

pub mod cli;
pub(crate) mod engine;
pub(crate) mod inventory;
pub mod parse;
pub(crate) mod primitives;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod transport;
pub(crate) mod util;
