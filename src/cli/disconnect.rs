//! `--persist[=DURATION]` (SSH masters kept across runs) and `fabcheck disconnect` (ends them);
//! see `transport::ssh::persist` and docs/reliability.md.

use super::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};
use crate::transport::ssh::persist;

/// Take `--persist[=DURATION]` for this process's SSH transport; a bad duration is a usage
/// error (its exit code).
pub fn persist(arg: Option<&str>) -> Result<(), i32> {
    let Some(a) = arg else {
        persist::set(None);
        return Ok(());
    };
    match crate::util::duration::parse_duration(a) {
        Ok(d) if d >= std::time::Duration::from_secs(1) => {
            persist::set(Some(d));
            Ok(())
        }
        _ => {
            eprintln!("--persist={a}: expected a duration of at least 1s (30s, 10m, 2h)");
            Err(EXIT_USAGE)
        }
    }
}

/// End every kept master of this user and remove their directory.
pub fn disconnect() -> i32 {
    match persist::disconnect() {
        Ok(n) => {
            println!(
                "disconnect: {n} kept SSH connection(s) ended ({})",
                persist::base_dir().display()
            );
            EXIT_OK
        }
        Err(e) => {
            eprintln!("disconnect: {e}");
            EXIT_FAILED
        }
    }
}
