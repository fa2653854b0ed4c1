//! A durable persistent-memory image: the value of every PM lane address
//! that was ever stored (`docs/model.md`, "Benchmarks"). Each data structure
//! is accessed with one store size, so lane addresses identify its words.

use std::collections::BTreeMap;

use sbrp_trace::{Event, Execution};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PmImage {
    pub words: BTreeMap<u64, u64>,
}

impl PmImage {
    pub fn get(&self, addr: u64) -> u64 {
        self.words.get(&addr).copied().unwrap_or(0)
    }
    pub fn set(&mut self, addr: u64, v: u64) {
        self.words.insert(addr, v);
    }
    /// `initial` plus every flush of `ex` durable at or before `cycle`, in
    /// the order they became durable (same-line writes are durable in order).
    pub fn at_cycle(initial: &PmImage, ex: &Execution, cycle: u64) -> PmImage {
        let mut durable = std::collections::HashMap::new();
        for e in &ex.events {
            if let Event::Durable { id, cycle: c } = e {
                durable.insert(*id, *c);
            }
        }
        let mut flushes: Vec<(u64, u64, &Vec<sbrp_trace::Cell>)> = ex
            .events
            .iter()
            .filter_map(|e| match e {
                Event::Flush { id, cells, .. } => {
                    let c = *durable.get(id)?;
                    (c <= cycle).then_some((c, *id, cells))
                }
                _ => None,
            })
            .collect();
        flushes.sort_by_key(|f| (f.0, f.1));
        let mut img = initial.clone();
        for (_, _, cells) in flushes {
            for c in cells {
                img.set(c.addr, c.value);
            }
        }
        img
    }
}
