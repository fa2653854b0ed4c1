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

use rustc_hash::FxHashMap;

use crate::record::{Event, Execution, OpRef};

/// "Never durable", as a cycle: later than any cycle.
pub const NEVER: u64 = u64::MAX;

/// Durability of the flushes of a record, looked up per (SM, address).
/// Flat arrays indexed by ranges (one allocation each, not three per
/// address: records hold millions of addresses).
pub struct Durability {
    /// Per (SM, address): its flushes' range in the arrays below.
    index: FxHashMap<(u32, u64), (u32, u32)>,
    /// Per flush cell, grouped by (SM, address), read cycles ascending in
    /// each group: the read cycle, the suffix minimum of the durable cycles
    /// of the group's flushes read at or after it, and the flush's
    /// (durable cycle, value).
    reads: Vec<u64>,
    suffix: Vec<u64>,
    flush: Vec<(u64, u64)>,
    /// Per op and address its lanes wrote with different values: the values.
    racing: FxHashMap<(OpRef, u64), Vec<u64>>,
    /// Distinct cycles at which some flush became durable, ascending.
    pub points: Vec<u64>,
    pub flushes: usize,
}

impl Durability {
    pub fn new(exec: &Execution) -> Durability {
        let mut durable: FxHashMap<u64, u64> = FxHashMap::default();
        for e in &exec.events {
            if let Event::Durable { id, cycle } = e {
                let c = durable.entry(*id).or_insert(*cycle);
                *c = (*c).min(*cycle);
            }
        }
        // (SM, address, read cycle, durable cycle, value) of each cell.
        let mut cells: Vec<(u32, u64, u64, u64, u64)> = vec![];
        let mut flushes = 0;
        for e in &exec.events {
            if let Event::Flush {
                id,
                sm,
                cells: cs,
                read_cycle,
                ..
            } = e
            {
                flushes += 1;
                let d = durable.get(id).copied().unwrap_or(NEVER);
                cells.extend(cs.iter().map(|c| (*sm, c.addr, *read_cycle, d, c.value)));
            }
        }
        // Within a group only the read cycles' order matters: equal reads
        // enter a minimum together.
        cells.sort_unstable_by_key(|c| (c.0, c.1, c.2));
        let n = cells.len();
        let mut index = FxHashMap::default();
        let mut suffix = vec![NEVER; n];
        let mut start = 0;
        while start < n {
            let key = (cells[start].0, cells[start].1);
            let mut end = start;
            while end < n && (cells[end].0, cells[end].1) == key {
                end += 1;
            }
            let mut m = NEVER;
            for i in (start..end).rev() {
                m = m.min(cells[i].3);
                suffix[i] = m;
            }
            index.insert(key, (start as u32, end as u32));
            start = end;
        }
        let reads = cells.iter().map(|c| c.2).collect();
        let flush = cells.iter().map(|c| (c.3, c.4)).collect();
        let mut points: Vec<u64> = durable.values().copied().collect();
        points.sort_unstable();
        points.dedup();
        // The first value each (op, address) wrote; a second, different
        // one makes the pair racing.
        let mut first: FxHashMap<(OpRef, u64), u64> = FxHashMap::default();
        let mut racing: FxHashMap<(OpRef, u64), Vec<u64>> = FxHashMap::default();
        for e in &exec.events {
            if let Event::Persist { op, cell, .. } = e {
                let k = (*op, cell.addr);
                let v0 = *first.entry(k).or_insert(cell.value);
                if v0 != cell.value {
                    racing.entry(k).or_insert_with(|| vec![v0]).push(cell.value);
                }
            }
        }
        for v in racing.values_mut() {
            v.sort_unstable();
            v.dedup();
        }
        Durability {
            index,
            reads,
            suffix,
            flush,
            racing,
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
        let Some(&(s, e)) = self.index.get(&(sm, addr)) else {
            return NEVER;
        };
        let (s, e) = (s as usize, e as usize);
        let reads = &self.reads[s..e];
        let i = s + reads.partition_point(|&r| r < t);
        let j = s + reads.partition_point(|&r| r <= t);
        let same_cycle = self.flush[i..j]
            .iter()
            .filter(|f| f.1 == value)
            .map(|f| f.0)
            .min()
            .unwrap_or(NEVER);
        let later = if j < e { self.suffix[j] } else { NEVER };
        later.min(same_cycle)
    }
}
