//! Exit status of `sbrp area` and `sbrp prove`: 0 when all went well, 1
//! when a check failed (a proof that fails, a broken variant that is
//! proved), 2 for a missing tool or a bad request.

mod common;

use std::process::Output;

use common::run_sbrp as sbrp;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn prove_without_yosys_exits_2_with_a_hint() {
    let o = sbrp(
        &["prove", "--property", "actr"],
        &[("SBRP_YOSYS", "/nonexistent/yosys")],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("apt-get install yosys"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn prove_usage_errors_exit_2() {
    let o = sbrp(&["prove", "--property", "nonsense"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("coalesce"), "{}", stderr(&o));
    let o = sbrp(&["prove", "--entries", "17"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--entries 17"), "{}", stderr(&o));
    // a list is checked name by name before anything runs
    let o = sbrp(&["prove", "--property", "handshake,nonsense"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("nonsense"), "{}", stderr(&o));
    let o = sbrp(&["prove", "--unbounded", "--step-solver", "z3"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("cadical, abc"), "{}", stderr(&o));
}

/// The hidden `--sabotage` proves the broken variant as if it were the real
/// RTL: the proof fails, which is a failed check (1), not an error (2).
#[test]
fn a_failed_proof_exits_1() {
    let out = tempfile::tempdir().unwrap();
    let logs = out.path().join("logs");
    let o = sbrp(
        &[
            "prove",
            "--property",
            "coalesce",
            "--sabotage",
            "--out",
            logs.to_str().unwrap(),
        ],
        &[],
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{}", stderr(&o));
    assert!(
        stdout.contains("coalesce") && stdout.contains("UNEXPECTED"),
        "{stdout}"
    );
    assert!(
        stderr(&o).contains("coalesce (proof failed)"),
        "{}",
        stderr(&o)
    );
    assert!(!logs.exists(), "logs written for a failed check");
}

/// `sbrp prove` says which results are proofs for every depth (PDR) and
/// which are bounded (BMC), in each line and in the summary.
#[test]
fn prove_reports_proved_and_bounded_apart() {
    for (prop, line, summary) in [
        (
            "handshake",
            "proved (PDR)",
            "proved for all depths (PDR): handshake",
        ),
        (
            "durable",
            "bounded to 14",
            "bounded (BMC from reset, cycles; not proofs): durable to 14",
        ),
    ] {
        let o = sbrp(&["prove", "--property", prop], &[]);
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{stdout}\n{}", stderr(&o));
        assert!(
            stdout.contains(line) && stdout.contains(summary),
            "{stdout}"
        );
    }
}

/// `sbrp prove --unbounded`: k-induction, the step by CaDiCaL; handshake
/// and actr, given as a list, are proved (exit 0), `release`, not
/// inductive without invariants, is a failed check (exit 1) that says so.
#[test]
fn prove_unbounded_reports_k_induction() {
    let o = sbrp(
        &["prove", "--unbounded", "--property", "handshake,actr"],
        &[],
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{}", stderr(&o));
    assert!(
        stdout.contains("step by cadical")
            && stdout.contains("proved (k-ind, k=4)")
            && stdout
                .contains("proved for all depths (k-induction): handshake (k = 4), actr (k = 2)"),
        "{stdout}"
    );
    let o = sbrp(
        &[
            "prove",
            "--unbounded",
            "--property",
            "release",
            "--induction-seconds",
            "20",
        ],
        &[],
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{}", stderr(&o));
    assert!(stdout.contains("NOT INDUCTIVE k=4"), "{stdout}");
    assert!(
        stderr(&o).contains("not inductive at its k"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn area_without_tools_or_library_exits_2() {
    for (var, value, hint) in [
        ("SBRP_YOSYS", "/nonexistent/yosys", "apt-get install yosys"),
        (
            "SBRP_LIBERTY",
            "/nonexistent/cells.lib",
            "qflow-tech-osu018",
        ),
    ] {
        let out = tempfile::tempdir().unwrap();
        let dir = out.path().join("area");
        let o = sbrp(
            &[
                "area",
                "--entries",
                "16",
                "--warps",
                "4",
                "--lines",
                "16",
                "--no-timing",
                "--out",
                dir.to_str().unwrap(),
            ],
            &[(var, value)],
        );
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(hint), "{}", stderr(&o));
        assert!(!dir.exists(), "reports written after an error");
    }
    let o = sbrp(&["area", "--window", "0"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // an unknown array kind is named, with the kinds there are
    let o = sbrp(&["area", "--arrays", "sram"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("sram") && stderr(&o).contains("flops, latches"),
        "{}",
        stderr(&o)
    );
}

/// `sbrp area --route`: refused with --sweep or --no-timing, and a missing
/// router is named (with its package) before any synthesis; exit 2 and
/// nothing written. (The routed flow itself: silicon/tests/route.rs.)
#[test]
fn area_route_usage_and_missing_router_exit_2() {
    for bad in [
        &["area", "--route", "--sweep"][..],
        &["area", "--route", "--no-timing"],
    ] {
        let o = sbrp(bad, &[]);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("--route"), "{}", stderr(&o));
    }
    for (var, hint) in [
        ("SBRP_QROUTER", "apt-get install qrouter"),
        ("SBRP_QFLOW", "apt-get install qflow"),
    ] {
        let out = tempfile::tempdir().unwrap();
        let dir = out.path().join("area");
        let t0 = std::time::Instant::now();
        let o = sbrp(
            &[
                "area",
                "--entries",
                "16",
                "--warps",
                "4",
                "--lines",
                "16",
                "--route",
                "--out",
                dir.to_str().unwrap(),
            ],
            &[(var, "/nonexistent/tool")],
        );
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(hint), "{}", stderr(&o));
        assert!(!dir.exists(), "reports written after an error");
        // refused before synthesis (which takes about 10 s)
        assert!(t0.elapsed().as_secs() < 5, "{:?}", t0.elapsed());
    }
}

/// `sbrp area` builds the memories of 32 words or more as latch arrays
/// unless told `--arrays flops` (docs/hardware.md §2, "Latch arrays"): the
/// report says which, prices the latch from the LEF, and the latch unit is
/// the smaller (about 10 s each, area only).
#[test]
fn area_builds_latch_arrays_by_default_and_flops_when_asked() {
    let run = |extra: &[&str]| {
        let mut args = vec![
            "area",
            "--entries",
            "32",
            "--warps",
            "4",
            "--lines",
            "32",
            "--no-timing",
        ];
        args.extend_from_slice(extra);
        let o = sbrp(&args, &[]);
        let stdout = String::from_utf8_lossy(&o.stdout).to_string();
        assert_eq!(o.status.code(), Some(0), "{stdout}\n{}", stderr(&o));
        let area: f64 = stdout
            .lines()
            .find_map(|l| l.strip_prefix("cells: "))
            .and_then(|l| l.split("area: ").nth(1))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("no area in\n{stdout}"));
        (stdout, area)
    };
    let (latches, a_latches) = run(&[]);
    assert!(latches.contains("arrays: latches"), "{latches}");
    assert!(
        latches.contains("area of LATCH: 56 um^2 from the LEF"),
        "{latches}"
    );
    let (flops, a_flops) = run(&["--arrays", "flops"]);
    assert!(
        !flops.contains("arrays: latches") && !flops.contains("LATCH"),
        "{flops}"
    );
    assert!(
        a_latches < a_flops,
        "latches {a_latches} um^2, flops {a_flops} um^2"
    );
}

/// `sbrp area` on the small unit prints the figures a reviewer reads: the
/// measured FO4, the stage and I/O paths in FO4, fmax, area per bit and
/// the memories' ports; and exits 0 (about 10 s).
#[test]
fn area_prints_fo4_stage_fmax_and_ports() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("area");
    let o = sbrp(
        &[
            "area",
            "--entries",
            "16",
            "--warps",
            "4",
            "--lines",
            "16",
            "--out",
            dir.to_str().unwrap(),
        ],
        &[],
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{}", stderr(&o));
    for needle in [
        "FO4 of the library (measured",
        "register to register",
        "FO4 of logic (clock-to-Q",
        "input to register",
        "register to output",
        "highest clock in this library:",
        "um^2/bit over",
        "NAND2 equivalents",
        "read ports",
    ] {
        assert!(stdout.contains(needle), "{needle:?} missing:\n{stdout}");
    }
    assert!(!stdout.contains("not storage"), "{stdout}");
    // The measured FO4 of OSU 0.18 um (about 99 ps).
    let fo4: f64 = stdout
        .lines()
        .find_map(|l| l.split("fan-out 4): ").nth(1))
        .and_then(|r| r.split(" ps").next())
        .and_then(|v| v.parse().ok())
        .expect("FO4 value");
    assert!((60.0..150.0).contains(&fo4), "FO4 {fo4}");
    // Each PB memory of the RTL (pb_type, pb_line, pb_warps) has a row.
    assert!(
        stdout
            .lines()
            .filter(|l| l.trim_start().starts_with("pb_"))
            .count()
            == 3,
        "{stdout}"
    );
    for f in [
        "report.txt",
        "area.csv",
        "fo4.log",
        "memories.txt",
        "sta.log",
    ] {
        assert!(dir.join(f).is_file(), "{f} not written");
    }
}

/// `sbrp prove --rtl FILE`: a file that does not exist, or has no
/// `sbrp_pb`, is a bad request (2); a mutant that breaks a property is a
/// failed check (1); `--rtl` with `--broken` is refused (2).
#[test]
fn prove_rtl_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let o = sbrp(
        &[
            "prove",
            "--property",
            "durable",
            "--rtl",
            "/nonexistent/x.v",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("/nonexistent/x.v: no such file"),
        "{}",
        stderr(&o)
    );
    let none = dir.path().join("none.v");
    std::fs::write(&none, "module other(); endmodule\n").unwrap();
    let o = sbrp(
        &[
            "prove",
            "--property",
            "durable",
            "--rtl",
            none.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("no module sbrp_pb"), "{}", stderr(&o));
    let o = sbrp(&["prove", "--broken", "--rtl", none.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // the durability mutant (retire without joining EDM) as a file
    let p = sbrp_silicon::prove_params(16, 4, 16, 8).unwrap();
    let v = sbrp_hdl::generate_verilog(&p).unwrap();
    let durable = sbrp_silicon::property("durable").unwrap();
    let bad = dir.path().join("bad.v");
    std::fs::write(&bad, durable.break_rtl(&v, &durable.broken[0]).unwrap()).unwrap();
    let o = sbrp(
        &[
            "prove",
            "--property",
            "durable",
            "--rtl",
            bad.to_str().unwrap(),
        ],
        &[],
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{}", stderr(&o));
    assert!(
        stdout.contains(", RTL ") && stdout.contains("FAILS at"),
        "{stdout}"
    );
}

/// `sbrp mutate`: bad requests exit 2 before anything runs; a small
/// campaign (3 mutants, litmus and fuzz only) runs the checks on the
/// original first, then prints one line per mutant and the kill counts per
/// check. Every mutant is accounted for: killed,
/// stillborn or a classified survivor.
#[test]
fn mutate_runs_a_small_campaign() {
    let o = sbrp(&["mutate", "--count", "0"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = sbrp(&["mutate", "--checks", "litmus,nonsense"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("nonsense"), "{}", stderr(&o));
    let dir = tempfile::tempdir().unwrap();
    let o = sbrp(
        &[
            "mutate",
            "--count",
            "3",
            "--checks",
            "litmus,fuzz",
            "--fuzz-cycles",
            "20000",
            "--out",
            dir.path().to_str().unwrap(),
        ],
        &[],
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        matches!(o.status.code(), Some(0) | Some(1)),
        "{stdout}\n{}",
        stderr(&o)
    );
    let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with('m')).collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    for l in &lines {
        assert!(
            l.contains("killed by") || l.contains("stillborn") || l.contains("SURVIVED"),
            "{l}"
        );
    }
    assert!(
        stdout.contains("3 mutants: ") && stdout.contains("  litmus  killed "),
        "{stdout}"
    );
    // the checks ran on the original first; the litmus traces that fail
    // there at 16 lines are left out of the kill criterion, by name
    assert!(
        stdout.contains("original: every check passes but litmus traces 10_eviction"),
        "{stdout}"
    );
    assert!(dir.path().join("m000/sbrp_pb.v").is_file());
}

/// The campaign's `corners` check (`docs/hardware.md` §5) kills m027 (the
/// `am_e1` select of ACTR less the acked epoch's counter, `&` -> `|`: it
/// shows only when a bogus ack meets a flush), which the default fuzz run
/// of the same length misses; `--only` runs just that mutant.
#[test]
fn mutate_corners_check_kills_the_bogus_ack_survivor() {
    let dir = tempfile::tempdir().unwrap();
    let o = sbrp(
        &[
            "mutate",
            "--only",
            "m027",
            "--checks",
            "fuzz,corners",
            "--fuzz-cycles",
            "20000",
            "--out",
            dir.path().to_str().unwrap(),
        ],
        &[],
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{}", stderr(&o));
    let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with('m')).collect();
    assert_eq!(lines.len(), 1, "{stdout}");
    assert!(
        lines[0].starts_with("m027") && lines[0].ends_with("killed by corners"),
        "{stdout}"
    );
    assert!(stdout.contains("  fuzz    killed 0 of 1"), "{stdout}");
    let o = sbrp(&["mutate", "--only", "100"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}
