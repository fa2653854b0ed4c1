//! Regression tests of issue 26 ("No panics, clear errors") through the
//! `sbrp` binary: outputs only over regular files and gzip for `.gz`
//! names, configuration errors naming where the value came from, program
//! `config` lines checked as `sbrp cosim` checks them, control bytes of bad
//! input escaped in messages, HM's program through `trace` and `run`.

mod common;

use std::path::Path;

use common::{outcome, run_sbrp};

fn sbrp(args: &[&str]) -> (i32, String, String) {
    outcome(run_sbrp(args, &[]))
}

fn example() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("programs/example.prog")
        .to_string_lossy()
        .into_owned()
}

fn refused(args: &[&str], words: &[&str]) -> String {
    let (code, out, err) = sbrp(args);
    assert_eq!(code, 2, "{args:?}\n{out}\n{err}");
    assert!(out.is_empty(), "{args:?} printed a report:\n{out}");
    for w in words {
        assert!(err.contains(w), "{args:?}: `{w}` not in\n{err}");
    }
    err
}

#[test]
fn outputs_are_written_only_over_regular_files() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("a-directory");
    std::fs::create_dir(&dir).unwrap();
    let dir = dir.to_str().unwrap();
    let ex = example();
    for (flag, f) in [
        ("--json", "/dev/null"),
        ("--record", "/dev/null"),
        ("--json", dir),
    ] {
        refused(
            &["run", "--trace", &ex, flag, f, "--quiet"],
            &[flag, f, "not a regular file"],
        );
    }
    refused(
        &[
            "trace",
            "--app",
            "scan",
            "--size",
            "30720",
            "--out",
            "/dev/null",
        ],
        &["--out", "/dev/null", "not a regular file"],
    );
    assert!(Path::new(dir).is_dir());
    // Inputs too: a device could be read forever.
    refused(
        &["run", "--trace", "/dev/zero"],
        &["/dev/zero", "not a regular file"],
    );
    refused(
        &["run", "--trace", &ex, "--config", "/dev/zero"],
        &["--config /dev/zero", "not a regular file"],
    );
}

#[test]
fn trace_writes_gzip_for_gz_names_and_leaves_part_files_alone() {
    let d = tempfile::tempdir().unwrap();
    let gz = d.path().join("scan.prog.gz");
    let plain = d.path().join("scan.prog");
    let part = d.path().join("scan.part");
    std::fs::write(&part, "not ours").unwrap();
    for f in [&gz, &plain] {
        let (code, _, err) = sbrp(&[
            "trace",
            "--app",
            "scan",
            "--size",
            "30720",
            "--out",
            f.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
    }
    let bytes = std::fs::read(&gz).unwrap();
    assert_eq!(&bytes[..2], &[0x1f, 0x8b], "not gzip");
    assert!(bytes.len() * 4 < std::fs::metadata(&plain).unwrap().len() as usize);
    let (code, out, err) = sbrp(&["run", "--trace", gz.to_str().unwrap(), "--quiet"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(std::fs::read_to_string(&part).unwrap(), "not ours");
    // Nothing else was left in the directory.
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 3);
}

#[test]
fn configuration_errors_name_where_the_value_came_from() {
    let d = tempfile::tempdir().unwrap();
    let toml = d.path().join("bad.toml");
    std::fs::write(&toml, "[pm]\nchannels = 4\nwrite_bandwidth = 1e308\n").unwrap();
    let ex = example();
    refused(
        &["run", "--trace", &ex, "--config", toml.to_str().unwrap()],
        &["bad.toml:3:", "pm.write_bandwidth", "1e308", "GB/s"],
    );
    for (set, words) in [
        ("l2.assoc=512", ["--set l2.assoc=512", "allowed 1..=256"]),
        (
            "pm.write_bandwidth=5e-324",
            ["--set pm.write_bandwidth", "5e-324"],
        ),
        (
            "pm.write_bandwidth=1e-20",
            ["--set pm.write_bandwidth", "1e-20"],
        ),
    ] {
        refused(&["run", "--trace", &ex, "--set", set], &words);
    }
    // The same values in `sbrp suite`: refused before any worker starts.
    refused(
        &[
            "suite",
            "--apps",
            "scan",
            "--set",
            "pm.write_bandwidth=1e308",
        ],
        &["pm.write_bandwidth"],
    );
}

#[test]
fn program_config_lines_are_checked_as_cosim_checks_them() {
    let d = tempfile::tempdir().unwrap();
    for (line, words) in [
        (
            "config l1_ways=3",
            ["p.prog:2: config l1_ways=3", "allowed 1, 2, 4, 8, 16"],
        ),
        (
            "config pm_latency=banana",
            ["p.prog:2: config pm_latency", "banana"],
        ),
    ] {
        let p = d.path().join("p.prog");
        std::fs::write(&p, format!("program p\n{line}\nkernel k grid=1 block=32\n")).unwrap();
        refused(&["run", "--trace", p.to_str().unwrap()], &words);
    }
}

#[test]
fn control_bytes_of_bad_input_are_escaped() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("esc.prog");
    std::fs::write(
        &p,
        "program p\nkernel k grid=1 block=32\ncta 0\nwarp 0\n  \x1b[2Jbad\n",
    )
    .unwrap();
    let err = refused(
        &["run", "--trace", p.to_str().unwrap()],
        &["esc.prog:5", "\\u{1b}"],
    );
    assert!(!err.contains('\x1b'), "{err:?}");
}

#[test]
fn hm_program_file_runs_like_the_app() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("hm.prog");
    let (code, _, err) = sbrp(&[
        "trace",
        "--app",
        "hm",
        "--size",
        "2500",
        "--out",
        p.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = sbrp(&["run", "--trace", p.to_str().unwrap(), "--quiet"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.ends_with("PASS\n"), "{out}");
}

#[test]
fn impossible_options_are_refused_not_clamped() {
    let ex = example();
    refused(
        &["run", "--trace", &ex, "--cosim", "--sms", "1000"],
        &["--sms 1000", "30 SMs"],
    );
    refused(
        &["run", "--trace", &ex, "--preset", "epoch-near", "--cosim"],
        &["--cosim", "no persist buffer"],
    );
    refused(
        &["suite", "--apps", "scan", "--jobs", "0"],
        &["--jobs 0", "1 to 256"],
    );
    refused(
        &["suite", "--apps", "scan", "--jobs", "1000"],
        &["--jobs 1000", "1 to 256"],
    );
    refused(
        &["suite", "--apps", "scan,mq,scan"],
        &["`scan` given twice"],
    );
    refused(
        &["bench-gpu", "--warps", "33", "--ctas", "1", "--instrs", "4"],
        &["--warps 33", "core.warps_per_sm = 32"],
    );
}

#[test]
fn a_cut_run_says_why() {
    let (code, out, err) = sbrp(&[
        "run",
        "--trace",
        &example(),
        "--max-cycles",
        "100",
        "--quiet",
    ]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        out.contains("NOT FINISHED") && out.contains("cycle limit"),
        "{out}"
    );
}

#[cfg(unix)]
#[test]
fn an_unwritable_json_directory_is_refused_before_the_run() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let ro = d.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    // Root writes anywhere: nothing to see then.
    if std::fs::write(ro.join("x"), "").is_ok() {
        return;
    }
    let f = ro.join("r.json");
    let (code, out, err) = sbrp(&["run", "--trace", &example(), "--json", f.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(
        out.is_empty() && err.contains("cannot write in"),
        "{out}\n{err}"
    );
}

#[test]
fn fuzz_gpu_runs_and_refuses_bad_options() {
    let (code, out, err) = sbrp(&[
        "fuzz-gpu",
        "--programs",
        "6",
        "--seed",
        "3",
        "--max-cycles",
        "2000",
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.starts_with("6 programs (3 mutated, 3 generated), seed 3:"),
        "{out}"
    );
    assert!(out.ends_with("PASS\n"), "{out}");
    refused(
        &["fuzz-gpu", "--presets", "nope"],
        &["unknown preset `nope`"],
    );
    refused(&["fuzz-gpu", "--programs", "0"], &["--programs 0"]);
}
