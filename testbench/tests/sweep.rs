//! `sbrp sweep`: the grid, the point keys, the model-version pin, and the
//! command as a user runs it (resume after lost points with byte-identical
//! tables, one point at a time, Figure 10's tables, bad input refused).

mod common;

use std::path::Path;

use common::{outcome, run_sbrp};
use sbrp_testbench::gpu_run::Overrides;
use sbrp_testbench::suite::{run_app, AppRunOpts};
use sbrp_testbench::sweep::{self, fig10, Axis, Common, Plan, Point};
use sbrp_workloads::Build;

fn sbrp(args: &[&str]) -> (i32, String, String) {
    outcome(run_sbrp(args, &[]))
}

fn point_files(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d.join(sweep::POINTS_DIR))
        .map(|r| {
            r.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(k, x)| (k.to_string(), x.to_string()))
        .collect()
}

#[test]
fn axes_parse_single_and_linked_keys_and_refuse_malformed_ones() {
    let a = Axis::parse("pb.window=2,4, 6").unwrap();
    assert_eq!(a.keys, ["pb.window"]);
    assert_eq!(a.values, [["2"], ["4"], ["6"]]);
    let b = Axis::parse("pm.read_bandwidth:pm.write_bandwidth=42:21,168:84").unwrap();
    assert_eq!(b.keys.len(), 2);
    assert_eq!(b.values, [["42", "21"], ["168", "84"]]);
    for (bad, why) in [
        ("pb.window", "expected KEY=V1"),
        ("pb.window=2,,4", "empty value"),
        ("a:b=1:2,3", "has 1 parts for 2 keys"),
        ("a:a=1:2", "a key twice"),
        ("=1", "empty key"),
    ] {
        let e = Axis::parse(bad).unwrap_err();
        assert!(
            e.contains(&format!("--set {bad}")) && e.contains(why),
            "{e}"
        );
    }
}

#[test]
fn the_grid_is_the_product_of_the_axes_in_order() {
    let axes = [
        Axis::parse("pb.window=2,4").unwrap(),
        Axis::parse("pm.read_bandwidth:pm.write_bandwidth=42:21,84:42,168:84").unwrap(),
    ];
    let apps = ["scan".to_string(), "mq".to_string()];
    let presets = ["sbrp-near".to_string(), "epoch-near".to_string()];
    let g = sweep::grid(&apps, &presets, &axes).unwrap();
    assert_eq!(g.len(), 2 * 2 * 2 * 3);
    assert_eq!(
        g[0].settings,
        pairs(&[
            ("pb.window", "2"),
            ("pm.read_bandwidth", "42"),
            ("pm.write_bandwidth", "21")
        ])
    );
    assert_eq!(g[1].settings[1], pairs(&[("pm.read_bandwidth", "84")])[0]);
    assert_eq!(g[3].settings[0].1, "4");
    assert_eq!(
        (g[6].app.as_str(), g[6].preset.as_str()),
        ("scan", "epoch-near")
    );
    assert_eq!(g[12].app, "mq");
    let twice = [
        Axis::parse("pb.window=2").unwrap(),
        Axis::parse("pb.window=4").unwrap(),
    ];
    assert!(sweep::grid(&apps, &presets, &twice)
        .unwrap_err()
        .contains("pb.window"));
}

#[test]
fn keys_follow_the_resolved_configuration() {
    let c = Common {
        shrink: 8,
        check: true,
        ..Common::default()
    };
    let p = |preset: &str, s: &[(&str, &str)]| Point {
        app: "scan".into(),
        preset: preset.into(),
        settings: pairs(s),
    };
    let k = |c: &Common, p: &Point| sweep::key(&sweep::key_text(c, p).unwrap());
    let plain = k(&c, &p("sbrp-near", &[]));
    // The preset's own values, spelled out, are the same point.
    assert_eq!(plain, k(&c, &p("sbrp-near", &[("pb.entries", "256")])));
    assert_eq!(plain, k(&c, &p("sbrp-near", &[("pb.window", "6")])));
    assert_ne!(plain, k(&c, &p("sbrp-near", &[("pb.window", "4")])));
    assert_ne!(plain, k(&c, &p("epoch-near", &[])));
    let unchecked = Common {
        check: false,
        ..c.clone()
    };
    assert_ne!(plain, k(&unchecked, &p("sbrp-near", &[])));
    let bigger = Common {
        shrink: 4,
        ..c.clone()
    };
    assert_ne!(plain, k(&bigger, &p("sbrp-near", &[])));
    // A setting applied to every point (`--base-set`) is the same point.
    let mut based = c.clone();
    based.base.set = pairs(&[("pb.window", "4")]);
    assert_eq!(
        k(&based, &p("sbrp-near", &[])),
        k(&c, &p("sbrp-near", &[("pb.window", "4")]))
    );
    let text = sweep::key_text(&c, &p("sbrp-near", &[])).unwrap();
    assert!(text.starts_with(&format!("sbrp-sweep model {}", sweep::MODEL_VERSION)));
    assert_eq!(plain.len(), 32);
    let e = sweep::key_text(&c, &p("sbrp-near", &[("pb.nosuch", "1")])).unwrap_err();
    assert!(e.to_string().contains("--set pb.nosuch=1"), "{e}");
}

/// The cache is valid only while these runs give these cycles: a change of
/// the GPU model, the unit model or the app generators that moves them must
/// bump `sweep::MODEL_VERSION` (and the numbers here), or old cached points
/// would be served as new ones.
#[test]
fn model_version_pins_these_cycle_counts() {
    assert_eq!(sweep::MODEL_VERSION, 1, "update the pinned cycles with it");
    let mut got = vec![];
    for (app, preset) in [
        ("scan", "sbrp-near"),
        ("scan", "epoch-near"),
        ("srad", "sbrp-far"),
    ] {
        let a = sweep::make_app(app, 8).unwrap();
        let r = run_app(a.as_ref(), preset, &AppRunOpts::new(Build::Gpu)).unwrap();
        got.push(r.cycles);
    }
    assert_eq!(
        got,
        [12934, 13240, 70816],
        "the model's cycles changed: bump sweep::MODEL_VERSION and pin the new counts"
    );
}

#[test]
fn figure_10_points_derive_from_the_configuration() {
    let apps = ["scan".to_string()];
    let st = fig10::studies(&Overrides::default()).unwrap();
    let a = &st[0].1;
    let entries: Vec<&str> = a.iter().map(|(_, s)| s[0].1.as_str()).collect();
    assert_eq!(
        entries,
        ["64", "128", "256", "512"],
        "shares of 512 L1 lines"
    );
    assert_eq!(a[0].0, "12.5%");
    let b = &st[1].1;
    assert_eq!(
        b[0].1,
        pairs(&[("pm.read_bandwidth", "42"), ("pm.write_bandwidth", "21")])
    );
    assert_eq!(
        b[2].1,
        pairs(&[("pm.read_bandwidth", "168"), ("pm.write_bandwidth", "84")])
    );
    let pts = fig10::points(&apps, &Overrides::default()).unwrap();
    // epoch-near once plus at 3 bandwidths; sbrp-near at 4 + 3 + 6 settings.
    assert_eq!(pts.len(), 1 + 3 + 13);
    let plan = Plan::new(
        Common {
            shrink: 8,
            check: false,
            ..Common::default()
        },
        pts,
    )
    .unwrap();
    let distinct: std::collections::BTreeSet<_> = plan.keys.iter().collect();
    // The defaults (256 entries, 100% bandwidth, window 6) are one point
    // per preset.
    assert_eq!(distinct.len(), 17 - 1 - 2);
}

#[test]
fn an_interrupted_sweep_resumes_with_only_the_missing_points() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("sw");
    let o = out.to_str().unwrap();
    let args = [
        "sweep",
        "--out",
        o,
        "--apps",
        "scan,srad",
        "--shrink",
        "8",
        "--presets",
        "sbrp-near,epoch-near",
        "--set",
        "pb.window=2,6",
        "--baseline",
        "epoch-near",
        "--jobs",
        "2",
        "--no-check",
    ];
    let (code, stdout, err) = sbrp(&args);
    assert_eq!(code, 0, "{stdout}{err}");
    assert!(
        stdout.contains("8 points (8 distinct configurations): 8 run now"),
        "{stdout}"
    );
    let files = point_files(&out);
    assert_eq!(files.len(), 8, "{files:?}");
    let csv = std::fs::read(out.join("sweep.csv")).unwrap();
    let json = std::fs::read(out.join("sweep.json")).unwrap();
    let head = String::from_utf8_lossy(&csv)
        .lines()
        .next()
        .unwrap()
        .to_string();
    assert!(
        head.starts_with("app,size,preset,pb.window,speedup_over_epoch-near,cycles,"),
        "{head}"
    );
    assert_eq!(String::from_utf8_lossy(&csv).lines().count(), 9);
    // Lose three points, as a killed run would never have written them.
    let pts = out.join(sweep::POINTS_DIR);
    let kept_before = std::fs::metadata(pts.join(&files[0]))
        .unwrap()
        .modified()
        .unwrap();
    for f in &files[5..] {
        std::fs::remove_file(pts.join(f)).unwrap();
    }
    // A point file cut short, and a temporary file a killed writer left.
    let whole = std::fs::read_to_string(pts.join(&files[4])).unwrap();
    std::fs::write(pts.join(&files[4]), &whole[..whole.len() / 2]).unwrap();
    std::fs::write(pts.join(".x.123.part"), "{").unwrap();
    std::fs::remove_file(out.join("sweep.csv")).unwrap();
    let (code, stdout, err) = sbrp(&args);
    assert_eq!(code, 0, "{stdout}{err}");
    assert!(
        stdout.contains("4 run now on 2 threads, 4 from the cache"),
        "{stdout}"
    );
    assert_eq!(
        point_files(&out).len(),
        files.len() + 1,
        "the stray .part stays"
    );
    // The cut file is rewritten whole: the same result but the wall time.
    let measured = |text: &str| {
        let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
        v.as_object_mut().unwrap().remove("secs");
        v
    };
    let again = std::fs::read_to_string(pts.join(&files[4])).unwrap();
    assert_eq!(measured(&again), measured(&whole));
    let kept_after = std::fs::metadata(pts.join(&files[0]))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(kept_before, kept_after, "a cached point was run again");
    assert_eq!(
        std::fs::read(out.join("sweep.csv")).unwrap(),
        csv,
        "CSV differs after resuming"
    );
    assert_eq!(std::fs::read(out.join("sweep.json")).unwrap(), json);
    // Nothing missing: nothing runs.
    let (code, stdout, _) = sbrp(&args);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("0 run now on 2 threads, 8 from the cache"),
        "{stdout}"
    );
}

#[test]
fn one_point_at_a_time_fills_the_same_cache() {
    let d = tempfile::tempdir().unwrap();
    let o = d.path().join("sw");
    let o = o.to_str().unwrap();
    let base = [
        "sweep",
        "--out",
        o,
        "--apps",
        "scan",
        "--shrink",
        "8",
        "--set",
        "pb.window=2,4,6",
        "--no-check",
    ];
    let with = |extra: &[&'static str]| {
        let mut v: Vec<&str> = base.to_vec();
        v.extend_from_slice(extra);
        sbrp(&v)
    };
    let (code, stdout, _) = with(&["--list"]);
    assert_eq!(code, 0);
    assert_eq!(stdout.matches("missing").count(), 3, "{stdout}");
    assert!(stdout.contains("3 points"));
    assert!(!Path::new(o).exists(), "--list writes nothing");
    let (code, stdout, err) = with(&["--point", "1"]);
    assert_eq!(code, 0, "{stdout}{err}");
    assert!(
        stdout.contains("point 1") && stdout.contains("pb.window=4"),
        "{stdout}"
    );
    assert_eq!(point_files(Path::new(o)).len(), 1);
    assert!(
        !Path::new(o).join("sweep.csv").exists(),
        "a point writes no tables"
    );
    let (_, stdout, _) = with(&["--list"]);
    let line = stdout.lines().find(|l| l.contains("pb.window=4")).unwrap();
    assert!(line.contains("cached"), "{stdout}");
    let (code, stdout, _) = with(&[]);
    assert_eq!(code, 0);
    assert!(stdout.contains("2 run now on"), "{stdout}");
    let (code, _, err) = with(&["--point", "3"]);
    assert_eq!(code, 2);
    assert!(err.contains("--point 3: the sweep has 3 points"), "{err}");
}

#[test]
fn figure_10_prints_its_three_tables() {
    let d = tempfile::tempdir().unwrap();
    let o = d.path().join("f10");
    let (code, stdout, err) = sbrp(&[
        "sweep",
        "--figure",
        "10",
        "--out",
        o.to_str().unwrap(),
        "--apps",
        "scan",
        "--shrink",
        "8",
        "--jobs",
        "2",
    ]);
    assert_eq!(code, 0, "{stdout}{err}");
    for t in ["Figure 10a", "Figure 10b", "Figure 10c", "12.5%", "gmean"] {
        assert!(stdout.contains(t), "{t}: {stdout}");
    }
    assert!(
        stdout.contains("17 points (14 distinct configurations)"),
        "{stdout}"
    );
    for f in ["fig10a.csv", "fig10b.json", "fig10c.csv", "sweep.csv"] {
        assert!(o.join(f).exists(), "{f}");
    }
    let png = std::fs::read(o.join("fig10.png")).unwrap();
    assert_eq!(&png[..4], b"\x89PNG");
    let svg = std::fs::read_to_string(o.join("fig10.svg")).unwrap();
    for w in [
        "<svg",
        "flush window",
        "NVM bandwidth",
        "SBRP-near speedup",
        "scan",
        "gmean",
    ] {
        assert!(svg.contains(w), "{w} not in the plot");
    }
    let c = std::fs::read_to_string(o.join("fig10c.csv")).unwrap();
    assert!(c.starts_with("app,2,4,6,8,10,12\nscan,"), "{c}");
}

#[test]
fn bad_sweep_input_is_refused_with_exit_2_and_nothing_written() {
    let d = tempfile::tempdir().unwrap();
    let o = d.path().join("never");
    let o = o.to_str().unwrap();
    for (args, words) in [
        (vec!["--set", "pb.window=2,0"], "pb.window"),
        (vec!["--set", "pb.nosuch=1,2"], "--set pb.nosuch=1"),
        (vec!["--set", "pb.window"], "--set pb.window: expected"),
        (
            vec!["--apps", "scan,nosuch"],
            "--apps: unknown app `nosuch`",
        ),
        (vec!["--shrink", "0"], "--shrink 0"),
        (
            vec!["--presets", "nosuch"],
            "--presets nosuch: unknown preset",
        ),
        (vec!["--figure", "7"], "--figure 7"),
        (vec!["--jobs", "0"], "--jobs 0"),
        (vec!["--baseline", "epoch-far"], "--baseline epoch-far"),
        (vec!["--point", "9"], "--point 9"),
    ] {
        let mut v = vec!["sweep", "--out", o];
        for (flag, default) in [("--apps", "scan"), ("--shrink", "8")] {
            if !args.contains(&flag) {
                v.extend([flag, default]);
            }
        }
        v.extend(args.iter());
        let (code, stdout, err) = sbrp(&v);
        assert_eq!(code, 2, "{v:?}: {stdout}{err}");
        assert!(err.contains(words), "{v:?}: {err}");
        assert!(stdout.is_empty(), "{v:?}: {stdout}");
    }
    assert!(!Path::new(o).exists(), "nothing written");
    let (code, _, err) = sbrp(&["sweep", "--out", "/proc/no-such-dir", "--apps", "scan"]);
    assert_eq!(code, 2);
    assert!(err.contains("--out"), "{err}");
}
