//! Profiling aid: steps the reference model on the fuzz suite's raw
//! stimulus. The benchmark of record is `sbrp bench-unit`.

use sbrp_iface::stimulus::RawStimulus;
use sbrp_iface::{PbIn, PbParams, PbUnit};
use sbrp_sim_fast::PbModel;

fn main() {
    let p = PbParams::default();
    // A closed-loop ring: the stimulus learns hooks and acks from the model.
    let mut rec = PbModel::new(&p).unwrap();
    let inputs: Vec<PbIn> = RawStimulus::new(&p, 7).record(&mut rec, 1 << 16);
    let cycles: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    let mut m = PbModel::new(&p).unwrap();
    let mut flushes = 0u64;
    let t = std::time::Instant::now();
    for c in 0..cycles {
        let i = &inputs[c as usize & 0xffff];
        flushes += (m.step(i).flush_valid && i.flush_ready) as u64;
    }
    let s = t.elapsed().as_secs_f64();
    println!(
        "{:.1} M cycles/s ({flushes} flushes)",
        cycles as f64 / s / 1e6
    );
}
