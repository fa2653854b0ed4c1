//! Sequential equivalence of two Verilog designs of the unit (`sbrp_pb`),
//! for classifying the survivors of the mutation campaign (`sbrp mutate`,
//! `docs/hardware.md` §5, "Mutation campaign"). Yosys builds a miter of the
//! two (every output compared in every cycle) inside a wrapper that forces
//! `rst` in the first cycle, so both start from the reset state as every
//! simulation does; every register starts at 0 (as Verilator's do) before
//! any optimisation may assume otherwise. yosys-abc's `dprove` (signal
//! correspondence, induction, BMC) proves the outputs equal for every
//! depth or finds a cycle where they differ.
//!
//! The first version (2026-11-28) ran `dsec`, which reads a single-output
//! miter as having no output pairs and called a mutant killed by every
//! suite equivalent; and it let `opt` drop registers whose initial value
//! was still undefined. Test `equivalence_knows_a_killed_mutant` keeps the
//! negative control (that mutant differs) and the positive one.

use std::path::Path;
use std::time::Instant;

use sbrp_tools::{write_atomic, LogFile, ToolError};

use crate::error::{Result, SiliconError};
use crate::prove::{asserted_frame, yosys_abc};
use crate::tools::{require, yosys};

/// How two designs compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Equivalence {
    /// Equal outputs in every cycle after the reset, for every input sequence.
    Equivalent,
    /// The outputs differ at this cycle (0: the forced reset) for some input sequence.
    Differs(u32),
    /// `dprove` reached its time limit.
    Undecided,
}

/// The input ports of module `sbrp_pb` in `verilog`: (name, width).
fn input_ports(verilog: &str) -> Vec<(String, u32)> {
    let body = verilog
        .split("module sbrp_pb(")
        .nth(1)
        .and_then(|s| s.split("endmodule").next())
        .unwrap_or("");
    let mut out = vec![];
    for l in body.lines() {
        let Some(rest) = l.trim().strip_prefix("input wire") else {
            continue;
        };
        let rest = rest.trim().trim_end_matches(';').trim();
        let (width, name) = match rest.strip_prefix('[') {
            Some(r) => {
                let (range, name) = r.split_once(']').unwrap_or(("0:0", r));
                let hi: u32 = range.split(':').next().unwrap_or("0").parse().unwrap_or(0);
                (hi + 1, name.trim())
            }
            None => (1, rest),
        };
        out.push((name.to_string(), width));
    }
    out
}

/// The wrapper: `rst` forced in the first cycle, outputs compared after it.
fn wrapper(ports: &[(String, u32)]) -> String {
    let mut decl = String::new();
    let mut conn = String::new();
    for (name, w) in ports {
        let range = if *w > 1 {
            format!("[{}:0] ", w - 1)
        } else {
            String::new()
        };
        decl.push_str(&format!("  input {range}{name};\n"));
        let sig = if name == "rst" {
            "rst | ~started".to_string()
        } else {
            name.clone()
        };
        conn.push_str(&format!(".in_{name}({sig}), "));
    }
    let names: Vec<&str> = ports.iter().map(|(n, _)| n.as_str()).collect();
    format!(
        "module eqtop({}, bad);\n{decl}  output bad;\n  reg started = 1'b0;\n  \
         always @(posedge clock) started <= 1'b1;\n  wire trigger;\n  \
         miter m({conn}.trigger(trigger));\n  assign bad = started & trigger;\nendmodule\n",
        names.join(", ")
    )
}

/// Compares `gold` and `gate` (Verilog texts, top module `sbrp_pb` each)
/// in `dir`, `dprove` limited to `seconds`; also returns the seconds spent.
pub fn equivalence(gold: &str, gate: &str, seconds: u32, dir: &Path) -> Result<(Equivalence, f64)> {
    let (ys, abc) = (yosys(), yosys_abc());
    require(&ys, "-V")?;
    require(&abc, "-h")?;
    let ports = input_ports(gold);
    if !ports.iter().any(|(n, _)| n == "clock") || !ports.iter().any(|(n, _)| n == "rst") {
        return Err(SiliconError::Output(
            "equivalence: module sbrp_pb with inputs clock and rst not found".into(),
        ));
    }
    let mut script = String::new();
    for (name, text) in [("gold", gold), ("gate", gate)] {
        let f = dir.join(format!("{name}.v"));
        write_atomic(&f, text.as_bytes())?;
        script.push_str(&format!(
            "read_verilog {}\nhierarchy -top sbrp_pb\nproc\nflatten\nrename sbrp_pb {name}\ndesign -stash {name}\n",
            f.display()
        ));
    }
    let top = dir.join("eqtop.v");
    write_atomic(&top, wrapper(&ports).as_bytes())?;
    let aig = dir.join("miter.aig");
    // `setundef -init -zero` before `opt`: a register with a constant next
    // value and no initial value would otherwise become that constant.
    script.push_str(&format!(
        "design -copy-from gold -as gold gold\ndesign -copy-from gate -as gate gate\n\
         miter -equiv -flatten gold gate miter\nread_verilog {}\nhierarchy -top eqtop\n\
         proc\nflatten\nmemory_map\nsetundef -init -zero\nopt -fast\nasync2sync\ndffunmap\n\
         techmap\nsetundef -undriven -zero\nopt_clean\naigmap\nwrite_aiger -zinit {}\n",
        top.display(),
        aig.display()
    ));
    let ys_path = dir.join("miter.ys");
    write_atomic(&ys_path, script.as_bytes())?;
    let mut cmd = ys.command();
    cmd.arg("-q").arg("-s").arg(&ys_path);
    ys.run(&mut cmd, "yosys (equivalence miter)", LogFile::None)?;
    let t0 = Instant::now();
    let mut cmd = abc.command();
    cmd.arg("-c")
        .arg(format!("read_aiger {}; dprove -T {seconds}", aig.display()));
    let out = abc.capture(&mut cmd, "yosys-abc (equivalence)", LogFile::None)?;
    let secs = t0.elapsed().as_secs_f64();
    let ok = out.success();
    let text = out.text;
    let r = if let Some(f) = asserted_frame(&text) {
        Equivalence::Differs(f)
    } else if text.contains("Networks are equivalent") {
        Equivalence::Equivalent
    } else if ok {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wrapper_forces_reset_and_connects_every_input() {
        let v =
            "module sbrp_pb(clock,rst,a,b);\n    input wire  clock;\n    input wire  rst;\n    \
                 input wire  [3:0] a;\n    input wire  b;\n    output reg  q;\nendmodule\n";
        let p = input_ports(v);
        assert_eq!(
            p,
            [
                ("clock".into(), 1),
                ("rst".into(), 1),
                ("a".into(), 4),
                ("b".into(), 1)
            ]
        );
        let w = wrapper(&p);
        assert!(w.contains(".in_rst(rst | ~started)"), "{w}");
        assert!(
            w.contains("input [3:0] a;") && w.contains(".in_b(b)"),
            "{w}"
        );
    }
}
