//! `sbrp bench-gpu`: the GPU model's speed in simulated warp instructions per
//! second of wall time (one core), on the synthetic benchmark program
//! (docs/trace-format.md, "Benchmark program") under chosen presets.

use anyhow::{anyhow, Result};
use clap::Args;
use sbrp_gpu::{Gpu, RunOpts};
use sbrp_trace::program::{Instr, Program, SynthProgram};

use crate::Verdict;

#[derive(Args)]
pub struct BenchGpuArgs {
    /// Presets to time (comma-separated).
    #[arg(long, default_value = "sbrp-near,epoch-near,gpm-far")]
    presets: String,
    /// Kernels of the synthetic program.
    #[arg(long, default_value_t = 2)]
    kernels: u32,
    /// CTAs per kernel.
    #[arg(long, default_value_t = 240)]
    ctas: u32,
    /// Warps per CTA.
    #[arg(long, default_value_t = 8)]
    warps: u32,
    /// Instructions per warp.
    #[arg(long, default_value_t = 256)]
    instrs: u32,
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

pub fn run(a: &BenchGpuArgs) -> Result<Verdict> {
    // Every preset is checked before anything is printed.
    let presets = a
        .presets
        .split(',')
        .map(str::trim)
        .map(|p| {
            sbrp_gpu::presets::preset_or_err(p)
                .map(|c| (p, c))
                .map_err(|e| anyhow!("--presets {p}: {e}"))
        })
        .collect::<Result<Vec<_>>>()?;
    for (p, c) in &presets {
        if a.warps > c.core.warps_per_sm {
            return Err(anyhow!(
                "--warps {}: a CTA of {} warps does not fit an SM of {p} (core.warps_per_sm = {})",
                a.warps,
                a.warps,
                c.core.warps_per_sm
            ));
        }
    }
    let prog =
        SynthProgram::new(a.kernels, a.ctas, a.warps, a.instrs, a.seed).map_err(|e| anyhow!(e))?;
    println!(
        "synthetic program: {} kernels x {} CTAs x {} warps x {} instructions = {} warp instructions",
        a.kernels,
        a.ctas,
        a.warps,
        a.instrs,
        prog.total_instrs()
    );
    let mix = Mix::of(&prog);
    let total = mix.total().max(1) as f64;
    println!(
        "mix: memory {} ({:.0}%), compute records {} ({:.0}%), ordering and sync {} ({:.0}%)",
        mix.memory,
        100.0 * mix.memory as f64 / total,
        mix.compute,
        100.0 * mix.compute as f64 / total,
        mix.sync,
        100.0 * mix.sync as f64 / total,
    );
    let mut ok = true;
    for (p, cfg) in presets {
        let mut gpu = Gpu::with_model_units(&cfg)?;
        let t0 = std::time::Instant::now();
        let r = gpu.run(&prog, RunOpts::default());
        let secs = t0.elapsed().as_secs_f64();
        ok &= r.finished && r.failures.is_empty();
        println!(
            "{p:<16} {:>12} cycles {:>10} warp instr in {secs:>6.2} s: {:>6.2} M warp-instr/s, {:>6.2} M cycles/s{}",
            r.cycles,
            r.sm.instrs,
            r.sm.instrs as f64 / secs / 1e6,
            r.cycles as f64 / secs / 1e6,
            if r.finished { "" } else { "  NOT FINISHED" }
        );
        for f in &r.failures {
            println!("{:<16} CHECK FAILED: {f}", "");
        }
        if let Some(d) = &r.deadlock {
            println!("{d}");
        }
        // What the time went on: the event loop's SM visits (each costs
        // the same order of work), and the units' steps.
        let per = |x: u64| x as f64 / r.sm.instrs.max(1) as f64;
        let sm_cycles = r.cycles.max(1) * cfg.core.sms as u64;
        println!(
            "{:<16} memory warp instr {:.2} M/s; SM visits {:.2} per warp instr ({:.1}% of SM-cycles); unit steps {:.2} per warp instr ({:.0}% skipped)",
            "",
            mix.memory as f64 / secs / 1e6,
            per(r.sm.visits),
            100.0 * r.sm.visits as f64 / sm_cycles as f64,
            per(r.sm.unit_steps),
            100.0 * r.sm.unit_steps_skipped as f64 / r.sm.unit_steps.max(1) as f64,
        );
    }
    Ok(Verdict::of(ok))
}

/// The program's warp instructions by kind: loads, stores and atomics;
/// compute records (each one instruction, whatever its cycles); fences,
/// acquires, releases and barriers (acquires' repeated polls are not in
/// the program, they are in the run's count).
struct Mix {
    memory: u64,
    compute: u64,
    sync: u64,
}

impl Mix {
    fn of(prog: &SynthProgram) -> Mix {
        let mut m = Mix {
            memory: 0,
            compute: 0,
            sync: 0,
        };
        for (k, info) in prog.kernels().iter().enumerate() {
            for c in 0..info.grid {
                for i in prog.cta(k, c).warps.iter().flatten() {
                    match i {
                        Instr::Ld { .. } | Instr::St { .. } | Instr::Atom { .. } => m.memory += 1,
                        Instr::Compute { .. } => m.compute += 1,
                        _ => m.sync += 1,
                    }
                }
            }
        }
        m
    }

    fn total(&self) -> u64 {
        self.memory + self.compute + self.sync
    }
}
