//! `nccl_ib_hca(value)` and `nccl_ib_hca_uses(value, device, port)`: NCCL_IB_HCA read as NCCL
//! reads it; `nccl_recipe_env(text)` and `nccl_socket_ifname_uses(value, ifname)`: a recipe's
//! NCCL settings and NCCL_SOCKET_IFNAME (`primitives::nccl_env`).

use super::api::{Api, Binder, BINDINGS};
use crate::primitives::nccl_env::{self, Uses};
use rhai::{Dynamic, Map};

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.function("nccl_ib_hca(value)")
        .plain("#{ raw, exclude, exact, entries: [#{ hca, port }] }")
        .doc("NCCL_IB_HCA read as NCCL reads it (`^` exclude list, `=` exact names else prefixes, comma-separated `dev[:port]`)")
        .register(|engine, name| {
            engine.register_fn(name, |value: &str| -> Dynamic {
                rhai::serde::to_dynamic(nccl_env::ib_hca(value)).unwrap_or(Dynamic::UNIT)
            });
        });
    api.function("nccl_ib_hca_uses(value, device, port)")
        .plain("#{ used, why }")
        .doc("does NCCL use that RDMA device port under this NCCL_IB_HCA, and why")
        .register(|engine, name| {
            engine.register_fn(name, |value: &str, device: &str, port: i64| -> Map {
                uses(nccl_env::ib_hca_uses(value, device, port))
            });
        });
    api.function("nccl_recipe_env(text)")
        .plain("[#{ name, value, line }]")
        .doc("the NCCL_* settings a recipe's text gives NCCL (`export VAR=value` and `VAR=value` lines, launcher flags `-x`/`-e`, YAML/JSON mappings; quotes as the shell reads them; the last setting of a variable wins, with its line)")
        .register(|engine, name| {
            engine.register_fn(name, |text: &str| -> Dynamic {
                rhai::serde::to_dynamic(nccl_env::recipe_env(text)).unwrap_or(Dynamic::UNIT)
            });
        });
    api.function("nccl_socket_ifname_uses(value, ifname)")
        .plain("#{ used, why }")
        .doc("does NCCL pick that interface under this NCCL_SOCKET_IFNAME (`^` exclude list, `=` exact names else prefixes), and why")
        .register(|engine, name| {
            engine.register_fn(name, |value: &str, ifname: &str| -> Map {
                uses(nccl_env::socket_ifname_uses(value, ifname))
            });
        });
}

fn uses(u: Uses) -> Map {
    let mut m = Map::new();
    m.insert("used".into(), u.used.into());
    m.insert("why".into(), u.why.into());
    m
}
