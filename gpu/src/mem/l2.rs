//! The L2 tags (`docs/model-memory.md` §4, "L2"): slices chosen by a hash
//! of the line address (or its low bits), set-associative LRU sets per
//! slice, sector valid and dirty masks per line, and the fill time of each
//! line so that a hit on a line still being fetched waits for its data (the
//! MSHR merge). Tags change in send order; there is no timing here.

use crate::config::GpuConfig;

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

/// The L2: all slices' ways in flat vectors, one per field (structure of
/// arrays: the tag search reads only the 16 tags of a set).
pub struct L2 {
    slices: u32,
    sets: u32,
    assoc: usize,
    hash: bool,
    /// Line number + 1 per way (0 = invalid).
    tags: Vec<u64>,
    /// LRU stamp per way (larger = more recent; 0 = never used).
    lru: Vec<u32>,
    /// Fine time each way's latest fill reaches the slice.
    ready: Vec<u64>,
    /// Valid sectors per way.
    valid: Vec<u8>,
    /// Dirty sectors per way (volatile lines only: PM writes write through).
    dirty: Vec<u8>,
    stamp: u32,
    /// Lookups per slice.
    pub slice_accesses: Vec<u64>,
}

impl L2 {
    pub fn new(cfg: &GpuConfig) -> L2 {
        let c = &cfg.l2;
        assert!(c.slices > 0 && c.assoc > 0, "L2 needs slices and ways");
        let sets = (c.slice_size / cfg.l1.line / c.assoc).max(1);
        let n = (c.slices * sets) as usize * c.assoc as usize;
        L2 {
            slices: c.slices,
            sets,
            assoc: c.assoc as usize,
            hash: c.hash,
            tags: vec![0; n],
            lru: vec![0; n],
            ready: vec![0; n],
            valid: vec![0; n],
            dirty: vec![0; n],
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
        if self.stamp == u32::MAX {
            self.renumber();
        }
        self.stamp += 1;
        let base = (slice * self.sets + set) as usize * self.assoc;
        let tag = line + 1;
        let tags = &self.tags[base..base + self.assoc];
        if let Some(i) = tags.iter().position(|&t| t == tag) {
            let idx = base + i;
            self.lru[idx] = self.stamp;
            let missing = sectors & !self.valid[idx];
            return Lookup {
                slice,
                hit: missing == 0,
                missing,
                ready: self.ready[idx],
                victim_dirty: 0,
                idx,
            };
        }
        // Invalid ways have stamp 0 and win; ties go to the lowest way.
        let lru = &self.lru[base..base + self.assoc];
        let mut victim = 0;
        let mut oldest = u32::MAX;
        for (i, &a) in lru.iter().enumerate() {
            if a < oldest {
                oldest = a;
                victim = i;
            }
        }
        let idx = base + victim;
        let victim_dirty = if self.tags[idx] != 0 {
            self.dirty[idx]
        } else {
            0
        };
        self.tags[idx] = tag;
        self.lru[idx] = self.stamp;
        self.ready[idx] = 0;
        self.valid[idx] = 0;
        self.dirty[idx] = 0;
        Lookup {
            slice,
            hit: false,
            missing: sectors,
            ready: 0,
            victim_dirty,
            idx,
        }
    }

    /// Renumbers the LRU stamps of every set 1..=ways in their order (once
    /// every 2^32 lookups), keeping 0 for invalid ways.
    #[cold]
    fn renumber(&mut self) {
        let mut order: Vec<usize> = Vec::with_capacity(self.assoc);
        for set in self.lru.chunks_mut(self.assoc) {
            order.clear();
            order.extend(0..set.len());
            order.sort_by_key(|&i| set[i]);
            for (rank, &i) in order.iter().enumerate() {
                if set[i] != 0 {
                    set[i] = rank as u32 + 1;
                }
            }
        }
        self.stamp = self.assoc as u32 + 1;
    }

    /// Marks `sectors` of the looked-up line valid, with data at the slice
    /// from fine time `at` on.
    #[inline]
    pub fn fill(&mut self, l: &Lookup, sectors: u8, at: u64) {
        self.valid[l.idx] |= sectors;
        self.ready[l.idx] = self.ready[l.idx].max(at);
    }

    /// Marks `sectors` of the looked-up line dirty (a volatile write or atomic).
    #[inline]
    pub fn dirty(&mut self, l: &Lookup, sectors: u8) {
        self.dirty[l.idx] |= sectors;
    }

    /// Calls `wb(slice, dirty sectors)` for every dirty line, then
    /// invalidates every line.
    pub fn flush(&mut self, mut wb: impl FnMut(u32, u8)) {
        let per_slice = self.sets as usize * self.assoc;
        for (i, (&t, &d)) in self.tags.iter().zip(&self.dirty).enumerate() {
            if t != 0 && d != 0 {
                wb((i / per_slice) as u32, d);
            }
        }
        self.tags.fill(0);
        self.lru.fill(0);
        self.ready.fill(0);
        self.valid.fill(0);
        self.dirty.fill(0);
    }
}
