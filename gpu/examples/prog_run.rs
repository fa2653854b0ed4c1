//! Runs a program file (`.prog`) once under a preset and prints the cycles
//! and the wall time (a development aid for profiling the model on the
//! applications; `sbrp run` is the command).
//! `cargo run --release -p sbrp-gpu --example prog_run -- FILE PRESET`

use sbrp_gpu::{Gpu, RunOpts};

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let file = a.first().expect("FILE PRESET");
    let preset = a.get(1).map(String::as_str).unwrap_or("sbrp-near");
    let text = std::fs::read_to_string(file).expect("read the program");
    let prog = sbrp_trace::program::parse_program(&text, file).expect("parse");
    let cfg = sbrp_gpu::presets::preset(preset).expect("preset");
    let mut gpu = Gpu::with_model_units(&cfg).unwrap();
    let t0 = std::time::Instant::now();
    let r = gpu.run(&prog, RunOpts::default());
    println!(
        "{preset}: {} cycles, {} instrs, {:.3} s, finished {}",
        r.cycles,
        r.sm.instrs,
        t0.elapsed().as_secs_f64(),
        r.finished
    );
}
