//! Small helpers every layer may use (they depend on nothing else in fabcheck): the one name
//! validator, the one worker pool, the one "did you mean", the one source of random names.

pub(crate) mod duration;
pub(crate) mod fmt;
pub(crate) mod fs;
pub(crate) mod names;
pub(crate) mod pool;
pub(crate) mod random;
pub(crate) mod shape;
#[cfg(test)]
pub(crate) mod skip;
pub(crate) mod suggest;
pub(crate) mod target;
