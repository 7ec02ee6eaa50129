//! Small helpers every layer may use (they depend on nothing else in fabcheck): the one name
//! validator, the one worker pool, the one "did you mean", the one source of random names.

pub mod duration;
pub mod fmt;
pub mod fs;
pub mod names;
pub mod nccl_env;
pub mod nccl_hca;
pub mod pool;
pub mod random;
pub mod shape;
pub mod suggest;
