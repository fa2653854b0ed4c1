//! The `alldurable` rule (`docs/trace-format.md`, "Expectations"): the final
//! durable value of each address must be one no other store supersedes.
//!
//! Store S is superseded by S' (same address) when both are on one SM and S'
//! is later, or when S happens-before S': program order within a warp plus
//! release→acquire matches that order persists (both device scope, or both
//! warps on one SM), transitively, computed with vector clocks over warps.
//! L1s are not coherent, so racing stores of different SMs are all candidates.

use std::collections::{BTreeMap, HashMap};

use crate::record::{Event, Execution, OpRef, OrderingOp};
use crate::types::{Cell, Scope, WarpId};

struct Store {
    cell: Cell,
    sm: u32,
    cycle: u64,
    warp: usize,
    seq: u32,
    /// The warp's vector clock at the store.
    vc: Vec<u32>,
}

/// Whether a match orders persists: device scope on both sides, or one SM.
pub fn match_orders(acq: OpRef, acq_scope: Scope, rel: OpRef, rel_scope: Scope) -> bool {
    acq.warp.sm == rel.warp.sm || (acq_scope == Scope::Device && rel_scope == Scope::Device)
}

fn stores_with_clocks(exec: &Execution) -> Vec<Store> {
    let mut index: HashMap<WarpId, usize> = HashMap::new();
    for w in &exec.warps {
        let n = index.len();
        index.entry(*w).or_insert(n);
    }
    // Warps named only by events (a hand-written record) get a slot too.
    for e in &exec.events {
        if let Event::Persist { op, .. } | Event::Ordering { op, .. } = e {
            let n = index.len();
            index.entry(op.warp).or_insert(n);
        }
    }
    let n = index.len();
    let mut vc = vec![vec![0u32; n]; n];
    let mut rel_vc: HashMap<OpRef, Vec<u32>> = HashMap::new();
    let mut stores = vec![];
    for e in &exec.events {
        match e {
            Event::Persist { op, cell, cycle } => {
                let w = index[&op.warp];
                vc[w][w] = vc[w][w].max(op.seq + 1);
                stores.push(Store {
                    cell: *cell,
                    sm: op.warp.sm,
                    cycle: *cycle,
                    warp: w,
                    seq: op.seq,
                    vc: vc[w].clone(),
                });
            }
            Event::Ordering { op, kind, .. } => {
                let w = index[&op.warp];
                vc[w][w] = vc[w][w].max(op.seq + 1);
                if let OrderingOp::PRel(_) = kind {
                    rel_vc.insert(*op, vc[w].clone());
                }
            }
            Event::Match {
                acq,
                acq_scope,
                rel,
                rel_scope,
                ..
            } => {
                if !match_orders(*acq, *acq_scope, *rel, *rel_scope) {
                    continue;
                }
                if let (Some(r), Some(&a)) = (rel_vc.get(rel), index.get(&acq.warp)) {
                    for (x, y) in vc[a].iter_mut().zip(r) {
                        *x = (*x).max(*y);
                    }
                }
            }
            _ => {}
        }
    }
    stores
}

fn supersedes(later: &Store, s: &Store) -> bool {
    (later.sm == s.sm && later.cycle > s.cycle) || later.vc[s.warp] > s.seq
}

/// Failures of `alldurable` for a finished run, as messages.
pub fn check_final_values(exec: &Execution) -> Vec<String> {
    let stores = stores_with_clocks(exec);
    let mut by_addr: BTreeMap<u64, Vec<&Store>> = BTreeMap::new();
    for s in &stores {
        by_addr.entry(s.cell.addr).or_default().push(s);
    }
    // Final durable value of each address: the last durable flush holding it.
    let mut cells_of: HashMap<u64, &Vec<Cell>> = HashMap::new();
    let mut durable: HashMap<u64, u64> = HashMap::new();
    for e in &exec.events {
        match e {
            Event::Flush { id, cells, .. } => {
                cells_of.insert(*id, cells);
            }
            Event::Durable { id, .. } => {
                for c in cells_of.get(id).map(|c| c.iter()).into_iter().flatten() {
                    durable.insert(c.addr, c.value);
                }
            }
            _ => {}
        }
    }
    let mut missing = vec![];
    let mut stale = vec![];
    for (addr, ss) in &by_addr {
        let candidates: Vec<u64> = ss
            .iter()
            .filter(|s| {
                !ss.iter()
                    .any(|o| !std::ptr::eq(*o, **s) && supersedes(o, s))
            })
            .map(|s| s.cell.value)
            .collect();
        match durable.get(addr) {
            None => missing.push((*addr, candidates)),
            Some(v) if !candidates.contains(v) => stale.push((*addr, *v, candidates)),
            Some(_) => {}
        }
    }
    let list = |c: &[u64]| {
        c.iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(" or ")
    };
    let mut fails = vec![];
    if let Some((a, c)) = missing.first() {
        fails.push(format!(
            "{} stored addresses never became durable, first: {a:#x} (expected {})",
            missing.len(),
            list(c)
        ));
    }
    if let Some((a, v, c)) = stale.first() {
        fails.push(format!(
            "{} addresses end with a superseded durable value, first: {a:#x}={v}, expected {}",
            stale.len(),
            list(c)
        ));
    }
    fails
}
