//! `sbrp check RECORD`: the persistency checker (`docs/checker.md`) on a
//! saved execution record (`sbrp run --record`, `sbrp bench --record`,
//! `sbrp cosim --record`; `.json` or `.json.gz`).

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use sbrp_trace::check::{self, Model, Options, Report};
use sbrp_trace::Execution;

use crate::Verdict;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModelArg {
    /// SBRP's persist memory order (Box 2), dFence and device-release durability.
    Sbrp,
    /// SBRP's order plus: every ordering point is a barrier for its SM's persists.
    Epoch,
    /// As epoch.
    Gpm,
}

impl From<ModelArg> for Model {
    fn from(m: ModelArg) -> Model {
        match m {
            ModelArg::Sbrp => Model::Sbrp,
            ModelArg::Epoch => Model::Epoch,
            ModelArg::Gpm => Model::Gpm,
        }
    }
}

#[derive(Args)]
pub struct CheckArgs {
    /// The execution record (JSON, or gzip-compressed JSON ending in `.gz`).
    #[arg(value_name = "RECORD")]
    record: PathBuf,
    /// The persistency model whose rules to check.
    #[arg(long, value_enum, default_value = "sbrp")]
    model: ModelArg,
    /// Scoped persistency bugs (a release and acquire whose scopes do not
    /// contain both threads) fail the check instead of being warnings.
    #[arg(long)]
    strict_scopes: bool,
    /// Violations listed (all are counted).
    #[arg(long, default_value_t = 10)]
    show: usize,
    /// Write the whole report as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

/// Reads an execution record, naming the file (and line:column) on errors.
pub fn read_record(path: &Path) -> Result<Execution> {
    let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    let text = if path.extension().is_some_and(|e| e == "gz") {
        let mut s = String::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_string(&mut s)
            .with_context(|| format!("{}: not a gzip-compressed record", path.display()))?;
        s
    } else {
        String::from_utf8(bytes)
            .map_err(|_| anyhow::anyhow!("{}: not a text (JSON) record", path.display()))?
    };
    let ex: Execution = serde_json::from_str(&text).map_err(|e| {
        let what = if e.is_eof() {
            "truncated record"
        } else {
            "not an execution record"
        };
        anyhow::anyhow!(
            "{}:{}:{}: {what}: {e}",
            path.display(),
            e.line(),
            e.column()
        )
    })?;
    ex.validate()
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok(ex)
}

pub fn run(a: &CheckArgs) -> Result<Verdict> {
    if let Some(j) = &a.json {
        crate::run::check_output("--json", j)?;
    }
    let ex = read_record(&a.record)?;
    let t0 = std::time::Instant::now();
    let opts = Options {
        model: a.model.into(),
        keep: a.show.max(1),
    };
    let r = match check::check(&ex, &opts) {
        Ok(r) => r,
        Err(e) => bail!("{}: {e}", a.record.display()),
    };
    let secs = t0.elapsed().as_secs_f64();
    if let Some(j) = &a.json {
        crate::run::write_files(&[(j, serde_json::to_string_pretty(&r)?)])?;
    }
    print_report(&r, a.show, Some(secs));
    let scopes_fail = a.strict_scopes && !r.scope_bugs.is_empty();
    if scopes_fail {
        println!(
            "FAILED: {} scoped persistency bug(s) (--strict-scopes)",
            r.scope_bugs.len()
        );
    }
    Ok(Verdict::of(r.ok() && !scopes_fail))
}

pub fn print_report(r: &Report, show: usize, secs: Option<f64>) {
    let rate = secs
        .map(|s| {
            format!(
                "; {s:.3} s, {:.2} M persists/s",
                r.persists as f64 / s.max(1e-9) / 1e6
            )
        })
        .unwrap_or_default();
    println!(
        "checker ({} rules): {} persists, {} flushes, {} durable points, {} ordering checks{rate}",
        r.model.name(),
        r.persists,
        r.flushes,
        r.durable_points,
        r.checks,
    );
    for b in &r.scope_bugs {
        println!("warning: scoped persistency bug: {b}");
    }
    if r.ok() {
        println!("persist order holds at every durable point");
    } else {
        println!("{} VIOLATIONS, the first by cycle:", r.violations_total);
        for v in r.violations.iter().take(show) {
            println!("  {v}");
        }
    }
}
