//! Which implementation of the unit runs: one vocabulary for every driver,
//! suite and command (the reference model, the RTL in rust-hdl's simulator,
//! the RTL Verilated, or the RTL and the model in lockstep).

use sbrp_iface::{ParamError, PbParams, PbUnit};

/// An implementation of the unit (or a pair compared cycle by cycle).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Engine {
    /// The reference model (`sim_fast`).
    Model,
    /// The RTL stepped by rust-hdl's own simulator (slow; small tests only).
    RustHdl,
    /// The RTL compiled by Verilator (`cosim`).
    Verilator,
    /// Verilator and the model in lockstep, compared every cycle.
    Lockstep,
}

impl Engine {
    /// The name reports use (also `PbUnit::name` of the implementation).
    pub fn name(self) -> &'static str {
        match self {
            Engine::Model => "model",
            Engine::RustHdl => "rusthdl",
            Engine::Verilator => "verilator",
            Engine::Lockstep => "lockstep",
        }
    }
    /// True when the engine runs the Verilated RTL.
    pub fn needs_verilator(self) -> bool {
        matches!(self, Engine::Verilator | Engine::Lockstep)
    }
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An engine that cannot start.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Params(#[from] ParamError),
    #[error("engine {0} is not available: {1}")]
    Unavailable(Engine, &'static str),
}

/// A unit of an engine that needs no build step (model or rust-hdl); the
/// Verilated engines are built by `suites::Rtl`.
pub fn make_unit(engine: Engine, p: &PbParams) -> Result<Box<dyn PbUnit>, EngineError> {
    match engine {
        Engine::Model => Ok(Box::new(sbrp_sim_fast::PbModel::new(p)?)),
        Engine::RustHdl => rust_hdl_sim(p),
        Engine::Verilator | Engine::Lockstep => Err(EngineError::Unavailable(
            engine,
            "it needs a Verilator build (suites::Rtl)",
        )),
    }
}

#[cfg(not(feature = "no-rusthdl"))]
fn rust_hdl_sim(p: &PbParams) -> Result<Box<dyn PbUnit>, EngineError> {
    Ok(sbrp_hdl::new_sim(p)?)
}

/// Development aid: a build without the rust-hdl simulation of the RTL
/// (`--features no-rusthdl`) refuses to start it.
#[cfg(feature = "no-rusthdl")]
fn rust_hdl_sim(_: &PbParams) -> Result<Box<dyn PbUnit>, EngineError> {
    Err(EngineError::Unavailable(
        Engine::RustHdl,
        "this build has the no-rusthdl feature",
    ))
}

/// Engines the directed tests run on in this build.
pub fn directed_engines() -> Vec<Engine> {
    if cfg!(feature = "no-rusthdl") {
        vec![Engine::Model]
    } else {
        vec![Engine::Model, Engine::RustHdl]
    }
}
