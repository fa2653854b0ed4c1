//! Warp traces and what a run of one leaves behind (`docs/trace-format.md`):
//! the trace types, parser and writer, the expectation language, the
//! execution record, and the evaluator of expectations over a record; and
//! whole GPU programs (`program`: types, file form, litmus conversion, the
//! synthetic benchmark program; "Programs").
//!
//! Depends on `serde` and `thiserror` only, so that a persistency checker can
//! read saved executions without the model or the RTL.

pub mod check;
mod durable;
mod eval;
mod expect;
mod ops;
mod parse;
pub mod program;
mod record;
mod types;

#[cfg(test)]
mod tests;

pub use check::check_pmo;
pub use durable::match_orders;
pub use eval::{evaluate, Failure};
pub use expect::{Expect, Expectation};
pub use ops::{parse_num, write_op, OpKind, MNEMONICS};
pub use parse::{parse, to_text, TraceError};
pub use program::{
    litmus_flags, litmus_program, parse_program, program_to_text, write_program, FileProgram,
    Program, ProgramError, SynthProgram,
};
pub use record::{
    Event, Execution, FlagId, OpRef, OrderingOp, RecordError, RunEnd, RECORD_FORMAT, RECORD_VERSION,
};
pub use types::{Cell, ConfigItem, Scope, Trace, WarpId, WarpOp, MAX_DELAY, MAX_SMS, MAX_WARPS};
