//! One SM's cycle in the front end (`docs/trace-format.md`, "Front end";
//! `docs/microarch.md` §2, v2 interfaces and interface requirements 1-5).
//!
//! Inputs are decided before the unit's outputs of the cycle are seen (they
//! are registered, so nothing is lost): the domain's durability and acks,
//! `flush_ready`, the `inv_done` pulse, `drain_all`, then at most one request
//! of the acting warp. After the step, in this order: the flush handshake
//! (the flush reads the line as it is at the start of the cycle), the
//! request taken, the response (stores write the L1 now), the invalidation
//! handshake, and warps resuming once their stall bit is seen low.

use sbrp_iface::contract::ContractMonitor;
use sbrp_iface::port::{self, SmSide, UnitPort};
use sbrp_iface::{Op, PbOut, PbUnit, RspKind};
use sbrp_trace::{Cell, Event, OpRef, OrderingOp, Scope};

use super::config::DriverFault;
use super::domain::{PersistenceDomain, Taken, Tick};
use super::l1::L1;
use super::warps::{pick, Instr, WState, Warp};
use super::FrontEnd;

/// What the front end carries with a request to its response.
#[derive(Clone, Copy, Debug)]
pub(super) struct Tag {
    instr: Instr,
    seq: u32,
    /// For an acquire: the release it observed when it issued.
    matched: Option<(OpRef, Scope)>,
}

type Request = port::Request<Tag>;
type Pending = port::Pending<Tag>;

/// One SM: its unit, L1, persistence domain and warps.
pub(super) struct Sm {
    pub unit: Box<dyn PbUnit>,
    pub l1: L1,
    pub domain: Box<dyn PersistenceDomain>,
    pub warps: Vec<Warp>,
    /// Round-robin position.
    pub rr: usize,
    /// Warps not done, and of those, waiting at a barrier.
    pub live: usize,
    pub at_barrier: usize,
    pub drained: bool,
    /// The protocol: requests in flight, invalidation, `stall`.
    pub port: UnitPort<Tag>,
    pub tick: Tick,
    /// The SM side of the interface contract, checked every cycle.
    pub contract: ContractMonitor,
}

impl Sm {
    pub fn new(unit: Box<dyn PbUnit>, domain: Box<dyn PersistenceDomain>, l1_ways: u32) -> Sm {
        Sm {
            l1: L1::new(unit.params().lines, l1_ways),
            contract: ContractMonitor::with_latency(unit.params(), unit.rsp_latency())
                .checking_unit(),
            unit,
            domain,
            warps: vec![],
            rr: 0,
            live: 0,
            at_barrier: 0,
            drained: true,
            port: UnitPort::default(),
            tick: Tick::default(),
        }
    }

    /// Nothing of this SM is under way (requests, flushes, invalidation).
    pub fn quiet(&self) -> bool {
        self.port.quiet() && self.domain.in_flight() == 0 && self.l1.write_backs() == 0
    }
}

impl FrontEnd {
    pub(super) fn cycle_sm(&mut self, s: usize, now: u64) {
        let sm = &mut self.sms[s];
        // The persistence domain: durability, then this cycle's acks.
        let mut tick = std::mem::take(&mut sm.tick);
        sm.domain.tick(now, &mut tick);
        for &id in &tick.durable {
            self.sink.emit(&|| Event::Durable { id, cycle: now });
        }
        if !tick.durable.is_empty() || tick.ack.0 > 0 {
            self.last_progress = now;
        }
        let ack = tick.ack;
        sm.tick = tick;
        let flush_ready = sm.domain.flush_ready(now);
        // Kernel end: every warp of every SM has finished.
        let all_done = self.live == 0;
        self.release_barrier(s, now);

        let mut req = self.issue(s, now);
        let sm = &mut self.sms[s];
        if let Some(r) = &mut req {
            r.hook = match r.install {
                None => sm.l1.hook(r.slot),
                Some(_) => None,
            };
        }
        let mut inp = sm.port.inputs(ack, flush_ready, all_done, req.as_ref());
        if req.is_none() && self.cfg.driver_fault == DriverFault::EarlyRetry {
            // A deliberately bad driver: a warp sends its request in flight
            // again before the response (not recorded as taken).
            if let Some(p) = sm.port.pending.back() {
                inp.req_valid = true;
                inp.req_op = p.op as u8;
                inp.req_warp = p.unit_warp;
                inp.req_line = p.slot as u32;
            }
        }

        let out = sm.unit.step(&inp);
        self.summary.max_occupancy = self.summary.max_occupancy.max(out.count(sm.unit.params()));
        if let Some(v) = sm.contract.observe(&inp, &out) {
            self.fail(format!("SM {s}: {v}"));
        }
        port::after_step(&mut Side { fe: self, s, now }, &inp, &out, req, now);
        let sm = &mut self.sms[s];
        if let Some(v) = sm.domain.violation() {
            let v = format!("SM {s}: {v}");
            if !self.summary.check_failures.contains(&v) {
                self.summary.check_failures.push(v);
            }
        }
        let sm = &mut self.sms[s];
        if all_done && out.idle && sm.quiet() {
            sm.drained = true;
        }
    }

    /// A check failure: a breach of the protocol by either side; the run stops.
    fn fail(&mut self, msg: String) {
        self.summary.check_failures.push(msg);
    }

    /// Barrier release: every unfinished warp of the SM has arrived.
    fn release_barrier(&mut self, s: usize, now: u64) {
        let sm = &mut self.sms[s];
        if sm.live == 0 || sm.at_barrier != sm.live {
            return;
        }
        sm.at_barrier = 0;
        for w in &mut sm.warps {
            if w.state == WState::Barrier {
                w.state = WState::Ready;
                w.pc += 1;
                self.last_progress = now;
                if w.finish_if_at_end() {
                    sm.live -= 1;
                    self.live -= 1;
                }
            }
        }
    }

    /// The acting warp's op: done here, or a request to the unit. A warp is
    /// runnable when it could act now: not stalled, its acquire's flag
    /// visible, and its L1 line (or a victim way) not pinned by a request
    /// in flight (interface requirement 1 is kept by not issuing).
    fn issue(&mut self, s: usize, now: u64) -> Option<Request> {
        let flags = &self.flags;
        let lb = self.cfg.line_bytes;
        let sm = &self.sms[s];
        let (l1, stall) = (&sm.l1, sm.port.stall);
        let wi = pick(&sm.warps, sm.rr, |w| match w.state {
            WState::Ready if stall >> w.id.warp & 1 == 1 => false,
            WState::Ready => match w.op() {
                Instr::PAcq { flag, .. } => flags.visible(flag, w.id.sm, now).is_some(),
                Instr::StPm { addr, .. } => match l1.lookup(addr / lb) {
                    Some(slot) => !l1.pinned(slot),
                    None => l1.victim(addr / lb).is_some(),
                },
                Instr::LdPm { addr } => {
                    l1.lookup(addr / lb).is_some() || l1.victim(addr / lb).is_some()
                }
                _ => true,
            },
            WState::DelayUntil(t) => t <= now,
            _ => false,
        })?;
        let sm = &mut self.sms[s];
        sm.rr = (wi + 1) % sm.warps.len();
        if let WState::DelayUntil(_) = sm.warps[wi].state {
            sm.warps[wi].state = WState::Ready;
            self.advance(s, wi);
            return None;
        }
        let w = &sm.warps[wi];
        let tag = Tag {
            instr: w.op(),
            seq: w.pc as u32,
            matched: None,
        };
        let request = |op, slot, install, tag| Request {
            warp: wi,
            unit_warp: w.id.warp as u8,
            op,
            slot,
            install,
            hook: None,
            tag,
        };
        let req = |op, slot, install| Some(request(op, slot, install, tag));
        match w.op() {
            Instr::StPm { addr, .. } => {
                let line = addr / lb;
                match sm.l1.lookup(line) {
                    Some(slot) => req(Op::Store, slot, None),
                    None => {
                        let v = sm.l1.victim(line)?;
                        if sm.l1.is_dirty(v) {
                            req(Op::Evict, v, None)
                        } else {
                            req(Op::Store, v, Some(line))
                        }
                    }
                }
            }
            Instr::LdPm { addr } => {
                let line = addr / lb;
                let hit = match sm.l1.lookup(line) {
                    Some(slot) => {
                        sm.l1.touch(slot, now);
                        true
                    }
                    None => {
                        let v = sm.l1.victim(line)?;
                        if sm.l1.is_dirty(v) {
                            return req(Op::Evict, v, None);
                        }
                        sm.l1.install(v, line, now);
                        false
                    }
                };
                let op = OpRef {
                    warp: w.id,
                    seq: w.pc as u32,
                    inst: 0,
                };
                self.sink.emit(&|| Event::Load {
                    op,
                    addr,
                    hit,
                    cycle: now,
                });
                self.advance(s, wi);
                None
            }
            Instr::Volatile => {
                self.advance(s, wi);
                None
            }
            Instr::Delay { cycles } => {
                sm.warps[wi].state = WState::DelayUntil(now + cycles as u64);
                None
            }
            Instr::Barrier => {
                sm.warps[wi].state = WState::Barrier;
                sm.at_barrier += 1;
                None
            }
            Instr::OFence => req(Op::OFence, 0, None),
            Instr::DFence => req(Op::DFence, 0, None),
            Instr::PAcq { scope, flag } => {
                let op = if scope == Scope::Block {
                    Op::AcqBlock
                } else {
                    Op::AcqDevice
                };
                let matched = self
                    .flags
                    .visible(flag, w.id.sm, now)
                    .map(|r| (r.op, r.scope));
                Some(request(op, 0, None, Tag { matched, ..tag }))
            }
            Instr::PRel { scope, .. } => req(
                if scope == Scope::Block {
                    Op::RelBlock
                } else {
                    Op::RelDevice
                },
                0,
                None,
            ),
        }
    }

    /// A flush taken from the FIFO: a head flush reads the line's dirty
    /// words now (before this cycle's store responses write the L1); an
    /// eviction flush takes the words the L1 moved to its write-back buffer
    /// at the eviction's response, or, when that response arrives in this
    /// very cycle, reads them from the line itself.
    fn take_flush(&mut self, s: usize, out: &PbOut, now: u64) {
        let lb = self.cfg.line_bytes;
        let sm = &mut self.sms[s];
        let slot = out.flush_line as usize;
        let (tag, cells, read_cycle) = match out.flush_evict {
            true => match sm.l1.take_write_back(slot) {
                Some(wb) => (wb.tag, wb.cells, wb.read_cycle),
                None => {
                    let c = sm.l1.dirty_cells(slot);
                    sm.l1.written_back(slot);
                    (sm.l1.tag(slot), c, now)
                }
            },
            false => {
                let c = sm.l1.dirty_cells(slot);
                sm.l1.written_back(slot);
                (sm.l1.tag(slot), c, now)
            }
        };
        if cells.is_empty() {
            self.fail(format!(
                "SM {s}: cycle {now}: {} flush of L1 line {slot} has no written words",
                if out.flush_evict {
                    "an eviction"
                } else {
                    "a head"
                }
            ));
        }
        let id = self.next_flush;
        self.next_flush += 1;
        let line = tag * lb;
        let evict = out.flush_evict;
        self.sink.emit(&|| Event::Flush {
            id,
            sm: s as u32,
            line,
            cells: cells.clone(),
            evict,
            cycle: now,
            read_cycle,
        });
        self.sms[s].domain.accept(
            Taken {
                id,
                line,
                epoch: out.flush_epoch,
            },
            now,
        );
        self.summary.flushes += 1;
        self.summary.evict_flushes += evict as u64;
        self.last_progress = now;
    }

    /// The response to `p`, the oldest request in flight (its line still
    /// pinned).
    fn respond(&mut self, s: usize, p: &Pending, kind: RspKind, out: &PbOut, now: u64) {
        let sm = &mut self.sms[s];
        let id = sm.warps[p.warp].id;
        let op = OpRef {
            warp: id,
            seq: p.tag.seq,
            inst: 0,
        };
        match kind {
            RspKind::Replay => {
                sm.warps[p.warp].state = WState::Ready;
                self.summary.refused += 1;
            }
            RspKind::Wait => {
                sm.warps[p.warp].state = WState::WaitUnit {
                    since: now,
                    publish: None,
                    retry: true,
                };
                self.sink.emit(&|| Event::StallBegin {
                    warp: id,
                    cycle: now,
                });
                self.summary.waits += 1;
                self.last_progress = now;
            }
            RspKind::Performed | RspKind::Coalesced => {
                self.last_progress = now;
                match (p.op, p.tag.instr) {
                    (Op::Evict, _) => {
                        // The access retries next time the warp is picked.
                        if !sm.l1.evict(p.slot, now) {
                            let msg = format!(
                                "SM {s}: cycle {now}: eviction of L1 line {} while its previous eviction's words await their flush",
                                p.slot
                            );
                            self.fail(msg);
                        }
                        self.sms[s].warps[p.warp].state = WState::Ready;
                    }
                    (Op::Store, Instr::StPm { addr, value }) => {
                        sm.l1.set_hook(p.slot, out.rsp_idx);
                        sm.l1.touch(p.slot, now);
                        sm.l1.write(p.slot, addr, value);
                        self.summary.persists += 1;
                        self.sink.emit(&|| Event::Persist {
                            op,
                            cell: Cell { addr, value },
                            cycle: now,
                        });
                        self.sms[s].warps[p.warp].state = WState::Ready;
                        self.advance(s, p.warp);
                    }
                    _ => self.ordering_accepted(s, p, op, now),
                }
            }
        }
    }

    /// An ordering op the unit accepted: events, flag publication, ODM wait.
    fn ordering_accepted(&mut self, s: usize, p: &Pending, op: OpRef, now: u64) {
        let (kind, flag) = match p.tag.instr {
            Instr::OFence => (OrderingOp::OFence, None),
            Instr::DFence => (OrderingOp::DFence, None),
            Instr::PAcq { scope, flag } => (OrderingOp::PAcq(scope), Some(flag)),
            Instr::PRel { scope, flag } => (OrderingOp::PRel(scope), Some(flag)),
            _ => return,
        };
        self.sink.emit(&|| Event::Ordering {
            op,
            kind,
            flag,
            cycle: now,
        });
        let nsms = self.sms.len();
        match p.tag.instr {
            Instr::PAcq { scope, .. } => {
                if let Some((rel, rel_scope)) = p.tag.matched {
                    self.sink.emit(&|| Event::Match {
                        acq: op,
                        acq_scope: scope,
                        rel,
                        rel_scope,
                        cycle: now,
                    });
                }
            }
            Instr::PRel {
                scope: Scope::Block,
                flag,
            } => {
                let remote = self.cfg.remote_visibility as u64;
                self.flags
                    .publish(flag, op, Scope::Block, nsms, now, remote);
            }
            _ => {}
        }
        if p.op.stalls_in_odm() {
            // The stall bit rose with the response; the op completes when it falls.
            let publish = match p.tag.instr {
                Instr::PRel {
                    scope: Scope::Device,
                    flag,
                } => Some((flag, op.seq)),
                _ => None,
            };
            self.sms[s].warps[p.warp].state = WState::WaitUnit {
                since: now,
                publish,
                retry: false,
            };
            self.sink.emit(&|| Event::StallBegin {
                warp: op.warp,
                cycle: now,
            });
        } else {
            self.sms[s].warps[p.warp].state = WState::Ready;
            self.sink.emit(&|| Event::Retire { op, cycle: now });
            self.advance(s, p.warp);
        }
    }

    /// Warps waiting on the unit resume once their stall bit is seen low.
    fn resume_waiting(&mut self, s: usize, stall: u64, now: u64) {
        let nsms = self.sms.len();
        for wi in 0..self.sms[s].warps.len() {
            let w = &mut self.sms[s].warps[wi];
            let WState::WaitUnit {
                since,
                publish,
                retry,
            } = w.state
            else {
                continue;
            };
            if now <= since || stall >> w.id.warp & 1 == 1 {
                continue;
            }
            w.state = WState::Ready;
            let id = w.id;
            let seq = w.pc as u32;
            self.sink.emit(&|| Event::StallEnd {
                warp: id,
                cycle: now,
            });
            if !retry {
                let op = OpRef {
                    warp: id,
                    seq,
                    inst: 0,
                };
                self.sink.emit(&|| Event::Retire { op, cycle: now });
            }
            if let Some((flag, seq)) = publish {
                let op = OpRef {
                    warp: id,
                    seq,
                    inst: 0,
                };
                let remote = self.cfg.remote_visibility as u64;
                self.flags
                    .publish(flag, op, Scope::Device, nsms, now, remote);
            }
            if retry {
                self.last_progress = now;
            } else {
                self.advance(s, wi);
            }
        }
    }

    fn advance(&mut self, s: usize, wi: usize) {
        let sm = &mut self.sms[s];
        let w = &mut sm.warps[wi];
        w.pc += 1;
        if w.finish_if_at_end() {
            sm.live -= 1;
            self.live -= 1;
        }
        self.last_progress = self.now;
    }
}

/// The front end's SM `s` as the port's driver side.
struct Side<'a> {
    fe: &'a mut FrontEnd,
    s: usize,
    now: u64,
}

impl SmSide for Side<'_> {
    type Tag = Tag;
    fn port(&mut self) -> &mut UnitPort<Tag> {
        &mut self.fe.sms[self.s].port
    }
    fn fail(&mut self, msg: String) {
        let s = self.s;
        self.fe.fail(format!("SM {s}: {msg}"));
    }
    fn flush(&mut self, out: &PbOut) {
        self.fe.take_flush(self.s, out, self.now);
    }
    fn line_pinned(&self, slot: usize) -> bool {
        self.fe.sms[self.s].l1.pinned(slot)
    }
    fn set_line_pinned(&mut self, slot: usize, pinned: bool) {
        let l1 = &mut self.fe.sms[self.s].l1;
        if pinned {
            l1.pin(slot);
        } else {
            // An invalidation that passed meanwhile drops a clean line now.
            l1.unpin(slot);
        }
    }
    fn taken(&mut self, r: &Request) {
        self.fe.summary.requests += 1;
        let sm = &mut self.fe.sms[self.s];
        if let Some(line) = r.install {
            sm.l1.install(r.slot, line, self.now);
        }
        sm.warps[r.warp].state = WState::InFlight;
    }
    fn respond(&mut self, p: &Pending, kind: RspKind, out: &PbOut) {
        self.fe.respond(self.s, p, kind, out, self.now);
    }
    fn inv_delay(&mut self) -> u64 {
        self.fe.sms[self.s].domain.inv_delay()
    }
    fn invalidate(&mut self) {
        self.fe.sms[self.s].l1.invalidate_clean();
        self.fe.last_progress = self.now;
    }
    fn resume(&mut self, stall: u64) {
        self.fe.resume_waiting(self.s, stall, self.now);
    }
}
