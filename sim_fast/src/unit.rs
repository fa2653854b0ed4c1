//! Cycle-exact reference model of the persist buffer unit (`docs/microarch.md`).
//!
//! The code follows the spec's §4 equations in order: head action, request,
//! next state. All reads use the state at the start of the cycle.

use sbrp_iface::{entry_type as ty, FlushPolicy, Op, PbIn, PbOut, PbParams, PbUnit, Probe};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum HeadAct {
    None,
    Pop,
    Flush,
    Retire,
}

const MAX_ENTRIES: usize = sbrp_iface::ENTRIES_MAX as usize;
const MAX_LINES: usize = sbrp_iface::LINES_MAX as usize;

/// One PB entry: the spec's `pb_type`, `pb_warps`, `pb_line`, `pb_snap` words.
#[derive(Clone, Copy, Default)]
struct Entry {
    warps: u64,
    line: u32,
    snap_idx: u32,
    ty: u8,
    snap_valid: bool,
}

/// The reference model. Fields mirror the spec's state (§3).
#[derive(Clone)]
pub struct PbModel {
    p: PbParams,
    n_mask: u32,
    warp_mask: u64,
    actr_max: u32,
    // registers
    head: u32,
    tail: u32,
    full: bool,
    odm: u64,
    edm: u64,
    fsm: u64,
    actr: u32,
    drain_pend: bool,
    drain_idx: u32,
    lo_valid: bool,
    lo_idx: u32,
    // memories, sized for the largest parameters so that masked indices
    // need no bounds checks; one struct per PB entry for locality
    pb: Box<[Entry; MAX_ENTRIES]>,
    l1_pbidx: Box<[u32; MAX_LINES]>,
    warp_last_ord: [u32; 64],
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
    /// dFence releases its warps at the head without waiting for ACTR = 0.
    DFenceNoWait,
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
            odm: 0,
            edm: 0,
            fsm: 0,
            actr: 0,
            drain_pend: false,
            drain_idx: 0,
            lo_valid: false,
            lo_idx: 0,
            pb: Box::new([Entry::default(); MAX_ENTRIES]),
            l1_pbidx: Box::new([0; MAX_LINES]),
            warp_last_ord: [0; 64],
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
    /// PB index of line `l`'s entry, when the line is buffered.
    #[inline(always)]
    fn buffered(&self, l: u32) -> Option<u32> {
        let k = self.l1_pbidx[l as usize & (MAX_LINES - 1)];
        let e = self.e(k);
        (self.live(k) && e.ty == ty::PERSIST && e.line == l).then_some(k)
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

    fn observe(&self) -> PbOut {
        PbOut {
            stall: self.odm | self.edm,
            idle: self.empty() && self.actr == 0,
            obs_odm: self.odm,
            obs_edm: self.edm,
            obs_fsm: self.fsm,
            obs_actr: self.actr,
            obs_head: self.head,
            obs_tail: self.tail,
            obs_full: self.full,
            obs_drain: self.drain_pend,
            ..PbOut::default()
        }
    }

    fn reset(&mut self) {
        self.head = 0;
        self.tail = 0;
        self.full = false;
        self.odm = 0;
        self.edm = 0;
        self.fsm = 0;
        self.actr = 0;
        self.drain_pend = false;
        self.drain_idx = 0;
        self.lo_valid = false;
        self.lo_idx = 0;
    }
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
            reg("odm", w),
            reg("edm", w),
            reg("fsm", w),
            reg("actr", a),
            reg("drain_pend", 1),
            reg("drain_idx", iw),
            reg("lo_valid", 1),
            reg("lo_idx", iw),
        ];
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
            self.odm,
            self.edm,
            self.fsm,
            self.actr as u64,
            self.drain_pend as u64,
            self.drain_idx as u64,
            self.lo_valid as u64,
            self.lo_idx as u64,
        ]);
        for i in 0..self.p.entries {
            let e = self.e(i);
            // A slot that is not live may hold stale words (§3): shown as they are.
            out.extend([e.ty as u64, e.warps, e.line as u64, self.live(i) as u64]);
        }
    }

    #[inline]
    fn step(&mut self, inp: &PbIn) -> PbOut {
        let mut out = self.observe();
        if inp.rst {
            self.reset();
            return out;
        }
        let actr_zero = self.actr == 0;
        let actr_max = self.actr == self.actr_max;
        let fsm_eff = if actr_zero { 0 } else { self.fsm };
        let hold = self.edm != 0 && !self.drain_pend;
        let force = self.drain_pend || self.full || inp.drain_all;
        let policy_ok = self.actr < self.policy_limit;
        let fsm_gate = fsm_eff & self.fsm_gate_mask;

        // 4.1 head action
        let he = *self.e(self.head);
        let (ht, hw, hl) = (he.ty, he.warps, he.line);
        let head_act = if self.empty() || hold {
            HeadAct::None
        } else if ht == ty::HOLE {
            HeadAct::Pop
        } else if ht == ty::PERSIST {
            if hw & fsm_gate == 0 && !actr_max && (force || policy_ok) {
                HeadAct::Flush
            } else {
                HeadAct::None
            }
        } else {
            HeadAct::Retire
        };
        let head_leaving = head_act != HeadAct::None;

        // 4.2 request
        let mut push = false;
        let mut evict_flush = false;
        let mut edm_set = 0u64;
        let mut odm_set = 0u64;
        let mut target: Option<u32> = None;
        let mut new_lo: Option<u32> = None;
        let w = inp.req_warp as u32;
        if inp.req_valid && w < self.warps && (self.odm | self.edm) >> w & 1 == 0 {
            let wbit = 1u64 << w;
            let l = inp.req_line & self.line_mask;
            match Op::from_bits(inp.req_op) {
                Op::Store => {
                    let hit = self
                        .buffered(l)
                        .filter(|&k| !(head_leaving && k == self.head));
                    if let Some(k) = hit {
                        let j = self.warp_last_ord[w as usize & 63];
                        let ej = self.e(j);
                        let younger_ord = self.live(j)
                            && ty::is_ordering(ej.ty)
                            && ej.warps & wbit != 0
                            && self.age(j) > self.age(k)
                            && self.fault != Fault::IgnoreCoalesceOrdering;
                        if younger_ord {
                            out.req_wait = true;
                            edm_set |= wbit;
                            target = Some(k);
                        } else {
                            out.req_ready = true;
                            self.e_mut(k).warps |= wbit;
                        }
                    } else if !self.full {
                        out.req_ready = true;
                        push = true;
                        let (tail, lo_valid, lo_idx) = (self.tail, self.lo_valid, self.lo_idx);
                        *self.e_mut(tail) = Entry {
                            warps: wbit,
                            line: l,
                            snap_idx: lo_idx,
                            ty: ty::PERSIST,
                            snap_valid: lo_valid,
                        };
                        self.l1_pbidx[l as usize & (MAX_LINES - 1)] = tail;
                    }
                }
                Op::Evict => {
                    if let Some(k) = self.buffered(l) {
                        let ek = *self.e(k);
                        if ek.snap_valid && self.age(ek.snap_idx) < self.age(k) {
                            out.req_wait = true;
                            edm_set |= wbit;
                            target = Some(k);
                        } else if ek.warps & fsm_gate != 0 || actr_max || hold {
                            out.req_wait = true;
                            edm_set |= wbit;
                        } else {
                            out.req_ready = true;
                            evict_flush = true;
                            out.flush_valid = true;
                            out.flush_line = l;
                            out.flush_warps = ek.warps;
                            out.flush_evict = true;
                            self.e_mut(k).ty = ty::HOLE;
                        }
                    } else {
                        out.req_ready = true;
                    }
                }
                op => {
                    let t = op as u8 + 1;
                    let y = self.tail.wrapping_sub(1) & self.n_mask;
                    let coal =
                        !self.empty() && self.e(y).ty == t && !(head_leaving && y == self.head);
                    let e = if coal {
                        self.e_mut(y).warps |= wbit;
                        Some(y)
                    } else if !self.full {
                        let tail = self.tail;
                        *self.e_mut(tail) = Entry {
                            warps: wbit,
                            ty: t,
                            ..Entry::default()
                        };
                        push = true;
                        new_lo = Some(self.tail);
                        Some(self.tail)
                    } else {
                        None
                    };
                    if let Some(e) = e {
                        out.req_ready = true;
                        self.warp_last_ord[w as usize & 63] = e;
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

        let head_final = if evict_flush { HeadAct::None } else { head_act };
        let pop = head_final != HeadAct::None;

        // head action effects
        let mut fsm_set = 0u64;
        let mut odm_clr = 0u64;
        let mut lo_valid = self.lo_valid;
        match head_final {
            HeadAct::Flush => {
                out.flush_valid = true;
                out.flush_line = hl;
                out.flush_warps = hw;
                out.flush_evict = false;
            }
            HeadAct::Retire => {
                fsm_set = hw;
                if self.lo_valid && self.lo_idx == self.head {
                    lo_valid = false;
                }
                match ht {
                    ty::DFENCE | ty::REL_DEVICE => {
                        odm_clr = hw;
                        if self.fault != Fault::DFenceNoWait || ht != ty::DFENCE {
                            edm_set |= hw;
                        }
                    }
                    ty::ACQ_DEVICE => odm_clr = hw,
                    _ => {}
                }
                if ht == ty::DFENCE || ht == ty::ACQ_DEVICE {
                    out.inv_pm = true;
                }
            }
            HeadAct::Pop | HeadAct::None => {}
        }

        // drain target
        let pend_after = self.drain_pend && !(pop && self.head == self.drain_idx);
        let (drain_pend, drain_idx) = match target {
            Some(e) if !pend_after || self.age(e) > self.age(self.drain_idx) => (true, e),
            _ => (pend_after, self.drain_idx),
        };

        // 4.3 next state
        let count = self.count();
        let new_count = count + push as u32 - pop as u32;
        let flushes = out.flush_valid as u32;
        let acked = (inp.ack && !actr_zero) as u32;
        let next_actr = self.actr + flushes - acked;
        self.fsm = if actr_zero { 0 } else { self.fsm | fsm_set } & self.warp_mask;
        self.edm = if actr_zero && !self.drain_pend {
            0
        } else {
            self.edm
        } | edm_set;
        self.odm = (self.odm & !odm_clr) | odm_set;
        self.actr = next_actr;
        self.drain_pend = drain_pend;
        self.drain_idx = drain_idx;
        match new_lo {
            Some(t) => {
                self.lo_valid = true;
                self.lo_idx = t;
            }
            None => self.lo_valid = lo_valid,
        }
        self.head = (self.head + pop as u32) & self.n_mask;
        self.tail = (self.tail + push as u32) & self.n_mask;
        self.full = new_count == self.p.entries;
        out
    }
}
