//! Every litmus trace through the 30-SM GPU model under every preset
//! (`docs/testplan.md`, "GPU model"): no persistency model may show a
//! forbidden durable state, break per-warp persist order or lose a store;
//! under SBRP the buffer's own expectations hold too (`gpu_run::skip_reason`
//! and `LATENCY_DEPENDENT` say which are not checked, and why). Negative
//! controls: a model that skips the epoch flush, or SBRP that drops device
//! scope, must be caught.

use std::path::{Path, PathBuf};

use sbrp_gpu::sm::Fault;
use sbrp_testbench::gpu_run::{run_program, ConfigSource, GpuRunOpts};

fn litmus() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("litmus");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "trace"))
        .collect();
    v.sort();
    v
}

fn run(f: &Path, preset: &str, fault: Fault) -> (bool, String) {
    let mut o = GpuRunOpts::new(f.to_path_buf(), ConfigSource::Preset(preset.into()));
    o.fault = fault;
    let out = run_program(&o).unwrap();
    let why = format!(
        "{} under {preset}: finished {} failures {:?} deadlock {:?} expectations {:?}",
        f.display(),
        out.report.finished,
        out.report.failures,
        out.report.deadlock,
        out.failures
            .iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
    );
    (out.ok(), why)
}

#[test]
fn every_litmus_trace_passes_under_every_preset() {
    let presets: Vec<&str> = sbrp_gpu::presets::presets().iter().map(|p| p.0).collect();
    assert!(presets.len() >= 9);
    let mut bad = vec![];
    for f in litmus() {
        for p in &presets {
            let (ok, why) = run(&f, p, Fault::None);
            if !ok {
                bad.push(why);
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn skipping_the_epoch_flush_is_caught() {
    // SPB's barriers are the same flush: without it SPB is caught too.
    for preset in ["epoch-near", "spb-near"] {
        let caught = litmus()
            .iter()
            .filter(|f| !run(f, preset, Fault::SkipEpochFlush).0)
            .count();
        assert!(
            caught > 0,
            "no litmus trace noticed {preset} without flushes"
        );
    }
}

#[test]
fn dropping_device_scope_is_caught() {
    let caught: Vec<String> = litmus()
        .iter()
        .filter(|f| !run(f, "sbrp-near", Fault::DropScope).0)
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        !caught.is_empty(),
        "no litmus trace noticed SBRP without device scope"
    );
}
