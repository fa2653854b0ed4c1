//! The GPU memory-system model (`docs/model.md`): whole programs
//! (`sbrp_trace::program`) on a configurable GPU (`config`, `presets`) under
//! SBRP, epoch, GPM and SPB persistency (`sm::persist`).

pub mod config;
pub mod flags;
pub mod gpu;
pub mod ideal;
pub mod mem;
pub mod presets;
pub mod sm;
pub mod stats;
mod wake;

pub use config::GpuConfig;
pub use gpu::{Gpu, KernelReport, RunOpts, RunReport};
