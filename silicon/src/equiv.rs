//! Sequential equivalence of two Verilog designs of the unit (`sbrp_pb`),
//! NOT YET TRUSTED: on 2026-11-28 the miter below called a mutant that the
//! lockstep suites kill (a valid warp flagged as invalid) equivalent to the
//! original; `sbrp mutate` runs it only when asked (`--equiv-seconds`).
//! for classifying the survivors of the mutation campaign (`sbrp mutate`,
//! `docs/hardware.md` §5, "Mutation campaign"): Yosys builds a miter of
//! the two (every output compared in every cycle, both from the all-zero
//! state the simulations start from), yosys-abc's `dsec` proves the outputs
//! equal for every depth or finds a cycle where they differ.

use std::path::Path;
use std::time::Instant;

use sbrp_tools::{write_atomic, LogFile, ToolError};

use crate::error::Result;
use crate::prove::yosys_abc;
use crate::tools::{require, yosys};

/// How two designs compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Equivalence {
    /// Equal outputs in every cycle of every run (PDR proof).
    Equivalent,
    /// The outputs differ at this cycle for some input sequence.
    Differs(u32),
    /// PDR reached its time limit.
    Undecided,
}

/// Compares `gold` and `gate` (Verilog texts, top module `sbrp_pb` each)
/// in `dir`, PDR limited to `seconds`; also returns the seconds spent.
pub fn equivalence(gold: &str, gate: &str, seconds: u32, dir: &Path) -> Result<(Equivalence, f64)> {
    let (ys, abc) = (yosys(), yosys_abc());
    require(&ys, "-V")?;
    require(&abc, "-h")?;
    let mut script = String::new();
    for (name, text) in [("gold", gold), ("gate", gate)] {
        let f = dir.join(format!("{name}.v"));
        write_atomic(&f, text.as_bytes())?;
        script.push_str(&format!(
            "read_verilog {}\nhierarchy -top sbrp_pb\nproc\nflatten\nrename sbrp_pb {name}\ndesign -stash {name}\n",
            f.display()
        ));
    }
    let aig = dir.join("miter.aig");
    script.push_str(&format!(
        "design -copy-from gold -as gold gold\ndesign -copy-from gate -as gate gate\n\
         miter -equiv -flatten gold gate miter\nhierarchy -top miter\n\
         memory_map\nopt -fast\nasync2sync\ndffunmap\ntechmap\nsetundef -undriven -zero\n\
         setundef -init -zero\nopt_clean\naigmap\nwrite_aiger -zinit {}\n",
        aig.display()
    ));
    let ys_path = dir.join("miter.ys");
    write_atomic(&ys_path, script.as_bytes())?;
    let mut cmd = ys.command();
    cmd.arg("-q").arg("-s").arg(&ys_path);
    ys.run(&mut cmd, "yosys (equivalence miter)", LogFile::None)?;
    let t0 = Instant::now();
    let mut cmd = abc.command();
    cmd.arg("-c").arg(format!(
        "read_aiger {}; fold; pdr -T {seconds}",
        aig.display()
    ));
    let out = abc.capture(&mut cmd, "yosys-abc (equivalence)", LogFile::None)?;
    let secs = t0.elapsed().as_secs_f64();
    let ok = out.success();
    let text = out.text;
    let r = if text.contains("Networks are equivalent") {
        Equivalence::Equivalent
    } else if let Some(l) = text.lines().find(|l| l.contains("asserted in frame")) {
        let f = l
            .split("asserted in frame")
            .nth(1)
            .and_then(|s| {
                s.split(|c: char| !c.is_ascii_digit())
                    .find(|t| !t.is_empty())
            })
            .and_then(|t| t.parse().ok())
            .unwrap_or(0);
        Equivalence::Differs(f)
    } else if text.contains("timeout") || text.contains("UNDECIDED") || ok {
        Equivalence::Undecided
    } else {
        return Err(ToolError::Failed {
            tool: "yosys-abc (equivalence)".into(),
            status: out.status.to_string(),
            errors: sbrp_tools::error_lines(&text),
            log: None,
        }
        .into());
    };
    Ok((r, secs))
}
