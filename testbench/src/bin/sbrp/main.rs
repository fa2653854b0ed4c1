//! The `sbrp` command: one module per subcommand, each parsing its
//! arguments, calling one library function and printing the result.
//!
//! Exit status, the same for every subcommand: 0 everything passed; 1 a check
//! failed (lockstep mismatch, expectation, proof); 2 usage or environment
//! error (bad argument, bad input file, missing tool).

mod apps;
mod area;
mod args;
mod bench_gpu;
mod bench_unit;
mod check;
mod cosim;
mod crash;
mod fuzz_gpu;
mod mutate;
mod prove;
mod reproduce;
mod run;
mod sweep;
mod verilog;
mod wavediff;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The help text's statement of the exit-code rule.
const EXIT_CODES: &str = "Exit status: 0 pass; 1 a check failed (mismatch, expectation, proof); \
2 usage or environment error (bad argument, bad input file, missing tool).";

#[derive(Parser)]
#[command(
    name = "sbrp",
    about = "Generator and verification bench for the SBRP persist buffer unit",
    version,
    after_help = EXIT_CODES
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Emit the persist buffer RTL as Verilog (top module `sbrp_pb`) into DIR/sbrp_pb.v.
    #[command(after_help = EXIT_CODES)]
    Verilog(verilog::VerilogArgs),
    /// Co-simulate: warp traces through the SM front end into the Verilated RTL
    /// and the reference model in lockstep, compared every cycle.
    #[command(after_help = EXIT_CODES)]
    Cosim(cosim::CosimArgs),
    /// Area and timing: synthesize with Yosys onto the OSU 0.18 um cells, report
    /// area per stored bit and per block, read ports per array, the measured FO4,
    /// stage and I/O paths in FO4 and fmax (OpenSTA).
    #[command(after_help = EXIT_CODES)]
    Area(area::AreaArgs),
    /// Formal checks of the unit's properties (yosys-abc BMC or PDR on a
    /// port-level environment), each with a broken variant.
    #[command(after_help = EXIT_CODES)]
    Prove(prove::ProveArgs),
    /// Measure the reference model's speed (unit-cycles per second, one core).
    #[command(after_help = EXIT_CODES)]
    BenchUnit(bench_unit::BenchUnitArgs),
    /// Write one of the paper's six applications as a program file.
    #[command(after_help = EXIT_CODES)]
    Trace(apps::TraceArgs),
    /// Run one application on the GPU model under a preset (optionally with
    /// the RTL shadowing the persist buffers).
    #[command(after_help = EXIT_CODES)]
    Bench(apps::BenchArgs),
    /// Run the six applications under the paper's configurations in
    /// parallel and print Figures 6-9 and 11 and the SPB table.
    #[command(after_help = EXIT_CODES)]
    Suite(apps::SuiteArgs),
    /// Sweep apps x presets over a grid of `--set` values (or Figure 10, or the ladder) in
    /// parallel, each point cached so that a rerun resumes.
    #[command(after_help = EXIT_CODES)]
    Sweep(sweep::SweepArgs),
    /// Measure the GPU model's speed (simulated warp instructions per second,
    /// one core) on the synthetic benchmark program.
    #[command(after_help = EXIT_CODES)]
    BenchGpu(bench_gpu::BenchGpuArgs),
    /// Run a whole program (or a litmus trace) on the 30-SM GPU model under a
    /// preset or configuration: cycles, misses, traffic, flushes, stalls.
    #[command(after_help = EXIT_CODES)]
    Run(run::RunArgs),
    /// Check a saved execution record against the persistency model's rules
    /// (persist memory order at every durable point, durability of fences
    /// and releases, scoped persistency bugs).
    #[command(after_help = EXIT_CODES)]
    Check(check::CheckArgs),
    /// A crash campaign: an app's durable PM image at every durable point of
    /// a run (or a sample), its invariant before and after recovery, the
    /// persistency checker, and recovery kernels run on the GPU model.
    #[command(after_help = EXIT_CODES)]
    Crash(crash::CrashArgs),
    /// Fuzz the program parser and the GPU model: mutated and generated
    /// programs under several presets; a panic, a run past its limits or a
    /// round-trip difference is a finding (exit 1).
    #[command(after_help = EXIT_CODES)]
    FuzzGpu(fuzz_gpu::FuzzGpuArgs),
    /// The whole report in one command: RTL emitted, linted and
    /// synthesised, lockstep, proofs, the study with Figure 10, crash
    /// campaigns, area; DIR/index.html links every table, plot, waveform
    /// and the Verilog with the command that produced it.
    #[command(after_help = EXIT_CODES)]
    Reproduce(reproduce::ReproduceArgs),
    /// Compare two waveforms (VCD) signal by signal over the names they
    /// share: the first differing cycle and signals (exit 1).
    #[command(after_help = EXIT_CODES)]
    Wavediff(wavediff::WaveDiffArgs),
    /// Mutation campaign: automatic single-site mutants of the generated
    /// Verilog through lockstep suites and proofs, kill counts per check.
    #[command(after_help = EXIT_CODES)]
    Mutate(mutate::MutateArgs),
}

/// What a command found: every check passed, or one failed (exit 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail,
}

impl Verdict {
    pub fn of(ok: bool) -> Verdict {
        if ok {
            Verdict::Pass
        } else {
            Verdict::Fail
        }
    }
}

fn main() -> ExitCode {
    // Output piped into `head` and closed early ends the program quietly,
    // as other command-line tools do, instead of a panic in `println!`.
    #[cfg(unix)]
    // SAFETY: restores the default action of one signal before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let r = match &cli.cmd {
        Cmd::Verilog(a) => verilog::run(a),
        Cmd::Cosim(a) => cosim::run(a),
        Cmd::Area(a) => area::run(a),
        Cmd::Prove(a) => prove::run(a),
        Cmd::BenchUnit(a) => bench_unit::run(a),
        Cmd::Run(a) => run::run(a),
        Cmd::Trace(a) => apps::trace(a),
        Cmd::Bench(a) => apps::bench(a),
        Cmd::Suite(a) => apps::suite(a),
        Cmd::Sweep(a) => sweep::run(a),
        Cmd::BenchGpu(a) => bench_gpu::run(a),
        Cmd::Check(a) => check::run(a),
        Cmd::Crash(a) => crash::run(a),
        Cmd::Mutate(a) => mutate::run(a),
        Cmd::Reproduce(a) => reproduce::run(a),
        Cmd::Wavediff(a) => wavediff::run(a),
        Cmd::FuzzGpu(a) => fuzz_gpu::run(a),
    };
    match r {
        Ok(Verdict::Pass) => ExitCode::SUCCESS,
        Ok(Verdict::Fail) => ExitCode::from(1),
        Err(e) => {
            eprintln!("sbrp: error: {}", printable(&format!("{e:#}")));
            ExitCode::from(2)
        }
    }
}

/// A message with the control characters its input may carry (a damaged
/// file's bytes) shown as escapes, so they cannot act on the terminal.
fn printable(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\n' | '\t' => c.to_string(),
            c if c.is_control() => c.escape_unicode().to_string(),
            c => c.to_string(),
        })
        .collect()
}
