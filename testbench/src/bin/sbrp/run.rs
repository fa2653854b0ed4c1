//! `sbrp run`: a whole program on the GPU model (`docs/model.md`), with the
//! persist buffers of chosen SMs shadowed by the RTL in lockstep (`--cosim`).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use sbrp_testbench::gpu_run::{
    run_program, ConfigSource, GpuRunOpts, GpuRunOutcome, Overrides, Shadow,
};

use crate::args::{parse_sets, FaultArg};
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
    /// Behave like the paper's GPGPU-Sim artifact where it departs from the
    /// paper: every `artifact.*` switch on, and on PM-far the artifact's
    /// slowed PM channels in place of the PCIe link (docs/model-params.md,
    /// "Artifact mode"). Applied before `--set`.
    #[arg(long)]
    artifact: bool,
    /// Print the presets and exit.
    #[arg(long)]
    list_presets: bool,
    /// Run every SM's persist buffer model with a deliberate deviation
    /// (experiments and negative controls; not a correct SBRP).
    #[arg(long, value_enum, default_value = "none")]
    unit_fault: FaultArg,
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
    /// Draw the progress line on stderr even when stderr is not a terminal
    /// (it is drawn on a terminal anyway, for runs longer than a second).
    #[arg(long)]
    progress: bool,
    /// No progress line (wins over `--progress`).
    #[arg(long)]
    quiet: bool,
    /// Step every busy persist buffer unit in every cycle (no skipping of
    /// replay loops; the same results, slower: a check of the skipping).
    #[arg(long)]
    no_skip: bool,
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
    let set = parse_sets(&a.set)?;
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
    let Some(program) = a.trace.clone() else {
        bail!("--trace FILE: the program to run");
    };
    // Output paths are checked before the run, not after it.
    let outputs: Vec<(&str, &PathBuf)> = [("--json", &a.json), ("--record", &a.record)]
        .into_iter()
        .filter_map(|(flag, f)| f.as_ref().map(|f| (flag, f)))
        .collect();
    for (flag, f) in &outputs {
        check_output(flag, f)?;
    }
    if let (Some(j), Some(r)) = (&a.json, &a.record) {
        if j == r {
            bail!("--json and --record: the same file {}", j.display());
        }
    }
    let mut o = GpuRunOpts::new(program, config);
    o.overrides = Overrides {
        artifact: a.artifact,
        set,
    };
    o.shadow = shadow;
    o.unit_fault = a.unit_fault.into();
    o.record = a.record.is_some();
    o.max_cycles = a.max_cycles;
    o.no_skip = a.no_skip;
    o.mismatch_dir = a.mismatch_dir.clone();
    o.progress = !a.quiet && (a.progress || std::io::stderr().is_terminal());
    let t0 = std::time::Instant::now();
    let out = run_program(&o)?;
    let secs = t0.elapsed().as_secs_f64();
    // Files first, all or nothing: a write error is exit 2 with no report
    // printed and no file left behind.
    let mut files = vec![];
    if let Some(f) = &a.json {
        files.push((f, serde_json::to_string_pretty(&out.report)?));
    }
    if let Some(f) = &a.record {
        let ex = out
            .report
            .execution
            .as_ref()
            .context("--record: the run kept no execution record")?;
        files.push((f, serde_json::to_string(ex)?));
    }
    write_files(&files)?;
    print_report(&out, secs);
    Ok(Verdict::of(out.ok()))
}

/// An output file's directory must exist (the run may be long).
pub(crate) fn check_output(flag: &str, f: &Path) -> Result<()> {
    let dir = match f.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        bail!(
            "{flag} {}: directory {} does not exist",
            f.display(),
            dir.display()
        );
    }
    if f.file_name().is_none() {
        bail!("{flag} {}: not a file name", f.display());
    }
    sbrp_tools::check_output(f).map_err(|e| anyhow::anyhow!("{flag}: {e}"))?;
    // The directory must take a new file (the temporary), before any run.
    let probe = dir.join(format!(".sbrp-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => bail!(
            "{flag} {}: cannot write in {}: {e}",
            f.display(),
            dir.display()
        ),
    }
    Ok(())
}

/// The bytes of an output file: gzip-compressed when its name ends in `.gz`.
pub(crate) fn output_bytes(f: &Path, text: &str) -> Result<Vec<u8>> {
    if !f.to_string_lossy().ends_with(".gz") {
        return Ok(text.as_bytes().to_vec());
    }
    use std::io::Write;
    let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(text.as_bytes())
        .and_then(|_| z.finish())
        .with_context(|| format!("cannot compress {}", f.display()))
}

/// Writes every file or none (`sbrp_tools::write_all_atomic`: unique
/// temporaries beside each file, renamed once all are written, regular
/// files only); `.gz` names are gzip-compressed.
pub(crate) fn write_files(files: &[(&PathBuf, String)]) -> Result<()> {
    let bytes = files
        .iter()
        .map(|(f, t)| Ok((f.as_path(), output_bytes(f, t)?)))
        .collect::<Result<Vec<_>>>()?;
    let refs: Vec<(&Path, &[u8])> = bytes.iter().map(|(f, b)| (*f, b.as_slice())).collect();
    sbrp_tools::write_all_atomic(&refs)?;
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
        "persists {} (coalesced {}), flushes {} (evictions {}), replays {} (stores {}, ordering ops {}, evictions {}), waits {}",
        s.persists,
        s.coalesced,
        s.pm_flushes,
        s.evict_flushes,
        s.replays,
        s.replays_store,
        s.replays_ordering,
        s.replays_evict,
        s.waits
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
    if !r.finished && r.deadlock.is_none() && r.failures.is_empty() && o.mismatch.is_none() {
        println!("stopped at the cycle limit (--max-cycles) before the program's end");
    }
    for (line, why) in &o.skipped {
        println!("expectation at line {line} not checked: {why}");
    }
    for f in &o.failures {
        println!("EXPECTATION FAILED: {f}");
    }
    println!("{}", if o.ok() { "PASS" } else { "FAIL" });
}
