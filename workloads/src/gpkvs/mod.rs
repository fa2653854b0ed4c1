//! gpKVS: one batch of inserts into a PM hash table with a conventional undo
//! log (`../shared/notes/sbrp-benchmarks.md` §2.1, sizes §2.7, decisions
//! §6.10). `sim` computes the batch, `gen` emits the kernels.
//!
//! Decisions:
//! - Buckets are 32 B (4 signatures, then 4 locs; §6.10), the table 2^22
//!   buckets in one 128-MiB PM region, zero before the run (host memset), so
//!   the initial image is empty and `setupPartitions` is part of the run.
//! - The log has `n + 1` partitions of 16 B; partition 0 holds `logDummy`'s
//!   all-zero entry (the artifact's is uninitialised) and says whether a
//!   batch is active; key `i` logs into partition `i + 1`.
//! - `clearLogs` clears partitions `0..n` as the artifact's bound does,
//!   leaving the last partition's entry; only partition 0 decides activity.
//! - Recovery takes partition bounds from the layout, not from the durable
//!   tails, and restores only partitions that hold a whole entry.
//! - The crash run and the recovery kernels are the `*_rec` binary built
//!   without `GPM_EPOCH_MODEL` (`Build::Gpu`): Figure 11 compares SBRP and
//!   epoch only (§0.8, §6.15).
//! - Sizes: multiples of 2,048 (16 blocks x 128 keys a block step, so every
//!   warp runs the same number of steps) from 2,048 to 1,048,576.
//! - The invariant (`check`), each clause with the program ordering it
//!   relies on (`gen.rs`; a kernel's persists are all durable before the
//!   next kernel starts: `docs/model.md`, "Persistency models", kernel end):
//!   1. every log head is unset, empty or one entry (heads only move by one
//!      entry);
//!   2. a durable entry is the one its key logged: the oFence between the
//!      entry's four stores and its head's stores (`ConvLog::insert_instrs`);
//!   3. every table word is 0 (the table starts empty) or a value the batch
//!      stored there (data, no ordering);
//!   4. before commit, a new loc needs a durable entry covering its slot:
//!      the oFence after the head's stores, before the loc store;
//!   5. committed (partition 0 inactive, and a new loc is durable or a
//!      covered slot holds a signature, which recovery would have zeroed):
//!      every slot the batch wrote holds its final (signature, loc), all of
//!      them, not one: the dFence after each loc store and the insert
//!      kernel's end before `invalidateLog` clears partition 0. That no
//!      entry exists before the batch: `logDummy`'s kernel ends before the
//!      insert kernel. The final signature is any of those stored in the
//!      slot's last writing iteration (`sim::Batch::last_sigs`): groups of
//!      one iteration race for a slot, and the GPU model may order their
//!      stores unlike `sim`'s race resolution, which the program follows.
//!
//! Signatures are stored before logging (the artifact's order), so a
//! signature may be new in a slot no entry covers; recovery cannot undo
//! those and the check accepts them (and keeps them out of clause 5's
//! evidence).

mod gen;
mod inc;
pub mod sim;

use std::collections::{HashMap, HashSet};

use sbrp_trace::program::Program;

use crate::image::PmImage;
use crate::incremental::Incremental;
use crate::layout::Alloc;
use crate::log::ConvLog;
use crate::{App, Build};
use gen::{Kern, KvsProgram, RecInput};
use sim::{Batch, BLOCKS, BUCKETS, GROUPS};

/// The artifact's batch (§2.1 Input) and the size limits.
pub const DEFAULT_SIZE: u64 = 65_536;
pub const MIN_SIZE: u64 = BLOCKS * GROUPS as u64;
pub const MAX_SIZE: u64 = 1 << 20;

/// Where gpKVS's data lives.
#[derive(Clone, Debug)]
pub struct Layout {
    pub table: u64,
    pub log: ConvLog,
    /// Input elements (12 B: sig, hash, loc).
    pub input: u64,
    pub blk_ptrs: u64,
    pub blk_nums: u64,
    /// Recovery's validity flag.
    pub valid: u64,
}

impl Layout {
    fn new(n: u64) -> Layout {
        let mut a = Alloc::default();
        let table = a.pm(BUCKETS * 32);
        let log = ConvLog::new(&mut a, 16 * (n + 1), n + 1);
        Layout {
            table,
            log,
            input: a.global(12 * n),
            blk_ptrs: a.global(8 * BLOCKS),
            blk_nums: a.global(4 * BLOCKS),
            valid: a.global(8),
        }
    }
    /// Signature word of slot `bucket * 4 + lane`.
    pub fn sig_addr(&self, slot: u64) -> u64 {
        self.table + (slot / 4) * 32 + 4 * (slot % 4)
    }
    pub fn loc_addr(&self, slot: u64) -> u64 {
        self.sig_addr(slot) + 16
    }
}

/// The slot a log entry {lane, sig, bucket, loc} names (masked into range).
fn entry_slot(e: &[u64; 4]) -> u64 {
    (e[2] & (BUCKETS - 1)) * 4 + (e[0] & 3)
}

pub struct Gpkvs {
    n: u64,
    lay: Layout,
    batch: Batch,
}

impl Gpkvs {
    pub fn new(size: Option<u64>) -> Result<Self, String> {
        let n = size.unwrap_or(DEFAULT_SIZE);
        if !(MIN_SIZE..=MAX_SIZE).contains(&n) || !n.is_multiple_of(MIN_SIZE) {
            return Err(format!(
                "gpkvs: size {n} refused: the batch must be a multiple of {MIN_SIZE} inserts \
                 (16 blocks x 128 keys a step) from {MIN_SIZE} to {MAX_SIZE}"
            ));
        }
        Ok(Gpkvs {
            n,
            lay: Layout::new(n),
            batch: sim::run(n),
        })
    }

    pub fn layout(&self) -> &Layout {
        &self.lay
    }

    /// The entry key `i` logs, if it logs.
    fn entry_of(&self, key: usize) -> Option<[u64; 4]> {
        self.batch.logged[key].map(|slot| [slot % 4, 0, slot / 4, 0])
    }

    fn program_of(&self, name: &str, kinds: Vec<Kern>, build: Build) -> Box<dyn Program + '_> {
        Box::new(KvsProgram::new(
            self,
            name,
            kinds,
            build,
            RecInput::default(),
        ))
    }

    /// The log's partition `p`'s entry, if it holds a whole one.
    fn durable_entry(&self, img: &PmImage, p: u64) -> Option<[u64; 4]> {
        let log = &self.lay.log;
        (log.size_of(img, p) >= 16).then(|| std::array::from_fn(|k| log.word_of(img, p, k as u64)))
    }
}

impl App for Gpkvs {
    fn name(&self) -> &'static str {
        "gpkvs"
    }
    fn size(&self) -> u64 {
        self.n
    }
    fn size_unit(&self) -> &'static str {
        "inserts"
    }
    fn initial_image(&self) -> PmImage {
        PmImage::default()
    }
    fn program(&self, build: Build) -> Box<dyn Program + '_> {
        use Kern::*;
        let kinds = vec![Setup, Dummy, Insert, Invalidate, Clear];
        self.program_of("gpkvs", kinds, build)
    }
    fn final_image(&self) -> PmImage {
        let mut img = self.crash_image();
        let log = &self.lay.log;
        log.apply_clear(&mut img, 0);
        for p in 0..self.n {
            log.apply_clear(&mut img, p);
        }
        img
    }
    fn crash_program(&self) -> Box<dyn Program + '_> {
        use Kern::*;
        self.program_of("gpkvs_rec", vec![Setup, Dummy, Insert], Build::Gpu)
    }
    fn crash_image(&self) -> PmImage {
        let log = &self.lay.log;
        let mut img = PmImage::default();
        log.set_up(&mut img);
        log.apply_insert(&mut img, 0, &[0; 4]);
        for key in 0..self.n as usize {
            if let Some(e) = self.entry_of(key) {
                log.apply_insert(&mut img, key as u64 + 1, &e);
            }
        }
        let logged: HashSet<u64> = self.batch.logged.iter().flatten().copied().collect();
        for (&slot, &(sig, loc)) in &self.batch.post {
            img.set(self.lay.sig_addr(slot), sig as u64);
            if logged.contains(&slot) {
                img.set(self.lay.loc_addr(slot), loc as u64);
            }
        }
        img
    }
    fn recovery(&self, image: &PmImage) -> Box<dyn Program + '_> {
        let log = &self.lay.log;
        let rec = RecInput {
            valid: log.size_of(image, 0) > 0,
            entries: (0..log.parts)
                .map(|p| self.durable_entry(image, p))
                .collect(),
        };
        use Kern::*;
        let kinds = vec![CheckValid, Recover, Invalidate];
        Box::new(KvsProgram::new(
            self,
            "gpkvs_recovery",
            kinds,
            Build::Gpu,
            rec,
        ))
    }
    fn recover(&self, image: &PmImage) -> PmImage {
        let log = &self.lay.log;
        let mut img = image.clone();
        if log.size_of(image, 0) > 0 {
            for p in 0..log.parts {
                if let Some(e) = self.durable_entry(image, p) {
                    let slot = entry_slot(&e);
                    img.set(self.lay.sig_addr(slot), 0);
                    img.set(self.lay.loc_addr(slot), e[3]);
                }
            }
        }
        log.apply_clear(&mut img, 0);
        img
    }
    fn incremental(&self, img: &PmImage) -> Option<Box<dyn Incremental + '_>> {
        Some(Box::new(inc::GpkvsInc::new(self, img)))
    }
    fn check(&self, image: &PmImage) -> Result<(), String> {
        let log = &self.lay.log;
        log.check_shape(image, 16, "gpkvs")?;
        let active = log.size_of(image, 0) == 16;
        // Clause 2, over the partitions whose head says one entry.
        let mut covered = HashSet::new();
        let h0 = log.head(0);
        for (&a, &h) in image.words.range(log.head(1)..log.head(log.parts)) {
            let p = (a - h0) / 8;
            if !(a - h0).is_multiple_of(8) || (h & 0xffff_ffff) < log.start(p) + 16 {
                continue;
            }
            let e: [u64; 4] = std::array::from_fn(|k| log.word_of(image, p, k as u64));
            match self.entry_of(p as usize - 1) {
                Some(want) if want == e => {
                    covered.insert(entry_slot(&e));
                }
                Some(want) => {
                    return Err(format!(
                        "gpkvs: log partition {p} is durable but holds {e:?}, not the entry \
                         {want:?} it logged (entry not durable before its head)"
                    ))
                }
                None => {
                    return Err(format!(
                        "gpkvs: log partition {p} holds an entry but key {} never logged",
                        p - 1
                    ))
                }
            }
        }
        // The table's words by slot (one pass); clause 3 for slots the
        // batch never wrote.
        let b = &self.batch;
        let mut cur: HashMap<u64, (u64, u64)> = HashMap::new();
        let end = self.lay.table + BUCKETS * 32;
        for (&a, &v) in image.words.range(self.lay.table..end) {
            let off = a - self.lay.table;
            let slot = (off / 32) * 4 + (off % 16) / 4;
            if v != 0 && !b.post.contains_key(&slot) {
                return Err(format!(
                    "gpkvs: table word {a:#x} = {v} in a slot the batch never wrote"
                ));
            }
            let w = cur.entry(slot).or_default();
            if off % 32 < 16 {
                w.0 = v;
            } else {
                w.1 = v;
            }
        }
        let at = |slot: u64| cur.get(&slot).copied().unwrap_or_default();
        // Evidence that the batch committed (clause 5): a new loc, or (when
        // inactive) a slot some durable entry covers still holding a
        // signature, which recovery would have zeroed.
        let committed = !active
            && (b
                .post
                .iter()
                .any(|(&slot, &(_, loc))| loc != 0 && at(slot).1 == loc as u64)
                || covered.iter().any(|&slot| at(slot).0 != 0));
        for (&slot, &(sig, loc)) in &b.post {
            let (s, l) = at(slot);
            let (bucket, lane) = (slot / 4, slot % 4);
            if committed {
                // A signature of the slot's last writing iteration: the one
                // the program follows ({sig}) or one that raced with it.
                let last = &b.last_sigs[&slot];
                if !last.contains(&(s as u32)) || l != loc as u64 {
                    return Err(format!(
                        "gpkvs: bucket {bucket} slot {lane} holds ({s}, {l}) with the batch \
                         committed, not the batch's ({sig}, {loc}) (a value lost; final \
                         signatures {last:?})"
                    ));
                }
                continue;
            }
            if s != 0 && !b.sig_writes[&slot].contains(&(s as u32)) {
                return Err(format!(
                    "gpkvs: bucket {bucket} slot {lane} signature {s} is neither old (0) nor stored by the batch"
                ));
            }
            if l != 0 && l != loc as u64 {
                return Err(format!(
                    "gpkvs: bucket {bucket} slot {lane} loc {l} is neither old (0) nor new ({loc})"
                ));
            }
            if l != 0 && !covered.contains(&slot) {
                return Err(format!(
                    "gpkvs: bucket {bucket} slot {lane} has its new loc {l} but no durable log \
                     entry covers it (value persisted before its log)"
                ));
            }
        }
        Ok(())
    }
    fn corrupt(&self, image: &PmImage) -> PmImage {
        let mut img = image.clone();
        if let Some(slot) = self.batch.logged.iter().flatten().next() {
            img.set(self.lay.loc_addr(*slot), 0xdead_beef);
        }
        let log = &self.lay.log;
        img.set(log.head(1), log.start(1));
        img
    }
}
