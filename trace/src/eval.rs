//! The expectation evaluator (`docs/trace-format.md`, "Expectations"): a pure
//! function of a trace's expectations and a recorded execution.

use std::collections::{HashMap, HashSet};
use std::fmt;

use crate::check::check_pmo;
use crate::durable::check_final_values;
use crate::expect::{Expect, Expectation};
use crate::record::{Event, Execution, RunEnd};
use crate::types::{Cell, WarpId};

/// An expectation that does not hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The trace line of the expectation (0 for one added by a program).
    pub line: usize,
    pub expect: Expect,
    /// What happened instead, for people.
    pub message: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

fn at(c: Option<&u64>) -> String {
    c.map(|c| format!("cycle {c}"))
        .unwrap_or_else(|| "never".into())
}

/// Facts of an execution the expectations are checked against.
#[derive(Default)]
struct Facts {
    warps: HashSet<WarpId>,
    stalls: HashMap<WarpId, Vec<(u64, Option<u64>)>>,
    first_flush: HashMap<u64, u64>,
    flush_count: HashMap<u64, u32>,
    durable_at: HashMap<Cell, u64>,
    last_load_hit: HashMap<(WarpId, u64), bool>,
}

impl Facts {
    fn of(exec: &Execution) -> Facts {
        let mut f = Facts {
            warps: exec.warps.iter().copied().collect(),
            ..Facts::default()
        };
        let mut cells_of: HashMap<u64, &Vec<Cell>> = HashMap::new();
        for e in &exec.events {
            match e {
                Event::Flush {
                    id,
                    line,
                    cells,
                    cycle,
                    ..
                } => {
                    f.first_flush.entry(*line).or_insert(*cycle);
                    *f.flush_count.entry(*line).or_insert(0) += 1;
                    cells_of.insert(*id, cells);
                }
                Event::Durable { id, cycle } => {
                    for c in cells_of.get(id).map(|c| c.iter()).into_iter().flatten() {
                        f.durable_at.entry(*c).or_insert(*cycle);
                    }
                }
                Event::StallBegin { warp, cycle } => {
                    f.stalls.entry(*warp).or_default().push((*cycle, None));
                }
                Event::StallEnd { warp, cycle } => {
                    if let Some(last) = f.stalls.entry(*warp).or_default().last_mut() {
                        last.1 = Some(*cycle);
                    }
                }
                Event::Load { op, addr, hit, .. } => {
                    f.last_load_hit.insert((op.warp, *addr), *hit);
                }
                _ => {}
            }
        }
        f
    }
}

/// Replays durability in cycle order; after each cycle in which durable
/// state changed, the first cycle at which `a` is durable while `b` is not.
fn watch_hits(exec: &Execution, pairs: &[(Cell, Cell)]) -> Vec<Option<u64>> {
    let mut hits = vec![None; pairs.len()];
    if pairs.is_empty() {
        return hits;
    }
    let mut cells_of: HashMap<u64, &Vec<Cell>> = HashMap::new();
    let mut durable: HashMap<u64, u64> = HashMap::new();
    let mut check = |durable: &HashMap<u64, u64>, cycle: u64| {
        for (i, (a, b)) in pairs.iter().enumerate() {
            if hits[i].is_none()
                && durable.get(&a.addr) == Some(&a.value)
                && durable.get(&b.addr) != Some(&b.value)
            {
                hits[i] = Some(cycle);
            }
        }
    };
    let mut pending: Option<u64> = None;
    for e in &exec.events {
        match e {
            Event::Flush { id, cells, .. } => {
                cells_of.insert(*id, cells);
            }
            Event::Durable { id, cycle } => {
                if let Some(p) = pending.filter(|p| p != cycle) {
                    check(&durable, p);
                }
                pending = Some(*cycle);
                for c in cells_of.get(id).map(|c| c.iter()).into_iter().flatten() {
                    durable.insert(c.addr, c.value);
                }
            }
            _ => {}
        }
    }
    if let Some(p) = pending {
        check(&durable, p);
    }
    hits
}

fn intervals(iv: &[(u64, Option<u64>)]) -> String {
    iv.iter()
        .map(|(b, e)| match e {
            Some(e) => format!("{b}-{e}"),
            None => format!("{b}-(still stalled)"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks `expects` against a recorded execution; one failure per
/// expectation that does not hold (`alldurable` may give several).
pub fn evaluate(expects: &[Expectation], exec: &Execution) -> Vec<Failure> {
    let facts = Facts::of(exec);
    let pairs: Vec<(Cell, Cell)> = expects
        .iter()
        .filter_map(|e| match e.what {
            Expect::Forbid(a, b) | Expect::Occurs(a, b) => Some((a, b)),
            _ => None,
        })
        .collect();
    let hits = watch_hits(exec, &pairs);
    let mut watch_i = 0;
    let mut fails = vec![];
    for e in expects {
        let mut fail = |message: String| {
            fails.push(Failure {
                line: e.line,
                expect: e.what.clone(),
                message,
            })
        };
        let known = |id: &WarpId| facts.warps.contains(id);
        let stalls = |id: &WarpId| facts.stalls.get(id).map(Vec::as_slice).unwrap_or(&[]);
        match &e.what {
            Expect::Stall(id) if !known(id) => fail(format!("no warp {id} in the trace")),
            Expect::Stall(id) => {
                if stalls(id).is_empty() {
                    fail(format!("warp {id} never stalled"));
                }
            }
            Expect::NoStall(id) if !known(id) => fail(format!("no warp {id} in the trace")),
            Expect::NoStall(id) => {
                if !stalls(id).is_empty() {
                    fail(format!(
                        "warp {id} stalled (cycles {})",
                        intervals(stalls(id))
                    ));
                }
            }
            Expect::Order(a, b) => {
                let x = facts.first_flush.get(&exec.line_of(*a));
                let y = facts.first_flush.get(&exec.line_of(*b));
                if !matches!((x, y), (Some(x), Some(y)) if x < y) {
                    fail(format!(
                        "first flush of {a:#x} at {}, of {b:#x} at {}: expected the first before the second",
                        at(x),
                        at(y)
                    ));
                }
            }
            Expect::Forbid(a, b) => {
                if let Some(c) = hits[watch_i] {
                    fail(format!(
                        "forbidden durable state at cycle {c}: {a} durable while {b} is not"
                    ));
                }
                watch_i += 1;
            }
            Expect::Occurs(a, b) => {
                if hits[watch_i].is_none() {
                    fail(format!(
                        "the state {a} durable while {b} is not never occurred"
                    ));
                }
                watch_i += 1;
            }
            Expect::Resume(id, cell, within) => {
                let d = facts.durable_at.get(cell);
                let last = stalls(id).iter().rev().find_map(|(_, e)| *e);
                let ok = matches!((last, d), (Some(end), Some(&d)) if end > d && end <= d + *within as u64);
                if !ok {
                    fail(format!(
                        "warp {id} last stall ended at {}, {cell} durable at {}: expected the stall to end within {within} cycles after",
                        at(last.as_ref()),
                        at(d)
                    ));
                }
            }
            Expect::LoadMiss(id, addr) => match facts.last_load_hit.get(&(*id, *addr)) {
                Some(false) => {}
                other => fail(format!(
                    "last PM load of {addr:#x} by {id}: expected a miss, got {}",
                    if other.is_some() { "a hit" } else { "no load" }
                )),
            },
            Expect::Flushes(a, n) => {
                let got = facts
                    .flush_count
                    .get(&exec.line_of(*a))
                    .copied()
                    .unwrap_or(0);
                if got != *n {
                    fail(format!("line of {a:#x} flushed {got} times, expected {n}"));
                }
            }
            Expect::MaxActr(n) => {
                let max = exec.actr_peak.iter().copied().max().unwrap_or(0);
                if max > *n {
                    fail(format!("ACTR reached {max}, expected at most {n}"));
                }
            }
            Expect::Early(a, cell) => {
                let f = facts.first_flush.get(&exec.line_of(*a));
                let d = facts.durable_at.get(cell);
                if !matches!((f, d), (Some(f), Some(d)) if f < d) {
                    fail(format!(
                        "first flush of {a:#x} at {}, {cell} durable at {}: expected the flush first",
                        at(f),
                        at(d)
                    ));
                }
            }
            Expect::Pmo => {
                for m in check_pmo(exec) {
                    fail(m);
                }
            }
            Expect::AllDurable => {
                if exec.end != RunEnd::Finished {
                    fail("the run did not finish".into());
                }
                for m in check_final_values(exec) {
                    fail(m);
                }
            }
        }
    }
    fails
}
