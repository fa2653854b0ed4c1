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

/// A task's log, `%a` standing for its index as sbatch's `--output` takes it.
pub fn log_pattern(run_dir: &Path) -> PathBuf {
    run_dir.join("point-%a.log")
}

/// The log of the task of point `k`.
pub fn log_file(run_dir: &Path, k: usize) -> PathBuf {
    run_dir.join(format!("point-{k}.log"))
}

/// The file holding the exit code of the task of point `k`.
pub fn code_file(run_dir: &Path, k: usize) -> PathBuf {
    run_dir.join(format!("point-{k}.rc"))
}

/// The batch script: `argv` (absolute program path first) with
/// `--point $SLURM_ARRAY_TASK_ID`, then its exit code into the task's
/// code file (written whole: a temporary file, renamed).
pub fn batch_script(argv: &[String], run_dir: &Path) -> String {
    let cmd: Vec<String> = argv.iter().map(|a| shell_quote(a)).collect();
    let rc = shell_quote(&run_dir.join("point-").to_string_lossy());
    format!(
        "#!/bin/sh\n\
         # Written by `sbrp sweep --slurm`: array task K runs point K of the\n\
         # sweep into the shared cache and leaves its exit code in point-K.rc.\n\
         {} --point \"$SLURM_ARRAY_TASK_ID\"\n\
         rc=$?\n\
         echo \"$rc\" > {rc}\"$SLURM_ARRAY_TASK_ID.rc.part\" && mv {rc}\"$SLURM_ARRAY_TASK_ID.rc.part\" {rc}\"$SLURM_ARRAY_TASK_ID.rc\"\n\
         exit \"$rc\"\n",
        cmd.join(" ")
    )
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
    /// The array task indices (the points to run).
    pub indices: &'a [usize],
    pub partition: Option<&'a str>,
    pub array_limit: Option<usize>,
    pub job_name: &'a str,
    /// The tasks' working directory.
    pub chdir: &'a Path,
}

/// Writes the script into `run_dir` and submits it; returns the job id.
/// Errors carry sbatch's own message.
pub fn submit(s: &Submit, argv: &[String], run_dir: &Path) -> Result<String, String> {
    let script = run_dir.join("job.sh");
    std::fs::write(&script, batch_script(argv, run_dir))
        .map_err(|e| format!("cannot write {}: {e}", script.display()))?;
    let mut c = Command::new("sbatch");
    c.arg("--parsable")
        .arg(format!("--job-name={}", s.job_name))
        .arg(format!("--array={}", array_spec(s.indices, s.array_limit)))
        .arg(format!("--output={}", log_pattern(run_dir).display()))
        .arg(format!("--chdir={}", s.chdir.display()));
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
