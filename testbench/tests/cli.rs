//! The `sbrp` command: documented options, refused parameters, bad input.

mod common;

use common::{outcome, run_sbrp};

fn sbrp(args: &[&str]) -> (i32, String, String) {
    outcome(run_sbrp(args, &[]))
}

/// A path `name` that does not exist yet, in a scratch directory removed
/// when the returned guard drops.
fn tmp(name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let keep = tempfile::tempdir().unwrap();
    let d = keep.path().join(name);
    (keep, d)
}

#[test]
fn verilog_writes_the_file_and_prints_parameters_and_storage() {
    let (_keep, d) = tmp("ok");
    let (code, out, err) = sbrp(&[
        "verilog",
        "--entries",
        "16",
        "--warps",
        "4",
        "--lines",
        "16",
        "--out",
        d.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("entries 16 warps 4 lines 16"), "{out}");
    assert!(out.contains("total") && out.contains("paper"), "{out}");
    let v = std::fs::read_to_string(d.join("sbrp_pb.v")).unwrap();
    assert!(v.contains("module sbrp_pb("));
}

#[test]
fn impossible_parameters_are_refused_and_nothing_is_written() {
    for (args, param) in [
        (vec!["--entries", "100"], "--entries"),
        (vec!["--entries", "1024", "--lines", "1024"], "--entries"),
        (vec!["--warps", "65"], "--warps"),
        (vec!["--entries", "512", "--lines", "256"], "--lines"),
        (vec!["--window", "0"], "--window"),
    ] {
        let (_keep, d) = tmp("bad");
        let mut a = vec!["verilog", "--out", d.to_str().unwrap()];
        a.extend(args.iter());
        let (code, _, err) = sbrp(&a);
        assert_ne!(code, 0, "{args:?}");
        assert!(
            err.contains(param) && err.contains("allowed"),
            "{args:?}: {err}"
        );
        assert!(!d.exists(), "{args:?}: output written");
    }
}

#[test]
fn help_documents_every_option() {
    let (code, out, _) = sbrp(&["verilog", "--help"]);
    assert_eq!(code, 0);
    for o in [
        "--entries",
        "--warps",
        "--lines",
        "--window",
        "--actr-bits",
        "--policy",
        "--out",
    ] {
        assert!(out.contains(o), "{o} missing from help");
    }
    let (_, out, _) = sbrp(&["cosim", "--help"]);
    for o in [
        "--suite",
        "--trace",
        "--seed",
        "--cycles",
        "--rtl",
        "--vcd",
        "--model-only",
        "--record",
    ] {
        assert!(out.contains(o), "{o} missing from cosim help");
    }
}

#[test]
fn malformed_trace_names_file_line_and_expectation() {
    let (_keep, d) = tmp("trace");
    std::fs::create_dir_all(&d).unwrap();
    let f = d.join("bad.trace");
    std::fs::write(&f, "0.0 st.pm 0x100\n0.0 ofence\n0.1 st.pm zz\n").unwrap();
    let (code, out, err) = sbrp(&["cosim", "--trace", f.to_str().unwrap(), "--model-only"]);
    assert_ne!(code, 0);
    assert!(
        err.contains("bad.trace:3") && err.contains("expected an address"),
        "{err}"
    );
    assert!(!err.contains("panicked") && !out.contains("PASS"));
}

#[test]
fn missing_verilator_says_how_to_install_it() {
    let (_keep, d) = tmp("nover");
    let (code, _, err) = outcome(run_sbrp(
        &[
            "cosim",
            "--suite",
            "litmus",
            "--entries",
            "16",
            "--warps",
            "4",
            "--lines",
            "16",
        ],
        &[
            ("SBRP_VERILATOR", "/nonexistent/verilator"),
            ("SBRP_VERILATOR_CACHE", d.to_str().unwrap()),
        ],
    ));
    assert_ne!(code, 0);
    assert!(err.contains("apt-get install verilator"), "{err}");
}

#[test]
fn model_only_litmus_suite_passes_and_a_model_fault_fails() {
    let (code, out, _) = sbrp(&["cosim", "--suite", "litmus", "--model-only"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(" 0 failed"), "{out}");
    let (code, out, _) = sbrp(&[
        "cosim",
        "--suite",
        "litmus",
        "--model-only",
        // `--mutate` is the old name of `--fault`, kept as an alias.
        "--mutate",
        "global-release",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("FAIL"), "{out}");
}

/// `--slices` (docs/microarch.md §2.1): the litmus suite passes behind a
/// response stage with a note on the resume bounds, the Verilog carries
/// the flush hold, and a stage count beyond 2 is refused (exit 2, nothing
/// written).
#[test]
fn slices_run_the_suite_write_the_hold_and_refuse_three_stages() {
    let args = ["cosim", "--suite", "litmus", "--model-only", "--slices"];
    let (code, out, err) = sbrp(&[&args[..], &["1,1,0"]].concat());
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("register slices 1,1,0") && out.contains("5 cycles"),
        "{out}"
    );
    assert!(
        out.contains(" 0 failed") && out.contains("not checked"),
        "{out}"
    );
    let (_keep, d) = tmp("sliced");
    let dir = d.to_str().unwrap();
    let (code, _, err) = sbrp(&["verilog", "--slices", "0,1,0", "--out", dir]);
    assert_eq!(code, 0, "{err}");
    let v = std::fs::read_to_string(d.join("sbrp_pb.v")).unwrap();
    assert!(v.contains("wire flush_hold = (st3_v"), "no hold");
    let (_keep2, d2) = tmp("refused");
    let dir2 = d2.to_str().unwrap();
    let (code, _, err) = sbrp(&["verilog", "--slices", "0,3,0", "--out", dir2]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("0,3,0"), "{err}");
    assert!(!d2.exists());
    let (code, _, err) = sbrp(&[&args[..], &["1,1"]].concat());
    assert_eq!(code, 2, "{err}");
}

#[test]
fn bench_unit_times_the_model_on_both_stimuli() {
    let (code, out, err) = sbrp(&["bench-unit", "--cycles", "100000"]);
    assert_eq!(code, 0, "{err}");
    for what in ["workload", "raw"] {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("model, {what} stimulus")))
            .unwrap_or_else(|| panic!("no {what} line in {out}"));
        let rate: f64 = line
            .split(": ")
            .nth(2)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|r| r.parse().ok())
            .unwrap_or_else(|| panic!("no rate in {line}"));
        assert!(rate > 0.0, "{line}");
        assert!(
            !line.contains("(0 flushes)"),
            "the stimulus flushed nothing: {line}"
        );
    }
    let (code, out, _) = sbrp(&["bench-unit", "--cycles", "10000", "--stimulus", "raw"]);
    assert_eq!(code, 0);
    assert!(!out.contains("workload"), "{out}");
}

#[test]
fn help_states_one_exit_code_rule_for_every_subcommand() {
    let rule = "Exit status: 0 pass; 1 a check failed";
    let (code, out, _) = sbrp(&["--help"]);
    assert_eq!(code, 0);
    assert!(out.contains(rule), "{out}");
    for cmd in ["verilog", "cosim", "area", "prove", "bench-unit", "sweep"] {
        let (code, out, _) = sbrp(&[cmd, "--help"]);
        assert_eq!(code, 0, "{cmd}");
        assert!(out.contains(rule), "{cmd} --help lacks the rule: {out}");
    }
}

#[test]
fn usage_and_input_errors_exit_2_failed_checks_exit_1() {
    // Usage: an unknown option, a bad value enum, a missing workload.
    assert_eq!(sbrp(&["cosim", "--no-such-option"]).0, 2);
    assert_eq!(
        sbrp(&["cosim", "--suite", "litmus", "--policy", "soon"]).0,
        2
    );
    assert_eq!(sbrp(&["cosim", "--model-only"]).0, 2);
    // Input: a trace file that does not exist.
    let (code, _, err) = sbrp(&["cosim", "--trace", "/nonexistent.trace", "--model-only"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("/nonexistent.trace"), "{err}");
    // A failed check: a fault injected into the model breaks expectations.
    let (code, out, _) = sbrp(&[
        "cosim",
        "--suite",
        "litmus",
        "--engine",
        "model",
        "--fault",
        "dfence-no-wait",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("FAIL"), "{out}");
}

#[test]
fn litmus_suite_skips_traces_that_need_more_warps_by_name() {
    let (code, out, err) = sbrp(&["cosim", "--suite", "litmus", "--model-only", "--warps", "4"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("SKIP 06_block_release_acquire: needs 5 warps, the unit has 4"),
        "{out}"
    );
    assert!(out.contains(" 0 failed, 3 skipped"), "{out}");
}

#[test]
fn verilator_engine_runs_a_trace_without_the_model() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("litmus");
    let t = dir.join("05_fsm_isolation.trace");
    let (code, out, err) = sbrp(&[
        "cosim",
        "--trace",
        t.to_str().unwrap(),
        "--engine",
        "verilator",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("rtl: generated") && out.contains("PASS 05_fsm_isolation"),
        "{out}"
    );
}
