//! Cycle-exact reference model of the persist buffer unit (`docs/microarch.md`).
//!
//! The code follows the spec's §4 equations in order: head action, request,
//! next state. All reads use the state at the start of the cycle.

use sbrp_iface::{entry_type as ty, FlushPolicy, Op, PbIn, PbOut, PbParams, PbUnit};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum HeadAct {
    None,
    Pop,
    Flush,
    Retire,
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
    // memories
    pb_type: Vec<u8>,
    pb_warps: Vec<u64>,
    pb_line: Vec<u32>,
    pb_snap_valid: Vec<bool>,
    pb_snap_idx: Vec<u32>,
    l1_pbidx: Vec<u32>,
    warp_last_ord: Vec<u32>,
    /// Deliberate deviations for negative controls (tests that the checks check).
    pub mutation: Mutation,
}

/// A deliberately broken behaviour, used only by tests that show the
/// comparator and the expectations catch it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Mutation {
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
        let n = p.entries as usize;
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
            pb_type: vec![0; n],
            pb_warps: vec![0; n],
            pb_line: vec![0; n],
            pb_snap_valid: vec![false; n],
            pb_snap_idx: vec![0; n],
            l1_pbidx: vec![0; p.lines as usize],
            warp_last_ord: vec![0; p.warps as usize],
            mutation: Mutation::None,
        })
    }

    #[inline]
    fn age(&self, i: u32) -> u32 {
        i.wrapping_sub(self.head) & self.n_mask
    }
    #[inline]
    fn used(&self) -> u32 {
        self.tail.wrapping_sub(self.head) & self.n_mask
    }
    #[inline]
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
    #[inline]
    fn buffered(&self, l: u32) -> Option<u32> {
        let k = self.l1_pbidx[l as usize];
        (self.live(k) && self.pb_type[k as usize] == ty::PERSIST && self.pb_line[k as usize] == l)
            .then_some(k)
    }

    /// Entries currently in the PB, oldest first: (type, warps, line).
    pub fn entries(&self) -> Vec<(u8, u64, u32)> {
        (0..self.count())
            .map(|a| {
                let i = ((self.head + a) & self.n_mask) as usize;
                (self.pb_type[i], self.pb_warps[i], self.pb_line[i])
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
        let window = match self.mutation {
            Mutation::WindowOffByOne => self.p.window + 1,
            _ => self.p.window,
        };
        let policy_ok = match self.p.policy {
            FlushPolicy::Window => self.actr < window,
            FlushPolicy::Eager => true,
            FlushPolicy::Lazy => false,
        };
        let fsm_gate = if self.mutation == Mutation::IgnoreFsm {
            0
        } else {
            fsm_eff
        };

        // 4.1 head action
        let h = self.head as usize;
        let (ht, hw, hl) = (self.pb_type[h], self.pb_warps[h], self.pb_line[h]);
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
        if inp.req_valid && w < self.p.warps && (self.odm | self.edm) >> w & 1 == 0 {
            let wbit = 1u64 << w;
            let l = inp.req_line & (self.p.lines - 1);
            match Op::from_bits(inp.req_op) {
                Op::Store => {
                    let hit = self
                        .buffered(l)
                        .filter(|&k| !(head_leaving && k == self.head));
                    if let Some(k) = hit {
                        let j = self.warp_last_ord[w as usize];
                        let younger_ord = self.live(j)
                            && ty::is_ordering(self.pb_type[j as usize])
                            && self.pb_warps[j as usize] & wbit != 0
                            && self.age(j) > self.age(k)
                            && self.mutation != Mutation::IgnoreCoalesceOrdering;
                        if younger_ord {
                            out.req_wait = true;
                            edm_set |= wbit;
                            target = Some(k);
                        } else {
                            out.req_ready = true;
                            self.pb_warps[k as usize] |= wbit;
                        }
                    } else if !self.full {
                        out.req_ready = true;
                        push = true;
                        let t = self.tail as usize;
                        self.pb_type[t] = ty::PERSIST;
                        self.pb_warps[t] = wbit;
                        self.pb_line[t] = l;
                        self.pb_snap_valid[t] = self.lo_valid;
                        self.pb_snap_idx[t] = self.lo_idx;
                        self.l1_pbidx[l as usize] = self.tail;
                    }
                }
                Op::Evict => {
                    if let Some(k) = self.buffered(l) {
                        let ku = k as usize;
                        if self.pb_snap_valid[ku] && self.age(self.pb_snap_idx[ku]) < self.age(k) {
                            out.req_wait = true;
                            edm_set |= wbit;
                            target = Some(k);
                        } else if self.pb_warps[ku] & fsm_gate != 0 || actr_max || hold {
                            out.req_wait = true;
                            edm_set |= wbit;
                        } else {
                            out.req_ready = true;
                            evict_flush = true;
                            out.flush_valid = true;
                            out.flush_line = l;
                            out.flush_warps = self.pb_warps[ku];
                            out.flush_evict = true;
                            self.pb_type[ku] = ty::HOLE;
                        }
                    } else {
                        out.req_ready = true;
                    }
                }
                op => {
                    let t = op as u8 + 1;
                    let y = self.tail.wrapping_sub(1) & self.n_mask;
                    let coal = !self.empty()
                        && self.pb_type[y as usize] == t
                        && !(head_leaving && y == self.head);
                    let e = if coal {
                        self.pb_warps[y as usize] |= wbit;
                        Some(y)
                    } else if !self.full {
                        let tl = self.tail as usize;
                        self.pb_type[tl] = t;
                        self.pb_warps[tl] = wbit;
                        self.pb_line[tl] = 0;
                        self.pb_snap_valid[tl] = false;
                        self.pb_snap_idx[tl] = 0;
                        push = true;
                        new_lo = Some(self.tail);
                        Some(self.tail)
                    } else {
                        None
                    };
                    if let Some(e) = e {
                        out.req_ready = true;
                        self.warp_last_ord[w as usize] = e;
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
                        if self.mutation != Mutation::DFenceNoWait || ht != ty::DFENCE {
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
