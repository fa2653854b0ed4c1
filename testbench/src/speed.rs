//! Speed of the reference model (`sbrp bench-unit`): the timed loops and the
//! stimuli they replay. Stimulus is generated before timing, so only the
//! unit is timed. Each run is timed twice: wall clock, and the timing
//! thread's CPU time, which a shared machine's other load does not inflate.

use std::time::Instant;

use crate::error::Result;
use sbrp_iface::stimulus::RawStimulus;
use sbrp_iface::{PbIn, PbParams, PbUnit};
use sbrp_sim_fast::PbModel;

use crate::lockstep::Mismatch;
use crate::suites::{run_fuzz, workload_stimulus, Rtl, RunOpts};

/// Which stimulus the model is timed on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stimulus {
    /// The SM front end's inputs on the random suite's warp traces.
    Workload,
    /// Any request, ack or drain in any cycle.
    Raw,
}

impl Stimulus {
    pub fn name(self) -> &'static str {
        match self {
            Stimulus::Workload => "workload",
            Stimulus::Raw => "raw",
        }
    }
}

/// One timed run of the model alone.
#[derive(Clone, Debug)]
pub struct ModelTiming {
    pub cycles: u64,
    pub secs: f64,
    /// CPU time of the timing thread over the same span (None: unavailable).
    pub cpu_secs: Option<f64>,
    /// Share of the stimulus's cycles that carry a request.
    pub busy: f64,
    pub flushes: u64,
}

/// One timed lockstep run (RTL + model).
#[derive(Clone, Debug)]
pub struct LockstepTiming {
    pub cycles: u64,
    pub secs: f64,
    /// CPU time of the timing thread over the same span (None: unavailable).
    pub cpu_secs: Option<f64>,
    /// The first divergence, if any (the run stops there).
    pub mismatch: Option<Mismatch>,
}

/// Cycles per second.
fn rate(cycles: u64, secs: f64) -> f64 {
    cycles as f64 / secs
}

/// CPU seconds the calling thread has used (`CLOCK_THREAD_CPUTIME_ID`).
fn thread_cpu_secs() -> Option<f64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (r == 0).then_some(ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
}

/// Wall and thread CPU seconds of `f`.
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64, Option<f64>) {
    let c0 = thread_cpu_secs();
    let t = Instant::now();
    let r = f();
    let secs = t.elapsed().as_secs_f64();
    let cpu = thread_cpu_secs().zip(c0).map(|(b, a)| b - a);
    (r, secs, cpu)
}

impl ModelTiming {
    pub fn rate(&self) -> f64 {
        rate(self.cycles, self.secs)
    }
    /// Cycles per CPU second of the timing thread.
    pub fn cpu_rate(&self) -> Option<f64> {
        self.cpu_secs.map(|c| rate(self.cycles, c))
    }
}

impl LockstepTiming {
    pub fn rate(&self) -> f64 {
        rate(self.cycles, self.secs)
    }
    /// Cycles per CPU second of the timing thread.
    pub fn cpu_rate(&self) -> Option<f64> {
        self.cpu_secs.map(|c| rate(self.cycles, c))
    }
}

/// The timed loop, kept out of line so that its code does not depend on what
/// the caller inlines. `inputs.len()` is a power of two.
#[inline(never)]
fn step_model(m: &mut PbModel, inputs: &[PbIn], cycles: u64) -> u64 {
    let ring = inputs.len() - 1;
    let mut flushes = 0u64;
    for c in 0..cycles {
        let i = &inputs[c as usize & ring];
        flushes += (m.step(i).flush_valid && i.flush_ready) as u64;
    }
    flushes
}

/// `n` cycles of closed-loop raw stimulus, recorded against the model.
pub fn raw_ring(p: &PbParams, n: usize) -> Result<Vec<PbIn>> {
    let mut m = PbModel::new(p)?;
    Ok(RawStimulus::new(p, 7).record(&mut m, n))
}

/// Times the model alone for `cycles` cycles on a replayed ring of `which`.
pub fn time_model(p: &PbParams, which: Stimulus, cycles: u64) -> Result<ModelTiming> {
    let inputs: Vec<PbIn> = match which {
        // Up to 256 K cycles of front-end output (3 MB, read in order).
        Stimulus::Workload => {
            workload_stimulus(p, 7, cycles.next_power_of_two().clamp(1 << 12, 1 << 18))?
        }
        // A ring small enough to stay in cache, recorded from a closed-loop
        // run (the stimulus learns hooks and acks from the model's outputs).
        Stimulus::Raw => raw_ring(p, 1 << 16)?,
    };
    let mut m = PbModel::new(p)?;
    let (flushes, secs, cpu_secs) = timed(|| step_model(&mut m, &inputs, cycles));
    Ok(ModelTiming {
        cycles,
        secs,
        cpu_secs,
        busy: inputs.iter().filter(|i| i.req_valid).count() as f64 / inputs.len() as f64,
        flushes,
    })
}

/// Times RTL (Verilator) + model in lockstep on raw stimulus, no waveform,
/// with the profile-guided build the `sbrp` command uses.
pub fn time_lockstep(p: &PbParams, cycles: u64) -> Result<LockstepTiming> {
    let opts = RunOpts {
        pgo: true,
        ..RunOpts::new(*p)
    };
    let rtl = Rtl::build(&opts)?;
    let (a, b) = crate::suites::rtl_and_model(&opts, &rtl)?;
    let (mismatch, secs, cpu_secs) = timed(|| run_fuzz(7, cycles, a, b));
    Ok(LockstepTiming {
        cycles,
        secs,
        cpu_secs,
        mismatch,
    })
}
