//! Runs the synthetic benchmark program once and prints the report (a
//! development aid; `sbrp bench-gpu` is the benchmark).
//! `cargo run --release -p sbrp-gpu --example synth_run -- PRESET KERNELS CTAS WARPS INSTRS`

use sbrp_gpu::{Gpu, RunOpts};
use sbrp_trace::program::SynthProgram;

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let n = |i: usize, d: u32| a.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let preset = a.first().map(String::as_str).unwrap_or("sbrp-near");
    let prog = SynthProgram::new(n(1, 1), n(2, 30), n(3, 8), n(4, 64), 1).unwrap();
    let cfg = sbrp_gpu::presets::preset(preset).expect("preset");
    let mut gpu = Gpu::with_model_units(&cfg).unwrap();
    let t0 = std::time::Instant::now();
    let r = gpu.run(&prog, RunOpts::default());
    let s = t0.elapsed().as_secs_f64();
    println!(
        "{preset}: {} cycles, {} instrs, {:.3} s, finished {}",
        r.cycles, r.sm.instrs, s, r.finished
    );
    println!("sm {:?}", r.sm);
    println!("mem {:?}", r.mem);
    println!("stalls {:?}", r.stalls);
    for f in &r.failures {
        println!("failure: {f}");
    }
    if let Some(d) = r.deadlock {
        println!("{}", &d[..d.len().min(3000)]);
    }
}
