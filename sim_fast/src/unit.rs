//! Cycle-exact reference model of the persist buffer unit (`docs/microarch.md` v2).
//!
//! The code follows the spec's §4 in order: pipeline registers (4.0), head
//! action (4.1), the request in `r2` (4.2), epochs (4.3), next state (4.4).
//! Every decision reads the state at the start of the cycle; the model holds
//! the architectural memories, so it needs none of the RTL's forwarding.
//!
//! Speed (the model runs every fuzz and lockstep cycle): the derived masks
//! of §3 (`fsm`, `edm`, `stall`) and the outputs are kept as registers,
//! updated where their inputs change, so `step` starts by copying the
//! outputs ([`PbModel::observe`] computes them from the state as §4.4 defines
//! them; debug builds check the two agree every cycle). Blocks whose
//! inputs come at random under raw stimulus (the pointers, the FIFO, the
//! epoch counters, the invalidation masks, the derived masks) run every
//! cycle without branches, since a mispredicted branch costs more than
//! they do; the rarer ones (a retirement, an epoch release) are skipped
//! when they cannot change anything, and so is the whole cycle when it is
//! quiet (no request, head action, ack, release, invalidation or FIFO
//! pop: most cycles of a front end's stimulus). A few writes (an
//! allocation, the new flush, the response, `odm_clr`) are made where
//! they are decided; each such place says why it is equivalent. `step` is compiled once (not
//! `#[inline]`), dispatching to `cycle`, specialised by a const parameter
//! so that the correct unit tests no fault. Read-only queries
//! (`frozen`, `refuses`, `next_out`) tell a driver when steps would change
//! nothing but the request pipeline, so that it may skip them.

mod epochs;
mod probes;
mod queries;
mod state;

use sbrp_iface::consts::{EPOCHS, FLUSH_FIFO, ORD_QUEUE};
use sbrp_iface::{
    entry_type as ty, FlushPolicy, Op, PbIn, PbOut, PbParams, PbUnit, Probe, RspKind,
};

const MAX_ENTRIES: usize = sbrp_iface::ENTRIES_MAX as usize;
const E: usize = EPOCHS as usize;
const F: usize = FLUSH_FIFO as usize;
const D: usize = ORD_QUEUE as usize;
/// `fifo_line` of a FIFO slot that holds no flush: no line index (< 1024) equals it.
const NO_LINE: u32 = u32::MAX;
/// No PB index (a step's drain target, waiting entry or queue push).
const NONE: u32 = u32::MAX;
/// Entry types whose ops put the warp in ODM (dFence, pAcq and pRel device),
/// and the retirements that clear it, as a bit per type.
const ODM_TYPES: u32 = 1 << ty::DFENCE | 1 << ty::ACQ_DEVICE | 1 << ty::REL_DEVICE;
/// Retirements that add to `edm` (dFence, pRel device) and to `inv_add`
/// (dFence, pAcq device).
const EDM_TYPES: u32 = 1 << ty::DFENCE | 1 << ty::REL_DEVICE;
const INV_TYPES: u32 = 1 << ty::DFENCE | 1 << ty::ACQ_DEVICE;

/// One PB entry: the spec's `pb_type`, `pb_warps`, `pb_line` words.
#[derive(Clone, Copy, Default)]
struct Entry {
    warps: u64,
    line: u32,
    ty: u8,
}

/// A queued flush.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
struct FlushQ {
    line: u32,
    warps: u64,
    evict: bool,
    epoch: u8,
}

/// The reference model. Fields mirror the spec's state (§3); the response
/// registers (`rsp`) are the `rsp_*` fields of `out`.
#[derive(Clone)]
pub struct PbModel {
    p: PbParams,
    n_mask: u32,
    warp_mask: u64,
    actr_max: u32,
    // PB registers
    head: u32,
    tail: u32,
    full: bool,
    /// Live entries (0..=N), kept beside the pointers: `empty`, `live`
    /// and `idle` read it.
    count: u32,
    last_type: u8,
    odm: u64,
    wait_ent: u64,
    wait_idx: [u32; 64],
    ep_edm: [u64; E],
    ep_fsm: [u64; E],
    ectr: [u32; E],
    actr: u32,
    ep_cur: u8,
    ep_old: u8,
    ep_closed: bool,
    oq_n: [u8; 64],
    oq: [[u32; D]; 64],
    drain_pend: bool,
    drain_idx: u32,
    inv_req: bool,
    inv_cur: u64,
    inv_next: u64,
    fifo: [FlushQ; F],
    /// The lines of `fifo`'s slots, `NO_LINE` in a free slot (for `fifo_has`).
    fifo_line: [u32; F],
    fifo_head: usize,
    fifo_n: usize,
    // Pipeline and input registers (§4.0). `r1`'s request, `ackq`, `doneq`
    // and `drainq` are all last cycle's input ports: they are kept as one
    // register `inq`, whole, and each field is masked to its port's width
    // where it is read. `r2` holds the request ports a cycle older.
    /// Last cycle's inputs: r1 = (req_op, req_warp, req_line, req_pbv,
    /// req_pbidx), ackq = (ack_count, ack_epoch), doneq = inv_done, drainq = drain_all.
    inq: PbIn,
    /// r1.valid: `inq`'s request was taken.
    r1_valid: bool,
    /// r2's request (its `req_*` fields).
    r2: PbIn,
    r2_valid: bool,
    ready: bool,
    err: u8,
    /// `rst` of the last cycle (§7): this cycle is a reset cycle.
    rst_q: bool,
    // Derived registers, updated where their inputs change (§3's definitions):
    /// OR_e ep_fsm[e] (`fsm`).
    fsm: u64,
    /// OR_e ep_edm[e] (`edm` without `wait_ent`).
    ep_edm_or: u64,
    /// `stall` = odm | edm | inv_cur | inv_next.
    stall: u64,
    /// `stall` and the warps >= W: the requests 4.2 refuses.
    refuse: u64,
    /// `rel` of §4.3 for the current epoch counters and pointers.
    ep_rel: bool,
    /// The outputs of the next cycle (= [`PbModel::observe`]).
    out: PbOut,
    // memories, sized for the largest parameters (masked indices need no bounds checks)
    pb: Box<[Entry; MAX_ENTRIES]>,
    /// Deliberate deviations for negative controls (tests that the checks check).
    fault: Fault,
    // Derived once from the parameters and the fault:
    /// policy_ok = actr < policy_limit (window: K; eager: always; lazy: never).
    policy_limit: u32,
    /// FSM bits that gate flushes (all, or none under `IgnoreFsm`).
    fsm_gate_mask: u64,
    warps: u32,
    line_mask: u32,
}
/// A fault injected into the model: a deliberately broken behaviour, used
/// only to show that the comparator and the expectations catch it (negative
/// controls). "Mutation" is kept for altered RTL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Fault {
    #[default]
    None,
    /// Coalesce stores even when a younger ordering entry of the warp exists.
    IgnoreCoalesceOrdering,
    /// Flush a gated head persist anyway (no FSM gating).
    IgnoreFsm,
    /// The window allows one more outstanding flush than configured.
    WindowOffByOne,
    /// dFence releases its warps at the head without waiting for its epoch.
    DFenceNoWait,
    /// v1's release rule: entry waits end only when ACTR is 0 and no drain
    /// is pending (starves a warp under unrelated traffic).
    GlobalRelease,
    /// Evictions ignore the line's warps' older ordering entries.
    EvictIgnoreOrdering,
    /// A design alternative to §6 decision 6 (experiments only): when the
    /// head persist is gated, flush the oldest ungated persist between it
    /// and the first ordering entry instead (it becomes a hole). Per-warp
    /// order holds (its warps are not in FSM and have no ordering entry
    /// before it in the PB), but the RTL does not do this.
    SkipGated,
}

/// Iterates the set bits of a mask.
#[inline]
fn bits(mut m: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let b = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(b)
        }
    })
}

impl PbUnit for PbModel {
    fn params(&self) -> &PbParams {
        &self.p
    }

    fn name(&self) -> &str {
        "model"
    }

    /// The state of §3 under the spec's names, for waveforms (`probes.rs`).
    fn probes(&self) -> Vec<Probe> {
        self.probe_list()
    }

    /// Read-only: the values of [`PbUnit::probes`], in that order.
    fn probe_values(&self, out: &mut Vec<u64>) {
        self.probe_fill(out)
    }

    fn state_key(&self, out: &mut Vec<u64>) {
        self.register_fill(out)
    }

    fn frozen(&self, inp: &PbIn) -> bool {
        self.frozen_under(inp)
    }

    /// Read-only: the registered outputs (the next step returns them).
    fn next_out(&self) -> Option<PbOut> {
        Some(self.out)
    }

    fn refuses(&self, req: &PbIn) -> bool {
        self.refuses_in_r2(req)
    }

    /// Not `#[inline]`: compiled once, here, so that its speed does not
    /// depend on the caller's crate.
    fn step(&mut self, inp: &PbIn) -> PbOut {
        // The outputs are the registers at the start of the cycle (§4.4).
        let out = self.out;
        debug_assert_eq!(out, self.observe(), "cached outputs");
        // §7: `rst` is registered (`rst_q`); the cycle after it is the reset
        // cycle. Cycle `c` with `rst` = 1 runs as any other: a request it
        // loads into `r1` is dropped by the reset cycle, as in the RTL.
        if self.rst_q {
            self.reset();
        } else if self.fault == Fault::None {
            // The correct unit: every fault test below is a constant.
            self.cycle::<false>(inp);
        } else {
            self.cycle_faulty(inp);
        }
        self.rst_q = inp.rst;
        // req_ready = ready && !rst_q (§4.4): 0 in a reset cycle.
        self.out.req_ready = self.ready & !inp.rst;
        out
    }
}

impl PbModel {
    /// 4.0's pipeline and registered inputs: r2' = r1; r1' = the request
    /// taken now; ackq', doneq', drainq' = the inputs; ready' = 1.
    #[inline(always)]
    fn shift_pipeline(&mut self, inp: &PbIn) {
        self.r2 = self.inq;
        self.r2_valid = self.r1_valid;
        self.r1_valid = inp.req_valid & self.ready;
        self.inq = *inp;
        self.ready = true;
        self.out.req_ready = true;
    }

    /// A cycle of a model with a fault (negative controls), out of line.
    #[inline(never)]
    fn cycle_faulty(&mut self, inp: &PbIn) {
        self.cycle::<true>(inp)
    }

    /// One cycle of §4 (not reset). `FAULTY`: the fault may not be `None`.
    #[inline(always)]
    fn cycle<const FAULTY: bool>(&mut self, inp: &PbIn) {
        let fault = if FAULTY { self.fault } else { Fault::None };
        // 4.0 (the registers are written at the end): r2 is decided now.
        let r2_valid = self.r2_valid;
        let can_flush = || !self.ep_closed & (self.actr < self.actr_max) & (self.fifo_n < F);
        let fsm_gate = if FAULTY {
            self.fsm & self.fsm_gate_mask
        } else {
            self.fsm
        };
        let empty = self.empty();

        // 4.1 head action, as flags: `head_flush` (FLUSH), `head_other`
        // (POP or RETIRE: not empty and not a persist).
        let h = self.head;
        let he = *self.e(h);
        let head_ready = || {
            can_flush()
                && (self.drain_pend | self.full | self.inq.drain_all
                    || self.actr < self.policy_limit)
        };
        let (head_flush, head_other) = if empty {
            (false, false)
        } else if he.ty == ty::PERSIST {
            (he.warps & fsm_gate == 0 && head_ready(), false)
        } else {
            (false, true)
        };
        let pop_planned = head_flush | head_other;
        // A quiet cycle (frequent under a front end's stimulus): no request
        // to decide, no head action, no ack, no epoch release, no
        // invalidation under way, no FIFO pop. Every block below would then
        // leave the state as it is: only the pipeline moves.
        let quiet = !r2_valid
            & !pop_planned
            & !self.ep_rel
            & !self.inv_req
            & (self.inq.ack_count & 7 == 0)
            & (self.inv_cur == 0)
            & ((self.fifo_n == 0) | !inp.flush_ready);
        if !FAULTY && quiet {
            self.out.rsp_valid = false;
            self.out.rsp_warp = 0;
            self.out.rsp_kind = 0;
            self.out.rsp_idx = 0;
            self.shift_pipeline(inp);
            return;
        }
        // SkipGated: the persist flushed past a gated head (index, entry).
        let skip = if FAULTY
            && fault == Fault::SkipGated
            && !empty
            && he.ty == ty::PERSIST
            && he.warps & fsm_gate != 0
            && head_ready()
        {
            self.skip_candidate(fsm_gate)
        } else {
            None
        };

        // 4.2 request. Allocations (4.4's push) and the eviction flush are
        // written when decided: nothing later in the cycle reads tail,
        // last_type, the new slot or the FIFO's free slot.
        // The response registers are written where decided (the cycle's
        // outputs were copied), and so is the sticky `err`.
        self.out.rsp_valid = r2_valid;
        self.out.rsp_kind = if r2_valid { RspKind::Replay as u8 } else { 0 };
        self.out.rsp_idx = 0;
        let mut push = false;
        let mut evict_flush = false;
        let mut odm_set = 0u64;
        // The drain target and the waiting entry (`NONE`: none).
        let mut target = NONE;
        let mut wait_k = NONE;
        // The entry pushed on w's ordering queue.
        let mut oq_push = NONE;
        let w = (self.r2.req_warp & 63) as usize;
        // A warp >= W is refused like a stalled one (and sets `err` bit 1).
        self.err |= ((r2_valid & (w as u32 >= self.warps)) as u8) << 1;
        let refused = self.refuse >> w & 1 != 0;
        if r2_valid & !refused {
            let wbit = 1u64 << w;
            let l = self.r2.req_line & self.line_mask;
            let k = self.r2.req_pbidx & self.n_mask;
            let op = self.r2.req_op & 7;
            if op == Op::Store as u8 || op == Op::Evict as u8 {
                // busy(l) and buffered: read by stores and evictions only.
                let busy = self.fifo_has(l)
                    | (head_flush & (he.line == l))
                    | (FAULTY && skip.is_some_and(|(_, e)| e.line == l));
                let ek = *self.e(k);
                let buffered =
                    self.r2.req_pbv & self.live(k) & (ek.ty == ty::PERSIST) & (ek.line == l);
                if busy {
                } else if op == Op::Store as u8 {
                    if buffered {
                        let n = self.oq_n[w] as usize;
                        let younger = n > 0
                            && self.age(self.oq[w][n - 1]) > self.age(k)
                            && !(FAULTY && fault == Fault::IgnoreCoalesceOrdering);
                        if younger {
                            self.out.rsp_kind = RspKind::Wait as u8;
                            (wait_k, target) = (k, k);
                        } else {
                            self.out.rsp_kind = RspKind::Coalesced as u8;
                            self.out.rsp_idx = k;
                            self.e_mut(k).warps |= wbit;
                        }
                    } else if !self.full {
                        self.out.rsp_kind = RspKind::Performed as u8;
                        self.out.rsp_idx = self.tail;
                        push = true;
                        self.allocate(Entry {
                            warps: wbit,
                            line: l,
                            ty: ty::PERSIST,
                        });
                    }
                } else if !buffered {
                    self.out.rsp_kind = RspKind::Performed as u8;
                } else {
                    let m = ek.warps & self.warp_mask;
                    let age_k = self.age(k);
                    let older = !(FAULTY && fault == Fault::EvictIgnoreOrdering)
                        && bits(m).any(|v| self.oq_n[v] > 0 && self.age(self.oq[v][0]) < age_k);
                    if older {
                        self.out.rsp_kind = RspKind::Wait as u8;
                        (wait_k, target) = (k, k);
                    } else if m & fsm_gate == 0 && can_flush() {
                        self.out.rsp_kind = RspKind::Performed as u8;
                        evict_flush = true;
                        self.fifo_enter(FlushQ {
                            line: l,
                            warps: ek.warps,
                            evict: true,
                            epoch: self.ep_cur,
                        });
                        self.e_mut(k).ty = ty::HOLE;
                    }
                }
            } else {
                let t = op + 1;
                let y = self.tail.wrapping_sub(1) & self.n_mask;
                let coal = !empty & (self.last_type == t) & !(pop_planned & (y == h));
                let n = self.oq_n[w] as usize;
                let named = coal && n > 0 && self.oq[w][n - 1] == y;
                let e = if !named && n == D {
                    NONE
                } else if coal {
                    self.out.rsp_kind = RspKind::Coalesced as u8;
                    self.e_mut(y).warps |= wbit;
                    y
                } else if !self.full {
                    self.out.rsp_kind = RspKind::Performed as u8;
                    push = true;
                    let tail = self.tail;
                    self.allocate(Entry {
                        warps: wbit,
                        line: 0,
                        ty: t,
                    });
                    tail
                } else {
                    NONE
                };
                if e != NONE {
                    // The queue push waits for the retirement's pops (below).
                    if !named {
                        oq_push = e;
                    }
                    if (1u32 << t) & ODM_TYPES != 0 {
                        odm_set = wbit;
                        target = e;
                    } else if self.p.policy == FlushPolicy::Lazy {
                        target = e;
                    }
                }
            }
        }

        // An eviction flush takes the cycle's one flush; a pop or a
        // retirement proceeds (4.1).
        let flush_head = head_flush & !evict_flush;
        let pop = flush_head | head_other;

        // head action effects
        let mut flush_now = evict_flush | flush_head;
        if FAULTY {
            if let (Some((j, sk)), false) = (skip, evict_flush) {
                flush_now = true;
                self.fifo_enter(FlushQ {
                    line: sk.line,
                    warps: sk.warps,
                    evict: false,
                    epoch: self.ep_cur,
                });
                self.e_mut(j).ty = ty::HOLE;
            }
        }
        if flush_head {
            self.fifo_enter(FlushQ {
                line: he.line,
                warps: he.warps,
                evict: false,
                epoch: self.ep_cur,
            });
        }
        let join = head_other & (he.ty != ty::HOLE);

        // entry waits
        if self.wait_ent == 0 {
        } else if FAULTY && fault == Fault::GlobalRelease {
            if self.actr == 0 && !self.drain_pend {
                self.wait_ent = 0;
            }
        } else if pop {
            for v in bits(self.wait_ent) {
                if self.wait_idx[v] == h {
                    self.wait_ent &= !(1u64 << v);
                }
            }
        }
        if wait_k != NONE {
            self.wait_ent |= 1u64 << w;
            self.wait_idx[w] = wait_k;
        }

        // drain target
        // (Unchanged without a new target, unless the pop reaches drain_idx.)
        if (target != NONE) | (pop & self.drain_pend) {
            let pend_after = self.drain_pend && !(pop && h == self.drain_idx);
            if target != NONE && (!pend_after || self.age(target) > self.age(self.drain_idx)) {
                (self.drain_pend, self.drain_idx) = (true, target);
            } else {
                self.drain_pend = pend_after;
            }
            self.out.obs_drain = self.drain_pend;
        }

        // 4.3 epochs, and the retirement (4.1; nothing above reads what it
        // writes), whose warps join them; then w's queue push, after its pop.
        let inv_add = self.epochs::<FAULTY>(flush_now, join, he, h);
        if oq_push != NONE {
            let n = self.oq_n[w] as usize;
            self.oq[w][n] = oq_push;
            self.oq_n[w] += 1;
        }

        // 4.4 next state: invalidation, without branches (its inputs change
        // at random). `inv_add` joins `inv_next` while a request is pending,
        // else `inv_cur`; `done` then moves `inv_next` to `inv_cur`.
        let req = self.inv_req;
        let m_req = 0u64.wrapping_sub(req as u64);
        let next = self.inv_next | (inv_add & m_req);
        let cur = self.inv_cur | (inv_add & !m_req);
        let done = self.inq.inv_done & req;
        self.inv_cur = if done { next } else { cur };
        self.inv_next = if done { 0 } else { next };
        self.inv_req = !done & (req | (cur != 0));
        self.out.inv_req = self.inv_req;

        // flush FIFO: the taken head leaves, the new flush entered (fifo_enter)
        let fifo_was = self.fifo_n;
        let fifo_pop = (fifo_was > 0) & inp.flush_ready;
        let fh = self.fifo_head;
        self.fifo_line[fh] |= 0u32.wrapping_sub(fifo_pop as u32); // NO_LINE on a pop
        self.fifo_head = (fh + fifo_pop as usize) % F;
        self.fifo_n = fifo_was - fifo_pop as usize + flush_now as usize;
        // The head's outputs change only if it left or the FIFO was empty.
        if fifo_pop | (flush_now & (fifo_was == 0)) {
            self.out_fifo_head();
        }

        // PB pointers and masks (the allocation is written: `allocate`)
        // (Without branches: pops and pushes come at random.)
        self.head = (h + pop as u32) & self.n_mask;
        self.out.obs_head = self.head;
        // full = (count + push - pop == N)
        self.count = self.count + push as u32 - pop as u32;
        self.full = self.count == self.p.entries;
        self.out.obs_full = self.full;
        // odm = (odm & ~odm_clr) | odm_set (the retirement cleared odm_clr).
        self.odm |= odm_set;

        self.shift_pipeline(inp);

        // derived registers and the next cycle's outputs (every cycle: a
        // test of what changed would cost as much)
        let edm = self.wait_ent | self.ep_edm_or;
        self.stall = self.odm | edm | self.inv_cur | self.inv_next;
        self.refuse = self.stall | !self.warp_mask;
        self.out.obs_odm = self.odm;
        self.out.obs_edm = edm;
        self.out.stall = self.stall;
        let o = &mut self.out;
        o.rsp_warp = if r2_valid { w as u8 } else { 0 };
        o.idle = ((self.count | self.actr | self.inv_req as u32) as u64 | self.inv_cur) == 0;
        o.error = self.err;
    }
}

#[cfg(test)]
mod tests;
