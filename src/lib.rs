//! fabcheck: scripted acceptance and regression harness for GPU cluster network fabrics.
//!
//! Data flows one way: `cli` → `inventory` + `engine` → `primitives` → `transport`;
//! results → `report`.

pub mod cli;
pub mod engine;
pub mod inventory;
pub mod parse;
pub mod primitives;
pub mod report;
pub mod transport;
