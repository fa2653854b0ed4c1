//! Errors of the silicon flow. Every variant is a problem of the
//! environment or of the request (missing tool or library, tool crash,
//! unexpected tool output, bad parameters): a proof that fails is not an
//! error but a result ([`crate::ProveReport::all_as_expected`]).
//! Messages hold their cause (no source chain), so any printer shows it all.

use std::path::PathBuf;

use sbrp_iface::ParamError;
use sbrp_tools::{FsError, PatchError, ToolError};

#[derive(Debug, thiserror::Error)]
pub enum SiliconError {
    /// A tool is missing, could not start, or failed.
    #[error(transparent)]
    Tool(#[from] ToolError),
    /// A file of the flow could not be written or read.
    #[error(transparent)]
    Fs(#[from] FsError),
    /// Parameters outside the allowed set.
    #[error("invalid parameter {param} = {value}: allowed {allowed}")]
    Params {
        param: &'static str,
        value: String,
        allowed: String,
    },
    /// The RTL generator refused allowed parameters (no instance for them).
    #[error("the RTL generator (sbrp-hdl) has no instance for {tag}: {reason}")]
    Generate { tag: String, reason: String },
    /// The built-in flow configuration (`constraints/synth/synth.conf`) is malformed.
    #[error("synth.conf: {0}")]
    Config(String),
    /// The standard-cell library is missing.
    #[error(
        "standard-cell library {} not found: install it with `sudo apt-get install {package}` \
         (Debian/Ubuntu; scripts/setup.sh does it), or set SBRP_LIBERTY to a liberty file",
        path.display()
    )]
    LibertyMissing { path: PathBuf, package: String },
    /// A tool's output is not what the flow expects (no netlist, a cell
    /// missing from the liberty, no slack in OpenSTA's report, ...).
    #[error("{0}")]
    Output(String),
    /// The generated Verilog does not have the shape the formal
    /// instrumentation expects.
    #[error("formal instrumentation: {0}")]
    Instrument(String),
    /// A broken variant's patch does not apply to the generated Verilog.
    #[error("broken variant of {property} ({what}): {error}; update PROPERTIES in silicon/src/properties.rs")]
    Patch {
        property: String,
        what: String,
        error: PatchError,
    },
    /// The Verilog file given to prove cannot be read or has no `sbrp_pb`.
    #[error("--rtl {}: {reason}", path.display())]
    RtlFile { path: PathBuf, reason: String },
    /// No property of that name.
    #[error("unknown property {name}: one of {known}")]
    UnknownProperty { name: String, known: String },
    /// The flow of one configuration failed.
    #[error("area flow for {tag}: {error}")]
    AreaFlow {
        tag: String,
        error: Box<SiliconError>,
    },
}

impl SiliconError {
    /// Whether the request itself is wrong (parameters, property name), as
    /// opposed to the environment.
    pub fn is_usage(&self) -> bool {
        match self {
            SiliconError::Params { .. }
            | SiliconError::UnknownProperty { .. }
            | SiliconError::RtlFile { .. } => true,
            SiliconError::AreaFlow { error, .. } => error.is_usage(),
            _ => false,
        }
    }
}

impl From<ParamError> for SiliconError {
    fn from(e: ParamError) -> SiliconError {
        SiliconError::Params {
            param: e.param,
            value: e.value,
            allowed: e.allowed,
        }
    }
}

pub type Result<T, E = SiliconError> = std::result::Result<T, E>;
