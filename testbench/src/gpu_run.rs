//! `sbrp run` as one library call (`docs/model.md`, "Running"): a whole
//! program (a program file, compressed or not, or a litmus trace) on the GPU
//! model of a preset or configuration file with overrides, the persist
//! buffers of chosen SMs shadowed by the Verilated RTL in lockstep, and the
//! program's expectations checked on the execution record.

use std::cell::RefCell;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

use sbrp_gpu::ideal::IdealUnit;
use sbrp_gpu::{Gpu, GpuConfig, RunReport};
use sbrp_iface::{PbParams, PbUnit};
use sbrp_sim_fast::PbModel;
use sbrp_trace::program::{FileProgram, Program};
use sbrp_trace::{evaluate, Expect, Failure};

use crate::error::{io, BenchError, Result};
use crate::lockstep::{write_mismatch_vcds, Lockstep, Mismatch, MismatchSlot};
use crate::suites::{Rtl, RunOpts as SuiteOpts};

/// Which SMs the RTL shadows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shadow {
    None,
    /// SMs 0..K.
    First(u32),
    All,
}

/// Where the configuration comes from.
#[derive(Clone, Debug)]
pub enum ConfigSource {
    Preset(String),
    File(PathBuf),
}

/// Changes to a preset or configuration file, applied in this order: the
/// artifact's behaviour (`--artifact`, `sbrp_gpu::presets::artifact_mode`),
/// then each `--set key=value`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    pub artifact: bool,
    pub set: Vec<(String, String)>,
}

impl Overrides {
    /// The overrides as command-line flags (`--artifact --set k=v ...`),
    /// empty when there are none.
    pub fn flags(&self) -> String {
        let mut f: Vec<String> = vec![];
        if self.artifact {
            f.push("--artifact".into());
        }
        f.extend(self.set.iter().map(|(k, v)| format!("--set {k}={v}")));
        f.join(" ")
    }
}

/// What `sbrp run` does.
#[derive(Clone, Debug)]
pub struct GpuRunOpts {
    pub program: PathBuf,
    pub config: ConfigSource,
    /// `--artifact` and `--set key=value` overrides.
    pub overrides: Overrides,
    pub shadow: Shadow,
    /// Keep the execution record (for expectations, `--record`).
    pub record: bool,
    pub max_cycles: Option<u64>,
    /// Step every busy unit every cycle (`sbrp_gpu::RunOpts::no_skip`).
    pub no_skip: bool,
    /// Where a divergence's waveforms go.
    pub mismatch_dir: PathBuf,
    /// A fault injected into the GPU model (negative controls).
    pub fault: sbrp_gpu::sm::Fault,
    /// A deliberate deviation of every SM's unit model (experiments and
    /// negative controls; the RTL shadow, if any, stays correct).
    pub unit_fault: sbrp_sim_fast::Fault,
    /// Draw a progress line on stderr (`ProgressLine`) once the run has
    /// taken more than a second.
    pub progress: bool,
}

impl GpuRunOpts {
    pub fn new(program: PathBuf, config: ConfigSource) -> GpuRunOpts {
        GpuRunOpts {
            program,
            config,
            overrides: Overrides::default(),
            shadow: Shadow::None,
            record: false,
            max_cycles: None,
            no_skip: false,
            mismatch_dir: PathBuf::from("out/mismatch"),
            fault: sbrp_gpu::sm::Fault::None,
            unit_fault: sbrp_sim_fast::Fault::None,
            progress: false,
        }
    }
}

/// A one-line progress indicator on stderr for long runs: kernel k/N,
/// cycles, warp instructions and the simulation rate, drawn only after
/// `after` of wall time, redrawn with `\r` at most every `every`, and erased
/// by `finish` (or when dropped), so the terminal is left as it was.
pub struct ProgressLine {
    kernels: Vec<String>,
    start: Instant,
    after: Duration,
    every: Duration,
    last: Option<Instant>,
    /// Characters of the line on screen (0: nothing drawn).
    width: usize,
}

impl ProgressLine {
    /// A line for a program of these kernels (names), drawn after one
    /// second, at most four times a second.
    pub fn new(kernels: Vec<String>) -> ProgressLine {
        ProgressLine {
            kernels,
            start: Instant::now(),
            after: Duration::from_secs(1),
            every: Duration::from_millis(250),
            last: None,
            width: 0,
        }
    }

    /// The text of the line at this point of the run.
    pub fn text(&self, cycle: u64, instrs: u64, kernel: usize) -> String {
        let secs = self.start.elapsed().as_secs_f64().max(1e-9);
        let name = self.kernels.get(kernel).map(String::as_str).unwrap_or("?");
        format!(
            "kernel {}/{} {name}: cycle {cycle}, {instrs} warp instructions, {:.2} M warp-instr/s",
            kernel + 1,
            self.kernels.len(),
            instrs as f64 / secs / 1e6
        )
    }

    /// Called with the GPU model's progress (`sbrp_gpu::RunOpts::progress`).
    pub fn update(&mut self, cycle: u64, instrs: u64, kernel: usize) {
        let now = Instant::now();
        if now.duration_since(self.start) < self.after
            || self
                .last
                .is_some_and(|l| now.duration_since(l) < self.every)
        {
            return;
        }
        self.last = Some(now);
        let text = self.text(cycle, instrs, kernel);
        let pad = self.width.saturating_sub(text.chars().count());
        self.width = text.chars().count();
        let mut e = std::io::stderr().lock();
        // A progress line that cannot be drawn is not worth stopping the run.
        let _ = write!(e, "\r{text}{:pad$}", "");
        let _ = e.flush();
    }

    /// Erases the line if one was drawn.
    pub fn finish(&mut self) {
        if self.width > 0 {
            let mut e = std::io::stderr().lock();
            let _ = write!(e, "\r{:w$}\r", "", w = self.width);
            let _ = e.flush();
            self.width = 0;
        }
    }
}

impl Drop for ProgressLine {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Litmus expectations about SBRP's stalls that hold only with the front
/// end's fixed persistence latency: the trace's `delay`s place an access
/// before the ordering entry it needs has drained, which the GPU model's
/// memory timing does not reproduce. (trace name, expectation line, why.)
pub const LATENCY_DEPENDENT: &[(&str, usize, &str)] = &[
    (
        "10_eviction",
        34,
        "warp 0.3's `delay 90` times its evictions against a 200-cycle persist",
    ),
    (
        "starvation",
        428,
        "the stall needs the buffer still full when warp 0.0 stores; PM-far's slower acknowledgements drain it differently",
    ),
    (
        "19_eviction_other_warps_fence",
        38,
        "warp 0.3's delay times its eviction against a 200-cycle persist",
    ),
];

/// What a run found.
pub struct GpuRunOutcome {
    pub config: GpuConfig,
    pub report: RunReport,
    /// Expectations that do not hold (litmus traces).
    pub failures: Vec<Failure>,
    /// Expectations not checked under this configuration, with why.
    pub skipped: Vec<(usize, String)>,
    pub mismatch: Option<(Mismatch, PathBuf)>,
    pub shadowed: u32,
}

impl GpuRunOutcome {
    pub fn ok(&self) -> bool {
        self.report.finished
            && self.report.failures.is_empty()
            && self.failures.is_empty()
            && self.mismatch.is_none()
    }
}

fn litmus(path: &Path) -> bool {
    path.to_string_lossy()
        .trim_end_matches(".gz")
        .ends_with(".trace")
}

/// Reads a program: `.trace` (a litmus trace), `.prog`, or either gzipped.
pub fn load_program(path: &Path) -> Result<FileProgram> {
    let name = path.display().to_string();
    // A device or pipe (`/dev/zero`) could be read forever: files only.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        return Err(BenchError::Invalid(format!(
            "program {name}: not a regular file"
        )));
    }
    // The I/O error's text goes into the message once (`BenchError::Io`
    // would print it again as the error's source).
    let bytes = std::fs::read(path)
        .map_err(|e| BenchError::Invalid(format!("cannot read program {name}: {e}")))?;
    let gz = name.ends_with(".gz");
    let text = if gz {
        let mut s = String::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_string(&mut s)
            .map_err(|e| BenchError::Invalid(format!("cannot decompress {name}: {e}")))?;
        s
    } else {
        String::from_utf8(bytes)
            .map_err(|_| BenchError::Invalid(format!("{name}: not UTF-8 text")))?
    };
    let stem = name.trim_end_matches(".gz");
    if stem.ends_with(".trace") {
        let t = sbrp_trace::parse(&text, &name)?;
        Ok(sbrp_trace::program::litmus_program(&t))
    } else {
        sbrp_trace::program::parse_program(&text, &name)
            .map_err(|e| BenchError::Invalid(e.to_string()))
    }
}

/// The configuration: preset or file, then the overrides, validated (the
/// program's own `config` lines come later, in `run_program`).
pub fn resolve_config(src: &ConfigSource, over: &Overrides) -> Result<GpuConfig> {
    let mut cfg = match src {
        ConfigSource::Preset(p) => sbrp_gpu::presets::preset_or_err(p)
            .map_err(|e| BenchError::Invalid(format!("--preset {p}: {e}")))?,
        ConfigSource::File(f) => {
            if std::fs::metadata(f).is_ok_and(|m| !m.is_file()) {
                return Err(BenchError::Invalid(format!(
                    "--config {}: not a regular file",
                    f.display()
                )));
            }
            GpuConfig::load(f).map_err(|e| BenchError::Invalid(e.to_string()))?
        }
    };
    if over.artifact {
        sbrp_gpu::presets::artifact_mode(&mut cfg);
    }
    for (k, v) in &over.set {
        cfg.set(k, v)
            .map_err(|e| BenchError::Invalid(format!("--set {k}={v}: {e}")))?;
    }
    cfg.validate().map_err(|e| {
        // Name where the refused value came from: the last `--set` of its
        // key, else the configuration file (with its line), else the preset.
        let key = e.key().unwrap_or("");
        let origin = if let Some((k, v)) = over.set.iter().rev().find(|(k, _)| k == key) {
            format!("--set {k}={v}")
        } else {
            match src {
                ConfigSource::File(f) => {
                    let line = std::fs::read_to_string(f)
                        .ok()
                        .and_then(|t| sbrp_gpu::config::key_line(&t, key));
                    match line {
                        Some(l) => format!("{}:{l}", f.display()),
                        None => f.display().to_string(),
                    }
                }
                ConfigSource::Preset(p) => format!("--preset {p}"),
            }
        };
        BenchError::Invalid(format!("{origin}: {e}"))
    })?;
    Ok(cfg)
}

/// Expectations whose truth depends on the litmus front end's fixed
/// persistence latency or on SBRP's buffer, not on the persistency model's
/// guarantees: checked only under SBRP, or not at all (the reason says).
pub fn skip_reason(e: &Expect, cfg: &GpuConfig) -> Option<&'static str> {
    let model = cfg.model;
    let sbrp = model.persist().has_unit();
    let default_pb = cfg.pb == sbrp_gpu::config::PbConfig::default();
    match e {
        Expect::Forbid(..) | Expect::Order(..) | Expect::AllDurable | Expect::Pmo => None,
        Expect::Resume(..) | Expect::Early(..) | Expect::MaxActr(_) => {
            Some("cycle bounds assume the litmus front end's fixed persistence latency")
        }
        Expect::Occurs(..) => {
            Some("whether a permitted reordering shows depends on the memory system's timing")
        }
        _ if !sbrp => Some(
            "describes SBRP's buffer (stalls, misses, flush counts), not the model's guarantee",
        ),
        Expect::Stall(_) | Expect::NoStall(_) if model.persist().promotes() => {
            Some("promoting block scope to device adds stalls by design")
        }
        Expect::Flushes(..) => Some("flush counts depend on the memory system's timing"),
        _ if !default_pb => Some("written for the default persist buffer (256 entries, window 6)"),
        _ => None,
    }
}

/// A GPU whose SBRP units are the reference model, the first `shadowed`
/// of them paired with the Verilated RTL in lockstep (divergences go to `slot`).
pub struct Built {
    pub gpu: Gpu,
    pub slot: MismatchSlot,
    pub shadowed: u32,
    /// Kept while the RTL instances run.
    pub rtl: Option<Rtl>,
}

/// Builds the GPU for `cfg`, shadowing SMs' units with the RTL as asked;
/// the units' model carries `unit_fault`.
pub fn build_gpu(
    cfg: &GpuConfig,
    shadow: Shadow,
    unit_fault: sbrp_sim_fast::Fault,
) -> Result<Built> {
    let sbrp = cfg.model.persist().has_unit();
    // Asking for a shadow that cannot be is an error, not a silent no-op.
    if shadow != Shadow::None && !sbrp {
        return Err(BenchError::Invalid(format!(
            "--cosim: model {:?} has no persist buffer to shadow (an SBRP preset has)",
            cfg.model
        )));
    }
    // The RTL and the unit faults are the v2 unit's; the idealised unit has neither.
    if sbrp && cfg.ideal.unit {
        if shadow != Shadow::None {
            return Err(BenchError::Invalid(
                "--cosim: ideal.unit = true hosts the idealised unit, which has no RTL".into(),
            ));
        }
        let p = *sbrp_gpu::gpu::unit_params(cfg)
            .map_err(|e| BenchError::Invalid(e.to_string()))?
            .get();
        // Refused before the GPU is built: one unit tells for all.
        IdealUnit::new(&p, &cfg.ideal)
            .with_fault(unit_fault)
            .map_err(|e| BenchError::Invalid(format!("--unit-fault: {e} (ideal.unit = true)")))?;
        let gpu = Gpu::new(cfg, &mut |_| {
            Box::new(
                IdealUnit::new(&p, &cfg.ideal)
                    .with_fault(unit_fault)
                    .expect("checked"),
            )
        });
        return Ok(Built {
            gpu,
            slot: Rc::new(RefCell::new(None)),
            shadowed: 0,
            rtl: None,
        });
    }
    if let Shadow::First(k) = shadow {
        if k > cfg.core.sms {
            return Err(BenchError::Invalid(format!(
                "--sms {k}: the configuration has {} SMs (core.sms)",
                cfg.core.sms
            )));
        }
    }
    let shadowed = match (shadow, sbrp) {
        (Shadow::None, _) | (_, false) => 0,
        (Shadow::First(k), true) => k,
        (Shadow::All, true) => cfg.core.sms,
    };
    let slot: MismatchSlot = Rc::new(RefCell::new(None));
    if !sbrp {
        let gpu = Gpu::new(cfg, &mut |_| unreachable!("no unit without SBRP"));
        return Ok(Built {
            gpu,
            slot,
            shadowed,
            rtl: None,
        });
    }
    let p: PbParams = *sbrp_gpu::gpu::unit_params(cfg)
        .map_err(|e| BenchError::Invalid(e.to_string()))?
        .get();
    let rtl = if shadowed > 0 {
        Some(Rtl::build(&SuiteOpts::new(p))?)
    } else {
        None
    };
    let mut unit = |s: u32| -> Box<dyn PbUnit> {
        let model = Box::new(PbModel::new(&p).expect("validated").with_fault(unit_fault));
        match &rtl {
            Some(r) if s < shadowed => Box::new(Lockstep::new(
                Box::new(r.instance()),
                model,
                s,
                slot.clone(),
            )),
            _ => model,
        }
    };
    let gpu = Gpu::new(cfg, &mut unit);
    Ok(Built {
        gpu,
        slot,
        shadowed,
        rtl,
    })
}

/// Runs a program on the GPU model.
pub fn run_program(o: &GpuRunOpts) -> Result<GpuRunOutcome> {
    let prog = load_program(&o.program)?;
    let mut cfg = resolve_config(&o.config, &o.overrides)?;
    if litmus(&o.program) {
        // Litmus traces are written for the front end's L1 geometry (4 ways
        // unless the trace says otherwise): evictions are what they test.
        cfg.l1.assoc = 4;
    }
    // The program's `config` lines: first checked as `sbrp cosim` checks
    // them (the front end's keys and ranges), then the GPU model takes the
    // L1's ways and the flag visibility (it has its own memory system).
    let file = o.program.display().to_string();
    let mut fe = sbrp_sim_fast::frontend::FrontEndConfig::default();
    fe.apply_items(&file, prog.config())
        .map_err(|e| BenchError::Invalid(e.to_string()))?;
    for (k, v, line) in prog.config() {
        let old = cfg.clone();
        match k.as_str() {
            "remote_visibility" => cfg.remote_visibility = fe.remote_visibility,
            "l1_ways" => cfg.l1.assoc = fe.l1_ways,
            _ => continue,
        }
        if let Err(e) = cfg.validate() {
            let why = match e {
                sbrp_gpu::config::ConfigError::Invalid { reason, .. } => reason,
                e => e.to_string(),
            };
            let what = if k == "l1_ways" {
                format!(
                    "{} ways do not divide the GPU model's {} L1 lines ({why})",
                    cfg.l1.assoc,
                    old.l1_lines()
                )
            } else {
                why
            };
            return Err(BenchError::Invalid(format!(
                "{file}:{line}: config {k}={v}: {what}"
            )));
        }
    }
    if let (true, Some(k)) = (litmus(&o.program), prog.kernels().first()) {
        // A litmus trace's warp `S.W` is warp W of CTA S, which must run on
        // SM S: with fewer SMs the CTAs would share SMs and the trace's
        // expectations would name the wrong warps.
        if k.grid > cfg.core.sms {
            return Err(BenchError::Invalid(format!(
                "{}: the litmus trace uses {} SMs (one CTA per SM), the configuration has core.sms = {}",
                o.program.display(),
                k.grid,
                cfg.core.sms
            )));
        }
        if k.warps_per_cta() > cfg.core.warps_per_sm {
            return Err(BenchError::Invalid(format!(
                "{}: the litmus trace uses {} warps per SM, the configuration has core.warps_per_sm = {}",
                o.program.display(),
                k.warps_per_cta(),
                cfg.core.warps_per_sm
            )));
        }
    }
    let p: PbParams = cfg.pb_params();
    let Built {
        mut gpu,
        slot,
        shadowed,
        rtl: _rtl,
    } = build_gpu(&cfg, o.shadow, o.unit_fault)?;
    gpu.fault = o.fault;
    let record = o.record || !prog.expects().is_empty();
    let mut line = ProgressLine::new(prog.kernels().iter().map(|k| k.name.clone()).collect());
    let report = {
        let mut draw = |c: u64, i: u64, k: usize| line.update(c, i, k);
        gpu.run(
            &prog,
            sbrp_gpu::RunOpts {
                record,
                max_cycles: o.max_cycles,
                progress: o
                    .progress
                    .then_some(&mut draw as &mut dyn FnMut(u64, u64, usize)),
                no_skip: o.no_skip,
            },
        )
    };
    line.finish();
    let mut failures = vec![];
    let mut skipped = vec![];
    if let Some(ex) = &report.execution {
        let stem = o
            .program
            .file_name()
            .map(|f| f.to_string_lossy().to_string())
            .unwrap_or_default();
        let stem = stem.split('.').next().unwrap_or("");
        let why = |e: &sbrp_trace::Expectation| -> Option<String> {
            skip_reason(&e.what, &cfg).map(str::to_string).or_else(|| {
                LATENCY_DEPENDENT
                    .iter()
                    .find(|(t, l, _)| *t == stem && *l == e.line)
                    .map(|(_, _, w)| w.to_string())
            })
        };
        let (check, skip): (Vec<_>, Vec<_>) = prog
            .expects()
            .iter()
            .cloned()
            .partition(|e| why(e).is_none());
        skipped = skip.iter().map(|e| (e.line, why(e).unwrap())).collect();
        failures = evaluate(&check, ex);
    }
    let mismatch = slot.borrow_mut().take().map(|m| {
        let dir = o.mismatch_dir.clone();
        (m, dir)
    });
    if let Some((m, dir)) = &mismatch {
        std::fs::create_dir_all(dir).map_err(io(format!("cannot create {}", dir.display())))?;
        write_mismatch_vcds(
            m,
            &p,
            &dir.join(format!("sm{}_rtl.vcd", m.sm)),
            &dir.join(format!("sm{}_model.vcd", m.sm)),
        )?;
    }
    Ok(GpuRunOutcome {
        config: cfg,
        report,
        failures,
        skipped,
        mismatch,
        shadowed,
    })
}
