//! The L1 tag array of one SM (`docs/trace-format.md`, "Front end";
//! `docs/microarch.md` §2 interface requirements 1-3 and 5, §5, "L1
//! write-back: dirty words only"): set-associative, LRU, write-back PM
//! lines that remember which words were written since their last flush,
//! the PB hook of each line (as in the paper: in the L1 tags), a pin on a
//! line with a request in flight, and the write-back buffer of evictions.

use std::collections::HashMap;

use sbrp_trace::Cell;

/// One word of a line: its address, value and whether it was written since
/// the line's last flush.
#[derive(Clone, Copy, Debug)]
struct Word {
    addr: u64,
    value: u64,
    dirty: bool,
}

#[derive(Clone, Debug, Default)]
struct Line {
    valid: bool,
    tag: u64,
    dirty: bool,
    lru: u64,
    /// Sorted by address.
    words: Vec<Word>,
    /// The L1 hook: the PB index the last performed or coalesced store
    /// response returned since the line was installed (`req_pbv`, `req_pbidx`).
    hook: Option<u32>,
    /// A request naming this slot is in flight (interface requirement 1):
    /// no other request may name it, and it is neither replaced nor
    /// invalidated until the response.
    pinned: bool,
    /// An invalidation passed while pinned: drop the line at unpin if clean.
    stale: bool,
}

/// Words an eviction moved out of the L1, waiting for the eviction flush
/// (interface requirement 3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteBack {
    pub tag: u64,
    pub cells: Vec<Cell>,
    /// The cycle the words were read (the eviction's response).
    pub read_cycle: u64,
}

/// Set-associative L1 tags with LRU replacement.
#[derive(Clone, Debug)]
pub struct L1 {
    lines: Vec<Line>,
    sets: u32,
    ways: usize,
    /// The write-back buffer, by slot.
    wb: HashMap<usize, WriteBack>,
}

impl L1 {
    /// `lines` lines in sets of `ways` (at most `lines`) ways.
    pub fn new(lines: u32, ways: u32) -> L1 {
        let ways = ways.clamp(1, lines.max(1));
        L1 {
            lines: vec![Line::default(); lines as usize],
            sets: (lines / ways).max(1),
            ways: ways as usize,
            wb: HashMap::new(),
        }
    }

    fn set_range(&self, line: u64) -> std::ops::Range<usize> {
        let set = (line % self.sets as u64) as usize;
        set * self.ways..set * self.ways + self.ways
    }

    /// Slot holding `line`, if present.
    pub fn lookup(&self, line: u64) -> Option<usize> {
        self.set_range(line)
            .find(|&i| self.lines[i].valid && self.lines[i].tag == line)
    }

    /// Victim slot for `line` among the ways not pinned: an invalid way,
    /// else the least recently used; none while every way is pinned.
    pub fn victim(&self, line: u64) -> Option<usize> {
        self.set_range(line)
            .filter(|&i| !self.lines[i].pinned)
            .min_by_key(|&i| (self.lines[i].valid, self.lines[i].lru))
    }

    pub fn pinned(&self, slot: usize) -> bool {
        self.lines[slot].pinned
    }

    pub fn pin(&mut self, slot: usize) {
        self.lines[slot].pinned = true;
    }

    /// The response arrived: the slot is free again (an invalidation that
    /// passed meanwhile drops it now, if it is still clean).
    pub fn unpin(&mut self, slot: usize) {
        let l = &mut self.lines[slot];
        l.pinned = false;
        if l.stale && !l.dirty {
            l.valid = false;
        }
        l.stale = false;
    }

    /// The hook of `slot` (interface requirement 2).
    pub fn hook(&self, slot: usize) -> Option<u32> {
        self.lines[slot].hook
    }

    pub fn set_hook(&mut self, slot: usize, idx: u32) {
        self.lines[slot].hook = Some(idx);
    }

    /// A valid line with words not yet written back.
    pub fn is_dirty(&self, slot: usize) -> bool {
        self.lines[slot].valid && self.lines[slot].dirty
    }

    /// Makes `slot` hold `line`, clean and empty, with no hook.
    pub fn install(&mut self, slot: usize, line: u64, now: u64) {
        let l = &mut self.lines[slot];
        l.valid = true;
        l.tag = line;
        l.dirty = false;
        l.lru = now;
        l.words.clear();
        l.hook = None;
    }

    pub fn touch(&mut self, slot: usize, now: u64) {
        self.lines[slot].lru = now;
    }

    /// A store of `value` to `addr` in `slot`'s line.
    pub fn write(&mut self, slot: usize, addr: u64, value: u64) {
        let l = &mut self.lines[slot];
        let w = Word {
            addr,
            value,
            dirty: true,
        };
        match l.words.binary_search_by_key(&addr, |w| w.addr) {
            Ok(i) => l.words[i] = w,
            Err(i) => l.words.insert(i, w),
        }
        l.dirty = true;
    }

    /// Line number held by `slot`.
    pub fn tag(&self, slot: usize) -> u64 {
        self.lines[slot].tag
    }

    /// The words a flush of `slot` writes back: only those written since the
    /// last flush (a clean word may be stale: another SM may have written it).
    pub fn dirty_cells(&self, slot: usize) -> Vec<Cell> {
        self.lines[slot]
            .words
            .iter()
            .filter(|w| w.dirty)
            .map(|w| Cell {
                addr: w.addr,
                value: w.value,
            })
            .collect()
    }

    /// After a head flush read the line: it keeps a clean copy.
    pub fn written_back(&mut self, slot: usize) {
        let l = &mut self.lines[slot];
        l.dirty = false;
        for w in &mut l.words {
            w.dirty = false;
        }
    }

    /// An eviction was performed: the dirty words, if any, move to the
    /// write-back buffer for the eviction flush; the slot is invalid. False
    /// if the slot's buffer is already occupied (a bench bug: the unit
    /// replays a request for a line with a queued flush).
    pub fn evict(&mut self, slot: usize, now: u64) -> bool {
        let mut ok = true;
        if self.lines[slot].dirty {
            let wb = WriteBack {
                tag: self.lines[slot].tag,
                cells: self.dirty_cells(slot),
                read_cycle: now,
            };
            ok = self.wb.insert(slot, wb).is_none();
        }
        let l = &mut self.lines[slot];
        l.valid = false;
        l.dirty = false;
        l.words.clear();
        ok
    }

    /// The eviction flush of `slot` takes its words from the buffer.
    pub fn take_write_back(&mut self, slot: usize) -> Option<WriteBack> {
        self.wb.remove(&slot)
    }

    /// Evicted words no flush has taken yet.
    pub fn write_backs(&self) -> usize {
        self.wb.len()
    }

    /// The `inv_req` invalidation: drops every clean line (dirty ones
    /// stay); a pinned clean line goes when its response arrives.
    pub fn invalidate_clean(&mut self) {
        for l in &mut self.lines {
            if l.valid && !l.dirty {
                if l.pinned {
                    l.stale = true;
                } else {
                    l.valid = false;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_victim_and_dirty_words_only() {
        let mut l1 = L1::new(8, 2); // 4 sets of 2 ways
        assert_eq!(l1.lookup(5), None);
        let a = l1.victim(5).unwrap();
        l1.install(a, 5, 1);
        l1.write(a, 5 * 128, 1);
        l1.write(a, 5 * 128 + 4, 2);
        assert_eq!(l1.lookup(5), Some(a));
        assert!(l1.is_dirty(a));
        assert_eq!(l1.dirty_cells(a).len(), 2);
        l1.written_back(a);
        assert!(!l1.is_dirty(a) && l1.lookup(5) == Some(a));
        // Only the word written after the flush goes back the next time.
        l1.write(a, 5 * 128 + 4, 3);
        let c = l1.dirty_cells(a);
        assert_eq!(
            c,
            vec![Cell {
                addr: 5 * 128 + 4,
                value: 3
            }]
        );
        // Same set (line 9): the free way first, then the least recently used.
        let b = l1.victim(9).unwrap();
        assert_ne!(a, b);
        l1.install(b, 9, 2);
        l1.touch(a, 3);
        assert_eq!(l1.victim(13), Some(b));
        l1.pin(b);
        assert_eq!(l1.victim(13), Some(a), "a pinned way is never a victim");
        l1.pin(a);
        assert_eq!(l1.victim(13), None);
        l1.unpin(a);
        l1.unpin(b);
        l1.invalidate_clean();
        assert_eq!(l1.lookup(9), None, "clean line dropped");
        assert_eq!(l1.lookup(5), Some(a), "dirty line kept");
    }

    #[test]
    fn hooks_clear_at_install_and_evictions_keep_their_words() {
        let mut l1 = L1::new(8, 2);
        l1.install(0, 4, 1); // set 0: slots 0 and 1
        l1.write(0, 4 * 128, 7);
        l1.set_hook(0, 3);
        assert_eq!(l1.hook(0), Some(3));
        assert!(l1.evict(0, 10));
        assert_eq!(l1.lookup(4), None);
        l1.install(0, 8, 11);
        assert_eq!(l1.hook(0), None);
        let wb = l1.take_write_back(0).unwrap();
        assert_eq!((wb.tag, wb.read_cycle, wb.cells.len()), (4, 10, 1));
        assert_eq!(l1.write_backs(), 0);
        // A clean pinned line survives the invalidation until its response.
        l1.pin(0);
        l1.invalidate_clean();
        assert_eq!(l1.lookup(8), Some(0));
        l1.unpin(0);
        assert_eq!(l1.lookup(8), None);
    }
}
