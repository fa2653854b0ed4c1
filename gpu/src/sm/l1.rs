//! One SM's L1 data cache (`docs/model.md`, "L1"): sectored, write-back,
//! write-allocate without fetch, LRU per set (an intrusive list, O(1)), a PM
//! bit and the persist buffer hook per line, dirty sectors, and the dirty
//! words with their values when the run is recorded (a flush writes back
//! only what was written, never clean stale words).
//!
//! Invalidations are lazy: a clean line installed before the last
//! invalidation of its kind reads as a miss, so an invalidation costs O(1)
//! instead of a walk over 512 lines.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::line_index::LineIndex;

/// A multiplicative hasher for line numbers (the default SipHash costs more
/// than the rest of a lookup).
#[derive(Default)]
pub struct LineHasher(u64);

impl Hasher for LineHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ *b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (v ^ (v >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

pub type LineMap<V> = HashMap<u64, V, BuildHasherDefault<LineHasher>>;

const NIL: u32 = u32::MAX;

#[derive(Clone, Debug, Default)]
pub struct Line {
    pub valid: bool,
    pub tag: u64,
    pub pm: bool,
    /// Sectors holding data (fetched or written).
    pub sectors: u8,
    pub dirty: u8,
    /// Cycle the line's pending fill arrives (reads before it wait).
    pub fill_at: u64,
    /// Requests to the persist buffer in flight for this line (written
    /// through [`L1::set_pinned`]).
    pub pinned: bool,
    /// The persist buffer index last returned for this line (L1 hook).
    pub hook: Option<u32>,
    /// Invalidation generation the line was installed or written in.
    gen_pm: u32,
    gen_all: u32,
    /// Order in which the line became dirty (flushes go oldest first).
    pub dirty_seq: u64,
    /// Dirty words (address, value), when recording.
    pub words: Vec<(u64, u64)>,
    prev: u32,
    next: u32,
}

impl Line {
    pub fn is_dirty(&self) -> bool {
        self.dirty != 0
    }
}

/// The L1 of one SM.
pub struct L1 {
    pub lines: Vec<Line>,
    map: LineIndex,
    assoc: u32,
    sets: u32,
    /// LRU list per set: head = most recent, tail = least.
    head: Vec<u32>,
    tail: Vec<u32>,
    gen_pm: u32,
    gen_all: u32,
    /// Dirty slots (any space) and each slot's position there.
    dirty: Vec<u32>,
    dirty_pos: Vec<u32>,
    seq: u64,
    /// A clean line of that kind may exist that the last invalidation of
    /// its kind did not drop (a line was installed, revived or cleaned
    /// since): otherwise an invalidation has nothing to walk for.
    maybe_pm: bool,
    maybe_any: bool,
    /// Bit sets by slot: valid clean PM lines, valid clean volatile lines,
    /// pinned lines (kept in step by every change of those fields), so an
    /// invalidation visits only the lines it may drop.
    clean_pm: Vec<u64>,
    clean_vol: Vec<u64>,
    pinned: Vec<u64>,
    /// Bumped by every change that may change a lookup's outcome or a
    /// line's sectors: equal versions, equal lookups.
    pub version: u64,
}

/// Outcome of looking a line up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    Hit(usize),
    Miss,
}

impl L1 {
    pub fn new(lines: u32, assoc: u32) -> L1 {
        let sets = (lines / assoc).max(1);
        let mut l1 = L1 {
            lines: vec![Line::default(); lines as usize],
            map: LineIndex::new(lines as usize),
            assoc,
            sets,
            head: vec![NIL; sets as usize],
            tail: vec![NIL; sets as usize],
            gen_pm: 0,
            gen_all: 0,
            dirty: Vec::new(),
            dirty_pos: vec![NIL; lines as usize],
            seq: 0,
            maybe_pm: false,
            maybe_any: false,
            clean_pm: vec![0; (lines as usize).div_ceil(64)],
            clean_vol: vec![0; (lines as usize).div_ceil(64)],
            pinned: vec![0; (lines as usize).div_ceil(64)],
            version: 1,
        };
        for s in 0..lines as usize {
            l1.push_front(s);
        }
        l1
    }

    /// Brings the clean-line bit sets in step with `slot`'s line.
    fn mark(&mut self, slot: usize) {
        self.version += 1;
        let l = &self.lines[slot];
        let clean = l.valid && l.dirty == 0;
        let (w, b) = (slot / 64, 1u64 << (slot % 64));
        self.clean_pm[w] = self.clean_pm[w] & !b | if clean && l.pm { b } else { 0 };
        self.clean_vol[w] = self.clean_vol[w] & !b | if clean && !l.pm { b } else { 0 };
    }

    /// Pins or unpins `slot`'s line.
    pub fn set_pinned(&mut self, slot: usize, p: bool) {
        self.lines[slot].pinned = p;
        let (w, b) = (slot / 64, 1u64 << (slot % 64));
        self.pinned[w] = self.pinned[w] & !b | if p { b } else { 0 };
    }

    /// Marks `slot`'s line as PM.
    pub fn set_pm(&mut self, slot: usize) {
        self.lines[slot].pm = true;
        self.mark(slot);
    }

    // One set (the fully associative L1 of every preset): no division.
    fn set_of_slot(&self, slot: usize) -> usize {
        if self.sets == 1 {
            0
        } else {
            slot / self.assoc as usize
        }
    }

    fn set_of_line(&self, line: u64) -> usize {
        if self.sets == 1 {
            0
        } else {
            (line % self.sets as u64) as usize
        }
    }

    fn unlink(&mut self, slot: usize) {
        let set = self.set_of_slot(slot);
        let (p, n) = (self.lines[slot].prev, self.lines[slot].next);
        if p == NIL {
            self.head[set] = n;
        } else {
            self.lines[p as usize].next = n;
        }
        if n == NIL {
            self.tail[set] = p;
        } else {
            self.lines[n as usize].prev = p;
        }
    }

    fn push_front(&mut self, slot: usize) {
        let set = self.set_of_slot(slot);
        let h = self.head[set];
        self.lines[slot].prev = NIL;
        self.lines[slot].next = h;
        if h == NIL {
            self.tail[set] = slot as u32;
        } else {
            self.lines[h as usize].prev = slot as u32;
        }
        self.head[set] = slot as u32;
    }

    /// Marks `slot` most recently used.
    pub fn touch(&mut self, slot: usize) {
        self.unlink(slot);
        self.push_front(slot);
    }

    /// A line is present if valid and not dropped by an invalidation since it
    /// was last written (dirty lines are never dropped).
    fn live(&self, l: &Line) -> bool {
        l.valid
            && (l.dirty != 0 || (l.gen_all == self.gen_all && (!l.pm || l.gen_pm == self.gen_pm)))
    }

    pub fn lookup(&self, line: u64) -> Lookup {
        match self.map.get(line) {
            Some(s) if self.live(&self.lines[s as usize]) => Lookup::Hit(s as usize),
            _ => Lookup::Miss,
        }
    }

    /// The slot holding `line`, live or not (a stale copy is reused in place).
    pub fn slot_of(&self, line: u64) -> Option<usize> {
        self.map.get(line).map(|s| s as usize)
    }

    /// The way to replace for `line`: its own stale slot, else the least
    /// recently used way of its set that is not pinned. None: every way pinned.
    pub fn victim(&self, line: u64) -> Option<usize> {
        if let Some(s) = self.slot_of(line) {
            return (!self.lines[s].pinned).then_some(s);
        }
        let mut s = self.tail[self.set_of_line(line)];
        while s != NIL {
            let l = &self.lines[s as usize];
            if !l.pinned {
                return Some(s as usize);
            }
            s = l.prev;
        }
        None
    }

    /// The ways of `line`'s set, least recently used first (`victim` takes
    /// the first not pinned).
    pub fn lru_ways(&self, line: u64) -> impl Iterator<Item = usize> + '_ {
        let mut s = self.tail[self.set_of_line(line)];
        std::iter::from_fn(move || {
            (s != NIL).then(|| {
                let cur = s as usize;
                s = self.lines[cur].prev;
                cur
            })
        })
    }

    /// The victim holds dirty data that must be written back first.
    pub fn victim_dirty(&self, slot: usize) -> bool {
        let l = &self.lines[slot];
        l.valid && l.dirty != 0
    }

    /// Installs `line` in `slot` (clean, no sectors), dropping what was there
    /// (which must be clean).
    pub fn install(&mut self, slot: usize, line: u64, pm: bool) {
        debug_assert!(!self.lines[slot].is_dirty());
        let old = &self.lines[slot];
        if old.valid && self.map.get(old.tag) == Some(slot as u32) {
            let t = old.tag;
            self.map.remove(t);
        }
        let (gp, ga) = (self.gen_pm, self.gen_all);
        let l = &mut self.lines[slot];
        l.valid = true;
        l.tag = line;
        l.pm = pm;
        l.sectors = 0;
        l.dirty = 0;
        l.fill_at = 0;
        l.hook = None;
        l.gen_pm = gp;
        l.gen_all = ga;
        l.words.clear();
        self.maybe_pm |= pm;
        self.maybe_any = true;
        self.map.insert(line, slot as u32);
        self.mark(slot);
        self.touch(slot);
    }

    /// A stale slot (dropped by an invalidation) comes back: no data, no hook.
    pub fn revive(&mut self, slot: usize) {
        self.version += 1;
        self.maybe_pm |= self.lines[slot].pm;
        self.maybe_any = true;
        let (gp, ga) = (self.gen_pm, self.gen_all);
        let l = &mut self.lines[slot];
        l.sectors = 0;
        l.fill_at = 0;
        l.hook = None;
        l.gen_pm = gp;
        l.gen_all = ga;
    }

    /// The line leaves the L1 (after its eviction moved its dirty words out).
    pub fn drop_line(&mut self, slot: usize) {
        debug_assert!(!self.lines[slot].is_dirty());
        let l = &mut self.lines[slot];
        if l.valid && self.map.get(l.tag) == Some(slot as u32) {
            let t = l.tag;
            self.map.remove(t);
        }
        let l = &mut self.lines[slot];
        l.valid = false;
        l.hook = None;
        l.sectors = 0;
        self.mark(slot);
    }

    /// Sectors arrive (a fill) at `at`.
    pub fn fill(&mut self, slot: usize, sectors: u8, at: u64) {
        self.version += 1;
        let l = &mut self.lines[slot];
        l.sectors |= sectors;
        l.fill_at = l.fill_at.max(at);
    }

    /// A store writes `sectors` (and, when recording, `cells`).
    pub fn write(&mut self, slot: usize, sectors: u8, cells: &[(u64, u64)]) {
        let (gp, ga) = (self.gen_pm, self.gen_all);
        let l = &mut self.lines[slot];
        l.sectors |= sectors;
        l.dirty |= sectors;
        l.gen_pm = gp;
        l.gen_all = ga;
        for &(a, v) in cells {
            match l.words.iter_mut().find(|w| w.0 == a) {
                Some(w) => w.1 = v,
                None => l.words.push((a, v)),
            }
        }
        self.mark(slot);
        if self.dirty_pos[slot] == NIL {
            self.seq += 1;
            self.lines[slot].dirty_seq = self.seq;
            self.dirty_pos[slot] = self.dirty.len() as u32;
            self.dirty.push(slot as u32);
        }
        self.touch(slot);
    }

    /// The line's dirty data leaves (a flush or write-back): returns the
    /// dirty sectors and the written words (sorted by address).
    pub fn clean(&mut self, slot: usize) -> (u8, Vec<(u64, u64)>) {
        self.maybe_pm |= self.lines[slot].pm;
        self.maybe_any = true;
        let (gp, ga) = (self.gen_pm, self.gen_all);
        let l = &mut self.lines[slot];
        // A dirty line survived every invalidation so far: it stays present.
        l.gen_pm = gp;
        l.gen_all = ga;
        let d = std::mem::take(&mut l.dirty);
        let mut w = std::mem::take(&mut l.words);
        w.sort_unstable();
        self.mark(slot);
        let p = self.dirty_pos[slot];
        if p != NIL {
            let last = *self.dirty.last().unwrap();
            self.dirty.swap_remove(p as usize);
            if last as usize != slot {
                self.dirty_pos[last as usize] = p;
            }
            self.dirty_pos[slot] = NIL;
        }
        (d, w)
    }

    /// Slots with dirty data of the given space (PM or volatile), oldest first.
    pub fn dirty_slots(&self, pm: bool) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .dirty
            .iter()
            .map(|&s| s as usize)
            .filter(|&s| self.lines[s].pm == pm)
            .collect();
        v.sort_unstable_by_key(|&s| self.lines[s].dirty_seq);
        v
    }

    pub fn has_dirty(&self, pm: bool) -> bool {
        self.dirty.iter().any(|&s| self.lines[s as usize].pm == pm)
    }

    pub fn dirty_count(&self) -> usize {
        self.dirty.len()
    }

    /// Drops the clean PM lines.
    pub fn invalidate_pm(&mut self) {
        self.gen_pm = self.gen_pm.wrapping_add(1);
        self.version += 1;
        self.free_dropped(true);
    }

    /// Drops every clean line.
    pub fn invalidate_all(&mut self) {
        self.gen_all = self.gen_all.wrapping_add(1);
        self.version += 1;
        self.free_dropped(false);
    }

    /// The ways an invalidation dropped go to the LRU end of their set, so
    /// replacement takes them before any line still present. (Pinned lines
    /// stay where they are; their response brings them back.)
    fn free_dropped(&mut self, pm_only: bool) {
        let maybe = if pm_only {
            self.maybe_pm
        } else {
            self.maybe_any
        };
        if !maybe {
            return;
        }
        // Pinned clean lines stay (their response brings them back): the
        // next invalidation must look again. Slots go in increasing order.
        let mut kept = false;
        for w in 0..self.clean_pm.len() {
            let clean = self.clean_pm[w] | self.clean_vol[w];
            kept |= clean & self.pinned[w] != 0;
            let mut bits = if pm_only { self.clean_pm[w] } else { clean } & !self.pinned[w];
            while bits != 0 {
                let slot = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let t = self.lines[slot].tag;
                if self.map.get(t) == Some(slot as u32) {
                    self.map.remove(t);
                }
                let l = &mut self.lines[slot];
                l.valid = false;
                l.hook = None;
                l.sectors = 0;
                self.mark(slot);
                self.unlink(slot);
                self.push_back(slot);
            }
        }
        self.maybe_pm = kept;
        if !pm_only {
            self.maybe_any = kept;
        }
    }

    fn push_back(&mut self, slot: usize) {
        let set = self.set_of_slot(slot);
        let t = self.tail[set];
        self.lines[slot].next = NIL;
        self.lines[slot].prev = t;
        if t == NIL {
            self.head[set] = slot as u32;
        } else {
            self.lines[t as usize].next = slot as u32;
        }
        self.tail[set] = slot as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bit sets equal what a walk over the lines finds.
    fn check_marks(l1: &L1) {
        for (s, l) in l1.lines.iter().enumerate() {
            let (w, b) = (s / 64, 1u64 << (s % 64));
            let clean = l.valid && l.dirty == 0;
            assert_eq!(l1.clean_pm[w] & b != 0, clean && l.pm, "slot {s}");
            assert_eq!(l1.clean_vol[w] & b != 0, clean && !l.pm, "slot {s}");
            assert_eq!(l1.pinned[w] & b != 0, l.pinned, "slot {s}");
        }
    }

    #[test]
    fn clean_line_sets_follow_random_operations() {
        let mut l1 = L1::new(128, 128);
        let mut x = 12345u64;
        let mut rnd = |n: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        for _ in 0..20_000 {
            let line = rnd(300);
            match rnd(9) {
                0..=2 => {
                    if let Some(v) = l1.victim(line) {
                        if l1.victim_dirty(v) {
                            l1.clean(v);
                        }
                        l1.install(v, line, rnd(2) == 0);
                    }
                }
                3 | 4 => {
                    if let Some(s) = l1.slot_of(line) {
                        if rnd(3) == 0 {
                            l1.set_pm(s);
                        }
                        l1.write(s, rnd(16) as u8, &[]);
                    }
                }
                5 => {
                    if let Some(s) = l1.slot_of(line) {
                        l1.clean(s);
                    }
                }
                6 => {
                    let s = rnd(128) as usize;
                    let p = !l1.lines[s].pinned;
                    l1.set_pinned(s, p);
                }
                7 => {
                    if let Some(s) = l1.slot_of(line) {
                        if !l1.lines[s].is_dirty() {
                            l1.drop_line(s);
                        }
                    }
                }
                _ if rnd(2) == 0 => l1.invalidate_pm(),
                _ => l1.invalidate_all(),
            }
            check_marks(&l1);
        }
    }

    #[test]
    fn lru_victim_and_pins() {
        let mut l1 = L1::new(4, 4);
        for (i, line) in [10u64, 11, 12, 13].iter().enumerate() {
            let v = l1.victim(*line).unwrap();
            l1.install(v, *line, false);
            assert_eq!(l1.lookup(*line), Lookup::Hit(v), "{i}");
        }
        // 10 is least recent; touching it makes 11 the victim.
        let s10 = l1.slot_of(10).unwrap();
        l1.touch(s10);
        assert_eq!(l1.victim(20), l1.slot_of(11));
        let s11 = l1.slot_of(11).unwrap();
        l1.set_pinned(s11, true);
        assert_eq!(l1.victim(20), l1.slot_of(12));
    }

    #[test]
    fn invalidation_is_lazy_and_spares_dirty_lines() {
        let mut l1 = L1::new(4, 4);
        let a = l1.victim(1).unwrap();
        l1.install(a, 1, true);
        let b = l1.victim(2).unwrap();
        l1.install(b, 2, true);
        l1.write(b, 1, &[(256, 7)]);
        let c = l1.victim(3).unwrap();
        l1.install(c, 3, false);
        l1.invalidate_pm();
        assert_eq!(l1.lookup(1), Lookup::Miss);
        assert_eq!(l1.lookup(2), Lookup::Hit(b));
        assert_eq!(l1.lookup(3), Lookup::Hit(c));
        l1.invalidate_all();
        assert_eq!(l1.lookup(3), Lookup::Miss);
        assert_eq!(l1.lookup(2), Lookup::Hit(b));
        let (d, w) = l1.clean(b);
        assert_eq!((d, w), (1, vec![(256, 7)]));
        // Cleaned after the invalidations: still present until the next one.
        assert_eq!(l1.lookup(2), Lookup::Hit(b));
        l1.invalidate_pm();
        assert_eq!(l1.lookup(2), Lookup::Miss);
        assert_eq!(l1.dirty_count(), 0);
    }
}
