//! Slurm array jobs for `sbrp sweep --slurm`: the batch script (one array
//! task per point, its index the point's), submission with `sbatch`,
//! polling with `squeue` (not `sbatch --wait`, which polls slowly, nor
//! `sacct`, which needs an accounting database), and each task's exit code,
//! which the script writes beside the task's log.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The programs `--slurm` needs, each on `PATH` or named in an error.
pub fn check_tools() -> Result<(), String> {
    for t in ["sbatch", "squeue"] {
        if find_on_path(t).is_none() {
            return Err(format!(
                "--slurm: `{t}` not found on PATH (install Slurm's client tools, \
                 or start a local cluster with scripts/slurm-local.sh start)"
            ));
        }
    }
    Ok(())
}

/// An executable file of this name in a directory of `PATH`.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p)
                .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
                .unwrap_or(false)
        })
}

/// `--array`'s value: the indices as ranges (`0-3,5,7-9`), with `%N` when
/// at most N tasks may run at once. `indices` ascending.
pub fn array_spec(indices: &[usize], limit: Option<usize>) -> String {
    let mut parts: Vec<String> = vec![];
    let mut i = 0;
    while i < indices.len() {
        let mut j = i;
        while j + 1 < indices.len() && indices[j + 1] == indices[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            indices[i].to_string()
        } else {
            format!("{}-{}", indices[i], indices[j])
        });
        i = j + 1;
    }
    let mut s = parts.join(",");
    if let Some(n) = limit {
        s += &format!("%{n}");
    }
    s
}

/// A word for `sh`, single-quoted (so that nothing in it expands).
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Slurm's own output of a task (the script sends its own to the point's
/// log at once, so this holds only what fails before that).
pub fn slurm_output_pattern(run_dir: &Path) -> PathBuf {
    run_dir.join("slurm-%A_%a.out")
}

/// The log of the task of point `k`.
pub fn log_file(run_dir: &Path, k: usize) -> PathBuf {
    run_dir.join(format!("point-{k}.log"))
}

/// The file holding the exit code of the task of point `k`.
pub fn code_file(run_dir: &Path, k: usize) -> PathBuf {
    run_dir.join(format!("point-{k}.rc"))
}

/// The variable telling a task which point its index 0 stands for.
pub const BASE_VAR: &str = "SBRP_POINT_BASE";

/// The batch script: `argv` (absolute program path first) with `--point
/// K`, K the task's index plus `$SBRP_POINT_BASE` (0 unless the sweep is
/// split into several arrays), its output into point-K.log, then its exit
/// code into point-K.rc (written whole: a temporary file, renamed).
pub fn batch_script(argv: &[String], run_dir: &Path) -> String {
    let cmd: Vec<String> = argv.iter().map(|a| shell_quote(a)).collect();
    let stem = shell_quote(&run_dir.join("point-").to_string_lossy());
    format!(
        "#!/bin/sh\n\
         # Written by `sbrp sweep --slurm`: array task I runs point K = I +\n\
         # ${BASE_VAR} of the sweep into the shared cache; its output goes to\n\
         # point-K.log, its exit code to point-K.rc.\n\
         k=$((SLURM_ARRAY_TASK_ID + ${{{BASE_VAR}:-0}}))\n\
         exec > {stem}\"$k.log\" 2>&1\n\
         {} --point \"$k\"\n\
         rc=$?\n\
         echo \"$rc\" > {stem}\"$k.rc.part\" && mv {stem}\"$k.rc.part\" {stem}\"$k.rc\"\n\
         exit \"$rc\"\n",
        cmd.join(" ")
    )
}

/// The points as array jobs whose task indices stay below `max` (Slurm's
/// MaxArraySize): (base, the points), each point's task index its own
/// minus the base. One job when every point is below `max`.
pub fn chunks(points: &[usize], max: usize) -> Vec<(usize, Vec<usize>)> {
    let max = max.max(1);
    let mut v: Vec<(usize, Vec<usize>)> = vec![];
    for &k in points {
        let base = k / max * max;
        match v.last_mut() {
            Some((b, ks)) if *b == base => ks.push(k),
            _ => v.push((base, vec![k])),
        }
    }
    v
}

/// The cluster's MaxArraySize (`scontrol show config`; Slurm's default,
/// 1001, when it cannot be read).
pub fn max_array_size() -> usize {
    Command::new("scontrol")
        .args(["show", "config"])
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout).lines().find_map(|l| {
                let (k, v) = l.split_once('=')?;
                (k.trim() == "MaxArraySize")
                    .then(|| v.trim().parse().ok())
                    .flatten()
            })
        })
        .filter(|&n: &usize| n > 0)
        .unwrap_or(1001)
}

/// A new directory `parent/N` (the first free N from 1) for one submission's
/// script, logs and exit codes; made atomically, so concurrent submitters
/// into one output directory get different ones.
pub fn new_run_dir(parent: &Path) -> Result<PathBuf, String> {
    std::fs::create_dir_all(parent)
        .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    for n in 1.. {
        let d = parent.join(n.to_string());
        match std::fs::create_dir(&d) {
            Ok(()) => return Ok(d),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("cannot create {}: {e}", d.display())),
        }
    }
    unreachable!("some number is free")
}

/// What to submit.
#[derive(Clone, Debug)]
pub struct Submit<'a> {
    /// The points of this array job, and the point its index 0 stands for.
    pub points: &'a [usize],
    pub base: usize,
    pub partition: Option<&'a str>,
    pub array_limit: Option<usize>,
    pub job_name: &'a str,
    /// The tasks' working directory.
    pub chdir: &'a Path,
}

/// Writes the script into `run_dir` (once for all the sweep's arrays) and
/// submits an array job of it; returns the job id. Errors carry sbatch's
/// own message.
pub fn submit(s: &Submit, argv: &[String], run_dir: &Path) -> Result<String, String> {
    let script = run_dir.join("job.sh");
    if !script.exists() {
        std::fs::write(&script, batch_script(argv, run_dir))
            .map_err(|e| format!("cannot write {}: {e}", script.display()))?;
    }
    let tasks: Vec<usize> = s.points.iter().map(|k| k - s.base).collect();
    let mut c = Command::new("sbatch");
    c.arg("--parsable")
        .arg(format!("--job-name={}", s.job_name))
        .arg(format!("--array={}", array_spec(&tasks, s.array_limit)))
        .arg(format!(
            "--output={}",
            slurm_output_pattern(run_dir).display()
        ))
        .arg(format!("--chdir={}", s.chdir.display()))
        .arg(format!("--export=ALL,{BASE_VAR}={}", s.base));
    if let Some(p) = s.partition {
        c.arg(format!("--partition={p}"));
    }
    let o = c
        .arg(&script)
        .output()
        .map_err(|e| format!("cannot run sbatch: {e}"))?;
    let out = String::from_utf8_lossy(&o.stdout);
    if !o.status.success() {
        let err = String::from_utf8_lossy(&o.stderr);
        return Err(format!(
            "sbatch failed ({}): {}",
            o.status,
            err.trim().lines().last().unwrap_or("no message")
        ));
    }
    // `--parsable` prints `ID` or `ID;CLUSTER`.
    let id = out.trim().split(';').next().unwrap_or("").to_string();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!("sbatch printed no job id: `{}`", out.trim()));
    }
    Ok(id)
}

/// Cancels jobs (after a later array of the sweep could not be submitted).
pub fn cancel(jobs: &[String]) {
    if !jobs.is_empty() {
        let _ = Command::new("scancel").args(jobs).status();
    }
}

/// The job's tasks still in the queue: (pending, running or other
/// states). `None` once none is (squeue lists none, or no longer knows
/// the job). Errors carry squeue's message.
pub fn queued(job: &str) -> Result<Option<(usize, usize)>, String> {
    let o = Command::new("squeue")
        .args(["-h", "-r", "-j", job, "-o", "%T"])
        .output()
        .map_err(|e| format!("cannot run squeue: {e}"))?;
    let err = String::from_utf8_lossy(&o.stderr);
    if !o.status.success() {
        // A finished job leaves the controller's memory after MinJobAge.
        if err.contains("Invalid job id") {
            return Ok(None);
        }
        return Err(format!(
            "squeue failed ({}): {}",
            o.status,
            err.trim().lines().last().unwrap_or("no message")
        ));
    }
    let out = String::from_utf8_lossy(&o.stdout);
    let states: Vec<&str> = out
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if states.is_empty() {
        return Ok(None);
    }
    let pending = states.iter().filter(|s| **s == "PENDING").count();
    Ok(Some((pending, states.len() - pending)))
}

/// Polls `squeue` until the job has no task left, calling `tick(pending,
/// running)` after each answer: every second for two minutes, then every
/// ten. Gives up after `patience` of squeue failing in a row.
pub fn wait(
    job: &str,
    patience: Duration,
    tick: &mut dyn FnMut(usize, usize),
) -> Result<(), String> {
    let t0 = Instant::now();
    let mut failing_since: Option<Instant> = None;
    loop {
        match queued(job) {
            Ok(None) => return Ok(()),
            Ok(Some((p, r))) => {
                failing_since = None;
                tick(p, r);
            }
            Err(e) => {
                let since = *failing_since.get_or_insert_with(Instant::now);
                if since.elapsed() >= patience {
                    return Err(format!(
                        "{e} (for {} s in a row; job {job} may still run: `squeue -j {job}`)",
                        patience.as_secs()
                    ));
                }
            }
        }
        let step = if t0.elapsed() < Duration::from_secs(120) {
            1
        } else {
            10
        };
        std::thread::sleep(Duration::from_secs(step));
    }
}

/// A task's exit code as its script recorded it: `None` when it recorded
/// none (killed, cancelled, timed out or never started).
pub fn exit_code(run_dir: &Path, k: usize) -> Option<i32> {
    std::fs::read_to_string(code_file(run_dir, k))
        .ok()?
        .trim()
        .parse()
        .ok()
}
