//! The SM's side of the persist buffer unit under SBRP (`docs/microarch.md`
//! §2 and interface requirements 1-5; `docs/model.md`, "SBRP"): one request
//! per cycle from the warps waiting for the unit, the L1 hook with each store,
//! the flush FIFO drained into the memory system while the write-back path
//! has room, acknowledgements as counts per ACTR epoch, the invalidation
//! handshake, and warps resuming when their `stall` bit falls.
//!
//! The unit is stepped only while something is under way ([`UnitState::busy`]),
//! and a replay loop against a frozen unit is skipped (`skip.rs`).

use std::collections::VecDeque;

use sbrp_iface::{Op, PbIn, PbOut, RspKind};
use sbrp_trace::program::Instr;
use sbrp_trace::{Cell, Event, OrderingOp, Scope};

use super::events::EV_ACK_FLUSH;
use super::l1::{LineMap, Lookup};
use super::warp::{Cause, Phase, WState};
use super::{Ctx, Fault, Sm};
use crate::mem::{Access, MemReq};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Inv {
    #[default]
    Idle,
    Due(u64),
    WaitFall,
}

/// A request taken by the unit, awaiting its response (in order).
#[derive(Clone, Copy, Debug)]
pub(super) struct Pending {
    pub(super) warp: usize,
    pub(super) op: Op,
    pub(super) slot: usize,
}

/// A request chosen for this cycle.
#[derive(Clone, Copy, Debug)]
pub(super) struct Request {
    pub(super) warp: usize,
    pub(super) op: Op,
    pub(super) slot: usize,
    /// A store miss installs its line when the request is taken.
    pub(super) install: Option<u64>,
}

/// An evicted line's tag, dirty sectors and written words.
type Evicted = (u64, u8, Vec<(u64, u64)>);

#[derive(Default)]
pub struct UnitState {
    /// The unit must be stepped next cycle.
    pub busy: bool,
    pub(super) pending: VecDeque<Pending>,
    /// Acknowledgements to present: (epoch, count), oldest first.
    pub(super) acks: VecDeque<(u8, u32)>,
    pub(super) inv: Inv,
    pub(super) inv_pulse: bool,
    pub stall: u64,
    pub(super) last_idle: bool,
    /// The outputs of the last step, to see when the unit stands still.
    pub(super) prev_out: Option<PbOut>,
    /// The unit's state key at the previous quiet, unchanged cycle, and how
    /// many such cycles in a row; a scratch buffer.
    pub(super) still_key: Vec<u64>,
    pub(super) still_n: u32,
    pub(super) key_buf: Vec<u64>,
    /// Words of evicted lines awaiting their eviction flush, by L1 slot.
    pub(super) wb: LineMap<VecDeque<Evicted>>,
    /// Flushes taken and not acknowledged.
    pub(super) flush_out: u32,
    pub(super) req_rr: usize,
    /// Breaches of the interface seen (a run with any fails).
    pub failures: Vec<String>,
    /// The inputs of the last three steps, newest first: the unit's
    /// request pipeline holds them.
    pub(super) ring: [PbIn; 3],
    /// The next cycle to visit after a skip of a replay loop (0: none).
    pub skip_to: u64,
    /// Scratch: a replay loop's inputs (`skip_plan.rs`).
    pub(super) skip_plan: super::skip_plan::Plan,
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
            "unit idle {}, requests in flight {}, acks to present {}, flushes unacknowledged {}, L1 invalidation {}",
            self.last_idle,
            self.pending.len(),
            self.acks.len(),
            self.flush_out,
            match self.inv {
                Inv::Idle => "none".to_string(),
                Inv::Due(t) => format!("due at cycle {t}"),
                Inv::WaitFall => "waiting for the request to fall".to_string(),
            }
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
pub(super) fn ordering_op(cx: &Ctx, i: &Instr) -> Op {
    let dev = |s: Scope| {
        cx.fault != Fault::DropScope && (s == Scope::Device || cx.cfg.model.persist().promotes())
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

    /// Warp `w`'s current ordering op as the unit's opcode, decided at its
    /// first request and kept for its replays.
    pub(super) fn order_op(&mut self, cx: &Ctx, w: usize) -> Op {
        match self.warps[w].order_op {
            Some(op) => op,
            None => {
                let op = ordering_op(cx, self.warps[w].op());
                self.warps[w].order_op = Some(op);
                op
            }
        }
    }

    /// The unit's inputs in a cycle without an acknowledgement, an
    /// invalidation answer or a request.
    pub(super) fn quiet_inputs(&self, cx: &Ctx) -> PbIn {
        PbIn {
            flush_ready: self.unit_state.flush_out < cx.cfg.l1.miss_queue,
            drain_all: self.draining && self.live_warps == 0,
            ..PbIn::idle()
        }
    }

    /// Request `r` at the unit's port: a store or an eviction of a line the
    /// L1 holds carries the line's hook (interface requirement 1).
    pub(super) fn request_input(&self, cx: &Ctx, r: &Request) -> PbIn {
        let hook = match r.op {
            Op::Store | Op::Evict if r.install.is_none() => self.l1.lines[r.slot].hook,
            _ => None,
        };
        PbIn {
            req_valid: true,
            req_op: r.op as u8,
            req_warp: r.warp as u8,
            req_line: r.slot as u32,
            req_pbv: hook.is_some(),
            req_pbidx: hook.unwrap_or(0),
            ..self.quiet_inputs(cx)
        }
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
            return Some(Request {
                warp: w,
                op: self.order_op(cx, w),
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
        let mut inp = self.quiet_inputs(cx);
        if let Some((e, c)) = self.unit_state.acks.front_mut() {
            let n = (*c).min(sbrp_iface::consts::ACKS_MAX);
            inp.ack_count = n as u8;
            inp.ack_epoch = *e;
            *c -= n;
            if *c == 0 {
                self.unit_state.acks.pop_front();
            }
        }
        inp.inv_done = std::mem::take(&mut self.unit_state.inv_pulse);

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
                self.unit_state.req_rr = super::next_rr(w, n);
                req = Some(r);
                break;
            }
        }
        if let Some(r) = req {
            inp = PbIn {
                ack_count: inp.ack_count,
                ack_epoch: inp.ack_epoch,
                inv_done: inp.inv_done,
                ..self.request_input(cx, &r)
            };
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
        if self.unit_state.busy && cx.skip {
            self.try_skip(cx);
        }
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
        self.pm_last = self.pm_last.max(d.at);
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

    /// The record's `Ordering` event of warp `w`'s current instruction
    /// (SBRP: when the unit accepts it; epoch and GPM: when its steps start).
    pub(super) fn record_ordering(&mut self, cx: &mut Ctx, w: usize, now: u64) {
        if self.rec.is_none() {
            return;
        }
        let instr = self.warps[w].op().clone();
        let kind = match &instr {
            Instr::OFence | Instr::Bar => Some(OrderingOp::OFence),
            Instr::DFence | Instr::Fence(_) => Some(OrderingOp::DFence),
            Instr::PAcq { scope, .. } => Some(OrderingOp::PAcq(self.asked_scope(cx, *scope))),
            Instr::PRel { scope, .. } => Some(OrderingOp::PRel(self.asked_scope(cx, *scope))),
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
    }

    fn ordering_accepted(&mut self, cx: &mut Ctx, w: usize, op: Op, now: u64) {
        self.record_ordering(cx, w, now);
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
