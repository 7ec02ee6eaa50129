//! What a run shares, beneath both the engine and the primitives: the results model, the
//! observer the runner reports progress to, the run environment (inventory, transports, the one
//! timeout policy), the per-test context, and cancellation.
//!
//! Arrows between folders go one way: `cli` → `engine` → `primitives` → `run` →
//! `transport`/`inventory`/`parse`/`util`; `report` reads `run::model`.

pub mod baseline;
pub mod context;
pub mod diagnosis;
pub mod env;
pub mod finish;
pub mod model;
pub mod observer;
pub mod outcome;
pub mod peers;
pub mod preflight;
pub mod profile;
pub mod versions;

/// Run-wide interruption (Ctrl-C / SIGTERM). It lives with the transports, whose waits it wakes.
pub use crate::transport::cancel;

/// How many sessions one SSH connection multiplexes; the engine's pair runner sizes by it.
pub use crate::transport::ssh::PER_CONNECTION;
/// A remote command's captured output, as the engine hands it to scripts.
pub use crate::transport::CmdOutput;
