//! Testbench of the SBRP persist buffer unit: drivers and comparators that
//! work on any `sbrp_iface::PbUnit` (the RTL or the reference model).

pub mod bench;
pub mod lockstep;
pub mod suites;

use sbrp_iface::{ParamError, PbParams, PbUnit};

/// Implementations available without Verilator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Impl {
    /// The reference model (`sim_fast`).
    Model,
    /// The RTL stepped by rust-hdl's own simulator (slow; small tests only).
    RustHdl,
}

pub fn make_unit(which: Impl, p: &PbParams) -> Result<Box<dyn PbUnit>, ParamError> {
    Ok(match which {
        Impl::Model => Box::new(sbrp_sim_fast::PbModel::new(p)?),
        Impl::RustHdl => rust_hdl_sim(p)?,
    })
}

#[cfg(not(feature = "model-only"))]
fn rust_hdl_sim(p: &PbParams) -> Result<Box<dyn PbUnit>, ParamError> {
    sbrp_hdl::new_sim(p)
}

/// Development aid: build without the RTL (`--features model-only`); the
/// rust-hdl implementation then refuses to start.
#[cfg(feature = "model-only")]
fn rust_hdl_sim(_: &PbParams) -> Result<Box<dyn PbUnit>, ParamError> {
    Err(ParamError {
        param: "impl",
        value: "rust-hdl".into(),
        allowed: "model only in a model-only build".into(),
    })
}

/// Implementations the directed tests run on in this build.
pub fn directed_impls() -> Vec<Impl> {
    if cfg!(feature = "model-only") {
        vec![Impl::Model]
    } else {
        vec![Impl::Model, Impl::RustHdl]
    }
}
