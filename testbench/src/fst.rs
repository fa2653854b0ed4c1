//! FST copies of a run's waveforms (`sbrp cosim --vcd DIR --fst`): each
//! finished VCD (the RTL's ports, every RTL signal from Verilator's tracer,
//! the model's ports) is converted by GTKWave's `vcd2fst` into a temporary
//! beside it, read back whole by `fst2vcd` (a truncated or corrupt FST fails
//! there: `vcd2fst` itself does not report every failed write), then renamed
//! into place. A failed conversion leaves no FST behind.

use std::path::{Path, PathBuf};

use sbrp_tools::{LogFile, Tool};

use crate::error::{BenchError, Result};

const HINT: &str = "Debian package gtkwave (scripts/setup.sh installs it)";

/// GTKWave's converter (`SBRP_VCD2FST` overrides it, for tests).
fn vcd2fst() -> Tool {
    Tool::from_env("SBRP_VCD2FST", "vcd2fst", HINT)
}

fn fst2vcd() -> Tool {
    Tool::from_env("SBRP_FST2VCD", "fst2vcd", HINT)
}

/// The FST beside `vcd`: `X.vcd` gives `X.fst`.
pub fn fst_path(vcd: &Path) -> PathBuf {
    vcd.with_extension("fst")
}

/// Converts each of `vcds` into its FST; all or none: on an error every FST
/// written by this call is removed.
pub fn convert_all(vcds: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut done = vec![];
    for v in vcds {
        match convert(v) {
            Ok(f) => done.push(f),
            Err(e) => {
                for f in &done {
                    let _ = std::fs::remove_file(f);
                }
                return Err(e);
            }
        }
    }
    Ok(done)
}

fn convert(vcd: &Path) -> Result<PathBuf> {
    let out = fst_path(vcd);
    let part = out.with_extension("fst.part");
    let fail = |why: String| {
        let _ = std::fs::remove_file(&part);
        BenchError::Invalid(format!("cannot write waveform {}: {why}", out.display()))
    };
    let tool = |e: sbrp_tools::ToolError| fail(e.to_string());
    let t = vcd2fst();
    t.capture(t.command().arg(vcd).arg(&part), "vcd2fst", LogFile::None)
        .map_err(tool)?
        .check()
        .map_err(tool)?;
    let t = fst2vcd();
    t.capture(
        t.command().arg("-o").arg("/dev/null").arg(&part),
        "fst2vcd (reading the FST back)",
        LogFile::None,
    )
    .map_err(tool)?
    .check()
    .map_err(tool)?;
    std::fs::rename(&part, &out).map_err(|e| fail(e.to_string()))?;
    Ok(out)
}
