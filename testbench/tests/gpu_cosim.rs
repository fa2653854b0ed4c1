//! The Verilated RTL shadows persist buffers inside the GPU model
//! (`sbrp run --cosim`): multi-SM programs with every SM's unit compared
//! with the reference model each cycle it is stepped, zero mismatches.

use std::path::PathBuf;

use sbrp_testbench::gpu_run::{run_program, ConfigSource, GpuRunOpts, Shadow};

fn run(file: PathBuf, preset: &str) {
    let mut o = GpuRunOpts::new(file.clone(), ConfigSource::Preset(preset.into()));
    o.shadow = Shadow::All;
    let out = run_program(&o).unwrap();
    assert!(out.shadowed >= 2, "{}", file.display());
    assert!(
        out.mismatch.is_none(),
        "{}: {}",
        file.display(),
        out.mismatch.as_ref().unwrap().0
    );
    assert!(
        out.ok(),
        "{}: {:?} {:?}",
        file.display(),
        out.report.failures,
        out.failures
    );
    assert!(out.report.sm.unit_steps > 0);
}

#[test]
fn rtl_shadows_every_sm_on_a_multi_kernel_program() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    run(root.join("programs/example.prog"), "sbrp-far");
}

#[test]
fn rtl_shadows_every_sm_on_cross_sm_litmus_traces() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("litmus");
    for t in [
        "07_device_release_acquire",
        "18_lost_update_across_sms",
        "12_gpkvs_transaction",
    ] {
        run(root.join(format!("{t}.trace")), "sbrp-near");
    }
}
