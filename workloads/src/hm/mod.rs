//! HM: a batch of keys inserted into a PM cuckoo hash map (300 buckets of
//! 576 slots) with a conventional undo log per slot and a metadata log
//! marking the transaction (`../shared/notes/sbrp-benchmarks.md` §2.2, sizes
//! §2.7, §6.9). `sim` computes the insert, `gen` emits the kernels.
//!
//! Decisions:
//! - Size = number of keys, default 25,000 (the artifact's; §6.9); keys are
//!   `n + 1 ..= 2n`. Refused below 300 (some bucket would get no key, and
//!   the kernels assume every bucket is modified) and above 92,699 (the
//!   artifact would grow the bucket count and rehash, not generated).
//! - The logs' `setupPartitions` run in the map's constructor, before the
//!   kernels the note lists, so their heads and tails are in the initial
//!   image. The node count word is written by the host (`cudaMemcpy`) and
//!   is left out of every image.
//! - `recoverFromLog` covers `n / 409 + 1` buckets as the note says (62 for
//!   25,000 keys); the host memset of the map before it is functional: it is
//!   in `recover` and `host_memset`, not in the recovery program. With an
//!   empty metadata log the artifact aborts: recovery is `getNodeCount`
//!   alone and changes nothing.
//! - The crash run and the recovery kernels are the `*_rec` binary built
//!   without `GPM_EPOCH_MODEL` (`Build::Gpu`): Figure 11 compares SBRP and
//!   epoch only (§0.8, §6.15).
//! - The 8-B zeroing store of a slot is one word at the slot's address in
//!   the image; the value word beside it is 0 already (the map starts
//!   empty).
//! - The invariant (`check`): log heads are empty or one entry; a durable
//!   node entry holds the slot's pre-batch contents (empty); while the
//!   metadata log is active every changed slot has a durable node entry (the
//!   dFence between logging and zeroing); when it is inactive the map is all
//!   old (empty) or all new.

mod gen;
pub mod sim;

use std::collections::HashMap;

use sbrp_trace::program::Program;

use crate::image::PmImage;
use crate::layout::Alloc;
use crate::log::ConvLog;
use crate::{App, Build};
use gen::{HmProgram, Kern, RecInput};
use sim::{Insert, BUCKETS, SLOTS};

pub const DEFAULT_SIZE: u64 = 25_000;
pub const MIN_SIZE: u64 = BUCKETS;
pub const MAX_SIZE: u64 = 299 * 309 + 308;
/// Slots of the map (= node-log partitions).
pub const MAP_SLOTS: u64 = BUCKETS * SLOTS;

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
    fn new(n: u64) -> Layout {
        let mut a = Alloc::default();
        let map = a.pm(MAP_SLOTS * 8 + 4);
        let node_log = ConvLog::new(&mut a, MAP_SLOTS * 8, MAP_SLOTS);
        let md_log = ConvLog::new(&mut a, 4, 1);
        Layout {
            map,
            node_log,
            md_log,
            offsets: a.global(4 * BUCKETS),
            modified: a.global(4 * BUCKETS),
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
    lay: Layout,
    ins: Insert,
    /// (key, value) after the run of every slot the insert wrote.
    post: HashMap<u64, (u32, u32)>,
}

impl Hm {
    pub fn new(size: Option<u64>) -> Result<Self, String> {
        let n = size.unwrap_or(DEFAULT_SIZE);
        if !(MIN_SIZE..=MAX_SIZE).contains(&n) {
            return Err(format!(
                "hm: size {n} refused: the number of keys must be from {MIN_SIZE} (a key per \
                 bucket) to {MAX_SIZE} (beyond, the artifact adds buckets and rehashes)"
            ));
        }
        let ins = sim::run(n);
        let mut post = HashMap::new();
        for (i, &s) in ins.phase1_slot.iter().enumerate() {
            post.insert(s, (ins.keys[i], ins.values[i]));
        }
        for (b, bk) in ins.buckets.iter().enumerate() {
            for t in 0..bk.count as u64 {
                post.entry(b as u64 * SLOTS + t).or_insert((0, 0)).0 = 0;
            }
        }
        for (b, bk) in ins.buckets.iter().enumerate() {
            for (t, e) in bk.placed.iter().enumerate() {
                if let Some(e) = e {
                    let i = ins.members[b][t];
                    post.insert(b as u64 * SLOTS + e, (ins.keys[i], ins.values[i]));
                }
            }
        }
        Ok(Hm {
            n,
            lay: Layout::new(n),
            ins,
            post,
        })
    }

    pub fn layout(&self) -> &Layout {
        &self.lay
    }

    /// The key slot `p` holds after a crash-free run.
    fn post_key(&self, p: u64) -> u32 {
        self.post.get(&p).map_or(0, |x| x.0)
    }

    /// Buckets `recoverFromLog` walks (§2.2 Recovery).
    fn recovery_buckets(&self) -> u64 {
        (self.n / 409 + 1).min(BUCKETS)
    }

    /// The host's memset of the map before `recoverFromLog` (§2.2 Recovery
    /// step 2): every slot word zero.
    pub fn host_memset(&self, image: &PmImage) -> PmImage {
        let mut img = image.clone();
        let end = self.lay.slot(MAP_SLOTS);
        let addrs: Vec<u64> = img
            .words
            .range(self.lay.map..end)
            .map(|(&a, _)| a)
            .collect();
        for a in addrs {
            img.words.remove(&a);
        }
        img
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

    fn slot_of(&self, img: &PmImage, p: u64) -> (u64, u64) {
        (img.get(self.lay.slot(p)), img.get(self.lay.slot(p) + 4))
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
        let mut img = PmImage::default();
        self.lay.node_log.set_up(&mut img);
        self.lay.md_log.set_up(&mut img);
        img
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
        for p in 0..MAP_SLOTS {
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
        for p in 0..MAP_SLOTS {
            lay.node_log.apply_insert(&mut img, p, &[0, 0]);
            img.set(lay.slot(p), 0);
        }
        for (p, &(k, v)) in &self.post {
            img.set(lay.slot(*p), k as u64);
            img.set(lay.slot(*p) + 4, v as u64);
        }
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
            entries: (0..MAP_SLOTS).map(|p| self.node_entry(image, p)).collect(),
        };
        Box::new(HmProgram::new(self, "hm_recovery", kinds, Build::Gpu, rec))
    }
    fn recover(&self, image: &PmImage) -> PmImage {
        if self.lay.md_log.size_of(image, 0) == 0 {
            return image.clone();
        }
        let mut img = self.host_memset(image);
        for p in 0..self.recovery_buckets() * SLOTS {
            if let Some(e) = self.node_entry(image, p) {
                img.set(self.lay.slot(p), e[0]);
                img.set(self.lay.slot(p) + 4, e[1]);
            }
            self.lay.node_log.apply_clear(&mut img, p);
        }
        img
    }
    fn check(&self, image: &PmImage) -> Result<(), String> {
        let lay = &self.lay;
        lay.node_log.check_shape(image, 8, "hm node")?;
        lay.md_log.check_shape(image, 4, "hm metadata")?;
        for p in 0..MAP_SLOTS {
            if let Some(e) = self.node_entry(image, p) {
                if e != [0, 0] {
                    return Err(format!(
                        "hm: node log partition {p} is durable but holds {e:?}, not the slot's \
                         old contents [0, 0] (entry not durable before its head)"
                    ));
                }
            }
        }
        let end = lay.slot(MAP_SLOTS);
        let mut changed: Vec<u64> = image
            .words
            .range(lay.map..end)
            .filter(|(_, &v)| v != 0)
            .map(|(&a, _)| (a - lay.map) / 8)
            .collect();
        changed.dedup();
        if lay.md_log.size_of(image, 0) == 4 {
            for &p in &changed {
                if self.node_entry(image, p).is_none() {
                    let (k, v) = self.slot_of(image, p);
                    return Err(format!(
                        "hm: slot {p} holds ({k}, {v}) but no durable log entry covers it \
                         while the transaction is active (changed before its log)"
                    ));
                }
            }
            return Ok(());
        }
        if changed.is_empty() {
            return Ok(());
        }
        for p in changed.iter().chain(self.post.keys()) {
            let (k, v) = self.slot_of(image, *p);
            let (pk, pv) = self.post.get(p).copied().unwrap_or((0, 0));
            if (k, v) != (pk as u64, pv as u64) {
                return Err(format!(
                    "hm: slot {p} holds ({k}, {v}) with the transaction inactive: neither its \
                     old (0, 0) nor its new ({pk}, {pv}) contents"
                ));
            }
        }
        Ok(())
    }
    fn corrupt(&self, image: &PmImage) -> PmImage {
        let mut img = image.clone();
        img.set(self.lay.slot(0), 0xdead_beef);
        img.set(self.lay.slot(0) + 4, 0xbad);
        img.set(self.lay.node_log.head(0), 0);
        img
    }
}
