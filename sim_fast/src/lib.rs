//! Fast reference model of the SBRP persist buffer unit (`docs/microarch.md`),
//! the SM front end that drives it from warp traces (`docs/trace-format.md`),
//! and the constrained-random trace generator.
//!
//! Depends on `sbrp-iface` and `sbrp-trace` only; never on `hdl` or `cosim`.

pub mod frontend;
pub mod randgen;
pub mod sliced;
pub mod unit;

pub use sliced::SlicedModel;
pub use unit::{Fault, PbModel};
