//! The testbench library's one error type: what can stop a suite, a
//! benchmark or a build of an engine. The `sbrp` binary maps every one of
//! them to exit status 2 (usage, input or environment); failed checks are
//! results, not errors.

use sbrp_iface::vcd::WaveError;
use sbrp_iface::ParamError;
use sbrp_sim_fast::frontend::{ConfigError, LoadError};

use crate::engine::EngineError;

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Params(#[from] ParamError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Hdl(#[from] sbrp_hdl::HdlError),
    #[error(transparent)]
    Cosim(#[from] sbrp_cosim::CosimError),
    #[error(transparent)]
    Trace(#[from] sbrp_trace::TraceError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Wave(#[from] WaveError),
    #[error(transparent)]
    Fs(#[from] sbrp_tools::FsError),
    #[error("cannot encode the execution record: {0}")]
    Record(#[from] serde_json::Error),
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    /// A request the library cannot carry out as asked.
    #[error("{0}")]
    Invalid(String),
}

/// The testbench library's results.
pub type Result<T> = std::result::Result<T, BenchError>;

/// An I/O error with what was being done (`cannot read trace x.trace`).
pub fn io(what: String) -> impl FnOnce(std::io::Error) -> BenchError {
    move |source| BenchError::Io { what, source }
}
