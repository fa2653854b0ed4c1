//! The six applications on the GPU model (`docs/model.md`, "Benchmarks"), at
//! reduced sizes: each finishes under every persistency model with its
//! invariant holding on the durable PM image at the end; its recovery runs;
//! and with the Verilated RTL shadowing two SMs' persist buffers, zero
//! mismatches; skipping the units' replay loops changes no result.

mod common;

use sbrp_gpu::{Gpu, RunOpts};
use sbrp_testbench::gpu_run::Shadow;
use sbrp_testbench::suite::{run_app, AppRunOpts};
use sbrp_trace::program::{Program, SynthProgram};
use sbrp_workloads::{app, App, Build};

fn apps() -> Vec<Box<dyn App>> {
    common::small_apps()
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
            ("spb-far", Build::Gpu),
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

/// The replay-loop skipping (`docs/model.md`, "Event loop") is exact: every
/// app and the synthetic benchmark program report the same under SBRP far
/// and near with it and without it (every busy unit stepped every cycle),
/// and the skipping runs do skip. MQ at its artifact size, cut at 400,000
/// cycles, has stores and loads replaying evictions and stores among
/// ordering ops: it fails (checked by hand) when the skipping resends a
/// store's eviction to the same victim, lets a warp send while another
/// request in flight pins its L1 slot, or has a store's eviction ignore the
/// pins.
#[test]
fn skipping_replay_loops_changes_no_result() {
    let apps = apps();
    let mq = app("mq", None).unwrap();
    let synth = SynthProgram::new(1, 60, 8, 160, 7).unwrap();
    let mut progs: Vec<(Box<dyn Program + '_>, Option<u64>)> =
        apps.iter().map(|a| (a.program(Build::Gpu), None)).collect();
    progs.push((Box::new(synth), None));
    progs.push((mq.program(Build::Gpu), Some(400_000)));
    for preset in ["sbrp-far", "sbrp-near"] {
        let cfg = sbrp_gpu::presets::preset(preset).unwrap();
        let (mut skipped, mut evict_replays) = (0, 0);
        for (p, max_cycles) in &progs {
            let run = |no_skip| {
                let mut g = Gpu::with_model_units(&cfg).unwrap();
                g.run(
                    p.as_ref(),
                    RunOpts {
                        no_skip,
                        max_cycles: *max_cycles,
                        ..RunOpts::default()
                    },
                )
            };
            let mut a = run(false);
            let mut b = run(true);
            assert!(
                (a.finished && b.finished) || max_cycles.is_some(),
                "{} under {preset}",
                p.name()
            );
            evict_replays += a.sm.replays_evict;
            assert_eq!(b.sm.unit_steps_skipped, 0);
            skipped += a.sm.unit_steps_skipped;
            a.sm.unit_steps_skipped = 0;
            assert!(a.sm.visits <= b.sm.visits, "{} under {preset}", p.name());
            (a.sm.visits, b.sm.visits) = (0, 0);
            assert_eq!(
                serde_json::to_string(&a).unwrap(),
                serde_json::to_string(&b).unwrap(),
                "{} under {preset}: skipping changed the run",
                p.name()
            );
        }
        assert!(skipped > 10_000, "{preset}: {skipped} cycles skipped");
        assert!(
            evict_replays > 1_000,
            "{preset}: {evict_replays} eviction replays"
        );
    }
}
