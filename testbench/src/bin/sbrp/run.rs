//! `sbrp run`: a whole program on the GPU model (`docs/model.md`), with the
//! persist buffers of chosen SMs shadowed by the RTL in lockstep (`--cosim`).

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use sbrp_testbench::gpu_run::{run_program, ConfigSource, GpuRunOpts, GpuRunOutcome, Shadow};

use crate::Verdict;

#[derive(Args)]
pub struct RunArgs {
    /// The program: a program file (`.prog`, `.prog.gz`; docs/trace-format.md,
    /// "Programs") or a litmus trace (`.trace`).
    #[arg(long, value_name = "FILE", required_unless_present = "list_presets")]
    trace: Option<PathBuf>,
    /// A named configuration (`--list-presets`).
    #[arg(long, conflicts_with = "config")]
    preset: Option<String>,
    /// A configuration file (TOML; docs/model-params.md).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Override one configuration value, e.g. `--set pm.write_bandwidth=21` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Print the presets and exit.
    #[arg(long)]
    list_presets: bool,
    /// Shadow SMs' persist buffers with the Verilated RTL, compared every
    /// cycle the unit is stepped (`--sms`: how many, from SM 0, or `all`).
    #[arg(long)]
    cosim: bool,
    /// With `--cosim`: a number of SMs or `all`.
    #[arg(long, default_value = "1", requires = "cosim")]
    sms: String,
    /// Write the report as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write the execution record (events; for persistency checkers) as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// Stop after this many cycles.
    #[arg(long)]
    max_cycles: Option<u64>,
    /// Where a lockstep divergence's waveforms go.
    #[arg(long, value_name = "DIR", default_value = "out/mismatch")]
    mismatch_dir: PathBuf,
}

pub fn run(a: &RunArgs) -> Result<Verdict> {
    if a.list_presets {
        for (name, what) in sbrp_gpu::presets::presets() {
            println!("{name:<18} {what}");
        }
        return Ok(Verdict::Pass);
    }
    let config = match (&a.preset, &a.config) {
        (Some(p), None) => ConfigSource::Preset(p.clone()),
        (None, Some(f)) => ConfigSource::File(f.clone()),
        (None, None) => ConfigSource::Preset("sbrp-near".into()),
        (Some(_), Some(_)) => bail!("--preset and --config: give one"),
    };
    let set = a
        .set
        .iter()
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) => Ok((k.trim().to_string(), v.trim().to_string())),
            None => bail!("--set {kv}: expected KEY=VALUE"),
        })
        .collect::<Result<Vec<_>>>()?;
    let shadow = match (a.cosim, a.sms.as_str()) {
        (false, _) => Shadow::None,
        (true, "all") => Shadow::All,
        (true, k) => Shadow::First(
            k.parse()
                .ok()
                .filter(|&k: &u32| k > 0)
                .with_context(|| format!("--sms {k}: a number of SMs (at least 1) or `all`"))?,
        ),
    };
    let mut o = GpuRunOpts::new(a.trace.clone().expect("clap requires --trace"), config);
    o.set = set;
    o.shadow = shadow;
    o.record = a.record.is_some();
    o.max_cycles = a.max_cycles;
    o.mismatch_dir = a.mismatch_dir.clone();
    let t0 = std::time::Instant::now();
    let out = run_program(&o)?;
    let secs = t0.elapsed().as_secs_f64();
    // Files first (all or nothing): a write error is exit 2 with no report printed.
    if let Some(f) = &a.json {
        let text = serde_json::to_string_pretty(&out.report)?;
        write_file(f, &text)?;
    }
    if let Some(f) = &a.record {
        let ex = out.report.execution.as_ref().expect("recorded");
        write_file(f, &serde_json::to_string(ex)?)?;
    }
    print_report(&out, secs);
    Ok(Verdict::of(out.ok()))
}

fn write_file(f: &PathBuf, text: &str) -> Result<()> {
    let tmp = f.with_extension("part");
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", f.display()))?;
    std::fs::rename(&tmp, f).with_context(|| format!("cannot write {}", f.display()))?;
    Ok(())
}

fn print_report(o: &GpuRunOutcome, secs: f64) {
    let r = &o.report;
    let c = &o.config;
    println!(
        "program {}: model {:?}, PM {:?} ({:?}), {} SMs",
        r.program, c.model, c.pm.place, c.pm.durability, c.core.sms
    );
    println!(
        "cycles {} ({:.2} us at {} MHz){}",
        r.cycles,
        r.time_us,
        c.core.clock_mhz,
        if r.finished { "" } else { " NOT FINISHED" }
    );
    for k in &r.kernels {
        println!(
            "  kernel {:<20} grid {:>5} x {:>4}: {:>10} cycles, {:>10} warp instructions",
            k.name, k.grid, k.block, k.cycles, k.instrs
        );
    }
    let s = &r.sm;
    let m = &r.mem;
    println!(
        "warp instructions {} ({} acquire polls); L1 PM read misses {} (hits {})",
        s.instrs, s.polls, s.l1_pm_read_misses, s.l1_pm_read_hits
    );
    println!(
        "persists {} (coalesced {}), flushes {} (evictions {}), replays {}, waits {}",
        s.persists, s.coalesced, s.pm_flushes, s.evict_flushes, s.replays, s.waits
    );
    println!(
        "bytes: NVM read {} write {}, GDDR read {} write {}, PCIe to host {} to GPU {}",
        m.pm_read_bytes,
        m.pm_write_bytes,
        m.gddr_read_bytes,
        m.gddr_write_bytes,
        m.pcie_to_host_bytes,
        m.pcie_to_gpu_bytes
    );
    let stalls: Vec<String> = r.stalls.iter().map(|(k, v)| format!("{k} {v}")).collect();
    println!("warp stall cycles: {}", stalls.join(", "));
    println!(
        "simulated in {secs:.2} s: {:.2} M warp instructions/s",
        s.instrs as f64 / secs / 1e6
    );
    if o.shadowed > 0 {
        println!(
            "RTL shadowed the persist buffers of {} SM(s): {}",
            o.shadowed,
            if o.mismatch.is_none() {
                "0 mismatches"
            } else {
                "MISMATCH"
            }
        );
    }
    if let Some((m, dir)) = &o.mismatch {
        println!("{m}");
        println!("waveforms in {}", dir.display());
    }
    for f in &r.failures {
        println!("CHECK FAILED: {f}");
    }
    if let Some(d) = &r.deadlock {
        println!("{d}");
    }
    for (line, why) in &o.skipped {
        println!("expectation at line {line} not checked: {why}");
    }
    for f in &o.failures {
        println!("EXPECTATION FAILED: {f}");
    }
    println!("{}", if o.ok() { "PASS" } else { "FAIL" });
}
