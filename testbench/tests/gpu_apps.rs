//! The six applications on the GPU model (`docs/model.md`, "Benchmarks"), at
//! reduced sizes: each finishes under every persistency model with its
//! invariant holding on the durable PM image at the end; its recovery runs;
//! and with the Verilated RTL shadowing two SMs' persist buffers, zero
//! mismatches.

use sbrp_testbench::gpu_run::Shadow;
use sbrp_testbench::suite::{run_app, AppRunOpts};
use sbrp_workloads::{app, App, Build};

/// Small sizes: one wave or less of each app's launch shape.
fn apps() -> Vec<Box<dyn App>> {
    [
        ("gpkvs", 2048),
        ("hm", 300),
        ("srad", 64),
        ("reduction", 262_144),
        ("mq", 40),
        ("scan", 512 * 60),
    ]
    .iter()
    .map(|(n, s)| app(n, Some(*s)).unwrap())
    .collect()
}

fn check(a: &dyn App, preset: &str, build: Build, recovery: bool, shadow: Shadow) {
    let r = run_app(
        a,
        preset,
        &AppRunOpts {
            recovery,
            shadow,
            check_image: true,
            ..AppRunOpts::new(build)
        },
    )
    .unwrap();
    assert!(
        r.ok(),
        "{} under {preset} (recovery {recovery}): finished {} failures {:?} image {:?} mismatch {:?}",
        a.name(),
        r.finished,
        r.failures,
        r.image,
        r.mismatch.as_ref().map(|m| m.to_string())
    );
    assert!(r.cycles > 0 && r.instrs > 0);
}

#[test]
fn every_app_keeps_its_invariant_under_every_model() {
    for a in apps() {
        for (preset, build) in [
            ("epoch-far", Build::Gpm),
            ("epoch-near", Build::Gpu),
            ("gpm-far", Build::Gpu),
            ("sbrp-far", Build::Gpu),
            ("sbrp-near-dev", Build::Gpu),
            ("sbrp-far-eadr", Build::Gpu),
        ] {
            check(a.as_ref(), preset, build, false, Shadow::None);
        }
    }
}

#[test]
fn every_app_recovers_under_epoch_and_sbrp() {
    for a in apps() {
        for preset in ["epoch-near", "sbrp-near"] {
            check(a.as_ref(), preset, Build::Gpu, true, Shadow::None);
        }
    }
}

#[test]
fn rtl_shadows_two_sms_on_every_app() {
    for a in apps() {
        check(a.as_ref(), "sbrp-near", Build::Gpu, false, Shadow::First(2));
    }
}
