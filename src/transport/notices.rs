//! What a transport has to tell the reports, not only the console (a changed host key that
//! `known_hosts = "off"` accepted): kept here until the run records the next command, then
//! added to the warnings of the test that met it (see `run::env::log_command`).

use std::sync::Mutex;

static NOTICES: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Keep `message` for the reports.
pub(crate) fn notice(message: String) {
    NOTICES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(message);
}

/// The notices kept so far (each is handed out once).
pub(crate) fn take() -> Vec<String> {
    std::mem::take(&mut *NOTICES.lock().unwrap_or_else(|p| p.into_inner()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn notices_are_handed_out_once_in_order() {
        super::notice("a".into());
        super::notice("b".into());
        let got = super::take();
        assert!(
            got.ends_with(&["a".to_string(), "b".to_string()]),
            "{got:?}"
        );
        assert!(!super::take().contains(&"a".to_string()));
    }
}
