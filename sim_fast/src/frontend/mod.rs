//! SM front end (`docs/trace-format.md`, "Front end"): turns warp traces into
//! each SM's per-cycle requests to its persist buffer unit over the v2
//! interfaces (`docs/microarch.md` §2: requests taken and answered three
//! cycles later, flush FIFO with valid/ready, acks as counts per epoch,
//! `inv_req`/`inv_done`), and reports what happened as events.
//!
//! This module orchestrates runs and `sm` one SM's cycle; the parts are: `warps`
//! (programs, states, round robin), `l1` (tags, LRU, dirty words, hooks,
//! pins, write-back buffer), `flags` (release visibility), `domain` (the
//! persistence domains: fixed and hostile), `events` (where events go) and
//! `config`. The unit of each SM is any [`PbUnit`], so the same
//! front end drives the model, the RTL, or both in lockstep. Checking a
//! trace's expectations is not done here: `sbrp_trace::evaluate` reads the
//! execution record.

mod config;
mod domain;
mod events;
mod flags;
mod l1;
mod sm;
mod warps;

pub use config::{ConfigError, ConfigProblem, DomainKind, DriverFault, FrontEndConfig};
pub use domain::{FixedLatency, Hostile, PersistenceDomain, Taken, Tick, HOSTILE_MAX_LATENCY};
pub use events::{EventSink, NullSink, RecordingSink};
pub use flags::{Flags, Release};
pub use l1::{WriteBack, L1};

use sbrp_iface::{PbParams, PbUnit, RESET_CYCLES};
use sbrp_trace::{Execution, RunEnd, Trace, WarpId};

use sm::Sm;
use warps::{Instr, WState, Warp};

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
    /// Breaches of the interfaces seen by the bench: the unit's `error`
    /// output, a domain breaking interface requirement 4, a request or
    /// flush the L1 cannot account for. A run with any is a failure; the
    /// first one stops it.
    pub check_failures: Vec<String>,
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
    /// One front end over `units` (one per SM), each with the persistence
    /// domain `cfg.domain` (hostile: SM `s` seeded `domain_seed + s`),
    /// recording every event.
    pub fn new(units: Vec<Box<dyn PbUnit>>, cfg: FrontEndConfig) -> FrontEnd {
        let domains = (0..units.len() as u64)
            .map(|s| -> Box<dyn PersistenceDomain> {
                match cfg.domain {
                    DomainKind::Fixed => Box::new(FixedLatency::new(cfg.pm_latency)),
                    DomainKind::Hostile => Box::new(Hostile::new(cfg.domain_seed.wrapping_add(s))),
                }
            })
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
            .map(|(unit, domain)| Sm::new(unit, domain, cfg.l1_ways))
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

    /// Resets every unit (one cycle of `rst`, then the reset cycle: two
    /// cycles, §7); requests in flight are forgotten (the unit drops them).
    pub fn reset(&mut self) {
        for sm in &mut self.sms {
            sm.unit.reset_sequence();
            sm.port.reset();
            sm.contract.reset();
        }
        self.now += RESET_CYCLES;
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
        self.sms.iter().map(|s| s.port.actr_peak).max().unwrap_or(0)
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
        ex.actr_peak = self.sms.iter().map(|s| s.port.actr_peak).collect();
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
            if self.summary.deadlock.is_some() || !self.summary.check_failures.is_empty() {
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

    /// Progress still to come without any warp acting: a request awaiting
    /// its response, a flush awaiting its acknowledgement, an invalidation
    /// under way, a warp computing a delay, a release not yet visible.
    fn progress_pending(&self, now: u64) -> bool {
        self.sms.iter().any(|sm| {
            !sm.quiet()
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
