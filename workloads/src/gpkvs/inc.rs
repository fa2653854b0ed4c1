//! gpKVS's invariant incrementally (`crate::incremental`), before and after
//! recovery. `Clauses` keeps `App::check`'s clauses on one image: per log
//! partition its shape and entry (and the slot a durable entry covers), per
//! table slot its words against the batch, with counts for the clauses
//! over the whole table. Recovery is kept as a second image (the crash
//! image with each covered slot undone and the commit head cleared), its
//! words updated where the crash image or a covering entry changed, and
//! checked by a second `Clauses`.

use std::collections::{BTreeSet, HashMap, HashSet};

use super::{entry_slot, Gpkvs, BUCKETS};
use crate::incremental::{Broken, Incremental};
use crate::PmImage;

/// The table slot of a table word.
fn slot_of(g: &Gpkvs, a: u64) -> Option<u64> {
    let t = g.lay.table;
    (t..t + BUCKETS * 32)
        .contains(&a)
        .then(|| ((a - t) / 32) * 4 + ((a - t) % 16) / 4)
}

/// The log partition a log word belongs to (head, tail or entry data).
fn part_of(g: &Gpkvs, a: u64) -> Option<u64> {
    let log = &g.lay.log;
    if (log.head(0)..log.head(log.parts)).contains(&a) {
        return (a - log.head(0))
            .is_multiple_of(8)
            .then(|| (a - log.head(0)) / 8);
    }
    (log.data()..log.data() + log.len)
        .contains(&a)
        .then(|| ((a - log.data()) / log.part_len()).min(log.parts - 1))
}

/// `App::check`'s clauses on one image.
struct Clauses<'a> {
    app: &'a Gpkvs,
    /// Per partition: shape broken; entry not the one logged (p >= 1).
    shape: Broken,
    entry: Broken,
    /// The slot partition p's durable entry covers, and covers per slot.
    covers: Vec<Option<u64>>,
    covered: HashMap<u64, u32>,
    /// Table words set in slots the batch never wrote.
    stray: HashSet<u64>,
    active: bool,
    /// Batch slots (index in `post`): new loc present; broken if
    /// committed; broken if not.
    post: Vec<u64>,
    index: HashMap<u64, usize>,
    new_loc: Broken,
    bad_committed: Broken,
    bad_open: Broken,
    /// Covered slots still holding a signature.
    covered_sig: HashSet<u64>,
}

impl<'a> Clauses<'a> {
    fn new(app: &'a Gpkvs, img: &PmImage) -> Clauses<'a> {
        let parts = app.lay.log.parts as usize;
        let mut post: Vec<u64> = app.batch.post.keys().copied().collect();
        post.sort_unstable();
        let index = post.iter().enumerate().map(|(i, &s)| (s, i)).collect();
        let n = post.len();
        let mut c = Clauses {
            app,
            shape: Broken::new(parts),
            entry: Broken::new(parts),
            covers: vec![None; parts],
            covered: HashMap::new(),
            stray: HashSet::new(),
            active: false,
            post,
            index,
            new_loc: Broken::new(n),
            bad_committed: Broken::new(n),
            bad_open: Broken::new(n),
            covered_sig: HashSet::new(),
        };
        let mut slots = vec![];
        for p in 0..parts as u64 {
            c.partition(img, p, &mut slots);
        }
        let t = app.lay.table;
        for (&a, _) in img.words.range(t..t + BUCKETS * 32) {
            c.table_word(img, a);
        }
        slots.extend(c.post.clone());
        c.slots(img, &mut slots);
        c
    }

    /// Partition `p`'s clauses; pushes the slots whose coverage changed.
    fn partition(&mut self, img: &PmImage, p: u64, slots: &mut Vec<u64>) {
        let log = &self.app.lay.log;
        let h = img.get(log.head(p)) & 0xffff_ffff;
        let s = log.start(p);
        self.shape.set(p as usize, h == 0 || h == s || h == s + 16);
        if p == 0 {
            self.active = log.size_of(img, 0) == 16;
            return;
        }
        let mut cover = None;
        let mut ok = true;
        if h >= s + 16 {
            let e: [u64; 4] = std::array::from_fn(|k| log.word_of(img, p, k as u64));
            match self.app.entry_of(p as usize - 1) {
                Some(want) if want == e => cover = Some(entry_slot(&e)),
                _ => ok = false,
            }
        }
        self.entry.set(p as usize, ok);
        let old = std::mem::replace(&mut self.covers[p as usize], cover);
        if old != cover {
            if let Some(o) = old {
                let k = self.covered.get_mut(&o).unwrap();
                *k -= 1;
                if *k == 0 {
                    self.covered.remove(&o);
                }
                slots.push(o);
            }
            if let Some(n) = cover {
                *self.covered.entry(n).or_default() += 1;
                slots.push(n);
            }
        }
    }

    fn table_word(&mut self, img: &PmImage, a: u64) {
        let slot = slot_of(self.app, a).unwrap();
        if img.get(a) != 0 && !self.index.contains_key(&slot) {
            self.stray.insert(a);
        } else {
            self.stray.remove(&a);
        }
    }

    /// The slot clauses of `slots` (duplicates allowed).
    fn slots(&mut self, img: &PmImage, slots: &mut Vec<u64>) {
        slots.sort_unstable();
        slots.dedup();
        let (lay, b) = (&self.app.lay, &self.app.batch);
        for &slot in slots.iter() {
            let (s, l) = (img.get(lay.sig_addr(slot)), img.get(lay.loc_addr(slot)));
            let covered = self.covered.contains_key(&slot);
            if covered && s != 0 {
                self.covered_sig.insert(slot);
            } else {
                self.covered_sig.remove(&slot);
            }
            let Some(&i) = self.index.get(&slot) else {
                continue;
            };
            let (_, loc) = b.post[&slot];
            let loc = loc as u64;
            self.new_loc.set(i, !(loc != 0 && l == loc));
            self.bad_committed
                .set(i, b.last_sigs[&slot].contains(&(s as u32)) && l == loc);
            let open_bad = (s != 0 && !b.sig_writes[&slot].contains(&(s as u32)))
                || (l != 0 && l != loc)
                || (l != 0 && !covered);
            self.bad_open.set(i, !open_bad);
        }
        slots.clear();
    }

    fn update(&mut self, img: &PmImage, changed: &[u64]) {
        let mut slots = vec![];
        let mut parts = vec![];
        for &a in changed {
            if let Some(slot) = slot_of(self.app, a) {
                self.table_word(img, a);
                slots.push(slot);
            } else if let Some(p) = part_of(self.app, a) {
                parts.push(p);
            }
        }
        parts.sort_unstable();
        parts.dedup();
        for p in parts {
            self.partition(img, p, &mut slots);
        }
        self.slots(img, &mut slots);
    }

    fn holds(&self) -> bool {
        let committed = !self.active && (!self.new_loc.none() || !self.covered_sig.is_empty());
        let slots = if committed {
            self.bad_committed.none()
        } else {
            self.bad_open.none()
        };
        self.shape.none() && self.entry.none() && self.stray.is_empty() && slots
    }
}

pub(super) struct GpkvsInc<'a> {
    app: &'a Gpkvs,
    image: Clauses<'a>,
    /// The recovered image and its clauses.
    rec: PmImage,
    recovered: Clauses<'a>,
    /// Partitions (any, 0 included) whose durable entry names each slot,
    /// and the slot each names.
    names: Vec<Option<u64>>,
    named: HashMap<u64, BTreeSet<u64>>,
    undo: bool,
}

impl<'a> GpkvsInc<'a> {
    pub(super) fn new(app: &'a Gpkvs, img: &PmImage) -> GpkvsInc<'a> {
        let parts = app.lay.log.parts;
        let mut g = GpkvsInc {
            app,
            image: Clauses::new(app, img),
            rec: img.clone(),
            recovered: Clauses::new(app, &PmImage::default()),
            names: vec![None; parts as usize],
            named: HashMap::new(),
            undo: app.lay.log.size_of(img, 0) > 0,
        };
        for p in 0..parts {
            g.name(img, p, &mut vec![]);
        }
        let slots: Vec<u64> = g.named.keys().copied().collect();
        g.rec_slots(img, &slots, &mut vec![]);
        g.rec.set(app.lay.log.head(0), 0);
        g.recovered = Clauses::new(app, &g.rec);
        g
    }

    /// The slot partition `p`'s durable entry names (recovery undoes it).
    fn name(&mut self, img: &PmImage, p: u64, slots: &mut Vec<u64>) {
        let new = self.app.durable_entry(img, p).map(|e| entry_slot(&e));
        let old = std::mem::replace(&mut self.names[p as usize], new);
        if old != new {
            if let Some(o) = old {
                let set = self.named.get_mut(&o).unwrap();
                set.remove(&p);
                if set.is_empty() {
                    self.named.remove(&o);
                }
            }
            if let Some(n) = new {
                self.named.entry(n).or_default().insert(p);
            }
        }
        slots.extend(old);
        slots.extend(new);
    }

    /// The recovered words of `slots`, pushing the addresses that changed.
    fn rec_slots(&mut self, img: &PmImage, slots: &[u64], out: &mut Vec<u64>) {
        let (lay, log) = (&self.app.lay, &self.app.lay.log);
        for &slot in slots {
            let undone = self.named.get(&slot).filter(|_| self.undo);
            let (s, l) = match undone.and_then(|set| set.last()) {
                // The last partition naming the slot sets its loc.
                Some(&p) => (0, log.word_of(img, p, 3)),
                None => (img.get(lay.sig_addr(slot)), img.get(lay.loc_addr(slot))),
            };
            for (a, v) in [(lay.sig_addr(slot), s), (lay.loc_addr(slot), l)] {
                if self.rec.words.get(&a) != Some(&v) {
                    if v == 0 && !img.words.contains_key(&a) && undone.is_none() {
                        self.rec.words.remove(&a);
                    } else {
                        self.rec.set(a, v);
                    }
                    out.push(a);
                }
            }
        }
    }
}

impl Incremental for GpkvsInc<'_> {
    fn update(&mut self, img: &PmImage, changed: &[u64]) -> bool {
        self.image.update(img, changed);
        let head0 = self.app.lay.log.head(0);
        let mut rec_changed = vec![];
        let mut slots = vec![];
        let mut parts = vec![];
        for &a in changed {
            if let Some(slot) = slot_of(self.app, a) {
                slots.push(slot);
                continue;
            }
            if let Some(p) = part_of(self.app, a) {
                parts.push(p);
            }
            if a != head0 {
                let v = img.words.get(&a).copied();
                if self.rec.words.get(&a).copied() != v {
                    match v {
                        Some(v) => self.rec.set(a, v),
                        None => {
                            self.rec.words.remove(&a);
                        }
                    }
                    rec_changed.push(a);
                }
            }
        }
        parts.sort_unstable();
        parts.dedup();
        for p in parts {
            self.name(img, p, &mut slots);
        }
        let undo = self.app.lay.log.size_of(img, 0) > 0;
        if undo != self.undo {
            self.undo = undo;
            slots.extend(self.named.keys().copied());
        }
        slots.sort_unstable();
        slots.dedup();
        self.rec_slots(img, &slots, &mut rec_changed);
        rec_changed.sort_unstable();
        rec_changed.dedup();
        self.recovered.update(&self.rec, &rec_changed);
        self.image.holds() && self.recovered.holds()
    }
}
