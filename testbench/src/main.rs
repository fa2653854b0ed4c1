//! The `sbrp` command.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};
use sbrp_iface::{storage_table, storage_totals, FlushPolicy, PbParams, PbUnit};
use sbrp_sim_fast::{Mutation, PbModel};
use sbrp_testbench::suites::{
    litmus_dir, litmus_files, load_trace, rtl_and_model, run_fuzz, run_random, run_trace,
    workload_stimulus, Outcome, RawStimulus, Rtl, RunOpts, Sides,
};

#[derive(Parser)]
#[command(
    name = "sbrp",
    about = "Generator and verification bench for the SBRP persist buffer unit",
    version
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Emit the persist buffer RTL as Verilog (top module `sbrp_pb`) into DIR/sbrp_pb.v.
    Verilog {
        #[command(flatten)]
        params: ParamArgs,
        /// Output directory (created if missing); the file is DIR/sbrp_pb.v.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// Co-simulate: warp traces through the SM front end into the Verilated RTL
    /// and the reference model in lockstep, compared every cycle.
    Cosim(CosimArgs),
    /// Area and timing: synthesize with Yosys onto the OSU 0.18 um cells, report
    /// area by block, flip-flop bits against the storage table, and OpenSTA slack.
    Area(AreaArgs),
    /// Formal proofs of safety invariants by Yosys SAT-based induction.
    Prove(ProveArgs),
    /// Measure the reference model's speed (unit-cycles per second, one core).
    BenchUnit {
        #[command(flatten)]
        params: ParamArgs,
        /// Cycles to run.
        #[arg(long, default_value_t = 50_000_000)]
        cycles: u64,
        /// Also measure RTL (Verilator) + model in lockstep on the raw stimulus.
        #[arg(long)]
        lockstep: bool,
        /// Which stimulus to time the model on.
        #[arg(long, value_enum, default_value_t = Stimulus::Both)]
        stimulus: Stimulus,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Stimulus {
    /// What the SM front end gives SM units on constrained-random warp traces
    /// (recorded once, replayed): running kernels.
    Workload,
    /// A random request, ack and drain in any cycle: the worst case for the
    /// model's branches.
    Raw,
    /// Both, one after the other.
    Both,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Suite {
    /// Every trace of testbench/litmus/ with its expectations.
    Litmus,
    /// Chained constrained-random traces (2 SMs, all warps busy).
    Random,
    /// Raw random per-cycle stimulus straight into the unit (no front end).
    Fuzz,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Mutate {
    None,
    IgnoreCoalesceOrdering,
    IgnoreFsm,
    WindowOffByOne,
    DfenceNoWait,
}

#[derive(Args)]
struct CosimArgs {
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
    /// Simulate this Verilog file (top module sbrp_pb, the spec's ports) instead of the generated RTL.
    #[arg(long, value_name = "PATH")]
    rtl: Option<PathBuf>,
    /// Write waveforms (VCD) of the RTL and of the model into DIR.
    #[arg(long, value_name = "DIR")]
    vcd: Option<PathBuf>,
    /// Run the reference model only (no Verilator).
    #[arg(long)]
    model_only: bool,
    /// Cycles from a flush to its acknowledgement in the persistence-domain model.
    #[arg(long, value_name = "C")]
    pm_latency: Option<u32>,
    /// Deliberately break the model (to see the checks catch it).
    #[arg(long, value_enum, default_value = "none")]
    mutate: Mutate,
    /// Write each run's execution record (JSON: persists, ordering ops,
    /// release-acquire matches, flushes, durability) into DIR.
    #[arg(long, value_name = "DIR")]
    record: Option<PathBuf>,
    /// Directory of the litmus traces.
    #[arg(long, value_name = "DIR")]
    litmus_dir: Option<PathBuf>,
}

/// Unit parameters shared by the subcommands.
#[derive(Args, Clone, Debug)]
struct ParamArgs {
    /// PB entries: a power of two from 16 to 512.
    #[arg(long, value_name = "N", default_value_t = 256)]
    entries: u32,
    /// Resident warps per SM: 4, 8, 16, 32 or 64.
    #[arg(long, value_name = "W", default_value_t = 32)]
    warps: u32,
    /// L1 cache lines: a power of two from --entries to 1024.
    #[arg(long, value_name = "L", default_value_t = 512)]
    lines: u32,
    /// Flush window: outstanding flushes allowed under the window policy (1 to 2^actr_bits - 1).
    #[arg(long, value_name = "K", default_value_t = 6)]
    window: u32,
    /// ACTR width in bits: 4 or 8.
    #[arg(long, value_name = "A", default_value_t = 8)]
    actr_bits: u32,
    /// Flush policy: window, eager or lazy.
    #[arg(long, value_name = "P", default_value = "window")]
    policy: String,
}

impl ParamArgs {
    fn params(&self) -> Result<PbParams> {
        let p = PbParams {
            entries: self.entries,
            warps: self.warps,
            lines: self.lines,
            actr_bits: self.actr_bits,
            window: self.window,
            policy: FlushPolicy::parse(&self.policy)?,
        };
        p.validate()?;
        Ok(p)
    }
}

fn print_params(p: &PbParams) {
    println!(
        "parameters: entries {} warps {} lines {} actr_bits {} window {} policy {}",
        p.entries, p.warps, p.lines, p.actr_bits, p.window, p.policy
    );
}

fn print_storage(p: &PbParams) {
    println!("storage (bits):");
    for r in storage_table(p) {
        let paper = r
            .paper_bits
            .map(|b| b.to_string())
            .unwrap_or_else(|| "-".into());
        println!(
            "  {:<40} {:>4} x {:>4} = {:>6}   paper {:>6}",
            r.item,
            r.bits_each,
            r.count,
            r.total(),
            paper
        );
    }
    let (ours, paper) = storage_totals(p);
    println!(
        "  {:<40} {:>20}   paper {:>6}  ({:.2} KiB vs {:.2} KiB)",
        "total",
        ours,
        paper,
        ours as f64 / 8192.0,
        paper as f64 / 8192.0
    );
}

fn cmd_verilog(args: &ParamArgs, out: &PathBuf) -> Result<()> {
    let p = args.params()?;
    // Generate before touching the file system: a refused parameter writes nothing.
    let text = sbrp_hdl::generate_verilog(&p)?;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let path = out.join("sbrp_pb.v");
    let tmp = out.join(".sbrp_pb.v.tmp");
    std::fs::write(&tmp, &text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, &path).with_context(|| format!("cannot write {}", path.display()))?;
    print_params(&p);
    print_storage(&p);
    println!(
        "wrote {} ({} lines, top module sbrp_pb)",
        path.display(),
        text.lines().count()
    );
    Ok(())
}

fn report(name: &str, o: &Outcome) -> bool {
    let s = &o.summary;
    let status = if o.ok() { "PASS" } else { "FAIL" };
    println!(
        "{status} {name}: {} cycles, {} persists, {} flushes ({} evictions), {} waits",
        s.cycles, s.persists, s.flushes, s.evict_flushes, s.waits
    );
    print_details(&o.fails, o.mismatch.as_ref(), &o.files);
    o.ok()
}

/// A run's failed expectations, its divergence and the files it wrote.
fn print_details(
    fails: &[String],
    mismatch: Option<&sbrp_testbench::lockstep::Mismatch>,
    files: &[PathBuf],
) {
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

fn cmd_cosim(a: &CosimArgs) -> Result<bool> {
    let p = a.params.params()?;
    let mut opts = RunOpts::new(p);
    opts.sides = if a.model_only {
        Sides::Model
    } else {
        Sides::Lockstep
    };
    opts.rtl = a.rtl.clone();
    opts.vcd_dir = a.vcd.clone();
    opts.record_dir = a.record.clone();
    if let Some(l) = a.pm_latency {
        opts.fe
            .set("pm_latency", &l.to_string())
            .map_err(anyhow::Error::msg)?;
    }
    opts.mutation = match a.mutate {
        Mutate::None => Mutation::None,
        Mutate::IgnoreCoalesceOrdering => Mutation::IgnoreCoalesceOrdering,
        Mutate::IgnoreFsm => Mutation::IgnoreFsm,
        Mutate::WindowOffByOne => Mutation::WindowOffByOne,
        Mutate::DfenceNoWait => Mutation::DFenceNoWait,
    };
    if let Some(r) = &a.rtl {
        if !r.is_file() {
            bail!("--rtl {}: no such file", r.display());
        }
    }
    if a.suite.is_none() && a.trace.is_none() {
        bail!("give --suite litmus|random|fuzz or --trace FILE");
    }
    // Parse traces before building anything: bad input fails fast.
    let traces = match (a.suite, &a.trace) {
        (Some(Suite::Litmus), _) => {
            let dir = a.litmus_dir.clone().unwrap_or_else(litmus_dir);
            litmus_files(&dir)?
                .into_iter()
                .map(|f| Ok((f.clone(), load_trace(&f)?)))
                .collect::<Result<Vec<_>>>()?
        }
        (None, Some(f)) => vec![(f.clone(), load_trace(f)?)],
        _ => vec![],
    };
    print_params(&p);
    let rtl = if opts.sides == Sides::Lockstep {
        let t = std::time::Instant::now();
        let r = Rtl::build(&opts)?;
        println!(
            "rtl: {} (Verilated, ready in {:.1} s)",
            a.rtl
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "generated".into()),
            t.elapsed().as_secs_f64()
        );
        Some(r)
    } else {
        println!("model only");
        None
    };
    let t0 = std::time::Instant::now();
    let mut ok = true;
    match a.suite {
        Some(Suite::Random) => {
            let r = run_random(a.seed, a.cycles, &opts, rtl.as_ref())?;
            let secs = t0.elapsed().as_secs_f64();
            let pass = r.fails.is_empty() && r.mismatch.is_none();
            println!(
                "{} random seed {}: {} cycles in {} traces, {} persists, {} flushes ({} evictions), {} waits, {} refusals, max occupancy {}; {:.2} M cycles/s",
                if pass { "PASS" } else { "FAIL" },
                a.seed, r.cycles, r.chunks, r.persists, r.flushes, r.evict_flushes, r.waits, r.refused, r.max_occupancy,
                r.cycles as f64 / secs / 1e6
            );
            print_details(&r.fails, r.mismatch.as_ref(), &r.files);
            ok = pass;
        }
        Some(Suite::Fuzz) => {
            let (ua, ub): (Box<dyn PbUnit>, Box<dyn PbUnit>) = match &rtl {
                Some(r) => rtl_and_model(&opts, r)?,
                None => bail!("the fuzz suite compares the RTL with the model: drop --model-only"),
            };
            let m = run_fuzz(a.seed, a.cycles, ua, ub);
            let secs = t0.elapsed().as_secs_f64();
            match m {
                None => println!(
                    "PASS fuzz seed {}: {} cycles, zero mismatches; {:.2} M cycles/s",
                    a.seed,
                    a.cycles,
                    a.cycles as f64 / secs / 1e6
                ),
                Some(m) => {
                    println!("FAIL fuzz seed {}", a.seed);
                    print!("{m}");
                    ok = false;
                }
            }
        }
        _ => {
            let mut passed = 0;
            for (f, t) in &traces {
                let name = f
                    .file_stem()
                    .map(|s| s.to_string_lossy().to_string())
                    .unwrap_or_else(|| "trace".into());
                let o = run_trace(t, &opts, rtl.as_ref(), &name)?;
                if report(&name, &o) {
                    passed += 1;
                } else {
                    ok = false;
                }
            }
            println!("{} passed, {} failed", passed, traces.len() - passed);
        }
    }
    Ok(ok)
}

/// The timed loop of `bench-unit`, kept out of line so that its code does not
/// depend on what else `main` inlines. `inputs.len()` is a power of two.
#[inline(never)]
fn step_model(m: &mut PbModel, inputs: &[sbrp_iface::PbIn], cycles: u64) -> u64 {
    let ring = inputs.len() - 1;
    let mut flushes = 0u64;
    for c in 0..cycles {
        flushes += m.step(&inputs[c as usize & ring]).flush_valid as u64;
    }
    flushes
}

/// Times the model on `inputs` (replayed as a ring) and prints the rate.
fn time_model(p: &PbParams, what: &str, inputs: &[sbrp_iface::PbIn], cycles: u64) -> Result<()> {
    let mut m = PbModel::new(p)?;
    let t = std::time::Instant::now();
    let flushes = step_model(&mut m, inputs, cycles);
    let secs = t.elapsed().as_secs_f64();
    let busy = inputs.iter().filter(|i| i.req_valid).count() as f64 / inputs.len() as f64;
    println!(
        "model, {what} stimulus ({:.0}% of cycles with a request): {} cycles in {:.3} s: {:.1} M unit-cycles/s ({} flushes)",
        busy * 100.0,
        cycles,
        secs,
        cycles as f64 / secs / 1e6,
        flushes
    );
    Ok(())
}

fn cmd_bench_unit(args: &ParamArgs, cycles: u64, lockstep: bool, stimulus: Stimulus) -> Result<()> {
    let p = args.params()?;
    print_params(&p);
    // Stimulus is generated before timing, so that only the unit is timed.
    if stimulus != Stimulus::Raw {
        // Up to 256 K cycles of front-end output (3 MB, read in order).
        let ring = cycles.next_power_of_two().clamp(1 << 12, 1 << 18);
        let inputs = workload_stimulus(&p, 7, ring)?;
        time_model(&p, "workload", &inputs, cycles)?;
    }
    if stimulus != Stimulus::Workload {
        // A ring small enough to stay in cache.
        let mut stim = RawStimulus::new(&p, 7);
        let inputs: Vec<_> = (0..1 << 16).map(|_| stim.next_input()).collect();
        time_model(&p, "raw", &inputs, cycles)?;
    }
    if lockstep {
        let opts = RunOpts::new(p);
        let rtl = Rtl::build(&opts)?;
        let (ua, ub) = rtl_and_model(&opts, &rtl)?;
        let lc = cycles.min(20_000_000);
        let t = std::time::Instant::now();
        if let Some(mm) = run_fuzz(7, lc, ua, ub) {
            print!("{mm}");
            bail!("lockstep mismatch");
        }
        let secs = t.elapsed().as_secs_f64();
        println!(
            "lockstep rtl+model: {} cycles in {:.3} s: {:.2} M cycles/s (no VCD)",
            lc,
            secs,
            lc as f64 / secs / 1e6
        );
    }
    Ok(())
}

/// Arguments of `sbrp area`.
#[derive(Args, Clone, Debug)]
struct AreaArgs {
    /// PB entries: a power of two from 16 to 512.
    #[arg(long, value_name = "N", default_value_t = 256)]
    entries: u32,
    /// Resident warps per SM: 4, 8, 16, 32 or 64.
    #[arg(long, value_name = "W", default_value_t = 32)]
    warps: u32,
    /// L1 cache lines: a power of two from --entries to 1024.
    #[arg(long, value_name = "L", default_value_t = 512)]
    lines: u32,
    /// Flush window (1 to 2^8 - 1).
    #[arg(long, value_name = "K", default_value_t = 6)]
    window: u32,
    /// Synthesize entries {32,64,128,256,512} x warps {32,64} (lines 512) and
    /// print a table; writes sweep.csv into --out.
    #[arg(long)]
    sweep: bool,
    /// Directory for the reports (report.txt, area.csv or sweep.csv, the
    /// mapped netlist and the tool logs); written only when the flow succeeds.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Skip OpenSTA (area only).
    #[arg(long)]
    no_timing: bool,
}

/// Arguments of `sbrp prove`.
#[derive(Args, Clone, Debug)]
struct ProveArgs {
    /// PB entries (small: the proofs grow with N^2).
    #[arg(long, value_name = "N", default_value_t = 16)]
    entries: u32,
    /// Resident warps per SM.
    #[arg(long, value_name = "W", default_value_t = 4)]
    warps: u32,
    /// L1 cache lines.
    #[arg(long, value_name = "L", default_value_t = 16)]
    lines: u32,
    /// Prove only this property (actr, overflow, fsm_gate, release, flush_order); default all.
    #[arg(long, value_name = "NAME")]
    property: Option<String>,
    /// Also run each property's broken variant and require its proof to fail.
    #[arg(long)]
    broken: bool,
    /// Directory for the Yosys logs; written only when every run behaved as expected.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Test aid: prove each property on its broken variant as if it were
    /// the real RTL, so the proof fails (exit status 1).
    #[arg(long, hide = true)]
    sabotage: bool,
}

/// `sbrp area`: exit status 2 on any error (tools, library, parameters).
fn cmd_area(a: &AreaArgs) -> Result<()> {
    use sbrp_silicon::{AreaOptions, SweepEvent};
    let params = |entries, warps, lines| -> Result<PbParams> {
        let p = PbParams {
            entries,
            warps,
            lines,
            actr_bits: 8,
            window: a.window,
            policy: FlushPolicy::Window,
        };
        p.validate()?; // the CLI's own message (flag names)
        Ok(p)
    };
    let opts = AreaOptions {
        timing: !a.no_timing,
        out: a.out.clone(),
    };
    let csv_name = if a.sweep {
        for w in sbrp_silicon::SWEEP_WARPS {
            for e in sbrp_silicon::SWEEP_ENTRIES {
                params(e, w, 512)?;
            }
        }
        let r = sbrp_silicon::sweep(a.window, &opts, &mut |ev| match ev {
            SweepEvent::Synthesizing(p) => eprintln!("sbrp area: synthesizing {} ...", p.tag()),
            SweepEvent::Skipped(p, e) => eprintln!("sbrp area: skipped {}: {e}", p.tag()),
        })?;
        print!("{}", sbrp_silicon::format_sweep(&r.rows));
        "sweep.csv"
    } else {
        let p = params(a.entries, a.warps, a.lines)?;
        let r = sbrp_silicon::area(&p, &opts)?;
        print!("{}", sbrp_silicon::format_report(&r));
        "area.csv"
    };
    if let Some(out) = &a.out {
        println!("wrote report.txt and {csv_name} in {}", out.display());
    }
    Ok(())
}

/// `sbrp prove`: `Ok(false)` (exit status 1) when a proof fails or a broken
/// variant is proved; an error (exit status 2) for a missing tool, a tool
/// crash or a bad request.
fn cmd_prove(a: &ProveArgs) -> Result<bool> {
    let p = PbParams {
        entries: a.entries,
        warps: a.warps,
        lines: a.lines,
        actr_bits: 8,
        window: 6,
        policy: FlushPolicy::Window,
    };
    p.validate()?;
    if let Some(n) = &a.property {
        sbrp_silicon::property(n)?;
    }
    println!(
        "sbrp prove: entries {} warps {} lines {} actr_bits {} (yosys sat -tempinduct)",
        p.entries, p.warps, p.lines, p.actr_bits
    );
    let opts = sbrp_silicon::ProveOptions {
        property: a.property.clone(),
        broken: a.broken,
        out: a.out.clone(),
        sabotage: a.sabotage,
    };
    let r = sbrp_silicon::prove(&p, &opts)?;
    print!("{}", sbrp_silicon::format_proofs(&r));
    if !r.all_as_expected() {
        eprint!(
            "sbrp prove: check failed:\n{}",
            sbrp_silicon::format_proof_failures(&r)
        );
        return Ok(false);
    }
    if let Some(out) = &a.out {
        println!("wrote the logs in {}", out.display());
    }
    Ok(true)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match &cli.cmd {
        Cmd::Verilog { params, out } => cmd_verilog(params, out),
        Cmd::Cosim(a) => match cmd_cosim(a) {
            Ok(true) => Ok(()),
            Ok(false) => return ExitCode::from(1),
            Err(e) => Err(e),
        },
        Cmd::Area(a) => cmd_area(a),
        Cmd::Prove(a) => match cmd_prove(a) {
            Ok(true) => Ok(()),
            Ok(false) => return ExitCode::from(1),
            Err(e) => Err(e),
        },
        Cmd::BenchUnit {
            params,
            cycles,
            lockstep,
            stimulus,
        } => cmd_bench_unit(params, *cycles, *lockstep, *stimulus),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sbrp: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
