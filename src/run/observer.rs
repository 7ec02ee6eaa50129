//! What the runner tells a console (or anything else) while it works.

use super::model::TestResult;

pub trait Observer: Sync {
    fn suite_started(&self, _name: &str, _tests: usize) {}
    fn test_started(&self, _name: &str) {}
    fn test_finished(&self, _t: &TestResult) {}
}

pub struct NoObserver;
impl Observer for NoObserver {}
