//! `sbrp trace`, `sbrp bench` and `sbrp suite` as a user runs them (the real
//! binary): a program file written and run back, one benchmark with its
//! image check, the suite's tables and files, and bad input refused with
//! exit 2 and nothing written.

mod common;

use std::path::Path;

use common::{outcome, run_sbrp};

fn sbrp(args: &[&str]) -> (i32, String, String) {
    outcome(run_sbrp(args, &[]))
}

fn entries(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn trace_writes_a_program_that_runs() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("scan.prog");
    let f = f.to_str().unwrap();
    let (code, out, err) = sbrp(&["trace", "--app", "scan", "--size", "1024", "--out", f]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("1 kernels"), "{out}");
    let (code, out, err) = sbrp(&["run", "--trace", f, "--preset", "sbrp-near", "--quiet"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("PASS"), "{out}");
}

#[test]
fn bench_checks_the_durable_image() {
    let (code, out, err) = sbrp(&[
        "bench",
        "--app",
        "srad",
        "--size",
        "64",
        "--preset",
        "epoch-near",
        "--check",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("invariant holds"), "{out}");
    let (code, out, err) = sbrp(&[
        "bench",
        "--app",
        "srad",
        "--size",
        "64",
        "--preset",
        "sbrp-near",
        "--recovery",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("cycles"), "{out}");
}

fn cycles_of(out: &str) -> u64 {
    let w: Vec<&str> = out.split_whitespace().collect();
    let i = w.iter().position(|x| *x == "cycles,").expect(out);
    w[i - 1].parse().expect(out)
}

/// The experiments' hooks change the run they name: an artifact switch
/// (the ack leaves out the PCIe round trip) and a unit-model deviation
/// (no FSM gating) each make Scan's SBRP-far run shorter.
/// Cycles of `sbrp` with `base` then `extra` (exit 0 asserted).
fn bench_cycles(base: &[&str], extra: &[&str]) -> u64 {
    let args: Vec<&str> = base.iter().chain(extra).copied().collect();
    let (code, out, err) = sbrp(&args);
    assert_eq!(code, 0, "{args:?}: {out}{err}");
    cycles_of(&out)
}

#[test]
fn bench_set_and_unit_fault_change_the_run() {
    let base = [
        "bench", "--app", "scan", "--size", "4096", "--preset", "sbrp-far",
    ];
    let run = |extra: &[&str]| bench_cycles(&base, extra);
    let plain = run(&[]);
    let ack_l2 = run(&["--set", "artifact.ack_at_l2=true"]);
    let no_fsm = run(&["--unit-fault", "ignore-fsm"]);
    assert!(ack_l2 < plain, "ack at the L2: {ack_l2} vs {plain}");
    assert!(no_fsm < plain, "no FSM gating: {no_fsm} vs {plain}");
    assert_eq!(run(&["--set", "pb.window=6"]), plain, "the default window");
}

/// `--artifact` is the artifact's switches plus, on PM-far, its slowed PM
/// channels (docs/model-params.md, "Artifact mode"), applied before `--set`.
#[test]
fn bench_artifact_is_the_switches_and_the_far_channel() {
    let base = [
        "bench", "--app", "srad", "--size", "128", "--preset", "sbrp-far",
    ];
    let run = |extra: &[&str]| bench_cycles(&base, extra);
    let art = run(&["--artifact"]);
    assert_ne!(art, run(&[]), "--artifact changes the run");
    let mut spelled = vec![];
    for kv in [
        "artifact.no_kernel_end_drain=true",
        "artifact.ack_at_l2=true",
        "artifact.l2_write_allocate_read=true",
        "artifact.pcie_per_channel=true",
        "artifact.dfence_keeps_l1=true",
        "pm.latency=900",
        "pm.read_bandwidth=28",
        "pm.write_bandwidth=28",
        "pcie.latency=0",
    ] {
        spelled.extend(["--set", kv]);
    }
    assert_eq!(run(&spelled), art, "--artifact spelled out as --set");
    let later = run(&["--artifact", "--set", "pm.latency=300"]);
    assert_ne!(later, art, "--set applies after --artifact");
}

#[test]
fn suite_prints_the_figures_and_writes_their_files() {
    let d = tempfile::tempdir().unwrap();
    let out_dir = d.path().join("res");
    let (code, out, err) = sbrp(&[
        "suite",
        "--apps",
        "srad,scan",
        "--shrink",
        "8",
        "--jobs",
        "2",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    for f in [
        "Figure 6",
        "Figure 7",
        "Figure 8",
        "Figure 9",
        "Figure 11",
        "gmean",
    ] {
        assert!(out.contains(f), "{f} missing:\n{out}");
    }
    let files = entries(&out_dir);
    for fig in ["fig6", "fig7", "fig8", "fig9", "fig11", "spb"] {
        assert!(files.contains(&format!("{fig}.csv")), "{files:?}");
        assert!(files.contains(&format!("{fig}.json")), "{files:?}");
        // Each figure as a bar chart, SVG and PNG.
        let svg = std::fs::read_to_string(out_dir.join(format!("{fig}.svg"))).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains("gmean"),
            "{fig}.svg"
        );
        let png = std::fs::read(out_dir.join(format!("{fig}.png"))).unwrap();
        assert_eq!(&png[..4], b"\x89PNG", "{fig}.png");
    }
    // The paper's stated mean of SBRP-far over epoch-far is marked.
    let svg = std::fs::read_to_string(out_dir.join("fig6.svg")).unwrap();
    assert!(svg.contains("stated mean"), "fig6.svg has no mark");
    assert!(files.contains(&"runs.json".to_string()));
    assert!(!files.iter().any(|f| f.ends_with(".part")), "{files:?}");
    let csv = std::fs::read_to_string(out_dir.join("fig6.csv")).unwrap();
    assert!(csv.starts_with("app,gpm-far,epoch-far,"), "{csv}");
    // epoch-far is the baseline of Figure 6: exactly 1.
    let srad = csv.lines().find(|l| l.starts_with("srad,")).unwrap();
    assert_eq!(srad.split(',').nth(2), Some("1.0000"), "{csv}");
    let runs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("runs.json")).unwrap()).unwrap();
    assert_eq!(runs.as_array().unwrap().len(), 2 * 13);
}

#[test]
fn bad_app_input_is_refused_with_exit_2_and_no_output() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("x.prog");
    let o = out.to_str().unwrap();
    for (args, words) in [
        (
            vec!["trace", "--app", "nosuch", "--out", o],
            "unknown app `nosuch`",
        ),
        (
            vec!["trace", "--app", "srad", "--size", "33", "--out", o],
            "side 33",
        ),
        (vec!["bench", "--app", "scan", "--size", "100"], "100"),
        (
            vec!["bench", "--app", "scan", "--preset", "nosuch"],
            "nosuch",
        ),
        (
            vec!["suite", "--apps", "scan,nosuch"],
            "unknown app `nosuch`",
        ),
        (vec!["suite", "--shrink", "0"], "--shrink 0"),
        (
            vec!["suite", "--set", "pb.nosuch=1", "--out", o],
            "--set pb.nosuch=1",
        ),
        (
            vec!["bench", "--app", "scan", "--set", "pb.window"],
            "expected KEY=VALUE",
        ),
        (
            vec!["bench", "--app", "scan", "--set", "pb.window=0"],
            "pb.window",
        ),
    ] {
        let (code, stdout, err) = sbrp(&args);
        assert_eq!(code, 2, "{args:?}: {stdout}{err}");
        assert!(err.contains(words), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    assert!(entries(d.path()).is_empty());
    let (code, _, err) = sbrp(&[
        "trace",
        "--app",
        "scan",
        "--size",
        "512",
        "--out",
        "/nonexistent-dir/x.prog",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("/nonexistent-dir/x.prog"), "{err}");
    let (code, _, err) = sbrp(&["suite", "--apps", "scan", "--out", "/proc/no-such-dir"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--out"), "{err}");
}
