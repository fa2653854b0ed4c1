//! Serde form of the unit's parameters (`sbrp-iface` has no serde): the
//! reports carry them.

use sbrp_iface::{FlushPolicy, PbParams};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
#[serde(remote = "FlushPolicy", rename_all = "lowercase")]
enum FlushPolicyDef {
    Window,
    Eager,
    Lazy,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "PbParams")]
pub(crate) struct PbParamsDef {
    entries: u32,
    warps: u32,
    lines: u32,
    actr_bits: u32,
    window: u32,
    #[serde(with = "FlushPolicyDef")]
    policy: FlushPolicy,
}
