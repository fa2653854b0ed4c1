//! Skipping the SM's replay loops against a frozen persist buffer unit
//! (`docs/model.md`, "Event loop"): the cycles in which every request the
//! SM can send is refused run on the SM's side alone, and the unit then
//! takes the last inputs of its pipeline's depth, so it ends in the state
//! cycle-by-cycle stepping leaves. Split from `unit_port.rs`, which calls
//! [`Sm::try_skip`] after each unit cycle.

use sbrp_iface::{Op, PbIn, PbOut, RspKind};

use super::skip_plan::{Plan, NONE};
use sbrp_iface::port::Inv;

use super::unit_port::Pending;
use super::warp::WState;
use super::{Ctx, Sm};

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
    /// Skips a replay loop (`docs/model.md`, "Event loop"): the unit is
    /// frozen (nothing in it moves but its request pipeline) and the
    /// requests the SM sends until its next event are ordering ops,
    /// evictions and stores the unit refuses (`skip_plan.rs`; the skip ends
    /// before any other), so those cycles only pass requests round and
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
            || st.port.inv != Inv::Idle
            || st.port.inv_pulse
            || m.ready | m.due != 0
            || m.waitstall & !st.stall() != 0
            || self.cta_done
            || self.bar_arrived
        {
            return;
        }
        let wake = self.ev_wake();
        if wake <= now + SKIP_MIN {
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
            || next.stall != self.unit_state.stall()
            || next.idle != self.unit_state.last_idle
            || next.error != 0
        {
            return;
        }
        let st = &self.unit_state;
        if next.rsp_valid != st.ring[2].req_valid || !refused(&st.ring[0]) {
            return;
        }
        if m.steps & !self.steps_blocked() != 0 {
            return;
        }
        // What every warp that can send would send: an ordering op, an
        // eviction or a store hit the unit refuses, or a store's eviction
        // whose victim depends on the pins (`skip_plan.rs`).
        let senders = m.unitreq & !self.unit_state.stall();
        let mut plan = std::mem::take(&mut self.unit_state.skip_plan);
        if self.plan_replays(cx, senders, &mut plan) {
            self.skip_replays(cx, quiet, &plan, next, wake);
        }
        self.unit_state.skip_plan = plan;
    }

    /// Runs the frozen replay loop on the SM's side from the next cycle up
    /// to the cycle before the SM's next event, `wake` (see [`Sm::try_skip`]).
    fn skip_replays(&mut self, cx: &Ctx, quiet: PbIn, plan: &Plan, next: PbOut, wake: u64) {
        let now = cx.now;
        let mut end = (wake - 1).min(cx.limit).min(now + SKIP_MAX);
        let n = self.warps.len();
        let st = &mut self.unit_state;
        let stall = st.stall();
        // The outputs from the next cycle on but for the answers (frozen).
        let base = next;
        let prev_out = st.prev_out.expect("the unit was stepped");
        st.key_buf.clear();
        self.unit.as_ref().unwrap().state_key(&mut st.key_buf);
        // Requests as input ids of `plan` (NONE: no request), answers as
        // codes of the response outputs (the other outputs stay those of
        // `base`).
        let code = |o: &PbOut| {
            o.rsp_valid as u64
                | (o.rsp_warp as u64) << 1
                | (o.rsp_kind as u64) << 8
                | (o.rsp_idx as u64) << 16
        };
        // The pipeline's valid inputs are the requests in flight, oldest
        // (`ring[2]`) first (`plan_replays`).
        let mut ring = [NONE; 3];
        let mut k = 0;
        for i in (0..3).rev() {
            if st.ring[i].req_valid {
                ring[i] = plan.pending[k];
                k += 1;
            }
        }
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
        let mut pending = plan.pending;
        let mut np = plan.np;
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
            // The request of the cycle: round robin over the senders. A
            // warp whose slot a request in flight pins (the one answered
            // this cycle too) sends nothing; a store's eviction takes the
            // first way not pinned. A request not in the loop ends the skip
            // before its cycle.
            let mut req = NONE;
            let mut bits = (unitreq & !stall).rotate_right(rr as u32);
            let mut stop = false;
            while bits != 0 {
                let k = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let w = (rr + k) % 64;
                let (f, cnt) = (plan.first[w], plan.count[w]);
                let pick = (f..f + cnt).find(|&i| !plan.pinned(i, &pending[..np]));
                let id = match pick {
                    None if cnt == 1 => continue,
                    None => {
                        // No input (a request not in the loop), or a store
                        // whose victim is beyond its candidates.
                        stop = true;
                        break;
                    }
                    Some(id) => id,
                };
                if !plan.good[id as usize] {
                    stop = true;
                    break;
                }
                rr = super::next_rr(w, n);
                req = id;
                // Taken (before the oldest is answered, as in `unit_cycle`).
                unitreq &= !(1u64 << w);
                pending[np] = req;
                np += 1;
                break;
            }
            if stop {
                end = c - 1;
                break;
            }
            // The answer to the input of three cycles ago: a replay.
            let mut rsp = 0;
            if ring[2] != NONE {
                let id = pending[0];
                debug_assert_eq!(id, ring[2], "replay loop order");
                pending.copy_within(1.., 0);
                np -= 1;
                let r = &plan.inputs[id as usize];
                let w = r.req_warp as usize;
                unitreq |= 1u64 << w;
                replays += 1;
                match Op::from_bits(r.req_op) {
                    Op::Store => replays_store += 1,
                    Op::Evict => replays_evict += 1,
                    _ => {}
                }
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
        let input = |id: u8| {
            if id == NONE {
                quiet
            } else {
                plan.inputs[id as usize]
            }
        };
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
        st.port.pending.clear();
        for &id in &pending[..np] {
            let r = &plan.inputs[id as usize];
            let op = Op::from_bits(r.req_op);
            st.port.pending.push_back(Pending {
                warp: r.req_warp as usize,
                unit_warp: r.req_warp,
                op,
                tag: (),
                slot: if op.is_ordering() {
                    0
                } else {
                    r.req_line as usize
                },
            });
        }
        // A store or an eviction in flight pins its slot (`taken`, `respond`).
        for id in 0..plan.inputs.len() as u8 {
            if plan.slotted(id) {
                let pinned = plan.pinned(id, &pending[..np]);
                self.l1
                    .set_pinned(plan.inputs[id as usize].req_line as usize, pinned);
            }
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
        for &id in &pending[..np] {
            let w = plan.inputs[id as usize].req_warp as usize;
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
