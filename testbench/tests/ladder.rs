//! The ladder (`sbrp sweep --figure ladder`) and the idealised unit it
//! starts from (`gpu/src/ideal/`): each step adds one switch; the
//! idealised unit keeps persist order and the apps' invariants at every
//! durable point at every step; its deliberate faults are caught (so the
//! ladder's checks check); its switches are refused without it.

mod common;

use common::{outcome, run_sbrp};
use sbrp_testbench::gpu_run::Overrides;
use sbrp_testbench::ladder::{self, STEPS};

fn sbrp(args: &[&str]) -> (i32, String, String) {
    outcome(run_sbrp(args, &[]))
}

#[test]
fn each_rung_adds_one_switch_and_the_v2_unit_has_none() {
    let keys = |i: usize| -> Vec<&str> { STEPS[i].settings.iter().map(|s| s.0).collect() };
    let v2 = STEPS.iter().position(|s| s.label == "v2 unit").unwrap();
    assert_eq!(keys(0), ["ideal.unit"]);
    for (i, step) in STEPS.iter().enumerate().take(v2).skip(1) {
        let (a, b) = (keys(i - 1), keys(i));
        assert_eq!(b.len(), a.len() + 1, "{}", step.label);
        assert_eq!(&b[..a.len()], &a[..], "{}", step.label);
    }
    assert!(STEPS[v2].settings.is_empty());
    // The last rung before the v2 unit sets every switch of the idealised unit.
    let all = keys(v2 - 1);
    for k in [
        "ideal.registered",
        "ideal.replay",
        "ideal.epochs",
        "ideal.ord_queue",
        "ideal.strict_head",
    ] {
        assert!(all.contains(&k), "{k}");
    }
    // Under --artifact the ack point is the artifact's everywhere.
    let art = Overrides {
        artifact: true,
        ..Overrides::default()
    };
    assert_eq!(ladder::steps(&art).len(), STEPS.len() - 1);
    let pts = ladder::points(&["scan".into()], &Overrides::default());
    // epoch-far and epoch-near at two ack points, SBRP far and near per step.
    assert_eq!(pts.len(), 4 + 2 * STEPS.len());
}

/// `sbrp bench` of `app` at `size` under sbrp-near, checked at every
/// durable point, with `extra` arguments.
fn checked_bench(app: &str, size: &str, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec![
        "bench",
        "--app",
        app,
        "--size",
        size,
        "--preset",
        "sbrp-near",
        "--check",
        "--jobs",
        "2",
    ];
    args.extend(extra);
    sbrp(&args)
}

/// Every rung on two apps at reduced sizes, checked at every durable point
/// (persistency checker, invariant, end image).
#[test]
fn the_idealised_unit_keeps_persist_order_at_every_rung() {
    let v2 = STEPS.iter().position(|s| s.label == "v2 unit").unwrap();
    for (app, size) in [("scan", "4096"), ("gpkvs", "2048")] {
        for step in STEPS[..v2].iter().chain(STEPS.last()) {
            let sets: Vec<String> = step
                .settings
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            let mut extra = vec![];
            for s in &sets {
                extra.extend(["--set", s.as_str()]);
            }
            let (code, out, err) = checked_bench(app, size, &extra);
            assert_eq!(code, 0, "{app} at {}: {out}{err}", step.label);
            assert!(
                out.contains("persist order holds at every durable point"),
                "{out}"
            );
            assert!(out.contains(" 0 broken"), "{out}");
        }
    }
}

/// Negative controls: the idealised unit without FSM gating, or coalescing
/// behind the warp's own ordering entry, breaks the apps' invariants at
/// some durable point.
#[test]
fn the_idealised_units_faults_are_caught() {
    for (app, size, fault) in [
        ("gpkvs", "2048", "ignore-fsm"),
        ("scan", "8192", "ignore-fsm"),
        ("scan", "8192", "ignore-coalesce-ordering"),
    ] {
        let (code, out, err) = checked_bench(
            app,
            size,
            &["--set", "ideal.unit=true", "--unit-fault", fault],
        );
        assert_eq!(code, 1, "{app} {fault}: {out}{err}");
        assert!(
            out.contains("first broken at cycle"),
            "{app} {fault}: {out}"
        );
    }
}

#[test]
fn the_switches_need_the_idealised_unit() {
    for (args, words) in [
        (
            vec!["--set", "ideal.replay=true"],
            "invalid `ideal.replay` = true: applies to the idealised unit only",
        ),
        (
            vec!["--set", "ideal.unit=true", "--set", "ideal.epochs=256"],
            "ideal.epochs",
        ),
        (
            vec!["--set", "ideal.unit=true", "--cosim"],
            "--cosim: ideal.unit = true hosts the idealised unit, which has no RTL",
        ),
        (
            vec!["--set", "ideal.unit=true", "--unit-fault", "skip-gated"],
            "unit fault SkipGated is the v2 unit's",
        ),
    ] {
        let mut v = vec!["bench", "--app", "scan", "--size", "512"];
        v.extend(args.iter());
        let (code, out, err) = sbrp(&v);
        assert_eq!(code, 2, "{v:?}: {out}{err}");
        assert!(err.contains(words), "{v:?}: {err}");
    }
}

#[test]
fn the_ladder_prints_three_tables_and_a_plot() {
    let d = tempfile::tempdir().unwrap();
    let o = d.path().join("ladder");
    let (code, out, err) = sbrp(&[
        "sweep",
        "--figure",
        "ladder",
        "--out",
        o.to_str().unwrap(),
        "--apps",
        "scan",
        "--shrink",
        "16",
        "--no-check",
        "--jobs",
        "2",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    for t in [
        "SBRP-far over epoch-far",
        "SBRP-near over epoch-far",
        "SBRP-near over epoch-near",
        "+strict head",
        "v2 ack@L2",
        "registered ports:",
        "gmean",
    ] {
        assert!(out.contains(t), "{t}: {out}");
    }
    for f in [
        "ladder_far.csv",
        "ladder_near.json",
        "ladder_near_near.csv",
        "ladder.png",
    ] {
        assert!(o.join(f).exists(), "{f}");
    }
    let svg = std::fs::read_to_string(o.join("ladder.svg")).unwrap();
    for w in [
        "ideal",
        "v2 unit",
        "SBRP-far speedup over epoch-far",
        "scan",
    ] {
        assert!(svg.contains(w), "{w} not in the plot");
    }
    let c = std::fs::read_to_string(o.join("ladder_far.csv")).unwrap();
    assert!(c.starts_with("app,ideal,+registered,+replay,"), "{c}");
    // The speedups are numbers, one per step.
    let row = c.lines().nth(1).unwrap();
    assert_eq!(
        row.split(',').filter(|x| x.parse::<f64>().is_ok()).count(),
        STEPS.len(),
        "{row}"
    );
}
