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

/// Per-way state besides the tag and the LRU stamp.
#[derive(Clone, Copy, Debug, Default)]
struct Meta {
    /// Fine time the way's latest fill reaches the slice.
    ready: u64,
    /// Valid sectors.
    valid: u8,
    /// Dirty sectors (volatile lines only: PM writes write through).
    dirty: u8,
}

/// The L2: per set, its tags (line number + 1, 0 = invalid) in `tags` and
/// its LRU stamps (larger = more recent, 0 = never used) in `lru`, both
/// contiguous so that the tag match and the victim choice are short
/// scans of 16 values; the rest of a way's state is in `meta`.
pub struct L2 {
    slices: u32,
    sets: u32,
    assoc: usize,
    hash: bool,
    tags: Vec<u64>,
    lru: Vec<u32>,
    meta: Vec<Meta>,
    stamp: u32,
    /// Lookups per slice.
    pub slice_accesses: Vec<u64>,
}

impl L2 {
    pub fn new(cfg: &GpuConfig) -> L2 {
        let c = &cfg.l2;
        assert!(c.slices > 0 && c.assoc > 0, "L2 needs slices and ways");
        assert!(c.assoc <= 256, "at most 256 L2 ways");
        let sets = (c.slice_size / cfg.l1.line / c.assoc).max(1);
        let n = (c.slices * sets) as usize * c.assoc as usize;
        L2 {
            slices: c.slices,
            sets,
            assoc: c.assoc as usize,
            hash: c.hash,
            tags: vec![0; n],
            lru: vec![0; n],
            meta: vec![Meta::default(); n],
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
        let a = self.assoc;
        let base = (slice * self.sets + set) as usize * a;
        let tag = line + 1;
        let tags = &self.tags[base..base + a];
        let found = match <&[u64; 16]>::try_from(tags) {
            Ok(t16) => find(t16, tag),
            Err(_) => find(tags, tag),
        };
        if found != usize::MAX {
            let idx = base + found;
            self.lru[idx] = self.stamp;
            let m = &self.meta[idx];
            let missing = sectors & !m.valid;
            return Lookup {
                slice,
                hit: missing == 0,
                missing,
                ready: m.ready,
                victim_dirty: 0,
                idx,
            };
        }
        // The smallest (stamp, way): never-used ways (stamp 0) first, ties to
        // the lowest way.
        let lru = &self.lru[base..base + a];
        let way = match <&[u32; 16]>::try_from(lru) {
            Ok(l16) => oldest(l16),
            Err(_) => oldest(lru),
        };
        let idx = base + way;
        let was_valid = self.tags[idx] != 0;
        self.tags[idx] = tag;
        self.lru[idx] = self.stamp;
        let m = &mut self.meta[idx];
        let victim_dirty = if was_valid { m.dirty } else { 0 };
        *m = Meta::default();
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
    /// every 2^32 lookups), keeping 0 for never-used ways.
    #[cold]
    fn renumber(&mut self) {
        let mut order: Vec<(u32, usize)> = Vec::with_capacity(self.assoc);
        for set in self.lru.chunks_mut(self.assoc) {
            order.clear();
            order.extend(set.iter().enumerate().map(|(i, &s)| (s, i)));
            order.sort_unstable();
            for (rank, &(stamp, i)) in order.iter().enumerate() {
                if stamp != 0 {
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
        let m = &mut self.meta[l.idx];
        m.valid |= sectors;
        m.ready = m.ready.max(at);
    }

    /// Marks `sectors` of the looked-up line dirty (a volatile write or atomic).
    #[inline]
    pub fn dirty(&mut self, l: &Lookup, sectors: u8) {
        self.meta[l.idx].dirty |= sectors;
    }

    /// Calls `wb(slice, dirty sectors)` for every dirty line, then
    /// invalidates every line.
    pub fn flush(&mut self, mut wb: impl FnMut(u32, u8)) {
        let per_slice = self.sets as usize * self.assoc;
        for (i, (m, &tag)) in self.meta.iter().zip(&self.tags).enumerate() {
            if tag != 0 && m.dirty != 0 {
                wb((i / per_slice) as u32, m.dirty);
            }
        }
        self.tags.fill(0);
        self.lru.fill(0);
        self.meta.fill(Meta::default());
    }

    /// Forces the LRU stamp counter (tests of its wrap-around).
    #[cfg(test)]
    fn set_stamp(&mut self, stamp: u32) {
        self.stamp = stamp;
    }
}

/// The way holding `tag`, or `usize::MAX`: a scan that stops at the match
/// (fully unrolled for the usual 16 ways, `T = [u64; 16]`; measured 5% fewer
/// host instructions than a branch-free scan, for a few more mispredictions).
#[inline(always)]
fn find<T: AsRef<[u64]> + ?Sized>(tags: &T, tag: u64) -> usize {
    tags.as_ref()
        .iter()
        .position(|&t| t == tag)
        .unwrap_or(usize::MAX)
}

/// The way with the smallest LRU stamp (never-used ways have 0), ties to
/// the lowest way.
#[inline(always)]
fn oldest<T: AsRef<[u32]> + ?Sized>(lru: &T) -> usize {
    let lru = lru.as_ref();
    let min = lru.iter().copied().min().unwrap_or(0);
    let mut way = 0;
    for (i, &s) in lru.iter().enumerate().rev() {
        if s == min {
            way = i;
        }
    }
    way
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> L2 {
        let mut c = GpuConfig::default();
        c.l2.hash = false;
        c.l2.slices = 1;
        c.l2.assoc = 3;
        c.l2.slice_size = 3 * c.l1.line; // one set of three ways
        L2::new(&c)
    }

    /// Looks `line` up and fills it; true on a hit.
    fn touch(l2: &mut L2, line: u64) -> bool {
        let l = l2.access(line, 1);
        l2.fill(&l, 1, 0);
        l.hit
    }

    #[test]
    fn lru_evicts_least_recent_and_survives_stamp_wrap() {
        for start in [0, u32::MAX - 2] {
            let mut l2 = small();
            l2.set_stamp(start);
            for line in [1, 2, 3] {
                assert!(!touch(&mut l2, line));
            }
            assert!(touch(&mut l2, 1)); // order now 2, 3, 1
            assert!(!touch(&mut l2, 4)); // evicts 2
            assert!(touch(&mut l2, 3));
            assert!(touch(&mut l2, 1));
            assert!(!touch(&mut l2, 2), "start {start}"); // evicts 4
            assert!(touch(&mut l2, 3));
            assert!(touch(&mut l2, 1));
        }
    }
}
