//! Speed of the SM front end with the reference model: the random suite's
//! model-only loop (chained random traces, 2 SMs, execution recorded and its
//! `alldurable` evaluated), in cycles per second. Usage:
//! `cargo run --release -p sbrp-sim-fast --example frontend_speed [CYCLES]`.

use sbrp_iface::{PbParams, PbUnit};
use sbrp_sim_fast::frontend::{FrontEnd, FrontEndConfig};
use sbrp_sim_fast::randgen::{generate, RandSpec};
use sbrp_sim_fast::PbModel;
use sbrp_trace::{evaluate, Expect, Expectation};

fn main() {
    let cycles: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let p = PbParams::default();
    let cfg = FrontEndConfig::default();
    let t0 = std::time::Instant::now();
    let (mut elapsed, mut chunk, mut persists) = (0u64, 0u32, 0u64);
    while elapsed < cycles {
        let spec = RandSpec::random_suite(&p, cfg.l1_ways, cfg.line_bytes, chunk);
        let mut t = generate(&spec, chunk as u64);
        t.expects.push(Expectation {
            line: 0,
            what: Expect::AllDurable,
        });
        let units: Vec<Box<dyn PbUnit>> = (0..2)
            .map(|_| Box::new(PbModel::new(&p).expect("default parameters")) as Box<dyn PbUnit>)
            .collect();
        let mut fe = FrontEnd::new(units, cfg.clone());
        fe.reset();
        fe.load(&t).expect("generated traces fit");
        fe.run(cycles - elapsed, |_| true);
        let fails = evaluate(&t.expects, &fe.execution());
        let cut = elapsed + fe.summary.cycles >= cycles;
        assert!(fails.is_empty() || cut, "chunk {chunk}: {fails:?}");
        elapsed += fe.summary.cycles;
        persists += fe.summary.persists;
        chunk += 1;
    }
    let s = t0.elapsed().as_secs_f64();
    println!(
        "{elapsed} cycles, {chunk} chunks, {persists} persists: {:.3} M cycles/s",
        elapsed as f64 / s / 1e6
    );
}
