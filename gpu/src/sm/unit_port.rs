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

use sbrp_iface::port::{self, AckQueue, SmSide, UnitPort};
use sbrp_iface::{Op, PbIn, PbOut, RspKind};
use sbrp_trace::program::Instr;
use sbrp_trace::{Cell, Event, OrderingOp, Scope};

use super::events::EV_ACK_FLUSH;
use super::l1::{LineMap, Lookup};
use super::warp::{Cause, Phase, WState};
use super::{Ctx, Fault, Sm};
use crate::mem::{Access, MemReq};

/// A request to the unit and one taken, awaiting its response (the GPU
/// model carries nothing of its own with them).
pub(super) type Request = port::Request<()>;
pub(super) type Pending = port::Pending<()>;

/// An evicted line's tag, dirty sectors and written words.
type Evicted = (u64, u8, Vec<(u64, u64)>);

#[derive(Default)]
pub struct UnitState {
    /// The unit must be stepped next cycle.
    pub busy: bool,
    /// The protocol: requests in flight, invalidation, `stall`.
    pub(super) port: UnitPort<()>,
    /// Acknowledgements to present.
    pub(super) acks: AckQueue,
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
        self.acks.push(epoch);
        self.busy = true;
    }

    /// `stall` as last seen.
    pub fn stall(&self) -> u64 {
        self.port.stall
    }

    pub fn describe(&self) -> String {
        format!(
            "unit idle {}, requests in flight {}, acks to present {}, flushes unacknowledged {}, L1 invalidation {}",
            self.last_idle,
            self.port.pending.len(),
            self.acks.len(),
            self.flush_out,
            self.port.describe_inv()
        )
    }

    /// Nothing under way and the unit reports idle.
    pub fn idle(&self) -> bool {
        self.last_idle && self.port.quiet() && self.acks.is_empty() && self.flush_out == 0
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

    /// Request `r` at the unit's port, its hook filled in: a store or an
    /// eviction of a line the L1 holds carries the line's hook (interface
    /// requirement 2).
    pub(super) fn request_input(&self, cx: &Ctx, r: &mut Request) -> PbIn {
        r.hook = self.hook_of(r);
        let mut inp = self.quiet_inputs(cx);
        port::request_fields(&mut inp, r);
        inp
    }

    /// The hook request `r` carries.
    fn hook_of(&self, r: &Request) -> Option<u32> {
        match r.op {
            Op::Store | Op::Evict if r.install.is_none() => self.l1.lines[r.slot].hook,
            _ => None,
        }
    }

    /// Warp `w`'s request (its hook is filled in when it is presented).
    pub(super) fn request(w: usize, op: Op, slot: usize, install: Option<u64>) -> Request {
        Request {
            warp: w,
            unit_warp: w as u8,
            op,
            slot,
            install,
            hook: None,
            tag: (),
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
            return Some(Self::request(w, Op::Evict, v, None));
        }
        if warp.phase != Phase::Lines {
            let op = self.order_op(cx, w);
            return Some(Self::request(w, op, 0, None));
        }
        let line = warp.acc[warp.acc_i].line;
        let req = |slot, install| Self::request(w, Op::Store, slot, install);
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
                return Some(Self::request(w, Op::Evict, v, None));
            }
            self.write_back(cx, v, false);
        }
        Some(req(v, Some(line)))
    }

    /// One cycle of the unit and its interfaces.
    pub(super) fn unit_cycle(&mut self, cx: &mut Ctx) {
        // One request: the next warp waiting for the unit, round robin.
        let n = self.warps.len();
        let mut req = None;
        let rr = self.unit_state.req_rr;
        let mut bits = (self.masks.unitreq & !self.unit_state.stall()).rotate_right(rr as u32);
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
        let quiet = self.quiet_inputs(cx);
        if let Some(r) = &mut req {
            r.hook = self.hook_of(r);
        }
        let st = &mut self.unit_state;
        let ack = st.acks.present();
        let inp = st
            .port
            .inputs(ack, quiet.flush_ready, quiet.drain_all, req.as_ref());
        let unit = self.unit.as_mut().expect("SBRP SM has a unit");
        let out = unit.step(&inp);
        self.stats.unit_steps += 1;
        let now = cx.now;
        let mut side = Side {
            sm: self,
            cx,
            idle: out.idle,
        };
        port::after_step(&mut side, &inp, &out, req, now);
        self.stats.actr_peak = self.stats.actr_peak.max(self.unit_state.port.actr_peak);
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
        if quiet_in && st.port.pending.is_empty() && st.prev_out == Some(out) {
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
        self.unit_state.busy = !st.port.quiet()
            || !st.acks.is_empty()
            || requesting
            || !still && (!out.idle || stalled);
        let st = &mut self.unit_state;
        st.ring = [inp, st.ring[0], st.ring[1]];
        st.skip_to = 0;
        if self.unit_state.busy && cx.skip {
            self.try_skip(cx);
        }
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

    /// The response to request `p` (its line still pinned).
    fn respond(&mut self, cx: &mut Ctx, p: &Pending, kind: RspKind, out: &PbOut) {
        let now = cx.now;
        let w = p.warp;
        match kind {
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
    #[inline]
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

/// The GPU model's SM as the port's driver side.
struct Side<'s, 'c, 'a> {
    sm: &'s mut Sm,
    cx: &'c mut Ctx<'a>,
    /// The step's `idle`, seen with its `stall`.
    idle: bool,
}

impl SmSide for Side<'_, '_, '_> {
    type Tag = ();
    #[inline]
    fn port(&mut self) -> &mut UnitPort<()> {
        &mut self.sm.unit_state.port
    }
    #[inline]
    fn fail(&mut self, msg: String) {
        let id = self.sm.id;
        self.sm.unit_state.failures.push(format!("SM {id}: {msg}"));
    }
    #[inline]
    fn flush(&mut self, out: &PbOut) {
        self.sm.take_flush(self.cx, out);
    }
    #[inline]
    fn line_pinned(&self, slot: usize) -> bool {
        self.sm.l1.lines[slot].pinned
    }
    #[inline]
    fn set_line_pinned(&mut self, slot: usize, pinned: bool) {
        self.sm.l1.set_pinned(slot, pinned);
    }
    #[inline]
    fn taken(&mut self, r: &Request) {
        if let (Op::Store, Some(line)) = (r.op, r.install) {
            self.sm.l1.install(r.slot, line, true);
        }
        self.sm.set_state(r.warp, WState::InFlight);
    }
    #[inline]
    fn respond(&mut self, p: &Pending, kind: RspKind, out: &PbOut) {
        self.sm.respond(self.cx, p, kind, out);
    }
    #[inline]
    fn inv_delay(&mut self) -> u64 {
        1
    }
    #[inline]
    fn invalidate(&mut self) {
        // The artifact's dFence keeps the L1: only an acquire (or a
        // threadfence) waiting for this invalidation drops lines.
        let keep = self.cx.cfg.artifact.dfence_keeps_l1
            && !self.sm.warps.iter().any(|w| {
                matches!(w.state(), WState::WaitStall { retry: false, .. })
                    && w.pc < w.code.len()
                    && matches!(w.op(), Instr::PAcq { .. } | Instr::Fence(_))
            });
        if !keep {
            self.sm.l1.invalidate_pm();
        }
    }
    #[inline]
    fn resume(&mut self, stall: u64) {
        self.sm.unit_state.last_idle = self.idle;
        self.sm.resume_waiting(stall, self.cx.now);
    }
}
