//! `nccl_ib_hca(value)` and `nccl_ib_hca_uses(value, device, port)`: NCCL_IB_HCA read as NCCL
//! reads it (`util::nccl_hca`).

use crate::util::nccl_hca;
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
}
