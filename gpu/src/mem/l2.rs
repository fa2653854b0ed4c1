//! The L2 tags (`docs/model-memory.md` §4, "L2"): slices chosen by a hash
//! of the line address (or its low bits), set-associative LRU sets per
//! slice, sector valid and dirty masks per line, and the fill time of each
//! line so that a hit on a line still being fetched waits for its data (the
//! MSHR merge). Tags change in send order; there is no timing here.

use crate::config::GpuConfig;

/// One way of a set. `tag` is the line number + 1 (0 = invalid).
#[derive(Clone, Copy, Debug, Default)]
struct Way {
    tag: u64,
    /// Fine time the line's latest fill reaches the slice.
    ready: u64,
    /// LRU stamp (larger = more recent).
    lru: u64,
    /// Valid sectors.
    valid: u8,
    /// Dirty sectors (volatile lines only: PM writes write through).
    dirty: u8,
}

/// What a lookup found.
#[derive(Clone, Copy, Debug)]
pub struct Lookup {
    /// The slice the line maps to.
    pub slice: u32,
    /// The line was present with every requested sector valid.
    pub hit: bool,
    /// Requested sectors not valid (to fetch).
    pub missing: u8,
    /// Fine time the line's data is at the slice (0 for a new line).
    pub ready: u64,
    /// Dirty sectors of an evicted victim (0 = none or clean).
    pub victim_dirty: u8,
    idx: usize,
}

/// The L2: all slices' tags in one flat vector.
pub struct L2 {
    slices: u32,
    sets: u32,
    assoc: usize,
    hash: bool,
    ways: Vec<Way>,
    stamp: u64,
    /// Lookups per slice.
    pub slice_accesses: Vec<u64>,
}

impl L2 {
    pub fn new(cfg: &GpuConfig) -> L2 {
        let c = &cfg.l2;
        assert!(c.slices > 0 && c.assoc > 0, "L2 needs slices and ways");
        let sets = (c.slice_size / cfg.l1.line / c.assoc).max(1);
        L2 {
            slices: c.slices,
            sets,
            assoc: c.assoc as usize,
            hash: c.hash,
            ways: vec![Way::default(); (c.slices * sets) as usize * c.assoc as usize],
            stamp: 0,
            slice_accesses: vec![0; c.slices as usize],
        }
    }

    /// The slice and set of `line`.
    ///
    /// Hashed: a multiplicative (Fibonacci) hash of the line number; its top
    /// 32 bits pick the slice and the next bits pick the set, so a strided
    /// stream spreads over slices and, within a slice, over sets.
    /// Not hashed: slice = line mod slices, set = (line / slices) mod sets.
    #[inline]
    pub fn map(&self, line: u64) -> (u32, u32) {
        if self.hash {
            let h = (line ^ (line >> 31)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let slice = ((h >> 32) * self.slices as u64) >> 32;
            let set = (((h >> 8) & 0xFF_FFFF) * self.sets as u64) >> 24;
            (slice as u32, set as u32)
        } else {
            let slice = line % self.slices as u64;
            let set = (line / self.slices as u64) % self.sets as u64;
            (slice as u32, set as u32)
        }
    }

    /// Looks `line` up for `sectors`, allocating it (LRU victim) on a tag
    /// miss, and makes it the most recent in its set.
    #[inline]
    pub fn access(&mut self, line: u64, sectors: u8) -> Lookup {
        let (slice, set) = self.map(line);
        self.slice_accesses[slice as usize] += 1;
        self.stamp += 1;
        let base = (slice * self.sets + set) as usize * self.assoc;
        let tag = line + 1;
        let ways = &mut self.ways[base..base + self.assoc];
        let mut victim = 0;
        let mut oldest = u64::MAX;
        for (i, w) in ways.iter_mut().enumerate() {
            if w.tag == tag {
                w.lru = self.stamp;
                let missing = sectors & !w.valid;
                return Lookup {
                    slice,
                    hit: missing == 0,
                    missing,
                    ready: w.ready,
                    victim_dirty: 0,
                    idx: base + i,
                };
            }
            // Invalid ways have stamp 0 and win; ties go to the lowest way.
            let age = if w.tag == 0 { 0 } else { w.lru };
            if age < oldest {
                oldest = age;
                victim = i;
            }
        }
        let w = &mut ways[victim];
        let victim_dirty = if w.tag != 0 { w.dirty } else { 0 };
        *w = Way {
            tag,
            ready: 0,
            lru: self.stamp,
            valid: 0,
            dirty: 0,
        };
        Lookup {
            slice,
            hit: false,
            missing: sectors,
            ready: 0,
            victim_dirty,
            idx: base + victim,
        }
    }

    /// Marks `sectors` of the looked-up line valid, with data at the slice
    /// from fine time `at` on.
    #[inline]
    pub fn fill(&mut self, l: &Lookup, sectors: u8, at: u64) {
        let w = &mut self.ways[l.idx];
        w.valid |= sectors;
        w.ready = w.ready.max(at);
    }

    /// Marks `sectors` of the looked-up line dirty (a volatile write or atomic).
    #[inline]
    pub fn dirty(&mut self, l: &Lookup, sectors: u8) {
        self.ways[l.idx].dirty |= sectors;
    }

    /// Calls `wb(slice, dirty sectors)` for every dirty line, then
    /// invalidates every line.
    pub fn flush(&mut self, mut wb: impl FnMut(u32, u8)) {
        let per_slice = self.sets as usize * self.assoc;
        for (i, w) in self.ways.iter_mut().enumerate() {
            if w.tag != 0 && w.dirty != 0 {
                wb((i / per_slice) as u32, w.dirty);
            }
            *w = Way::default();
        }
    }
}
