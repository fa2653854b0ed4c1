//! The mechanisms repeated around external tools (Yosys, OpenSTA,
//! Verilator, make, g++), in one place:
//!
//! * [`Tool`]: a program with an installation hint; [`Tool::capture`] runs a
//!   command and keeps its output, [`Tool::run`] also turns a failure into a
//!   [`ToolError::Failed`] that carries only the tool's [`error_lines`].
//! * [`Scratch`]: a scratch directory (removed when dropped) whose files can
//!   be published into an output directory.
//! * [`VerilogPatch`]: a textual change of Verilog that fails when the text
//!   it looks for occurs a different number of times than expected.
//! * [`write_atomic`]: a file written whole or not at all.
//!
//! Depends on `thiserror` and `tempfile` only.

mod fs;
mod lines;
mod mutate;
mod patch;
mod run;

pub use fs::{check_output, write_all_atomic, write_atomic, FsError, Scratch};
pub use lines::error_lines;
pub use mutate::{mutation_sites, sample_mutations, Mutation, MutationKind};
pub use patch::{PatchError, VerilogPatch};
pub use run::{Captured, LogFile, Tool, ToolError};
