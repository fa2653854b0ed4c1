//! The whole GPU (`docs/model.md`, "Kernels and CTAs", "Event loop"):
//! kernels launched in sequence after the launch latency, CTAs handed to SMs
//! round robin as their resources free, and the loop that visits an SM only
//! in cycles where it has something to do, jumping over the rest.

use std::collections::BTreeMap;

use sbrp_iface::PbUnit;
use sbrp_trace::program::{check_instr, Program};
use sbrp_trace::{Event, Execution, RunEnd, WarpId};
use serde::Serialize;

use crate::config::{ConfigError, GpuConfig, Model, UnitParams};
use crate::flags::Flags;
use crate::mem::{MemStats, MemSystem};
use crate::sm::{Ctx, Fault, Sm, WState, CAUSES};
use crate::stats::SmStats;
use crate::wake::WakeQueue;

/// Cycles without progress (an instruction other than a poll, or a flush)
/// after which a run is reported as a deadlock.
pub const DEADLOCK_CYCLES: u64 = 2_000_000;

/// The persist buffer parameters the configuration gives each SM's unit,
/// checked against the unit's limits ([`GpuConfig::unit_params`]).
pub fn unit_params(cfg: &GpuConfig) -> Result<UnitParams, ConfigError> {
    cfg.unit_params()
}

/// One kernel's figures.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct KernelReport {
    pub name: String,
    pub grid: u32,
    pub block: u32,
    /// Cycle of the launch (the launch latency runs from here).
    pub launch: u64,
    pub end: u64,
    pub cycles: u64,
    pub instrs: u64,
}

/// What a run reports.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RunReport {
    pub program: String,
    pub model: Model,
    pub cycles: u64,
    /// Time at the configured clock, microseconds.
    pub time_us: f64,
    pub finished: bool,
    pub kernels: Vec<KernelReport>,
    pub sm: SmStats,
    pub mem: MemStats,
    /// Warp stall cycles by cause.
    pub stalls: BTreeMap<String, u64>,
    /// Interface breaches (a run with any failed).
    pub failures: Vec<String>,
    pub deadlock: Option<String>,
    #[serde(skip)]
    pub execution: Option<Execution>,
}

/// Options of a run.
#[derive(Default)]
pub struct RunOpts<'a> {
    /// Keep the execution record (events) for expectations and checkers.
    pub record: bool,
    /// Stop after this many cycles (the run is then cut).
    pub max_cycles: Option<u64>,
    /// Called now and then with (cycle, warp instructions, kernel index).
    pub progress: Option<&'a mut dyn FnMut(u64, u64, usize)>,
    /// Step the units in every busy cycle: no skipping of replay loops
    /// (`docs/model.md`, "Event loop"), to check that skipping changes
    /// nothing.
    pub no_skip: bool,
}

/// The GPU.
pub struct Gpu {
    pub cfg: GpuConfig,
    pub sms: Vec<Sm>,
    pub mem: MemSystem,
    pub flags: Flags,
    pub now: u64,
    /// A fault injected into the model (negative controls).
    pub fault: Fault,
}

impl Gpu {
    /// A GPU of `cfg`; under a model with a persist buffer unit (SBRP), SM
    /// `s`'s unit is `unit(s)`.
    pub fn new(cfg: &GpuConfig, unit: &mut dyn FnMut(u32) -> Box<dyn PbUnit>) -> Gpu {
        let sbrp = cfg.model.persist().has_unit();
        let sms = (0..cfg.core.sms)
            .map(|s| {
                // The RTL's flops have no reset value: reset before cycle 0.
                let u = sbrp.then(|| {
                    let mut u = unit(s);
                    u.reset_sequence();
                    u
                });
                Sm::new(s, cfg, u, false)
            })
            .collect();
        Gpu {
            cfg: cfg.clone(),
            sms,
            mem: MemSystem::new(cfg),
            flags: Flags::default(),
            now: 0,
            fault: Fault::None,
        }
    }

    /// A GPU whose SBRP units are the reference model (or the idealised
    /// unit, `ideal.unit`).
    pub fn with_model_units(cfg: &GpuConfig) -> Result<Gpu, ConfigError> {
        if !cfg.model.persist().has_unit() {
            return Ok(Gpu::new(cfg, &mut |_| unreachable!("no unit without SBRP")));
        }
        let p = unit_params(cfg)?;
        Ok(Gpu::new(cfg, &mut |_| crate::ideal::model_unit(cfg, &p)))
    }

    /// Runs `prog` to its end (or a deadlock, or the cycle limit).
    pub fn run(&mut self, prog: &dyn Program, mut opts: RunOpts) -> RunReport {
        for sm in &mut self.sms {
            sm.rec = opts.record.then(Vec::new);
        }
        let mut rep = RunReport {
            program: prog.name().to_string(),
            model: self.cfg.model,
            ..RunReport::default()
        };
        let mut warps_seen: Vec<WarpId> = vec![];
        let n = self.sms.len();
        let mut wake = vec![u64::MAX; n];
        let mut end = RunEnd::Finished;
        let mut last_progress = (0u64, self.now);
        let mut loops = 0u64;
        'kernels: for (k, kinfo) in prog.kernels().iter().enumerate() {
            let launch = self.now;
            let start = launch + self.cfg.core.kernel_launch_latency as u64;
            if opts.max_cycles.is_some_and(|m| start > m) {
                // The limit falls inside the launch latency: cut there.
                self.now = opts.max_cycles.unwrap().max(launch);
                end = RunEnd::Cut;
                break;
            }
            self.now = start;
            let wpc = kinfo.warps_per_cta();
            let regs = kinfo.regs * wpc * 32;
            let mut next_cta = 0u32;
            let mut rr = 0usize;
            let instrs0 = self.total_instrs();
            // Initial placement: round robin while CTAs fit.
            loop {
                let mut placed = false;
                for i in 0..n {
                    let s = (rr + i) % n;
                    if next_cta < kinfo.grid
                        && self.sms[s].fits(&self.cfg, wpc, kinfo.block, regs, kinfo.smem)
                    {
                        if let Err(e) = self.place(prog, k, next_cta, s, &mut warps_seen) {
                            rep.failures.push(e);
                            end = RunEnd::Cut;
                            break 'kernels;
                        }
                        next_cta += 1;
                        rr = (s + 1) % n;
                        wake[s] = start;
                        placed = true;
                        break;
                    }
                }
                if !placed || next_cta == kinfo.grid {
                    break;
                }
            }
            if next_cta == 0 && kinfo.grid > 0 {
                rep.failures.push(format!(
                    "kernel {} ({}): a CTA of {} threads does not fit an SM",
                    k, kinfo.name, kinfo.block
                ));
                end = RunEnd::Cut;
                break;
            }
            // SMs by wake cycle, then index (the order of visits within a
            // cycle); an SM's state changes only when it is visited, so its
            // one entry and its done flag are renewed then.
            let mut due = WakeQueue::new(n);
            for (s, &w) in wake.iter().enumerate() {
                due.push(s, w);
            }
            let mut done: Vec<bool> = self.sms.iter().map(|sm| self.sm_done(sm)).collect();
            let mut not_done = done.iter().filter(|d| !**d).count();
            let mut visit: Vec<usize> = Vec::with_capacity(n);
            loop {
                let t = due.next();
                if next_cta == kinfo.grid && not_done == 0 {
                    break;
                }
                if t == u64::MAX {
                    rep.deadlock = Some(self.deadlock_report("nothing can happen"));
                    end = RunEnd::Deadlock {
                        report: rep.deadlock.clone().unwrap(),
                    };
                    break 'kernels;
                }
                if let Some(m) = opts.max_cycles {
                    if t > m {
                        // Nothing happens between now and the limit.
                        self.now = m.max(self.now);
                        end = RunEnd::Cut;
                        break 'kernels;
                    }
                }
                self.now = t;
                let mut failed = false;
                // Every SM due now, in index order; a wake is always later
                // than the visit that sets it.
                due.take(t, &mut visit);
                for &s in &visit {
                    let mut cx = Ctx {
                        cfg: &self.cfg,
                        fault: self.fault,
                        mem: &mut self.mem,
                        flags: &mut self.flags,
                        now: t,
                        limit: opts.max_cycles.unwrap_or(u64::MAX),
                        skip: !opts.no_skip,
                    };
                    self.sms[s].cycle(&mut cx);
                    if self.sms[s].reap() > 0 {
                        while next_cta < kinfo.grid
                            && self.sms[s].fits(&self.cfg, wpc, kinfo.block, regs, kinfo.smem)
                        {
                            if let Err(e) = self.place(prog, k, next_cta, s, &mut warps_seen) {
                                rep.failures.push(e);
                                end = RunEnd::Cut;
                                break 'kernels;
                            }
                            next_cta += 1;
                        }
                    }
                    let sm = &mut self.sms[s];
                    if next_cta == kinfo.grid && sm.live_warps == 0 && !sm.draining {
                        sm.draining = true;
                        sm.unit_state.busy = sm.unit.is_some();
                    }
                    let w = sm.next_wake(t);
                    debug_assert!(w > t, "SM {s} wakes at {w} after {t}");
                    due.push(s, w);
                    failed |= !sm.unit_state.failures.is_empty();
                    let d = self.sm_done(&self.sms[s]);
                    if d != done[s] {
                        done[s] = d;
                        if d {
                            not_done -= 1;
                        } else {
                            not_done += 1;
                        }
                    }
                }
                if failed {
                    let failures: Vec<String> = self
                        .sms
                        .iter()
                        .flat_map(|sm| sm.unit_state.failures.iter().cloned())
                        .collect();
                    rep.failures = failures;
                    end = RunEnd::Cut;
                    break 'kernels;
                }
                loops += 1;
                if loops & 0xffff == 0 {
                    let p = self.progress_count();
                    if p != last_progress.0 {
                        last_progress = (p, t);
                    } else if t - last_progress.1 > DEADLOCK_CYCLES {
                        rep.deadlock = Some(self.deadlock_report("no progress"));
                        end = RunEnd::Deadlock {
                            report: rep.deadlock.clone().unwrap(),
                        };
                        break 'kernels;
                    }
                    if let Some(cb) = opts.progress.as_mut() {
                        cb(t, self.total_instrs(), k);
                    }
                }
            }
            self.kernel_end();
            wake.iter_mut().for_each(|w| *w = u64::MAX);
            rep.kernels.push(KernelReport {
                name: kinfo.name.clone(),
                grid: kinfo.grid,
                block: kinfo.block,
                launch,
                end: self.now,
                cycles: self.now - launch,
                instrs: self.total_instrs() - instrs0,
            });
        }
        rep.finished = end == RunEnd::Finished;
        rep.cycles = self.now;
        rep.time_us = self.now as f64 / self.cfg.core.clock_mhz as f64;
        let mut stalls = [0u64; 7];
        for sm in &self.sms {
            rep.sm.add(&sm.stats);
            for w in &sm.warps {
                for (i, c) in w.stalled.iter().enumerate() {
                    stalls[i] += c;
                }
            }
        }
        rep.stalls = CAUSES
            .iter()
            .zip(stalls)
            .skip(1)
            .map(|(c, v)| (c.to_string(), v))
            .collect();
        rep.mem = *self.mem.stats();
        if opts.record {
            let mut ex = Execution::new(self.cfg.l1.line as u64);
            warps_seen.sort();
            warps_seen.dedup();
            ex.warps = warps_seen;
            ex.flags = self.flags.names.iter().map(|a| format!("{a:#x}")).collect();
            ex.actr_peak = self.sms.iter().map(|s| s.stats.actr_peak).collect();
            let mut events: Vec<Event> = vec![];
            for sm in &mut self.sms {
                events.extend(sm.rec.take().unwrap_or_default());
            }
            events.sort_by_key(event_cycle);
            ex.events = events;
            ex.end = end;
            ex.cycles = self.now;
            rep.execution = Some(ex);
        }
        rep
    }

    fn sm_done(&self, sm: &Sm) -> bool {
        sm.live_warps == 0 && (self.cfg.artifact.no_kernel_end_drain || sm.drained())
    }

    /// Launches CTA `cta` of kernel `k` on SM `s`; a CTA whose code the
    /// model cannot run (`check_instr`: an in-memory program skips the
    /// parser) is refused with what is wrong and where.
    fn place(
        &mut self,
        prog: &dyn Program,
        k: usize,
        cta: u32,
        s: usize,
        seen: &mut Vec<WarpId>,
    ) -> Result<(), String> {
        let kinfo = &prog.kernels()[k];
        let mut code = prog.cta(k, cta);
        let wpc = kinfo.warps_per_cta() as usize;
        if code.warps.len() > wpc {
            return Err(format!(
                "kernel {k} ({}) CTA {cta}: code for {} warps, the block has {wpc}",
                kinfo.name,
                code.warps.len()
            ));
        }
        for (w, instrs) in code.warps.iter().enumerate() {
            for (n, i) in instrs.iter().enumerate() {
                check_instr(i).map_err(|e| {
                    format!(
                        "kernel {k} ({}) CTA {cta} warp {w} instruction {n}: {e}",
                        kinfo.name
                    )
                })?;
            }
        }
        code.warps.resize(wpc, Vec::new());
        let regs = kinfo.regs * kinfo.warps_per_cta() * 32;
        let now = self.now;
        let sm = &mut self.sms[s];
        let c = sm.launch(code, kinfo.block, regs, kinfo.smem, now);
        if sm.rec.is_some() {
            for i in 0..sm.ctas[c].warps.len() {
                let w = sm.ctas[c].warps[i];
                let warp = WarpId {
                    sm: s as u32,
                    warp: w as u32,
                };
                seen.push(warp);
                let inst = sm.warps[w].inst;
                if let Some(r) = &mut sm.rec {
                    r.push(Event::WarpStart {
                        warp,
                        inst,
                        kernel: k as u32,
                        cta,
                        cta_warp: i as u32,
                        cycle: now,
                    });
                }
            }
        }
        sm.draining = false;
        Ok(())
    }

    /// Kernel end: the L1s write back their volatile lines and are
    /// invalidated (the artifact's `-gpgpu_flush_l1_cache`); the L2 too.
    fn kernel_end(&mut self) {
        let now = self.now;
        for sm in &mut self.sms {
            let mut cx = Ctx {
                cfg: &self.cfg,
                fault: self.fault,
                mem: &mut self.mem,
                flags: &mut self.flags,
                now,
                limit: now,
                skip: true,
            };
            sm.kernel_end(&mut cx);
        }
        self.mem.kernel_end(now);
    }

    fn total_instrs(&self) -> u64 {
        self.sms.iter().map(|s| s.stats.instrs).sum()
    }

    fn progress_count(&self) -> u64 {
        self.sms
            .iter()
            .map(|s| s.stats.instrs - s.stats.polls + s.stats.pm_flushes)
            .sum()
    }

    fn deadlock_report(&self, why: &str) -> String {
        let mut lines = vec![format!("deadlock at cycle {} ({why}):", self.now)];
        for sm in &self.sms {
            if !self.sm_done(sm) && sm.live_warps == 0 {
                lines.push(format!("  SM {}: {}", sm.id, sm.describe()));
            }
            for (w, warp) in sm.warps.iter().enumerate() {
                if matches!(warp.state(), WState::Empty | WState::Done) {
                    continue;
                }
                let op = warp
                    .code
                    .get(warp.pc)
                    .map(sbrp_trace::program::write_instr)
                    .unwrap_or_default();
                lines.push(format!(
                    "  warp {}.{w} at instruction {} ({op}): {}",
                    sm.id,
                    warp.pc,
                    warp.state().text()
                ));
                if lines.len() > 40 {
                    lines.push("  ...".into());
                    return lines.join("\n");
                }
            }
        }
        lines.join("\n")
    }
}

fn event_cycle(e: &Event) -> u64 {
    e.cycle()
}
