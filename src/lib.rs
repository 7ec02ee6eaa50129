//! fabcheck: scripted acceptance and regression harness for GPU cluster network fabrics.
//!
//! Data flows one way: `cli` → `inventory` + `engine` → `primitives` → `transport`;
//! results → `report`.

pub mod parse;
