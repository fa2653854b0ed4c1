//! The SM front end driving the reference model: random traces finish without
//! deadlock, every last store becomes durable, and the stress targets (full
//! PB, evictions, waits) are reached.

use sbrp_iface::{FlushPolicy, PbParams, PbUnit};
use sbrp_sim_fast::frontend::{FrontEnd, FrontEndConfig};
use sbrp_sim_fast::randgen::{generate, RandSpec};
use sbrp_sim_fast::trace::{Expect, Expectation};
use sbrp_sim_fast::PbModel;

fn run(p: PbParams, sms: u32, warps: u32, seed: u64, ordering_percent: u64) -> FrontEnd {
    let units: Vec<Box<dyn PbUnit>> = (0..sms)
        .map(|_| Box::new(PbModel::new(&p).unwrap()) as Box<dyn PbUnit>)
        .collect();
    let cfg = FrontEndConfig::default();
    let mut fe = FrontEnd::new(units, cfg.clone());
    fe.reset();
    let spec = RandSpec {
        sms,
        warps_per_sm: warps,
        ops_per_warp: 150,
        l1_lines: p.lines,
        l1_ways: cfg.l1_ways,
        line_bytes: cfg.line_bytes,
        flag_prefix: String::new(),
        ordering_percent,
    };
    let mut t = generate(&spec, seed);
    t.expects.push(Expectation {
        line: 0,
        what: Expect::AllDurable,
    });
    fe.load(&t).unwrap();
    fe.run(5_000_000, |_| true);
    assert!(fe.summary.deadlock.is_none(), "{:?}", fe.summary.deadlock);
    assert!(fe.summary.finished, "seed {seed}: not finished");
    let fails = fe.check(&t);
    assert!(fails.is_empty(), "seed {seed}: {fails:?}");
    fe
}

#[test]
fn random_traces_finish_and_persist_everything() {
    for policy in [FlushPolicy::Window, FlushPolicy::Eager, FlushPolicy::Lazy] {
        for seed in 0..4 {
            let p = PbParams {
                entries: 16,
                warps: 8,
                lines: 64,
                policy,
                ..PbParams::default()
            };
            let fe = run(p, 2, 8, seed, 29);
            let s = &fe.summary;
            assert!(s.persists > 500 && s.flushes > 0);
        }
    }
}

#[test]
fn stress_reaches_full_buffer_evictions_and_waits() {
    let p = PbParams {
        entries: 16,
        warps: 8,
        lines: 64,
        ..PbParams::default()
    };
    // Frequent ordering: full PB, refused and waiting requests.
    let s = run(p, 1, 8, 3, 29).summary;
    assert_eq!(s.max_occupancy, 16, "{s:?}");
    assert!(s.waits > 0 && s.refused > 0, "{s:?}");
    // Rare ordering: evictions of buffered lines go through (open point 12
    // refuses them while any ordering entry lies before the line's entry).
    let s = run(p, 1, 8, 3, 1).summary;
    assert!(s.evict_flushes > 0, "{s:?}");
}
