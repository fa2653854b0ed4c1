//! `sbrp wavediff A.vcd B.vcd`: two waveforms compared over the signals
//! both name (`sbrp_testbench::wavediff`), e.g. the RTL's and the model's
//! of one run (`sbrp cosim --vcd DIR`): the first differing time and
//! signals, exit 1; exit 0 when they agree everywhere.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;
use sbrp_testbench::wavediff::diff_files;

use crate::Verdict;

#[derive(Args)]
pub struct WaveDiffArgs {
    /// The first waveform (VCD).
    a: PathBuf,
    /// The second waveform (VCD).
    b: PathBuf,
    /// List at most this many signals of one file only.
    #[arg(long, default_value_t = 8)]
    show: usize,
}

pub fn run(a: &WaveDiffArgs) -> Result<Verdict> {
    let d = diff_files(&a.a, &a.b)?;
    if d.shared.is_empty() {
        bail!(
            "{} and {} have no signal in common (scope and name)",
            a.a.display(),
            a.b.display()
        );
    }
    println!(
        "{} signals in both files compared up to time {} (cycle {})",
        d.shared.len(),
        d.end,
        d.end / 2
    );
    for (file, only) in [(&a.a, &d.only_a), (&a.b, &d.only_b)] {
        if !only.is_empty() {
            let more = only.len().saturating_sub(a.show);
            println!(
                "  {} signals only in {} (not compared): {}{}",
                only.len(),
                file.display(),
                only[..only.len().min(a.show)].join(", "),
                if more > 0 {
                    format!(", and {more} more")
                } else {
                    String::new()
                }
            );
        }
    }
    match &d.first {
        None => {
            println!("the waveforms agree at every time");
            Ok(Verdict::Pass)
        }
        Some((t, diffs)) => {
            println!(
                "first difference at time {t} (cycle {}{}), {} signals:",
                t / 2,
                if t % 2 == 1 { ", after its edge" } else { "" },
                diffs.len()
            );
            let w = diffs.iter().map(|x| x.signal.len()).max().unwrap_or(0);
            for x in diffs {
                println!("  {:<w$}  {} vs {}", x.signal, x.a, x.b);
            }
            Ok(Verdict::Fail)
        }
    }
}
