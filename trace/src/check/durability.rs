//! When each persist became durable (`docs/checker.md`, "Durability"), from
//! the record's `Flush` and `Durable` events alone.
//!
//! A store S (SM `s`, address `a`, performed at cycle `t`) is carried by
//! every flush of SM `s` holding `a` whose words were read from the L1 after
//! `t` (`read_cycle > t`): the first carries S's value or, if a later store
//! of the same SM overwrote `a` first, a newer one. A flush read in cycle
//! `t` itself carries S when it holds S's value: within a cycle the unit's
//! flushes read before the cycle's stores, epoch write-backs after them, and
//! the value tells which (equal values are the same durable state). S counts as durable at
//! the earliest durability among those flushes: from then on the durable
//! value of `a` is S's or one that supersedes it (coherence order within an
//! SM is the order the L1 took the stores). Stores of different SMs to one
//! address race (the L1s are not coherent) and are not compared. Lanes of
//! one store writing one address with different values race too: one value
//! lands, and a flush read in the store's cycle carries each of those lanes
//! when it holds any of their values.

use std::collections::HashMap;

use crate::record::{Event, Execution, OpRef};

/// "Never durable", as a cycle: later than any cycle.
pub const NEVER: u64 = u64::MAX;

/// Durability of the flushes of a record, looked up per (SM, address).
struct Lists {
    reads: Vec<u64>,
    suffix: Vec<u64>,
    flush: Vec<(u64, u64)>,
}

pub struct Durability {
    /// Per (SM, address): read cycles, ascending, the suffix minimum of
    /// the durable cycles of the flushes read at or after each, and each
    /// flush's (durable cycle, value).
    by_addr: HashMap<(u32, u64), Lists>,
    /// Per op and address its lanes wrote with different values: the values.
    racing: HashMap<(OpRef, u64), Vec<u64>>,
    /// Distinct cycles at which some flush became durable, ascending.
    pub points: Vec<u64>,
    pub flushes: usize,
}

impl Durability {
    pub fn new(exec: &Execution) -> Durability {
        let mut durable: HashMap<u64, u64> = HashMap::new();
        for e in &exec.events {
            if let Event::Durable { id, cycle } = e {
                let c = durable.entry(*id).or_insert(*cycle);
                *c = (*c).min(*cycle);
            }
        }
        // Per (SM, address): (read cycle, durable cycle, value) of each flush.
        type Flushes = Vec<(u64, u64, u64)>;
        let mut lists: HashMap<(u32, u64), Flushes> = HashMap::new();
        let mut flushes = 0;
        for e in &exec.events {
            if let Event::Flush {
                id,
                sm,
                cells,
                read_cycle,
                ..
            } = e
            {
                flushes += 1;
                let d = durable.get(id).copied().unwrap_or(NEVER);
                for c in cells {
                    lists
                        .entry((*sm, c.addr))
                        .or_default()
                        .push((*read_cycle, d, c.value));
                }
            }
        }
        let by_addr = lists
            .into_iter()
            .map(|(k, mut v)| {
                v.sort_by_key(|x| x.0);
                let reads: Vec<u64> = v.iter().map(|x| x.0).collect();
                let mut suffix = vec![NEVER; v.len()];
                let mut m = NEVER;
                for i in (0..v.len()).rev() {
                    m = m.min(v[i].1);
                    suffix[i] = m;
                }
                let flush = v.iter().map(|x| (x.1, x.2)).collect();
                (
                    k,
                    Lists {
                        reads,
                        suffix,
                        flush,
                    },
                )
            })
            .collect();
        let mut points: Vec<u64> = durable.values().copied().collect();
        points.sort_unstable();
        points.dedup();
        let mut lanes: HashMap<(OpRef, u64), Vec<u64>> = HashMap::new();
        for e in &exec.events {
            if let Event::Persist { op, cell, .. } = e {
                lanes.entry((*op, cell.addr)).or_default().push(cell.value);
            }
        }
        lanes.retain(|_, v| {
            v.sort_unstable();
            v.dedup();
            v.len() > 1
        });
        Durability {
            by_addr,
            racing: lanes,
            points,
            flushes,
        }
    }

    /// Cycle the lane of `op` (on SM `op.warp.sm`) storing `value` to
    /// `addr` at cycle `t` became durable, or [`NEVER`]: as `of_store`, with
    /// the values of the op's other lanes to `addr` counting as its own.
    pub fn of_persist(&self, op: &OpRef, addr: u64, value: u64, t: u64) -> u64 {
        let sm = op.warp.sm;
        match self.racing.get(&(*op, addr)) {
            None => self.of_store(sm, addr, value, t),
            Some(vs) => vs
                .iter()
                .map(|&v| self.of_store(sm, addr, v, t))
                .min()
                .unwrap_or(NEVER),
        }
    }

    /// Cycle a store of SM `sm` of `value` to `addr` performed at cycle
    /// `t` became durable, or [`NEVER`].
    pub fn of_store(&self, sm: u32, addr: u64, value: u64, t: u64) -> u64 {
        let Some(l) = self.by_addr.get(&(sm, addr)) else {
            return NEVER;
        };
        let i = l.reads.partition_point(|&r| r < t);
        let j = l.reads.partition_point(|&r| r <= t);
        let same_cycle = l.flush[i..j]
            .iter()
            .filter(|f| f.1 == value)
            .map(|f| f.0)
            .min()
            .unwrap_or(NEVER);
        l.suffix.get(j).copied().unwrap_or(NEVER).min(same_cycle)
    }
}
