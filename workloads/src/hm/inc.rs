//! HM's invariant incrementally (`crate::incremental`), before and after
//! recovery. Per slot `p` (its two map words, its node-log head and entry)
//! flags count the slots that break each clause of `App::check`; the
//! metadata log, one word, is read again when it changes. Recovery writes
//! each durable node entry back to its slot and clears the node log, so
//! after it the clauses read the slot's entry where there is one and
//! nothing is logged: `recovered` below.

use super::Hm;
use crate::incremental::{Broken, Incremental};
use crate::PmImage;

/// The clauses, each as the slots breaking it.
const SHAPE: usize = 0; // node head neither unset, empty nor one entry
const ENTRY: usize = 1; // a durable entry that is not the slot's old words
const UNLOGGED: usize = 2; // not old and not logged (active)
const NOT_OLD: usize = 3;
const NOT_NEW: usize = 4;
const REC_NOT_OLD: usize = 5; // after recovery
const REC_NOT_NEW: usize = 6;

pub(super) struct HmInc<'a> {
    app: &'a Hm,
    flags: Vec<Broken>,
    /// The metadata log: bytes logged, and whether its shape holds.
    md_size: u64,
    md_shape: bool,
    slots: Vec<u64>,
}

impl<'a> HmInc<'a> {
    pub(super) fn new(app: &'a Hm, img: &PmImage) -> HmInc<'a> {
        let n = app.slots as usize;
        let mut s = HmInc {
            app,
            flags: (0..7).map(|_| Broken::new(n)).collect(),
            md_size: 0,
            md_shape: true,
            slots: vec![],
        };
        s.metadata(img);
        for p in 0..app.slots {
            s.slot(img, p);
        }
        s
    }

    fn metadata(&mut self, img: &PmImage) {
        let md = &self.app.lay.md_log;
        self.md_size = md.size_of(img, 0);
        self.md_shape = md.check_shape(img, 4, "hm metadata").is_ok();
    }

    /// Slot `p`'s flags.
    fn slot(&mut self, img: &PmImage, p: u64) {
        let app = self.app;
        let (lay, log) = (&app.lay, &app.lay.node_log);
        let cur = [img.get(lay.slot(p)), img.get(lay.slot(p) + 4)];
        let (old, new) = (app.old[p as usize], app.new[p as usize]);
        let h = log.head_of(img, p);
        let s = log.start(p);
        let entry = app.node_entry(img, p);
        let rec = entry.unwrap_or(cur);
        let broken = [
            h != 0 && h != s && h != s + 8,
            entry.is_some_and(|e| e != old),
            cur != old && entry.is_none(),
            cur != old,
            cur != new,
            rec != old,
            rec != new,
        ];
        for (f, b) in self.flags.iter_mut().zip(broken) {
            f.set(p as usize, !b);
        }
    }

    fn none(&self, k: usize) -> bool {
        self.flags[k].none()
    }

    /// `App::check` on the image.
    fn holds(&self) -> bool {
        let clauses = match self.md_size {
            4 => self.none(UNLOGGED),
            _ => self.none(NOT_OLD) || self.none(NOT_NEW),
        };
        self.none(SHAPE) && self.md_shape && self.none(ENTRY) && clauses
    }

    /// `App::check` after `App::recover`: the identity with nothing in the
    /// metadata log; else every slot holds its entry or its words, the node
    /// log is clear and the metadata log is as it was.
    fn recovered(&self) -> bool {
        match self.md_size {
            0 => self.holds(),
            4 => self.md_shape && self.none(REC_NOT_OLD),
            _ => self.md_shape && (self.none(REC_NOT_OLD) || self.none(REC_NOT_NEW)),
        }
    }
}

impl Incremental for HmInc<'_> {
    fn update(&mut self, img: &PmImage, changed: &[u64]) -> bool {
        let app = self.app;
        let (lay, log, md) = (&app.lay, &app.lay.node_log, &app.lay.md_log);
        let md_end = md.data() + md.len;
        let mut metadata = false;
        for &a in changed {
            if (lay.map..lay.slot(app.slots)).contains(&a) {
                self.slots.push((a - lay.map) / 8);
            } else if (log.head(0)..log.head(app.slots)).contains(&a) {
                self.slots.push((a - log.head(0)) / 8);
            } else if (log.data()..log.data() + log.len).contains(&a) {
                self.slots
                    .push(((a - log.data()) / log.part_len()).min(log.parts - 1));
            } else if (md.base..md_end).contains(&a) {
                metadata = true;
            }
        }
        if metadata {
            self.metadata(img);
        }
        let mut slots = std::mem::take(&mut self.slots);
        slots.sort_unstable();
        slots.dedup();
        for &p in &slots {
            self.slot(img, p);
        }
        slots.clear();
        self.slots = slots;
        self.holds() && self.recovered()
    }
}
