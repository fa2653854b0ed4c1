//! Verilator wrapper of the SBRP persist buffer RTL (ports: the table of
//! `sbrp_iface::ports`, docs/microarch.md §2).
//!
//! [`VerilatedPb::build`] verilates the RTL (Verilog text from the caller,
//! e.g. `sbrp_hdl::generate_verilog`, or any Verilog file with top module
//! `sbrp_pb` and the table's ports), compiles it with a small C++ shim
//! (`csrc/shim.cpp` plus a port header generated from the table) into a
//! shared library (profile-guided by default, [`BuildOpts::pgo`]), caches
//! the library (keyed by a hash of everything that
//! goes into it, under a per-key file lock; see [`BuildOpts`] and
//! cosim/README.md), loads it and returns a model that implements
//! [`PbUnit`]: one FFI call per clock cycle. Waveforms: wrap the model in
//! `sbrp_iface::vcd::Traced`.
//!
//! ```no_run
//! use sbrp_cosim::{BuildOpts, RtlSource, VerilatedPb};
//! use sbrp_iface::{Op, PbIn, PbParams, PbUnit};
//!
//! let p = PbParams::default();
//! let text = std::fs::read_to_string("out/sbrp_pb.v").unwrap();
//! let src = RtlSource::Verilog { text, name: "sbrp_pb.v".into() };
//! let mut rtl = VerilatedPb::build(&p, src, &BuildOpts::default())?;
//! rtl.step(&PbIn::reset());
//! let out = rtl.step(&PbIn::req(Op::Store, 3, 17));
//! assert!(out.req_ready);
//! # Ok::<(), sbrp_cosim::CosimError>(())
//! ```

mod builder;
mod ffi;
mod top_ports;

use std::path::{Path, PathBuf};
use std::ptr::NonNull;

use sbrp_iface::ports::{self, N_IN, N_OUT};
use sbrp_iface::vcd::{WaveError, WaveStatus};
use sbrp_iface::{ParamError, PbIn, PbOut, PbParams, PbUnit};

pub use builder::{BuildOpts, BuildReport, RtlSource, ENV_CACHE, ENV_JOBS, ENV_VERILATOR};

/// Errors of building and loading a model.
#[derive(Debug, thiserror::Error)]
pub enum CosimError {
    #[error(
        "verilator not found (tried `{0}`): install it with `apt-get install verilator` \
         (scripts/run.sh and scripts/test.sh do this)"
    )]
    VerilatorNotFound(String),
    #[error("g++ not found: install it with `apt-get install g++` (Verilator needs it)")]
    CompilerNotFound,
    #[error("make not found: install it with `apt-get install make` (Verilator needs it)")]
    MakeNotFound,
    #[error(transparent)]
    Params(ParamError),
    #[error("cannot write waveform {path}: {1}", path = .0.display())]
    Trace(PathBuf, String),
    #[error("cannot read RTL file {path}: {source}")]
    RtlFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{tool} failed{} ({status}){}:\n{errors}", if rtl.is_empty() { String::new() } else { format!(" on {rtl}") }, log.as_ref().map(|l| format!("; full log in {}", l.display())).unwrap_or_default())]
    Tool {
        tool: String,
        /// The RTL being built.
        rtl: String,
        status: String,
        /// The tool's own error lines.
        errors: String,
        log: Option<PathBuf>,
    },
    #[error("{0}")]
    Ports(String),
    #[error("cannot load the model library: {0}")]
    Load(String),
    /// An external tool could not be started.
    #[error(transparent)]
    Run(sbrp_tools::ToolError),
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
}

/// The Verilated persist buffer unit.
pub struct VerilatedPb {
    params: PbParams,
    fns: ffi::ShimFns,
    handle: NonNull<std::ffi::c_void>,
    report: BuildReport,
    /// Each input port's mask for the parameters, in table order.
    in_masks: [u64; N_IN],
    /// The waveform of every signal being written, and where its error goes.
    trace: Option<(PathBuf, WaveStatus)>,
    /// Cycles from a request taken to its response: 3, more with register
    /// slices in the top (`docs/microarch.md` §2.1), which the Verilog does
    /// not declare; [`Self::with_rsp_latency`] sets it.
    rsp_latency: usize,
}

// SAFETY: the model (its own VerilatedContext and a Verilated model built
// without --threads, so no worker threads) is owned by this value alone and is
// only touched through `&mut self` or in Drop, so two threads never use it at
// once. Nothing ties it to the thread that created it: the generated eval()
// flushes Verilator's per-thread message queue before it returns. The
// library's code is never unloaded. So a `VerilatedPb` may move to another
// thread.
unsafe impl Send for VerilatedPb {}

impl VerilatedPb {
    /// Builds (or takes from the cache) the model of `source` for `params`,
    /// checks that its ports are those of the port table for `params`,
    /// and instantiates it (not reset: step it with `rst` first).
    pub fn build(
        params: &PbParams,
        source: RtlSource,
        opts: &BuildOpts,
    ) -> Result<VerilatedPb, CosimError> {
        let (fns, report) = builder::build_and_load(params, &source, opts)?;
        Ok(Self::instantiate(*params, fns, report))
    }

    fn instantiate(params: PbParams, fns: ffi::ShimFns, report: BuildReport) -> VerilatedPb {
        // SAFETY: `create` allocates a fresh model; the library stays loaded.
        let raw = unsafe { (fns.create)() };
        // `new` never returns null (it throws, which aborts across the C ABI).
        let handle = NonNull::new(raw).expect("sbrp_pb_create returned null");
        VerilatedPb {
            params,
            fns,
            handle,
            report,
            in_masks: std::array::from_fn(|i| ports::inputs()[i].mask(&params)),
            trace: None,
            rsp_latency: sbrp_iface::consts::RSP_LATENCY,
        }
    }

    /// The response latency of a top with register slices (§2.1):
    /// `Slices::rsp_latency`. The front end's contract monitor checks it.
    pub fn with_rsp_latency(mut self, cycles: usize) -> VerilatedPb {
        self.rsp_latency = cycles;
        self
    }

    /// Starts a waveform (VCD) of every signal of the RTL, internal ones
    /// included, into `path`: one cycle is two time units, as in
    /// `sbrp_iface::vcd`. The model must be built with `--trace` in
    /// [`BuildOpts::extra_args`]. A failed write (e.g. a full disk) never
    /// stops the simulation: the file is removed when the trace ends and the
    /// error goes to `status`.
    pub fn trace_all(&mut self, path: &Path, status: WaveStatus) -> Result<(), CosimError> {
        self.finish_trace();
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| CosimError::Trace(path.to_path_buf(), "a NUL in the path".into()))?;
        let mut err = [0 as std::ffi::c_char; 256];
        // SAFETY: valid handle, a NUL-terminated path and a buffer of its size.
        let r = unsafe {
            (self.fns.trace_open)(
                self.handle.as_ptr(),
                c.as_ptr(),
                err.as_mut_ptr(),
                err.len(),
            )
        };
        if r != 0 {
            let _ = std::fs::remove_file(path);
            return Err(CosimError::Trace(path.to_path_buf(), c_text(&err)));
        }
        self.trace = Some((path.to_path_buf(), status));
        Ok(())
    }

    /// Ends the waveform of [`Self::trace_all`] (also on drop).
    pub fn finish_trace(&mut self) {
        let Some((path, status)) = self.trace.take() else {
            return;
        };
        let mut err = [0 as std::ffi::c_char; 256];
        // SAFETY: valid handle and a buffer of its size.
        let r =
            unsafe { (self.fns.trace_close)(self.handle.as_ptr(), err.as_mut_ptr(), err.len()) };
        if r != 0 {
            let _ = std::fs::remove_file(&path);
            let mut s = status.borrow_mut();
            if s.is_none() {
                *s = Some(WaveError {
                    path,
                    source: std::io::Error::other(c_text(&err)),
                });
            }
        }
    }

    /// Another, independent instance of the same model (no build, no cache
    /// look-up).
    pub fn new_instance(&self) -> VerilatedPb {
        let mut report = self.report.clone();
        report.cache_hit = true;
        report.build_time = std::time::Duration::ZERO;
        Self::instantiate(self.params, self.fns, report).with_rsp_latency(self.rsp_latency)
    }

    /// What the build did (cache entry, hit or miss, build time).
    pub fn build_report(&self) -> &BuildReport {
        &self.report
    }

    /// Cycles stepped since the model was created.
    pub fn cycles(&self) -> u64 {
        // SAFETY: valid handle.
        unsafe { (self.fns.time)(self.handle.as_ptr()) / 2 }
    }
}

impl PbUnit for VerilatedPb {
    fn params(&self) -> &PbParams {
        &self.params
    }

    /// Inputs are truncated to their port widths, as a Verilog port would
    /// truncate them: a `req_warp` of 64 or more is seen as `req_warp % 64`,
    /// a `req_line` of L or more as `req_line % L`.
    #[inline]
    fn step(&mut self, inp: &PbIn) -> PbOut {
        let mut c_in = inp.values();
        for (v, m) in c_in.iter_mut().zip(&self.in_masks) {
            *v &= m;
        }
        let mut c_out = [0u64; N_OUT];
        // SAFETY: valid handle; the arrays hold N_IN and N_OUT values, the
        // counts the library reported at load.
        unsafe { (self.fns.step)(self.handle.as_ptr(), c_in.as_ptr(), c_out.as_mut_ptr()) };
        PbOut::from_values(&c_out)
    }

    fn name(&self) -> &str {
        "verilator"
    }

    fn rsp_latency(&self) -> usize {
        self.rsp_latency
    }
}

/// A NUL-terminated message from the shim.
fn c_text(b: &[std::ffi::c_char]) -> String {
    let bytes: Vec<u8> = b
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

impl Drop for VerilatedPb {
    fn drop(&mut self) {
        self.finish_trace();
        // SAFETY: the handle came from `create` and is destroyed once.
        unsafe { (self.fns.destroy)(self.handle.as_ptr()) };
    }
}

impl std::fmt::Debug for VerilatedPb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerilatedPb")
            .field("params", &self.params)
            .field("lib", &self.report.lib_path)
            .finish()
    }
}
