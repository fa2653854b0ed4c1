//! `sbrp check` and `sbrp crash` from the command line (`docs/checker.md`):
//! verdicts and exit codes, and bad input refused with exit 2 and nothing
//! written.

mod common;

use common::{outcome, run_sbrp};

fn sbrp(args: &[&str]) -> (i32, String, String) {
    outcome(run_sbrp(args, &[]))
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("sbrp-cli-crash-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

#[test]
fn check_passes_a_correct_run_and_fails_a_broken_unit() {
    let good = tmp("good.json");
    let (c, out, err) = sbrp(&[
        "bench",
        "--app",
        "scan",
        "--size",
        "15360",
        "--record",
        good.to_str().unwrap(),
    ]);
    assert_eq!(c, 0, "{out}{err}");
    let (c, out, _) = sbrp(&["check", good.to_str().unwrap()]);
    assert_eq!(c, 0, "{out}");
    assert!(
        out.contains("persist order holds at every durable point"),
        "{out}"
    );
    assert!(out.contains("M persists/s"), "{out}");

    let bad = tmp("bad.json");
    let (c, out, err) = sbrp(&[
        "bench",
        "--app",
        "scan",
        "--size",
        "15360",
        "--unit-fault",
        "ignore-fsm",
        "--record",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(c, 0, "{out}{err}");
    let json = tmp("report.json");
    let (c, out, _) = sbrp(&[
        "check",
        bad.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(c, 1, "{out}");
    assert!(out.contains("VIOLATIONS"), "{out}");
    assert!(out.contains("intra-thread order across"), "{out}");
    let report = std::fs::read_to_string(&json).unwrap();
    assert!(report.contains("\"violations_total\""), "{report}");

    // Bad records: exit 2, naming the file, and no report written.
    let text = std::fs::read_to_string(&good).unwrap();
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "format.json",
            "{\"format\":\"other\"}".into(),
            "not an execution record",
        ),
        (
            "version.json",
            text.replacen("\"version\":4", "\"version\":3", 1),
            "version 3",
        ),
        (
            "truncated.json",
            text[..text.len() / 2].to_string(),
            "truncated record",
        ),
        ("text.json", "hello".into(), "not an execution record"),
    ];
    for (name, body, want) in cases {
        let f = tmp(name);
        std::fs::write(&f, body).unwrap();
        let out_json = tmp(&format!("{name}.report"));
        let (c, out, err) = sbrp(&[
            "check",
            f.to_str().unwrap(),
            "--json",
            out_json.to_str().unwrap(),
        ]);
        assert_eq!(c, 2, "{name}: {out}{err}");
        assert!(err.contains(name) && err.contains(want), "{name}: {err}");
        assert!(out.is_empty(), "{name}: {out}");
        assert!(!out_json.exists(), "{name}");
    }
}

#[test]
fn crash_campaigns_give_verdicts_and_refuse_bad_input() {
    let (c, out, err) = sbrp(&[
        "crash",
        "--app",
        "reduction",
        "--size",
        "262144",
        "--points",
        "50",
        "--recover-sim",
        "1",
    ]);
    assert_eq!(c, 0, "{out}{err}");
    assert!(
        out.contains("50 tried") && out.contains("crash consistent"),
        "{out}"
    );
    assert!(
        out.contains("1 of 1 images equal to the functional recovery"),
        "{out}"
    );
    let (c, out, err) = sbrp(&[
        "crash",
        "--app",
        "reduction",
        "--size",
        "262144",
        "--points",
        "50",
        "--recover-sim",
        "0",
        "--unit-fault",
        "ignore-fsm",
    ]);
    assert_eq!(c, 1, "{out}{err}");
    assert!(out.contains("NOT CRASH CONSISTENT"), "{out}");

    let rec = tmp("red.json");
    let (c, _, err) = sbrp(&[
        "bench",
        "--app",
        "reduction",
        "--size",
        "262144",
        "--record",
        rec.to_str().unwrap(),
    ]);
    assert_eq!(c, 0, "{err}");
    let r = rec.to_str().unwrap();
    let json = tmp("crash.json");
    let j = json.to_str().unwrap();
    for (args, want) in [
        (vec!["--points", "0"], "--points 0"),
        (vec!["--at", "999999999999"], "beyond the run"),
        (vec!["--unit-fault", "no-such-fault"], "no-such-fault"),
    ] {
        let mut a = vec![
            "crash",
            "--app",
            "reduction",
            "--size",
            "262144",
            "--from-record",
            r,
            "--json",
            j,
        ];
        a.extend(args);
        let (c, out, err) = sbrp(&a);
        assert_eq!(c, 2, "{a:?}: {out}{err}");
        assert!(err.contains(want), "{a:?}: {err}");
        assert!(!json.exists());
    }
    let (c, _, err) = sbrp(&["crash", "--app", "nosuchapp"]);
    assert_eq!(c, 2);
    assert!(err.contains("unknown app"), "{err}");
    // The whole invariant per image gives the incremental verdict.
    let (c, out, err) = sbrp(&[
        "crash",
        "--app",
        "reduction",
        "--size",
        "262144",
        "--from-record",
        r,
        "--recover-sim",
        "0",
        "--full-check",
    ]);
    assert_eq!(c, 0, "{out}{err}");
    assert!(out.contains("whole invariant per image"), "{out}");
    for (v, want) in [("0", "--crash-points 0"), ("some", "--crash-points some")] {
        let (c, _, err) = sbrp(&["suite", "--apps", "scan", "--crash-points", v]);
        assert_eq!(c, 2, "{v}: {err}");
        assert!(err.contains(want), "{err}");
    }
}
