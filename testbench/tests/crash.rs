//! Crash consistency (`docs/checker.md`): the six apps at reduced sizes under
//! sbrp-near, epoch-near and sbrp-far, each run's durable image at every
//! durable point (the app's incremental invariant before and after
//! functional recovery) and the persistency checker at every durable point:
//! zero failures for the correct models. Negative controls: broken units
//! and a broken epoch model are caught, by the invariants or by the
//! checker. On sampled points of correct and broken runs the incremental
//! invariants agree with the whole ones (`App::check` after `App::recover`).
//!
//! Run in release for speed: `cargo test --release -p sbrp-testbench --test crash`.

mod common;

use sbrp_testbench::crash::{check_points, check_points_with, Points};
use sbrp_testbench::gpu_run::{resolve_config, ConfigSource, Overrides};
use sbrp_testbench::suite::{checker_model, run_app, AppRunOpts};
use sbrp_trace::check;
use sbrp_workloads::{app, App, Build};

fn apps() -> Vec<Box<dyn App>> {
    common::small_apps()
}

/// Points where the whole invariant is compared with the incremental one.
const COMPARED: usize = 40;

struct Outcome {
    durable_points: u64,
    tried: u64,
    broken: u64,
    violations: u64,
    first: String,
}

fn campaign(
    a: &dyn App,
    preset: &str,
    unit_fault: sbrp_sim_fast::Fault,
    gpu_fault: sbrp_gpu::sm::Fault,
    compare: bool,
) -> Outcome {
    campaign_with(a, preset, unit_fault, gpu_fault, compare, &[])
}

/// `campaign` with `--set` overrides.
fn campaign_with(
    a: &dyn App,
    preset: &str,
    unit_fault: sbrp_sim_fast::Fault,
    gpu_fault: sbrp_gpu::sm::Fault,
    compare: bool,
    set: &[(&str, &str)],
) -> Outcome {
    let overrides = Overrides {
        artifact: false,
        set: set
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    };
    let o = AppRunOpts {
        keep_record: true,
        unit_fault,
        gpu_fault,
        overrides: overrides.clone(),
        ..AppRunOpts::new(Build::Gpu)
    };
    let r = run_app(a, preset, &o).unwrap();
    assert!(r.finished, "{} under {preset}: {:?}", a.name(), r.failures);
    let ex = r.execution.unwrap();
    let init = a.initial_image();
    let p = check_points(a, &init, &ex, Points::Every, 2);
    if compare {
        let some = Points::Sample {
            n: COMPARED,
            seed: 1,
        };
        let [inc, whole] =
            [false, true].map(|full| check_points_with(a, &init, &ex, some, 2, full));
        assert!(
            a.incremental(&init).is_some(),
            "{} has no incremental invariant",
            a.name()
        );
        assert_eq!(
            (
                inc.tried,
                inc.failed,
                inc.first.map(|f| (f.cycle, f.message))
            ),
            (
                whole.tried,
                whole.failed,
                whole.first.map(|f| (f.cycle, f.message))
            ),
            "{} under {preset}: incremental and whole invariants disagree",
            a.name()
        );
    }
    let cfg = resolve_config(&ConfigSource::Preset(preset.into()), &overrides).unwrap();
    let c = check::check(&ex, &check::Options::new(checker_model(cfg.model))).unwrap();
    Outcome {
        durable_points: p.durable_points,
        tried: p.tried,
        broken: p.failed,
        violations: c.violations_total,
        first: p
            .first
            .map(|f| f.message)
            .or(c.violations.first().map(|v| v.to_string()))
            .unwrap_or_default(),
    }
}

#[test]
fn correct_models_hold_at_every_crash_point() {
    for a in apps() {
        for preset in ["sbrp-near", "epoch-near", "sbrp-far", "spb-near"] {
            let o = campaign(
                a.as_ref(),
                preset,
                sbrp_sim_fast::Fault::None,
                sbrp_gpu::sm::Fault::None,
                preset == "sbrp-near",
            );
            assert!(
                o.tried == o.durable_points && o.tried > 0,
                "{} {preset}: {} of {} points",
                a.name(),
                o.tried,
                o.durable_points
            );
            assert_eq!(
                (o.broken, o.violations),
                (0, 0),
                "{} under {preset}: {}",
                a.name(),
                o.first
            );
        }
    }
}

#[test]
fn a_unit_without_fsm_gating_is_caught_on_every_app() {
    use sbrp_sim_fast::Fault;
    // SRAD at 64 pixels a side and MQ at 40 batches never have their
    // fenced pairs apart in a flush; at 128 and 200 they do.
    let apps = apps().into_iter().map(|a| match a.name() {
        "srad" => app("srad", Some(128)).unwrap(),
        "mq" => app("mq", Some(200)).unwrap(),
        _ => a,
    });
    for a in apps {
        let o = campaign(
            a.as_ref(),
            "sbrp-near",
            Fault::IgnoreFsm,
            Default::default(),
            true,
        );
        assert!(
            o.broken + o.violations > 0,
            "{} ({} {}): ignore-fsm not caught at {} of {} points",
            a.name(),
            a.size(),
            a.size_unit(),
            o.tried,
            o.durable_points
        );
    }
}

#[test]
fn ordering_faults_only_the_checker_can_see_are_caught() {
    use sbrp_sim_fast::Fault;
    let apps = apps();
    // EvictIgnoreOrdering needs an eviction behind the evicting warp's own
    // fence, which the default L1 never makes at these sizes: below.
    for f in [Fault::DFenceNoWait, Fault::IgnoreCoalesceOrdering] {
        let caught: Vec<&str> = apps
            .iter()
            .filter(|a| {
                let o = campaign(a.as_ref(), "sbrp-near", f, Default::default(), false);
                o.violations > 0
            })
            .map(|a| a.name())
            .collect();
        assert!(!caught.is_empty(), "{f:?} caught by the checker on no app");
    }
}

#[test]
fn an_epoch_model_that_skips_its_flush_is_caught() {
    let a = app("gpkvs", Some(2048)).unwrap();
    // SPB's barriers flush the same way: skipping it is caught too.
    for preset in ["epoch-near", "spb-near"] {
        let o = campaign(
            a.as_ref(),
            preset,
            sbrp_sim_fast::Fault::None,
            sbrp_gpu::sm::Fault::SkipEpochFlush,
            true,
        );
        assert!(o.violations > 0 && o.broken > 0, "{preset}: {}", o.first);
    }
}

/// An L1 of 32 lines (4 ways) and a persist buffer of 32 entries evict
/// dirty PM lines while their warps' ordering entries wait: gpKVS's
/// invariant and the checker catch evictions that ignore them; the correct
/// unit passes under the same configuration.
#[test]
fn evictions_that_ignore_ordering_are_caught_with_a_small_l1() {
    use sbrp_sim_fast::Fault;
    let a = app("gpkvs", Some(2048)).unwrap();
    let small = [("pb.entries", "32"), ("l1.size", "4096"), ("l1.assoc", "4")];
    let ok = campaign_with(
        a.as_ref(),
        "sbrp-near",
        Fault::None,
        Default::default(),
        false,
        &small,
    );
    assert_eq!((ok.broken, ok.violations), (0, 0), "{}", ok.first);
    let o = campaign_with(
        a.as_ref(),
        "sbrp-near",
        Fault::EvictIgnoreOrdering,
        Default::default(),
        false,
        &small,
    );
    assert!(
        o.broken > 0 && o.violations > 0,
        "{} broken, {} violations",
        o.broken,
        o.violations
    );
}
