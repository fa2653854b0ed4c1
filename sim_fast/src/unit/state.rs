//! The reference model's state helpers (`docs/microarch.md` §3-§4.4):
//! construction and reset, entry and age accessors, the derived masks,
//! the outputs computed from the state (`observe`), and the writes shared
//! by several blocks of the step (allocation, the flush FIFO, retirement).
//! Split from `unit.rs`, whose `step` uses them.

use sbrp_iface::{entry_type as ty, PbOut, PbParams};

use super::*;

impl PbModel {
    pub fn new(p: &PbParams) -> Result<PbModel, sbrp_iface::ParamError> {
        p.validate()?;
        let mut m = PbModel {
            p: *p,
            n_mask: p.entries - 1,
            warp_mask: p.warp_mask(),
            actr_max: p.actr_max(),
            head: 0,
            tail: 0,
            full: false,
            count: 0,
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
            fifo_line: [NO_LINE; F],
            fifo_head: 0,
            fifo_n: 0,
            inq: PbIn::default(),
            r1_valid: false,
            r2: PbIn::default(),
            r2_valid: false,
            ready: false,
            err: 0,
            rst_q: false,
            fsm: 0,
            ep_edm_or: 0,
            stall: 0,
            refuse: !p.warp_mask(),
            ep_rel: false,
            out: PbOut::default(),
            pb: Box::new([Entry::default(); MAX_ENTRIES]),
            fault: Fault::None,
            policy_limit: 0,
            fsm_gate_mask: 0,
            warps: p.warps,
            line_mask: p.lines - 1,
        };
        m.out = m.observe();
        Ok(m.with_fault(Fault::None))
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
    pub(super) fn e(&self, i: u32) -> &Entry {
        &self.pb[i as usize & (MAX_ENTRIES - 1)]
    }
    #[inline(always)]
    pub(super) fn e_mut(&mut self, i: u32) -> &mut Entry {
        &mut self.pb[i as usize & (MAX_ENTRIES - 1)]
    }
    #[inline(always)]
    pub(super) fn age(&self, i: u32) -> u32 {
        i.wrapping_sub(self.head) & self.n_mask
    }
    #[inline(always)]
    pub(super) fn used(&self) -> u32 {
        self.tail.wrapping_sub(self.head) & self.n_mask
    }
    #[inline(always)]
    pub(super) fn live(&self, i: u32) -> bool {
        self.age(i) < self.count
    }
    #[inline(always)]
    pub(super) fn empty(&self) -> bool {
        self.count == 0
    }
    /// SkipGated: the oldest persist behind the head, before the first
    /// ordering entry, whose warps are not gated and whose line no older
    /// live persist holds.
    pub(super) fn skip_candidate(&self, fsm_gate: u64) -> Option<(u32, Entry)> {
        let mut lines: Vec<u32> = vec![self.e(self.head).line];
        for a in 1..self.used().max(self.full as u32 * self.p.entries) {
            let j = (self.head + a) & self.n_mask;
            let e = *self.e(j);
            match e.ty {
                ty::HOLE => {}
                ty::PERSIST if e.warps & fsm_gate == 0 && !lines.contains(&e.line) => {
                    return Some((j, e));
                }
                ty::PERSIST => lines.push(e.line),
                _ => return None,
            }
        }
        None
    }
    /// §3's `fsm`, from the epoch masks (the step uses the register `self.fsm`).
    #[inline(always)]
    pub(super) fn fsm_of_epochs(&self) -> u64 {
        self.ep_fsm.iter().fold(0, |a, m| a | m)
    }
    /// §3's `edm`, from the epoch masks.
    pub(super) fn edm_of_epochs(&self) -> u64 {
        self.ep_edm.iter().fold(self.wait_ent, |a, m| a | m)
    }
    /// `fifo_has(l)`: compares the four slots' lines at once (free slots hold `NO_LINE`).
    #[inline(always)]
    pub(super) fn fifo_has(&self, l: u32) -> bool {
        self.fifo_line.iter().fold(false, |a, &x| a | (x == l))
    }

    /// The outputs as §4.4 defines them, from the state (the cached `out`
    /// must equal this at the start of every cycle).
    pub(super) fn observe(&self) -> PbOut {
        let f = if self.fifo_n > 0 {
            self.fifo[self.fifo_head]
        } else {
            FlushQ::default()
        };
        let edm = self.edm_of_epochs();
        PbOut {
            req_ready: self.ready && !self.rst_q,
            rsp_valid: self.out.rsp_valid,
            rsp_warp: self.out.rsp_warp,
            rsp_kind: self.out.rsp_kind,
            rsp_idx: self.out.rsp_idx,
            flush_valid: self.fifo_n > 0,
            flush_line: f.line,
            flush_warps: f.warps,
            flush_evict: f.evict,
            flush_epoch: f.epoch,
            inv_req: self.inv_req,
            stall: self.odm | edm | self.inv_cur | self.inv_next,
            idle: self.empty() && self.actr == 0 && !self.inv_req && self.inv_cur == 0,
            error: self.err,
            obs_odm: self.odm,
            obs_edm: edm,
            obs_fsm: self.fsm_of_epochs(),
            obs_actr: self.actr,
            obs_head: self.head,
            obs_tail: self.tail,
            obs_full: self.full,
            obs_drain: self.drain_pend,
            obs_epoch: self.ep_cur,
        }
    }

    /// 4.4 push: allocates `e` at the tail.
    #[inline(always)]
    pub(super) fn allocate(&mut self, e: Entry) {
        let tail = self.tail;
        *self.e_mut(tail) = e;
        self.last_type = e.ty;
        self.tail = (tail + 1) & self.n_mask;
        self.out.obs_tail = self.tail;
    }

    /// The new flush of the cycle enters the FIFO's free slot; 4.4 counts it.
    /// The slot `fifo_head + fifo_n` is the one 4.4 would use: a same-cycle
    /// pop moves the head and the count together (and `can_flush` leaves a
    /// free slot, so it is not the popped one).
    #[inline(always)]
    pub(super) fn fifo_enter(&mut self, f: FlushQ) {
        let slot = (self.fifo_head + self.fifo_n) % F;
        self.fifo[slot] = f;
        self.fifo_line[slot] = f.line;
    }

    /// The FIFO head's outputs (`flush_*`), after the FIFO changed.
    #[inline(always)]
    pub(super) fn out_fifo_head(&mut self) {
        let f = if self.fifo_n > 0 {
            self.fifo[self.fifo_head]
        } else {
            FlushQ::default()
        };
        self.out.flush_valid = self.fifo_n > 0;
        self.out.flush_line = f.line;
        self.out.flush_warps = f.warps;
        self.out.flush_evict = f.evict;
        self.out.flush_epoch = f.epoch;
    }

    /// 4.1 `RETIRE` of the ordering entry `he` at the head `h`: queue pops
    /// and `odm_clr` (applied now: nothing before 4.4 reads `odm`, and 4.4
    /// sets `odm_set` after the clear); returns `fsm_add`, `edm_add` (for
    /// the epochs, 4.3) and `inv_add`.
    #[inline(always)]
    pub(super) fn retire<const FAULTY: bool>(&mut self, he: Entry, h: u32) -> (u64, u64, u64) {
        let hw = he.warps & self.warp_mask;
        // hw where the type's bit is set in `types`, else 0.
        let by_type = |types: u32| hw & 0u64.wrapping_sub((types >> he.ty & 1) as u64);
        let edm_add = if FAULTY && self.fault == Fault::DFenceNoWait && he.ty == ty::DFENCE {
            0
        } else {
            by_type(EDM_TYPES)
        };
        self.odm &= !by_type(ODM_TYPES);
        // Queue pops: only warps the entry names can have it as their oldest.
        for v in bits(hw) {
            if self.oq_n[v] > 0 && self.oq[v][0] == h {
                self.oq[v].copy_within(1.., 0);
                self.oq_n[v] -= 1;
            }
        }
        (hw, edm_add, by_type(INV_TYPES))
    }

    /// §7, the end of a reset cycle: every register to 0 (`rst_q` is
    /// written by `step` after it); the memories keep their contents.
    #[cold]
    pub(super) fn reset(&mut self) {
        let mut fresh = PbModel::new(&self.p)
            .expect("parameters were validated")
            .with_fault(self.fault);
        std::mem::swap(&mut fresh.pb, &mut self.pb);
        *self = fresh;
    }
}
