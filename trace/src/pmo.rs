//! The `pmo` expectation (`docs/trace-format.md`, "Expectations"): per-warp
//! persist memory order, checked from durability in the execution record.
//!
//! SBRP (ASPLOS 2023 §4) orders a warp's persists across each of its ordering
//! operations: oFence, dFence, pRel and pAcq, either scope. Definition:
//!
//! - A store S (a `Persist` event on SM `s`, address `a`, cycle `t`) is
//!   *carried* by the first flush of SM `s` holding address `a` whose words
//!   were read from the L1 after `t` (`read_cycle > t`; a flush reads the
//!   line before that cycle's store responses write it). If a later store
//!   of the same SM overwrote `a` first, that flush carries the newer value
//!   and S with it: S's write is then moot, never lost.
//! - `durable(S)` is the cycle that flush became durable; never, if there is
//!   no such flush or it never did.
//! - For every warp, every ordering op O it had accepted (an `Ordering`
//!   event), every store S1 before O and S2 after O in program order:
//!   `durable(S2)` is not earlier than `durable(S1)` (S2 never durable, or S1
//!   durable no later). Same address is covered by the first rule; stores of
//!   one line at different addresses are separate flushes kept in order by
//!   the L1 path (`docs/microarch.md` §2, interface requirement 4), so they
//!   are checked like any other pair.
//!
//! The check is linear per warp: walking its ops in program order, every
//! store is compared with the latest durability among the stores before
//! its warp's last ordering op.

use std::collections::{BTreeMap, HashMap};

use crate::record::{Event, Execution, OpRef};
use crate::types::{Cell, WarpId};

/// One store with the cycle it became durable, if it did.
struct Store {
    op: OpRef,
    cell: Cell,
    durable: Option<u64>,
}

/// Cycle each flush became durable.
fn durable_cycles(exec: &Execution) -> HashMap<u64, u64> {
    let mut d = HashMap::new();
    for e in &exec.events {
        if let Event::Durable { id, cycle } = e {
            d.entry(*id).or_insert(*cycle);
        }
    }
    d
}

/// Failures of `pmo`, one message per warp that breaks it (its first pair).
pub fn check_pmo(exec: &Execution) -> Vec<String> {
    let durable_of = durable_cycles(exec);
    // Per (SM, address): (read cycle, flush id) of every flush holding it, in
    // record order (flushes are recorded in take order; read cycles of
    // eviction flushes precede their take, never a later flush's read).
    let mut flushes: HashMap<(u32, u64), Vec<(u64, u64)>> = HashMap::new();
    for e in &exec.events {
        if let Event::Flush {
            id,
            sm,
            cells,
            read_cycle,
            ..
        } = e
        {
            for c in cells {
                flushes
                    .entry((*sm, c.addr))
                    .or_default()
                    .push((*read_cycle, *id));
            }
        }
    }
    let carried = |sm: u32, addr: u64, t: u64| -> Option<u64> {
        let fl = flushes.get(&(sm, addr))?;
        // First flush read after t (read cycles are nondecreasing per address).
        let i = fl.partition_point(|&(r, _)| r <= t);
        fl.get(i).and_then(|(_, id)| durable_of.get(id).copied())
    };
    // Per warp, in program order: stores and ordering ops.
    enum Item {
        Store(Store),
        Order,
    }
    let mut per_warp: BTreeMap<WarpId, BTreeMap<u32, Item>> = BTreeMap::new();
    for e in &exec.events {
        match e {
            Event::Persist { op, cell, cycle } => {
                let durable = carried(op.warp.sm, cell.addr, *cycle);
                per_warp.entry(op.warp).or_default().insert(
                    op.seq,
                    Item::Store(Store {
                        op: *op,
                        cell: *cell,
                        durable,
                    }),
                );
            }
            Event::Ordering { op, .. } => {
                per_warp
                    .entry(op.warp)
                    .or_default()
                    .insert(op.seq, Item::Order);
            }
            _ => {}
        }
    }
    let at = |d: Option<u64>| d.map_or("never".to_string(), |c| format!("cycle {c}"));
    let mut fails = vec![];
    for (warp, items) in &per_warp {
        // Latest durability so far (None = some store never durable), and
        // the store that has it; the same at the last ordering op.
        let mut latest: Option<(Option<u64>, &Store)> = None;
        let mut gate: Option<(Option<u64>, &Store)> = None;
        for item in items.values() {
            match item {
                Item::Order => gate = latest,
                Item::Store(s) => {
                    if let (Some((g, s1)), Some(d2)) = (gate, s.durable) {
                        if g.is_none_or(|g| d2 < g) {
                            fails.push(format!(
                                "warp {warp}: op {} {} durable at cycle {d2}, before op {} {} (durable {}) which precedes an ordering op of the warp",
                                s.op.seq,
                                s.cell,
                                s1.op.seq,
                                s1.cell,
                                at(g)
                            ));
                            break;
                        }
                    }
                    let later = match latest {
                        None => true,
                        Some((None, _)) => false,
                        Some((Some(l), _)) => s.durable.is_none_or(|d| d > l),
                    };
                    if later {
                        latest = Some((s.durable, s));
                    }
                }
            }
        }
    }
    fails
}
