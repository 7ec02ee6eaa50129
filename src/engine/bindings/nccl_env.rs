//! `nccl_ib_hca(value)` and `nccl_ib_hca_uses(value, device, port)`: NCCL_IB_HCA read as NCCL
//! reads it (`util::nccl_hca`); `nccl_recipe_env(text)` and `nccl_socket_ifname_uses(value,
//! ifname)`: a recipe's NCCL settings and NCCL_SOCKET_IFNAME (`util::nccl_env`).

use super::api::{Api, Binder, BINDINGS};
use crate::util::{nccl_env, nccl_hca};
use rhai::{Dynamic, Map};

#[linkme::distributed_slice(BINDINGS)]
static REGISTER: Binder = register;

fn register(api: &mut Api) {
    api.function("nccl_ib_hca(value)")
        .plain("#{ raw, exclude, exact, entries: [#{ hca, port }] }")
        .doc("NCCL_IB_HCA read as NCCL reads it (`^` exclude list, `=` exact names else prefixes, comma-separated `dev[:port]`)")
        .register(|engine, name| {
            engine.register_fn(name, |value: &str| -> Dynamic {
                rhai::serde::to_dynamic(nccl_hca::parse(value)).unwrap_or(Dynamic::UNIT)
            });
        });
    api.function("nccl_ib_hca_uses(value, device, port)")
        .plain("#{ used, why }")
        .doc("does NCCL use that RDMA device port under this NCCL_IB_HCA, and why")
        .register(|engine, name| {
            engine.register_fn(name, |value: &str, device: &str, port: i64| -> Map {
                let f = nccl_hca::parse(value);
                let mut m = Map::new();
                m.insert("used".into(), f.selects(device, port).into());
                m.insert("why".into(), f.explain(device, port).into());
                m
            });
        });
    api.function("nccl_recipe_env(text)")
        .plain("[#{ name, value, line }]")
        .doc("the NCCL_* settings a recipe's text gives NCCL (`export VAR=value` and `VAR=value` lines, launcher flags `-x`/`-e`, YAML/JSON mappings; quotes as the shell reads them; the last setting of a variable wins, with its line)")
        .register(|engine, name| {
            engine.register_fn(name, |text: &str| -> Dynamic {
                rhai::serde::to_dynamic(nccl_env::effective(text)).unwrap_or(Dynamic::UNIT)
            });
        });
    api.function("nccl_socket_ifname_uses(value, ifname)")
        .plain("#{ used, why }")
        .doc("does NCCL pick that interface under this NCCL_SOCKET_IFNAME (`^` exclude list, `=` exact names else prefixes), and why")
        .register(|engine, name| {
            engine.register_fn(name, |value: &str, ifname: &str| -> Map {
                let (used, why) = nccl_env::socket_ifname_uses(value, ifname);
                let mut m = Map::new();
                m.insert("used".into(), used.into());
                m.insert("why".into(), why.into());
                m
            });
        });
}
