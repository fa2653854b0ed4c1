//! The SM's side of the persist buffer unit under SBRP (`docs/microarch.md`
//! §2 and interface requirements 1-5; `docs/model.md`, "SBRP"): one request
//! per cycle from the warps waiting for the unit, the L1 hook with each store,
//! the flush FIFO drained into the memory system while the write-back path
//! has room, acknowledgements as counts per ACTR epoch, the invalidation
//! handshake, and warps resuming when their `stall` bit falls.
//!
//! The unit is stepped only while something is under way ([`UnitState::busy`]),
//! and a replay loop against a frozen unit is skipped ([`Sm::try_skip`]).

use std::collections::VecDeque;

use sbrp_iface::{Op, PbIn, PbOut, RspKind};
use sbrp_trace::program::Instr;
use sbrp_trace::{Cell, Event, OrderingOp, Scope};

use super::l1::{LineMap, Lookup};
use super::warp::{Cause, Phase, WState};
use super::{Ctx, Fault, Sm, EV_ACK_FLUSH};
use crate::config::Model;
use crate::mem::{Access, MemReq};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Inv {
    #[default]
    Idle,
    Due(u64),
    WaitFall,
}

/// A request taken by the unit, awaiting its response (in order).
#[derive(Clone, Copy, Debug)]
struct Pending {
    warp: usize,
    op: Op,
    slot: usize,
}

/// A request chosen for this cycle.
#[derive(Clone, Copy, Debug)]
struct Request {
    warp: usize,
    op: Op,
    slot: usize,
    /// A store miss installs its line when the request is taken.
    install: Option<u64>,
}

/// The longest skip of a replay loop, in cycles (keeps deadlock detection,
/// which counts loop turns, from jumping far).
const SKIP_MAX: u64 = 1 << 16;

/// An evicted line's tag, dirty sectors and written words.
type Evicted = (u64, u8, Vec<(u64, u64)>);

#[derive(Default)]
pub struct UnitState {
    /// The unit must be stepped next cycle.
    pub busy: bool,
    pending: VecDeque<Pending>,
    /// Acknowledgements to present: (epoch, count), oldest first.
    acks: VecDeque<(u8, u32)>,
    inv: Inv,
    inv_pulse: bool,
    pub stall: u64,
    last_idle: bool,
    /// The outputs of the last step, to see when the unit stands still.
    prev_out: Option<PbOut>,
    /// The unit's state key at the previous quiet, unchanged cycle, and how
    /// many such cycles in a row; a scratch buffer.
    still_key: Vec<u64>,
    still_n: u32,
    key_buf: Vec<u64>,
    /// Words of evicted lines awaiting their eviction flush, by L1 slot.
    wb: LineMap<VecDeque<Evicted>>,
    /// Flushes taken and not acknowledged.
    flush_out: u32,
    req_rr: usize,
    /// Breaches of the interface seen (a run with any fails).
    pub failures: Vec<String>,
    /// The inputs of the last three steps, newest first: the unit's
    /// request pipeline holds them.
    ring: [PbIn; 3],
    /// The next cycle to visit after a skip of a replay loop (0: none).
    pub skip_to: u64,
}

impl UnitState {
    pub fn fresh() -> UnitState {
        UnitState {
            last_idle: true,
            ..UnitState::default()
        }
    }

    pub fn ack(&mut self, epoch: u8) {
        self.flush_out -= 1;
        match self.acks.back_mut() {
            Some((e, c)) if *e == epoch => *c += 1,
            _ => self.acks.push_back((epoch, 1)),
        }
        self.busy = true;
    }

    pub fn describe(&self) -> String {
        format!(
            "unit idle {}, requests in flight {}, acks to present {}, flushes unacknowledged {}, invalidation {:?}",
            self.last_idle,
            self.pending.len(),
            self.acks.len(),
            self.flush_out,
            self.inv
        )
    }

    /// Nothing under way and the unit reports idle.
    pub fn idle(&self) -> bool {
        self.last_idle
            && self.pending.is_empty()
            && self.acks.is_empty()
            && self.inv == Inv::Idle
            && !self.inv_pulse
            && self.flush_out == 0
    }
}

/// The unit's opcode for ordering instruction `i`.
fn ordering_op(cx: &Ctx, i: &Instr) -> Op {
    let dev = |s: Scope| {
        cx.fault != Fault::DropScope && (s == Scope::Device || cx.cfg.model == Model::SbrpDevice)
    };
    match i {
        Instr::OFence | Instr::Bar => Op::OFence,
        Instr::DFence | Instr::Fence(_) => Op::DFence,
        Instr::PAcq { scope, .. } if dev(*scope) => Op::AcqDevice,
        Instr::PAcq { .. } => Op::AcqBlock,
        Instr::PRel { scope, .. } if dev(*scope) => Op::RelDevice,
        Instr::PRel { .. } => Op::RelBlock,
        _ => unreachable!("not an ordering instruction"),
    }
}

impl Sm {
    /// Warp `w` sends its current ordering op to the unit.
    pub(super) fn unit_request(&mut self, w: usize, now: u64) {
        self.wait(w, WState::UnitReq, Cause::PersistBuffer, now);
        self.unit_state.busy = true;
    }

    /// Warp `w` must evict dirty PM slot `v` through the unit first.
    pub(super) fn evict_request(&mut self, w: usize, v: usize, now: u64) {
        self.warps[w].evict = Some(v);
        self.wait(w, WState::UnitReq, Cause::PersistBuffer, now);
        self.unit_state.busy = true;
    }

    /// The request warp `w` would send now, if it can (its line not pinned).
    fn request_of(&mut self, cx: &mut Ctx, w: usize) -> Option<Request> {
        let warp = &self.warps[w];
        if let Some(v) = warp.evict {
            if self.l1.lines[v].pinned {
                return None;
            }
            if !self.l1.victim_dirty(v) || !self.l1.lines[v].pm {
                // A head flush cleaned the victim meanwhile, or the way now
                // holds another (volatile) line: the access goes on without
                // this eviction and finds its room again.
                self.warps[w].evict = None;
                if self.warps[w].phase != Phase::Lines {
                    self.ready(w, cx.now);
                }
                return None;
            }
            return Some(Request {
                warp: w,
                op: Op::Evict,
                slot: v,
                install: None,
            });
        }
        if warp.phase != Phase::Lines {
            let op = match warp.order_op {
                Some(op) => op,
                None => {
                    let op = ordering_op(cx, warp.op());
                    self.warps[w].order_op = Some(op);
                    op
                }
            };
            return Some(Request {
                warp: w,
                op,
                slot: 0,
                install: None,
            });
        }
        let line = warp.acc[warp.acc_i].line;
        let req = |slot, install| Request {
            warp: w,
            op: Op::Store,
            slot,
            install,
        };
        if let Lookup::Hit(s) = self.l1.lookup(line) {
            return (!self.l1.lines[s].pinned).then(|| req(s, None));
        }
        if let Some(s) = self.l1.slot_of(line) {
            if self.l1.lines[s].pinned {
                return None;
            }
            self.l1.revive(s);
            return Some(req(s, None));
        }
        let v = self.l1.victim(line)?;
        if self.l1.victim_dirty(v) {
            if self.l1.lines[v].pm {
                return Some(Request {
                    warp: w,
                    op: Op::Evict,
                    slot: v,
                    install: None,
                });
            }
            self.write_back(cx, v, false);
        }
        Some(req(v, Some(line)))
    }

    /// One cycle of the unit and its interfaces.
    pub(super) fn unit_cycle(&mut self, cx: &mut Ctx) {
        let now = cx.now;
        let mut inp = PbIn::idle();
        if let Some((e, c)) = self.unit_state.acks.front_mut() {
            let n = (*c).min(sbrp_iface::consts::ACKS_MAX);
            inp.ack_count = n as u8;
            inp.ack_epoch = *e;
            *c -= n;
            if *c == 0 {
                self.unit_state.acks.pop_front();
            }
        }
        inp.flush_ready = self.unit_state.flush_out < cx.cfg.l1.miss_queue;
        inp.inv_done = std::mem::take(&mut self.unit_state.inv_pulse);
        inp.drain_all = self.draining && self.live_warps == 0;

        // One request: the next warp waiting for the unit, round robin.
        let n = self.warps.len();
        let mut req = None;
        let rr = self.unit_state.req_rr;
        let mut bits = (self.masks.unitreq & !self.unit_state.stall).rotate_right(rr as u32);
        while bits != 0 {
            let k = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let w = (rr + k) % 64;
            if let Some(r) = self.request_of(cx, w) {
                self.unit_state.req_rr = (w + 1) % n;
                req = Some(r);
                break;
            }
        }
        if let Some(r) = req {
            inp.req_valid = true;
            inp.req_op = r.op as u8;
            inp.req_warp = r.warp as u8;
            inp.req_line = r.slot as u32;
            if r.install.is_none() && matches!(r.op, Op::Store | Op::Evict) {
                if let Some(k) = self.l1.lines[r.slot].hook {
                    inp.req_pbv = true;
                    inp.req_pbidx = k;
                }
            }
        }
        let unit = self.unit.as_mut().expect("SBRP SM has a unit");
        let out = unit.step(&inp);
        self.stats.unit_steps += 1;
        self.stats.actr_peak = self.stats.actr_peak.max(out.obs_actr);
        if out.error != 0 && self.unit_state.failures.is_empty() {
            self.unit_state.failures.push(format!(
                "SM {}: unit error {:#04b} at cycle {now}",
                self.id, out.error
            ));
        }
        if out.flush_valid && inp.flush_ready {
            self.take_flush(cx, &out);
        }
        if let Some(r) = req {
            if out.req_ready {
                self.taken(r, now);
            }
        }
        if out.rsp_valid {
            self.respond(cx, &out);
        }
        // Interface requirement 5: drop the clean PM lines, pulse inv_done once.
        let st = &mut self.unit_state;
        if st.inv == Inv::Idle && out.inv_req {
            st.inv = Inv::Due(now + 1);
        }
        match st.inv {
            Inv::Due(t) if t <= now => {
                // The artifact's dFence keeps the L1: only an acquire (or a
                // threadfence) waiting for this invalidation drops lines.
                let keep = cx.cfg.artifact.dfence_keeps_l1
                    && !self.warps.iter().any(|w| {
                        matches!(w.state(), WState::WaitStall { retry: false, .. })
                            && w.pc < w.code.len()
                            && matches!(w.op(), Instr::PAcq { .. } | Instr::Fence(_))
                    });
                if !keep {
                    self.l1.invalidate_pm();
                }
                let st = &mut self.unit_state;
                st.inv_pulse = true;
                st.inv = Inv::WaitFall;
            }
            Inv::WaitFall if !out.inv_req => st.inv = Inv::Idle,
            _ => {}
        }
        self.unit_state.stall = out.stall;
        self.unit_state.last_idle = out.idle;
        self.resume_waiting(out.stall, now);
        let requesting = self.masks.unitreq != 0;
        let stalled = self.masks.waitstall != 0;
        // Idle inputs and the same outputs as the cycle before: the unit
        // stands still until an input changes (an acknowledgement, a
        // request, the drain), so it is not stepped meanwhile. Both sides
        // of a lockstep pair skip the same cycles.
        let quiet_in = !inp.req_valid
            && inp.ack_count == 0
            && !inp.inv_done
            && (!out.flush_valid || !inp.flush_ready);
        let mut still = false;
        let st = &mut self.unit_state;
        if quiet_in && st.pending.is_empty() && st.prev_out == Some(out) {
            // Stands still only if quiet steps left its registers unchanged
            // too; two in a row empty the request pipeline and the input
            // registers.
            st.key_buf.clear();
            self.unit.as_ref().unwrap().state_key(&mut st.key_buf);
            if st.still_n > 0 && st.key_buf == st.still_key {
                st.still_n += 1;
                still = st.still_n >= 3;
            } else {
                st.still_n = 1;
                std::mem::swap(&mut st.still_key, &mut st.key_buf);
            }
        } else {
            st.still_n = 0;
        }
        self.unit_state.prev_out = Some(out);
        let st = &self.unit_state;
        self.unit_state.busy = !st.pending.is_empty()
            || !st.acks.is_empty()
            || st.inv != Inv::Idle
            || st.inv_pulse
            || requesting
            || !still && (!out.idle || stalled);
        let st = &mut self.unit_state;
        st.ring = [inp, st.ring[0], st.ring[1]];
        st.skip_to = 0;
        if self.unit_state.busy {
            self.try_skip(cx);
        }
    }

    /// The coming cycles' inputs without a request (no acknowledgement is
    /// queued when this is asked).
    fn quiet_inputs(&self, cx: &Ctx) -> PbIn {
        PbIn {
            flush_ready: self.unit_state.flush_out < cx.cfg.l1.miss_queue,
            drain_all: self.draining && self.live_warps == 0,
            ..PbIn::idle()
        }
    }

    /// The request warp `w` sends while it replays an ordering op, if it
    /// is one.
    fn ordering_request(&mut self, cx: &Ctx, w: usize) -> Option<PbIn> {
        let warp = &self.warps[w];
        if warp.evict.is_some() || warp.phase == Phase::Lines {
            return None;
        }
        let op = match warp.order_op {
            Some(op) => op,
            None => {
                // What `request_of` would cache at the first request.
                let op = ordering_op(cx, warp.op());
                self.warps[w].order_op = Some(op);
                op
            }
        };
        Some(PbIn {
            req_valid: true,
            req_op: op as u8,
            req_warp: w as u8,
            ..self.quiet_inputs(cx)
        })
    }

    /// Skips a replay loop (`docs/model.md`, "Event loop"): the unit is
    /// frozen (nothing in it moves but its request pipeline) and every
    /// request the SM can send until its next event is an ordering op the
    /// unit refuses, so the cycles until then only pass requests round and
    /// count replays (with no request at all, until the unit is seen
    /// standing still). Those cycles run on the SM's side alone; the unit then
    /// takes the last three of their inputs (its pipeline's depth). Its
    /// earlier, skipped steps would have changed nothing else, and the
    /// requests those three steps meet in `r2` are refused too, so it ends
    /// in the state cycle-by-cycle stepping leaves, and so does every count.
    /// The answer already decided (`next_out`) must be a replay, and the
    /// outputs read outside the step's own cycle (`stall`, which resumes
    /// warps; `idle`, which the kernel-end check reads) must stay as they are.
    fn try_skip(&mut self, cx: &Ctx) {
        let now = cx.now;
        // Cheap conditions first: nothing but the unit's port under way.
        let st = &self.unit_state;
        let m = self.masks;
        if !st.acks.is_empty()
            || st.inv != Inv::Idle
            || st.inv_pulse
            || m.ready | m.due != 0
            || m.waitstall & !st.stall != 0
            || self.cta_done
            || self.bar_arrived
        {
            return;
        }
        let quiet = self.quiet_inputs(cx);
        let unit = self.unit.as_ref().expect("SBRP SM has a unit");
        let refused = |r: &PbIn| !r.req_valid || unit.refuses(r);
        let st = &self.unit_state;
        // The request the unit takes next (input t-1) is refused.
        if !unit.frozen(&quiet) || !refused(&st.ring[1]) {
            return;
        }
        // The answer the SM sees next (to input t-2, decided in the step
        // just taken, maybe before the unit froze) is a replay.
        let Some(next) = unit.next_out() else {
            return;
        };
        if next.rsp_valid && next.rsp_kind != RspKind::Replay as u8
            || next.stall != self.unit_state.stall
            || next.idle != self.unit_state.last_idle
            || next.error != 0
        {
            return;
        }
        let st = &self.unit_state;
        if next.rsp_valid != st.ring[2].req_valid
            || !refused(&st.ring[0])
            || st.pending.iter().any(|p| !p.op.is_ordering())
            || self.ev_next <= now + 1
        {
            return;
        }
        let mut st_steps = m.steps;
        while st_steps != 0 {
            let w = st_steps.trailing_zeros() as usize;
            st_steps &= st_steps - 1;
            if !self.steps_blocked(&self.warps[w]) {
                return;
            }
        }
        // What every warp that can send would send: an ordering op the
        // unit refuses, or else the skip ends before it is sent.
        let senders = m.unitreq & !self.unit_state.stall;
        let mut reqs = [PbIn::idle(); 64];
        let mut stop = 0u64;
        let mut b = senders;
        while b != 0 {
            let w = b.trailing_zeros() as usize;
            b &= b - 1;
            match self.ordering_request(cx, w) {
                Some(r) if self.unit.as_ref().unwrap().refuses(&r) => reqs[w] = r,
                _ => stop |= 1 << w,
            }
        }
        for p in &self.unit_state.pending {
            let r = PbIn {
                req_valid: true,
                req_op: p.op as u8,
                req_warp: p.warp as u8,
                ..quiet
            };
            if self.unit.as_ref().unwrap().refuses(&r) {
                reqs[p.warp] = r;
            } else {
                stop |= 1 << p.warp;
            }
        }
        self.skip_replays(cx, quiet, &reqs, stop, next);
    }

    /// Runs the frozen replay loop on the SM's side from the next cycle up
    /// to the cycle before the SM's next event, or before a warp of `stop`
    /// would send its request (see [`Sm::try_skip`]).
    fn skip_replays(&mut self, cx: &Ctx, quiet: PbIn, reqs: &[PbIn; 64], stop: u64, next: PbOut) {
        let now = cx.now;
        let mut end = (self.ev_next - 1).min(cx.limit).min(now + SKIP_MAX);
        let n = self.warps.len();
        let st = &mut self.unit_state;
        let stall = st.stall;
        // The outputs from the next cycle on but for the answers (frozen).
        let base = next;
        let prev_out = st.prev_out.expect("the unit was stepped");
        st.key_buf.clear();
        self.unit.as_ref().unwrap().state_key(&mut st.key_buf);
        // Requests as warp numbers (NONE: no request), answers as codes of
        // the response outputs (the other outputs stay those of `base`).
        const NONE: u8 = 0xff;
        let code = |o: &PbOut| {
            o.rsp_valid as u64
                | (o.rsp_warp as u64) << 1
                | (o.rsp_kind as u64) << 8
                | (o.rsp_idx as u64) << 16
        };
        let warp_of = |r: &PbIn| if r.req_valid { r.req_warp & 63 } else { NONE };
        let mut ring = st.ring.map(|r| warp_of(&r));
        let mut prev = code(&prev_out);
        // The step just taken may have changed other outputs: then the
        // first cycle's outputs differ from the last ones whatever the answer.
        let mut changed = PbOut {
            rsp_valid: false,
            rsp_warp: 0,
            rsp_kind: 0,
            rsp_idx: 0,
            ..prev_out
        } != PbOut {
            rsp_valid: false,
            rsp_warp: 0,
            rsp_kind: 0,
            rsp_idx: 0,
            ..base
        };
        let mut unitreq = self.masks.unitreq;
        let mut pending = [0u8; 4];
        let mut np = 0;
        for p in &st.pending {
            pending[np] = p.warp as u8;
            np += 1;
        }
        let mut rr = st.req_rr;
        let mut still_n = st.still_n;
        let mut key_is_still = st.still_key == st.key_buf;
        let mut replays = 0u64;
        let stalled = self.masks.waitstall != 0;
        let mut busy = true;
        for c in now + 1..=end {
            // The request of the cycle: round robin over the senders.
            let mut req = NONE;
            let bits = unitreq & !stall;
            if bits != 0 {
                let k = bits.rotate_right(rr as u32).trailing_zeros() as usize;
                let w = (rr + k) % 64;
                if stop >> w & 1 == 1 {
                    // This cycle runs for real.
                    end = c - 1;
                    break;
                }
                rr = (w + 1) % n;
                req = w as u8;
                // Taken (before the oldest is answered, as in `unit_cycle`).
                unitreq &= !(1u64 << w);
                pending[np] = req;
                np += 1;
            }
            // The answer to the input of three cycles ago: a replay.
            let mut rsp = 0;
            if ring[2] != NONE {
                let w = pending[0];
                debug_assert_eq!(w, ring[2], "replay loop order");
                pending.copy_within(1.., 0);
                np -= 1;
                unitreq |= 1u64 << w;
                replays += 1;
                rsp = 1 | (w as u64) << 1 | (RspKind::Replay as u64) << 8;
            }
            // `unit_cycle`'s stillness count (the state key is constant).
            if req == NONE && np == 0 && prev == rsp && !changed {
                if still_n > 0 && key_is_still {
                    still_n += 1;
                } else {
                    still_n = 1;
                    key_is_still = true;
                }
            } else {
                still_n = 0;
            }
            prev = rsp;
            changed = false;
            ring = [req, ring[0], ring[1]];
            // `unit_cycle`'s `busy`: once the unit is seen standing still
            // with nothing to send, the SM stops stepping it.
            busy = np > 0 || unitreq != 0 || still_n < 3 && (!base.idle || stalled);
            if !busy {
                end = c;
                break;
            }
        }
        if end == now {
            return;
        }
        let input = |w: u8| if w == NONE { quiet } else { reqs[w as usize] };
        let ring = ring.map(input);
        let mut last = base;
        last.rsp_valid = prev & 1 == 1;
        last.rsp_warp = (prev >> 1) as u8 & 63;
        last.rsp_kind = (prev >> 8) as u8 & 3;
        last.rsp_idx = (prev >> 16) as u32;
        // The unit takes the last inputs (at most three; fewer if the skip
        // is shorter, the others it has taken already).
        let k = (end - now).min(3) as usize;
        let unit = self.unit.as_mut().unwrap();
        for i in (0..k).rev() {
            let _ = unit.step(&ring[i]);
        }
        // The warps' states, the port, the counts.
        let st = &mut self.unit_state;
        st.pending.clear();
        for &w in &pending[..np] {
            let w = w as usize;
            st.pending.push_back(Pending {
                warp: w,
                op: sbrp_iface::Op::from_bits(reqs[w].req_op),
                slot: 0,
            });
        }
        st.req_rr = rr;
        st.ring = ring;
        st.prev_out = Some(last);
        st.still_n = still_n;
        if key_is_still && st.still_key != st.key_buf {
            std::mem::swap(&mut st.still_key, &mut st.key_buf);
        }
        st.skip_to = end + 1;
        st.busy = busy;
        self.stats.actr_peak = self.stats.actr_peak.max(base.obs_actr);
        let mut b = self.masks.unitreq | unitreq;
        while b != 0 {
            let w = b.trailing_zeros() as usize;
            b &= b - 1;
            if unitreq >> w & 1 == 1 && self.warps[w].state() != WState::UnitReq {
                self.set_state(w, WState::UnitReq);
            }
        }
        for &w in &pending[..np] {
            let w = w as usize;
            if self.warps[w].state() != WState::InFlight {
                self.set_state(w, WState::InFlight);
            }
        }
        self.stats.unit_steps += end - now;
        self.stats.replays += replays;
        self.stats.replays_ordering += replays;
    }

    fn taken(&mut self, r: Request, now: u64) {
        if matches!(r.op, Op::Store | Op::Evict) {
            if let Some(line) = r.install {
                self.l1.install(r.slot, line, true);
            }
            self.l1.set_pinned(r.slot, true);
        }
        self.unit_state.pending.push_back(Pending {
            warp: r.warp,
            op: r.op,
            slot: r.slot,
        });
        self.set_state(r.warp, WState::InFlight);
        let _ = now;
    }

    /// A flush taken from the unit's FIFO goes to the memory system.
    fn take_flush(&mut self, cx: &mut Ctx, out: &PbOut) {
        let now = cx.now;
        let slot = out.flush_line as usize;
        let (tag, sectors, words) = if out.flush_evict {
            match self
                .unit_state
                .wb
                .get_mut(&(slot as u64))
                .and_then(VecDeque::pop_front)
            {
                Some(x) => x,
                None => {
                    let t = self.l1.lines[slot].tag;
                    let (s, w) = self.l1.clean(slot);
                    (t, s, w)
                }
            }
        } else {
            let t = self.l1.lines[slot].tag;
            let (s, w) = self.l1.clean(slot);
            (t, s, w)
        };
        if sectors == 0 && out.flush_evict {
            // The line's words left with a head flush taken while the
            // eviction was in flight; this flush carries nothing, and its
            // write (same line, same memory path) is acknowledged after it.
            self.stats.empty_evict_flushes += 1;
        } else if sectors == 0 {
            self.unit_state.failures.push(format!(
                "SM {}: cycle {now}: {} flush of L1 line {slot} has no dirty data",
                self.id,
                if out.flush_evict {
                    "an eviction"
                } else {
                    "a head"
                }
            ));
        }
        let d = cx.mem.send(
            now,
            &MemReq {
                sm: self.id,
                line: tag,
                sectors: sectors.max(1),
                access: Access::Write,
                pm: true,
            },
        );
        self.pm_out += 1;
        self.unit_state.flush_out += 1;
        self.push_event(d.at, EV_ACK_FLUSH, out.flush_epoch);
        self.stats.pm_flushes += 1;
        self.stats.evict_flushes += out.flush_evict as u64;
        if self.rec.is_some() {
            let id = self.next_flush;
            self.next_flush += 1;
            let line = tag * cx.cfg.l1.line as u64;
            let cells = words
                .iter()
                .map(|&(addr, value)| Cell { addr, value })
                .collect();
            let (sm, evict) = (self.id, out.flush_evict);
            self.emit(|| Event::Flush {
                id,
                sm,
                line,
                cells,
                evict,
                cycle: now,
                read_cycle: now,
            });
            self.emit(|| Event::Durable {
                id,
                cycle: d.durable,
            });
        }
    }

    fn respond(&mut self, cx: &mut Ctx, out: &PbOut) {
        let now = cx.now;
        let Some(p) = self.unit_state.pending.pop_front() else {
            self.unit_state.failures.push(format!(
                "SM {}: cycle {now}: a response with no request in flight",
                self.id
            ));
            return;
        };
        if out.rsp_warp as usize != p.warp {
            self.unit_state.failures.push(format!(
                "SM {}: cycle {now}: response for warp {}, expected warp {}",
                self.id, out.rsp_warp, p.warp
            ));
            return;
        }
        let w = p.warp;
        if matches!(p.op, Op::Store | Op::Evict) {
            self.l1.set_pinned(p.slot, false);
        }
        match RspKind::from_bits(out.rsp_kind) {
            RspKind::Replay => {
                self.stats.replays += 1;
                match p.op {
                    Op::Store => self.stats.replays_store += 1,
                    Op::Evict => self.stats.replays_evict += 1,
                    _ => self.stats.replays_ordering += 1,
                }
                self.set_state(w, WState::UnitReq);
            }
            RspKind::Wait => {
                self.stats.waits += 1;
                self.set_state(
                    w,
                    WState::WaitStall {
                        since: now,
                        retry: true,
                    },
                );
                let warp = self.wid(w);
                self.emit(|| Event::StallBegin { warp, cycle: now });
            }
            kind @ (RspKind::Performed | RspKind::Coalesced) => match p.op {
                Op::Evict => {
                    let tag = self.l1.lines[p.slot].tag;
                    let (s, words) = self.l1.clean(p.slot);
                    // A line a head flush already cleaned has no live entry:
                    // the unit sends no eviction flush for it, so nothing
                    // waits in the buffer (or a later eviction's flush of
                    // this slot would take the wrong words).
                    if s != 0 {
                        self.unit_state
                            .wb
                            .entry(p.slot as u64)
                            .or_default()
                            .push_back((tag, s, words));
                    }
                    self.l1.drop_line(p.slot);
                    self.warps[w].evict = None;
                    // The access that needed the room issues again.
                    if self.warps[w].phase == Phase::Lines {
                        self.set_state(w, WState::UnitReq);
                    } else {
                        self.ready(w, now);
                    }
                }
                Op::Store => {
                    self.stats.coalesced += (kind == RspKind::Coalesced) as u64;
                    let a = self.warps[w].acc[self.warps[w].acc_i];
                    let cells: Vec<(u64, u64)> = self.warps[w].cells
                        [a.first as usize..(a.first + a.count) as usize]
                        .to_vec();
                    self.l1.write(p.slot, a.sectors, &cells);
                    self.l1.lines[p.slot].hook = Some(out.rsp_idx);
                    self.persisted(w, &cells, now);
                    let warp = &mut self.warps[w];
                    warp.acc_i += 1;
                    if warp.acc_i < warp.acc.len() {
                        self.set_state(w, WState::UnitReq);
                    } else {
                        self.after_pm_store(cx, w);
                    }
                }
                op => self.ordering_accepted(cx, w, op, now),
            },
        }
    }

    fn ordering_accepted(&mut self, cx: &mut Ctx, w: usize, op: Op, now: u64) {
        let instr = self.warps[w].op().clone();
        let kind = match &instr {
            Instr::OFence | Instr::Bar => Some(OrderingOp::OFence),
            Instr::DFence | Instr::Fence(_) => Some(OrderingOp::DFence),
            Instr::PAcq { scope, .. } => Some(OrderingOp::PAcq(self.scope(cx, *scope))),
            Instr::PRel { scope, .. } => Some(OrderingOp::PRel(self.scope(cx, *scope))),
            _ => None,
        };
        if let Some(kind) = kind {
            let flag = match &instr {
                Instr::PAcq { flag, .. } | Instr::PRel { flag, .. } => Some(cx.flags.id(*flag)),
                _ => None,
            };
            let opref = self.opref(w);
            self.emit(|| Event::Ordering {
                op: opref,
                kind,
                flag,
                cycle: now,
            });
        }
        if op.stalls_in_odm() {
            self.set_state(
                w,
                WState::WaitStall {
                    since: now,
                    retry: false,
                },
            );
            let warp = self.wid(w);
            self.emit(|| Event::StallBegin { warp, cycle: now });
        } else {
            self.warps[w].phase = Phase::Ordered;
            self.ready(w, now);
        }
    }

    /// Warps waiting on `stall` resume once they see their bit low.
    fn resume_waiting(&mut self, stall: u64, now: u64) {
        // Only warps whose stall bit is low can resume.
        let mut bits = self.masks.waitstall & !stall;
        while bits != 0 {
            let w = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let WState::WaitStall { since, retry } = self.warps[w].state() else {
                continue;
            };
            if now <= since {
                continue;
            }
            let warp = self.wid(w);
            self.emit(|| Event::StallEnd { warp, cycle: now });
            if retry {
                self.set_state(w, WState::UnitReq);
            } else {
                self.warps[w].phase = Phase::Ordered;
                self.ready(w, now);
            }
        }
    }
}
