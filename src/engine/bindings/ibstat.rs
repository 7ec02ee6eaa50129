//! InfiniBand ports (`primitives::ibstat`, `primitives::ib_port_policy`): `n.ib_ports()`,
//! `n.ib_port_check(rate)`.

use super::api::InTest;
use super::api::{Api, Binder, BINDINGS};
use super::values::{number, value};
use crate::primitives::ib_port_policy::{self, PortCheck, PortExpect};
use crate::primitives::{ibstat, NodeRef, PResult};
use rhai::{Dynamic, NativeCallContext};

fn port_check(n: &NodeRef, rate: Option<f64>) -> PResult<Vec<PortCheck>> {
    let ports = ibstat::ib_ports(n)?;
    Ok(ports
        .iter()
        .map(|p| ib_port_policy::check_port(n.name(), p, PortExpect { rate }))
        .collect())
}

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.method("n.ib_ports()")
        .doc("every HCA port of the node from `ibstat`, flat: device, port, state, phys_state, rate (Gb/s), base_lid, sm_lid, link_layer, ca_type, fw_ver")
        .node0(ibstat::ib_ports);
    api.method("n.ib_port_check(rate)")
        .returns::<Vec<PortCheck>>()
        .doc("the InfiniBand port check of every HCA port (`ibstat`): State Active, Physical state LinkUp, rate at least `rate` Gb/s (() or omitted: not judged), a LID and a subnet manager (SM LID not 0); ports whose link layer is not InfiniBand get infiniband: false and no problem (RoCE checks apply)")
        .register(|engine, name| {
            engine.register_fn(name, |ctx: NativeCallContext, n: &mut NodeRef| {
                value(port_check(&n.in_test(&ctx), None), ctx.call_position())
            });
            engine.register_fn(
                name,
                |ctx: NativeCallContext, n: &mut NodeRef, rate: Dynamic| {
                    value(port_check(&n.in_test(&ctx), number(&rate)), ctx.call_position())
                },
            );
        });
}
