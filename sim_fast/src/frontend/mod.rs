//! SM front end (`docs/trace-format.md`, "Front end"): turns warp traces into
//! each SM's per-cycle requests to its persist buffer unit, and reports what
//! happened as events.
//!
//! This module only orchestrates one cycle; the parts are: `warps`
//! (programs, states, round robin), `l1` (tags, LRU, dirty words), `flags`
//! (release visibility), `domain` (the persistence domain), `events` (where
//! events go) and `config`. The unit of each SM is any [`PbUnit`], so the same
//! front end drives the model, the RTL, or both in lockstep. Checking a
//! trace's expectations is not done here: `sbrp_trace::evaluate` reads the
//! execution record.

mod config;
mod domain;
mod events;
mod flags;
mod l1;
mod warps;

pub use config::{ConfigError, ConfigProblem, FrontEndConfig};
pub use domain::{FixedLatency, PersistenceDomain};
pub use events::{EventSink, NullSink, RecordingSink};
pub use flags::{Flags, Release};
pub use l1::L1;

use sbrp_iface::{Op, PbIn, PbOut, PbParams, PbUnit};
use sbrp_trace::{Cell, Event, Execution, OpRef, OrderingOp, RunEnd, Scope, Trace, WarpId};

use warps::{pick, Instr, WState, Warp};

/// Result of a run.
#[derive(Clone, Debug, Default)]
pub struct RunSummary {
    pub cycles: u64,
    pub finished: bool,
    /// The deadlock report: the waiting warps and why they wait.
    pub deadlock: Option<String>,
    pub stopped: bool,
    pub persists: u64,
    pub flushes: u64,
    pub evict_flushes: u64,
    pub requests: u64,
    pub refused: u64,
    pub waits: u64,
    pub max_occupancy: u32,
}

/// A trace the front end cannot run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    #[error("{file}: the trace uses {needs} SMs, the front end has {has}")]
    TooManySms { file: String, needs: u32, has: u32 },
    #[error("{file}:{line}: warp {warp} needs {needs} warps, the unit has {has}")]
    TooManyWarps {
        file: String,
        line: usize,
        warp: WarpId,
        needs: u32,
        has: u32,
    },
}

/// Checks that a trace's warps fit units of parameters `p`; the error names
/// the file and the line of the first op of the widest warp.
pub fn check_fits(t: &Trace, p: &PbParams) -> Result<(), LoadError> {
    match t.widest_warp() {
        Some((warp, line)) if warp.warp >= p.warps => Err(LoadError::TooManyWarps {
            file: t.file.clone(),
            line,
            warp,
            needs: warp.warp + 1,
            has: p.warps,
        }),
        _ => Ok(()),
    }
}

/// One SM: its unit, L1, persistence domain and warps.
struct Sm {
    unit: Box<dyn PbUnit>,
    l1: L1,
    domain: Box<dyn PersistenceDomain>,
    warps: Vec<Warp>,
    /// Round-robin position.
    rr: usize,
    /// Warps not done, and of those, waiting at a barrier.
    live: usize,
    at_barrier: usize,
    drained: bool,
    actr_peak: u32,
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

/// The multi-SM front end.
pub struct FrontEnd {
    pub cfg: FrontEndConfig,
    sms: Vec<Sm>,
    flags: Flags,
    sink: Box<dyn EventSink>,
    pub now: u64,
    next_flush: u64,
    /// Warps not done, over all SMs.
    live: usize,
    pub summary: RunSummary,
    last_progress: u64,
}

impl FrontEnd {
    /// One front end over `units` (one per SM), each with a fixed-latency
    /// persistence domain, recording every event.
    pub fn new(units: Vec<Box<dyn PbUnit>>, cfg: FrontEndConfig) -> FrontEnd {
        let domains = units
            .iter()
            .map(|_| Box::new(FixedLatency::new(cfg.pm_latency)) as Box<dyn PersistenceDomain>)
            .collect();
        FrontEnd::with_domains(units, domains, cfg)
    }

    /// One front end over `units` and their persistence `domains` (one each).
    pub fn with_domains(
        units: Vec<Box<dyn PbUnit>>,
        domains: Vec<Box<dyn PersistenceDomain>>,
        cfg: FrontEndConfig,
    ) -> FrontEnd {
        let sms = units
            .into_iter()
            .zip(domains)
            .map(|(unit, domain)| Sm {
                l1: L1::new(unit.params().lines, cfg.l1_ways),
                unit,
                domain,
                warps: vec![],
                rr: 0,
                live: 0,
                at_barrier: 0,
                drained: true,
                actr_peak: 0,
            })
            .collect();
        FrontEnd {
            cfg,
            sms,
            flags: Flags::default(),
            sink: Box::new(RecordingSink::default()),
            now: 0,
            next_flush: 0,
            live: 0,
            summary: RunSummary::default(),
            last_progress: 0,
        }
    }

    /// Sends events to `sink` from now on (e.g. [`NullSink`] for long runs).
    pub fn set_sink(&mut self, sink: Box<dyn EventSink>) {
        self.sink = sink;
    }

    pub fn sms(&self) -> usize {
        self.sms.len()
    }

    /// Resets every unit (one cycle of `rst`).
    pub fn reset(&mut self) {
        for sm in &mut self.sms {
            sm.unit.step(&PbIn::reset());
        }
        self.now += 1;
    }

    /// Loads the programs of a trace (replacing finished ones), flags and
    /// warps interned. Units, L1s and in-flight flushes carry over, so traces
    /// can be chained.
    pub fn load(&mut self, t: &Trace) -> Result<(), LoadError> {
        if t.sms() as usize > self.sms.len() {
            return Err(LoadError::TooManySms {
                file: t.file.clone(),
                needs: t.sms(),
                has: self.sms.len() as u32,
            });
        }
        if let Some(sm) = self.sms.first() {
            check_fits(t, sm.unit.params())?;
        }
        self.flags.clear();
        for sm in &mut self.sms {
            sm.warps.clear();
            sm.drained = false;
            sm.live = 0;
            sm.at_barrier = 0;
        }
        self.live = 0;
        for (id, prog) in &t.programs {
            let prog: Vec<Instr> = prog
                .iter()
                .map(|op| Instr::of(op, &mut self.flags))
                .collect();
            let mut w = Warp::new(*id, prog);
            let sm = &mut self.sms[id.sm as usize];
            if !w.finish_if_at_end() {
                sm.live += 1;
                self.live += 1;
            }
            sm.warps.push(w);
        }
        self.last_progress = self.now;
        Ok(())
    }

    /// True when every warp is done, every unit idle and no flush in flight.
    pub fn finished(&self) -> bool {
        self.sms.iter().all(|s| s.drained)
    }

    /// Largest ACTR seen on any SM.
    pub fn max_actr(&self) -> u32 {
        self.sms.iter().map(|s| s.actr_peak).max().unwrap_or(0)
    }

    /// Access to SM `s`'s unit (for observation by testbenches).
    pub fn unit(&self, s: usize) -> &dyn PbUnit {
        self.sms[s].unit.as_ref()
    }

    /// The execution record of the run so far (takes the recorded events).
    pub fn execution(&mut self) -> Execution {
        let mut ex = Execution::new(self.cfg.line_bytes);
        ex.warps = self
            .sms
            .iter()
            .flat_map(|s| s.warps.iter().map(|w| w.id))
            .collect();
        ex.flags = self.flags.names().to_vec();
        ex.actr_peak = self.sms.iter().map(|s| s.actr_peak).collect();
        ex.events = self.sink.take();
        ex.end = if self.summary.finished {
            RunEnd::Finished
        } else if let Some(d) = &self.summary.deadlock {
            RunEnd::Deadlock { report: d.clone() }
        } else {
            RunEnd::Cut
        };
        ex.cycles = self.now;
        ex
    }

    /// Runs one cycle of every SM.
    pub fn cycle(&mut self) {
        let now = self.now;
        for s in 0..self.sms.len() {
            self.cycle_sm(s, now);
        }
        self.check_deadlock(now);
        self.now += 1;
        self.summary.cycles = self.now;
    }

    /// Runs until the trace is finished, `max_cycles` have passed, a deadlock is
    /// found, or `keep_going` returns false.
    pub fn run(&mut self, max_cycles: u64, mut keep_going: impl FnMut(&FrontEnd) -> bool) {
        let end = self.now + max_cycles;
        while self.now < end {
            if self.finished() {
                self.summary.finished = true;
                return;
            }
            if self.summary.deadlock.is_some() {
                return;
            }
            self.cycle();
            if !keep_going(self) {
                self.summary.stopped = true;
                return;
            }
        }
        self.summary.finished = self.finished();
    }

    fn cycle_sm(&mut self, s: usize, now: u64) {
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

    /// Progress still to come without any warp acting: a flush awaiting its
    /// acknowledgement, a warp computing a delay, a release not yet visible.
    fn progress_pending(&self, now: u64) -> bool {
        self.sms.iter().any(|sm| {
            sm.domain.in_flight() > 0
                || sm
                    .warps
                    .iter()
                    .any(|w| matches!(w.state, WState::DelayUntil(_)))
        }) || self.flags.pending(now)
    }

    fn check_deadlock(&mut self, now: u64) {
        if self.summary.deadlock.is_some() || now - self.last_progress <= self.cfg.deadlock_cycles {
            return;
        }
        if self.progress_pending(now) {
            self.last_progress = now;
            return;
        }
        let waiting: Vec<String> = self
            .sms
            .iter()
            .flat_map(|sm| sm.warps.iter())
            .filter(|w| w.state != WState::Done)
            .map(|w| w.describe(&self.flags))
            .collect();
        self.summary.deadlock = Some(format!(
            "no progress for {} cycles; {}",
            self.cfg.deadlock_cycles,
            if waiting.is_empty() {
                "no warp waits (the units do not drain)".to_string()
            } else {
                waiting.join("; ")
            }
        ));
    }
}
