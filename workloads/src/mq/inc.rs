//! MQ's invariant incrementally (`crate::incremental`): per queue, its
//! state (head/tail from the start and done records) and, for each batch
//! the state says is present, its owner (the batch's first slot) and the
//! set of its slots not holding their element. A slot store updates one
//! slot of that set; a record store rebuilds the queue's batch list,
//! keeping batches that start where they did. Recovery leaves the image as
//! it is.

use std::collections::{HashMap, HashSet};

use super::{elem, Mq, BATCH, QUEUES, QUEUE_LEN};
use crate::incremental::{Broken, Incremental};
use crate::PmImage;

/// A present batch: its owner (Err: none) and its wrong slots.
struct Batch {
    owner: Result<u32, ()>,
    wrong: HashSet<u32>,
}

struct Queue {
    /// Err: the state is no state of the queue's history.
    starts: Result<Vec<u32>, ()>,
    batches: HashMap<u32, Batch>,
}

pub(super) struct MqInc<'a> {
    app: &'a Mq,
    queues: Vec<Queue>,
    broken: Broken,
    dirty: Vec<u32>,
}

impl<'a> MqInc<'a> {
    pub(super) fn new(app: &'a Mq, img: &PmImage) -> MqInc<'a> {
        let mut s = MqInc {
            app,
            queues: (0..QUEUES)
                .map(|_| Queue {
                    starts: Ok(vec![]),
                    batches: HashMap::new(),
                })
                .collect(),
            broken: Broken::new(QUEUES as usize),
            dirty: vec![],
        };
        for q in 0..QUEUES {
            s.rebuild(img, q);
        }
        s
    }

    fn batch(&self, img: &PmImage, q: u32, s: u32) -> Batch {
        let app = self.app;
        let owner = app.batch_owner(img, q, s).map_err(|_| ());
        let wrong = match owner {
            Ok(id) => (0..BATCH)
                .filter(|&j| img.get(app.slot_addr(q, s + j)) != elem(id, j))
                .collect(),
            Err(()) => HashSet::new(),
        };
        Batch { owner, wrong }
    }

    /// Queue `q`'s batch list from its records, keeping batches that start
    /// where they did.
    fn rebuild(&mut self, img: &PmImage, q: u32) {
        let starts = self.app.batch_starts(img, q).map_err(|_| ());
        let mut old = std::mem::take(&mut self.queues[q as usize].batches);
        let mut batches = HashMap::new();
        for &s in starts.as_deref().unwrap_or(&[]) {
            let b = old.remove(&s).unwrap_or_else(|| self.batch(img, q, s));
            batches.insert(s, b);
        }
        self.queues[q as usize] = Queue { starts, batches };
        self.judge(q);
    }

    fn judge(&mut self, q: u32) {
        let qu = &self.queues[q as usize];
        let ok = qu.starts.is_ok()
            && qu
                .batches
                .values()
                .all(|b| b.owner.is_ok() && b.wrong.is_empty());
        self.broken.set(q as usize, ok);
    }

    /// A store to slot `s` of queue `q`.
    fn slot(&mut self, img: &PmImage, q: u32, s: u32) {
        let Ok(starts) = &self.queues[q as usize].starts else {
            return;
        };
        let Some(&start) = starts
            .iter()
            .find(|&&b| (s + QUEUE_LEN - b) % QUEUE_LEN < BATCH)
        else {
            return;
        };
        if s == start {
            // The batch's owner is read from here.
            let b = self.batch(img, q, start);
            self.queues[q as usize].batches.insert(start, b);
        } else {
            let j = (s + QUEUE_LEN - start) % QUEUE_LEN;
            let b = self.queues[q as usize].batches.get_mut(&start).unwrap();
            if let Ok(id) = b.owner {
                if img.get(self.app.slot_addr(q, s)) != elem(id, j) {
                    b.wrong.insert(j);
                } else {
                    b.wrong.remove(&j);
                }
            }
        }
        self.dirty.push(q);
    }
}

impl Incremental for MqInc<'_> {
    fn update(&mut self, img: &PmImage, changed: &[u64]) -> bool {
        let app = self.app;
        let n = app.cmds.len() as u64;
        let slots = QUEUES as u64 * QUEUE_LEN as u64 * 4;
        let mut records = vec![];
        for &a in changed {
            if (app.arr_base..app.arr_base + slots).contains(&a) {
                let off = a - app.arr_base;
                if off.is_multiple_of(4) {
                    let k = off / 4;
                    let (q, s) = (k / QUEUE_LEN as u64, k % QUEUE_LEN as u64);
                    self.slot(img, q as u32, s as u32);
                }
                continue;
            }
            for base in [app.start_base, app.done_base] {
                if (base..base + n * 8).contains(&a) && (a - base).is_multiple_of(8) {
                    records.push(app.cmds[((a - base) / 8) as usize].queue);
                }
            }
        }
        records.sort_unstable();
        records.dedup();
        for &q in &records {
            self.rebuild(img, q);
        }
        let mut dirty = std::mem::take(&mut self.dirty);
        dirty.sort_unstable();
        dirty.dedup();
        for &q in &dirty {
            self.judge(q);
        }
        dirty.clear();
        self.dirty = dirty;
        self.broken.none()
    }
}
