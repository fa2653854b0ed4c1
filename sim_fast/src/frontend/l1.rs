//! The L1 tag array of one SM (`docs/trace-format.md`, "Front end";
//! `docs/microarch.md` §5 and "L1 write-back: dirty words only"):
//! set-associative, LRU, write-back PM lines that remember which words were
//! written since their last flush.

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
}

/// Set-associative L1 tags with LRU replacement.
#[derive(Clone, Debug)]
pub struct L1 {
    lines: Vec<Line>,
    sets: u32,
    ways: usize,
}

impl L1 {
    /// `lines` lines in sets of `ways` (at most `lines`) ways.
    pub fn new(lines: u32, ways: u32) -> L1 {
        let ways = ways.clamp(1, lines.max(1));
        L1 {
            lines: vec![Line::default(); lines as usize],
            sets: (lines / ways).max(1),
            ways: ways as usize,
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

    /// Victim slot for `line`: an invalid way, else the least recently used.
    pub fn victim(&self, line: u64) -> usize {
        let r = self.set_range(line);
        let start = r.start;
        r.min_by_key(|&i| (self.lines[i].valid, self.lines[i].lru))
            .unwrap_or(start)
    }

    /// A valid line with words not yet written back.
    pub fn is_dirty(&self, slot: usize) -> bool {
        self.lines[slot].valid && self.lines[slot].dirty
    }

    /// Makes `slot` hold `line`, clean and empty.
    pub fn install(&mut self, slot: usize, line: u64, now: u64) {
        let l = &mut self.lines[slot];
        l.valid = true;
        l.tag = line;
        l.dirty = false;
        l.lru = now;
        l.words.clear();
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

    /// After a flush: the line keeps a clean copy, or is gone on eviction.
    pub fn written_back(&mut self, slot: usize, evict: bool) {
        let l = &mut self.lines[slot];
        l.dirty = false;
        for w in &mut l.words {
            w.dirty = false;
        }
        if evict {
            l.valid = false;
        }
    }

    pub fn invalidate(&mut self, slot: usize) {
        self.lines[slot].valid = false;
    }

    /// `inv_pm`: drops every clean line (dirty ones stay).
    pub fn invalidate_clean(&mut self) {
        for l in &mut self.lines {
            if l.valid && !l.dirty {
                l.valid = false;
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
        let a = l1.victim(5);
        l1.install(a, 5, 1);
        l1.write(a, 5 * 128, 1);
        l1.write(a, 5 * 128 + 4, 2);
        assert_eq!(l1.lookup(5), Some(a));
        assert!(l1.is_dirty(a));
        assert_eq!(l1.dirty_cells(a).len(), 2);
        l1.written_back(a, false);
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
        let b = l1.victim(9);
        assert_ne!(a, b);
        l1.install(b, 9, 2);
        l1.touch(a, 3);
        assert_eq!(l1.victim(13), b);
        l1.invalidate_clean();
        assert_eq!(l1.lookup(9), None, "clean line dropped");
        assert_eq!(l1.lookup(5), Some(a), "dirty line kept");
    }
}
