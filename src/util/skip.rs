//! The one way a test skips (issue 50): a visible NOTICE naming the test and why, and with `CI`
//! set (`.ci/run` exports it) a failure, since a test that cannot run on CI is a gap, not a
//! pass. The unit tests reach it as `crate::util::skip`, the integration tests through
//! `tests/it/common` (which includes this file), so both follow one rule.

/// Whether `CI` is set to anything but empty, `false` or `0`.
pub(crate) fn under_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// Skips the calling test for `why`: panics under CI, else the NOTICE goes to the test's own
/// output (libtest's, which keeps it with the test's result: `--nocapture` shows it as it
/// comes). The caller returns (or moves on to its next case) right after.
#[track_caller]
pub(crate) fn skip(why: &str) {
    println!("{}", skip_where(under_ci(), why));
}

/// The NOTICE of a skip, as a value; under CI a panic (the failure) instead.
#[track_caller]
fn skip_where(ci: bool, why: &str) -> String {
    let here = std::panic::Location::caller();
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("?");
    assert!(
        !ci,
        "test `{test}` ({here}) skipped because {why}, and CI is set: a skipped test is a failure"
    );
    format!("NOTICE: skipping test `{test}` ({here}): {why}")
}

#[cfg(test)]
mod tests {
    #[test]
    #[should_panic(expected = "skipped because the moon is down, and CI is set")]
    fn a_skip_under_ci_is_a_failure() {
        super::skip_where(true, "the moon is down");
    }

    #[test]
    fn a_skip_elsewhere_is_a_notice_naming_the_test_the_place_and_why() {
        let n = super::skip_where(false, "the moon is down");
        assert!(
            // the test's path: util::skip::… in the unit tests, common::skip_rule::… in tests/it
            n.starts_with("NOTICE: skipping test `")
                && n.contains("::tests::a_skip_elsewhere_is_a_notice_naming_the_test"),
            "{n}"
        );
        assert!(
            n.contains("src/util/skip.rs:") && n.ends_with(": the moon is down"),
            "{n}"
        );
    }
}
