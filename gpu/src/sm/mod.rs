//! One SM of the GPU model (`docs/model.md`, "SM"): CTA slots, warps issued
//! by `schedulers` schedulers per cycle, one load/store unit, the L1, and the
//! persistency model's actions. Under SBRP the SM is the L1 side of the
//! persist buffer unit's v2 interfaces (`docs/microarch.md` §2, interface
//! requirements 1-5); that part is in `unit_port`.
//!
//! An SM is visited only in cycles where something can happen
//! ([`Sm::next_wake`]); its memory requests' completion times come from the
//! memory system at send time, and their acknowledgements are events.

mod access;
mod coalesce;
mod events;
mod exec;
pub mod l1;
mod line_index;
pub mod persist;
mod skip;
mod skip_plan;
mod steps;
mod unit_port;
mod warp;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use sbrp_iface::PbUnit;
use sbrp_trace::program::{CtaCode, Instr, Space};
use sbrp_trace::{Event, OpRef, Scope, WarpId};

use crate::config::GpuConfig;
use crate::flags::Flags;
use crate::mem::MemSystem;
use crate::stats::SmStats;

use coalesce::coalesce;
use events::EV_TIMER;
use l1::L1;
use persist::Persist;
pub use warp::{Cause, Phase, WState, Warp, CAUSES};

/// Everything outside the SM it acts on.
pub struct Ctx<'a> {
    pub cfg: &'a GpuConfig,
    pub fault: Fault,
    pub mem: &'a mut MemSystem,
    pub flags: &'a mut Flags,
    pub now: u64,
    /// The last cycle the run may simulate (`--max-cycles`): a skip of idle
    /// cycles stops there.
    pub limit: u64,
    /// Replay loops may be skipped (`skip.rs`).
    pub skip: bool,
}

/// Instructions that order persists (the record's `Ordering`/`Retire`).
fn ordering_instr(i: &Instr) -> bool {
    matches!(
        i,
        Instr::OFence
            | Instr::DFence
            | Instr::Fence(_)
            | Instr::Bar
            | Instr::PAcq { .. }
            | Instr::PRel { .. }
    )
}

/// The round robin's next start after warp `w` of `n` (`w < n`): `(w + 1) % n`
/// without a division, which costs more than the rest of a visit's pick.
#[inline]
fn next_rr(w: usize, n: usize) -> usize {
    debug_assert!(w < n);
    if w + 1 >= n {
        0
    } else {
        w + 1
    }
}

/// A fault injected into the model (negative controls: the checks must
/// catch it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Fault {
    #[default]
    None,
    /// Unbuffered models' ordering points (epoch, GPM, SPB) do not flush
    /// the PM lines.
    SkipEpochFlush,
    /// SBRP treats device-scope acquires and releases as block scope.
    DropScope,
}

/// A CTA resident on the SM.
#[derive(Clone, Debug, Default)]
pub struct CtaSlot {
    pub active: bool,
    /// Warps not done, and of those, arrived at the barrier.
    pub live: u32,
    pub at_barrier: u32,
    pub warps: Vec<usize>,
    pub threads: u32,
    pub regs: u32,
    pub smem: u32,
}

/// Warps by what they need, kept in step with their states (`Sm::sync`):
/// the loops over warps visit only these.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Masks {
    pub ready: u64,
    pub unitreq: u64,
    pub waitstall: u64,
    pub steps: u64,
    /// Warps whose current step waits for PM writes (`WaitPm`), or for
    /// every write (`WaitAll`): one test of the counters tells whether any
    /// of them can go on. Read under `steps` only: a warp leaving `Steps`
    /// keeps its bit (one store less on every state change).
    pub wait_pm: u64,
    pub wait_all: u64,
    /// `Until` timers that fired.
    pub due: u64,
}

impl Masks {
    /// Warps of `steps` whose step waits for acknowledgements still
    /// outstanding (`pm`, `vol`: PM and volatile writes outstanding).
    pub fn steps_blocked(&self, pm: bool, vol: bool) -> u64 {
        let b = (if pm { self.wait_pm | self.wait_all } else { 0 })
            | (if vol { self.wait_all } else { 0 });
        b & self.steps
    }

    /// The masks with the bits that are not read cleared.
    pub fn read_bits(&self) -> Masks {
        Masks {
            wait_pm: self.wait_pm & self.steps,
            wait_all: self.wait_all & self.steps,
            ..*self
        }
    }
}

pub struct Sm {
    pub id: u32,
    pub l1: L1,
    pub warps: Vec<Warp>,
    pub ctas: Vec<CtaSlot>,
    /// The persistency model's hooks.
    pub model: &'static dyn Persist,
    /// The persist buffer unit (models with one only).
    pub unit: Option<Box<dyn PbUnit>>,
    /// Events as `(cycle, kind, data)` packed in one word ([`ev_key`]),
    /// earliest first: one integer compare per heap step. Acknowledgements
    /// to the unit and warp timers here; the counters' decrements (MSHRs,
    /// PM and volatile writes outstanding) in `counters`, which wake the SM
    /// only when something reads them ([`Sm::counters_read`]).
    events: BinaryHeap<Reverse<u64>>,
    counters: BinaryHeap<Reverse<u64>>,
    /// The earliest event's cycle of each (`u64::MAX`: none), read without
    /// touching the heaps.
    ev_next: u64,
    cnt_next: u64,
    rr: usize,
    pub masks: Masks,
    /// A warp arrived at a barrier since the last check.
    bar_arrived: bool,
    /// Threads, registers and shared memory in use.
    pub threads: u32,
    pub regs: u32,
    pub smem: u32,
    pub live_warps: u32,
    mshr: u32,
    ldst_free: u64,
    /// PM writes (flushes, write-backs) and volatile writes not yet acknowledged.
    pub pm_out: u32,
    pub vol_out: u32,
    /// The latest acknowledgement cycle of the PM and volatile writes sent:
    /// when outstanding, their counts fall to zero then and not before.
    pm_last: u64,
    vol_last: u64,
    /// Kernel end: drain (SBRP `drain_all`; epoch: flush the PM lines).
    pub draining: bool,
    /// A CTA finished since the last `reap`.
    cta_done: bool,
    pub unit_state: unit_port::UnitState,
    next_flush: u64,
    /// Warps launched so far (each launch a new `OpRef::inst`).
    launches: u32,
    pub rec: Option<Vec<Event>>,
    pub stats: SmStats,
    /// Scratch for coalescing.
    scratch: Vec<coalesce::LineAcc>,
    scratch_cells: Vec<(u64, u64)>,
}

impl Sm {
    pub fn new(id: u32, cfg: &GpuConfig, unit: Option<Box<dyn PbUnit>>, record: bool) -> Sm {
        Sm {
            id,
            l1: L1::new(cfg.l1_lines(), cfg.l1.assoc),
            warps: (0..cfg.core.warps_per_sm).map(|_| Warp::empty()).collect(),
            ctas: vec![CtaSlot::default(); cfg.core.ctas_per_sm as usize],
            model: cfg.model.persist(),
            unit,
            events: BinaryHeap::new(),
            counters: BinaryHeap::new(),
            ev_next: u64::MAX,
            cnt_next: u64::MAX,
            rr: 0,
            masks: Masks::default(),
            bar_arrived: false,
            threads: 0,
            regs: 0,
            smem: 0,
            live_warps: 0,
            mshr: 0,
            ldst_free: 0,
            pm_out: 0,
            vol_out: 0,
            pm_last: 0,
            vol_last: 0,
            draining: false,
            cta_done: false,
            // A unit just reset holds nothing.
            unit_state: unit_port::UnitState::fresh(),
            next_flush: (id as u64) << 40,
            launches: 0,
            rec: record.then(Vec::new),
            stats: SmStats::default(),
            scratch: Vec::new(),
            scratch_cells: Vec::new(),
        }
    }

    /// Brings the masks in step with warp `w`'s state (and arms its timer).
    pub(super) fn sync(&mut self, w: usize) {
        let b = 1u64 << w;
        let m = &mut self.masks;
        m.ready &= !b;
        m.unitreq &= !b;
        m.waitstall &= !b;
        m.steps &= !b;
        match self.warps[w].state() {
            WState::Ready => m.ready |= b,
            WState::UnitReq => m.unitreq |= b,
            WState::WaitStall { .. } => m.waitstall |= b,
            WState::Steps => {
                m.steps |= b;
                self.sync_wait(w);
            }
            WState::Until(t) => self.push_event(t, EV_TIMER, w as u8),
            WState::Barrier => self.bar_arrived = true,
            _ => {}
        }
    }

    pub(super) fn set_state(&mut self, w: usize, s: WState) {
        self.warps[w].set(s);
        self.sync(w);
    }

    pub(super) fn wait(&mut self, w: usize, s: WState, cause: Cause, now: u64) {
        self.warps[w].wait(s, cause, now);
        self.sync(w);
    }

    pub(super) fn ready(&mut self, w: usize, now: u64) {
        self.warps[w].ready(now);
        self.sync(w);
    }

    /// The masks recomputed from the states (for checks).
    fn masks_of_states(&self) -> Masks {
        let mut m = Masks {
            due: self.masks.due,
            ..Masks::default()
        };
        for (w, warp) in self.warps.iter().enumerate() {
            let b = 1u64 << w;
            match warp.state() {
                WState::Ready => m.ready |= b,
                WState::UnitReq => m.unitreq |= b,
                WState::WaitStall { .. } => m.waitstall |= b,
                WState::Steps => {
                    m.steps |= b;
                    let (pm, all) = steps::wait_bits(warp);
                    m.wait_pm |= (pm as u64) << w;
                    m.wait_all |= (all as u64) << w;
                }
                _ => {}
            }
        }
        m
    }

    fn emit(&mut self, e: impl FnOnce() -> Event) {
        if let Some(r) = &mut self.rec {
            r.push(e());
        }
    }

    fn wid(&self, w: usize) -> WarpId {
        WarpId {
            sm: self.id,
            warp: w as u32,
        }
    }

    fn opref(&self, w: usize) -> OpRef {
        OpRef {
            warp: self.wid(w),
            seq: self.warps[w].pc as u32,
            inst: self.warps[w].inst,
        }
    }

    /// Room for a CTA of `threads` threads, `warps` warps, `regs` registers, `smem` bytes.
    pub fn fits(&self, cfg: &GpuConfig, warps: u32, threads: u32, regs: u32, smem: u32) -> bool {
        let free_warps = self
            .warps
            .iter()
            .filter(|w| w.state() == WState::Empty)
            .count() as u32;
        self.ctas.iter().any(|c| !c.active)
            && free_warps >= warps
            && self.threads + threads <= cfg.core.warps_per_sm * 32
            && self.regs + regs <= cfg.core.regs_per_sm
            && self.smem + smem <= cfg.core.smem_per_sm
    }

    /// Places a CTA; returns its slot.
    pub fn launch(&mut self, code: CtaCode, threads: u32, regs: u32, smem: u32, now: u64) -> usize {
        let c = self
            .ctas
            .iter()
            .position(|c| !c.active)
            .expect("fits() checked");
        let mut slots = vec![];
        for prog in code.warps.into_iter() {
            let w = self
                .warps
                .iter()
                .position(|w| w.state() == WState::Empty)
                .expect("fits() checked");
            let warp = &mut self.warps[w];
            let stalled = warp.stalled;
            let instrs = warp.instrs;
            *warp = Warp::empty();
            warp.stalled = stalled;
            warp.instrs = instrs;
            warp.cta = c;
            warp.inst = self.launches;
            self.launches += 1;
            warp.code = std::rc::Rc::new(prog);
            let st = if warp.code.is_empty() {
                WState::Done
            } else {
                WState::Ready
            };
            warp.since = now;
            self.set_state(w, st);
            slots.push(w);
        }
        // Warps with no code are done at once; their slots stay the CTA's
        // until it is reaped (freed earlier, a later CTA's warp could take
        // one and be emptied by the reap).
        let live = slots
            .iter()
            .filter(|&&w| self.warps[w].state() != WState::Done)
            .count() as u32;
        self.threads += threads;
        self.regs += regs;
        self.smem += smem;
        self.live_warps += live;
        self.cta_done |= live == 0;
        self.ctas[c] = CtaSlot {
            active: true,
            live,
            at_barrier: 0,
            warps: slots,
            threads,
            regs,
            smem,
        };
        c
    }

    fn draining_busy(&self) -> bool {
        self.draining
            && self.live_warps == 0
            && if self.model.has_unit() {
                !self.drained()
            } else {
                self.l1.has_dirty(true)
            }
    }

    /// Kernel end: volatile dirty lines are written back and every clean
    /// line is dropped (dirty PM lines stay only when nothing drained them:
    /// the artifact's SBRP keeps them buffered into the next kernel).
    pub fn kernel_end(&mut self, cx: &mut Ctx) {
        let m = self.model;
        m.kernel_end(self, cx);
        self.flush_dirty(cx, false);
        self.l1.invalidate_all();
        self.draining = false;
    }

    /// Nothing buffered or outstanding: the kernel may end for this SM.
    pub fn drained(&self) -> bool {
        self.live_warps == 0 && self.pm_out == 0 && self.model.drained(self)
    }

    /// The L1's dirty PM lines become clean without a write (the artifact's
    /// kernel end).
    pub(super) fn drop_dirty_pm(&mut self) {
        for s in self.l1.dirty_slots(true) {
            self.l1.clean(s);
        }
    }

    /// What the SM still waits for (deadlock reports).
    pub fn describe(&self) -> String {
        format!(
            "draining {}, PM writes outstanding {}, volatile {}, dirty lines {}, {}",
            self.draining,
            self.pm_out,
            self.vol_out,
            self.l1.dirty_count(),
            self.unit_state.describe()
        )
    }

    /// Finished CTAs: their slots and resources are freed; returns how many.
    pub fn reap(&mut self) -> u32 {
        if !self.cta_done {
            return 0;
        }
        self.cta_done = false;
        let mut n = 0;
        for c in 0..self.ctas.len() {
            if self.ctas[c].active && self.ctas[c].live == 0 {
                let cta = std::mem::take(&mut self.ctas[c]);
                for w in cta.warps {
                    self.set_state(w, WState::Empty);
                    self.warps[w].code = std::rc::Rc::new(Vec::new());
                }
                self.threads -= cta.threads;
                self.regs -= cta.regs;
                self.smem -= cta.smem;
                n += 1;
            }
        }
        n
    }

    /// One cycle.
    pub fn cycle(&mut self, cx: &mut Ctx) {
        let now = cx.now;
        self.stats.visits += 1;
        self.events_due(now);
        self.issue(cx);
        let m = self.model;
        m.cycle(self, cx);
        self.release_barriers(now);
    }
}
