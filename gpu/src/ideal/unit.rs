//! The idealised persist buffer unit (`docs/model.md`, "The idealised
//! unit"): the paper's §6 hardware at the paper's level of abstraction,
//! behind the same port contract as the v2 unit (`docs/microarch.md` §2),
//! with one switch per realism step of the ladder (`IdealConfig`).
//!
//! It keeps the v2 unit's rules for what must wait (§4.1-4.3: coalescing
//! refused behind the warp's own ordering entry, evictions behind an
//! older ordering entry of the line's warps, FSM gating, EDM after a
//! dFence or device pRel, invalidations) and drops what building it costs:
//! each cycle's work is done in order (head action, then the request) on
//! the state as it is, with no pipeline, forwarding or one-action limits.
//! The switches put back, one at a time, the v2 unit's registered ports,
//! its replays, its four ack epochs, its ordering queues of two, its
//! strict head. Readable before fast: it runs only in the ladder.

use std::collections::VecDeque;

use sbrp_iface::consts::{FLUSH_FIFO, RSP_LATENCY};
use sbrp_iface::{
    entry_type as ty, FlushPolicy, Op, PbIn, PbOut, PbParams, PbUnit, Probe, RspKind,
};

use crate::config::IdealConfig;

pub use sbrp_sim_fast::Fault;

/// The faults the idealised unit can carry: the v2 model's of the same name.
pub const FAULTS: [Fault; 3] = [Fault::None, Fault::IgnoreFsm, Fault::IgnoreCoalesceOrdering];

#[derive(Clone, Copy, Default)]
struct Entry {
    ty: u8,
    warps: u64,
    line: u32,
}

#[derive(Clone, Copy)]
struct Flush {
    line: u32,
    warps: u64,
    evict: bool,
    epoch: u8,
}

/// An ack epoch: flushes counted in it and not acknowledged, and the warps
/// released when it and every older epoch have drained.
#[derive(Clone, Copy)]
struct Epoch {
    id: u8,
    ctr: u32,
    fsm: u64,
    edm: u64,
}

/// A decided request's response.
#[derive(Clone, Copy)]
struct Rsp {
    warp: u8,
    kind: RspKind,
    idx: u32,
}

/// What a request comes to.
enum Decision {
    /// Performed or coalesced (the store's new hook).
    Taken(RspKind, u32),
    /// The warp waits in EDM for an entry to leave.
    Wait,
    /// Cannot be done now.
    Refused,
}

pub struct IdealUnit {
    p: PbParams,
    sw: IdealConfig,
    pb: Vec<Entry>,
    head: u32,
    count: u32,
    odm: u64,
    wait_ent: u64,
    wait_idx: [u32; 64],
    /// Oldest first; never empty. The youngest is the current epoch.
    epochs: VecDeque<Epoch>,
    /// Bounded epochs all live: no flush starts until the oldest drains.
    closed: bool,
    actr: u32,
    actr_max: u32,
    /// Per warp, its live ordering entries, oldest first.
    oq: Vec<VecDeque<u32>>,
    drain_pend: bool,
    drain_idx: u32,
    inv_req: bool,
    inv_cur: u64,
    inv_next: u64,
    fifo: VecDeque<Flush>,
    /// Last cycle's inputs (read when the ports are registered).
    inq: PbIn,
    /// Registered ports: the request pipeline (§4.0's `r1`, `r2`) and the
    /// response decided last cycle.
    r1: Option<PbIn>,
    r2: Option<PbIn>,
    rsp_reg: Option<Rsp>,
    /// The outputs at the end of the last cycle (registered outputs).
    regs: PbOut,
    err: u8,
    rst_q: bool,
    /// A deliberate deviation (negative controls of the ladder's checks).
    fault: Fault,
}

fn bits(mut m: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let b = m.trailing_zeros() as usize;
            m &= m - 1;
            b
        })
    })
}

impl IdealUnit {
    pub fn new(p: &PbParams, sw: &IdealConfig) -> IdealUnit {
        let mut u = IdealUnit {
            p: *p,
            sw: sw.clone(),
            pb: vec![Entry::default(); p.entries as usize],
            head: 0,
            count: 0,
            odm: 0,
            wait_ent: 0,
            wait_idx: [0; 64],
            epochs: VecDeque::new(),
            closed: false,
            actr: 0,
            actr_max: (1 << p.actr_bits) - 1,
            oq: vec![VecDeque::new(); 64],
            drain_pend: false,
            drain_idx: 0,
            inv_req: false,
            inv_cur: 0,
            inv_next: 0,
            fifo: VecDeque::new(),
            inq: PbIn::idle(),
            r1: None,
            r2: None,
            rsp_reg: None,
            regs: PbOut::default(),
            err: 0,
            rst_q: false,
            fault: Fault::None,
        };
        u.reset();
        u
    }

    /// The unit with `fault`, one of those it knows (`FAULTS`).
    pub fn with_fault(mut self, fault: Fault) -> Result<IdealUnit, String> {
        if !FAULTS.contains(&fault) {
            return Err(format!(
                "unit fault {fault:?} is the v2 unit's; the idealised unit knows {FAULTS:?}"
            ));
        }
        self.fault = fault;
        Ok(self)
    }

    fn reset(&mut self) {
        self.pb.fill(Entry::default());
        self.head = 0;
        self.count = 0;
        self.odm = 0;
        self.wait_ent = 0;
        self.epochs = VecDeque::from([Epoch {
            id: 0,
            ctr: 0,
            fsm: 0,
            edm: 0,
        }]);
        self.closed = false;
        self.actr = 0;
        self.oq.iter_mut().for_each(VecDeque::clear);
        self.drain_pend = false;
        self.inv_req = false;
        self.inv_cur = 0;
        self.inv_next = 0;
        self.fifo.clear();
        self.inq = PbIn::idle();
        (self.r1, self.r2, self.rsp_reg) = (None, None, None);
        self.err = 0;
        self.regs = self.outputs();
    }

    fn n(&self) -> u32 {
        self.p.entries
    }
    fn age(&self, i: u32) -> u32 {
        (i + self.n() - self.head) % self.n()
    }
    fn live(&self, i: u32) -> bool {
        self.age(i) < self.count
    }
    fn tail(&self) -> u32 {
        (self.head + self.count) % self.n()
    }
    fn full(&self) -> bool {
        self.count == self.n()
    }
    fn fsm(&self) -> u64 {
        self.epochs.iter().fold(0, |m, e| m | e.fsm)
    }
    fn edm(&self) -> u64 {
        self.epochs.iter().fold(self.wait_ent, |m, e| m | e.edm)
    }
    /// The FSM bits that gate flushes.
    fn fsm_gate(&self) -> u64 {
        if self.fault == Fault::IgnoreFsm {
            0
        } else {
            self.fsm()
        }
    }
    fn stall(&self) -> u64 {
        self.odm | self.edm() | self.inv_cur | self.inv_next
    }
    fn can_flush(&self) -> bool {
        !self.closed && self.actr < self.actr_max && self.fifo.len() < FLUSH_FIFO as usize
    }
    fn policy_ok(&self) -> bool {
        match self.p.policy {
            FlushPolicy::Window => self.actr < self.p.window,
            FlushPolicy::Eager => true,
            FlushPolicy::Lazy => false,
        }
    }

    /// A flush enters the FIFO, counted in the current epoch.
    fn flush(&mut self, line: u32, warps: u64, evict: bool) {
        let cur = self.epochs.back_mut().expect("an epoch");
        cur.ctr += 1;
        self.actr += 1;
        self.fifo.push_back(Flush {
            line,
            warps,
            evict,
            epoch: cur.id,
        });
    }

    fn ack(&mut self, epoch: u8, count: u32) {
        if count == 0 {
            return;
        }
        match self.epochs.iter_mut().find(|e| e.id == epoch) {
            Some(e) if e.ctr >= count => {
                e.ctr -= count;
                self.actr -= count;
            }
            _ => self.err |= 1,
        }
    }

    /// Drained epochs release their warps, oldest first.
    fn release(&mut self) {
        if self.sw.epochs == 1 {
            // The paper's single ACTR: FSM and EDM reset when ACTR is zero.
            let e = &mut self.epochs[0];
            if e.ctr == 0 {
                (e.fsm, e.edm) = (0, 0);
            }
            return;
        }
        while self.epochs.len() > 1 && self.epochs[0].ctr == 0 {
            self.epochs.pop_front();
            if self.closed {
                self.closed = false;
                self.advance();
            }
        }
    }

    fn advance(&mut self) {
        let id = self.epochs.back().expect("an epoch").id.wrapping_add(1);
        self.epochs.push_back(Epoch {
            id,
            ctr: 0,
            fsm: 0,
            edm: 0,
        });
    }

    /// Retiring warps wait for every flush so far: they join the youngest
    /// epoch with flushes outstanding (none: nothing to wait for), which
    /// then closes to later flushes.
    fn join(&mut self, fsm_add: u64, edm_add: u64) {
        let Some(j) = self.epochs.iter().rposition(|e| e.ctr > 0) else {
            return;
        };
        self.epochs[j].fsm |= fsm_add;
        self.epochs[j].edm |= edm_add;
        if self.sw.epochs == 1 || j + 1 < self.epochs.len() {
            return;
        }
        // Epoch ids are 8 bits: at most 255 live.
        let bound = match self.sw.epochs {
            0 => 255,
            e => e as usize,
        };
        if self.epochs.len() < bound {
            self.advance();
        } else {
            self.closed = true;
        }
    }

    fn drain_target(&mut self, e: u32) {
        if !self.drain_pend || self.age(e) > self.age(self.drain_idx) {
            (self.drain_pend, self.drain_idx) = (true, e);
        }
    }

    fn pop(&mut self) {
        let h = self.head;
        for v in bits(self.wait_ent) {
            if self.wait_idx[v] == h {
                self.wait_ent &= !(1 << v);
            }
        }
        if self.drain_pend && self.drain_idx == h {
            self.drain_pend = false;
        }
        self.head = (h + 1) % self.n();
        self.count -= 1;
    }

    /// The oldest persist behind a gated head that may flush first: not
    /// gated, no ordering entry before it, no older persist of its line.
    fn past_gated(&self, fsm: u64) -> Option<u32> {
        let mut lines = vec![];
        for a in 0..self.count {
            let j = (self.head + a) % self.n();
            let e = self.pb[j as usize];
            match e.ty {
                ty::HOLE => {}
                ty::PERSIST if e.warps & fsm == 0 && !lines.contains(&e.line) => return Some(j),
                ty::PERSIST => lines.push(e.line),
                _ => return None,
            }
        }
        None
    }

    /// The head action (§4.1's, or past a gated head without the strict head).
    fn head_action(&mut self, drain_all: bool) {
        if self.count == 0 {
            return;
        }
        let h = self.head;
        let e = self.pb[h as usize];
        match e.ty {
            ty::HOLE => self.pop(),
            ty::PERSIST => {
                let force = self.drain_pend || self.full() || drain_all;
                if !(self.can_flush() && (force || self.policy_ok())) {
                    return;
                }
                let fsm = self.fsm_gate();
                if e.warps & fsm == 0 {
                    self.flush(e.line, e.warps, false);
                    self.pop();
                } else if !self.sw.strict_head {
                    if let Some(j) = self.past_gated(fsm) {
                        let x = self.pb[j as usize];
                        self.flush(x.line, x.warps, false);
                        self.pb[j as usize].ty = ty::HOLE;
                    }
                }
            }
            t => {
                for w in bits(e.warps) {
                    let front = self.oq[w].pop_front();
                    debug_assert_eq!(front, Some(h), "warp {w}'s oldest ordering entry");
                }
                let odm_types = [ty::DFENCE, ty::ACQ_DEVICE, ty::REL_DEVICE];
                if odm_types.contains(&t) {
                    self.odm &= !e.warps;
                }
                let edm_add = if t == ty::DFENCE || t == ty::REL_DEVICE {
                    e.warps
                } else {
                    0
                };
                self.join(e.warps, edm_add);
                if t == ty::DFENCE || t == ty::ACQ_DEVICE {
                    if self.inv_req {
                        self.inv_next |= e.warps;
                    } else {
                        self.inv_cur |= e.warps;
                    }
                }
                self.pop();
            }
        }
    }

    fn allocate(&mut self, e: Entry) -> u32 {
        let t = self.tail();
        self.pb[t as usize] = e;
        self.count += 1;
        t
    }

    /// §4.2's decision on the state as it is now.
    fn decide(&mut self, r: &PbIn) -> Decision {
        let w = r.req_warp as usize & 63;
        if w as u32 >= self.p.warps {
            self.err |= 2;
            return Decision::Refused;
        }
        let wbit = 1u64 << w;
        if self.stall() & wbit != 0 {
            return Decision::Refused;
        }
        let op = Op::from_bits(r.req_op);
        if matches!(op, Op::Store | Op::Evict) {
            let l = r.req_line;
            let k = r.req_pbidx % self.n();
            if self.fifo.iter().any(|f| f.line == l) {
                return Decision::Refused;
            }
            let ek = self.pb[k as usize];
            let buffered = r.req_pbv && self.live(k) && ek.ty == ty::PERSIST && ek.line == l;
            if op == Op::Store {
                if buffered {
                    let younger = self.oq[w]
                        .back()
                        .is_some_and(|&y| self.age(y) > self.age(k))
                        && self.fault != Fault::IgnoreCoalesceOrdering;
                    if younger {
                        self.wait_ent |= wbit;
                        self.wait_idx[w] = k;
                        self.drain_target(k);
                        return Decision::Wait;
                    }
                    self.pb[k as usize].warps |= wbit;
                    return Decision::Taken(RspKind::Coalesced, k);
                }
                if self.full() {
                    return Decision::Refused;
                }
                let i = self.allocate(Entry {
                    ty: ty::PERSIST,
                    warps: wbit,
                    line: l,
                });
                return Decision::Taken(RspKind::Performed, i);
            }
            if !buffered {
                return Decision::Taken(RspKind::Performed, 0);
            }
            let age_k = self.age(k);
            let older =
                bits(ek.warps).any(|v| self.oq[v].front().is_some_and(|&o| self.age(o) < age_k));
            if older {
                self.wait_ent |= wbit;
                self.wait_idx[w] = k;
                self.drain_target(k);
                return Decision::Wait;
            }
            if ek.warps & self.fsm_gate() != 0 || !self.can_flush() {
                return Decision::Refused;
            }
            self.flush(l, ek.warps, true);
            self.pb[k as usize].ty = ty::HOLE;
            return Decision::Taken(RspKind::Performed, 0);
        }
        let t = op as u8 + 1;
        let y = (self.tail() + self.n() - 1) % self.n();
        let coal = self.count > 0 && self.pb[y as usize].ty == t;
        let named = coal && self.oq[w].back() == Some(&y);
        let d = self.sw.ord_queue as usize;
        if !named && d > 0 && self.oq[w].len() >= d {
            return Decision::Refused;
        }
        let (kind, e) = if coal {
            self.pb[y as usize].warps |= wbit;
            (RspKind::Coalesced, y)
        } else if self.full() {
            return Decision::Refused;
        } else {
            let e = self.allocate(Entry {
                ty: t,
                warps: wbit,
                line: 0,
            });
            (RspKind::Performed, e)
        };
        if !named {
            self.oq[w].push_back(e);
        }
        if matches!(t, ty::DFENCE | ty::ACQ_DEVICE | ty::REL_DEVICE) {
            self.odm |= wbit;
            self.drain_target(e);
        } else if self.p.policy == FlushPolicy::Lazy {
            self.drain_target(e);
        }
        Decision::Taken(kind, 0)
    }

    /// The outputs the state shows now (all but the request's and the
    /// response's, filled by `step`).
    fn outputs(&self) -> PbOut {
        let f = self.fifo.front();
        let fsm = self.fsm();
        let edm = self.edm();
        PbOut {
            flush_valid: f.is_some(),
            flush_line: f.map_or(0, |f| f.line),
            flush_warps: f.map_or(0, |f| f.warps),
            flush_evict: f.is_some_and(|f| f.evict),
            flush_epoch: f.map_or(0, |f| f.epoch),
            inv_req: self.inv_req,
            stall: self.odm | edm | self.inv_cur | self.inv_next,
            idle: self.count == 0 && self.actr == 0 && !self.inv_req && self.inv_cur == 0,
            error: self.err,
            obs_odm: self.odm,
            obs_edm: edm,
            obs_fsm: fsm,
            obs_actr: self.actr,
            obs_head: self.head,
            obs_tail: self.tail(),
            obs_full: self.full(),
            obs_drain: self.drain_pend,
            obs_epoch: self.epochs.back().map_or(0, |e| e.id),
            ..PbOut::default()
        }
    }
}

impl PbUnit for IdealUnit {
    fn params(&self) -> &PbParams {
        &self.p
    }

    fn name(&self) -> &str {
        "ideal"
    }

    fn probes(&self) -> Vec<Probe> {
        Vec::new()
    }

    fn state_key(&self, out: &mut Vec<u64>) {
        out.extend([
            self.head as u64,
            self.count as u64,
            self.odm,
            self.wait_ent,
            self.actr as u64,
            self.closed as u64,
            self.drain_pend as u64,
            self.drain_idx as u64,
            self.inv_req as u64,
            self.inv_cur,
            self.inv_next,
            self.fifo.len() as u64,
            self.r1.is_some() as u64,
            self.r2.is_some() as u64,
            self.rsp_reg.is_some() as u64,
            self.err as u64,
        ]);
        for e in &self.epochs {
            out.extend([e.id as u64, e.ctr as u64, e.fsm, e.edm]);
        }
        out.extend(self.inq.values());
    }

    fn rsp_latency(&self) -> usize {
        if self.sw.registered {
            RSP_LATENCY
        } else {
            0
        }
    }

    fn step(&mut self, inp: &PbIn) -> PbOut {
        if self.rst_q {
            self.reset();
            self.rst_q = inp.rst;
            return PbOut {
                req_ready: false,
                ..self.regs
            };
        }
        self.rst_q = inp.rst;
        let reg = self.sw.registered;
        // Registered ports: last cycle's acks, invalidation answer and
        // drain; the outputs are the state at the start of the cycle.
        let late = if reg { self.inq } else { *inp };
        self.inq = *inp;
        let done = late.inv_done && self.inv_req;
        self.ack(late.ack_epoch, late.ack_count as u32);
        self.release();
        let start = self.regs;
        self.head_action(late.drain_all);
        let (rsp, req_ready) = if reg {
            self.pipeline(inp)
        } else {
            self.at_once(inp)
        };
        // Invalidation: one request answered per `inv_done` pulse (§4.4).
        if done {
            self.inv_cur = self.inv_next;
            self.inv_next = 0;
            self.inv_req = false;
        } else if !self.inv_req {
            self.inv_req = self.inv_cur != 0;
        }
        self.release();
        let mut out = if reg { start } else { self.outputs() };
        if out.flush_valid && inp.flush_ready {
            self.fifo.pop_front();
        }
        self.regs = self.outputs();
        out.req_ready = req_ready;
        out.error = self.err;
        if let Some(r) = rsp {
            out.rsp_valid = true;
            out.rsp_warp = r.warp;
            out.rsp_kind = r.kind as u8;
            out.rsp_idx = r.idx;
        }
        out
    }
}

impl IdealUnit {
    /// Without registered ports: the request is decided as it arrives and
    /// answered in the same cycle; one that cannot be done now is refused
    /// at the port (not taken) unless replays are on.
    fn at_once(&mut self, inp: &PbIn) -> (Option<Rsp>, bool) {
        if !inp.req_valid {
            return (None, true);
        }
        match self.answer(inp) {
            Some(r) => (Some(r), true),
            None => (None, false),
        }
    }

    /// With registered ports (§4.0): a request taken in cycle h is decided
    /// in h+2 and answered in h+3. Without replays, one that cannot be
    /// done stays in `r2`, decided again each cycle, and the port takes
    /// nothing while the pipeline is full.
    fn pipeline(&mut self, inp: &PbIn) -> (Option<Rsp>, bool) {
        let out = self.rsp_reg.take();
        let mut hold = false;
        if let Some(r) = self.r2 {
            match self.answer(&r) {
                Some(x) => self.rsp_reg = Some(x),
                None => hold = true,
            }
        }
        let ready = !hold || self.r1.is_none();
        let new = (inp.req_valid && ready).then_some(*inp);
        if hold {
            self.r1 = self.r1.or(new);
        } else {
            self.r2 = self.r1;
            self.r1 = new;
        }
        (out, ready)
    }

    /// The response to request `r`, or None if it is to be refused.
    fn answer(&mut self, r: &PbIn) -> Option<Rsp> {
        let kind_idx = match self.decide(r) {
            Decision::Taken(kind, idx) => (kind, idx),
            Decision::Wait => (RspKind::Wait, 0),
            Decision::Refused if self.sw.replay => (RspKind::Replay, 0),
            Decision::Refused => return None,
        };
        Some(Rsp {
            warp: r.req_warp,
            kind: kind_idx.0,
            idx: kind_idx.1,
        })
    }
}

#[cfg(test)]
mod tests;
