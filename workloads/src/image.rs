//! A durable persistent-memory image: the value of every PM lane address
//! that was ever stored (`docs/model.md`, "Benchmarks"). Each data structure
//! is accessed with one store size, so lane addresses identify its words.
//! Images of a recorded run are rebuilt from its flushes in the order they
//! became durable, at one cycle (`at_cycle`) or point by point (`Durable`).

use std::collections::BTreeMap;

use sbrp_trace::{Cell, Event, Execution};

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
        let mut d = Durable::new(initial, ex);
        while d.next_cycle().is_some_and(|c| c <= cycle) {
            d.advance();
        }
        d.img
    }
}

/// The durable images of a recorded run one after another: `initial`, then
/// after each cycle at which a flush became durable and changed a word
/// (flushes durable in one cycle are applied together, by flush id, as
/// `PmImage::at_cycle` does). Each image costs only its own flushes, so a
/// harness can check an invariant at every durable point of a long run.
pub struct Durable<'a> {
    img: PmImage,
    /// (durable cycle, flush id, cells), sorted.
    flushes: Vec<(u64, u64, &'a [Cell])>,
    next: usize,
}

impl<'a> Durable<'a> {
    pub fn new(initial: &PmImage, ex: &'a Execution) -> Durable<'a> {
        let mut cycle_of = std::collections::HashMap::new();
        for e in &ex.events {
            if let Event::Durable { id, cycle } = e {
                cycle_of.insert(*id, *cycle);
            }
        }
        let mut flushes: Vec<(u64, u64, &[Cell])> = ex
            .events
            .iter()
            .filter_map(|e| match e {
                Event::Flush { id, cells, .. } => Some((*cycle_of.get(id)?, *id, &cells[..])),
                _ => None,
            })
            .collect();
        flushes.sort_by_key(|f| (f.0, f.1));
        Durable {
            img: initial.clone(),
            flushes,
            next: 0,
        }
    }

    /// The image at the current point.
    pub fn image(&self) -> &PmImage {
        &self.img
    }

    /// The cycle of the next durable flush, if any.
    pub fn next_cycle(&self) -> Option<u64> {
        self.flushes.get(self.next).map(|f| f.0)
    }

    /// Applies the flushes of the next durable cycle; Some((cycle, changed))
    /// with `changed` false when they rewrote words with their own values.
    pub fn advance(&mut self) -> Option<(u64, bool)> {
        let cycle = self.next_cycle()?;
        let mut changed = false;
        while let Some(&(c, _, cells)) = self.flushes.get(self.next) {
            if c != cycle {
                break;
            }
            for cell in cells {
                changed |= self.img.words.insert(cell.addr, cell.value) != Some(cell.value);
            }
            self.next += 1;
        }
        Some((cycle, changed))
    }

    /// Advances to the next cycle that changes the image: Some(cycle), or
    /// None when no flush is left.
    pub fn next_point(&mut self) -> Option<u64> {
        loop {
            let (c, changed) = self.advance()?;
            if changed {
                return Some(c);
            }
        }
    }
}
