//! MQ: 120 persistent queues, each owned by one block, with batches of 4,096
//! ints inserted or removed as all-or-nothing transactions. Follows
//! `../shared/notes/sbrp-benchmarks.md` §2.5 (data, input, kernels, per-block
//! sequence, recovery), §2.0 (what is timed, crash emulation), §2.7 (sizes)
//! and §6 items 14 (all kernels timed), 16 (4 blocks per SM: thread-limited,
//! so `regs` is left unknown) and 19 (random inputs).
//!
//! Decisions where the note leaves room:
//! - Commands: glibc's `rand()` after `srand(100)` (reimplemented, so the
//!   queue picks are the artifact's, §6.19), queue = `rand() % 120`; per
//!   queue the ops alternate insert, remove, ... so a queue never holds more
//!   than one batch. Then one commit per queue. Element `j` of the batch of
//!   command `i` has the value `i * 4096 + j` (the note gives no values; this
//!   one names its batch and position, which the invariant check uses).
//! - head/tail are slot indices modulo the 32,768-int array; a record packs
//!   them as `head << 32 | tail`; an absent record is -1 (`NONE`), as
//!   initKernel writes.
//! - Done markers: one warp instruction releases its 32 lanes' markers, so
//!   each warp's markers are one 8-byte flag word (`prel.block shared`, value
//!   = the queue's op number + 1, since a plain shared store does not change a
//!   flag word in the model); the leader's 128 acquires, one per marker, poll
//!   the word of the marker's warp. Each acquire spins on its marker rather
//!   than the artifact's repeated passes over all 128 (the same count when the
//!   markers are already set). Marker words have per-block addresses because
//!   the model keeps flags by address.
//! - The command walk: every warp issues one broadcast 8-byte volatile load
//!   of each command (its type and queue), as all 128 threads run the loop.
//! - Stores to volatile memory carry values only where cheap (the queue
//!   object); the remove's buffer stores carry none.
//! - `crash_program` (MQ_rec): initKernel + mainKernel without completion
//!   records, the commits' dFences kept. `recovery` follows the note: one
//!   command per thread (grid-stride when commands outnumber threads); where
//!   several commands of one queue write its head/tail, the latest command
//!   wins (the artifact's threads race there); a record word never stored
//!   (a crash before initKernel wrote it) counts as absent. It writes only volatile
//!   head/tail, so `recover` leaves the PM image unchanged; `check` applies
//!   the same rule to the records.
//! - Sizes: 1..=100,000 batches (the walk makes each block's code grow with
//!   the command count).
//! - The invariant (`check`), each clause with the program ordering it
//!   relies on: 1. a queue's start records are durable in op order: the
//!   leader's oFence after each start record; 2. the head/tail recovery
//!   rebuilds (the completion record, else the start record, of the latest
//!   op with a start record) is a state of the queue's history (data);
//!   3. every batch between that head and tail is entirely present: each
//!   warp's block-scope release of its marker after its batch stores,
//!   acquired by the leader before it writes the completion record that
//!   puts the batch inside (a start record holds the state before its op).

mod inc;

use sbrp_trace::program::{CtaCode, FenceScope, Instr, KernelInfo, Program, Space, Values};
use sbrp_trace::Scope;

use crate::incremental::Incremental;
use crate::layout::{self, lanes, Alloc};
use crate::{App, Build, PmImage};

pub const QUEUES: u32 = 120;
pub const THREADS: u32 = 128;
pub const WARPS: u32 = THREADS / 32;
/// Ints per batch.
pub const BATCH: u32 = 4096;
/// Ints per queue array.
pub const QUEUE_LEN: u32 = 32_768;
pub const DEFAULT_BATCHES: u64 = 2_000;
pub const MAX_BATCHES: u64 = 100_000;
/// The artifact's `srand(100)` (§2.5).
pub const SEED: u32 = 100;
/// An absent record (initKernel writes -1).
pub const NONE: u64 = u64::MAX;
/// Iterations of the copy loop: 4,096 ints over 128 threads.
const ITERS: u32 = BATCH / THREADS;
const CMD_BYTES: u64 = 24;
const QOBJ_BYTES: u64 = 16;
/// Shared-memory marker words: 128 B per block, a word per warp.
const MARKER_BASE: u64 = 0x10_0000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Insert,
    Remove,
    Commit,
}

/// One command of the host's list, with the queue's head/tail before and
/// after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Command {
    pub op: Op,
    pub queue: u32,
    /// Index of the op among its queue's inserts and removes.
    pub seq: u32,
    pub pre: (u32, u32),
    pub post: (u32, u32),
}

/// glibc's `rand()` (the TYPE_3 additive feedback generator), so the command
/// list is the artifact's (§6.19).
struct GlibcRand {
    r: Vec<u32>,
}

impl GlibcRand {
    fn new(seed: u32) -> Self {
        let seed = if seed == 0 { 1 } else { seed };
        let mut r: Vec<u32> = Vec::with_capacity(400);
        r.push(seed);
        for i in 1..31 {
            // Park-Miller step on the signed 32-bit seed.
            let prev = r[i - 1] as i32 as i64;
            let mut w = (16_807 * prev) % 2_147_483_647;
            if w < 0 {
                w += 2_147_483_647;
            }
            r.push(w as u32);
        }
        for i in 31..34 {
            r.push(r[i - 31]);
        }
        let mut g = GlibcRand { r };
        // glibc discards the first 310 outputs.
        for _ in 34..344 {
            g.step();
        }
        g
    }
    fn step(&mut self) -> u32 {
        let n = self.r.len();
        let v = self.r[n - 31].wrapping_add(self.r[n - 3]);
        self.r.push(v);
        if self.r.len() > 64 {
            self.r.drain(..self.r.len() - 34);
        }
        v
    }
    fn rand(&mut self) -> u32 {
        self.step() >> 1
    }
}

pub fn pack(h: u32, t: u32) -> u64 {
    (h as u64) << 32 | t as u64
}

fn unpack(v: u64) -> Option<(u32, u32)> {
    let (h, t) = ((v >> 32) as u32, v as u32);
    (h < QUEUE_LEN && t < QUEUE_LEN).then_some((h, t))
}

/// A record word of `img`; one never stored (a crash before initKernel
/// wrote it) counts as absent.
fn record(img: &PmImage, addr: u64) -> u64 {
    img.words.get(&addr).copied().unwrap_or(NONE)
}

/// Value of element `j` of the batch of command `i`.
pub fn elem(i: u32, j: u32) -> u64 {
    i as u64 * BATCH as u64 + j as u64
}

pub struct Mq {
    batches: u64,
    cmds: Vec<Command>,
    /// Insert/remove command indices of each queue, in order.
    per_queue: Vec<Vec<u32>>,
    // Volatile: commands, queue objects (head/tail word, array pointer),
    // element buffers (16 KiB per command).
    cmd_base: u64,
    qobj_base: u64,
    buf_base: u64,
    // PM: start records, completion records, queue arrays.
    start_base: u64,
    done_base: u64,
    arr_base: u64,
}

impl Mq {
    pub fn new(size: Option<u64>) -> Result<Self, String> {
        let batches = size.unwrap_or(DEFAULT_BATCHES);
        if batches == 0 || batches > MAX_BATCHES {
            return Err(format!(
                "mq: size {batches} batches is out of range 1..={MAX_BATCHES}"
            ));
        }
        let mut rng = GlibcRand::new(SEED);
        let mut ht = vec![(0u32, 0u32); QUEUES as usize];
        let mut per_queue = vec![Vec::new(); QUEUES as usize];
        let mut cmds = Vec::with_capacity(batches as usize + QUEUES as usize);
        for i in 0..batches as u32 {
            let q = rng.rand() % QUEUES;
            let ops = &mut per_queue[q as usize];
            let seq = ops.len() as u32;
            ops.push(i);
            let pre = ht[q as usize];
            let (op, post) = if seq.is_multiple_of(2) {
                (Op::Insert, (pre.0, (pre.1 + BATCH) % QUEUE_LEN))
            } else {
                (Op::Remove, ((pre.0 + BATCH) % QUEUE_LEN, pre.1))
            };
            ht[q as usize] = post;
            cmds.push(Command {
                op,
                queue: q,
                seq,
                pre,
                post,
            });
        }
        for q in 0..QUEUES {
            let s = ht[q as usize];
            cmds.push(Command {
                op: Op::Commit,
                queue: q,
                seq: per_queue[q as usize].len() as u32,
                pre: s,
                post: s,
            });
        }
        let n = cmds.len() as u64;
        let mut a = Alloc::default();
        let start_base = a.pm(n * 8);
        let done_base = a.pm(n * 8);
        let arr_base = a.pm(QUEUES as u64 * QUEUE_LEN as u64 * 4);
        let cmd_base = a.global(n * CMD_BYTES);
        let qobj_base = a.global(QUEUES as u64 * QOBJ_BYTES);
        let buf_base = a.global(n * BATCH as u64 * 4);
        Ok(Mq {
            batches,
            cmds,
            per_queue,
            cmd_base,
            qobj_base,
            buf_base,
            start_base,
            done_base,
            arr_base,
        })
    }

    pub fn commands(&self) -> &[Command] {
        &self.cmds
    }
    pub fn start_addr(&self, i: u32) -> u64 {
        self.start_base + i as u64 * 8
    }
    pub fn done_addr(&self, i: u32) -> u64 {
        self.done_base + i as u64 * 8
    }
    /// PM address of slot `s` of queue `q`.
    pub fn slot_addr(&self, q: u32, s: u32) -> u64 {
        self.arr_base + (q as u64 * QUEUE_LEN as u64 + (s % QUEUE_LEN) as u64) * 4
    }
    fn cmd_addr(&self, i: u32) -> u64 {
        self.cmd_base + i as u64 * CMD_BYTES
    }
    fn qobj_addr(&self, q: u32) -> u64 {
        self.qobj_base + q as u64 * QOBJ_BYTES
    }
    fn buf_addr(&self, i: u32, j: u32) -> u64 {
        self.buf_base + (i as u64 * BATCH as u64 + j as u64) * 4
    }
    /// The shared-memory marker word of warp `w` of block `b`.
    pub fn marker_addr(b: u32, w: u32) -> u64 {
        MARKER_BASE + b as u64 * 128 + w as u64 * 32
    }

    fn kernel(name: &str, smem: u32) -> KernelInfo {
        KernelInfo {
            name: name.into(),
            grid: QUEUES,
            block: THREADS,
            regs: 0,
            smem,
        }
    }

    fn image(&self, completion: bool) -> PmImage {
        let mut img = PmImage::default();
        for i in 0..self.cmds.len() as u32 {
            img.set(self.start_addr(i), NONE);
            img.set(self.done_addr(i), NONE);
        }
        for (i, c) in self.cmds.iter().enumerate() {
            let i = i as u32;
            if c.op == Op::Commit {
                continue;
            }
            img.set(self.start_addr(i), pack(c.pre.0, c.pre.1));
            if c.op == Op::Insert {
                for j in 0..BATCH {
                    img.set(self.slot_addr(c.queue, c.pre.1 + j), elem(i, j));
                }
            }
            if completion {
                img.set(self.done_addr(i), pack(c.post.0, c.post.1));
            }
        }
        img
    }

    /// The invariant for queue `q`.
    fn check_queue(&self, image: &PmImage, q: u32) -> Result<(), String> {
        for s in self.batch_starts(image, q)? {
            self.check_batch(image, q, s)?;
        }
        Ok(())
    }

    /// The slots where the batches of queue `q` start, from its head/tail
    /// as recovery rebuilds them (Err: no state of its history).
    fn batch_starts(&self, image: &PmImage, q: u32) -> Result<Vec<u32>, String> {
        let ((h, t), _) = self.recovered(image, q)?;
        let ops = &self.per_queue[q as usize];
        let known = (h, t) == (0, 0) || ops.iter().any(|&i| self.cmds[i as usize].post == (h, t));
        if !known {
            return Err(format!(
                "queue {q}: recovered head/tail ({h}, {t}) is no state of its history"
            ));
        }
        let len = (t + QUEUE_LEN - h) % QUEUE_LEN;
        Ok((0..len / BATCH)
            .map(|m| (h + m * BATCH) % QUEUE_LEN)
            .collect())
    }

    /// The command whose batch starts at slot `s` of queue `q`, by the
    /// value there.
    fn batch_owner(&self, image: &PmImage, q: u32, s: u32) -> Result<u32, String> {
        let v0 = image.get(self.slot_addr(q, s));
        let id = v0 / BATCH as u64;
        let owner = self.cmds.get(id as usize).filter(|c| {
            v0.is_multiple_of(BATCH as u64) && c.op == Op::Insert && c.queue == q && c.pre.1 == s
        });
        if owner.is_none() {
            return Err(format!(
                "queue {q}: slot {s} holds {v0:#x}, the start of no batch inserted there"
            ));
        }
        Ok(id as u32)
    }

    fn check_batch(&self, image: &PmImage, q: u32, s: u32) -> Result<(), String> {
        let id = self.batch_owner(image, q, s)?;
        if let Some((slot, got)) = self.batch_mismatch(image, q, s, id) {
            return Err(format!(
                "queue {q}: batch of command {id} is only partly present (slot {slot} holds {got:#x})"
            ));
        }
        Ok(())
    }

    /// Head/tail of queue `q` as recovery rebuilds them from `img`'s records,
    /// with the last op that has a start record.
    fn recovered(&self, img: &PmImage, q: u32) -> Result<((u32, u32), Option<usize>), String> {
        let ops = &self.per_queue[q as usize];
        let mut last = None;
        for (k, &i) in ops.iter().enumerate() {
            if record(img, self.start_addr(i)) != NONE {
                if last.map_or(k > 0, |l: usize| l + 1 != k) {
                    // The leader's oFence orders each start record after the
                    // previous one.
                    return Err(format!(
                        "queue {q}: start record of command {i} is durable but an earlier op's is not"
                    ));
                }
                last = Some(k);
            }
        }
        let Some(k) = last else {
            return Ok(((0, 0), None));
        };
        let i = ops[k];
        let d = record(img, self.done_addr(i));
        let rec = if d != NONE {
            d
        } else {
            record(img, self.start_addr(i))
        };
        let st = unpack(rec).ok_or_else(|| {
            format!("queue {q}: record {rec:#x} of command {i} is not a head/tail")
        })?;
        Ok((st, Some(k)))
    }

    /// The first slot of the batch of command `i`, at slot `s` of queue
    /// `q`, that does not hold its element, with what it holds (one pass
    /// over the image's words of the batch, at most two ranges of the ring).
    fn batch_mismatch(&self, img: &PmImage, q: u32, s: u32, i: u32) -> Option<(u32, u64)> {
        // The ring wraps at most once in a batch (`s` < QUEUE_LEN).
        let first = (s + BATCH).min(QUEUE_LEN);
        let mut seen = 0;
        for (lo, hi) in [(s, first), (first, s + BATCH)] {
            if lo == hi {
                continue;
            }
            let a = self.slot_addr(q, lo);
            let end = a + 4 * (hi - lo) as u64;
            for (&addr, &got) in img.words.range(a..end) {
                if !(addr - a).is_multiple_of(4) {
                    continue;
                }
                let j = lo - s + ((addr - a) / 4) as u32;
                if got != elem(i, j) {
                    return Some(((s + j) % QUEUE_LEN, got));
                }
                seen += 1;
            }
        }
        // Slots never stored hold 0: find one (rare, so slot by slot).
        (seen < BATCH).then(|| {
            (0..BATCH)
                .map(|j| (j, img.get(self.slot_addr(q, s + j))))
                .find(|&(j, got)| got != elem(i, j))
                .map(|(j, got)| ((s + j) % QUEUE_LEN, got))
        })?
    }

    fn code(&self, build: Build, k: usize, cta: u32, completion: bool) -> CtaCode {
        match k {
            0 => self.init_cta(build, cta),
            1 => self.main_cta(build, cta, completion),
            _ => CtaCode::default(),
        }
    }

    /// initKernel: dFence, records to -1 (grid-stride), dFence.
    fn init_cta(&self, build: Build, cta: u32) -> CtaCode {
        let n = self.cmds.len() as u32;
        let total = QUEUES * THREADS;
        let mut warps = Vec::with_capacity(WARPS as usize);
        for w in 0..WARPS {
            let mut v = Vec::new();
            push(&mut v, build, Instr::DFence);
            let mut g = cta * THREADS + w * 32;
            while g < n {
                let m = lanes((n - g).min(32));
                for base in [self.start_addr(g), self.done_addr(g)] {
                    v.push(layout::st(Space::Pm, 8, m, base, 8, Values::Same(NONE)));
                }
                g += total;
            }
            push(&mut v, build, Instr::DFence);
            warps.push(v);
        }
        CtaCode { warps }
    }

    /// mainKernel, block `b`: walk every command, act on queue `b`'s.
    fn main_cta(&self, build: Build, b: u32, completion: bool) -> CtaCode {
        if b >= QUEUES {
            return CtaCode::default();
        }
        let mut warps: Vec<Vec<Instr>> = vec![Vec::new(); WARPS as usize];
        let all = u32::MAX;
        for (i, c) in self.cmds.iter().enumerate() {
            let i = i as u32;
            for v in warps.iter_mut() {
                v.push(layout::ld(Space::Global, 8, all, self.cmd_addr(i), 0));
            }
            if c.queue != b {
                continue;
            }
            if c.op == Op::Commit {
                for v in warps.iter_mut() {
                    push(v, build, Instr::DFence);
                }
                continue;
            }
            let q = self.qobj_addr(b);
            // Leader: start record, ordered before the batch.
            let w0 = &mut warps[0];
            w0.push(layout::ld(Space::Global, 8, 1, q, 0));
            w0.push(layout::st(
                Space::Pm,
                8,
                1,
                self.start_addr(i),
                0,
                Values::Same(pack(c.pre.0, c.pre.1)),
            ));
            push(w0, build, Instr::OFence);
            let seq = c.seq as u64 + 1;
            for (w, v) in warps.iter_mut().enumerate() {
                let w = w as u32;
                let mk = Self::marker_addr(b, w);
                v.push(layout::st(Space::Shared, 1, all, mk, 1, Values::Unknown));
                v.push(Instr::Bar);
                if w > 0 {
                    v.push(layout::ld(Space::Global, 8, all, q, 0));
                }
                v.push(layout::ld(Space::Global, 8, all, self.cmd_addr(i) + 8, 0));
                for it in 0..ITERS {
                    let j = it * THREADS + w * 32;
                    let buf = self.buf_addr(i, j);
                    if c.op == Op::Insert {
                        let slot = self.slot_addr(b, c.pre.1 + j);
                        v.push(layout::ld(Space::Global, 4, all, buf, 4));
                        let vals = Values::Seq {
                            first: elem(i, j),
                            step: 1,
                        };
                        v.push(layout::st(Space::Pm, 4, all, slot, 4, vals));
                    } else {
                        let slot = self.slot_addr(b, c.pre.0 + j);
                        v.push(layout::ld(Space::Pm, 4, all, slot, 4));
                        v.push(layout::st(Space::Global, 4, all, buf, 4, Values::Unknown));
                    }
                }
                push(v, build, layout::prel(Scope::Block, Space::Shared, mk, seq));
            }
            let w0 = &mut warps[0];
            for m in 0..THREADS {
                let mk = Self::marker_addr(b, m / 32);
                push(
                    w0,
                    build,
                    layout::pacq(Scope::Block, Space::Shared, mk, seq),
                );
            }
            let post = pack(c.post.0, c.post.1);
            w0.push(layout::st(Space::Global, 8, 1, q, 0, Values::Same(post)));
            if completion {
                // No fence: the next start record's oFence orders it.
                w0.push(layout::st(
                    Space::Pm,
                    8,
                    1,
                    self.done_addr(i),
                    0,
                    Values::Same(post),
                ));
            }
        }
        CtaCode { warps }
    }

    /// recoveryKernel: one command per thread.
    fn recovery_cta(&self, cta: u32, starts: &[u64], dones: &[u64]) -> CtaCode {
        let n = self.cmds.len() as u32;
        let total = QUEUES * THREADS;
        let mut warps = Vec::with_capacity(WARPS as usize);
        for w in 0..WARPS {
            let mut v = Vec::new();
            let mut g = cta * THREADS + w * 32;
            while g < n {
                let cnt = (n - g).min(32);
                v.push(layout::ld(
                    Space::Global,
                    8,
                    lanes(cnt),
                    self.cmd_addr(g),
                    24,
                ));
                let (mut rw, mut commit, mut need_start) = (0u32, 0u32, 0u32);
                let (mut addrs, mut vals, mut adopt) = (Vec::new(), Vec::new(), 0u32);
                for l in 0..cnt {
                    let i = (g + l) as usize;
                    let c = &self.cmds[i];
                    if c.op == Op::Commit {
                        commit |= 1 << l;
                        continue;
                    }
                    rw |= 1 << l;
                    let rec = if dones[i] != NONE {
                        dones[i]
                    } else {
                        need_start |= 1 << l;
                        starts[i]
                    };
                    if rec != NONE {
                        adopt |= 1 << l;
                        addrs.push(self.qobj_addr(c.queue));
                        vals.push(rec);
                    }
                }
                if rw != 0 {
                    v.push(layout::ld(Space::Pm, 8, rw, self.done_addr(g), 8));
                }
                if need_start != 0 {
                    v.push(layout::ld(Space::Pm, 8, need_start, self.start_addr(g), 8));
                }
                if adopt != 0 {
                    v.push(layout::st_list(Space::Global, 8, adopt, addrs, vals));
                }
                if commit != 0 {
                    v.push(Instr::DFence);
                }
                g += total;
            }
            warps.push(v);
        }
        CtaCode { warps }
    }
}

/// Pushes `i`; the GPM build follows every persistency op with a
/// `__threadfence` (§2.0).
fn push(v: &mut Vec<Instr>, build: Build, i: Instr) {
    let persistency = matches!(
        i,
        Instr::OFence | Instr::DFence | Instr::PAcq { .. } | Instr::PRel { .. }
    );
    v.push(i);
    if persistency && build == Build::Gpm {
        v.push(Instr::Fence(FenceScope::Device));
    }
}

enum Kind {
    Run { build: Build, completion: bool },
    Recovery { starts: Vec<u64>, dones: Vec<u64> },
}

struct MqProgram<'a> {
    app: &'a Mq,
    name: String,
    kernels: Vec<KernelInfo>,
    kind: Kind,
}

impl Program for MqProgram<'_> {
    fn name(&self) -> &str {
        &self.name
    }
    fn kernels(&self) -> &[KernelInfo] {
        &self.kernels
    }
    fn cta(&self, k: usize, cta: u32) -> CtaCode {
        if k >= self.kernels.len() || cta >= self.kernels[k].grid {
            return CtaCode::default();
        }
        match &self.kind {
            Kind::Run { build, completion } => self.app.code(*build, k, cta, *completion),
            Kind::Recovery { starts, dones } => self.app.recovery_cta(cta, starts, dones),
        }
    }
}

impl Mq {
    fn run(&self, name: &str, build: Build, completion: bool) -> MqProgram<'_> {
        MqProgram {
            app: self,
            name: name.into(),
            kernels: vec![
                Self::kernel("initKernel", 0),
                Self::kernel("mainKernel", 128),
            ],
            kind: Kind::Run { build, completion },
        }
    }
}

impl App for Mq {
    fn name(&self) -> &'static str {
        "mq"
    }
    fn size(&self) -> u64 {
        self.batches
    }
    fn size_unit(&self) -> &'static str {
        "batches"
    }
    /// The host initialises no PM (initKernel writes the records).
    fn initial_image(&self) -> PmImage {
        PmImage::default()
    }
    fn program(&self, build: Build) -> Box<dyn Program + '_> {
        let name = match build {
            Build::Gpu => "mq",
            Build::Gpm => "mq-gpm",
        };
        Box::new(self.run(name, build, true))
    }
    fn final_image(&self) -> PmImage {
        self.image(true)
    }
    fn crash_program(&self) -> Box<dyn Program + '_> {
        Box::new(self.run("mq-rec", Build::Gpu, false))
    }
    fn crash_image(&self) -> PmImage {
        self.image(false)
    }
    fn recovery(&self, image: &PmImage) -> Box<dyn Program + '_> {
        let n = self.cmds.len() as u32;
        Box::new(MqProgram {
            app: self,
            name: "mq-recovery".into(),
            kernels: vec![Self::kernel("recoveryKernel", 0)],
            kind: Kind::Recovery {
                starts: (0..n).map(|i| record(image, self.start_addr(i))).collect(),
                dones: (0..n).map(|i| record(image, self.done_addr(i))).collect(),
            },
        })
    }
    /// Recovery writes only volatile head/tail: the PM image is unchanged.
    fn recover(&self, image: &PmImage) -> PmImage {
        image.clone()
    }
    /// Every batch is entirely in or entirely out of its queue: the head/tail
    /// recovery rebuilds from the records is a state of the queue's history,
    /// and each batch between them is whole.
    fn incremental(&self, img: &PmImage) -> Option<Box<dyn Incremental + '_>> {
        Some(Box::new(inc::MqInc::new(self, img)))
    }
    fn check(&self, image: &PmImage) -> Result<(), String> {
        for q in 0..QUEUES {
            self.check_queue(image, q)?;
        }
        Ok(())
    }
    /// Half of a batch lost: in a queue that holds one, its second half is
    /// overwritten; otherwise a record claims a batch whose second half is
    /// garbage.
    fn corrupt(&self, image: &PmImage) -> PmImage {
        let mut img = image.clone();
        let bad = 0xdead_beef;
        for q in 0..QUEUES {
            if let Ok(((h, t), _)) = self.recovered(image, q) {
                if h != t {
                    for j in BATCH / 2..BATCH {
                        img.set(self.slot_addr(q, h + j), bad);
                    }
                    return img;
                }
            }
        }
        // No queue holds a batch: claim one in the queue of command 0.
        let q = self.cmds[0].queue;
        let ops = &self.per_queue[q as usize];
        let (st, last) = self.recovered(image, q).unwrap_or(((0, 0), None));
        let i = match last {
            Some(k) => ops[k],
            None => {
                img.set(self.start_addr(ops[0]), pack(st.0, st.1));
                ops[0]
            }
        };
        img.set(self.done_addr(i), pack(st.0, (st.1 + BATCH) % QUEUE_LEN));
        for j in BATCH / 2..BATCH {
            img.set(self.slot_addr(q, st.1 + j), bad);
        }
        img
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_rand_matches() {
        let mut g = GlibcRand::new(1);
        assert_eq!(g.rand(), 1_804_289_383);
        let mut g = GlibcRand::new(100);
        let v: Vec<u32> = (0..5).map(|_| g.rand() % 120).collect();
        assert_eq!(v, [80, 101, 119, 44, 16]);
    }
}
