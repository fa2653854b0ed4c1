//! The inductive step of k-induction decided by CaDiCaL (docs/hardware.md
//! §5 "Unbounded"): the binary AIGER model that `constraints/formal/prove.ys`
//! writes (`write_aiger -zinit`: latches, bad states, invariant constraints)
//! unrolled over k frames from a free state into DIMACS CNF, with the
//! constraints in every frame, every bad state false in the first k - 1
//! frames and one true in the last. Unsatisfiable: no state sequence keeps
//! the property k - 1 cycles and breaks it in the next, so with the base
//! case (BMC to k from reset) it holds at every depth. This is the query of
//! yosys-abc's `ind -F k` (without its uniqueness constraints), handed to a
//! modern solver: the same step that took yosys-abc 1,915 s at 16 entries
//! takes CaDiCaL about 45 s.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use crate::error::{Result, SiliconError};

/// An And-Inverter Graph with latches, as binary AIGER 1.9 holds it.
/// Literals are AIGER's: variable * 2, + 1 when inverted; 0 is false.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Aiger {
    /// Largest variable index.
    pub max_var: u32,
    /// Primary inputs (variables 1..=inputs).
    pub inputs: u32,
    /// Next-state literal of each latch (latch i is variable inputs + 1 + i).
    pub latches: Vec<u32>,
    /// Plain outputs (read as bad states when the file has no `B` section).
    pub outputs: Vec<u32>,
    /// Bad-state literals (the assertions' negation).
    pub bads: Vec<u32>,
    /// Invariant constraints (the assumptions), true in every cycle.
    pub constraints: Vec<u32>,
    /// AND gates: (lhs, rhs0, rhs1); gate i's lhs is 2 * (inputs + latches + 1 + i).
    pub ands: Vec<(u32, u32, u32)>,
}

fn bad(path: &Path, what: impl std::fmt::Display) -> SiliconError {
    SiliconError::Output(format!("AIGER model {}: {what}", path.display()))
}

impl Aiger {
    /// Parses binary AIGER (`aig M I L O A [B C J F]`); `path` names the
    /// file in errors. Justice and fairness sections are refused (no
    /// liveness here).
    pub fn parse(bytes: &[u8], path: &Path) -> Result<Aiger> {
        let mut pos = 0usize;
        let line = |pos: &mut usize| -> Result<&[u8]> {
            let rest = &bytes[*pos..];
            let n = rest
                .iter()
                .position(|&b| b == b'\n')
                .ok_or_else(|| bad(path, "truncated before the AND gates"))?;
            *pos += n + 1;
            Ok(&rest[..n])
        };
        let header = std::str::from_utf8(line(&mut pos)?).map_err(|_| bad(path, "header"))?;
        let mut words = header.split_whitespace();
        if words.next() != Some("aig") {
            return Err(bad(path, format!("not binary AIGER (header {header:?})")));
        }
        let nums: Vec<u32> = words
            .map(|w| w.parse())
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| bad(path, format!("header {header:?}")))?;
        if nums.len() < 5 {
            return Err(bad(path, format!("header {header:?}: fewer than 5 counts")));
        }
        let n = |i: usize| nums.get(i).copied().unwrap_or(0);
        let (max_var, inputs, nl, no, na) = (n(0), n(1), n(2), n(3), n(4));
        let (nb, nc, nj, nf) = (n(5), n(6), n(7), n(8));
        if nj != 0 || nf != 0 {
            return Err(bad(path, "justice or fairness properties (not supported)"));
        }
        if u64::from(inputs) + u64::from(nl) + u64::from(na) != u64::from(max_var) {
            return Err(bad(path, format!("header {header:?}: M != I + L + A")));
        }
        let lits = |count: u32, first_word_only: bool, pos: &mut usize| -> Result<Vec<u32>> {
            (0..count)
                .map(|_| {
                    let l = std::str::from_utf8(line(pos)?).map_err(|_| bad(path, "literal"))?;
                    let w = if first_word_only {
                        l.split_whitespace().next().unwrap_or("")
                    } else {
                        l.trim()
                    };
                    let v: u32 = w.parse().map_err(|_| bad(path, format!("literal {l:?}")))?;
                    if v / 2 > max_var {
                        return Err(bad(path, format!("literal {v} beyond M = {max_var}")));
                    }
                    Ok(v)
                })
                .collect()
        };
        // a latch line is "next [reset]"; -zinit makes every reset 0
        let latches = lits(nl, true, &mut pos)?;
        let outputs = lits(no, false, &mut pos)?;
        let bads = lits(nb, false, &mut pos)?;
        let constraints = lits(nc, false, &mut pos)?;
        let mut ands = Vec::with_capacity(na as usize);
        let varint = |pos: &mut usize| -> Result<u32> {
            let (mut x, mut shift) = (0u64, 0);
            loop {
                let b = *bytes
                    .get(*pos)
                    .ok_or_else(|| bad(path, "truncated in the AND gates"))?;
                *pos += 1;
                x |= u64::from(b & 0x7f) << shift;
                if b & 0x80 == 0 {
                    return u32::try_from(x).map_err(|_| bad(path, "AND gate delta"));
                }
                shift += 7;
                if shift > 35 {
                    return Err(bad(path, "AND gate delta too long"));
                }
            }
        };
        for i in 0..na {
            let lhs = 2 * (inputs + nl + 1 + i);
            let d0 = varint(&mut pos)?;
            let d1 = varint(&mut pos)?;
            let r0 = lhs
                .checked_sub(d0)
                .ok_or_else(|| bad(path, format!("AND gate {i}: delta beyond its output")))?;
            let r1 = r0
                .checked_sub(d1)
                .ok_or_else(|| bad(path, format!("AND gate {i}: delta beyond its input")))?;
            ands.push((lhs, r0, r1));
        }
        Ok(Aiger {
            max_var,
            inputs,
            latches,
            outputs,
            bads,
            constraints,
            ands,
        })
    }

    /// The properties: the bad states, else the outputs.
    fn properties(&self) -> &[u32] {
        if self.bads.is_empty() {
            &self.outputs
        } else {
            &self.bads
        }
    }

    /// The inductive step over `frames` frames (k of `ind -F k`) as DIMACS:
    /// frame 0's latches free, frame f's latches equal to frame f-1's next
    /// states, constraints in every frame, every property false in frames
    /// 0..frames-1 and one true in the last. Returns (variables, clauses).
    pub fn write_step_cnf(
        &self,
        frames: u32,
        out: &mut impl std::io::Write,
    ) -> std::io::Result<(u64, u64)> {
        assert!(frames >= 1);
        let m = u64::from(self.max_var);
        let fr = u64::from(frames);
        let konst = fr * m + 1; // the variable of literal 0, forced false
        let props = self.properties();
        let clauses = 1
            + fr * 3 * self.ands.len() as u64
            + (fr - 1) * 2 * self.latches.len() as u64
            + fr * self.constraints.len() as u64
            + (fr - 1) * props.len() as u64
            + 1;
        let lit = |f: u64, l: u32| -> i64 {
            let v = u64::from(l >> 1);
            let x = if v == 0 { konst } else { f * m + v } as i64;
            if l & 1 == 1 {
                -x
            } else {
                x
            }
        };
        let mut w = std::io::BufWriter::with_capacity(1 << 20, out);
        let mut s = String::with_capacity(64);
        let mut clause = |w: &mut std::io::BufWriter<_>, c: &[i64]| -> std::io::Result<()> {
            s.clear();
            for x in c {
                let _ = write!(s, "{x} ");
            }
            s.push_str("0\n");
            w.write_all(s.as_bytes())
        };
        writeln!(w, "p cnf {konst} {clauses}")?;
        clause(&mut w, &[-(konst as i64)])?;
        for f in 0..fr {
            for &(o, a, b) in &self.ands {
                let (o, a, b) = (lit(f, o), lit(f, a), lit(f, b));
                clause(&mut w, &[-o, a])?;
                clause(&mut w, &[-o, b])?;
                clause(&mut w, &[o, -a, -b])?;
            }
            if f > 0 {
                for (i, &next) in self.latches.iter().enumerate() {
                    let q = (f * m + u64::from(self.inputs) + 1 + i as u64) as i64;
                    let d = lit(f - 1, next);
                    clause(&mut w, &[-q, d])?;
                    clause(&mut w, &[q, -d])?;
                }
            }
            for &c in &self.constraints {
                clause(&mut w, &[lit(f, c)])?;
            }
            if f + 1 < fr {
                for &p in props {
                    clause(&mut w, &[-lit(f, p)])?;
                }
            } else {
                let any: Vec<i64> = props.iter().map(|&p| lit(f, p)).collect();
                clause(&mut w, &any)?;
            }
        }
        w.flush()?;
        Ok((konst, clauses))
    }
}

/// Which solver decides the inductive step of `sbrp prove --unbounded`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StepSolver {
    /// CaDiCaL on [`Aiger::write_step_cnf`]'s CNF.
    #[default]
    Cadical,
    /// yosys-abc's `ind -F k` on the folded model (the earlier engine).
    Abc,
}

impl std::fmt::Display for StepSolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StepSolver::Cadical => "cadical",
            StepSolver::Abc => "abc",
        })
    }
}

impl std::str::FromStr for StepSolver {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "cadical" => Ok(StepSolver::Cadical),
            "abc" => Ok(StepSolver::Abc),
            _ => Err(format!("step solver: `{s}` is not one of cadical, abc")),
        }
    }
}

/// The step line's words for a counterexample to induction.
pub(crate) const CTI: &str = "SATISFIABLE: a counterexample to induction";

/// How the step ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepOutcome {
    /// Unsatisfiable: the property is k-inductive.
    Inductive,
    /// Satisfiable: a counterexample to induction.
    Counterexample,
    /// The time limit came first.
    TimeLimit,
}

/// The step of `aig` over `frames` frames, decided by `solver` (CaDiCaL)
/// within `seconds`; the CNF is written beside the model and removed after.
/// Returns the outcome and a line that tells it (for the run's summary).
pub(crate) fn solve_step(
    solver: &sbrp_tools::Tool,
    aig: &Path,
    frames: u32,
    seconds: u32,
) -> Result<(StepOutcome, String)> {
    let bytes = std::fs::read(aig).map_err(|e| bad(aig, e))?;
    let model = Aiger::parse(&bytes, aig)?;
    if model.properties().is_empty() {
        return Err(bad(aig, "no property (no bad state and no output)"));
    }
    let cnf = aig.with_extension("step.cnf");
    let (vars, clauses) = std::fs::File::create(&cnf)
        .and_then(|mut f| model.write_step_cnf(frames, &mut f))
        .map_err(|e| bad(&cnf, e))?;
    let mut cmd = solver.command();
    cmd.arg("-q")
        .arg("-n")
        .arg("-t")
        .arg(seconds.to_string())
        .arg(&cnf);
    let label = format!("cadical on the step of {}", aig.display());
    let out = solver.capture(&mut cmd, &label, sbrp_tools::LogFile::None);
    let _ = std::fs::remove_file(&cnf);
    let out = out?;
    let code = out.status.code();
    let outcome = match code {
        Some(20) if out.text.contains("s UNSATISFIABLE") => StepOutcome::Inductive,
        Some(10) if out.text.contains("s SATISFIABLE") => StepOutcome::Counterexample,
        Some(0) if out.text.contains("UNKNOWN") => StepOutcome::TimeLimit,
        _ => {
            return Err(sbrp_tools::ToolError::Failed {
                tool: label,
                status: out.status.to_string(),
                errors: sbrp_tools::error_lines(&out.text),
                log: None,
            }
            .into())
        }
    };
    let line = format!(
        "Inductive step (CaDiCaL, {frames} frames, {vars} variables, {clauses} clauses): {}",
        match outcome {
            StepOutcome::Inductive => "UNSATISFIABLE: inductive".to_string(),
            StepOutcome::Counterexample => CTI.to_string(),
            StepOutcome::TimeLimit => format!("UNKNOWN: the {seconds} s limit reached"),
        }
    );
    Ok((outcome, line))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A binary AIGER file from its header and sections (the AND gates
    /// delta-encoded as the format says).
    fn aig(header: &str, lines: &[&str], ands: &[(u32, u32, u32)]) -> Vec<u8> {
        let mut b = format!("{header}\n").into_bytes();
        for l in lines {
            b.extend_from_slice(l.as_bytes());
            b.push(b'\n');
        }
        for &(o, a, c) in ands {
            for mut d in [o - a, a - c] {
                loop {
                    let byte = (d & 0x7f) as u8;
                    d >>= 7;
                    if d == 0 {
                        b.push(byte);
                        break;
                    }
                    b.push(byte | 0x80);
                }
            }
        }
        b
    }

    /// Tiny SAT: does the CNF have a model? (brute force, few variables)
    fn satisfiable(cnf: &str) -> bool {
        let mut lines = cnf.lines();
        let hdr: Vec<u64> = lines.next().unwrap()[6..]
            .split_whitespace()
            .map(|w| w.parse().unwrap())
            .collect();
        let clauses: Vec<Vec<i64>> = lines
            .map(|l| {
                l.split_whitespace()
                    .map(|w| w.parse().unwrap())
                    .filter(|&x: &i64| x != 0)
                    .collect()
            })
            .collect();
        assert_eq!(clauses.len() as u64, hdr[1], "clause count in the header");
        let n = hdr[0];
        assert!(n <= 20);
        (0..1u64 << n).any(|m| {
            clauses.iter().all(|c| {
                c.iter().any(|&x| {
                    let v = (x.unsigned_abs() - 1) as u32;
                    ((m >> v) & 1 == 1) == (x > 0)
                })
            })
        })
    }

    fn step(model: &[u8], frames: u32) -> bool {
        let a = Aiger::parse(model, Path::new("t.aig")).unwrap();
        let mut v = Vec::new();
        a.write_step_cnf(frames, &mut v).unwrap();
        satisfiable(&String::from_utf8(v).unwrap())
    }

    /// A two-latch shift register fed 0 (x' = 0, y' = x), bad when y is set:
    /// not 1-inductive (x set, y clear, then y set) but 2-inductive.
    #[test]
    fn the_step_needs_the_frames_the_property_needs() {
        // M=2 I=0 L=2 O=0 A=0 B=1: latch x (var 1) next 0, y (var 2) next x
        let m = aig("aig 2 0 2 0 0 1", &["0", "2", "4"], &[]);
        assert!(step(&m, 2), "1-step induction has a counterexample");
        assert!(!step(&m, 3), "2-step induction proves it");
    }

    /// A constraint prunes the step: with input i (var 1) assumed 0 and a
    /// latch x' = i, bad when x is set: inductive; without the constraint not.
    #[test]
    fn constraints_hold_in_every_frame() {
        // M=2 I=1 L=1: x (var 2) next i (lit 2); bad x (lit 4); constraint !i (lit 3)
        let with = aig("aig 2 1 1 0 0 1 1", &["2", "4", "3"], &[]);
        let without = aig("aig 2 1 1 0 0 1", &["2", "4"], &[]);
        assert!(!step(&with, 2));
        assert!(step(&without, 2));
    }

    /// AND gates decode from their deltas, and their clauses are Tseitin's:
    /// bad = i & j (gate var 4) is satisfiable in one frame, and not with
    /// the constraint !i.
    #[test]
    fn and_gates_decode_and_encode() {
        // M=4 I=2 L=1 A=1: i=1, j=2, x=3, gate 4 = i & j (lit 8 = 4 & 2)
        let m = aig("aig 4 2 1 0 1 1", &["8", "8"], &[(8, 4, 2)]);
        let a = Aiger::parse(&m, Path::new("t.aig")).unwrap();
        assert_eq!(a.ands, vec![(8, 4, 2)]);
        assert_eq!(a.latches, vec![8]);
        assert!(step(&m, 1));
        // constraint !i (lit 3): the gate can never be 1
        let c = aig("aig 4 2 1 0 1 1 1", &["8", "8", "3"], &[(8, 4, 2)]);
        assert!(!step(&c, 1));
    }

    /// Malformed files are errors naming the file and what is wrong.
    #[test]
    fn malformed_models_are_named_errors() {
        let p = Path::new("m.aig");
        for (bytes, needle) in [
            (b"aag 1 1 0 0 0\n".to_vec(), "not binary AIGER"),
            (b"aig 3 1 1 0 0 1\n2\n".to_vec(), "M != I + L + A"),
            (b"aig 1 1 0 0 0 0 0 1\n".to_vec(), "justice"),
            (b"aig 2 1 1 0 0 1\n9\n4\n".to_vec(), "beyond M"),
            (
                b"aig 3 1 1 0 1 1\n2\n4\n".to_vec(),
                "truncated in the AND gates",
            ),
            (b"aig 2 1 1 0 0 1\n2\n".to_vec(), "truncated before"),
        ] {
            let e = Aiger::parse(&bytes, p).unwrap_err().to_string();
            assert!(e.contains("m.aig") && e.contains(needle), "{needle}: {e}");
        }
    }

    #[test]
    fn step_solver_names_parse() {
        assert_eq!("abc".parse(), Ok(StepSolver::Abc));
        assert_eq!("cadical".parse(), Ok(StepSolver::Cadical));
        assert!("z3"
            .parse::<StepSolver>()
            .unwrap_err()
            .contains("cadical, abc"));
        assert_eq!(StepSolver::default(), StepSolver::Cadical);
    }
}
