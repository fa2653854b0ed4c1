//! Reduction (Red): NVIDIA's single-pass reduction with the intermediate
//! sums of each block's tree in PM, block-scope flags between the tree's
//! levels and a device-scope final step, as a program generator. Follows
//! `../shared/notes/sbrp-benchmarks.md` §2.4 (per-block steps, data,
//! recovery, invariant), §2.0 (what is timed, crash emulation, GPM fences),
//! §2.7 (sizes) and §6 items 11, 14, 16 and 19.
//!
//! Data: `size` ints drawn from a counter-based generator with a fixed seed,
//! 31-bit like `rand()` (§6.19), summed with 32-bit wrap-around as CUDA
//! `int`s. Launch `l` reduces elements `l * 262,144 ..` on 60 blocks x 512
//! threads; thread `t` of block `b` sums its 4-5 pairs into `own[t]`. Slot
//! `t` of a block's 512-int `sdata` region (PM, EMPTY = 0) holds the sum of
//! the subtree of `t`: `own[t]` for `t >= 256`, else `own[t]` plus the
//! slots `t + s` for every power of two `s` from the level where `t` stores
//! (the smallest power of two above `t`) up to 256.
//!
//! Decisions where the note leaves room:
//! - The last block (decided at run time by the ticket in CUDA) is block 59.
//!   Its device-scope acquires wait for each block's result of the launch,
//!   so it cannot run ahead of the others in the model either.
//! - The second tree of the last block uses a separate 512-int PM region per
//!   launch (§6.11), runs the same code as the block trees (all 16 warps;
//!   threads 60.. contribute 0) including warp 0's dFence, with flags of
//!   its own.
//! - The flags are a 512-byte shared array in CUDA (one byte per thread).
//!   Here each warp-level release has its own flag word, released once with
//!   value 1, at `FLAG_BASE + ((launch * 61 + tree) * 512 + slot) * 8`,
//!   `slot` the first `sdata` slot the release covers: the model keeps one
//!   flag table for all spaces and never resets it, so every CTA of every
//!   launch needs its own words.
//! - `g_odata` has 8-byte slots: a release's flag word is 8 bytes, and the
//!   release of step 9 goes to `g_odata[block]`. Thread 0's store is 8 bytes
//!   too, with the same (32-bit) value.
//! - Steps 9-10: all 16 warps read `g_odata[block]` and release what they
//!   read at device scope. In CUDA warps 1-15 do not wait for thread 0 (a
//!   race); they reach step 9 long before thread 0's store, which waits for
//!   warp 0's whole tree and dFence, so they write back the value the slot
//!   held before the launch (the previous launch's result, 0 at first), in
//!   the note's place, before the barrier. Warp 0 releases the new value
//!   *after* the ticket and the barrier instead of before: then no old
//!   value can land after the new one. (With warp 0's release before the
//!   barrier the model, under the artifact switches, completed warps 1-15's
//!   releases after warp 0's, and the last block spun for ever on the old
//!   value; in CUDA that result would be lost.) Giving warps 1-15 the new
//!   value instead would publish a result before its tree is durable;
//!   moving all 16 releases after the barrier changed the cycles by up to
//!   4% (SBRP-far slower, epoch-far faster) where this order stays within
//!   1% of the note's.
//! - The device-scope variant of Figure 7 (`reduction_dev_gpu`) is
//!   [`Reduction::program_dev`]: the tree's flag operations at device scope
//!   and a `fence.dev` before the first barrier (§2.4).
//! - GPM build: a `fence.dev` after every oFence/dFence and flag operation
//!   (once after an acquire, not per poll: the model polls inside one
//!   instruction).
//! - Crash point (`crash_program`): the first launch only (the region
//!   recoveryKernel reads), with block `b`'s tree cut after level
//!   `1 + b % 9` (levels 1..9 are strides 256..1): no dFence, no `g_odata`,
//!   no ticket. The blocks thus stop at every level of the tree.
//! - recoveryKernel thread `(b, t)` reads slot `t` of block `b`'s region of
//!   the first launch; it makes no persists, so `recover` returns the image
//!   unchanged (the redo is the native skip of non-empty slots).
//! - `reduction-block-final` ([`VARIANT_BLOCK_FINAL`], in
//!   `crate::VARIANTS`): the same program with the release that publishes a
//!   block's result at block scope, the scoped persistency bug of the
//!   paper's §5.3. That release is in every launch (kernel `k` =
//!   `reduceSinglePass` of launch `k`), every CTA, warp 0: the `PRel` on
//!   `g_odata[cta]` after the ticket, the barrier and the load, instruction
//!   `2p + 34` of the `Build::Gpu` code (`p` = the CTA's input pairs per
//!   warp: 5 for CTAs 0-15 of a launch, 4 for the others, so 44 or 42);
//!   [`Reduction::final_release`] finds it in any build.
//! - The invariant (`check`), each clause with the program ordering it
//!   relies on:
//!   1. a non-empty slot of a tree holds its thread's sum of its inputs, and
//!      every input slot it adds is durable: the block-scope release after
//!      each level's stores and the acquire before the next level's reads
//!      (warp 0's own levels: its oFence-free program order within the warp,
//!      the flags it acquires from itself);
//!   2. a non-empty slot of a launch's final tree (the last block's second
//!      tree) implies, for every block whose result the storing warp has
//!      acquired by then (warp 0 of that tree: all 60, through warp 1's
//!      flag; warp 1: blocks 32-59), that block's tree root and its
//!      `g_odata` slot (this launch's result or a later one's) are durable:
//!      each block's warp-0 dFence after its tree, then its `g_odata` store
//!      and the device-scope release that the final tree's warps acquire;
//!   3. a non-zero `g_odata[i]` is a result (or, `i` = 60, the total) of a
//!      launch whose tree root holds it: the dFence after the tree, before
//!      thread 0's store.

mod gen;
mod inc;

use std::sync::OnceLock;

use sbrp_trace::program::{Instr, Program};

use crate::incremental::Incremental;
use crate::layout::Alloc;
use crate::{App, Build, PmImage};
use gen::Gen;

/// The launch shape (§2.4).
pub const BLOCKS: u32 = 60;
pub const THREADS: u32 = 512;
const WARPS: u32 = THREADS / 32;
/// Elements per launch.
pub const PER_LAUNCH: u64 = 262_144;
const DEFAULT_SIZE: u64 = 16 * PER_LAUNCH;
/// Most launches accepted.
const MAX_LAUNCHES: u64 = 256;
/// The block standing for "the last block to take a ticket".
pub const LAST_BLOCK: u32 = BLOCKS - 1;
/// Trees per launch: 60 blocks, then the last block's second tree.
const TREES: u64 = BLOCKS as u64 + 1;
/// Base of the (shared-memory) flag words; above every PM allocation.
pub const FLAG_BASE: u64 = 1 << 44;
const SEED: u64 = 0x00C0_FFEE_0001;
/// Shared memory per CTA: the 512-byte flag array.
const SMEM: u32 = 512;
/// Levels of the tree: strides 256, 128, ..., 1.
const LEVELS: u32 = 9;
/// The scoped-persistency-bug variant's name.
pub const VARIANT_BLOCK_FINAL: &str = "reduction-block-final";

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Input element `i` (0..size): 31 bits, as `rand()`.
pub fn input(i: u64) -> u32 {
    (splitmix(SEED ^ i) >> 33) as u32
}

/// The stride of level `lvl` (1..=9).
fn stride(lvl: u32) -> u32 {
    256 >> (lvl - 1)
}

/// Slot values of one tree from the threads' own sums.
pub fn tree(own: &[u32]) -> Vec<u32> {
    let mut slot = vec![0u32; THREADS as usize];
    slot[256..].copy_from_slice(&own[256..]);
    for t in (0..256usize).rev() {
        slot[t] = slot_sum(t, own[t], |i| slot[i]);
    }
    slot
}

/// `own` plus the slots the thread of slot `t` adds before storing it.
fn slot_sum(t: usize, own: u32, get: impl Fn(usize) -> u32) -> u32 {
    inputs(t).fold(own, |a, i| a.wrapping_add(get(i)))
}

/// The slots slot `t` (< 256) sums: `t + s` for powers of two `s` from the
/// smallest one above `t` up to 256.
fn inputs(t: usize) -> impl Iterator<Item = usize> {
    let first = if t == 0 {
        1
    } else {
        (t + 1).next_power_of_two()
    };
    (0..)
        .map(move |k| first << k)
        .take_while(|&s| s <= 256)
        .map(move |s| t + s)
}

/// For each slot of a final tree, the blocks (bit `b`) whose results the
/// warp storing it has acquired before the store: its own device-scope
/// acquires (warp `w` acquires blocks `32w..32w + 32`), and those of the
/// warps whose block-scope releases it acquired, as `gen.rs`'s tree code
/// orders them (level by level, a warp acquiring the chunk `t0 + s` that
/// another warp released at the level before).
fn final_deps() -> &'static [u64; THREADS as usize] {
    static DEPS: OnceLock<[u64; THREADS as usize]> = OnceLock::new();
    DEPS.get_or_init(|| {
        let mut acquired = [0u64; WARPS as usize];
        for (w, a) in acquired.iter_mut().enumerate().take(2) {
            let lo = 32 * w as u32;
            *a = (lo..(lo + 32).min(BLOCKS)).fold(0, |m, b| m | 1 << b);
        }
        let mut released = [0u64; THREADS as usize];
        let mut deps = [0u64; THREADS as usize];
        for lvl in 1..=LEVELS {
            let s = stride(lvl);
            for w in 0..WARPS {
                let t0 = w * 32;
                if t0 >= s {
                    continue;
                }
                if lvl > 1 {
                    acquired[w as usize] |= released[(t0 + s) as usize];
                }
                let lo = s / 2;
                let stored = if s == 1 {
                    0..1
                } else {
                    t0.max(lo)..(t0 + 32).min(s)
                };
                if stored.is_empty() {
                    continue;
                }
                for t in stored.clone() {
                    deps[t as usize] = acquired[w as usize];
                }
                released[stored.start as usize] = acquired[w as usize];
            }
        }
        deps
    })
}

/// Where things live.
#[derive(Clone, Debug)]
struct Layout {
    /// PM: the blocks' sdata regions, launch-major.
    sdata: u64,
    /// PM: the last block's second-tree regions, one per launch.
    fin: u64,
    /// PM: 61 8-byte slots.
    g_odata: u64,
    /// Volatile: the input and the retirement counter.
    input: u64,
    count: u64,
}

/// One launch's trees (60 blocks, then the final one): the threads' own
/// sums and the slot values.
type Trees = Vec<(Vec<u32>, Vec<u32>)>;

/// Reduction of `size` ints.
pub struct Reduction {
    size: u64,
    launches: u64,
    lay: Layout,
    /// Per launch, the 60 block results and the total.
    results: Vec<[u32; BLOCKS as usize]>,
    /// Per launch, its trees, computed when first needed.
    trees: Vec<OnceLock<Trees>>,
    /// The variant whose block results are released at block scope.
    block_final: bool,
}

impl Reduction {
    /// `size` elements (default 4,194,304): a multiple of 262,144, up to 256
    /// launches.
    pub fn new(size: Option<u64>) -> Result<Self, String> {
        let size = size.unwrap_or(DEFAULT_SIZE);
        if size == 0 || !size.is_multiple_of(PER_LAUNCH) || size / PER_LAUNCH > MAX_LAUNCHES {
            return Err(format!(
                "reduction: size {size} refused: it must be a positive multiple of {PER_LAUNCH} \
                 (one launch of {BLOCKS} blocks x {THREADS} threads) up to {} elements",
                MAX_LAUNCHES * PER_LAUNCH
            ));
        }
        let launches = size / PER_LAUNCH;
        let mut al = Alloc::default();
        let lay = Layout {
            sdata: al.pm(launches * BLOCKS as u64 * THREADS as u64 * 4),
            g_odata: al.pm(TREES * 8),
            fin: al.pm(launches * THREADS as u64 * 4),
            input: al.global(size * 4),
            count: al.global(8),
        };
        let mut app = Reduction {
            size,
            launches,
            lay,
            results: Vec::new(),
            trees: (0..launches).map(|_| OnceLock::new()).collect(),
            block_final: false,
        };
        app.results = (0..launches)
            .map(|l| {
                let mut r = [0u32; BLOCKS as usize];
                for (b, x) in r.iter_mut().enumerate() {
                    *x = tree(&app.own(l, b as u32))[0];
                }
                r
            })
            .collect();
        Ok(app)
    }

    /// The variant `reduction-block-final` (see `//!`) at `size`.
    pub fn block_final(size: Option<u64>) -> Result<Self, String> {
        Ok(Reduction {
            block_final: true,
            ..Reduction::new(size)?
        })
    }

    pub fn launches(&self) -> u64 {
        self.launches
    }

    /// The release publishing block `cta`'s result in launch `l` (kernel
    /// `l`): its instruction index in warp 0 of the CTA's `build` code.
    pub fn final_release(&self, build: Build, l: u64, cta: u32) -> usize {
        let g = Gen {
            build,
            dev: false,
            block_final: self.block_final,
        };
        let slot = self.g_odata(cta);
        self.cta_code(l, cta, None, g).warps[0]
            .iter()
            .rposition(|i| matches!(i, Instr::PRel { flag, .. } if *flag == slot))
            .expect("warp 0 releases its block's result")
    }

    /// Tree `tree` of launch `l`: own sums and slot values.
    fn tree_of(&self, l: u64, tree: u32) -> &(Vec<u32>, Vec<u32>) {
        let t = self.trees[l as usize].get_or_init(|| {
            (0..TREES as u32)
                .map(|b| {
                    let own = self.own(l, b);
                    let slot = self::tree(&own);
                    (own, slot)
                })
                .collect()
        });
        &t[tree as usize]
    }

    /// Element offsets (in the launch) of the pairs warp `w` of block `b`
    /// loads: the first of each pair; the second is 512 further.
    fn pairs(b: u32, w: u32) -> impl Iterator<Item = u64> {
        let grid = 2 * THREADS as u64 * BLOCKS as u64;
        (0..)
            .map(move |k| b as u64 * 2 * THREADS as u64 + w as u64 * 32 + k * grid)
            .take_while(|&i| i < PER_LAUNCH)
    }

    /// Own sums of tree `tree` of launch `l`: a block's, or (tree 60) the
    /// last block's second tree, fed by the block results.
    fn own(&self, l: u64, tree: u32) -> Vec<u32> {
        if tree == BLOCKS {
            let mut own = vec![0u32; THREADS as usize];
            own[..BLOCKS as usize].copy_from_slice(&self.results[l as usize]);
            return own;
        }
        let mut own = vec![0u32; THREADS as usize];
        for w in 0..WARPS {
            for i in Self::pairs(tree, w) {
                for lane in 0..32u64 {
                    let e = l * PER_LAUNCH + i + lane;
                    let t = (w * 32) as usize + lane as usize;
                    own[t] = own[t]
                        .wrapping_add(input(e))
                        .wrapping_add(input(e + THREADS as u64));
                }
            }
        }
        own
    }

    /// Base of tree `tree`'s 512-int region of launch `l`.
    pub fn region(&self, l: u64, tree: u32) -> u64 {
        if tree == BLOCKS {
            self.lay.fin + l * THREADS as u64 * 4
        } else {
            self.lay.sdata + (l * BLOCKS as u64 + tree as u64) * THREADS as u64 * 4
        }
    }
    pub fn g_odata(&self, i: u32) -> u64 {
        self.lay.g_odata + i as u64 * 8
    }
    fn flag(&self, l: u64, tree: u32, slot: u32) -> u64 {
        FLAG_BASE + ((l * TREES + tree as u64) * THREADS as u64 + slot as u64) * 8
    }
    /// The result of block `b` of launch `l`, and the launch's total
    /// (`None` out of range).
    pub fn block_result(&self, l: u64, b: u32) -> Option<u32> {
        self.results.get(l as usize)?.get(b as usize).copied()
    }
    pub fn launch_total(&self, l: u64) -> Option<u32> {
        (l < self.launches).then(|| self.total(l))
    }
    fn result(&self, l: u64, b: u32) -> u32 {
        self.results[l as usize][b as usize]
    }
    fn total(&self, l: u64) -> u32 {
        self.results[l as usize]
            .iter()
            .fold(0u32, |a, &x| a.wrapping_add(x))
    }

    /// The image: the host's zeroed regions plus launches `0..full`
    /// complete, then launch `full` cut as `crash_program` cuts it if
    /// `cut` is set.
    fn image(&self, full: u64, cut: bool) -> PmImage {
        let mut img = self.initial_image();
        for l in 0..full {
            for tree in 0..TREES as u32 {
                let base = self.region(l, tree);
                for (t, v) in self::tree(&self.own(l, tree)).into_iter().enumerate() {
                    img.set(base + t as u64 * 4, v as u64);
                }
            }
            for b in 0..BLOCKS {
                img.set(self.g_odata(b), self.result(l, b) as u64);
            }
            img.set(self.g_odata(BLOCKS), self.total(l) as u64);
        }
        if cut {
            for b in 0..BLOCKS {
                let s = stride(Self::crash_level(b));
                let base = self.region(full, b);
                let slot = self::tree(&self.own(full, b));
                // Levels 1..=k stored slots s/2.. (stride 1: slot 0 too).
                let from = (s / 2) as usize;
                for (t, v) in slot.iter().enumerate().skip(from) {
                    img.set(base + t as u64 * 4, *v as u64);
                }
            }
        }
        img
    }

    fn crash_level(b: u32) -> u32 {
        1 + b % LEVELS
    }

    /// A region's 512 slots from the image (absent: 0, EMPTY).
    fn read_region(&self, img: &PmImage, base: u64) -> Vec<u32> {
        let mut v = vec![0u32; THREADS as usize];
        for (&a, &x) in img.words.range(base..base + THREADS as u64 * 4) {
            // Words that are no int slot are reported by `check_tree`.
            if a % 4 == 0 && x <= u32::MAX as u64 {
                v[((a - base) / 4) as usize] = x as u32;
            }
        }
        v
    }

    /// The first broken slot of tree `tree` of launch `l`, as a message.
    fn check_tree(&self, img: &PmImage, l: u64, tree: u32) -> Result<(), String> {
        let base = self.region(l, tree);
        for (&a, &x) in img.words.range(base..base + THREADS as u64 * 4) {
            if x > u32::MAX as u64 || a % 4 != 0 {
                return Err(format!(
                    "reduction: word {a:#x} = {x:#x} is not an int slot"
                ));
            }
        }
        let got = self.read_region(img, base);
        if got.iter().all(|&x| x == 0) {
            return Ok(());
        }
        let (own, want) = self.tree_of(l, tree);
        let name = |t: usize| {
            if tree == BLOCKS {
                format!("launch {l} final tree slot {t}")
            } else {
                format!("launch {l} block {tree} slot {t}")
            }
        };
        // From the leaves down, so the first broken input is reported.
        for t in (0..THREADS as usize).rev() {
            if got[t] == 0 {
                continue;
            }
            if t >= 256 {
                if got[t] != own[t] {
                    return Err(format!(
                        "reduction: {} = {}, its thread's sum is {}",
                        name(t),
                        got[t],
                        own[t]
                    ));
                }
                continue;
            }
            for i in inputs(t) {
                if got[i] == 0 && want[i] != 0 {
                    return Err(format!(
                        "reduction: {} is set but its input slot {i} is empty",
                        name(t)
                    ));
                }
            }
            let sum = slot_sum(t, own[t], |i| got[i]);
            if got[t] != sum {
                return Err(format!(
                    "reduction: {} = {}, its inputs sum to {sum}",
                    name(t),
                    got[t]
                ));
            }
        }
        Ok(())
    }

    /// Clause 2 for launch `l`: a final-tree slot after the results its
    /// warp acquired.
    fn check_final(&self, image: &PmImage, l: u64) -> Result<(), String> {
        let fin = self.read_region(image, self.region(l, BLOCKS));
        let deps = final_deps();
        let mut seen = 0u64;
        for (t, &x) in fin.iter().enumerate() {
            let need = deps[t] & !seen;
            if x == 0 || need == 0 {
                continue;
            }
            for b in (0..BLOCKS).filter(|b| need & (1 << b) != 0) {
                let res = self.result(l, b) as u64;
                if image.get(self.region(l, b)) != res {
                    return Err(format!(
                        "reduction: launch {l}'s final tree slot {t} is set but block {b}'s \
                         result is not durable in its tree"
                    ));
                }
                let g = image.get(self.g_odata(b));
                if !(l..self.launches).any(|k| self.result(k, b) as u64 == g) {
                    return Err(format!(
                        "reduction: launch {l}'s final tree slot {t} is set but block {b}'s \
                         result is not durable in g_odata[{b}] (it holds {g}; released \
                         before durable)"
                    ));
                }
            }
            seen |= need;
        }
        Ok(())
    }

    /// `g_odata[i]`: a result (or the total) of some launch whose tree has it.
    fn check_g_odata(&self, image: &PmImage, i: u32) -> Result<(), String> {
        let v = image.get(self.g_odata(i));
        if v == 0 {
            return Ok(());
        }
        let ok = (0..self.launches).any(|l| {
            let want = if i == BLOCKS {
                self.total(l)
            } else {
                self.result(l, i)
            } as u64;
            v == want && image.get(self.region(l, i)) == want
        });
        if !ok {
            return Err(format!(
                "reduction: g_odata[{i}] = {v} is no durable result of any launch"
            ));
        }
        Ok(())
    }
}

impl App for Reduction {
    fn name(&self) -> &'static str {
        if self.block_final {
            VARIANT_BLOCK_FINAL
        } else {
            "reduction"
        }
    }
    fn size(&self) -> u64 {
        self.size
    }
    fn size_unit(&self) -> &'static str {
        "ints"
    }
    /// The host zeroes every region (EMPTY = 0) and g_odata.
    fn initial_image(&self) -> PmImage {
        let mut img = PmImage::default();
        for l in 0..self.launches {
            for tree in 0..TREES as u32 {
                let base = self.region(l, tree);
                for t in 0..THREADS as u64 {
                    img.set(base + t * 4, 0);
                }
            }
        }
        for i in 0..TREES as u32 {
            img.set(self.g_odata(i), 0);
        }
        img
    }
    fn program(&self, build: Build) -> Box<dyn Program + '_> {
        self.run_program(Gen {
            build,
            dev: false,
            block_final: self.block_final,
        })
    }
    fn program_dev(&self, build: Build) -> Box<dyn Program + '_> {
        Reduction::program_dev(self, build)
    }
    fn final_image(&self) -> PmImage {
        self.image(self.launches, false)
    }
    fn crash_program(&self) -> Box<dyn Program + '_> {
        self.crash_prog()
    }
    fn crash_image(&self) -> PmImage {
        self.image(0, true)
    }
    /// recoveryKernel reads the first launch's regions whatever the image.
    fn recovery(&self, _image: &PmImage) -> Box<dyn Program + '_> {
        self.rec_prog()
    }
    /// recoveryKernel makes no persists.
    fn recover(&self, image: &PmImage) -> PmImage {
        image.clone()
    }
    fn incremental(&self, img: &PmImage) -> Option<Box<dyn Incremental + '_>> {
        Some(Box::new(inc::ReductionInc::new(self, img)))
    }
    fn check(&self, image: &PmImage) -> Result<(), String> {
        for l in 0..self.launches {
            for b in 0..BLOCKS {
                self.check_tree(image, l, b)?;
            }
            self.check_tree(image, l, BLOCKS)?;
            self.check_final(image, l)?;
        }
        for i in 0..TREES as u32 {
            self.check_g_odata(image, i)?;
        }
        Ok(())
    }
    /// The first non-empty partial sum (slot < 256) gets its inputs' sum
    /// plus one; with none, slot 0 of launch 0's block 0 does.
    fn corrupt(&self, image: &PmImage) -> PmImage {
        let mut img = image.clone();
        let mut target = (0, 0, 0usize);
        'find: for l in 0..self.launches {
            for tree in 0..TREES as u32 {
                let got = self.read_region(image, self.region(l, tree));
                if let Some(t) = (0..256).find(|&t| got[t] != 0) {
                    target = (l, tree, t);
                    break 'find;
                }
            }
        }
        let (l, tree, t) = target;
        let got = self.read_region(image, self.region(l, tree));
        let own = self.own(l, tree)[t];
        let mut bad = slot_sum(t, own, |i| got[i]).wrapping_add(1);
        if bad == 0 {
            bad = 1;
        }
        img.set(self.region(l, tree) + t as u64 * 4, bad as u64);
        img
    }
}
