//! When each persist became durable (`docs/checker.md`, "Durability"), from
//! the record's `Flush` and `Durable` events alone.
//!
//! A store S (SM `s`, address `a`, performed at cycle `t`) is carried by
//! every flush of SM `s` holding `a` whose words were read from the L1 after
//! `t` (`read_cycle > t`): the first carries S's value or, if a later store
//! of the same SM overwrote `a` first, a newer one. S counts as durable at
//! the earliest durability among those flushes: from then on the durable
//! value of `a` is S's or one that supersedes it (coherence order within an
//! SM is the order the L1 took the stores). Stores of different SMs to one
//! address race (the L1s are not coherent) and are not compared.

use std::collections::HashMap;

use crate::record::{Event, Execution};

/// "Never durable", as a cycle: later than any cycle.
pub const NEVER: u64 = u64::MAX;

/// Durability of the flushes of a record, looked up per (SM, address).
pub struct Durability {
    /// Per (SM, address): read cycles, ascending, and the suffix minimum of
    /// the durable cycles of the flushes read at or after each.
    by_addr: HashMap<(u32, u64), (Vec<u64>, Vec<u64>)>,
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
        let mut lists: HashMap<(u32, u64), Vec<(u64, u64)>> = HashMap::new();
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
                        .push((*read_cycle, d));
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
                (k, (reads, suffix))
            })
            .collect();
        let mut points: Vec<u64> = durable.values().copied().collect();
        points.sort_unstable();
        points.dedup();
        Durability {
            by_addr,
            points,
            flushes,
        }
    }

    /// Cycle a store of SM `sm` to `addr` performed at cycle `t` became
    /// durable, or [`NEVER`].
    pub fn of_store(&self, sm: u32, addr: u64, t: u64) -> u64 {
        let Some((reads, suffix)) = self.by_addr.get(&(sm, addr)) else {
            return NEVER;
        };
        let i = reads.partition_point(|&r| r <= t);
        suffix.get(i).copied().unwrap_or(NEVER)
    }
}
