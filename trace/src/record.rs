//! The execution record (`docs/trace-format.md`, "Execution record"): what a
//! run did, in cycle order, versioned and self-contained, so that the
//! evaluator here and a later persistency checker read it with this crate
//! alone.

use serde::{Deserialize, Serialize};

use crate::types::{Cell, Scope, WarpId};

/// Value of [`Execution::format`].
pub const RECORD_FORMAT: &str = "sbrp-execution";
/// Value of [`Execution::version`]; bumped on any incompatible change.
pub const RECORD_VERSION: u32 = 4;

/// An ordering operation accepted by the unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum OrderingOp {
    OFence,
    DFence,
    PAcq(Scope),
    PRel(Scope),
}

/// One operation of one warp: its place in program order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct OpRef {
    pub warp: WarpId,
    /// Index of the op in the warp's program.
    pub seq: u32,
    /// Which warp ran in the slot `warp` (v4): a slot reused by a later CTA
    /// holds a new instance. 0 where slots are never reused (unit traces).
    #[serde(default)]
    pub inst: u32,
}

/// Index into [`Execution::flags`].
pub type FlagId = u32;

/// One thing that happened, at a cycle.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Event {
    /// A PM store performed (the unit accepted it).
    Persist { op: OpRef, cell: Cell, cycle: u64 },
    /// An ordering operation accepted by the unit.
    Ordering {
        op: OpRef,
        kind: OrderingOp,
        flag: Option<FlagId>,
        cycle: u64,
    },
    /// The acquire `acq` observed the release `rel`.
    Match {
        acq: OpRef,
        acq_scope: Scope,
        rel: OpRef,
        rel_scope: Scope,
        cycle: u64,
    },
    /// A flush left SM `sm` with the line's written-back words (`cycle`:
    /// the cycle the L1 took it from the unit's flush FIFO).
    Flush {
        id: u64,
        sm: u32,
        /// Line address (line-aligned byte address).
        line: u64,
        cells: Vec<Cell>,
        evict: bool,
        cycle: u64,
        /// The cycle the words were read from the L1: `cycle` for a head
        /// flush; for an eviction, the cycle its response arrived and the
        /// L1 moved the words to its write-back buffer (v3). A store whose
        /// `Persist` cycle is below this one is carried by the flush.
        read_cycle: u64,
    },
    /// Flush `id` reached the persistence domain (its cells are durable).
    /// Durability may precede the acknowledgement the unit receives.
    Durable { id: u64, cycle: u64 },
    /// The unit started stalling the warp.
    StallBegin { warp: WarpId, cycle: u64 },
    /// The warp saw its stall bit low again.
    StallEnd { warp: WarpId, cycle: u64 },
    /// A warp instance started in its slot (v4): the CTA it belongs to, so
    /// that scopes can be told apart (block scope: one CTA of one kernel).
    WarpStart {
        warp: WarpId,
        inst: u32,
        kernel: u32,
        cta: u32,
        /// The warp's index within its CTA (the program's `warp W`).
        cta_warp: u32,
        cycle: u64,
    },
    /// An ordering op (or `bar`, or a non-persistent fence) completed: the
    /// warp goes on to its next instruction (v4). A release's flag is
    /// published at this cycle.
    Retire { op: OpRef, cycle: u64 },
    /// A PM load completed, hitting or missing in the L1.
    Load {
        op: OpRef,
        addr: u64,
        hit: bool,
        cycle: u64,
    },
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RunEnd {
    /// Every warp finished and every unit drained.
    Finished,
    /// No progress; the report names the waiting warps.
    Deadlock { report: String },
    /// Stopped by the cycle limit or by the caller.
    Cut,
}

/// A recorded execution of one trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Execution {
    /// Always [`RECORD_FORMAT`].
    pub format: String,
    /// Always [`RECORD_VERSION`] when written by this crate.
    pub version: u32,
    /// Bytes per L1 line (the line of a flush and of `order`/`flushes`).
    pub line_bytes: u64,
    /// Every warp of the trace.
    pub warps: Vec<WarpId>,
    /// Flag names, indexed by [`FlagId`].
    pub flags: Vec<String>,
    /// Largest ACTR value of each SM.
    pub actr_peak: Vec<u32>,
    /// Events in cycle order (SM order within a cycle).
    pub events: Vec<Event>,
    pub end: RunEnd,
    /// Cycle after the last simulated one.
    pub cycles: u64,
}

impl Event {
    /// The cycle of the event.
    pub fn cycle(&self) -> u64 {
        match self {
            Event::Persist { cycle, .. }
            | Event::Ordering { cycle, .. }
            | Event::Match { cycle, .. }
            | Event::Flush { cycle, .. }
            | Event::Durable { cycle, .. }
            | Event::StallBegin { cycle, .. }
            | Event::StallEnd { cycle, .. }
            | Event::WarpStart { cycle, .. }
            | Event::Retire { cycle, .. }
            | Event::Load { cycle, .. } => *cycle,
        }
    }
}

impl Execution {
    /// An empty record of the current format and version.
    pub fn new(line_bytes: u64) -> Execution {
        Execution {
            format: RECORD_FORMAT.into(),
            version: RECORD_VERSION,
            line_bytes,
            warps: vec![],
            flags: vec![],
            actr_peak: vec![],
            events: vec![],
            end: RunEnd::Cut,
            cycles: 0,
        }
    }

    /// The name of flag `id`.
    pub fn flag(&self, id: FlagId) -> &str {
        self.flags
            .get(id as usize)
            .map(String::as_str)
            .unwrap_or("?")
    }

    /// Line address of `addr`.
    pub fn line_of(&self, addr: u64) -> u64 {
        addr / self.line_bytes.max(1) * self.line_bytes.max(1)
    }
}

/// A record that cannot be read by this version.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("not an execution record: format `{0}`, expected `{RECORD_FORMAT}`")]
    Format(String),
    #[error("execution record version {0}, this reader knows {RECORD_VERSION}")]
    Version(u32),
}

impl Execution {
    /// Checks the format and version fields of a record read from a file.
    pub fn validate(&self) -> Result<(), RecordError> {
        if self.format != RECORD_FORMAT {
            return Err(RecordError::Format(self.format.clone()));
        }
        if self.version != RECORD_VERSION {
            return Err(RecordError::Version(self.version));
        }
        Ok(())
    }
}
