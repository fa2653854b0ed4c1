//! Every app's programs survive the program file form: written by
//! `write_program`, read by `parse_program`, each CTA's code is the
//! generator's, and the GPU model reports the same run for both (the
//! `sbrp trace` -> `sbrp run --trace` path; HM's negative bases included).

use sbrp_gpu::{Gpu, RunOpts};
use sbrp_trace::program::{parse_program, write_program, Program};
use sbrp_workloads::{app, Build};

/// Each app at a small size; HM at 2500 keys has strided accesses whose
/// lane 0 lies below address 0 (the round-trip bug of issue 26).
const SIZES: [(&str, u64); 6] = [
    ("gpkvs", 2048),
    ("hm", 2500),
    ("srad", 64),
    ("reduction", 262_144),
    ("mq", 40),
    ("scan", 512 * 60),
];

fn text_of(p: &dyn Program) -> String {
    let mut out = Vec::new();
    write_program(p, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// Reads `p`'s text back and compares it with `p`, CTA by CTA.
fn round_trip(p: &dyn Program, what: &str) -> (String, sbrp_trace::program::FileProgram) {
    let text = text_of(p);
    let q = parse_program(&text, what).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(q.kernels(), p.kernels(), "{what}");
    for (k, kernel) in p.kernels().iter().enumerate() {
        for c in 0..kernel.grid {
            assert!(q.cta(k, c) == p.cta(k, c), "{what}: kernel {k} CTA {c}");
        }
    }
    (text, q)
}

#[test]
fn every_app_program_round_trips_and_runs_the_same() {
    let cfg = sbrp_gpu::presets::preset("sbrp-near").unwrap();
    for (name, size) in SIZES {
        let a = app(name, Some(size)).unwrap();
        let p = a.program(Build::Gpu);
        let (text, q) = round_trip(p.as_ref(), name);
        if name == "hm" {
            assert!(text.contains(" -0x"), "HM has no negative base at {size}");
        }
        let run = |prog: &dyn Program| {
            let mut g = Gpu::with_model_units(&cfg).unwrap();
            serde_json::to_string(&g.run(prog, RunOpts::default())).unwrap()
        };
        let (direct, read) = (run(p.as_ref()), run(&q));
        assert!(direct.contains("\"finished\":true"), "{name}");
        assert_eq!(direct, read, "{name}: the file runs differently");
        let crash = a.crash_image();
        round_trip(a.recovery(&crash).as_ref(), &format!("{name} recovery"));
    }
}
