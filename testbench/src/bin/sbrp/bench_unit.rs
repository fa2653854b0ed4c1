//! `sbrp bench-unit`: the reference model's speed in unit-cycles per second
//! on one core, on the front end's workload stimulus and on raw stimulus;
//! optionally RTL (Verilator) + model in lockstep.

use anyhow::Result;
use clap::{Args, ValueEnum};
use sbrp_testbench::speed::{time_lockstep, time_model, Stimulus as Which};

use crate::args::{print_params, ParamArgs};
use crate::Verdict;

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

#[derive(Args)]
pub struct BenchUnitArgs {
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
}

pub fn run(a: &BenchUnitArgs) -> Result<Verdict> {
    let p = a.params.params()?;
    print_params(&p);
    let which: &[Which] = match a.stimulus {
        Stimulus::Workload => &[Which::Workload],
        Stimulus::Raw => &[Which::Raw],
        Stimulus::Both => &[Which::Workload, Which::Raw],
    };
    for w in which {
        let r = time_model(&p, *w, a.cycles)?;
        println!(
            "model, {} stimulus ({:.0}% of cycles with a request): {} cycles in {:.3} s: {:.1} M unit-cycles/s ({} flushes){}",
            w.name(),
            r.busy * 100.0,
            r.cycles,
            r.secs,
            r.rate() / 1e6,
            r.flushes,
            cpu_note(r.cpu_secs, r.cpu_rate(), "unit-cycles")
        );
    }
    if a.lockstep {
        let r = time_lockstep(&p, a.cycles.min(20_000_000))?;
        if let Some(m) = &r.mismatch {
            print!("{m}");
            println!("FAIL lockstep mismatch while timing");
            return Ok(Verdict::Fail);
        }
        println!(
            "lockstep rtl+model: {} cycles in {:.3} s: {:.2} M cycles/s (no VCD){}",
            r.cycles,
            r.secs,
            r.rate() / 1e6,
            cpu_note(r.cpu_secs, r.cpu_rate(), "cycles")
        );
    }
    Ok(Verdict::Pass)
}

/// "; CPU 1.234 s: 5.6 M cycles per CPU second" (the timing thread's CPU
/// time: the rate a loaded machine's wall clock hides), or nothing.
fn cpu_note(secs: Option<f64>, rate: Option<f64>, what: &str) -> String {
    match (secs, rate) {
        (Some(s), Some(r)) => format!("; CPU {s:.3} s: {:.2} M {what} per CPU second", r / 1e6),
        _ => String::new(),
    }
}
