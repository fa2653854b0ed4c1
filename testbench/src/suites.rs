//! Co-simulation suites: traces through the SM front end into the RTL
//! (Verilator), the reference model, or both in lockstep
//! (`docs/trace-format.md`; `docs/microarch.md` §2 v2 interfaces). The
//! random suite runs behind the hostile persistence domain and checks the
//! durable state (`alldurable`, `pmo`) besides RTL = model; the fuzz suite
//! drives raw stimulus closed-loop (`RawStimulus::observe`).

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::error::{io, BenchError, Result};
use sbrp_cosim::{BuildOpts, RtlSource, VerilatedPb};
use sbrp_iface::slices::Slices;
use sbrp_iface::stimulus::{Profile, RawStimulus};
use sbrp_iface::vcd::{Traced, WaveStatus};
use sbrp_iface::{PbIn, PbParams, PbUnit};
use sbrp_sim_fast::frontend::{
    check_fits, DomainKind, FrontEnd, FrontEndConfig, LoadError, NullSink, RunSummary,
};
use sbrp_sim_fast::randgen::{generate, RandSpec};
use sbrp_sim_fast::{Fault, PbModel, SlicedModel};
use sbrp_trace::{evaluate, parse, Execution, Expect, Expectation, Trace};

use crate::engine::Engine;
use crate::lockstep::{write_mismatch_vcds, History, Lockstep, Mismatch, MismatchSlot, Recorder};

/// Options shared by every suite.
#[derive(Clone, Debug)]
pub struct RunOpts {
    pub params: PbParams,
    /// Which implementation runs: `Model`, `Verilator` or `Lockstep`.
    pub engine: Engine,
    /// Verilog to simulate instead of the generated RTL.
    pub rtl: Option<PathBuf>,
    /// Write waveforms here (whole run for the RTL, every cycle for the model).
    pub vcd_dir: Option<PathBuf>,
    /// With `vcd_dir`: also an FST of each waveform (`crate::fst`).
    pub fst: bool,
    /// Where a divergence's waveforms go when `vcd_dir` is not given.
    pub mismatch_dir: PathBuf,
    pub fe: FrontEndConfig,
    /// `--pm-latency` of the command line: wins over a trace's `config
    /// pm_latency=` line (already in `fe` for traces without one).
    pub pm_latency: Option<u32>,
    /// A fault injected into the model (negative controls).
    pub fault: Fault,
    /// Cycle limit of one trace run.
    pub max_cycles: u64,
    /// Write each run's execution record (JSON, for a persistency checker) here.
    pub record_dir: Option<PathBuf>,
    /// The persistence domain of the random suite's runs (hostile unless
    /// told otherwise; each chunk seeds it with the chunk's seed). Trace
    /// runs use `fe.domain` and the trace's `config domain=` line.
    pub random_domain: DomainKind,
    /// Profile-guided Verilator build (`sbrp_cosim::BuildOpts::pgo`): about
    /// 20% faster lockstep, twice the compile of a new configuration. Off
    /// here (tests build dozens of configurations and run each briefly); the
    /// `sbrp` command's lockstep runs turn it on.
    pub pgo: bool,
    /// Register slices at the unit's boundary (`docs/microarch.md` §2.1),
    /// in the generated RTL and the model alike.
    pub slices: Slices,
}

impl RunOpts {
    pub fn new(params: PbParams) -> RunOpts {
        RunOpts {
            params,
            engine: Engine::Lockstep,
            rtl: None,
            vcd_dir: None,
            fst: false,
            mismatch_dir: PathBuf::from("out/mismatch"),
            fe: FrontEndConfig::default(),
            pm_latency: None,
            fault: Fault::None,
            max_cycles: 2_000_000,
            record_dir: None,
            random_domain: DomainKind::Hostile,
            pgo: false,
            slices: Slices::NONE,
        }
    }
}

/// The Verilated RTL for one configuration, built (or found in the cache) once.
pub struct Rtl {
    proto: VerilatedPb,
}

impl Rtl {
    pub fn build(opts: &RunOpts) -> Result<Rtl> {
        let src = match &opts.rtl {
            Some(p) => RtlSource::File(p.clone()),
            None => RtlSource::Verilog {
                text: sbrp_hdl::generate_verilog_sliced(&opts.params, opts.slices)?,
                name: "sbrp_pb.v".into(),
            },
        };
        // Waveforms carry the RTL's internal signals: a --trace build (its
        // own cache entry; no profile-guided pass, runs with waveforms are
        // short).
        let trace = opts.vcd_dir.is_some();
        let build = BuildOpts {
            waivers: Some(sbrp_hdl::VERILATOR_WAIVERS.into()),
            pgo: opts.pgo && !trace,
            extra_args: if trace {
                vec!["--trace".into()]
            } else {
                vec![]
            },
            ..BuildOpts::default()
        };
        // A top with slices (generated, or a file of one, `--rtl` with
        // `--slices`) answers later (§2.1).
        let proto = VerilatedPb::build(&opts.params, src, &build)?
            .with_rsp_latency(opts.slices.rsp_latency());
        Ok(Rtl { proto })
    }
    pub fn instance(&self) -> VerilatedPb {
        self.proto.new_instance()
    }
}

/// Outcome of one trace run.
#[derive(Debug, Default)]
pub struct Outcome {
    pub summary: RunSummary,
    /// Remarks for the user (e.g. a trace setting the run overrides).
    pub notes: Vec<String>,
    /// Failed expectations, deadlock, unfinished run.
    pub fails: Vec<String>,
    pub mismatch: Option<Mismatch>,
    /// Waveforms written.
    pub files: Vec<PathBuf>,
}

impl Outcome {
    pub fn ok(&self) -> bool {
        self.fails.is_empty() && self.mismatch.is_none()
    }
}

fn model(opts: &RunOpts) -> Result<Box<dyn PbUnit>> {
    let m = PbModel::new(&opts.params)?.with_fault(opts.fault);
    Ok(if opts.slices.is_none() {
        Box::new(m)
    } else {
        Box::new(SlicedModel::new(m, opts.slices)?)
    })
}

/// Waveforms of a run (`--vcd`): per SM, the RTL's and the model's files,
/// written while the run goes; the first write error stops the run.
struct Plan {
    waves: Vec<Option<(PathBuf, PathBuf)>>,
    status: WaveStatus,
}

fn units(
    opts: &RunOpts,
    rtl: Option<&Rtl>,
    sms: u32,
    slot: &MismatchSlot,
    plan: &Plan,
) -> Result<Vec<Box<dyn PbUnit>>> {
    (0..sms as usize)
        .map(|s| -> Result<Box<dyn PbUnit>> {
            let waves = plan.waves.get(s).cloned().flatten();
            let traced = |u: Box<dyn PbUnit>, path: Option<PathBuf>| -> Box<dyn PbUnit> {
                match path {
                    Some(p) => Box::new(Traced::new(u, p, 0, plan.status.clone())),
                    None => u,
                }
            };
            let (rtl_wave, model_wave) = match waves {
                Some((a, b)) => (Some(a), Some(b)),
                None => (None, None),
            };
            let verilated = || -> Result<Box<dyn PbUnit>> {
                let r = rtl.ok_or_else(|| {
                    BenchError::Invalid(format!("engine {} needs the RTL built", opts.engine))
                })?;
                let mut v = r.instance();
                if let Some(p) = &rtl_wave {
                    v.trace_all(&all_signals(p), plan.status.clone())?;
                }
                Ok(Box::new(v))
            };
            Ok(match opts.engine {
                Engine::Model => traced(model(opts)?, model_wave),
                Engine::RustHdl if !opts.slices.is_none() => traced(
                    sbrp_hdl::new_sim_sliced(&opts.params, opts.slices)?,
                    rtl_wave,
                ),
                Engine::RustHdl => {
                    traced(crate::make_unit(Engine::RustHdl, &opts.params)?, rtl_wave)
                }
                Engine::Verilator => traced(verilated()?, rtl_wave),
                Engine::Lockstep => {
                    let a = traced(verilated()?, rtl_wave);
                    let m = traced(model(opts)?, model_wave);
                    Box::new(Lockstep::new(a, m, s as u32, slot.clone()))
                }
            })
        })
        .collect()
}

/// The RTL's waveform of every signal beside its port waveform
/// `NAME.rtl.smS.vcd`: `NAME.rtl-all.smS.vcd`.
pub fn all_signals(port_wave: &Path) -> PathBuf {
    let name = port_wave
        .file_name()
        .map(|n| n.to_string_lossy().replacen(".rtl.sm", ".rtl-all.sm", 1))
        .unwrap_or_default();
    port_wave.with_file_name(name)
}

/// The front-end configuration of a trace: `opts.fe`, the trace's `config`
/// lines, then `--pm-latency` if given.
fn fe_config(t: &Trace, opts: &RunOpts) -> Result<FrontEndConfig> {
    let mut cfg = opts.fe.clone();
    cfg.apply_trace(t)?;
    if let Some(l) = opts.pm_latency {
        cfg.pm_latency = l;
    }
    Ok(cfg)
}

fn front_end(t: &Trace, opts: &RunOpts, units: Vec<Box<dyn PbUnit>>) -> Result<FrontEnd> {
    let mut fe = FrontEnd::new(units, fe_config(t, opts)?);
    fe.reset();
    fe.load(t)?;
    Ok(fe)
}

/// Writes `ex` as JSON to `path` through a temporary file, so that an error
/// leaves no partial file behind.
fn write_record(path: &Path, ex: &Execution) -> Result<()> {
    let json = serde_json::to_vec(ex)?;
    Ok(sbrp_tools::write_atomic(path, &json)?)
}

/// Why a trace cannot run on units of parameters `p` (e.g. `needs 8 warps,
/// the unit has 4`), for suites that skip it.
pub fn skip_reason(t: &Trace, p: &PbParams) -> Option<String> {
    match check_fits(t, p) {
        Err(LoadError::TooManyWarps { needs, has, .. }) => {
            Some(format!("needs {needs} warps, the unit has {has}"))
        }
        Err(e) => Some(e.to_string()),
        Ok(()) => None,
    }
}

/// Runs one trace and checks its expectations. With `vcd_dir`, both sides
/// write their waveforms while the run goes (a write error ends the run
/// with that error). On a divergence the run stops, and without `vcd_dir`
/// both sides' waveforms of the cycles before it are written from the
/// comparator's history into `mismatch_dir`.
pub fn run_trace(t: &Trace, opts: &RunOpts, rtl: Option<&Rtl>, name: &str) -> Result<Outcome> {
    let sms = t.sms();
    let slot: MismatchSlot = Rc::new(RefCell::new(None));
    let vcd = opts.vcd_dir.clone();
    let plan = Plan {
        waves: (0..sms)
            .map(|s| {
                vcd.as_ref().map(|d| {
                    (
                        d.join(format!("{name}.rtl.sm{s}.vcd")),
                        d.join(format!("{name}.model.sm{s}.vcd")),
                    )
                })
            })
            .collect(),
        status: WaveStatus::default(),
    };
    if let Some(d) = &vcd {
        std::fs::create_dir_all(d).map_err(io(format!("cannot create {}", d.display())))?;
    }
    let mut notes: Vec<String> = match (opts.pm_latency, FrontEndConfig::trace_pm_latency(t)) {
        (Some(l), Some(c)) => vec![format!(
            "the run's pm_latency {l} overrides pm_latency={} of {}:{}",
            c.value, t.file, c.line
        )],
        _ => vec![],
    };
    // A trace's `resume ... within N` bounds are the unsliced unit's cycle
    // counts (§2.1); every ordering and durability expectation stays.
    let resume = |e: &&sbrp_trace::Expectation| matches!(e.what, sbrp_trace::Expect::Resume(..));
    let bounds = t.expects.iter().filter(resume).count();
    if !opts.slices.is_none() && bounds > 0 {
        notes.push(format!(
            "{bounds} `resume ... within` bound(s) not checked: they count the unit without register slices"
        ));
    }
    let lat = opts.slices.rsp_latency();
    if lat > 5 && t.expects.iter().any(|e| e.what.is_race()) {
        notes.push(format!(
            "the trace's races (occurs, stall, flushes) were written for a 3-cycle round trip; at {lat} cycles some windows close (docs/microarch.md §2.1)"
        ));
    }
    let us = units(opts, rtl, sms, &slot, &plan)?;
    let mut fe = front_end(t, opts, us)?;
    if opts.record_dir.is_none() && t.expects.is_empty() {
        fe.set_sink(Box::new(NullSink));
    }
    fe.run(opts.max_cycles, |_| {
        slot.borrow().is_none() && plan.status.borrow().is_none()
    });
    let mut out = Outcome {
        summary: fe.summary.clone(),
        notes,
        ..Outcome::default()
    };
    let exec = fe.execution();
    if let Some(d) = &opts.record_dir {
        std::fs::create_dir_all(d).map_err(io(format!("cannot create {}", d.display())))?;
        let p = d.join(format!("{name}.json"));
        write_record(&p, &exec)?;
        out.files.push(p);
    }
    let mismatch = slot.borrow_mut().take();
    if mismatch.is_none() {
        // The unit's `error`, interface breaches seen by the bench.
        out.fails.extend(fe.summary.check_failures.iter().cloned());
        if let Some(dl) = &fe.summary.deadlock {
            out.fails.push(format!("deadlock: {dl}"));
        } else if !fe.summary.finished && fe.summary.check_failures.is_empty() {
            out.fails
                .push(format!("did not finish within {} cycles", opts.max_cycles));
        }
        let expects: Vec<sbrp_trace::Expectation> = t
            .expects
            .iter()
            .filter(|e| opts.slices.is_none() || !resume(e))
            .cloned()
            .collect();
        out.fails
            .extend(evaluate(&expects, &exec).iter().map(|f| f.to_string()));
    }
    // Completes the waveforms (the traced units finish their files on drop).
    drop(fe);
    if let Some(e) = plan.status.borrow_mut().take() {
        // A run's waveforms are complete or absent: the others go too.
        for (a, b) in plan.waves.iter().flatten() {
            let _ = std::fs::remove_file(a);
            let _ = std::fs::remove_file(b);
            let _ = std::fs::remove_file(all_signals(a));
        }
        return Err(e.into());
    }
    let mut vcds = vec![];
    for (rtl_vcd, model_vcd) in plan.waves.iter().flatten() {
        if opts.engine.needs_verilator() {
            vcds.push(rtl_vcd.clone());
            vcds.push(all_signals(rtl_vcd));
        }
        vcds.push(model_vcd.clone());
    }
    let fsts = match opts.fst && !vcds.is_empty() {
        true => crate::fst::convert_all(&vcds).inspect_err(|_| {
            // All or nothing, as for a failed VCD.
            for v in &vcds {
                let _ = std::fs::remove_file(v);
            }
        })?,
        false => vec![],
    };
    out.files.extend(vcds);
    out.files.extend(fsts);
    if let Some(m) = mismatch {
        let dir = vcd.clone().unwrap_or_else(|| opts.mismatch_dir.clone());
        std::fs::create_dir_all(&dir).map_err(io(format!("cannot create {}", dir.display())))?;
        let sm = m.sm;
        let (rtl_vcd, model_vcd) = (
            dir.join(format!("{name}.rtl.sm{sm}.vcd")),
            dir.join(format!("{name}.model.sm{sm}.vcd")),
        );
        if vcd.is_none() {
            write_mismatch_vcds(&m, &opts.params, &rtl_vcd, &model_vcd)?;
            out.files.push(rtl_vcd);
            out.files.push(model_vcd.clone());
        } else {
            // The whole-run waveforms end with the divergence; the report beside them.
            let txt = model_vcd.with_extension("txt");
            std::fs::write(&txt, m.to_string())
                .map_err(io(format!("cannot write {}", txt.display())))?;
        }
        out.files.push(model_vcd.with_extension("txt"));
        out.mismatch = Some(m);
    }
    Ok(out)
}

/// Reads and parses a trace file and checks its `config` lines; the error
/// names the file and line.
pub fn load_trace(path: &Path) -> Result<Trace> {
    let text = std::fs::read_to_string(path)
        .map_err(io(format!("cannot read trace {}", path.display())))?;
    let t = parse(&text, &path.display().to_string())?;
    FrontEndConfig::default().apply_trace(&t)?;
    Ok(t)
}

/// The litmus traces in the source tree (for tests; the command runs the
/// embedded copy, `litmus::LITMUS`).
pub fn litmus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("litmus")
}

/// Every `*.trace` in `dir`, sorted.
pub fn litmus_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io(format!("cannot read {}", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "trace"))
        .collect();
    v.sort();
    if v.is_empty() {
        return Err(BenchError::Invalid(format!(
            "no *.trace files in {}",
            dir.display()
        )));
    }
    Ok(v)
}

/// Result of a random lockstep run.
#[derive(Debug, Default)]
pub struct RandomOutcome {
    pub cycles: u64,
    pub chunks: u32,
    pub persists: u64,
    pub flushes: u64,
    pub evict_flushes: u64,
    pub waits: u64,
    pub refused: u64,
    pub max_occupancy: u32,
    pub fails: Vec<String>,
    pub mismatch: Option<Mismatch>,
    pub files: Vec<PathBuf>,
}

/// Shape of the random traces for a configuration: 2 SMs, every warp busy.
pub fn rand_spec(p: &PbParams, fe: &FrontEndConfig, chunk: u32) -> RandSpec {
    RandSpec::random_suite(p, fe.l1_ways, fe.line_bytes, chunk)
}

/// Seed of chunk `chunk` of a chained random run started with `seed`.
fn chunk_seed(seed: u64, chunk: u32) -> u64 {
    seed.wrapping_mul(0x9E37_79B9).wrapping_add(chunk as u64)
}

/// Lockstep (or model-only) on chained random traces for `cycles` cycles.
pub fn run_random(
    seed: u64,
    cycles: u64,
    opts: &RunOpts,
    rtl: Option<&Rtl>,
) -> Result<RandomOutcome> {
    let mut out = RandomOutcome::default();
    let mut chunk = 0u32;
    let mut elapsed = 0u64;
    while elapsed < cycles {
        let spec = rand_spec(&opts.params, &opts.fe, chunk);
        let this_seed = chunk_seed(seed, chunk);
        let mut t = generate(&spec, this_seed);
        // Durable-state checks beyond RTL = model (`docs/trace-format.md`).
        for what in [Expect::AllDurable, Expect::Pmo] {
            t.expects.push(Expectation { line: 0, what });
        }
        let mut o = opts.clone();
        o.max_cycles = cycles - elapsed;
        o.fe.domain = opts.random_domain;
        o.fe.domain_seed = this_seed;
        let name = format!("random_s{seed}_c{chunk}");
        let r = run_trace(&t, &o, rtl, &name)?;
        elapsed += r.summary.cycles;
        out.chunks += 1;
        out.persists += r.summary.persists;
        out.flushes += r.summary.flushes;
        out.evict_flushes += r.summary.evict_flushes;
        out.waits += r.summary.waits;
        out.refused += r.summary.refused;
        out.max_occupancy = out.max_occupancy.max(r.summary.max_occupancy);
        out.files.extend(r.files);
        if let Some(m) = r.mismatch {
            out.mismatch = Some(m);
            break;
        }
        // A chunk cut short by the cycle budget is not a failure.
        let cut = !r.summary.finished && elapsed >= cycles && r.summary.deadlock.is_none();
        if !cut && !r.fails.is_empty() {
            out.fails.extend(
                r.fails
                    .into_iter()
                    .map(|f| format!("chunk {chunk} (seed {this_seed}): {f}")),
            );
            break;
        }
        chunk += 1;
    }
    out.cycles = elapsed;
    Ok(out)
}

/// The per-cycle inputs the SM front end gives its units while it runs
/// chained constrained-random traces (the random suite's, model only): the
/// stimulus of running kernels. Every SM's stream is kept; each run starts
/// with the unit's reset, so the streams can be replayed one after another.
pub fn workload_stimulus(p: &PbParams, seed: u64, cycles: u64) -> Result<Vec<PbIn>> {
    let opts = RunOpts::new(*p);
    let mut out: Vec<PbIn> = Vec::with_capacity(cycles as usize);
    let mut chunk = 0u32;
    while (out.len() as u64) < cycles {
        let spec = rand_spec(p, &opts.fe, chunk);
        let t = generate(&spec, chunk_seed(seed, chunk));
        let hist: Vec<History> = (0..t.sms()).map(|_| History::default()).collect();
        let units = hist
            .iter()
            .map(|h| -> Result<Box<dyn PbUnit>> {
                Ok(Box::new(Recorder {
                    inner: Box::new(PbModel::new(p)?),
                    sink: h.clone(),
                }))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut fe = front_end(&t, &opts, units)?;
        fe.set_sink(Box::new(NullSink));
        fe.run(cycles - out.len() as u64, |_| true);
        if let Some(d) = &fe.summary.deadlock {
            return Err(BenchError::Invalid(format!(
                "workload stimulus: chunk {chunk} deadlocked: {d}"
            )));
        }
        for h in &hist {
            out.extend(h.borrow().iter().map(|(_, i, _)| *i));
        }
        chunk += 1;
    }
    out.truncate(cycles as usize);
    Ok(out)
}

/// Raw random stimulus into two implementations in lockstep for `cycles`,
/// closed loop: the stimulus sees every cycle's outputs (`observe`), so it
/// keeps the L1 hooks the responses return, acknowledges only flushes it
/// saw taken (random order and bursts) and answers invalidations, besides
/// its random back-pressure and protocol noise.
pub fn run_fuzz(
    seed: u64,
    cycles: u64,
    a: Box<dyn PbUnit>,
    b: Box<dyn PbUnit>,
) -> Option<Mismatch> {
    run_fuzz_with(seed, cycles, Profile::Default, a, b)
}

/// [`run_fuzz`] with the stimulus stressing `profile`'s corners.
pub fn run_fuzz_with(
    seed: u64,
    cycles: u64,
    profile: Profile,
    a: Box<dyn PbUnit>,
    b: Box<dyn PbUnit>,
) -> Option<Mismatch> {
    let p = *a.params();
    let slot: MismatchSlot = Rc::new(RefCell::new(None));
    let mut l = Lockstep::new(a, b, 0, slot.clone());
    let mut stim = RawStimulus::with_profile(&p, seed, profile);
    let rst = sbrp_iface::PbIn::reset();
    let out = l.step(&rst);
    stim.observe(&rst, &out);
    for _ in 0..cycles {
        let inp = stim.next_input();
        let out = l.step(&inp);
        stim.observe(&inp, &out);
        if slot.borrow().is_some() {
            break;
        }
    }
    let m = slot.borrow_mut().take();
    m
}

/// Builds the Verilated RTL and a model for `opts` (raw fuzzing entry point).
pub fn rtl_and_model(opts: &RunOpts, rtl: &Rtl) -> Result<(Box<dyn PbUnit>, Box<dyn PbUnit>)> {
    Ok((Box::new(rtl.instance()), model(opts)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("sbrp-suites-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn model_opts(p: PbParams) -> RunOpts {
        let mut o = RunOpts::new(p);
        o.engine = Engine::Model;
        o
    }

    #[test]
    fn bad_config_is_refused_at_load_with_file_and_line() {
        let f = tmp("cfg").join("c.trace");
        std::fs::write(&f, "0.0 ofence\n\nconfig pm_latency=0\n").unwrap();
        let e = load_trace(&f).unwrap_err().to_string();
        assert!(
            e.contains("c.trace:3: config pm_latency=0: allowed 1..100000"),
            "{e}"
        );
    }

    #[test]
    fn a_litmus_trace_needing_more_warps_is_skipped_by_name() {
        let t = load_trace(&litmus_dir().join("06_block_release_acquire.trace")).unwrap();
        let p = PbParams {
            warps: 4,
            ..PbParams::default()
        };
        let why = skip_reason(&t, &p).expect("needs more than 4 warps");
        assert!(
            why.starts_with("needs ") && why.ends_with("warps, the unit has 4"),
            "{why}"
        );
        assert_eq!(skip_reason(&t, &PbParams::default()), None);
    }

    #[test]
    fn command_line_pm_latency_wins_over_the_trace() {
        let t = parse("config pm_latency=60\n0.0 st.pm 0x40 1\n", "l.trace").unwrap();
        let mut o = model_opts(PbParams::default());
        assert_eq!(fe_config(&t, &o).unwrap().pm_latency, 60);
        o.pm_latency = Some(300);
        assert_eq!(fe_config(&t, &o).unwrap().pm_latency, 300);
        // The flush is acknowledged after 300 cycles, not 60.
        let r = run_trace(&t, &o, None, "lat").unwrap();
        assert!(r.ok() && r.summary.cycles > 300, "{:?}", r.summary);
        // ... and the run says so, naming the trace's line.
        assert_eq!(r.notes.len(), 1, "{:?}", r.notes);
        assert!(r.notes[0].contains("pm_latency 300") && r.notes[0].contains("l.trace:1"));
    }

    #[test]
    fn execution_record_is_written_whole_and_reads_back() {
        let d = tmp("rec");
        let mut o = model_opts(PbParams::default());
        o.record_dir = Some(d.clone());
        let t = load_trace(&litmus_dir().join("07_device_release_acquire.trace")).unwrap();
        let r = run_trace(&t, &o, None, "l07").unwrap();
        assert!(r.ok(), "{:?}", r.fails);
        let text = std::fs::read_to_string(d.join("l07.json")).unwrap();
        let ex: Execution = serde_json::from_str(&text).unwrap();
        ex.validate().unwrap();
        assert!(evaluate(&t.expects, &ex).is_empty());
        assert!(!d.join("l07.json.tmp").exists());
        // A failed write leaves nothing: the target is a directory.
        let blocked = d.join("blocked.json");
        std::fs::create_dir_all(&blocked).unwrap();
        assert!(write_record(&blocked, &ex).is_err());
        // No temporary file is left beside the records.
        let mut left: Vec<String> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect();
        left.sort();
        assert_eq!(left, ["blocked.json", "l07.json"]);
    }
}
