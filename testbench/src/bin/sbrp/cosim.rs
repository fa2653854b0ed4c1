//! `sbrp cosim`: warp traces through the SM front end (or raw stimulus) into
//! the chosen engine, every cycle compared in lockstep, expectations checked.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};
use sbrp_iface::slices::Slices;
use sbrp_testbench::cosim::{cosim, CosimResult, Profile, TraceResult, Workload};
use sbrp_testbench::lockstep::Mismatch;
use sbrp_testbench::suites::{Outcome, RunOpts};
use sbrp_testbench::Engine;

use crate::args::{print_params, FaultArg, ParamArgs};
use crate::Verdict;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Suite {
    /// Every trace of testbench/litmus/ with its expectations.
    Litmus,
    /// Chained constrained-random traces (2 SMs, all warps busy).
    Random,
    /// Raw random per-cycle stimulus straight into the unit (no front end).
    Fuzz,
}

/// `--engine` values of `cosim`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum EngineArg {
    /// The reference model alone (no Verilator).
    Model,
    /// The Verilated RTL alone.
    Verilator,
    /// The Verilated RTL and the model, compared every cycle.
    Lockstep,
}

#[derive(Args)]
pub struct CosimArgs {
    /// A suite to run.
    #[arg(long, conflicts_with = "trace")]
    suite: Option<Suite>,
    /// One trace file (docs/trace-format.md).
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    #[command(flatten)]
    params: ParamArgs,
    /// Seed of the random and fuzz suites.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Cycles of the random and fuzz suites.
    #[arg(long, default_value_t = 100_000)]
    cycles: u64,
    /// Fuzz suite: the stimulus of the mutation campaign's `corners` check
    /// (phases without acks that take ACTR to its maximum, bogus acks).
    #[arg(long)]
    corners: bool,
    /// Which implementation runs.
    #[arg(long, value_enum, default_value_t = EngineArg::Lockstep)]
    engine: EngineArg,
    /// Shorthand for `--engine model`.
    #[arg(long, conflicts_with = "engine")]
    model_only: bool,
    /// Simulate this Verilog file (top module sbrp_pb, the spec's ports) instead of the generated RTL.
    #[arg(long, value_name = "PATH")]
    rtl: Option<PathBuf>,
    /// Write waveforms (VCD) of the RTL and of the model into DIR (open them
    /// side by side with GTKWave: docs/waves/README.md).
    #[arg(long, value_name = "DIR")]
    vcd: Option<PathBuf>,
    /// With `--vcd`: also write each waveform as FST (`X.fst` beside `X.vcd`;
    /// converted by GTKWave's vcd2fst and read back before it is kept).
    #[arg(long, requires = "vcd")]
    fst: bool,
    /// Cycles from a flush to its acknowledgement in the persistence-domain
    /// model; wins over a trace's `config pm_latency=` line.
    #[arg(long, value_name = "C")]
    pm_latency: Option<u32>,
    /// Inject a fault into the model (to see the checks catch it).
    #[arg(long, value_enum, default_value = "none", alias = "mutate")]
    fault: FaultArg,
    /// Write each run's execution record (JSON, docs/trace-format.md) into DIR.
    #[arg(long, value_name = "DIR")]
    record: Option<PathBuf>,
    /// Run the litmus traces of DIR instead of the built-in suite.
    #[arg(long, value_name = "DIR")]
    litmus_dir: Option<PathBuf>,
    /// Build the Verilated model profile-guided (compiled twice, then
    /// cached): about 16% less CPU time per cycle, worth it for long or
    /// repeated runs of one configuration.
    #[arg(long)]
    pgo: bool,
    /// Register slices at the unit's boundary, stages on the request,
    /// response and ack paths, each 0..2 (docs/microarch.md §2.1); in the
    /// generated RTL and the model alike (with `--rtl`: a file built so).
    #[arg(long, value_name = "REQ,RSP,ACK", default_value = "0,0,0")]
    slices: Slices,
}

impl CosimArgs {
    fn run_opts(&self) -> Result<RunOpts> {
        let p = self.params.params()?;
        let mut opts = RunOpts::new(p);
        opts.pgo = self.pgo;
        opts.engine = match (self.model_only, self.engine) {
            (true, _) | (_, EngineArg::Model) => Engine::Model,
            (_, EngineArg::Verilator) => Engine::Verilator,
            (_, EngineArg::Lockstep) => Engine::Lockstep,
        };
        if let Some(r) = &self.rtl {
            if !r.is_file() {
                bail!("--rtl {}: no such file", r.display());
            }
        }
        opts.rtl = self.rtl.clone();
        opts.vcd_dir = self.vcd.clone();
        opts.fst = self.fst;
        opts.record_dir = self.record.clone();
        if let Some(l) = self.pm_latency {
            opts.fe
                .set_pm_latency(l as u64)
                .map_err(|e| anyhow::anyhow!("--pm-latency: {e}"))?;
            opts.pm_latency = Some(l);
        }
        opts.fault = self.fault.into();
        opts.slices = self.slices;
        Ok(opts)
    }
}

pub fn run(a: &CosimArgs) -> Result<Verdict> {
    let opts = a.run_opts()?;
    let p = opts.params;
    // Parse every trace before building anything: bad input fails fast.
    let work = match (a.suite, &a.trace) {
        (Some(Suite::Litmus), _) => match &a.litmus_dir {
            Some(d) => Workload::litmus_dir(d)?,
            None => Workload::litmus()?,
        },
        (Some(Suite::Random), _) => Workload::Random {
            seed: a.seed,
            cycles: a.cycles,
        },
        (Some(Suite::Fuzz), _) => Workload::Fuzz {
            seed: a.seed,
            cycles: a.cycles,
            profile: if a.corners {
                Profile::Corners
            } else {
                Profile::Default
            },
        },
        (None, Some(f)) => Workload::trace(f, &p)?,
        (None, None) => bail!("give --suite litmus|random|fuzz or --trace FILE"),
    };
    print_params(&p);
    if !opts.slices.is_none() {
        println!(
            "register slices {} (REQ,RSP,ACK): responses {} cycles after the request",
            opts.slices,
            opts.slices.rsp_latency()
        );
    }
    if opts.engine == Engine::Model {
        println!("model only");
    }
    let r = cosim(&opts, &work)?;
    if let Some((what, secs)) = &r.rtl {
        println!("rtl: {what} (Verilated, ready in {secs:.1} s)");
    }
    let rate = |cycles: u64| cycles as f64 / r.secs / 1e6;
    let status = |ok: bool| if ok { "PASS" } else { "FAIL" };
    match &r.result {
        CosimResult::Random(o) => {
            println!(
                "{} random seed {}: {} cycles in {} traces, {} persists, {} flushes ({} evictions), {} waits, {} refusals, max occupancy {}; {:.2} M cycles/s",
                status(r.passed()),
                a.seed, o.cycles, o.chunks, o.persists, o.flushes, o.evict_flushes, o.waits, o.refused, o.max_occupancy,
                rate(o.cycles)
            );
            print_details(&o.fails, o.mismatch.as_ref(), &o.files);
        }
        CosimResult::Fuzz {
            seed,
            cycles,
            mismatch,
        } => match mismatch {
            None => println!(
                "PASS fuzz seed {seed}: {cycles} cycles, zero mismatches; {:.2} M cycles/s",
                rate(*cycles)
            ),
            Some(m) => {
                println!("FAIL fuzz seed {seed}");
                print!("{m}");
            }
        },
        CosimResult::Traces(v) => {
            let (mut passed, mut failed, mut skipped) = (0, 0, 0);
            for t in v {
                match t {
                    TraceResult::Skipped { name, why } => {
                        println!("SKIP {name}: {why}");
                        skipped += 1;
                    }
                    TraceResult::Ran { name, outcome } => {
                        report(name, outcome);
                        if outcome.ok() {
                            passed += 1;
                        } else {
                            failed += 1;
                        }
                    }
                }
            }
            println!("{passed} passed, {failed} failed, {skipped} skipped");
        }
    }
    Ok(Verdict::of(r.passed()))
}

fn report(name: &str, o: &Outcome) {
    for n in &o.notes {
        println!("note: {n}");
    }
    let s = &o.summary;
    println!(
        "{} {name}: {} cycles, {} persists, {} flushes ({} evictions), {} waits",
        if o.ok() { "PASS" } else { "FAIL" },
        s.cycles,
        s.persists,
        s.flushes,
        s.evict_flushes,
        s.waits
    );
    print_details(&o.fails, o.mismatch.as_ref(), &o.files);
}

/// A run's failed expectations, its divergence and the files it wrote.
fn print_details(fails: &[String], mismatch: Option<&Mismatch>, files: &[PathBuf]) {
    for f in fails {
        println!("    {f}");
    }
    if let Some(m) = mismatch {
        print!("{m}");
    }
    for f in files {
        println!("    wrote {}", f.display());
    }
}
