//! The running test's record as the tag of an evaluation: the runner tags the script's top
//! level, each attempt of a test and each `at_once` call with its [`TestLog`]; a native
//! function reads it from its call context.

use crate::primitives::NodeRef;
use crate::run::context::{TestCtx, TestLog};
use rhai::NativeCallContext;

/// The record of the test this call runs in; none outside a test.
pub(crate) fn test_log(ctx: &NativeCallContext) -> Option<TestLog> {
    ctx.tag()
        .and_then(|t| t.read_lock::<TestLog>().map(|l| l.clone()))
}

/// `f` over what the test this call runs in recorded so far; `None` outside a test.
pub(crate) fn recorded<R>(ctx: &NativeCallContext, f: impl FnOnce(&mut TestCtx) -> R) -> Option<R> {
    test_log(ctx).map(|l| l.with(f))
}

/// The script file the call's test runs from ("" outside a test), for file:line in messages.
pub(crate) fn script_file(ctx: &NativeCallContext) -> String {
    test_log(ctx)
        .map(|l| l.file().to_string())
        .unwrap_or_default()
}

/// A node a script handed a binding, its records going to the test the call runs in: every
/// binding that gives a primitive a node gives it `n.in_test(&ctx)`.
pub(crate) trait InTest {
    fn in_test(&self, ctx: &NativeCallContext) -> NodeRef;
}

impl InTest for NodeRef {
    fn in_test(&self, ctx: &NativeCallContext) -> NodeRef {
        self.recording_to(test_log(ctx))
    }
}
