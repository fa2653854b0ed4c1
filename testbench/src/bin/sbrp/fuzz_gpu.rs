//! `sbrp fuzz-gpu`: the GPU model's fuzzer (`sbrp_testbench::fuzz`):
//! mutated and generated programs through the parser and the GPU model
//! under several presets; any panic, overrun or round-trip difference is a
//! finding, printed with its program (and saved with `--out DIR`).

use std::path::PathBuf;

use anyhow::{anyhow, bail, Result};
use clap::Args;
use sbrp_testbench::fuzz::{fuzz, FuzzOpts, PRESETS};

use crate::Verdict;

#[derive(Args)]
pub struct FuzzGpuArgs {
    /// Programs to generate (each run under every preset).
    #[arg(long, default_value_t = 1000)]
    programs: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Comma-separated presets (each made small: 2 SMs, launch latency 100).
    #[arg(long, default_value_t = PRESETS.join(","))]
    presets: String,
    /// Cycle limit of each run.
    #[arg(long, default_value_t = 20_000)]
    max_cycles: u64,
    /// Also check each run's record with the persistency checker (a
    /// violation is a finding).
    #[arg(long)]
    check: bool,
    /// Save each finding's program as DIR/finding-N.prog.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

pub fn run(a: &FuzzGpuArgs) -> Result<Verdict> {
    if a.programs == 0 {
        bail!("--programs 0: at least 1");
    }
    if a.max_cycles == 0 {
        bail!("--max-cycles 0: at least 1");
    }
    if let Some(d) = &a.out {
        std::fs::create_dir_all(d).map_err(|e| anyhow!("--out {}: {e}", d.display()))?;
    }
    let o = FuzzOpts {
        programs: a.programs,
        seed: a.seed,
        presets: a.presets.split(',').map(|p| p.trim().to_string()).collect(),
        max_cycles: a.max_cycles,
        check: a.check,
        ..FuzzOpts::default()
    };
    // Panics are caught and reported as findings: their default message
    // would interleave with the report.
    std::panic::set_hook(Box::new(|_| {}));
    let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let t0 = std::time::Instant::now();
    let r = fuzz(&o, |i, n| {
        if tty && i % 10 == 0 {
            eprint!("\r{i}/{n} programs");
        }
    })
    .map_err(|e| anyhow!("--presets: {e}"))?;
    let _ = std::panic::take_hook();
    if tty {
        eprint!("\r{:30}\r", "");
    }
    println!(
        "{} programs ({} mutated, {} generated), seed {}: {} refused by the parser or config check; {} runs under {}: {} finished, {} cut at {} cycles, {} deadlocked, {} failed a check; {:.1} s",
        r.programs,
        r.mutated,
        r.generated,
        a.seed,
        r.refused,
        r.runs,
        o.presets.join(", "),
        r.finished,
        r.cut,
        a.max_cycles,
        r.deadlocked,
        r.failed,
        t0.elapsed().as_secs_f64()
    );
    for (n, f) in r.findings.iter().enumerate() {
        println!(
            "FINDING {n}: program {}{}: {}",
            f.index,
            f.preset
                .as_deref()
                .map(|p| format!(" under {p}"))
                .unwrap_or_default(),
            f.what
        );
        match &a.out {
            Some(d) => {
                let p = d.join(format!("finding-{n}.prog"));
                crate::run::write_files(&[(&p, f.text.clone())])?;
                println!("  program saved as {}", p.display());
            }
            None => println!("{}", f.text),
        }
    }
    println!(
        "{}",
        if r.findings.is_empty() {
            "PASS"
        } else {
            "FAIL"
        }
    );
    Ok(Verdict::of(r.findings.is_empty()))
}
