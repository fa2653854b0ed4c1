//! A warp slot of an SM (`docs/model.md`, "Warps"): its code, program
//! counter, what it waits for, and the stall-cycle accounting by cause.

use sbrp_trace::program::Instr;

use super::coalesce::LineAcc;
use super::steps::Step;

/// What a warp is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WState {
    /// Free slot.
    Empty,
    /// Can issue its next instruction (or the next part of the current one).
    Ready,
    /// Busy until that cycle (a latency, a compute delay, a poll interval).
    Until(u64),
    /// Waits for a request slot to the persist buffer unit.
    UnitReq,
    /// Its request was taken; the response comes three cycles later.
    InFlight,
    /// Waits until it sees its `stall` bit low (ODM/EDM); `retry`: the
    /// request is sent again then, else the op completes.
    WaitStall {
        since: u64,
        retry: bool,
    },
    /// Runs the persistency model's steps at an ordering point (epoch/GPM).
    Steps,
    /// Arrived at a `__syncthreads`.
    Barrier,
    Done,
}

impl WState {
    /// The state in words (deadlock reports).
    pub fn text(&self) -> String {
        match self {
            WState::Empty => "no warp".into(),
            WState::Ready => "ready to issue".into(),
            WState::Until(t) => format!("busy until cycle {t}"),
            WState::UnitReq => "waiting to send a request to the persist buffer".into(),
            WState::InFlight => "waiting for the persist buffer's answer".into(),
            WState::WaitStall { since, retry } => format!(
                "stalled by the persist buffer since cycle {since}{}",
                if *retry {
                    " (the request is then sent again)"
                } else {
                    ""
                }
            ),
            WState::Steps => "running an ordering point's steps".into(),
            WState::Barrier => "waiting at a barrier".into(),
            WState::Done => "done".into(),
        }
    }
}

/// Why a warp waits (stall cycles are counted per cause).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    None = 0,
    /// Loads, atomics, the L1's MSHRs, the load/store unit.
    Memory = 1,
    /// The persist buffer unit: responses, replays, ODM/EDM.
    PersistBuffer = 2,
    /// Epoch/GPM flushes, fence latency.
    Flush = 3,
    Barrier = 4,
    /// Spinning on an acquire's flag.
    Spin = 5,
    Compute = 6,
}

pub const CAUSES: [&str; 7] = [
    "none",
    "memory",
    "persist_buffer",
    "flush",
    "barrier",
    "spin",
    "compute",
];

/// Sub-step of a multi-part instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Nothing started.
    Start,
    /// The ordering part is done; the rest (flag check, flag store, barrier) follows.
    Ordered,
    /// A PM store's lines go to the unit one by one (SBRP).
    Lines,
    /// After the steps of an SBRP fence.
    FenceSteps,
}

/// Fields in order of use (`repr(C)` keeps it), cache-line aligned: the
/// first line holds what a request to the unit and its response touch, the
/// next one what a load or a wait touches; the rest is cold.
#[repr(C, align(64))]
pub struct Warp {
    /// Written only through the SM, which keeps its warp masks in step.
    st: WState,
    /// Shared so that issuing reads an instruction without copying it; the
    /// program's vector itself, so a launch copies no instruction.
    pub code: std::rc::Rc<Vec<Instr>>,
    pub pc: usize,
    /// A dirty PM line (L1 slot) to evict through the unit before going on.
    pub evict: Option<usize>,
    pub phase: Phase,
    pub cause: Cause,
    /// The current request was a flag store of a release: publish when done.
    pub flag_store: bool,
    /// The last instruction's latency is running: exit when the timer fires.
    pub exit_at_timer: bool,
    /// The unit's opcode for the ordering instruction at `pc`, once known
    /// (a replayed request does not read the instruction again).
    pub order_op: Option<sbrp_iface::Op>,
    pub since: u64,
    /// Lines of the current PM store and the next one to send.
    pub acc: Vec<LineAcc>,
    pub acc_i: usize,
    /// `acc` holds the lines of the load at `pc + 1 == acc_for` (a load
    /// waiting for MSHRs keeps them); 0: none.
    pub acc_for: usize,
    /// Misses of those lines, counted at L1 version `misses_at`.
    pub misses_at: u64,
    pub misses: u32,
    pub steps: &'static [Step],
    pub step_i: usize,
    /// CTA slot of the SM.
    pub cta: usize,
    pub instrs: u64,
    /// Stall cycles by cause (index = `Cause as usize`).
    pub stalled: [u64; 7],
    pub cells: Vec<(u64, u64)>,
    /// A flush step's lines (taken when it starts), one written back per cycle.
    pub flush_list: Option<Vec<usize>>,
    /// Which launch on the SM this warp is (the record's `OpRef::inst`).
    pub inst: u32,
}

// The unit's request path stays within the first cache line.
const _: () = assert!(std::mem::offset_of!(Warp, order_op) < 63);

impl Warp {
    pub fn empty() -> Warp {
        Warp {
            st: WState::Empty,
            cta: 0,
            code: std::rc::Rc::new(Vec::new()),
            pc: 0,
            phase: Phase::Start,
            acc: Vec::new(),
            cells: Vec::new(),
            acc_i: 0,
            acc_for: 0,
            misses: 0,
            misses_at: 0,
            flag_store: false,
            exit_at_timer: false,
            order_op: None,
            evict: None,
            steps: &[],
            step_i: 0,
            flush_list: None,
            cause: Cause::None,
            since: 0,
            stalled: [0; 7],
            instrs: 0,
            inst: 0,
        }
    }

    pub fn state(&self) -> WState {
        self.st
    }

    /// Sets the state (the SM then updates its masks).
    pub(super) fn set(&mut self, s: WState) {
        self.st = s;
    }

    pub fn op(&self) -> &Instr {
        &self.code[self.pc]
    }

    /// Enters a waiting state for `cause`.
    pub fn wait(&mut self, state: WState, cause: Cause, now: u64) {
        if self.cause == Cause::None {
            self.cause = cause;
            self.since = now;
        }
        self.st = state;
    }

    /// Ready again: the wait's cycles go to its cause.
    pub fn ready(&mut self, now: u64) {
        if self.cause != Cause::None {
            self.stalled[self.cause as usize] += now.saturating_sub(self.since);
            self.cause = Cause::None;
        }
        self.st = WState::Ready;
    }

    /// Next instruction; true when the warp has finished.
    pub fn advance(&mut self) -> bool {
        self.pc += 1;
        self.order_op = None;
        self.phase = Phase::Start;
        self.acc.clear();
        self.acc_i = 0;
        self.acc_for = 0;
        self.flag_store = false;
        if self.pc >= self.code.len() {
            self.st = WState::Done;
            true
        } else {
            false
        }
    }
}
