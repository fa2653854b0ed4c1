//! Silicon flow of the SBRP persist buffer unit.
//!
//! * Area and timing ([`area`], [`sweep`]): the generated Verilog
//!   synthesized by Yosys onto a standard-cell library (`constraints/synth/synth.conf`,
//!   `constraints/synth/synth_area.ys`, `constraints/synth/abc_delay.abc`), nets of high fan-out split
//!   into buffer trees, OpenSTA (`constraints/timing/sta_timing.tcl`, `constraints/timing/sbrp_pb.sdc`);
//!   reported as cells, area per stored bit and per block (the `pb_*`
//!   memories and the rest), flip-flop bits against the spec's storage
//!   table, the library's FO4 measured on an inverter chain ([`measure_fo4`]),
//!   the worst register-to-register, input and output paths in FO4, and the
//!   highest clock ([`AreaReport`], [`format_report`], [`format_sweep`],
//!   [`format_csv`]).
//! * Place and route ([`run_route_flow`], `sbrp area --route`): the
//!   netlist placed by graywolf and routed by qrouter through Debian's qflow
//!   (`constraints/route/`), qrouter's RC trees as SPEF into OpenSTA under
//!   `constraints/timing/sbrp_pb_routed.sdc`, the gates sized by OpenSTA for
//!   those wires and the sized netlist placed and routed again
//!   ([`RouteReport`], [`Sizing`]).
//! * Formal proofs ([`prove`]): the port-level environment
//!   `constraints/formal/sbrp_pb_formal.sv` around the unit, turned into AIGER by Yosys
//!   (`constraints/formal/prove.ys`) and decided by yosys-abc (PDR or BMC) on the real
//!   RTL and on deliberately broken variants ([`ProveReport`], [`format_proofs`]).
//!
//! The scripts are compiled in (`include_str!`), so the flow works from any
//! directory; the tools are found on `PATH` or through `SBRP_YOSYS` and
//! `SBRP_STA`, the liberty through `SBRP_LIBERTY`. Errors
//! ([`SiliconError`]) are problems of the environment or of the request; a
//! proof that fails is a result ([`ProveReport::all_as_expected`]).

mod area;
mod config;
mod equiv;
mod error;
mod fo4;
mod kstep;
mod latch;
mod liberty;
mod memories;
mod netlist;
mod params_serde;
mod properties;
mod prove;
mod report;
mod route;
mod sram;
mod sta;
mod sweep;
mod tools;

pub use area::{
    block_of, run_area_flow, run_area_flow_on, run_area_flow_with, AreaReport, BlockArea, BLOCKS,
    FLOW_FILES,
};
pub use config::PAPER_CLOCK_MHZ;
pub use equiv::{equivalence, Equivalence};
pub use error::SiliconError;
pub use fo4::{measure_fo4, Fo4};
pub use kstep::{Aiger, StepOutcome, StepSolver};
pub use latch::{check_latch_array, AreaCorrection, Arrays, CHECK_ADDR_BITS, CHECK_DATA_BITS};
pub use memories::MemoryPorts;
pub use netlist::ModuleArea;
pub use properties::{
    deep_depth, induction, property, Breakage, BrokenVariant, Engine, Induction, Property,
    ACTR_WRAP, BMC_DEPTH, COAL_K, DUR_K, INDUCTION_K, LOST_K, PMO_K, PROPERTIES, UNBOUNDED,
};
pub use prove::{
    fair_bounds, format_proof_failures, format_proofs, prove, prove_params, run_proofs, FairBounds,
    ProofRun, ProveOptions, ProveReport, Verdict,
};
pub use report::{format_csv, format_report, format_sweep, stage_growth, StageGrowth};
pub use route::{
    fmax_of, run_route_flow, Fmax, RouteReport, Sizing, IO_FRACTION, ROUTED_TARGET_MHZ,
    ROUTE_FILES, UNCERTAINTY_FRACTION,
};
pub use sram::{SramMacro, SramReport, SRAM_MIN_WORDS, SRAM_TECH};
pub use sta::{PathTiming, TimingReport, PATH_KINDS};
pub use sweep::{
    area, area_params, sweep, AreaOptions, SweepEvent, SweepReport, SWEEP_ENTRIES, SWEEP_WARPS,
};
