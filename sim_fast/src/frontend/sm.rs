//! One SM's cycle in the front end (`docs/trace-format.md`, "Front end"):
//! acknowledgement, barrier release, the acting warp's op or request, the
//! unit's step, flush, response, `inv_pm` and stalled warps resuming, in
//! that order within the cycle.

use sbrp_iface::{Op, PbIn, PbOut, PbUnit};
use sbrp_trace::{Cell, Event, OpRef, OrderingOp, Scope};

use super::domain::PersistenceDomain;
use super::l1::L1;
use super::warps::{pick, Instr, WState, Warp};
use super::FrontEnd;

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
    pub actr_peak: u32,
}

/// A request of the acting warp to the unit.
#[derive(Clone, Copy, Debug)]
struct Request {
    warp: usize,
    op: Op,
    /// L1 slot of a store or eviction.
    slot: usize,
    /// Slot to install the store's line in (an L1 miss).
    install: Option<usize>,
}

impl FrontEnd {
    pub(super) fn cycle_sm(&mut self, s: usize, now: u64) {
        let mut inp = PbIn::idle();
        // Acknowledgement due this cycle.
        if let Some(id) = self.sms[s].domain.ack(now) {
            inp.ack = true;
            self.last_progress = now;
            self.sink.emit(&|| Event::Durable { id, cycle: now });
        }
        // Kernel end: every warp of every SM has finished.
        let all_done = self.live == 0;
        inp.drain_all = all_done;
        self.release_barrier(s, now);

        let req = self.issue(s, now);
        if let Some(r) = req {
            inp.req_valid = true;
            inp.req_op = r.op as u8;
            inp.req_warp = self.sms[s].warps[r.warp].id.warp as u8;
            inp.req_line = r.slot as u32;
            self.summary.requests += 1;
        }

        let sm = &mut self.sms[s];
        let out = sm.unit.step(&inp);
        sm.actr_peak = sm.actr_peak.max(out.obs_actr);
        self.summary.max_occupancy = self.summary.max_occupancy.max(out.count(sm.unit.params()));

        // Flush first: it carries the line's data as it is before this cycle's store.
        if out.flush_valid {
            self.flush(s, out.flush_line as usize, out.flush_evict, now);
        }
        if let Some(r) = req {
            self.respond(s, r, &out, now);
        }
        // After this cycle's store: a line it dirtied is not invalidated.
        if out.inv_pm {
            self.sms[s].l1.invalidate_clean();
        }
        self.resume_waiting(s, out.stall, now);
        let sm = &mut self.sms[s];
        if all_done && out.idle && sm.domain.in_flight() == 0 {
            sm.drained = true;
        }
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

    /// The acting warp's op: done here, or a request to the unit.
    fn issue(&mut self, s: usize, now: u64) -> Option<Request> {
        let flags = &self.flags;
        let sm = &self.sms[s];
        let wi = pick(&sm.warps, sm.rr, |w| match w.state {
            WState::Ready => match w.op() {
                Instr::PAcq { flag, .. } => flags.visible(flag, w.id.sm, now).is_some(),
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
        let req = |op, slot, install| {
            Some(Request {
                warp: wi,
                op,
                slot,
                install,
            })
        };
        match w.op() {
            Instr::StPm { addr, .. } => {
                let line = addr / self.cfg.line_bytes;
                match sm.l1.lookup(line) {
                    Some(slot) => req(Op::Store, slot, None),
                    None => {
                        let v = sm.l1.victim(line);
                        if sm.l1.is_dirty(v) {
                            req(Op::Evict, v, None)
                        } else {
                            req(Op::Store, v, Some(v))
                        }
                    }
                }
            }
            Instr::LdPm { addr } => {
                let line = addr / self.cfg.line_bytes;
                let hit = match sm.l1.lookup(line) {
                    Some(slot) => {
                        sm.l1.touch(slot, now);
                        true
                    }
                    None => {
                        let v = sm.l1.victim(line);
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
            Instr::PAcq { scope, .. } => req(
                if scope == Scope::Block {
                    Op::AcqBlock
                } else {
                    Op::AcqDevice
                },
                0,
                None,
            ),
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

    /// A flush of L1 slot `slot`: its dirty words go to the persistence domain.
    fn flush(&mut self, s: usize, slot: usize, evict: bool, now: u64) {
        let id = self.next_flush;
        self.next_flush += 1;
        let sm = &mut self.sms[s];
        let line = sm.l1.tag(slot) * self.cfg.line_bytes;
        let l1 = &sm.l1;
        self.sink.emit(&|| Event::Flush {
            id,
            sm: s as u32,
            line,
            cells: l1.dirty_cells(slot),
            evict,
            cycle: now,
        });
        sm.l1.written_back(slot, evict);
        sm.domain.accept(id, now);
        self.summary.flushes += 1;
        self.summary.evict_flushes += evict as u64;
        self.last_progress = now;
    }

    /// The unit's answer to the acting warp's request.
    fn respond(&mut self, s: usize, r: Request, out: &PbOut, now: u64) {
        let sm = &mut self.sms[s];
        let w = &mut sm.warps[r.warp];
        let op = OpRef {
            warp: w.id,
            seq: w.pc as u32,
        };
        if out.req_wait {
            w.state = WState::WaitUnit {
                since: now,
                publish: None,
                retry: true,
            };
            self.sink.emit(&|| Event::StallBegin {
                warp: op.warp,
                cycle: now,
            });
            self.summary.waits += 1;
            return;
        }
        if !out.req_ready {
            self.summary.refused += 1;
            return;
        }
        self.last_progress = now;
        let instr = w.op();
        match (r.op, instr) {
            (Op::Evict, _) => {
                // The victim is gone (flushed by this request, or clean); the
                // warp's access retries next time it is picked.
                sm.l1.invalidate(r.slot);
            }
            (Op::Store, Instr::StPm { addr, value }) => {
                if let Some(v) = r.install {
                    sm.l1.install(v, addr / self.cfg.line_bytes, now);
                }
                sm.l1.touch(r.slot, now);
                sm.l1.write(r.slot, addr, value);
                self.summary.persists += 1;
                self.sink.emit(&|| Event::Persist {
                    op,
                    cell: Cell { addr, value },
                    cycle: now,
                });
                self.advance(s, r.warp);
            }
            _ => self.ordering_accepted(s, r, op, instr, now),
        }
    }

    /// An ordering op the unit accepted: events, flag publication, ODM wait.
    fn ordering_accepted(&mut self, s: usize, r: Request, op: OpRef, instr: Instr, now: u64) {
        let (kind, flag) = match instr {
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
        match instr {
            Instr::PAcq { scope, flag } => {
                if let Some(rel) = self.flags.visible(flag, op.warp.sm, now) {
                    self.sink.emit(&|| Event::Match {
                        acq: op,
                        acq_scope: scope,
                        rel: rel.op,
                        rel_scope: rel.scope,
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
        if r.op.stalls_in_odm() {
            let publish = match instr {
                Instr::PRel {
                    scope: Scope::Device,
                    flag,
                } => Some((flag, op.seq)),
                _ => None,
            };
            self.sms[s].warps[r.warp].state = WState::WaitUnit {
                since: now,
                publish,
                retry: false,
            };
            self.sink.emit(&|| Event::StallBegin {
                warp: op.warp,
                cycle: now,
            });
        } else {
            self.advance(s, r.warp);
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
            self.sink.emit(&|| Event::StallEnd {
                warp: id,
                cycle: now,
            });
            if let Some((flag, seq)) = publish {
                let op = OpRef { warp: id, seq };
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
