//! Skipping the SM's replay loops against a frozen persist buffer unit
//! (`docs/model.md`, "Event loop"): the cycles in which every request the
//! SM can send is refused run on the SM's side alone, and the unit then
//! takes the last inputs of its pipeline's depth, so it ends in the state
//! cycle-by-cycle stepping leaves. Split from `unit_port.rs`, which calls
//! [`Sm::try_skip`] after each unit cycle.

use sbrp_iface::{Op, PbIn, PbOut, RspKind};

use super::l1::Lookup;
use super::unit_port::{ordering_op, Inv, Pending};
use super::warp::{Phase, WState};
use super::{Ctx, Sm};

/// The requests of a replay loop that pin an L1 slot while in flight
/// (`taken`, `respond`): evictions and stores to a line the L1 holds. Each
/// one's slot is its input's `req_line`; a warp whose slot another request
/// in flight pins sends nothing (`request_of`).
#[derive(Clone, Copy, Default)]
struct Slotted {
    warps: u64,
    /// Of those, stores.
    stores: u64,
}

impl Slotted {
    fn add(&mut self, w: usize, op: Op) {
        self.warps |= 1 << w;
        if op == Op::Store {
            self.stores |= 1 << w;
        }
    }
}

/// The state of a replay loop on the SM's side (`Sm::skip_replays`).
#[derive(Clone, Copy, PartialEq, Eq)]
struct LoopState {
    ring: [u8; 3],
    pending: [u8; 4],
    np: usize,
    unitreq: u64,
    rr: usize,
    prev: u64,
    still_n: u32,
    key_is_still: bool,
}

/// Cycles of a skip run before its loop's state is kept, and the longest
/// period looked for.
const PERIOD_WARMUP: u64 = 8;
const PERIOD_MAX: u64 = 256;

/// A skip is tried only when the SM's next event is further than this:
/// trying costs about what stepping a few cycles does.
const SKIP_MIN: u64 = 8;

/// The longest skip of a replay loop, in cycles (keeps deadlock detection,
/// which counts loop turns, from jumping far).
const SKIP_MAX: u64 = 1 << 16;

impl Sm {
    /// The coming cycles' inputs without a request (no acknowledgement is
    /// queued when this is asked).
    fn quiet_inputs(&self, cx: &Ctx) -> PbIn {
        PbIn {
            flush_ready: self.unit_state.flush_out < cx.cfg.l1.miss_queue,
            drain_all: self.draining && self.live_warps == 0,
            ..PbIn::idle()
        }
    }

    /// The request warp `w` sends while it replays an ordering op, an
    /// eviction or a store to a line the L1 holds, if it is one (as
    /// `request_of` builds it, or would once the slot is not pinned).
    fn replay_request(&mut self, cx: &Ctx, w: usize) -> Option<PbIn> {
        let warp = &self.warps[w];
        if let Some(v) = warp.evict {
            let l = &self.l1.lines[v];
            // A cleaned victim sets the warp going again.
            if !self.l1.victim_dirty(v) || !l.pm {
                return None;
            }
            return Some(self.slot_input(cx, w, Op::Evict, v));
        }
        if warp.phase == Phase::Lines {
            // Only a hit is sent as is; a miss picks a victim first.
            let line = warp.acc[warp.acc_i].line;
            return match self.l1.lookup(line) {
                Lookup::Hit(s) => Some(self.slot_input(cx, w, Op::Store, s)),
                Lookup::Miss => None,
            };
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

    /// Warp `w`'s eviction or store of L1 slot `v`, with the line's hook.
    fn slot_input(&self, cx: &Ctx, w: usize, op: Op, v: usize) -> PbIn {
        let hook = self.l1.lines[v].hook;
        PbIn {
            req_valid: true,
            req_op: op as u8,
            req_warp: w as u8,
            req_line: v as u32,
            req_pbv: hook.is_some(),
            req_pbidx: hook.unwrap_or(0),
            ..self.quiet_inputs(cx)
        }
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
    pub(super) fn try_skip(&mut self, cx: &Ctx) {
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
            || self.ev_wake() <= now + SKIP_MIN
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
        if next.rsp_valid != st.ring[2].req_valid || !refused(&st.ring[0]) {
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
        // What every warp that can send would send: an ordering op, an
        // eviction or a store hit the unit refuses. Any other request (a
        // store miss, a request the unit takes) would end the skip within a
        // few cycles: then there is none.
        let senders = m.unitreq & !self.unit_state.stall;
        let mut reqs = std::mem::take(&mut self.unit_state.skip_reqs);
        reqs.resize(64, PbIn::idle());
        let ok = self.replay_inputs(cx, quiet, senders, &mut reqs);
        if let Some(slotted) = ok {
            self.skip_replays(cx, quiet, &reqs, slotted, next);
        }
        self.unit_state.skip_reqs = reqs;
    }

    /// The inputs of the senders and of the requests in flight in a replay
    /// loop, into `reqs` by warp, and those that pin a slot; None if the
    /// loop would not last.
    fn replay_inputs(
        &mut self,
        cx: &Ctx,
        quiet: PbIn,
        senders: u64,
        reqs: &mut [PbIn],
    ) -> Option<Slotted> {
        let mut slotted = Slotted::default();
        let mut b = senders;
        while b != 0 {
            let w = b.trailing_zeros() as usize;
            b &= b - 1;
            reqs[w] = self.replay_request(cx, w)?;
        }
        let mut b = senders;
        while b != 0 {
            let w = b.trailing_zeros() as usize;
            b &= b - 1;
            let r = reqs[w];
            if !self.unit.as_ref().unwrap().refuses(&r) {
                return None;
            }
            let op = Op::from_bits(r.req_op);
            if !op.is_ordering() {
                slotted.add(w, op);
            }
        }
        // A request in flight is sent again as the warp sends it then; a
        // store's eviction (no `evict` victim kept) picks its victim again
        // among the ways not pinned, so it ends the loop. The request in
        // flight longest, answered next, may be one the unit would now
        // take (its answer is `next`, a replay).
        for i in 0..self.unit_state.pending.len() {
            let p = self.unit_state.pending[i];
            let r = if p.op.is_ordering() {
                PbIn {
                    req_valid: true,
                    req_op: p.op as u8,
                    req_warp: p.warp as u8,
                    ..quiet
                }
            } else {
                if p.op == Op::Evict && self.warps[p.warp].evict != Some(p.slot) {
                    return None;
                }
                let r = self.replay_request(cx, p.warp)?;
                if r.req_op != p.op as u8 || r.req_line != p.slot as u32 {
                    return None;
                }
                slotted.add(p.warp, p.op);
                r
            };
            if !self.unit.as_ref().unwrap().refuses(&r) {
                return None;
            }
            reqs[p.warp] = r;
        }
        Some(slotted)
    }

    /// Runs the frozen replay loop on the SM's side from the next cycle up
    /// to the cycle before the SM's next event (see [`Sm::try_skip`]).
    fn skip_replays(
        &mut self,
        cx: &Ctx,
        quiet: PbIn,
        reqs: &[PbIn],
        slotted: Slotted,
        next: PbOut,
    ) {
        let now = cx.now;
        let mut end = (self.ev_wake() - 1).min(cx.limit).min(now + SKIP_MAX);
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
        let mut replays_evict = 0u64;
        let mut replays_store = 0u64;
        let stalled = self.masks.waitstall != 0;
        let mut busy = true;
        // The loop is periodic once its requests go round: after a
        // warm-up its state is kept, and when it comes back the whole
        // periods left are counted at once.
        let mut seen: Option<(u64, LoopState, [u64; 3])> = None;
        let mut c = now;
        while c < end {
            c += 1;
            // The request of the cycle: round robin over the senders.
            // A warp whose slot a request in flight pins (the one answered
            // this cycle too) sends nothing.
            let mut req = NONE;
            let mut bits = (unitreq & !stall).rotate_right(rr as u32);
            while bits != 0 {
                let k = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let w = (rr + k) % 64;
                if slotted.warps >> w & 1 == 1
                    && pending[..np].iter().any(|&p| {
                        slotted.warps >> p & 1 == 1 && reqs[p as usize].req_line == reqs[w].req_line
                    })
                {
                    continue;
                }
                rr = (w + 1) % n;
                req = w as u8;
                // Taken (before the oldest is answered, as in `unit_cycle`).
                unitreq &= !(1u64 << w);
                pending[np] = req;
                np += 1;
                break;
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
                replays_store += slotted.stores >> w & 1;
                replays_evict += (slotted.warps & !slotted.stores) >> w & 1;
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
            let mut live = [NONE; 4];
            live[..np].copy_from_slice(&pending[..np]);
            let state = LoopState {
                ring,
                pending: live,
                np,
                unitreq,
                rr,
                prev,
                still_n,
                key_is_still,
            };
            let counts = [replays, replays_store, replays_evict];
            match seen {
                None if c == now + PERIOD_WARMUP => seen = Some((c, state, counts)),
                Some((c0, s0, k0)) if s0 == state && c0 != 0 => {
                    let period = c - c0;
                    let whole = (end - c) / period;
                    c += whole * period;
                    replays += whole * (replays - k0[0]);
                    replays_store += whole * (replays_store - k0[1]);
                    replays_evict += whole * (replays_evict - k0[2]);
                    seen = Some((0, s0, k0));
                }
                Some((c0, ..)) if c0 != 0 && c - c0 > PERIOD_MAX => seen = Some((0, state, counts)),
                _ => {}
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
            let op = Op::from_bits(reqs[w].req_op);
            st.pending.push_back(Pending {
                warp: w,
                op,
                slot: if op.is_ordering() {
                    0
                } else {
                    reqs[w].req_line as usize
                },
            });
        }
        // A store or an eviction in flight pins its slot (`taken`, `respond`).
        let mut b = slotted.warps;
        while b != 0 {
            let w = b.trailing_zeros() as usize;
            b &= b - 1;
            let slot = reqs[w].req_line;
            let pinned = pending[..np]
                .iter()
                .any(|&p| slotted.warps >> p & 1 == 1 && reqs[p as usize].req_line == slot);
            self.l1.set_pinned(slot as usize, pinned);
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
        self.stats.unit_steps_skipped += (end - now).saturating_sub(3);
        self.stats.replays += replays;
        self.stats.replays_evict += replays_evict;
        self.stats.replays_store += replays_store;
        self.stats.replays_ordering += replays - replays_evict - replays_store;
    }
}
