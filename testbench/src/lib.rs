//! Testbench of the SBRP persist buffer unit: engines, the lockstep
//! comparator, suites and benchmarks that work on any `sbrp_iface::PbUnit`
//! (the RTL or the reference model).

pub mod cosim;
pub mod crash;
pub mod engine;
pub mod error;
pub mod fst;
pub mod fuzz;
pub mod gpu_run;
pub mod ladder;
pub mod litmus;
pub mod lockstep;
pub mod mutate;
pub mod paper;
pub mod plot;
pub mod report_html;
pub mod slurm;
pub mod speed;
pub mod suite;
pub mod suites;
pub mod sweep;
pub mod wavediff;

pub use engine::{directed_engines, make_unit, Engine, EngineError};
pub use error::BenchError;
