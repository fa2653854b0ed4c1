//! Trace types (`docs/trace-format.md`, "Lines" and "Operations"): warps,
//! operations, durable-state cells and a parsed trace.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::expect::Expectation;

/// Scope of a persist acquire or release.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Scope {
    Block,
    Device,
}

/// One operation of a warp's program.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum WarpOp {
    StPm { addr: u64, value: u64 },
    LdPm { addr: u64 },
    StVol { addr: u64 },
    LdVol { addr: u64 },
    OFence,
    DFence,
    PAcq { scope: Scope, flag: String },
    PRel { scope: Scope, flag: String },
    Barrier,
    Delay { cycles: u32 },
}

/// A warp: SM number and warp number within the SM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct WarpId {
    pub sm: u32,
    pub warp: u32,
}

impl fmt::Display for WarpId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.sm, self.warp)
    }
}

/// A durable-state term `ADDR=VALUE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Cell {
    pub addr: u64,
    pub value: u64,
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}={}", self.addr, self.value)
    }
}

/// One `config KEY=VALUE` item of a trace, with its line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigItem {
    pub key: String,
    pub value: String,
    pub line: usize,
}

/// Maximum warps per SM and SMs a trace may name (the unit has at most 64 warps).
pub const MAX_WARPS: u32 = 64;
pub const MAX_SMS: u32 = 256;
/// Longest `delay` (cycles).
pub const MAX_DELAY: u32 = 1_000_000;

/// A parsed trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    /// The file it came from (for messages).
    pub file: String,
    /// Program of each warp, in program order.
    pub programs: BTreeMap<WarpId, Vec<WarpOp>>,
    /// Line of each warp's first operation (for messages naming file:line).
    pub first_line: BTreeMap<WarpId, usize>,
    pub expects: Vec<Expectation>,
    /// `config KEY=VALUE` items, applied to the front end's configuration.
    pub config: Vec<ConfigItem>,
}

impl Trace {
    pub fn sms(&self) -> u32 {
        self.programs.keys().map(|w| w.sm + 1).max().unwrap_or(1)
    }
    pub fn warps_per_sm(&self) -> u32 {
        self.programs.keys().map(|w| w.warp + 1).max().unwrap_or(1)
    }
    pub fn ops(&self) -> usize {
        self.programs.values().map(Vec::len).sum()
    }
    /// The warp with the highest warp number and the line of its first op.
    pub fn widest_warp(&self) -> Option<(WarpId, usize)> {
        let w = *self
            .programs
            .keys()
            .max_by_key(|w| (w.warp, std::cmp::Reverse(w.sm)))?;
        Some((w, self.first_line.get(&w).copied().unwrap_or(0)))
    }
}
