//! The idealised persist buffer unit and the choice of unit an SBRP SM
//! hosts (`docs/model.md`, "The idealised unit"; the ladder of
//! `docs/results.md`).

mod unit;

pub use unit::{IdealUnit, FAULTS};

use sbrp_iface::PbUnit;

use crate::config::{GpuConfig, UnitParams};

/// The unit an SBRP SM of `cfg` hosts when it is not given one: the
/// idealised unit under `ideal.unit`, else the v2 unit's reference model.
pub fn model_unit(cfg: &GpuConfig, p: &UnitParams) -> Box<dyn PbUnit> {
    if cfg.ideal.unit {
        Box::new(IdealUnit::new(p.get(), &cfg.ideal))
    } else {
        Box::new(sbrp_sim_fast::PbModel::new(p.get()).expect("validated"))
    }
}
