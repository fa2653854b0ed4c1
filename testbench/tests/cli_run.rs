//! `sbrp run` as a user runs it (the real binary): presets, programs and
//! litmus traces under several presets, JSON report and execution record,
//! compressed input, bad input refused with exit 2 and no file written, a
//! deadlock reported with exit 1, and the progress line on stderr.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{outcome, run_sbrp};

fn sbrp(args: &[&str]) -> (i32, String, String) {
    outcome(run_sbrp(args, &[]))
}

/// A file of the testbench crate (`programs/example.prog`).
fn here(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

fn example() -> String {
    here("programs/example.prog")
}

/// Every entry of a directory (to see that nothing, not even a temporary
/// file, was left behind).
fn entries(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The `cycles N` line of a report.
fn cycles(out: &str) -> u64 {
    let line = out
        .lines()
        .find(|l| l.starts_with("cycles "))
        .unwrap_or_else(|| panic!("no cycles line in\n{out}"));
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn list_presets_names_exactly_the_presets() {
    let (code, out, err) = sbrp(&["run", "--list-presets"]);
    assert_eq!(code, 0, "{err}");
    let listed: Vec<&str> = out
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let want: Vec<&str> = sbrp_gpu::presets::presets()
        .iter()
        .map(|(n, _)| *n)
        .collect();
    assert_eq!(want.len(), 23, "{want:?}");
    assert_eq!(listed, want, "{out}");
}

#[test]
fn example_program_passes_under_three_presets_and_writes_its_json_report() {
    for preset in ["sbrp-near", "epoch-far", "gpm-far"] {
        let keep = tempfile::tempdir().unwrap();
        let json = keep.path().join("report.json");
        let (code, out, err) = sbrp(&[
            "run",
            "--trace",
            &example(),
            "--preset",
            preset,
            "--json",
            json.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{preset}: {out}\n{err}");
        assert!(out.lines().any(|l| l == "PASS"), "{preset}: {out}");
        let c = cycles(&out);
        assert!(c > 0, "{preset}: {out}");
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        for key in ["cycles", "kernels", "sm", "mem", "stalls"] {
            assert!(v.get(key).is_some(), "{preset}: no `{key}` in {v}");
        }
        assert_eq!(
            v["cycles"].as_u64(),
            Some(c),
            "{preset}: JSON and text differ"
        );
        let kernels = v["kernels"].as_array().unwrap();
        assert_eq!(kernels.len(), 2, "{preset}: {v}");
        assert_eq!(kernels[0]["name"], "update");
        assert_eq!(kernels[1]["name"], "check");
        // Only the report: no temporary file beside it.
        assert_eq!(entries(keep.path()), ["report.json"], "{preset}");
    }
}

#[test]
fn the_presets_give_different_timings() {
    let c: Vec<u64> = ["sbrp-near", "gpm-far"]
        .iter()
        .map(|p| {
            let (code, out, err) = sbrp(&["run", "--trace", &example(), "--preset", p]);
            assert_eq!(code, 0, "{p}: {err}");
            cycles(&out)
        })
        .collect();
    assert_ne!(c[0], c[1], "sbrp-near and gpm-far take the same cycles");
}

#[test]
fn litmus_trace_passes_under_sbrp_and_epoch() {
    let t = here("litmus/07_device_release_acquire.trace");
    for preset in ["sbrp-near", "epoch-near"] {
        let (code, out, err) = sbrp(&["run", "--trace", &t, "--preset", preset]);
        assert_eq!(code, 0, "{preset}: {out}\n{err}");
        assert!(out.lines().any(|l| l == "PASS"), "{preset}: {out}");
        assert!(!out.contains("EXPECTATION FAILED"), "{preset}: {out}");
    }
}

#[test]
fn gzipped_program_runs_like_the_plain_file() {
    let keep = tempfile::tempdir().unwrap();
    let gz = keep.path().join("example.prog.gz");
    let mut enc = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::default(),
    );
    enc.write_all(&std::fs::read(example()).unwrap()).unwrap();
    enc.finish().unwrap();
    let (c1, plain, e1) = sbrp(&["run", "--trace", &example()]);
    let (c2, zipped, e2) = sbrp(&["run", "--trace", gz.to_str().unwrap()]);
    assert_eq!((c1, c2), (0, 0), "{e1}\n{e2}");
    assert_eq!(cycles(&plain), cycles(&zipped));
    // A file named .gz that is not gzip is refused (exit 2), naming it.
    let fake = keep.path().join("fake.prog.gz");
    std::fs::copy(example(), &fake).unwrap();
    let (code, _, err) = sbrp(&["run", "--trace", fake.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("fake.prog.gz"), "{err}");
}

/// Runs `sbrp run ARGS --json DIR/out.json --record DIR/out.rec` in a fresh
/// directory: the exit must be 2, stderr must contain every word, and the
/// directory must stay empty.
fn refused(args: &[&str], words: &[&str]) {
    let keep = tempfile::tempdir().unwrap();
    let json = keep.path().join("out.json");
    let rec = keep.path().join("out.rec");
    let mut a = vec!["run"];
    a.extend(args);
    a.extend(["--json", json.to_str().unwrap()]);
    a.extend(["--record", rec.to_str().unwrap()]);
    let (code, out, err) = sbrp(&a);
    assert_eq!(code, 2, "{args:?}: {out}\n{err}");
    for w in words {
        assert!(err.contains(w), "{args:?}: `{w}` not in: {err}");
    }
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(
        entries(keep.path()).is_empty(),
        "{args:?}: left {:?}",
        entries(keep.path())
    );
}

#[test]
fn unknown_preset_is_named_with_the_presets() {
    refused(
        &["--trace", &example(), "--preset", "nosuch"],
        &["nosuch", "sbrp-near", "gpm-far"],
    );
    refused(
        &["--trace", &example(), "--preset", "sbrp-nera"],
        &["sbrp-nera", "sbrp-near"],
    );
}

#[test]
fn bad_overrides_are_refused() {
    let e = example();
    refused(&["--trace", &e, "--set", "pb.window=0"], &["pb.window"]);
    refused(
        &["--trace", &e, "--set", "nosuch.key=1"],
        &["--set", "nosuch.key"],
    );
    refused(
        &["--trace", &e, "--set", "pb.window"],
        &["--set", "KEY=VALUE"],
    );
    refused(
        &["--trace", &e, "--set", "pb.window=many"],
        &["pb.window", "many"],
    );
}

#[test]
fn program_with_a_syntax_error_is_refused_with_file_and_line() {
    let keep = tempfile::tempdir().unwrap();
    let p = keep.path().join("bad.prog");
    std::fs::write(
        &p,
        "program bad\nkernel a grid=1 block=32\ncta 0\nwarp 0\n  frobnicate 1\n",
    )
    .unwrap();
    let at = format!("{}:5", p.display());
    refused(&["--trace", p.to_str().unwrap()], &[&at, "frobnicate"]);
}

#[test]
fn missing_program_file_is_refused() {
    let keep = tempfile::tempdir().unwrap();
    let p = keep.path().join("nowhere.prog");
    refused(
        &["--trace", p.to_str().unwrap()],
        &["nowhere.prog", "cannot read"],
    );
}

#[test]
fn config_file_with_an_unknown_key_is_refused_with_file_and_line() {
    let keep = tempfile::tempdir().unwrap();
    let c = keep.path().join("gpu.toml");
    std::fs::write(&c, "# a GPU\nmodel = \"sbrp\"\nno_such_key = 1\n").unwrap();
    let at = format!("{}:3", c.display());
    refused(
        &["--trace", &example(), "--config", c.to_str().unwrap()],
        &[&at, "no_such_key"],
    );
}

#[test]
fn cosim_with_zero_sms_is_refused() {
    refused(
        &["--trace", &example(), "--cosim", "--sms", "0"],
        &["--sms", "0"],
    );
}

#[test]
fn json_into_a_missing_directory_is_refused_before_the_run() {
    let keep = tempfile::tempdir().unwrap();
    let json = keep.path().join("no/such/dir/r.json");
    let (code, out, err) = sbrp(&[
        "run",
        "--trace",
        &example(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(
        err.contains("--json") && err.contains("does not exist"),
        "{err}"
    );
    // Refused before the run: no report printed.
    assert!(!out.contains("cycles"), "{out}");
    assert!(entries(keep.path()).is_empty());
}

#[test]
fn unwritable_output_leaves_no_file_at_all() {
    // `--json` names a directory: the report cannot be renamed onto it.
    // Neither the record (written in the same all-or-nothing step) nor
    // either temporary file may be left behind.
    let keep = tempfile::tempdir().unwrap();
    let dir = keep.path().join("adir");
    std::fs::create_dir(&dir).unwrap();
    let rec = keep.path().join("r.rec");
    let (code, out, err) = sbrp(&[
        "run",
        "--trace",
        &example(),
        "--record",
        rec.to_str().unwrap(),
        "--json",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(
        err.contains("cannot write") && err.contains("adir"),
        "{err}"
    );
    assert_eq!(entries(keep.path()), ["adir"]);
    assert!(entries(&dir).is_empty());
}

#[test]
fn same_file_for_json_and_record_is_refused() {
    let keep = tempfile::tempdir().unwrap();
    let f = keep.path().join("both.json");
    let f = f.to_str().unwrap();
    let (code, _, err) = sbrp(&["run", "--trace", &example(), "--json", f, "--record", f]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--json") && err.contains("--record"), "{err}");
    assert!(entries(keep.path()).is_empty());
}

#[test]
fn deadlocking_program_exits_1_with_the_waiting_warp() {
    let keep = tempfile::tempdir().unwrap();
    let json = keep.path().join("r.json");
    let (code, out, err) = sbrp(&[
        "run",
        "--trace",
        &here("programs/deadlock.prog"),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(out.contains("NOT FINISHED"), "{out}");
    assert!(out.contains("deadlock at cycle"), "{out}");
    // Warp 1 of CTA 0 (on SM 0) spins on its acquire; warp 0 finished.
    let waiting: Vec<&str> = out.lines().filter(|l| l.contains("  warp ")).collect();
    assert_eq!(waiting.len(), 1, "{out}");
    assert!(
        waiting[0].contains("warp 0.1") && waiting[0].contains("pacq.dev"),
        "{out}"
    );
    // In words, not Rust's debug text (issue 26).
    assert!(
        waiting[0].ends_with(": busy until cycle") || waiting[0].contains("): "),
        "{out}"
    );
    assert!(
        !out.contains("Until(") && !out.contains("WaitStall {"),
        "{out}"
    );
    assert!(out.lines().any(|l| l == "FAIL"), "{out}");
    // A failed check still writes the report, which says so.
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["finished"], false);
    assert!(v["deadlock"].as_str().unwrap().contains("warp 0.1"), "{v}");
}

#[test]
fn record_writes_an_execution_record() {
    let keep = tempfile::tempdir().unwrap();
    let rec = keep.path().join("run.rec.json");
    let (code, out, err) = sbrp(&[
        "run",
        "--trace",
        &example(),
        "--record",
        rec.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&rec).unwrap()).unwrap();
    assert_eq!(v["format"], "sbrp-execution", "{v}");
    assert_eq!(v["cycles"].as_u64(), Some(cycles(&out)));
    // Four CTAs of two warps each, on SMs 0..3.
    assert_eq!(v["warps"].as_array().unwrap().len(), 8);
    assert!(!v["events"].as_array().unwrap().is_empty());
    assert_eq!(entries(keep.path()), ["run.rec.json"]);
}

/// A program that runs a few seconds on the GPU model under sbrp-near:
/// three kernels of 240 CTAs x 8 warps, each warp 64 PM stores and a dFence.
fn long_program(dir: &Path) -> PathBuf {
    let mut s = String::from("program long\n");
    for k in 0..3 {
        s += &format!("kernel big{k} grid=240 block=256\ncta 0..240\n");
        for w in 0..8 {
            s += &format!("warp {w}\n");
            for i in 0..64 {
                s += &format!("  st.pm {:#x} +4\n", (w * 64 + i) * 0x1000);
            }
            s += "  dfence\n";
        }
    }
    let p = dir.join("long.prog");
    std::fs::write(&p, s).unwrap();
    p
}

#[test]
fn progress_line_is_drawn_on_request_and_erased() {
    let keep = tempfile::tempdir().unwrap();
    let p = long_program(keep.path());
    let p = p.to_str().unwrap();
    let t0 = Instant::now();
    let (code, out, err) = sbrp(&["run", "--trace", p, "--progress"]);
    let took = t0.elapsed();
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(!out.contains('\r'), "progress on stdout: {out:?}");
    if took > Duration::from_millis(2500) {
        // Redrawn with `\r`, naming the kernel of 3, then blanked.
        assert!(err.starts_with("\rkernel "), "{err:?}");
        assert!(err.contains("/3 big"), "{err:?}");
        assert!(err.contains("M warp-instr/s"), "{err:?}");
        let last = err.rsplit('\r').nth(1).unwrap();
        assert!(!last.is_empty() && last.trim().is_empty(), "{err:?}");
        assert!(err.ends_with('\r'), "{err:?}");
        assert!(!err.contains('\n'), "{err:?}");
    } else if took < Duration::from_millis(900) {
        assert!(err.is_empty(), "short run drew progress: {err:?}");
    }
    // Not a terminal, no --progress: nothing; --quiet wins over --progress.
    for args in [vec![], vec!["--progress", "--quiet"]] {
        let mut a = vec!["run", "--trace", p];
        a.extend(args.iter());
        let (code, _, err) = sbrp(&a);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?}: {err:?}");
    }
}

#[test]
fn litmus_trace_needing_more_sms_or_warps_is_refused() {
    // Warp S.W of a litmus trace is warp W of CTA S on SM S: with one SM the
    // CTAs would share it and the expectations would name the wrong warps.
    refused(
        &[
            "--trace",
            &here("litmus/07_device_release_acquire.trace"),
            "--set",
            "core.sms=1",
        ],
        &["07_device_release_acquire.trace", "2 SMs", "core.sms = 1"],
    );
    refused(
        &[
            "--trace",
            &here("litmus/06_block_release_acquire.trace"),
            "--set",
            "core.warps_per_sm=4",
        ],
        &["5 warps per SM", "core.warps_per_sm = 4"],
    );
}

#[test]
fn a_warps_last_instruction_takes_its_latency() {
    let keep = tempfile::tempdir().unwrap();
    let run = |name: &str, body: &str| -> u64 {
        let p = keep.path().join(name);
        std::fs::write(
            &p,
            format!("program {name}\nkernel k grid=1 block=32\ncta 0\nwarp 0\n{body}"),
        )
        .unwrap();
        let (code, out, err) = sbrp(&["run", "--trace", p.to_str().unwrap()]);
        assert_eq!(code, 0, "{name}: {out}\n{err}");
        cycles(&out)
    };
    // 5000 cycles of launch latency (sbrp-near), then the compute.
    let trailing = run("trailing", "  compute 100000\n");
    let followed = run("followed", "  compute 100000\n  st.global 0x100 +4\n");
    assert!(followed >= 105_000, "{followed}");
    assert!(
        trailing >= 105_000,
        "trailing compute cost nothing: {trailing}"
    );
    // A load's data must arrive before its warp (and the kernel) ends.
    let load = run("load", "  ld.pm 0x100 +4\n");
    assert!(load > 5_000, "trailing PM load cost nothing: {load}");
}

/// `sbrp bench-gpu` on a small synthetic program: one line per preset with
/// its rate, the program's instruction mix adding up to its size, and an
/// unknown preset refused with exit 2 before anything runs.
#[test]
fn bench_gpu_reports_rates_and_the_instruction_mix() {
    let (code, out, err) = sbrp(&[
        "bench-gpu",
        "--presets",
        "epoch-near,sbrp-far",
        "--kernels",
        "1",
        "--ctas",
        "4",
        "--warps",
        "2",
        "--instrs",
        "40",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("= 320 warp instructions"), "{out}");
    let mix = out.lines().find(|l| l.starts_with("mix:")).expect(&out);
    let counts: Vec<u64> = mix
        .split(&[':', ',', '('][..])
        .filter_map(|f| f.split_whitespace().last()?.parse().ok())
        .collect();
    assert_eq!(counts.len(), 3, "{mix}");
    assert_eq!(counts.iter().sum::<u64>(), 320, "{mix}");
    assert!(counts[0] > 0 && counts[1] > 0 && counts[2] > 0, "{mix}");
    for p in ["epoch-near", "sbrp-far"] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(p) && l.contains("M warp-instr/s")),
            "{out}"
        );
    }
    assert_eq!(out.matches("memory warp instr").count(), 2, "{out}");

    let (code, out, err) = sbrp(&["bench-gpu", "--presets", "epoch-near,no-such"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("--presets no-such"), "{err}");
    assert!(out.is_empty(), "{out}");
}
