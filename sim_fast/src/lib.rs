//! Fast reference model of the SBRP persist buffer unit (`docs/microarch.md`).
//!
//! Depends on `sbrp-iface` only; never on `hdl` or `cosim`.

pub mod frontend;
pub mod randgen;
pub mod rng;
pub mod trace;
pub mod unit;

pub use unit::{Mutation, PbModel};
