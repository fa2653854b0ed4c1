//! Formal proofs: the instrumented unit inside the wrapper
//! (`formal/sbrp_pb_formal.sv`), proved by Yosys's SAT-based temporal
//! induction (`formal/prove.ys`), on the real RTL and on broken variants.
//! A proof that fails is a result ([`ProofRun::proved`]); only a Yosys run
//! that fails for another reason (syntax error, missing signal) is an error.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use sbrp_iface::{FlushPolicy, PbParams};
use sbrp_tools::{write_atomic, LogFile, Scratch, Tool, ToolError};
use serde::{Deserialize, Serialize};

use crate::config::{fill, FORMAL_WRAPPER, PROVE_YS};
use crate::error::Result;
use crate::instrument::instrument_for_formal;
use crate::properties::{property, Property, PROPERTIES};
use crate::tools::{generate, require, yosys};

/// Outcome of one proof run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProofRun {
    pub property: String,
    /// Run on the property's broken variant (expected not to be proved).
    pub broken: bool,
    pub proved: bool,
    /// The base case failed: a real counterexample trace from reset (not
    /// only a failed induction step).
    pub counterexample: bool,
    pub seconds: f64,
    /// Yosys's summary lines (induction result, failed assertion, base case / step).
    pub summary: String,
    /// Yosys's log.
    pub log: String,
}

impl ProofRun {
    /// Proved on the real RTL, or not proved on a broken variant.
    pub fn as_expected(&self) -> bool {
        self.proved != self.broken
    }
}

/// What `sbrp prove` runs.
#[derive(Clone, Debug, Default)]
pub struct ProveOptions {
    /// One property by name; all when `None`.
    pub property: Option<String>,
    /// Also run each property's broken variant (which must fail).
    pub broken: bool,
    /// Where to write the Yosys scripts and logs, only when every run
    /// behaved as expected.
    pub out: Option<PathBuf>,
    /// Test aid: the "real" runs use the broken variant, so a proof that
    /// fails can be seen as a failed check (a failed proof, not an error).
    pub sabotage: bool,
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

/// Parameters of `sbrp prove` (ACTR 8 bits, window 6, window policy).
pub fn prove_params(entries: u32, warps: u32, lines: u32) -> Result<PbParams> {
    let p = PbParams {
        entries,
        warps,
        lines,
        actr_bits: 8,
        window: 6,
        policy: FlushPolicy::Window,
    };
    p.validate()?;
    Ok(p)
}

/// Yosys's lines that tell how a proof went (the last six).
fn summary(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| {
            l.contains("Induction step")
                || l.contains("failed")
                || l.contains("SUCCESS")
                || l.contains("FAIL")
                || l.contains("Trying induction")
                || l.contains("Reached maximum")
                || l.contains("ERROR")
        })
        .collect();
    lines[lines.len().saturating_sub(6)..].join("\n")
}

/// One proof: `rtl_broken` picks the broken variant of the RTL, `broken`
/// whether the run counts as the broken variant (they differ only when
/// sabotaging).
fn prove_one(
    p: &PbParams,
    prop: &Property,
    broken: bool,
    rtl_broken: bool,
    dir: &Path,
    yosys: &Tool,
) -> Result<ProofRun> {
    let mut v = generate(p)?;
    if rtl_broken {
        v = prop.break_rtl(&v)?;
    }
    let inst = instrument_for_formal(&v)?;
    let tag = format!("{}{}", prop.name, if broken { "_broken" } else { "" });
    let rtl = dir.join(format!("{tag}_rtl.v"));
    write_atomic(&rtl, inst.as_bytes())?;
    let wrapper = dir.join("sbrp_pb_formal.sv");
    write_atomic(&wrapper, FORMAL_WRAPPER.as_bytes())?;
    let defines: String = prop.defines.iter().map(|d| format!(" -D{d}")).collect();
    let bound = 2 * p.entries + (1 << p.actr_bits);
    let ys = fill(
        PROVE_YS,
        &[
            ("RTL", rtl.display().to_string()),
            ("WRAPPER", wrapper.display().to_string()),
            ("DEFINES", defines),
            ("N", p.entries.to_string()),
            ("IW", p.idx_bits().to_string()),
            ("W", p.warps.to_string()),
            ("L", p.lines.to_string()),
            ("LW", p.line_bits().to_string()),
            ("A", p.actr_bits.to_string()),
            ("BOUND", bound.to_string()),
            // A broken variant fails within a few steps.
            ("MAXSTEPS", if broken { "12" } else { "24" }.to_string()),
        ],
    );
    let ys_path = dir.join(format!("{tag}.ys"));
    write_atomic(&ys_path, ys.as_bytes())?;
    let log = dir.join(format!("{tag}.log"));
    let t0 = Instant::now();
    let mut cmd = yosys.command();
    cmd.arg("-q").arg("-l").arg(&log).arg("-s").arg(&ys_path);
    let label = format!(
        "yosys on the {} proof{}",
        prop.name,
        if broken { " (broken variant)" } else { "" }
    );
    let out = yosys.capture(&mut cmd, &label, LogFile::None)?;
    let seconds = t0.elapsed().as_secs_f64();
    // Yosys's own log when it wrote one, else what it printed.
    let text = std::fs::read_to_string(&log).unwrap_or_else(|_| out.text.clone());
    let proof_failed = text.contains("proof did fail");
    if !out.success() && !proof_failed {
        return Err(ToolError::Failed {
            tool: label,
            status: out.status.to_string(),
            errors: sbrp_tools::error_lines(&text),
            log: Some(log),
        }
        .into());
    }
    let proved = out.success() && !proof_failed && text.contains("Induction step proven: SUCCESS!");
    Ok(ProofRun {
        property: prop.name.to_string(),
        broken,
        proved,
        counterexample: text.contains("model found for base case: FAIL"),
        seconds,
        summary: summary(&text),
        log: text,
    })
}

/// Runs the proofs of `props` (and their broken variants when `broken`) in `dir`.
pub fn run_proofs(
    p: &PbParams,
    props: &[&Property],
    broken: bool,
    dir: &Path,
) -> Result<Vec<ProofRun>> {
    run_proofs_with(p, props, broken, false, dir)
}

fn run_proofs_with(
    p: &PbParams,
    props: &[&Property],
    broken: bool,
    sabotage: bool,
    dir: &Path,
) -> Result<Vec<ProofRun>> {
    let yosys = yosys();
    require(&yosys, "-V")?;
    let mut runs = Vec::new();
    for prop in props {
        runs.push(prove_one(p, prop, false, sabotage, dir, &yosys)?);
        if broken {
            runs.push(prove_one(p, prop, true, true, dir, &yosys)?);
        }
    }
    Ok(runs)
}

/// `sbrp prove`: the proofs in a scratch directory, published into
/// `opts.out` when every run behaved as expected.
pub fn prove(p: &PbParams, opts: &ProveOptions) -> Result<ProveReport> {
    p.validate()?;
    let props: Vec<&Property> = match &opts.property {
        Some(n) => vec![property(n)?],
        None => PROPERTIES.iter().collect(),
    };
    let scratch = Scratch::new("prove")?;
    let runs = run_proofs_with(p, &props, opts.broken, opts.sabotage, scratch.path())?;
    let report = ProveReport { params: *p, runs };
    if let (Some(out), true) = (&opts.out, report.all_as_expected()) {
        scratch.publish_all(out)?;
    }
    Ok(report)
}

/// One line per run: property, variant, result, time, verdict.
pub fn format_proofs(r: &ProveReport) -> String {
    let mut s = String::new();
    for run in &r.runs {
        let _ = writeln!(
            s,
            "  {:<12} {:<8} {:<10} {:>7.1} s  {}{}",
            run.property,
            if run.broken { "broken" } else { "real" },
            if run.proved { "PROVED" } else { "NOT PROVED" },
            run.seconds,
            if run.as_expected() {
                "as expected"
            } else {
                "UNEXPECTED"
            },
            if run.counterexample {
                " (counterexample from reset)"
            } else if !run.proved {
                " (induction step fails)"
            } else {
                ""
            }
        );
    }
    s
}

/// What went wrong in the runs that did not behave as expected, with
/// Yosys's summary of each.
pub fn format_proof_failures(r: &ProveReport) -> String {
    let mut msg = String::new();
    for run in r.unexpected() {
        let _ = writeln!(
            msg,
            "{} ({}): {}\n{}",
            run.property,
            if run.broken {
                "broken variant proved"
            } else {
                "proof failed"
            },
            if run.broken { "" } else { "Yosys:" },
            run.summary
        );
    }
    msg
}
