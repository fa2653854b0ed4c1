//! Cycle-exact reference model of the persist buffer unit (`docs/microarch.md` v2).
//!
//! The code follows the spec's §4 in order: pipeline registers (4.0), head
//! action (4.1), the request in `r2` (4.2), epochs (4.3), next state (4.4).
//! Every decision reads the state at the start of the cycle; the model holds
//! the architectural memories, so it needs none of the RTL's forwarding.

use sbrp_iface::consts::{EPOCHS, FLUSH_FIFO, ORD_QUEUE};
use sbrp_iface::{
    entry_type as ty, FlushPolicy, Op, PbIn, PbOut, PbParams, PbUnit, Probe, RspKind,
};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum HeadAct {
    None,
    Pop,
    Flush,
    Retire,
}

const MAX_ENTRIES: usize = sbrp_iface::ENTRIES_MAX as usize;
const E: usize = EPOCHS as usize;
const F: usize = FLUSH_FIFO as usize;
const D: usize = ORD_QUEUE as usize;

/// One PB entry: the spec's `pb_type`, `pb_warps`, `pb_line` words.
#[derive(Clone, Copy, Default)]
struct Entry {
    warps: u64,
    line: u32,
    ty: u8,
}

/// A request in the pipeline (`r1`, `r2`).
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
struct Req {
    valid: bool,
    op: u8,
    warp: u8,
    line: u32,
    pbv: bool,
    pbidx: u32,
}

/// A queued flush.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
struct FlushQ {
    line: u32,
    warps: u64,
    evict: bool,
    epoch: u8,
}

/// The response registers.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
struct Rsp {
    valid: bool,
    warp: u8,
    kind: u8,
    idx: u32,
}

/// The reference model. Fields mirror the spec's state (§3).
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
    fifo_head: usize,
    fifo_n: usize,
    // pipeline and input registers
    r1: Req,
    r2: Req,
    rsp: Rsp,
    ackq: (u8, u8),
    doneq: bool,
    drainq: bool,
    ready: bool,
    err: u8,
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
}

impl PbModel {
    pub fn new(p: &PbParams) -> Result<PbModel, sbrp_iface::ParamError> {
        p.validate()?;
        Ok(PbModel {
            p: *p,
            n_mask: p.entries - 1,
            warp_mask: p.warp_mask(),
            actr_max: p.actr_max(),
            head: 0,
            tail: 0,
            full: false,
            last_type: 0,
            odm: 0,
            wait_ent: 0,
            wait_idx: [0; 64],
            ep_edm: [0; E],
            ep_fsm: [0; E],
            ectr: [0; E],
            actr: 0,
            ep_cur: 0,
            ep_old: 0,
            ep_closed: false,
            oq_n: [0; 64],
            oq: [[0; D]; 64],
            drain_pend: false,
            drain_idx: 0,
            inv_req: false,
            inv_cur: 0,
            inv_next: 0,
            fifo: [FlushQ::default(); F],
            fifo_head: 0,
            fifo_n: 0,
            r1: Req::default(),
            r2: Req::default(),
            rsp: Rsp::default(),
            ackq: (0, 0),
            doneq: false,
            drainq: false,
            ready: false,
            err: 0,
            pb: Box::new([Entry::default(); MAX_ENTRIES]),
            fault: Fault::None,
            policy_limit: 0,
            fsm_gate_mask: 0,
            warps: p.warps,
            line_mask: p.lines - 1,
        }
        .with_fault(Fault::None))
    }

    /// The model with a deliberate deviation (negative controls).
    pub fn with_fault(mut self, m: Fault) -> PbModel {
        self.fault = m;
        let window = match m {
            Fault::WindowOffByOne => self.p.window + 1,
            _ => self.p.window,
        };
        self.policy_limit = match self.p.policy {
            FlushPolicy::Window => window,
            FlushPolicy::Eager => u32::MAX,
            FlushPolicy::Lazy => 0,
        };
        self.fsm_gate_mask = if m == Fault::IgnoreFsm { 0 } else { u64::MAX };
        self
    }

    pub fn fault(&self) -> Fault {
        self.fault
    }

    #[inline(always)]
    fn e(&self, i: u32) -> &Entry {
        &self.pb[i as usize & (MAX_ENTRIES - 1)]
    }
    #[inline]
    fn e_mut(&mut self, i: u32) -> &mut Entry {
        &mut self.pb[i as usize & (MAX_ENTRIES - 1)]
    }
    #[inline(always)]
    fn age(&self, i: u32) -> u32 {
        i.wrapping_sub(self.head) & self.n_mask
    }
    #[inline(always)]
    fn used(&self) -> u32 {
        self.tail.wrapping_sub(self.head) & self.n_mask
    }
    #[inline(always)]
    fn live(&self, i: u32) -> bool {
        self.full || self.age(i) < self.used()
    }
    #[inline]
    fn empty(&self) -> bool {
        !self.full && self.head == self.tail
    }
    fn count(&self) -> u32 {
        if self.full {
            self.p.entries
        } else {
            self.used()
        }
    }
    #[inline(always)]
    fn fsm(&self) -> u64 {
        self.ep_fsm.iter().fold(0, |a, m| a | m)
    }
    #[inline(always)]
    fn edm(&self) -> u64 {
        self.ep_edm.iter().fold(self.wait_ent, |a, m| a | m)
    }
    #[inline(always)]
    fn stall(&self) -> u64 {
        self.odm | self.edm() | self.inv_cur | self.inv_next
    }
    fn fifo_has(&self, l: u32) -> bool {
        (0..self.fifo_n).any(|i| self.fifo[(self.fifo_head + i) % F].line == l)
    }

    /// Entries currently in the PB, oldest first: (type, warps, line).
    pub fn entries(&self) -> Vec<(u8, u64, u32)> {
        (0..self.count())
            .map(|a| {
                let e = self.e((self.head + a) & self.n_mask);
                (e.ty, e.warps, e.line)
            })
            .collect()
    }

    /// True when nothing can change unless an input does: no request in the
    /// pipeline or response showing, PB empty, FIFO empty, nothing
    /// outstanding, no invalidation and no registered input pending. A
    /// simulator may skip the unit's cycles while this holds and its inputs
    /// stay idle.
    pub fn quiescent(&self) -> bool {
        !self.r1.valid
            && !self.r2.valid
            && !self.rsp.valid
            && self.empty()
            && self.fifo_n == 0
            && self.actr == 0
            && !self.inv_req
            && self.inv_cur == 0
            && self.ackq.0 == 0
            && !self.doneq
            && self.ready
    }

    fn observe(&self) -> PbOut {
        let f = if self.fifo_n > 0 {
            self.fifo[self.fifo_head]
        } else {
            FlushQ::default()
        };
        PbOut {
            req_ready: self.ready,
            rsp_valid: self.rsp.valid,
            rsp_warp: self.rsp.warp,
            rsp_kind: self.rsp.kind,
            rsp_idx: self.rsp.idx,
            flush_valid: self.fifo_n > 0,
            flush_line: f.line,
            flush_warps: f.warps,
            flush_evict: f.evict,
            flush_epoch: f.epoch,
            inv_req: self.inv_req,
            stall: self.stall(),
            idle: self.empty() && self.actr == 0 && !self.inv_req && self.inv_cur == 0,
            error: self.err,
            obs_odm: self.odm,
            obs_edm: self.edm(),
            obs_fsm: self.fsm(),
            obs_actr: self.actr,
            obs_head: self.head,
            obs_tail: self.tail,
            obs_full: self.full,
            obs_drain: self.drain_pend,
            obs_epoch: self.ep_cur,
        }
    }

    /// §7: every register to 0; the memories keep their contents.
    fn reset(&mut self) {
        let mut fresh = PbModel::new(&self.p)
            .expect("parameters were validated")
            .with_fault(self.fault);
        std::mem::swap(&mut fresh.pb, &mut self.pb);
        *self = fresh;
    }
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

    /// The state of §3 under the spec's names, for waveforms: the registers
    /// in scope `state`, and every PB slot's `pb_type`, `pb_warps`,
    /// `pb_line` and whether it is `live` in scope `state.pb.eNNN`.
    fn probes(&self) -> Vec<Probe> {
        let (iw, lw, w, a) = (
            self.p.idx_bits(),
            self.p.line_bits(),
            self.p.warps,
            self.p.actr_bits,
        );
        let reg = |name: &str, width| Probe {
            scope: "state".into(),
            name: name.into(),
            width,
        };
        let mut v = vec![
            reg("head", iw),
            reg("tail", iw),
            reg("full", 1),
            reg("last_type", 3),
            reg("odm", w),
            reg("wait_ent", w),
            reg("fsm", w),
            reg("actr", a),
            reg("ep_cur", 2),
            reg("ep_old", 2),
            reg("ep_closed", 1),
        ];
        for e in 0..E {
            v.push(reg(&format!("ectr{e}"), a));
        }
        v.extend([
            reg("drain_pend", 1),
            reg("drain_idx", iw),
            reg("inv_cur", w),
            reg("inv_next", w),
            reg("fifo_n", 3),
        ]);
        for i in 0..self.p.entries {
            let scope = format!("state.pb.e{i:03}");
            for (name, width) in [
                ("pb_type", 3),
                ("pb_warps", w),
                ("pb_line", lw),
                ("live", 1),
            ] {
                v.push(Probe {
                    scope: scope.clone(),
                    name: name.into(),
                    width,
                });
            }
        }
        v
    }

    /// Read-only: the values of [`PbUnit::probes`], in that order.
    fn probe_values(&self, out: &mut Vec<u64>) {
        out.extend([
            self.head as u64,
            self.tail as u64,
            self.full as u64,
            self.last_type as u64,
            self.odm,
            self.wait_ent,
            self.fsm(),
            self.actr as u64,
            self.ep_cur as u64,
            self.ep_old as u64,
            self.ep_closed as u64,
        ]);
        out.extend(self.ectr.iter().map(|&c| c as u64));
        out.extend([
            self.drain_pend as u64,
            self.drain_idx as u64,
            self.inv_cur,
            self.inv_next,
            self.fifo_n as u64,
        ]);
        for i in 0..self.p.entries {
            let e = self.e(i);
            // A slot that is not live may hold stale words (§3): shown as they are.
            out.extend([e.ty as u64, e.warps, e.line as u64, self.live(i) as u64]);
        }
    }

    #[inline]
    fn step(&mut self, inp: &PbIn) -> PbOut {
        let out = self.observe();
        if inp.rst {
            self.reset();
            return out;
        }
        // 4.0: the request taken now enters r1.
        let next_r1 = if inp.req_valid && self.ready {
            Req {
                valid: true,
                op: inp.req_op & 7,
                warp: inp.req_warp & 63,
                line: inp.req_line & self.line_mask,
                pbv: inp.req_pbv,
                pbidx: inp.req_pbidx & self.n_mask,
            }
        } else {
            Req::default()
        };
        let r2 = self.r2;
        let can_flush = !self.ep_closed && self.actr < self.actr_max && self.fifo_n < F;
        let force = self.drain_pend || self.full || self.drainq;
        let policy_ok = self.actr < self.policy_limit;
        let fsm_gate = self.fsm() & self.fsm_gate_mask;
        let stall = self.stall();
        let empty = self.empty();

        // 4.1 head action
        let he = *self.e(self.head);
        let head_act = if empty {
            HeadAct::None
        } else if he.ty == ty::HOLE {
            HeadAct::Pop
        } else if he.ty == ty::PERSIST {
            if he.warps & fsm_gate == 0 && can_flush && (force || policy_ok) {
                HeadAct::Flush
            } else {
                HeadAct::None
            }
        } else {
            HeadAct::Retire
        };
        let pop_planned = head_act != HeadAct::None;

        // 4.2 request
        let mut rsp = Rsp::default();
        let mut push: Option<Entry> = None;
        let mut evict_flush: Option<FlushQ> = None;
        let mut odm_set = 0u64;
        let mut target: Option<u32> = None;
        let mut wait_set: Option<(usize, u32)> = None;
        let mut oq_push: Option<(usize, u32)> = None;
        let mut err = self.err;
        if r2.valid {
            rsp = Rsp {
                valid: true,
                warp: r2.warp,
                kind: RspKind::Replay as u8,
                idx: 0,
            };
            let w = r2.warp as usize;
            if w as u32 >= self.warps {
                err |= 2;
            } else if stall >> w & 1 == 0 {
                let wbit = 1u64 << w;
                let (l, k) = (r2.line, r2.pbidx);
                let busy = self.fifo_has(l) || (head_act == HeadAct::Flush && he.line == l);
                let ek = *self.e(k);
                let buffered = r2.pbv && self.live(k) && ek.ty == ty::PERSIST && ek.line == l;
                match Op::from_bits(r2.op) {
                    Op::Store => {
                        if busy {
                        } else if buffered {
                            let n = self.oq_n[w] as usize;
                            let younger = n > 0
                                && self.age(self.oq[w][n - 1]) > self.age(k)
                                && self.fault != Fault::IgnoreCoalesceOrdering;
                            if younger {
                                rsp.kind = RspKind::Wait as u8;
                                wait_set = Some((w, k));
                                target = Some(k);
                            } else {
                                rsp.kind = RspKind::Coalesced as u8;
                                rsp.idx = k;
                                self.e_mut(k).warps |= wbit;
                            }
                        } else if !self.full {
                            rsp.kind = RspKind::Performed as u8;
                            rsp.idx = self.tail;
                            push = Some(Entry {
                                warps: wbit,
                                line: l,
                                ty: ty::PERSIST,
                            });
                        }
                    }
                    Op::Evict => {
                        if busy {
                        } else if !buffered {
                            rsp.kind = RspKind::Performed as u8;
                        } else {
                            let m = ek.warps & self.warp_mask;
                            let age_k = self.age(k);
                            let older = self.fault != Fault::EvictIgnoreOrdering
                                && bits(m)
                                    .any(|v| self.oq_n[v] > 0 && self.age(self.oq[v][0]) < age_k);
                            if older {
                                rsp.kind = RspKind::Wait as u8;
                                wait_set = Some((w, k));
                                target = Some(k);
                            } else if m & fsm_gate == 0 && can_flush {
                                rsp.kind = RspKind::Performed as u8;
                                evict_flush = Some(FlushQ {
                                    line: l,
                                    warps: ek.warps,
                                    evict: true,
                                    epoch: self.ep_cur,
                                });
                                self.e_mut(k).ty = ty::HOLE;
                            }
                        }
                    }
                    op => {
                        let t = op as u8 + 1;
                        let y = self.tail.wrapping_sub(1) & self.n_mask;
                        let coal =
                            !empty && self.last_type == t && !(pop_planned && y == self.head);
                        let n = self.oq_n[w] as usize;
                        let named = coal && n > 0 && self.oq[w][n - 1] == y;
                        let e = if !named && n == D {
                            None
                        } else if coal {
                            rsp.kind = RspKind::Coalesced as u8;
                            self.e_mut(y).warps |= wbit;
                            if !named {
                                oq_push = Some((w, y));
                            }
                            Some(y)
                        } else if !self.full {
                            rsp.kind = RspKind::Performed as u8;
                            push = Some(Entry {
                                warps: wbit,
                                line: 0,
                                ty: t,
                            });
                            oq_push = Some((w, self.tail));
                            Some(self.tail)
                        } else {
                            None
                        };
                        if let Some(e) = e {
                            if op.stalls_in_odm() {
                                odm_set = wbit;
                                target = Some(e);
                            } else if self.p.policy == FlushPolicy::Lazy {
                                target = Some(e);
                            }
                        }
                    }
                }
            }
        }

        let head_final = if evict_flush.is_some() {
            HeadAct::None
        } else {
            head_act
        };
        let pop = head_final != HeadAct::None;
        let h = self.head;

        // head action effects
        let mut flush_now = evict_flush;
        let mut fsm_add = 0u64;
        let mut edm_add = 0u64;
        let mut odm_clr = 0u64;
        let mut inv_add = 0u64;
        match head_final {
            HeadAct::Flush => {
                flush_now = Some(FlushQ {
                    line: he.line,
                    warps: he.warps,
                    evict: false,
                    epoch: self.ep_cur,
                });
            }
            HeadAct::Retire => {
                let hw = he.warps & self.warp_mask;
                fsm_add = hw;
                match he.ty {
                    ty::DFENCE | ty::REL_DEVICE => {
                        odm_clr = hw;
                        if !(self.fault == Fault::DFenceNoWait && he.ty == ty::DFENCE) {
                            edm_add = hw;
                        }
                    }
                    ty::ACQ_DEVICE => odm_clr = hw,
                    _ => {}
                }
                if he.ty == ty::DFENCE || he.ty == ty::ACQ_DEVICE {
                    inv_add = hw;
                }
                // Queue pops: only warps the entry names can have it as their oldest.
                for v in bits(hw) {
                    if self.oq_n[v] > 0 && self.oq[v][0] == h {
                        self.oq[v][0] = self.oq[v][1];
                        self.oq_n[v] -= 1;
                    }
                }
            }
            HeadAct::Pop | HeadAct::None => {}
        }
        if let Some((v, e)) = oq_push {
            let n = self.oq_n[v] as usize;
            self.oq[v][n] = e;
            self.oq_n[v] += 1;
        }

        // entry waits
        if self.fault == Fault::GlobalRelease {
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
        if let Some((v, k)) = wait_set {
            self.wait_ent |= 1u64 << v;
            self.wait_idx[v] = k;
        }

        // drain target
        let pend_after = self.drain_pend && !(pop && h == self.drain_idx);
        let (drain_pend, drain_idx) = match target {
            Some(e) if !pend_after || self.age(e) > self.age(self.drain_idx) => (true, e),
            _ => (pend_after, self.drain_idx),
        };

        // 4.3 epochs
        let (ack_n, ack_e) = (self.ackq.0 as u32, self.ackq.1 as usize & (E - 1));
        let acked = ack_n.min(self.ectr[ack_e]);
        if ack_n > self.ectr[ack_e] {
            err |= 1;
        }
        let cur = self.ep_cur as usize;
        let old = self.ep_old as usize;
        let rel = self.ectr[old] == 0 && old != cur;
        let join = head_final == HeadAct::Retire;
        let j = if self.ectr[cur] != 0 {
            cur
        } else {
            (cur + E - 1) % E
        };
        let nowait = (self.ectr[cur] == 0 && cur == old) || (j == old && self.ectr[old] == 0);
        let need_adv = join && !nowait && self.ectr[cur] != 0;
        let room = (cur + 1) % E != old || rel;
        let flushed = flush_now.is_some() as u32;
        self.ectr[cur] += flushed;
        self.ectr[ack_e] -= acked;
        self.actr = self.actr + flushed - acked;
        if rel {
            self.ep_fsm[old] = 0;
            self.ep_edm[old] = 0;
            self.ep_old = ((old + 1) % E) as u8;
        }
        if join && !nowait {
            self.ep_fsm[j] |= fsm_add;
            self.ep_edm[j] |= edm_add;
        }
        if self.ep_closed {
            if rel {
                self.ep_cur = ((cur + 1) % E) as u8;
                self.ep_closed = false;
            }
        } else if need_adv {
            if room {
                self.ep_cur = ((cur + 1) % E) as u8;
            } else {
                self.ep_closed = true;
            }
        }

        // 4.4 next state: invalidation
        let done = self.doneq && self.inv_req;
        if done {
            self.inv_cur = self.inv_next | inv_add;
            self.inv_next = 0;
            self.inv_req = false;
        } else if self.inv_req {
            self.inv_next |= inv_add;
        } else {
            self.inv_cur |= inv_add;
            self.inv_req = self.inv_cur != 0;
        }

        // flush FIFO: the taken head leaves, the new flush enters
        if self.fifo_n > 0 && inp.flush_ready {
            self.fifo_head = (self.fifo_head + 1) % F;
            self.fifo_n -= 1;
        }
        if let Some(f) = flush_now {
            self.fifo[(self.fifo_head + self.fifo_n) % F] = f;
            self.fifo_n += 1;
        }

        // PB pointers and masks
        let count = self.count();
        if let Some(entry) = push {
            let tail = self.tail;
            *self.e_mut(tail) = entry;
            self.last_type = entry.ty;
        }
        self.odm = (self.odm & !odm_clr) | odm_set;
        self.drain_pend = drain_pend;
        self.drain_idx = drain_idx;
        let new_count = count + push.is_some() as u32 - pop as u32;
        self.head = (self.head + pop as u32) & self.n_mask;
        self.tail = (self.tail + push.is_some() as u32) & self.n_mask;
        self.full = new_count == self.p.entries;

        // pipeline and registered inputs
        self.r2 = self.r1;
        self.r1 = next_r1;
        self.rsp = rsp;
        self.ackq = (inp.ack_count & 7, inp.ack_epoch & 3);
        self.doneq = inp.inv_done;
        self.drainq = inp.drain_all;
        self.ready = true;
        self.err = err;
        out
    }
}
