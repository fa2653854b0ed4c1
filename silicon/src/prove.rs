//! Formal proofs: the generated unit inside the port-level environment
//! (`constraints/formal/sbrp_pb_formal.sv`), turned into an AIGER model by Yosys
//! (`constraints/formal/prove.ys`) and decided by yosys-abc (`pdr` for full proofs,
//! `bmc3` for bounded ones and for covers), on the real RTL and on broken
//! variants. A proof that fails is a result ([`ProofRun::as_expected`]);
//! only a tool run that fails for another reason is an error. The unit is
//! the generated RTL, or any Verilog file with its ports
//! ([`ProveOptions::rtl`], `sbrp prove --rtl FILE`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use sbrp_iface::{FlushPolicy, PbParams};
use sbrp_tools::{write_atomic, LogFile, Scratch, Tool, ToolError};
use serde::{Deserialize, Serialize};

use crate::config::{fill, FORMAL_WRAPPER, PROVE_YS};
use crate::error::Result;
use crate::error::SiliconError;
use crate::kstep::{solve_step, StepOutcome, StepSolver};
use crate::properties::{induction, property, BrokenVariant, Engine, Property, PROPERTIES};
use crate::tools::{cadical, generate, require, yosys};

/// How one run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    /// PDR proved the property for every depth.
    Proved,
    /// BMC found no counterexample up to this many cycles.
    Bounded(u32),
    /// A counterexample (or, for a cover, a witness) ending in this cycle.
    Failed(u32),
    /// PDR gave up (time limit) without a verdict.
    Undecided,
    /// BMC's time limit stopped it after this many frames, short of its
    /// depth, without a counterexample: the check was not done.
    Short(u32),
    /// Proved for every depth by k-induction at this k (base case and
    /// inductive step).
    Inductive(u32),
    /// The base case to k holds but the inductive step at this k does not
    /// (a counterexample to induction, or its time limit): no proof.
    NotInductive(u32),
}

/// Outcome of one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProofRun {
    pub property: String,
    /// Run on the property's broken variant (expected to fail).
    pub broken: bool,
    /// A cover (expected to be reached).
    pub cover: bool,
    /// Which broken variant (its description), for a broken run.
    #[serde(default)]
    pub variant: Option<String>,
    /// `pdr` or `bmc3 -F k`.
    pub engine: String,
    pub verdict: Verdict,
    pub seconds: f64,
    /// yosys-abc's lines that tell the result.
    pub summary: String,
    /// yosys-abc's output.
    pub log: String,
}

impl ProofRun {
    /// The inductive step, decided by CaDiCaL, found a counterexample to
    /// induction (not its time limit; yosys-abc's `ind` does not tell them apart).
    pub fn counterexample_to_induction(&self) -> bool {
        self.summary.contains(crate::kstep::CTI)
    }

    /// Proved (or bounded-safe) on the real RTL, failed on a broken variant,
    /// reached for a cover.
    pub fn as_expected(&self) -> bool {
        let failed = matches!(self.verdict, Verdict::Failed(_));
        match (self.cover, self.broken) {
            (true, _) | (false, true) => failed,
            (false, false) => matches!(
                self.verdict,
                Verdict::Proved | Verdict::Bounded(_) | Verdict::Inductive(_)
            ),
        }
    }
}

/// What `sbrp prove` runs.
#[derive(Clone, Debug, Default)]
pub struct ProveOptions {
    /// One property by name, or several separated by commas; all when `None`.
    pub property: Option<String>,
    /// Also run each property's broken variant (which must fail).
    pub broken: bool,
    /// Where to write the scripts, models and logs, only when every run
    /// behaved as expected.
    pub out: Option<PathBuf>,
    /// Test aid: the "real" runs use the broken variant, so a proof that
    /// fails can be seen as a failed check (a failed proof, not an error).
    pub sabotage: bool,
    /// Time limit of one PDR run, seconds (0: the default, 600).
    pub pdr_seconds: u32,
    /// Try PDR on every property's real run (covers excepted) instead of
    /// its engine; a run PDR leaves undecided within `pdr_seconds` is not
    /// as expected (no proof was obtained).
    pub pdr: bool,
    /// The deep search: every real BMC run (covers aside) to at least
    /// 2N + 10 frames (`properties::deep_depth`), and the deep broken
    /// variants too.
    pub deep: bool,
    /// Time limit of one BMC run, seconds (0: none); a run it stops short of
    /// its depth is [`Verdict::Short`], not as expected.
    pub bmc_seconds: u32,
    /// Prove this Verilog file (top module `sbrp_pb` with the ports of the
    /// parameters) instead of the generated RTL; broken variants patch it.
    pub rtl: Option<PathBuf>,
    /// Prove every property's real run by k-induction
    /// ([`Engine::Induction`], `properties::induction`) instead of its
    /// engine; a property not proved so is not as expected.
    pub unbounded: bool,
    /// The k of the induction (0: each property's own).
    pub induction_k: u32,
    /// Time limit of the inductive step, seconds (0: the property's own,
    /// `properties::induction`: 120, `lost` 1200).
    pub induction_seconds: u32,
    /// The solver of the inductive step (CaDiCaL, or yosys-abc's `ind`).
    pub step_solver: StepSolver,
}

/// Every run of one `sbrp prove`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProveReport {
    #[serde(with = "crate::params_serde::PbParamsDef")]
    pub params: PbParams,
    pub runs: Vec<ProofRun>,
}

impl ProveReport {
    pub fn all_as_expected(&self) -> bool {
        self.runs.iter().all(ProofRun::as_expected)
    }

    /// The runs that did not behave as expected.
    pub fn unexpected(&self) -> Vec<&ProofRun> {
        self.runs.iter().filter(|r| !r.as_expected()).collect()
    }
}

/// Parameters of `sbrp prove` (ACTR bits as given, window 6, window policy).
pub fn prove_params(entries: u32, warps: u32, lines: u32, actr_bits: u32) -> Result<PbParams> {
    let p = PbParams {
        entries,
        warps,
        lines,
        actr_bits,
        window: 6,
        policy: FlushPolicy::Window,
    };
    p.validate()?;
    Ok(p)
}

/// The fair environment and the bounds of the liveness properties.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FairBounds {
    /// Every taken flush acknowledged within `lack` cycles.
    pub lack: u32,
    /// `flush_ready` at least every `r` cycles.
    pub r: u32,
    /// `inv_done` within `linv` cycles of `inv_req`.
    pub linv: u32,
    /// Release: EDM on an epoch lasts at most `b` + 1 cycles.
    pub b: u32,
    /// Drain: the head stands still at most `hm` cycles while the PB holds
    /// entries.
    pub hm: u32,
    /// Drain: `idle` at most `hi` cycles after the PB is empty.
    pub hi: u32,
    /// Drain: `idle` at most `bd` cycles after `drain_all` rose, which
    /// follows from `hm` and `hi`: the last allocation (a request taken in
    /// the cycle `drain_all` rose) is seen 3 cycles later, then at most N
    /// entries leave, one at least every `hm` + 1 cycles, then `hi` cycles.
    pub bd: u32,
}

/// Spec §6 "Bounded waits": Lack + F * Lrdy + 2 cycles from entering EDM,
/// F = 4; the environment of the proofs uses Lack = 3, Lrdy = 2.
pub fn fair_bounds(p: &PbParams) -> FairBounds {
    let (lack, r, hm, hi) = (3, 2, 16, 16);
    FairBounds {
        lack,
        r,
        linv: 2,
        b: lack + 4 * r + 2,
        hm,
        hi,
        bd: (hm + 1) * p.entries + hi + 2,
    }
}

/// yosys-abc's lines that tell how a run went.
fn summary(text: &str) -> String {
    text.lines()
        .filter(|l| {
            l.contains("Property proved")
                || l.contains("asserted in frame")
                || l.contains("No output asserted")
                || l.contains("Reached")
                || l.contains("timeout")
                || l.contains("Property UNDECIDED")
                || l.contains("Networks are")
                || l.starts_with("Inductive step")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The frame of yosys-abc's "Output N of miter ... was asserted in frame
/// F." line (0 when the number is unreadable), None without such a line.
pub(crate) fn asserted_frame(text: &str) -> Option<u32> {
    let l = text.lines().find(|l| l.contains("asserted in frame"))?;
    Some(
        l.split("asserted in frame")
            .nth(1)
            .and_then(|s| {
                s.split(|c: char| !c.is_ascii_digit())
                    .find(|t| !t.is_empty())
            })
            .and_then(|t| t.parse().ok())
            .unwrap_or(0),
    )
}

fn verdict(text: &str, engine: Engine) -> Verdict {
    if let Some(frame) = asserted_frame(text) {
        return Verdict::Failed(frame);
    }
    match engine {
        Engine::Pdr if text.contains("Property proved") => Verdict::Proved,
        Engine::Bmc(k) if text.contains("No output asserted") => {
            // "No output asserted in N frames." (N < k when a limit stopped it)
            let n = text
                .split("No output asserted in")
                .nth(1)
                .and_then(|r| r.split_whitespace().next())
                .and_then(|t| t.parse().ok())
                .unwrap_or(k);
            if n >= k {
                Verdict::Bounded(k)
            } else {
                Verdict::Short(n)
            }
        }
        Engine::Induction(k) if text.contains("Networks are equivalent") => Verdict::Inductive(k),
        Engine::Induction(k) if text.contains("No output asserted") => Verdict::NotInductive(k),
        _ => Verdict::Undecided,
    }
}

/// yosys-abc (`SBRP_YOSYS_ABC`, else `yosys-abc` on `PATH`), shipped with Yosys.
pub(crate) fn yosys_abc() -> Tool {
    Tool::from_env(
        "SBRP_YOSYS_ABC",
        "yosys-abc",
        "install it with `sudo apt-get install yosys` (Debian/Ubuntu; scripts/setup.sh does it), \
         or point SBRP_YOSYS_ABC at it"
            .to_string(),
    )
}

struct Tools {
    yosys: Tool,
    abc: Tool,
    cadical: Tool,
}

/// One run on `base` (the unit's Verilog): `variant` picks a broken
/// variant, `broken` whether the run counts as one (they differ only when
/// sabotaging); the engine's choice and the time limits from `opts`.
#[allow(clippy::too_many_arguments)]
fn prove_one(
    p: &PbParams,
    prop: &Property,
    base: &str,
    variant: Option<(usize, &BrokenVariant)>,
    broken: bool,
    opts: &ProveOptions,
    dir: &Path,
    tools: &Tools,
) -> Result<ProofRun> {
    let v = match variant {
        Some((_, b)) => prop.break_rtl(base, b)?,
        None => base.to_string(),
    };
    let tag = match (broken, variant) {
        (true, Some((i, _))) => format!("{}_broken{}", prop.name, i),
        _ => prop.name.to_string(),
    };
    let rtl = dir.join(format!("{tag}_rtl.v"));
    write_atomic(&rtl, v.as_bytes())?;
    let wrapper = dir.join("sbrp_pb_formal.sv");
    write_atomic(&wrapper, FORMAL_WRAPPER.as_bytes())?;
    // A broken variant is searched by BMC to the frame it must fail by.
    let engine = match (broken, variant) {
        (true, Some((_, b))) => Engine::Bmc(b.within + 1),
        _ if opts.unbounded && !prop.cover => Engine::Induction(match opts.induction_k {
            0 => induction(prop.name).k,
            k => k,
        }),
        _ if opts.pdr && !prop.cover => Engine::Pdr,
        _ => prop.real_engine(p.entries, opts.deep),
    };
    let mut defs = prop.run_defines(variant.map(|(_, b)| b));
    let mut connect = String::new();
    if let Engine::Induction(_) = engine {
        let ind = induction(prop.name);
        defs.extend_from_slice(ind.defines);
        connect = ind.connect_script(p.entries, p.warps, p.line_bits());
    }
    let defines: String = defs.iter().map(|d| format!(" -D{d}")).collect();
    let fb = fair_bounds(p);
    let params: String = [
        ("N", p.entries),
        ("IW", p.idx_bits()),
        ("W", p.warps),
        ("L", p.lines),
        ("LW", p.line_bits()),
        ("A", p.actr_bits),
        ("LACK", fb.lack),
        ("R", fb.r),
        ("LINV", fb.linv),
        ("B", fb.b),
        ("HM", fb.hm),
        ("HI", fb.hi),
        ("BD", fb.bd),
    ]
    .iter()
    .map(|(k, v)| format!(" -set {k} {v}"))
    .collect();
    let aig = dir.join(format!("{tag}.aig"));
    let ys = fill(
        PROVE_YS,
        &[
            ("RTL", rtl.display().to_string()),
            ("WRAPPER", wrapper.display().to_string()),
            ("DEFINES", defines),
            ("PARAMS", params),
            ("CONNECT", connect),
            ("AIG", aig.display().to_string()),
        ],
    );
    let ys_path = dir.join(format!("{tag}.ys"));
    write_atomic(&ys_path, ys.as_bytes())?;
    let ylog = dir.join(format!("{tag}.yosys.log"));
    let label = format!(
        "{} on the {} property{}",
        "yosys",
        prop.name,
        if broken { " (broken variant)" } else { "" }
    );
    let mut cmd = tools.yosys.command();
    // A port of another width than the parameters' is an error, not a
    // silently resized connection (a file given with `--rtl`).
    cmd.arg("-q")
        .arg("-e")
        .arg("Resizing cell port")
        .arg("-l")
        .arg(&ylog)
        .arg("-s")
        .arg(&ys_path);
    let out = tools.yosys.capture(&mut cmd, &label, LogFile::None)?;
    if !out.success() {
        let text = std::fs::read_to_string(&ylog).unwrap_or(out.text);
        return Err(ToolError::Failed {
            tool: label,
            status: out.status.to_string(),
            errors: sbrp_tools::error_lines(&text),
            log: Some(ylog),
        }
        .into());
    }
    let pdr_s = if opts.pdr_seconds == 0 {
        600
    } else {
        opts.pdr_seconds
    };
    let (engine_name, abc_cmd) = match engine {
        Engine::Pdr => ("pdr".to_string(), format!("pdr -T {pdr_s}")),
        Engine::Bmc(k) | Engine::BmcEntriesPlus(k) | Engine::Induction(k) => (
            format!("bmc3 -F {k}"),
            match opts.bmc_seconds {
                0 => format!("bmc3 -F {k}"),
                t => format!("bmc3 -F {k} -T {t}"),
            },
        ),
    };
    let ind_s = match opts.induction_seconds {
        0 => induction(prop.name).seconds,
        t => t,
    };
    let (engine_name, abc_cmd) = match (engine, opts.step_solver) {
        // base case, then the inductive step on a fresh copy
        (Engine::Induction(k), StepSolver::Abc) => (
            format!("ind -F {k}"),
            format!(
                "bmc3 -F {k}; read_aiger {}; fold; ind -F {k} -T {ind_s}",
                aig.display()
            ),
        ),
        // base case here, the step by CaDiCaL below
        (Engine::Induction(k), StepSolver::Cadical) => {
            (format!("cadical k={k}"), format!("bmc3 -F {k}"))
        }
        _ => (engine_name, abc_cmd),
    };
    let script = format!("read_aiger {}; fold; {abc_cmd}", aig.display());
    let t0 = Instant::now();
    let mut cmd = tools.abc.command();
    cmd.arg("-c").arg(&script);
    let label = label.replace("yosys", "yosys-abc");
    let out = tools.abc.capture(&mut cmd, &label, LogFile::None)?;
    let mut text = out.text.clone();
    let mut verdict = verdict(&text, engine);
    if !out.success() && verdict == Verdict::Undecided {
        return Err(ToolError::Failed {
            tool: label,
            status: out.status.to_string(),
            errors: sbrp_tools::error_lines(&text),
            log: None,
        }
        .into());
    }
    if let (Engine::Induction(k), StepSolver::Cadical) = (engine, opts.step_solver) {
        // yosys-abc ran the base case only: read it as the BMC it is
        verdict = match self::verdict(&text, Engine::Bmc(k)) {
            Verdict::Bounded(_) => {
                let (outcome, line) = solve_step(&tools.cadical, &aig, k, ind_s)?;
                text.push_str(&line);
                text.push('\n');
                match outcome {
                    StepOutcome::Inductive => Verdict::Inductive(k),
                    StepOutcome::Counterexample | StepOutcome::TimeLimit => {
                        Verdict::NotInductive(k)
                    }
                }
            }
            // the base case stopped short of k: no step, no proof
            Verdict::Short(_) => Verdict::NotInductive(k),
            v => v,
        };
    }
    write_atomic(&dir.join(format!("{tag}.abc.log")), text.as_bytes())?;
    let seconds = t0.elapsed().as_secs_f64();
    Ok(ProofRun {
        property: prop.name.to_string(),
        broken,
        cover: prop.cover,
        variant: variant.filter(|_| broken).map(|(_, b)| b.what.to_string()),
        engine: engine_name,
        verdict,
        seconds,
        summary: summary(&text),
        log: text,
    })
}

/// Runs the properties `props` (and their broken variants when `broken`) in `dir`.
pub fn run_proofs(
    p: &PbParams,
    props: &[&Property],
    broken: bool,
    dir: &Path,
) -> Result<Vec<ProofRun>> {
    let opts = ProveOptions {
        broken,
        ..Default::default()
    };
    run_proofs_with(p, props, &opts, dir)
}

/// The runs of `props` as `opts` asks (`property` and `out` aside).
fn run_proofs_with(
    p: &PbParams,
    props: &[&Property],
    opts: &ProveOptions,
    dir: &Path,
) -> Result<Vec<ProofRun>> {
    let tools = Tools {
        yosys: yosys(),
        abc: yosys_abc(),
        cadical: cadical(),
    };
    let base = match &opts.rtl {
        Some(f) => std::fs::read_to_string(f).map_err(|e| SiliconError::RtlFile {
            path: f.clone(),
            reason: e.to_string(),
        })?,
        None => generate(p)?,
    };
    if opts.rtl.is_some() && !base.contains("module sbrp_pb") {
        return Err(SiliconError::RtlFile {
            path: opts.rtl.clone().unwrap_or_default(),
            reason: "no module sbrp_pb in it".into(),
        });
    }
    require(&tools.yosys, "-V")?;
    require(&tools.abc, "-h")?;
    if opts.unbounded && opts.step_solver == StepSolver::Cadical {
        require(&tools.cadical, "--version")?;
    }
    let mut runs = Vec::new();
    for prop in props {
        let first = prop.variants(opts.deep).next().map(|b| (0, b));
        let sab = if opts.sabotage { first } else { None };
        runs.push(prove_one(p, prop, &base, sab, false, opts, dir, &tools)?);
        if opts.broken {
            for (i, b) in prop.variants(opts.deep).enumerate() {
                runs.push(prove_one(
                    p,
                    prop,
                    &base,
                    Some((i, b)),
                    true,
                    opts,
                    dir,
                    &tools,
                )?);
            }
        }
    }
    Ok(runs)
}

/// `sbrp prove`: the runs in a scratch directory, published into
/// `opts.out` when every run behaved as expected.
pub fn prove(p: &PbParams, opts: &ProveOptions) -> Result<ProveReport> {
    p.validate()?;
    let props: Vec<&Property> = match &opts.property {
        // one name, or several separated by commas
        Some(n) => n
            .split(',')
            .map(|x| property(x.trim()))
            .collect::<Result<_>>()?,
        None => PROPERTIES.iter().collect(),
    };
    let scratch = Scratch::new("prove")?;
    let runs = run_proofs_with(p, &props, opts, scratch.path())?;
    let report = ProveReport { params: *p, runs };
    if let (Some(out), true) = (&opts.out, report.all_as_expected()) {
        scratch.publish_all(out)?;
    }
    Ok(report)
}

fn verdict_text(v: Verdict, cover: bool) -> String {
    match (v, cover) {
        (Verdict::Proved, _) => "proved (PDR)".into(),
        (Verdict::Bounded(k), false) => format!("bounded to {k}"),
        (Verdict::Bounded(k), true) => format!("NOT REACHED in {k}"),
        (Verdict::Failed(f), false) => format!("FAILS at {f}"),
        (Verdict::Failed(f), true) => format!("reached at {f}"),
        (Verdict::Undecided, _) => "UNDECIDED (PDR)".into(),
        (Verdict::Short(n), _) => format!("STOPPED at {n} (time)"),
        (Verdict::Inductive(k), _) => format!("proved (k-ind, k={k})"),
        (Verdict::NotInductive(k), _) => format!("NOT INDUCTIVE k={k}"),
    }
}

/// One line per run: property, variant, engine, result, time, verdict;
/// then which real runs are proofs for every depth and which are bounded.
pub fn format_proofs(r: &ProveReport) -> String {
    let mut s = String::new();
    for run in &r.runs {
        let _ = writeln!(
            s,
            "  {:<17} {:<7} {:<10} {:<18} {:>7.1} s  {}",
            run.property,
            if run.broken {
                "broken"
            } else if run.cover {
                "cover"
            } else {
                "real"
            },
            run.engine,
            verdict_text(run.verdict, run.cover),
            run.seconds,
            if run.as_expected() {
                "as expected"
            } else {
                "UNEXPECTED"
            },
        );
    }
    let real = || r.runs.iter().filter(|x| !x.broken && !x.cover);
    let list = |v: Vec<String>| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    if real().next().is_some() {
        let proved = real()
            .filter(|x| x.verdict == Verdict::Proved)
            .map(|x| x.property.clone())
            .collect();
        let bounded = real()
            .filter_map(|x| match x.verdict {
                Verdict::Bounded(k) => Some(format!("{} to {k}", x.property)),
                _ => None,
            })
            .collect();
        let undecided: Vec<String> = real()
            .filter(|x| x.verdict == Verdict::Undecided)
            .map(|x| x.property.clone())
            .collect();
        let _ = writeln!(s, "  proved for all depths (PDR): {}", list(proved));
        let kind: Vec<String> = real()
            .filter_map(|x| match x.verdict {
                Verdict::Inductive(k) => Some(format!("{} (k = {k})", x.property)),
                _ => None,
            })
            .collect();
        let notind: Vec<String> = real()
            .filter_map(|x| match x.verdict {
                Verdict::NotInductive(k) => Some(format!("{} at k = {k}", x.property)),
                _ => None,
            })
            .collect();
        if !kind.is_empty() || !notind.is_empty() {
            let _ = writeln!(s, "  proved for all depths (k-induction): {}", list(kind));
            let _ = writeln!(
                s,
                "  not inductive (base case holds, the step fails or times out; no proof): {}",
                list(notind)
            );
        }
        let _ = writeln!(
            s,
            "  bounded (BMC from reset, cycles; not proofs): {}",
            list(bounded)
        );
        let short: Vec<String> = real()
            .filter_map(|x| match x.verdict {
                Verdict::Short(n) => Some(format!("{} at {n} of {}", x.property, x.engine)),
                _ => None,
            })
            .collect();
        if !short.is_empty() {
            let _ = writeln!(
                s,
                "  stopped by the BMC time limit (not checked to their depth): {}",
                list(short)
            );
        }
        if !undecided.is_empty() {
            let _ = writeln!(
                s,
                "  undecided (PDR, time limit; neither proved nor refuted): {}",
                list(undecided)
            );
        }
    }
    s
}

/// What went wrong in the runs that did not behave as expected.
pub fn format_proof_failures(r: &ProveReport) -> String {
    let mut msg = String::new();
    for run in r.unexpected() {
        let _ = writeln!(
            msg,
            "{} ({}): yosys-abc:\n{}",
            run.property,
            if run.broken {
                "broken variant not caught"
            } else if run.cover {
                "cover not reached"
            } else if run.verdict == Verdict::Undecided {
                "no proof: PDR undecided in its time limit"
            } else if matches!(run.verdict, Verdict::NotInductive(_)) {
                "no proof: not inductive at its k (counterexample to induction or time limit)"
            } else if matches!(run.verdict, Verdict::Short(_)) {
                "not checked to its depth: BMC's time limit stopped it"
            } else {
                "proof failed"
            },
            run.summary
        );
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(property: &str, engine: &str, verdict: Verdict) -> ProofRun {
        ProofRun {
            property: property.into(),
            broken: false,
            cover: false,
            variant: None,
            engine: engine.into(),
            verdict,
            seconds: 1.0,
            summary: String::new(),
            log: String::new(),
        }
    }

    /// Proofs, bounded results and undecided PDR runs are told apart, per
    /// run and in the summary; an undecided run is not called a failed proof.
    #[test]
    fn proved_bounded_and_undecided_are_reported_apart() {
        let r = ProveReport {
            params: prove_params(16, 4, 16, 8).unwrap(),
            runs: vec![
                run("handshake", "pdr", Verdict::Proved),
                run("durable", "bmc3 -F 14", Verdict::Bounded(14)),
                run("actr", "pdr", Verdict::Undecided),
            ],
        };
        let text = format_proofs(&r);
        for needle in [
            "proved (PDR)",
            "bounded to 14",
            "UNDECIDED (PDR)",
            "proved for all depths (PDR): handshake\n",
            "not proofs): durable to 14\n",
            "neither proved nor refuted): actr\n",
        ] {
            assert!(text.contains(needle), "{needle:?} missing:\n{text}");
        }
        assert!(!r.all_as_expected());
        let f = format_proof_failures(&r);
        assert!(f.contains("actr (no proof: PDR undecided"), "{f}");
        assert!(!f.contains("proof failed"), "{f}");
    }

    #[test]
    fn abc_results_are_read() {
        assert_eq!(
            verdict("Property proved.  Time = 1 sec", Engine::Pdr),
            Verdict::Proved
        );
        assert_eq!(
            verdict(
                "Output 0 of miter \"x\" was asserted in frame 7.  Time = 0.1 sec",
                Engine::Bmc(20)
            ),
            Verdict::Failed(7)
        );
        assert_eq!(
            verdict(
                "No output asserted in 20 frames. Resource limit reached (timeout 0 sec).",
                Engine::Bmc(20)
            ),
            Verdict::Bounded(20)
        );
        assert_eq!(
            verdict("Reached timeout (5 seconds).", Engine::Pdr),
            Verdict::Undecided
        );
        // a BMC run stopped by its time limit short of its depth
        assert_eq!(
            verdict(
                "No output asserted in 23 frames. Resource limit reached (timeout 60 sec).",
                Engine::Bmc(42)
            ),
            Verdict::Short(23)
        );
        // k-induction: base case and step both hold, or the step does not
        let base = "No output asserted in 4 frames. Resource limit reached (conf limit 0).";
        assert_eq!(
            verdict(
                &format!("{base}\nNetworks are equivalent.  Time = 0.1 sec"),
                Engine::Induction(4)
            ),
            Verdict::Inductive(4)
        );
        assert_eq!(
            verdict(
                &format!("{base}\nNetworks are UNDECIDED.  Time = 0.1 sec"),
                Engine::Induction(4)
            ),
            Verdict::NotInductive(4)
        );
        // a counterexample in the base case is a failure, not "not inductive"
        assert_eq!(
            verdict(
                "Output 0 of miter \"x\" was asserted in frame 3.  Time = 0.1 sec",
                Engine::Induction(4)
            ),
            Verdict::Failed(3)
        );
    }
}
