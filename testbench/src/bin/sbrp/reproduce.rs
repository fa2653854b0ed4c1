//! `sbrp reproduce`: the project's whole report in one command. Each step
//! is this same binary (or Verilator for the lint) run as a child process
//! in the output directory, so the command a page shows is exactly the one
//! that ran; its output goes to `logs/ID.txt`, its files to its folder, and
//! `index.html` (`sbrp_testbench::report_html`) links them all.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use sbrp_testbench::report_html::{index_html, StepReport};

use crate::args::jobs as jobs_arg;
use crate::Verdict;

#[derive(Args)]
pub struct ReproduceArgs {
    /// Output directory (created if missing; files of an earlier run are
    /// replaced, the sweep's cache is reused).
    #[arg(long, value_name = "DIR", default_value = "out/reproduce")]
    out: PathBuf,
    /// A few minutes on 2 cores: apps at an eighth of their size, the
    /// study and Figure 10 without the checker (the crash steps still check
    /// every durable point), shorter lockstep runs, the handshake proof
    /// only, no area sweep.
    #[arg(long)]
    quick: bool,
    /// Only these steps (comma-separated; `--list-steps` names them).
    #[arg(long, value_name = "a,b")]
    steps: Option<String>,
    /// Print the steps and their commands, run nothing.
    #[arg(long)]
    list_steps: bool,
    /// Only these apps in the suite, Figure 10 and the crash steps.
    #[arg(long, value_name = "a,b")]
    apps: Option<String>,
    /// Parallel jobs of each step (default: the cores).
    #[arg(long)]
    jobs: Option<usize>,
}

/// A step: a program and its arguments, run in the output directory.
struct Step {
    id: String,
    title: String,
    what: String,
    /// `None`: this binary (`sbrp`); else an external tool.
    program: Option<&'static str>,
    args: Vec<String>,
    /// The folder (relative to the output directory) whose files the step
    /// writes; its files are listed on the page.
    dir: Option<String>,
}

impl Step {
    fn sbrp(id: &str, title: &str, what: &str, args: &[&str], dir: Option<&str>) -> Step {
        Step {
            id: id.into(),
            title: title.into(),
            what: what.into(),
            program: None,
            args: args.iter().map(|s| s.to_string()).collect(),
            dir: dir.map(String::from),
        }
    }

    fn command(&self) -> String {
        let mut v = vec![self.program.unwrap_or("sbrp").to_string()];
        v.extend(self.args.iter().map(|a| shell_word(a)));
        v.join(" ")
    }
}

/// A word quoted for a POSIX shell when it needs it.
fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.,/=:%+".contains(c));
    if plain {
        s.into()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn steps(a: &ReproduceArgs, apps: &[String], jobs: usize) -> Vec<Step> {
    let q = a.quick;
    let j = jobs.to_string();
    let app_list = apps.join(",");
    let mut app_args: Vec<&str> = vec!["--apps", &app_list];
    if q {
        // The crash steps check every durable point; the quick study and
        // sweep skip the checker (its cost is most of theirs).
        app_args.extend(["--shrink", "8", "--no-check"]);
    }
    let with = |base: &[&str], extra: &[&str]| -> Vec<String> {
        base.iter().chain(extra).map(|s| s.to_string()).collect()
    };
    let cycles = if q { "100000" } else { "1000000" };
    let mut v = vec![
        Step::sbrp(
            "verilog",
            "RTL",
            "The persist buffer unit at the default parameters, emitted as Verilog by rust-hdl, with its storage table.",
            &["verilog", "--out", "rtl"],
            Some("rtl"),
        ),
        Step {
            id: "lint".into(),
            title: "Lint".into(),
            what: "Verilator's lint with every warning on, the project's waivers (constraints/lint) only.".into(),
            program: Some("verilator"),
            args: with(
                &["--lint-only", "-Wall", "rtl/verilator_waivers.vlt", "rtl/sbrp_pb.v"],
                &["--top-module", "sbrp_pb"],
            ),
            dir: None,
        },
        Step::sbrp(
            "area",
            "Area and timing",
            "Yosys onto OSU 0.18 um cells, area by block, FO4 and the critical stage with OpenSTA (docs/hardware.md).",
            &["area", "--out", "area"],
            Some("area"),
        ),
        Step::sbrp(
            "litmus",
            "Litmus lockstep",
            "Every litmus trace through the Verilated RTL and the reference model, compared every cycle, expectations checked; waveforms of both (open with docs/waves/sbrp_pb.gtkw).",
            &["cosim", "--suite", "litmus", "--vcd", "waves"],
            Some("waves"),
        ),
        Step {
            args: with(&["cosim", "--suite", "random", "--seed", "1", "--cycles", cycles], &[]),
            ..Step::sbrp(
                "random",
                "Random lockstep",
                "Constrained-random warp traces, RTL against the model every cycle.",
                &[],
                None,
            )
        },
        Step {
            args: with(&["cosim", "--suite", "fuzz", "--seed", "1", "--cycles", cycles], &[]),
            ..Step::sbrp(
                "fuzz",
                "Fuzz lockstep",
                "Raw random stimulus straight into the unit, RTL against the model every cycle.",
                &[],
                None,
            )
        },
        Step {
            args: if q {
                with(&["prove", "--property", "handshake", "--out", "prove"], &[])
            } else {
                with(&["prove", "--out", "prove"], &[])
            },
            ..Step::sbrp(
                "prove",
                "Proofs",
                "The unit's properties with Yosys' formal flow (docs/hardware.md, Proofs).",
                &[],
                Some("prove"),
            )
        },
        Step {
            args: with(&["suite", "--out", "suite", "--jobs", &j], &app_args),
            ..Step::sbrp(
                "suite",
                "The study (Figures 6-9, 11)",
                "The apps under every preset of the paper, each run checked by the persistency checker at every durable point and its invariant at the end; the figures as tables, CSV, JSON and plots.",
                &[],
                Some("suite"),
            )
        },
        Step {
            args: with(
                &["sweep", "--figure", "10", "--out", "fig10", "--jobs", &j],
                &app_args,
            ),
            ..Step::sbrp(
                "fig10",
                "Figure 10 (sensitivity)",
                "SBRP-near over epoch-near against PB size, NVM bandwidth and flush window.",
                &[],
                Some("fig10"),
            )
        },
        Step {
            args: with(
                &["sweep", "--figure", "ladder", "--out", "ladder", "--jobs", &j],
                &app_args,
            ),
            ..Step::sbrp(
                "ladder",
                "The ladder (where SBRP's gain goes)",
                "Figure 6's SBRP columns from the idealised unit of the paper's section 6 to the v2 unit as built, one realism switch per step, every run checked.",
                &[],
                Some("ladder"),
            )
        },
    ];
    for app in apps {
        let json = format!("crash/{app}.json");
        let mut args = with(
            &["crash", "--app", app, "--preset", "sbrp-near", "--every"],
            &["--jobs", &j, "--json", &json],
        );
        if q {
            // An eighth of the default size, as the suite's --shrink 8.
            if let Ok(size) = sbrp_workloads::app(app, None).map(|x| x.size() / 8) {
                args.extend(["--size".into(), size.max(1).to_string()]);
            }
        }
        v.push(Step {
            args,
            ..Step::sbrp(
                &format!("crash-{app}"),
                &format!("Crash consistency: {app}"),
                "The app's durable image at every durable point of its SBRP-near run: its invariant before and after recovery, the persistency checker, recovery kernels on the GPU model.",
                &[],
                Some("crash"),
            )
        });
    }
    if !q {
        let unbounded = sbrp_silicon::UNBOUNDED.join(",");
        v.push(Step::sbrp(
            "prove-unbounded",
            "Proofs for every depth",
            "k-induction with the strengthening invariants (the step by CaDiCaL): the handshakes, ACTR accounting, no lost persist, the coalescing rule, durability and per-warp persist order, at 16 entries / 4 warps (docs/hardware.md §5).",
            &[
                "prove",
                "--unbounded",
                "--property",
                &unbounded,
                "--out",
                "prove-unbounded",
            ],
            Some("prove-unbounded"),
        ));
        v.push(Step::sbrp(
            "area-sweep",
            "Area and delay against entries",
            "The unit synthesised at 32-512 entries and 32 and 64 warps: area and critical stage.",
            &["area", "--sweep", "--out", "area-sweep"],
            Some("area-sweep"),
        ));
    }
    v
}

pub fn run(a: &ReproduceArgs) -> Result<Verdict> {
    let apps: Vec<String> = match &a.apps {
        Some(s) => s.split(',').map(|x| x.trim().to_string()).collect(),
        None => sbrp_workloads::APPS.iter().map(|s| s.to_string()).collect(),
    };
    for n in &apps {
        if !sbrp_workloads::APPS.contains(&n.as_str()) {
            bail!(
                "--apps: unknown app `{n}` (known: {})",
                sbrp_workloads::APPS.join(", ")
            );
        }
    }
    let jobs = jobs_arg(a.jobs)?;
    let all = steps(a, &apps, jobs);
    let chosen: Vec<&Step> = match &a.steps {
        None => all.iter().collect(),
        Some(s) => {
            let want: Vec<&str> = s.split(',').map(str::trim).collect();
            for w in &want {
                if !all.iter().any(|x| x.id == *w) {
                    let ids: Vec<&str> = all.iter().map(|x| x.id.as_str()).collect();
                    bail!("--steps: unknown step `{w}` (steps: {})", ids.join(", "));
                }
            }
            all.iter()
                .filter(|x| want.contains(&x.id.as_str()))
                .collect()
        }
    };
    if a.list_steps {
        for s in &chosen {
            println!("{:<16} {}", s.id, s.command());
        }
        return Ok(Verdict::Pass);
    }
    crate::apps::check_dir(&a.out)?;
    let out = &a.out;
    std::fs::create_dir_all(out.join("logs"))?;
    let exe = std::env::current_exe().context("cannot find the sbrp binary itself")?;
    let t0 = Instant::now();
    // The configurations every step reads: each preset as a loadable file.
    write_configs(out)?;
    // The lint reads the waivers beside the RTL.
    std::fs::create_dir_all(out.join("rtl"))?;
    sbrp_tools::write_atomic(
        &out.join("rtl/verilator_waivers.vlt"),
        sbrp_hdl::VERILATOR_WAIVERS.as_bytes(),
    )?;
    let mut reports = vec![config_report(out)?];
    for (i, s) in chosen.iter().enumerate() {
        let r = run_step(s, &exe, out)?;
        println!(
            "[{}/{}] {:<16} {:<6} {:>7.1} s   {}",
            i + 1,
            chosen.len(),
            s.id,
            r.verdict(),
            r.secs,
            r.command
        );
        reports.push(r);
    }
    let secs = t0.elapsed().as_secs_f64();
    let meta = vec![
        (
            "command".to_string(),
            std::env::args()
                .map(|a| shell_word(&a))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        (
            "form".to_string(),
            if a.quick { "quick" } else { "full" }.to_string(),
        ),
        ("sbrp".to_string(), env!("CARGO_PKG_VERSION").to_string()),
        (
            "machine".to_string(),
            format!(
                "{} cores, {jobs} jobs per step",
                std::thread::available_parallelism().map_or(1, |n| n.get())
            ),
        ),
        ("total time".to_string(), format!("{secs:.1} s")),
    ];
    let page = index_html("SBRP persist buffer: reproduction report", &meta, &reports);
    sbrp_tools::write_atomic(&out.join("index.html"), page.as_bytes())?;
    let bad = reports.iter().filter(|r| r.status != Some(0)).count();
    println!(
        "{} steps in {secs:.1} s, {}; wrote {}",
        reports.len(),
        if bad == 0 {
            "all passed".to_string()
        } else {
            format!("{bad} FAILED")
        },
        out.join("index.html").display()
    );
    Ok(Verdict::of(bad == 0))
}

/// Each preset's whole configuration as `config/PRESET.toml` (loadable
/// with `sbrp run --config`).
fn write_configs(out: &Path) -> Result<()> {
    let dir = out.join("config");
    std::fs::create_dir_all(&dir)?;
    for (name, desc) in sbrp_gpu::presets::presets() {
        let cfg = sbrp_gpu::presets::preset(name)
            .with_context(|| format!("preset {name} has no configuration"))?;
        let text = format!("# preset {name}: {desc}\n{}", cfg.to_toml_string());
        sbrp_tools::write_atomic(&dir.join(format!("{name}.toml")), text.as_bytes())?;
    }
    Ok(())
}

fn config_report(out: &Path) -> Result<StepReport> {
    Ok(StepReport {
        id: "config".into(),
        title: "Configurations".into(),
        what: "Every GPU preset the steps name, in full, as written by this binary; `sbrp run --config FILE` loads one.".into(),
        command: "(written by sbrp reproduce itself)".into(),
        status: Some(0),
        secs: 0.0,
        summary: String::new(),
        files: files_under(out, "config")?,
    })
}

fn run_step(s: &Step, exe: &Path, out: &Path) -> Result<StepReport> {
    let log_rel = format!("logs/{}.txt", s.id);
    let log = out.join(&log_rel);
    if let Some(d) = &s.dir {
        std::fs::create_dir_all(out.join(d))?;
    }
    let t = Instant::now();
    let prog: &std::ffi::OsStr = match s.program {
        Some(p) => p.as_ref(),
        None => exe.as_os_str(),
    };
    let res = Command::new(prog)
        .args(&s.args)
        .current_dir(out)
        .stdin(Stdio::null())
        .output();
    let secs = t.elapsed().as_secs_f64();
    let (status, stdout, stderr) = match res {
        Ok(o) => (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        ),
        Err(e) => (None, String::new(), format!("cannot start {prog:?}: {e}\n")),
    };
    let text = format!(
        "$ {}\n{stdout}{}{stderr}",
        s.command(),
        if stderr.is_empty() {
            ""
        } else {
            "--- stderr ---\n"
        }
    );
    sbrp_tools::write_atomic(&log, text.as_bytes())?;
    let mut summary = tail(&stdout, 30);
    if status != Some(0) && !stderr.trim().is_empty() {
        summary += &format!("\n--- stderr ---\n{}", tail(&stderr, 15));
    }
    let mut files = vec![log_rel];
    if let Some(d) = &s.dir {
        let mine: Vec<String> = files_under(out, d)?
            .into_iter()
            // Steps sharing a folder (the crash steps) list their own.
            .filter(|f| {
                !s.id.starts_with("crash-") || f.ends_with(&format!("/{}.json", &s.id[6..]))
            })
            .collect();
        files.extend(mine);
    }
    Ok(StepReport {
        id: s.id.clone(),
        title: s.title.clone(),
        what: s.what.clone(),
        command: s.command(),
        status,
        secs,
        summary,
        files,
    })
}

/// The last `n` lines, without terminal progress redraws.
fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s
        .lines()
        .map(|l| l.rsplit('\r').next().unwrap_or(l))
        .collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Regular files under `out/dir`, relative to `out`, sorted; the sweep's
/// cache of points is left out (thousands of small files).
fn files_under(out: &Path, dir: &str) -> Result<Vec<String>> {
    let mut v = vec![];
    let mut stack = vec![PathBuf::from(dir)];
    while let Some(rel) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(out.join(&rel)) else {
            continue;
        };
        for e in rd {
            let e = e?;
            let name = e.file_name().to_string_lossy().into_owned();
            let r = rel.join(&name);
            let ft = e.file_type()?;
            if ft.is_dir() && name != "cache" && name != "points" {
                stack.push(r);
            } else if ft.is_file() && !name.starts_with('.') {
                v.push(r.to_string_lossy().into_owned());
            }
        }
    }
    v.sort();
    Ok(v)
}
