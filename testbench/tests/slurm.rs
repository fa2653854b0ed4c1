//! `sbrp sweep --slurm` on a real single-node Slurm that
//! scripts/slurm-local.sh installs and starts (root only; CI is root): the
//! tables equal the local run's byte for byte, a failed task is reported
//! with its exit code and log and leaves no tables, the rerun submits only
//! the missing point; plus the array spec, the batch script and the
//! refusals that need no cluster.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{outcome, run_sbrp};
use sbrp_testbench::slurm;

fn sbrp(args: &[&str]) -> (i32, String, String) {
    outcome(run_sbrp(args, &[]))
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/slurm-local.sh")
}

fn local_cluster(cmd: &str) -> (i32, String, String) {
    outcome(
        Command::new("bash")
            .arg(script())
            .arg(cmd)
            .output()
            .expect("bash runs"),
    )
}

/// Stops the cluster when dropped, if this test started it.
struct Cluster {
    started: bool,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if self.started {
            let (code, out, err) = local_cluster("stop");
            eprintln!("{out}{err}");
            if code != 0 && !std::thread::panicking() {
                panic!("slurm-local.sh stop failed: {err}");
            }
        }
    }
}

/// The local cluster, up; `None` (with the reason printed) only where the
/// script cannot run: not root, or Slurm missing and no apt-get to get it.
fn cluster() -> Option<Cluster> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIPPED: not root (scripts/slurm-local.sh installs and starts daemons)");
        return None;
    }
    if slurm::find_on_path("sbatch").is_none() && slurm::find_on_path("apt-get").is_none() {
        eprintln!("SKIPPED: no Slurm and no apt-get to install it");
        return None;
    }
    let was_up = local_cluster("status").0 == 0;
    let t0 = std::time::Instant::now();
    let (code, out, err) = local_cluster("start");
    assert_eq!(code, 0, "slurm-local.sh start: {out}{err}");
    eprintln!("{}in {:.1} s", out, t0.elapsed().as_secs_f64());
    Some(Cluster { started: !was_up })
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

const GRID: [&str; 13] = [
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

fn sweep(out: &Path, base: &[&str], extra: &[&str]) -> (i32, String, String) {
    let mut v = vec!["sweep", "--out", out.to_str().unwrap()];
    v.extend_from_slice(base);
    v.extend_from_slice(extra);
    sbrp(&v)
}

/// Runs `sbrp sweep --slurm` and cancels its job once submitted (and,
/// given a log, once that log exists: its task has started). Exit code
/// and stdout.
fn cancel_sweep(out: &Path, base: &[&str], extra: &[&str], log: Option<&Path>) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sbrp"))
        .args(["sweep", "--out", out.to_str().unwrap()])
        .args(base)
        .arg("--slurm")
        .args(extra)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // One reader for all of stdout, so that nothing it buffered is lost.
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut first).unwrap();
    let job = first
        .strip_prefix("submitted Slurm job ")
        .and_then(|r| r.split(':').next())
        .unwrap_or_else(|| panic!("{first}"));
    if let Some(log) = log {
        let t0 = std::time::Instant::now();
        while !log.exists() {
            assert!(t0.elapsed().as_secs() < 60, "the task never started");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
    let st = Command::new("scancel").arg(job).status().unwrap();
    assert!(st.success(), "scancel {job}");
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let (code, _, err) = outcome(child.wait_with_output().unwrap());
    eprintln!("cancelled:\n{first}{rest}{err}");
    (code, first + &rest)
}

#[test]
fn a_sweep_on_slurm_equals_the_local_run_and_reports_failed_tasks() {
    let Some(_cluster) = cluster() else { return };
    let d = tempfile::tempdir().unwrap();
    let (local, remote, broken) = (d.path().join("l"), d.path().join("s"), d.path().join("f"));

    // 2 apps x 2 presets x 2 windows, locally and as 8 array tasks.
    let t0 = std::time::Instant::now();
    let (code, out, err) = sweep(&local, &GRID, &[]);
    assert_eq!(code, 0, "{out}{err}");
    let t_local = t0.elapsed().as_secs_f64();
    let t0 = std::time::Instant::now();
    let (code, out, err) = sweep(&remote, &GRID, &["--slurm"]);
    assert_eq!(code, 0, "{out}{err}");
    eprintln!(
        "8 points: local {t_local:.1} s, on Slurm {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    assert!(
        out.contains("submitted Slurm job") && out.contains("8 array tasks (points 0-7)"),
        "{out}"
    );
    assert!(
        out.contains("8 run as array tasks of Slurm job") && out.contains("(0 failed)"),
        "{out}"
    );
    for f in ["sweep.csv", "sweep.json"] {
        assert_eq!(
            read(&remote.join(f)),
            read(&local.join(f)),
            "{f}: Slurm's differs from the local run's"
        );
    }
    let run = remote.join("slurm/1");
    for k in 0..8 {
        assert_eq!(slurm::exit_code(&run, k), Some(0), "task {k}");
        assert!(slurm::log_file(&run, k).exists(), "task {k}'s log");
        let log = String::from_utf8_lossy(&read(&slurm::log_file(&run, k))).into_owned();
        assert!(
            log.contains(&format!("point {k} (")),
            "task {k} ran point {k}: {log}"
        );
    }
    // Everything cached: nothing is submitted, the tables are the same.
    std::fs::remove_file(remote.join("sweep.csv")).unwrap();
    let (code, out, _) = sweep(&remote, &GRID, &["--slurm"]);
    assert_eq!(code, 0);
    assert!(out.contains("nothing to submit"), "{out}");
    assert!(!remote.join("slurm/2").exists(), "nothing submitted");
    assert_eq!(
        read(&remote.join("sweep.csv")),
        read(&local.join("sweep.csv"))
    );

    // A task that fails: point 3's cache file is a directory, so its run
    // cannot store it (exit 2). Reported with its exit code and log; the
    // point is missing, so no tables, and exit 1.
    let (_, list, _) = sweep(&broken, &GRID, &["--list"]);
    let key = list
        .lines()
        .find_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.first() == Some(&"3")).then(|| w[1].to_string())
        })
        .expect("point 3 listed");
    let blocker = broken.join("points").join(format!("{key}.json"));
    std::fs::create_dir_all(&blocker).unwrap();
    let (code, out, err) = sweep(&broken, &GRID, &["--slurm", "--array-limit", "2"]);
    assert_eq!(code, 1, "{out}{err}");
    let log = broken.join("slurm/1/point-3.log");
    let line = out
        .lines()
        .find(|l| l.starts_with("FAILED point"))
        .unwrap_or_else(|| panic!("no failed task reported: {out}"));
    assert!(
        line.starts_with("FAILED point 3, task ")
            && line.contains("_3 (scan under epoch-near pb.window=6): exit code 2; log ")
            && line.ends_with(log.to_str().unwrap()),
        "{line}"
    );
    assert_eq!(out.matches("FAILED").count(), 1, "{out}");
    assert!(
        out.contains("1 of 8 points not in the cache: no tables written"),
        "{out}"
    );
    assert!(
        !broken.join("sweep.csv").exists(),
        "no tables with a point missing"
    );
    let log = String::from_utf8_lossy(&read(&log)).into_owned();
    assert!(log.contains("cannot write") && log.contains(&key), "{log}");
    // Fixed, the same command submits the one missing point and completes.
    std::fs::remove_dir(&blocker).unwrap();
    let (code, out, err) = sweep(&broken, &GRID, &["--slurm", "--partition", "debug"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("1 array task (points 3)"), "{out}");
    assert!(out.contains("1 run as array tasks"), "{out}");
    for f in ["sweep.csv", "sweep.json"] {
        assert_eq!(read(&broken.join(f)), read(&local.join(f)), "{f}");
    }

    // Cancelled at once (one task at a time, so most never start): the
    // tasks that never started are reported as such, and no tables written.
    let cancelled = d.path().join("c");
    let (code, out) = cancel_sweep(&cancelled, &GRID, &["--array-limit", "1"], None);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("never started (cancelled, or refused by the node); no log at "),
        "{out}"
    );
    assert!(
        out.contains("points not in the cache: no tables written"),
        "{out}"
    );
    assert!(!cancelled.join("sweep.csv").exists());
    // Cancelled while its one task runs (MQ at its full size, checked:
    // seconds): killed, so no exit code, but a log.
    let killed = d.path().join("k");
    let slow = ["--apps", "mq", "--presets", "sbrp-near"];
    let log = killed.join("slurm/1/point-0.log");
    let (code, out) = cancel_sweep(&killed, &slow, &[], Some(&log));
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "(mq under sbrp-near (preset)): no exit code recorded (killed, cancelled or timed out); log {}",
            log.display()
        )),
        "{out}"
    );

    // Figure 10 as array tasks: its tables and plot equal the local ones.
    let fig = [
        "--figure",
        "10",
        "--apps",
        "scan",
        "--shrink",
        "8",
        "--no-check",
    ];
    let (fl, fs) = (d.path().join("fl"), d.path().join("fs"));
    let (code, out, err) = sweep(&fl, &fig, &["--jobs", "2"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = sweep(&fs, &fig, &["--slurm"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("14 array tasks"), "{out}");
    for f in [
        "fig10a.csv",
        "fig10b.json",
        "fig10c.csv",
        "fig10.svg",
        "sweep.csv",
    ] {
        assert_eq!(read(&fs.join(f)), read(&fl.join(f)), "{f}");
    }

    // The crash campaign's script: Scan under sbrp-near on Slurm gives the
    // local table (but the wall seconds); a run under an unknown preset is
    // a failed task (exit code 2, its log), and the script exits 1.
    let campaign = |opts: &[&str], dir: &Path, presets: &[&str]| {
        let crash_script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/crash-campaign.sh");
        let mut c = Command::new("bash");
        c.arg(crash_script)
            .args(opts)
            .arg(dir)
            .args(presets)
            .env("APPS", "scan")
            .env("SBRP", env!("CARGO_BIN_EXE_sbrp"));
        outcome(c.output().unwrap())
    };
    // A table's rows without their last column (wall seconds).
    let rows = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.starts_with("| sbrp-near") || l.starts_with("| nosuch"))
            .map(|l| l.rsplitn(3, '|').nth(2).unwrap().to_string())
            .collect()
    };
    let (code, local_table, err) = campaign(&[], &d.path().join("cl"), &["sbrp-near"]);
    assert_eq!(code, 0, "{local_table}{err}");
    let cs = d.path().join("cs");
    let (code, table, err) = campaign(&["--slurm"], &cs, &["sbrp-near", "nosuch"]);
    assert_eq!(code, 1, "{table}{err}");
    let got = rows(&table);
    assert_eq!(got.len(), 2, "{table}");
    assert_eq!(got[0], rows(&local_table)[0], "Slurm's row differs");
    assert!(got[0].contains("| 0 | 0 |"), "nothing broken: {table}");
    let log = cs.join("nosuch-scan.txt");
    assert!(
        err.contains(&format!(
            "FAILED task {}_1 (nosuch scan): exit code 2; log {}",
            err.split("Slurm job ")
                .nth(1)
                .and_then(|r| r.split(',').next())
                .unwrap_or("?"),
            log.display()
        )),
        "{err}"
    );
    assert!(
        String::from_utf8_lossy(&read(&log)).contains("nosuch"),
        "the log says why"
    );
    assert_eq!(err.matches("FAILED").count(), 1, "{err}");

    // A partition the cluster lacks: sbatch's message, exit 2, no trace.
    let nowhere = d.path().join("p");
    let (code, out, err) = sweep(&nowhere, &GRID, &["--slurm", "--partition", "nosuch"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("sbatch failed") && err.contains("partition"),
        "{err}"
    );
    assert!(!nowhere.exists(), "nothing left behind");
}

#[test]
fn without_slurm_or_with_bad_slurm_options_nothing_runs() {
    let d = tempfile::tempdir().unwrap();
    let o = d.path().join("never");
    let empty = d.path().join("empty-path");
    std::fs::create_dir(&empty).unwrap();
    let mut v = vec!["sweep", "--out", o.to_str().unwrap()];
    v.extend_from_slice(&GRID);
    v.push("--slurm");
    let (code, out, err) = outcome(run_sbrp(&v, &[("PATH", empty.to_str().unwrap())]));
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("--slurm: `sbatch` not found on PATH") && err.contains("slurm-local.sh"),
        "{err}"
    );
    assert!(out.is_empty(), "{out}");
    for (extra, words) in [
        (vec!["--array-limit", "0"], "--array-limit 0"),
        (
            vec!["--partition", "a,,b"],
            "--partition `a,,b`: a partition name",
        ),
        (vec!["--partition", ""], "--partition ``"),
        (vec!["--point", "1"], "--point"),
        (vec!["--list"], "--list"),
    ] {
        let mut w = v.clone();
        w.extend(extra.iter());
        let (code, out, err) = sbrp(&w);
        assert_eq!(code, 2, "{extra:?}: {out}{err}");
        assert!(err.contains(words), "{extra:?}: {err}");
    }
    // The crash campaign's script: the same refusals, before it builds or
    // writes anything (a PATH with `dirname` alone, which it needs first).
    std::os::unix::fs::symlink("/usr/bin/dirname", empty.join("dirname")).unwrap();
    let crash_script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/crash-campaign.sh");
    // Found on this PATH: the child's has no bash.
    let bash = slurm::find_on_path("bash").expect("bash");
    for (opts, words) in [
        (vec!["--slurm"], "--slurm: `sbatch` not found on PATH"),
        (
            vec!["--partition", "debug"],
            "--partition only with --slurm",
        ),
    ] {
        let (code, out, err) = outcome(
            Command::new(&bash)
                .arg(&crash_script)
                .args(&opts)
                .arg(&o)
                .env("PATH", empty.to_str().unwrap())
                .output()
                .unwrap(),
        );
        assert_eq!(code, 2, "{opts:?}: {out}{err}");
        assert!(err.contains(words), "{opts:?}: {err}");
    }
    // Slurm's options only with --slurm.
    let mut w: Vec<&str> = v[..v.len() - 1].to_vec();
    w.extend(["--partition", "debug"]);
    let (code, _, err) = sbrp(&w);
    assert_eq!(code, 2);
    assert!(err.contains("--slurm"), "{err}");
    assert!(!o.exists(), "nothing written");
}

#[test]
fn points_past_max_array_size_go_into_further_arrays() {
    assert_eq!(slurm::chunks(&[0, 1, 5], 1001), [(0, vec![0, 1, 5])]);
    assert_eq!(
        slurm::chunks(&[3, 999, 1000, 1001, 2500], 1000),
        [
            (0, vec![3, 999]),
            (1000, vec![1000, 1001]),
            (2000, vec![2500])
        ]
    );
    assert!(slurm::chunks(&[], 1000).is_empty());
}

#[test]
fn array_specs_compress_runs_of_indices() {
    assert_eq!(slurm::array_spec(&[0, 1, 2, 3], None), "0-3");
    assert_eq!(
        slurm::array_spec(&[0, 1, 2, 5, 7, 8, 9], Some(4)),
        "0-2,5,7-9%4"
    );
    assert_eq!(slurm::array_spec(&[3], None), "3");
    assert_eq!(slurm::array_spec(&[1, 3, 5], Some(1)), "1,3,5%1");
}

#[test]
fn the_batch_script_runs_the_point_and_keeps_its_exit_code() {
    // The script, run by sh with the task's variable set: the arguments
    // arrive unexpanded and whole, the exit code lands in the code file.
    let d = tempfile::tempdir().unwrap();
    let run = d.path().join("run dir");
    std::fs::create_dir(&run).unwrap();
    let args = d.path().join("args");
    let argv = [
        "sh".to_string(),
        "-c".to_string(),
        format!(
            "printf '%s\\n' \"$@\" > {}; exit 3",
            slurm::shell_quote(args.to_str().unwrap())
        ),
        "x".to_string(),
        "it's $HOME".to_string(),
        "a b".to_string(),
    ];
    let s = slurm::batch_script(&argv, &run);
    assert!(s.starts_with("#!/bin/sh\n"), "{s}");
    let job = run.join("job.sh");
    std::fs::write(&job, &s).unwrap();
    let task = |i: &str, base: Option<&str>| {
        let mut c = Command::new("sh");
        c.arg(&job)
            .env("SLURM_ARRAY_TASK_ID", i)
            .env_remove(slurm::BASE_VAR);
        if let Some(b) = base {
            c.env(slurm::BASE_VAR, b);
        }
        c.status().unwrap()
    };
    assert_eq!(
        task("7", None).code(),
        Some(3),
        "the task exits as the point did"
    );
    assert_eq!(
        std::fs::read_to_string(&args).unwrap(),
        "it's $HOME\na b\n--point\n7\n"
    );
    assert_eq!(slurm::exit_code(&run, 7), Some(3));
    assert_eq!(slurm::exit_code(&run, 6), None);
    assert!(
        slurm::log_file(&run, 7).exists(),
        "the task's output, in its point's log"
    );
    // In a second array (from point 1000), task 4 is point 1004.
    assert_eq!(task("4", Some("1000")).code(), Some(3));
    assert!(std::fs::read_to_string(&args)
        .unwrap()
        .ends_with("--point\n1004\n"));
    assert_eq!(slurm::exit_code(&run, 1004), Some(3));
}
