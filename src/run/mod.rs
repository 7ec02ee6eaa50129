//! What a run shares, beneath both the engine and the primitives: the results model, the
//! observer the runner reports progress to, the run environment (inventory, transports, the one
//! timeout policy), the per-test context, and cancellation.
//!
//! Arrows between folders go one way: `cli` → `engine` → `primitives` → `run` →
//! `transport`/`inventory`/`parse`/`util`; `report` reads `run::model`.

pub(crate) mod baseline;
pub(crate) mod context;
pub(crate) mod diagnosis;
pub(crate) mod dry;
pub(crate) mod env;
pub(crate) mod finish;
pub(crate) mod fleet;
pub(crate) mod health;
pub(crate) mod model;
pub(crate) mod observer;
pub(crate) mod outcome;
pub(crate) mod peers;
pub(crate) mod preflight;
pub(crate) mod profile;
pub(crate) mod settings;
pub(crate) mod versions;

/// Run-wide interruption (Ctrl-C / SIGTERM). It lives with the transports, whose waits it wakes.
pub(crate) use crate::transport::cancel;

/// How many sessions one SSH connection multiplexes; the engine's pair runner sizes by it.
pub(crate) use crate::transport::ssh::PER_CONNECTION;
/// A remote command's captured output, as the engine hands it to scripts.
pub(crate) use crate::transport::CmdOutput;
