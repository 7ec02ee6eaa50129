//! `nccl_ib_hca(value)` and `nccl_ib_hca_uses(value, device, port)`: NCCL_IB_HCA read as NCCL
//! reads it (`util::nccl_hca`); `nccl_recipe_env(text)` and `nccl_socket_ifname_uses(value,
//! ifname)`: a recipe's NCCL settings and NCCL_SOCKET_IFNAME (`util::nccl_env`).

use crate::util::{nccl_env, nccl_hca};
use rhai::{Dynamic, Engine, Map};

pub fn register(engine: &mut Engine) {
    engine.register_fn("nccl_ib_hca", |value: &str| -> Dynamic {
        rhai::serde::to_dynamic(nccl_hca::parse(value)).unwrap_or(Dynamic::UNIT)
    });
    engine.register_fn(
        "nccl_ib_hca_uses",
        |value: &str, device: &str, port: i64| -> Map {
            let f = nccl_hca::parse(value);
            let mut m = Map::new();
            m.insert("used".into(), f.selects(device, port).into());
            m.insert("why".into(), f.explain(device, port).into());
            m
        },
    );
    engine.register_fn("nccl_recipe_env", |text: &str| -> Dynamic {
        rhai::serde::to_dynamic(nccl_env::effective(text)).unwrap_or(Dynamic::UNIT)
    });
    engine.register_fn(
        "nccl_socket_ifname_uses",
        |value: &str, ifname: &str| -> Map {
            let (used, why) = nccl_env::socket_ifname_uses(value, ifname);
            let mut m = Map::new();
            m.insert("used".into(), used.into());
            m.insert("why".into(), why.into());
            m
        },
    );
}
