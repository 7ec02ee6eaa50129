//! Node methods of no one tool (`primitives::tools`): `n.file_info(path)`,
//! `n.read_text(path)`, `n.which(program)`, `n.needs(programs)`, `n.package_version(name)`,
//! `n.mgmt_address()`.

use super::api::InTest;
use super::api::{Api, Binder, BINDINGS};
use super::values::value;
use crate::primitives::tools;
use crate::primitives::NodeRef;
use rhai::NativeCallContext;

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

/// Files, programs, packages and addresses of one node.
fn register(api: &mut Api) {
    api.method("n.package_version(name)")
        .plain("the version as a string, () when not installed")
        .doc("the installed version of a Debian package (`dpkg-query -W -f='${Version}' NAME`), () when it is not installed")
        .node1(tools::package_version);
    api.method("n.file_info(path)")
        .doc("sha256, owner, group, mode and size of a file (sudo -n when needed)")
        .node1(tools::file_info);
    api.method("n.read_text(path)")
        .plain("the file's text")
        .doc("a text file's content (`cat -- PATH`): a read-only lookup that a dry run asks too; an unreadable file is an error naming it")
        .node1(tools::read_text);
    api.method("n.mgmt_address()")
        .plain("an address")
        .doc("the address fabcheck's SSH connection really reached (server side of $SSH_CONNECTION), else the inventory host")
        .node0(tools::mgmt_address);
    api.method("n.which(program, dirs)")
        .plain("path as a string; \"\" when not found")
        .doc("its path on the node (PATH with /usr/sbin and /sbin, else the first of dirs; `~/` is home), \"\" when nowhere; a read-only lookup that a dry run asks too")
        .register(|engine, name| {
            engine.register_fn(name, |ctx: NativeCallContext, n: &mut NodeRef, p: &str| {
                value(tools::which(&n.in_test(&ctx), p, &[]), ctx.call_position())
            });
            engine.register_fn(
                name,
                |ctx: NativeCallContext, n: &mut NodeRef, p: &str, dirs: rhai::Array| {
                    let dirs: Vec<String> = dirs.iter().map(|d| d.to_string()).collect();
                    value(tools::which(&n.in_test(&ctx), p, &dirs), ctx.call_position())
                },
            );
        });
    api.method("n.needs(programs)")
        .plain("nothing")
        .doc("declares the programs a check runs on the node, for --dry-run's preflight (which looks for them even where the listing stops before their commands); nothing outside a dry run")
        .register(|engine, name| {
            engine.register_fn(
                name,
                |ctx: NativeCallContext, n: &mut NodeRef, programs: rhai::Array| {
                    let programs: Vec<String> = programs.iter().map(|d| d.to_string()).collect();
                    value(tools::needs(&n.in_test(&ctx), &programs), ctx.call_position())
                },
            );
        });
}
