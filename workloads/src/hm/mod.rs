//! HM: a batch of keys inserted into a PM cuckoo hash map (300 buckets of
//! 576 slots) with a conventional undo log per slot and a metadata log
//! marking the transaction (`../shared/notes/sbrp-benchmarks.md` §2.2, sizes
//! §2.7, §6.9). `sim` computes the batches, `gen` emits the kernels.
//!
//! Decisions:
//! - Size = keys a batch, default 25,000 (the artifact's; §6.9); the timed
//!   batch's keys are `n + 1 ..= 2n`.
//! - The map is not empty: an earlier batch of the keys `1..=n` (those below
//!   the artifact's), inserted the same way into the empty map and
//!   committed, is in the initial image, as a persistent map holds after
//!   earlier batches. The artifact starts empty; then every slot the batch
//!   logs is empty, what recovery restores is what its memset writes, no
//!   persist order is visible in an image and the invariant cannot fail
//!   mid-run. Compaction now moves each bucket's nodes to its front, and
//!   phase 2 places old and new nodes (twice the artifact's keys a bucket).
//! - 300 buckets (the artifact's) from 300 keys; below, one bucket per key,
//!   a reduced map for tests (the 172,800 slots' logging alone makes about
//!   50,000 durable points). Refused above 46,349 keys: the map then holds
//!   `2n` keys, and beyond 92,699 the artifact adds buckets and rehashes.
//! - The logs' `setupPartitions` run in the map's constructor, before the
//!   kernels the note lists, so their heads and tails are in the initial
//!   image. The node count word is written by the host (`cudaMemcpy`) and
//!   is left out of every image.
//! - Recovery: `recoverFromLog` (50 CTAs, a bucket loop) walks every bucket
//!   and writes each durable entry back, an oFence ordering each restore
//!   before its partition's clear (else a crash in recovery could leave a
//!   partition cleared and its slot not restored). The artifact walks
//!   `n / 409 + 1` buckets (62 for 25,000) after a host memset of the whole
//!   map, which restores only an empty map. With an empty metadata log the
//!   artifact aborts: recovery is `getNodeCount` alone and changes nothing.
//!   The metadata log stays active after recovery, as in the artifact.
//! - The crash run and the recovery kernels are the `*_rec` binary built
//!   without `GPM_EPOCH_MODEL` (`Build::Gpu`): Figure 11 compares SBRP and
//!   epoch only (§0.8, §6.15).
//! - A slot is two 4-B words, key and value (key 0: empty). Compaction's
//!   8-B zeroing store is one word at the slot's address in the image (the
//!   key word); the value word beside it keeps its value there.
//! - The invariant (`check`), each clause with the program ordering it
//!   relies on (`gen.rs`; a kernel's persists are all durable before the
//!   next kernel starts: `docs/model.md`, "Persistency models", kernel end):
//!   1. log heads are unset, empty or one entry;
//!   2. a durable node entry holds its slot's words before the batch: the
//!      oFence between the entry's stores and its head's
//!      (`ConvLog::insert_instrs`);
//!   3. while the metadata log is active, every slot whose words differ from
//!      before the batch has a durable node entry: the dFence after each
//!      compaction thread's log insert, before its zeroing store;
//!      compaction's barrier before moving nodes into other threads' slots;
//!      compaction's kernel end before phases 1 and 2;
//!   4. while it is inactive, the map is all old (before `logHashMap`) or all
//!      new: `logHashMap`'s dFence and kernel end before compaction, phase
//!      2's dFence and kernel end before `clearLog1`.
//!
//! After recovery (every partition cleared, the metadata log still
//! active) clause 3 holds only if the whole map is back to its old words:
//! the batch undone as a whole.

mod gen;
mod inc;
pub mod sim;

use sbrp_trace::program::Program;

use crate::image::PmImage;
use crate::incremental::Incremental;
use crate::layout::Alloc;
use crate::log::ConvLog;
use crate::{App, Build};
use gen::{HmProgram, Kern, RecInput};
use sim::{Insert, Node, SLOTS};

pub const DEFAULT_SIZE: u64 = 25_000;
pub const MIN_SIZE: u64 = 1;
pub const MAX_SIZE: u64 = (299 * 309 + 308) / 2;
/// Slots of the artifact's map (= node-log partitions).
pub const MAP_SLOTS: u64 = sim::BUCKETS * SLOTS;

/// Where HM's data lives.
#[derive(Clone, Debug)]
pub struct Layout {
    pub map: u64,
    pub node_log: ConvLog,
    pub md_log: ConvLog,
    pub offsets: u64,
    pub modified: u64,
    pub keys: u64,
    pub values: u64,
    pub successful: u64,
    pub found: u64,
    pub abort: u64,
    pub count: u64,
}

impl Layout {
    fn new(n: u64, slots: u64) -> Layout {
        let nb = slots / SLOTS;
        let mut a = Alloc::default();
        let map = a.pm(slots * 8 + 4);
        let node_log = ConvLog::new(&mut a, slots * 8, slots);
        let md_log = ConvLog::new(&mut a, 4, 1);
        Layout {
            map,
            node_log,
            md_log,
            offsets: a.global(4 * nb),
            modified: a.global(4 * nb),
            keys: a.global(4 * n),
            values: a.global(4 * n),
            successful: a.global(4),
            found: a.global(4 * n),
            abort: a.global(4),
            count: a.global(4),
        }
    }
    /// Key word of slot `p` (its value word is 4 B above).
    pub fn slot(&self, p: u64) -> u64 {
        self.map + 8 * p
    }
}

pub struct Hm {
    n: u64,
    /// Buckets and slots of the map.
    nb: u64,
    slots: u64,
    lay: Layout,
    /// The timed batch.
    ins: Insert,
    initial: PmImage,
    /// Every slot's (key, value) words before and after the timed batch.
    old: Vec<[u64; 2]>,
    new: Vec<[u64; 2]>,
}

/// A batch's stores to the map, in an order that leaves each word as the
/// kernels do: compaction zeroes every key word and moves the kept nodes to
/// the front, phase 1 appends the keys, phase 2 zeroes the key words it
/// reads and stores each placed node.
fn apply_batch(lay: &Layout, ins: &Insert, img: &mut PmImage) {
    let put = |img: &mut PmImage, p: u64, (k, v): Node| {
        img.set(lay.slot(p), k as u64);
        img.set(lay.slot(p) + 4, v as u64);
    };
    for p in 0..ins.buckets_n * SLOTS {
        img.set(lay.slot(p), 0);
    }
    for (b, kept) in ins.resident.iter().enumerate() {
        for (r, &(_, node)) in kept.iter().enumerate() {
            put(img, b as u64 * SLOTS + r as u64, node);
        }
    }
    for (i, &p) in ins.phase1_slot.iter().enumerate() {
        put(img, p, (ins.keys[i], ins.values[i]));
    }
    for (b, bk) in ins.buckets.iter().enumerate() {
        let base = b as u64 * SLOTS;
        for t in 0..bk.count as u64 {
            img.set(lay.slot(base + t), 0);
        }
        for (t, e) in bk.placed.iter().enumerate() {
            if let Some(e) = e {
                put(img, base + e, ins.members[b][t]);
            }
        }
    }
}

impl Hm {
    pub fn new(size: Option<u64>) -> Result<Self, String> {
        let n = size.unwrap_or(DEFAULT_SIZE);
        if !(MIN_SIZE..=MAX_SIZE).contains(&n) {
            return Err(format!(
                "hm: size {n} refused: the number of keys must be from {MIN_SIZE} to {MAX_SIZE} \
                 (the map then holds twice as many; beyond, the artifact adds buckets and rehashes)"
            ));
        }
        let nb = sim::buckets_for(n);
        let slots = nb * SLOTS;
        let lay = Layout::new(n, slots);
        let mut initial = PmImage::default();
        lay.node_log.set_up(&mut initial);
        lay.md_log.set_up(&mut initial);
        apply_batch(&lay, &sim::earlier(n), &mut initial);
        let words = |img: &PmImage| -> Vec<[u64; 2]> {
            (0..slots)
                .map(|p| [img.get(lay.slot(p)), img.get(lay.slot(p) + 4)])
                .collect()
        };
        let old = words(&initial);
        let resident = (0..nb)
            .map(|b| {
                (0..SLOTS)
                    .filter(|t| old[(b * SLOTS + t) as usize][0] != 0)
                    .map(|t| {
                        let [k, v] = old[(b * SLOTS + t) as usize];
                        (t, (k as u32, v as u32))
                    })
                    .collect()
            })
            .collect();
        let ins = sim::timed(n, resident);
        let mut after = initial.clone();
        apply_batch(&lay, &ins, &mut after);
        let new = words(&after);
        Ok(Hm {
            n,
            nb,
            slots,
            lay,
            ins,
            initial,
            old,
            new,
        })
    }

    pub fn layout(&self) -> &Layout {
        &self.lay
    }
    /// Buckets of the map.
    pub fn buckets(&self) -> u64 {
        self.nb
    }
    /// Slot `p`'s (key, value) words before and after the timed batch.
    pub fn old_words(&self, p: u64) -> [u64; 2] {
        self.old[p as usize]
    }
    pub fn new_words(&self, p: u64) -> [u64; 2] {
        self.new[p as usize]
    }

    /// The key slot `p` holds after a crash-free run.
    fn post_key(&self, p: u64) -> u32 {
        self.new[p as usize][0] as u32
    }

    fn program_of(&self, name: &str, kinds: Vec<Kern>, build: Build) -> Box<dyn Program + '_> {
        Box::new(HmProgram::new(
            self,
            name,
            kinds,
            build,
            RecInput::default(),
        ))
    }

    fn node_entry(&self, img: &PmImage, p: u64) -> Option<[u64; 2]> {
        let log = &self.lay.node_log;
        (log.size_of(img, p) >= 8).then(|| [log.word_of(img, p, 0), log.word_of(img, p, 1)])
    }

    /// Every slot's (key, value) words in `img`, read in one pass.
    fn slot_words(&self, img: &PmImage) -> Vec<[u64; 2]> {
        let mut w = vec![[0; 2]; self.slots as usize];
        let m = self.lay.map;
        for (&a, &v) in img.words.range(m..self.lay.slot(self.slots)) {
            if (a - m).is_multiple_of(4) {
                w[((a - m) / 8) as usize][((a - m) % 8 / 4) as usize] = v;
            }
        }
        w
    }
}

impl App for Hm {
    fn name(&self) -> &'static str {
        "hm"
    }
    fn size(&self) -> u64 {
        self.n
    }
    fn size_unit(&self) -> &'static str {
        "keys"
    }
    fn initial_image(&self) -> PmImage {
        self.initial.clone()
    }
    fn program(&self, build: Build) -> Box<dyn Program + '_> {
        use Kern::*;
        let kinds = vec![
            LogHashMap,
            MarkBuckets,
            Compact,
            Phase1,
            Phase2,
            ClearLog1,
            ClearLog2,
            Find,
        ];
        self.program_of("hm", kinds, build)
    }
    fn final_image(&self) -> PmImage {
        let mut img = self.crash_image();
        self.lay.md_log.apply_clear(&mut img, 0);
        for p in 0..self.slots {
            self.lay.node_log.apply_clear(&mut img, p);
        }
        img
    }
    fn crash_program(&self) -> Box<dyn Program + '_> {
        use Kern::*;
        let kinds = vec![LogHashMap, MarkBuckets, Compact, Phase1, Phase2];
        self.program_of("hm_rec", kinds, Build::Gpu)
    }
    fn crash_image(&self) -> PmImage {
        let lay = &self.lay;
        let mut img = self.initial_image();
        lay.md_log.apply_insert(&mut img, 0, &[0]);
        for p in 0..self.slots {
            lay.node_log
                .apply_insert(&mut img, p, &self.old[p as usize]);
        }
        apply_batch(lay, &self.ins, &mut img);
        img
    }
    fn recovery(&self, image: &PmImage) -> Box<dyn Program + '_> {
        let active = self.lay.md_log.size_of(image, 0) > 0;
        let kinds = if active {
            vec![Kern::GetNodeCount, Kern::Recover]
        } else {
            vec![Kern::GetNodeCount]
        };
        let rec = RecInput {
            active,
            entries: (0..self.slots).map(|p| self.node_entry(image, p)).collect(),
        };
        Box::new(HmProgram::new(self, "hm_recovery", kinds, Build::Gpu, rec))
    }
    fn recover(&self, image: &PmImage) -> PmImage {
        let mut img = image.clone();
        if self.lay.md_log.size_of(image, 0) == 0 {
            return img;
        }
        for p in 0..self.slots {
            if let Some(e) = self.node_entry(image, p) {
                img.set(self.lay.slot(p), e[0]);
                img.set(self.lay.slot(p) + 4, e[1]);
            }
            self.lay.node_log.apply_clear(&mut img, p);
        }
        img
    }
    fn incremental(&self, img: &PmImage) -> Option<Box<dyn Incremental + '_>> {
        Some(Box::new(inc::HmInc::new(self, img)))
    }
    fn check(&self, image: &PmImage) -> Result<(), String> {
        let lay = &self.lay;
        let log = &lay.node_log;
        log.check_shape(image, 8, "hm node")?;
        lay.md_log.check_shape(image, 4, "hm metadata")?;
        // Clause 2, and which slots have a durable entry.
        let mut logged = vec![false; self.slots as usize];
        for (&a, _) in image.words.range(log.head(0)..log.head(self.slots)) {
            let p = (a - log.head(0)) / 8;
            if !(a - log.head(0)).is_multiple_of(8) {
                continue;
            }
            if let Some(e) = self.node_entry(image, p) {
                if e != self.old[p as usize] {
                    return Err(format!(
                        "hm: node log partition {p} is durable but holds {e:?}, not the slot's \
                         old words {:?} (entry not durable before its head)",
                        self.old[p as usize]
                    ));
                }
                logged[p as usize] = true;
            }
        }
        let cur = self.slot_words(image);
        let active = lay.md_log.size_of(image, 0) == 4;
        if active {
            // Clause 3.
            for (p, w) in cur.iter().enumerate() {
                if *w != self.old[p] && !logged[p] {
                    return Err(format!(
                        "hm: slot {p} holds {w:?}, not its old words {:?}, and no durable log \
                         entry covers it while the transaction is active (changed before its \
                         log, or not restored)",
                        self.old[p]
                    ));
                }
            }
            return Ok(());
        }
        // Clause 4.
        if cur == self.old || cur == self.new {
            return Ok(());
        }
        let p = (0..cur.len())
            .find(|&p| cur[p] != self.new[p])
            .unwrap_or_default();
        let q = (0..cur.len())
            .find(|&p| cur[p] != self.old[p])
            .unwrap_or_default();
        Err(format!(
            "hm: the transaction is inactive but the map is neither all old nor all new: slot \
             {p} holds {:?}, not its new {:?}, and slot {q} holds {:?}, not its old {:?}",
            cur[p], self.new[p], cur[q], self.old[q]
        ))
    }
    fn corrupt(&self, image: &PmImage) -> PmImage {
        let mut img = image.clone();
        img.set(self.lay.slot(0), 0xdead_beef);
        img.set(self.lay.slot(0) + 4, 0xbad);
        img.set(self.lay.node_log.head(0), 0);
        img
    }
}
