//! Fast reference model of the SBRP persist buffer unit (`docs/microarch.md`).
//!
//! Depends on `sbrp-iface` only; never on `hdl` or `cosim`.

pub mod unit;

pub use unit::{Mutation, PbModel};
