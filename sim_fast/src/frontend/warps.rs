//! Warps and their scheduling (`docs/trace-format.md`, "Front end";
//! `docs/microarch.md` §2, request / response): programs with flags interned
//! to ids at load time, warp states (a warp with a request in flight waits
//! for its response), and the round-robin pick of the one warp that acts
//! per SM per cycle.

use sbrp_trace::{FlagId, OpKind, Scope, WarpId, WarpOp};

use super::flags::Flags;

/// A warp operation as the front end runs it: `Copy`, flags as ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Instr {
    StPm {
        addr: u64,
        value: u64,
    },
    LdPm {
        addr: u64,
    },
    /// `st.vol`, `ld.vol`: one cycle, no effect on the unit.
    Volatile,
    OFence,
    DFence,
    PAcq {
        scope: Scope,
        flag: FlagId,
    },
    PRel {
        scope: Scope,
        flag: FlagId,
    },
    Barrier,
    Delay {
        cycles: u32,
    },
}

impl Instr {
    /// `op` with its flag interned in `flags`.
    pub fn of(op: &WarpOp, flags: &mut Flags) -> Instr {
        match op {
            WarpOp::StPm { addr, value } => Instr::StPm {
                addr: *addr,
                value: *value,
            },
            WarpOp::LdPm { addr } => Instr::LdPm { addr: *addr },
            WarpOp::StVol { .. } | WarpOp::LdVol { .. } => Instr::Volatile,
            WarpOp::OFence => Instr::OFence,
            WarpOp::DFence => Instr::DFence,
            WarpOp::PAcq { scope, flag } => Instr::PAcq {
                scope: *scope,
                flag: flags.intern(flag),
            },
            WarpOp::PRel { scope, flag } => Instr::PRel {
                scope: *scope,
                flag: flags.intern(flag),
            },
            WarpOp::Barrier => Instr::Barrier,
            WarpOp::Delay { cycles } => Instr::Delay { cycles: *cycles },
        }
    }
}

/// What a warp is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WState {
    Ready,
    DelayUntil(u64),
    /// A request of the warp was taken; its response has not arrived.
    InFlight,
    /// Waiting for the unit's stall bit to fall (seen after cycle `since`).
    WaitUnit {
        since: u64,
        /// A device-scope release to publish on resume: (flag, its seq).
        publish: Option<(FlagId, u32)>,
        /// The op got a wait response: retry it (else it was taken: move on).
        retry: bool,
    },
    Barrier,
    Done,
}

/// One warp's program and progress.
#[derive(Clone, Debug)]
pub struct Warp {
    pub id: WarpId,
    pub prog: Vec<Instr>,
    pub pc: usize,
    pub state: WState,
}

impl Warp {
    pub fn new(id: WarpId, prog: Vec<Instr>) -> Warp {
        Warp {
            id,
            prog,
            pc: 0,
            state: WState::Ready,
        }
    }

    /// The op at the program counter (only for a warp that is not done).
    pub fn op(&self) -> Instr {
        self.prog[self.pc]
    }

    /// Marks a ready warp past its last op done; true if it just finished.
    pub fn finish_if_at_end(&mut self) -> bool {
        if self.state == WState::Ready && self.pc >= self.prog.len() {
            self.state = WState::Done;
            return true;
        }
        false
    }

    /// Why an unfinished warp waits, for a deadlock report.
    pub fn describe(&self, flags: &Flags) -> String {
        let what = match self.state {
            WState::Ready => match self.prog.get(self.pc) {
                Some(Instr::PAcq { scope, flag }) => format!(
                    "spins on {} flag {} ({})",
                    OpKind::PAcq(*scope).mnemonic(),
                    flags.name(*flag),
                    if flags.released(*flag) {
                        "released, not visible on this SM"
                    } else {
                        "never released"
                    }
                ),
                _ => "is ready".into(),
            },
            WState::DelayUntil(t) => format!("computes until cycle {t}"),
            WState::InFlight => "awaits the unit's response".into(),
            WState::WaitUnit { since, .. } => format!("is stalled by the unit since cycle {since}"),
            WState::Barrier => "waits at a barrier".into(),
            WState::Done => "is done".into(),
        };
        format!("warp {} at op {} {what}", self.id, self.pc)
    }
}

/// Round robin from `start`: the first warp `runnable` accepts.
pub fn pick(warps: &[Warp], start: usize, runnable: impl Fn(&Warp) -> bool) -> Option<usize> {
    let n = warps.len();
    (0..n)
        .map(|k| (start + k) % n)
        .find(|&i| runnable(&warps[i]))
}
