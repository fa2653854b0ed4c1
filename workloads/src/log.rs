//! The conventional undo log (`CONV_LOG`) that gpKVS and HM share
//! (`../shared/notes/sbrp-benchmarks.md` §2.0): its PM layout, its effect on
//! a PM image, and the per-warp instruction sequences of insert, clear and
//! read, plus the small instruction builders both apps use.
//!
//! Layout: a 40-B header, `head[P]` and `tail[P]` (8 B each), then the data
//! area of `len` bytes, partition `p` starting at `len / P * p` (the last
//! one ends at `len`). Volatile lock words (4 B per partition) live apart.
//!
//! Decisions:
//! - Heads are written as two 4-B stores (insert, clear of `p > 0`) or one
//!   8-B store (setup, clear of partition 0). Offsets fit 32 bits, so the high
//!   word is always 0 and a head reads as the low 32 bits of the word at its
//!   address, whichever store wrote it last.
//! - A clear ends with the note's non-persistent `fence.sc.gpu` after the
//!   unlock (§2.0, clear step 5), emitted as `fence.dev`.
//! - `Build::Gpm` puts a `fence.dev` after every oFence and dFence (§2.0).

use sbrp_trace::program::{Addrs, FenceScope, Instr, Space, Values};

use crate::image::PmImage;
use crate::layout::Alloc;
use crate::Build;

/// Bytes of the log's header (the persistent metadata record).
pub const HEADER: u64 = 40;

/// One conventional log: where its parts are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvLog {
    pub base: u64,
    pub parts: u64,
    pub len: u64,
    /// Volatile lock array (4 B per partition).
    pub locks: u64,
}

impl ConvLog {
    pub fn new(alloc: &mut Alloc, len: u64, parts: u64) -> ConvLog {
        let base = alloc.pm(HEADER + 16 * parts + len);
        let locks = alloc.global(4 * parts);
        ConvLog {
            base,
            parts,
            len,
            locks,
        }
    }
    pub fn head(&self, p: u64) -> u64 {
        self.base + HEADER + 8 * p
    }
    pub fn tail(&self, p: u64) -> u64 {
        self.base + HEADER + 8 * (self.parts + p)
    }
    pub fn data(&self) -> u64 {
        self.base + HEADER + 16 * self.parts
    }
    pub fn part_len(&self) -> u64 {
        self.len / self.parts
    }
    /// Offset of partition `p` in the data area (what `head[p]` holds empty).
    pub fn start(&self, p: u64) -> u64 {
        self.part_len() * p
    }
    pub fn end(&self, p: u64) -> u64 {
        if p + 1 == self.parts {
            self.len
        } else {
            self.part_len() * (p + 1)
        }
    }
    pub fn lock(&self, p: u64) -> u64 {
        self.locks + 4 * p
    }
    pub fn entry_addr(&self, p: u64) -> u64 {
        self.data() + self.start(p)
    }

    /// The durable head offset of partition `p` (see the layout decision).
    pub fn head_of(&self, img: &PmImage, p: u64) -> u64 {
        img.get(self.head(p)) & 0xffff_ffff
    }
    /// Bytes logged in partition `p` (0 when its head is not set up yet).
    pub fn size_of(&self, img: &PmImage, p: u64) -> u64 {
        self.head_of(img, p).saturating_sub(self.start(p))
    }
    /// Word `k` (4 B) of partition `p`'s first entry.
    pub fn word_of(&self, img: &PmImage, p: u64, k: u64) -> u64 {
        img.get(self.entry_addr(p) + 4 * k)
    }
    /// `Ok` when every head is unset (0), empty, or holds exactly one entry
    /// of `entry` bytes (one pass over the heads in the image).
    pub fn check_shape(&self, img: &PmImage, entry: u64, what: &str) -> Result<(), String> {
        let h0 = self.head(0);
        for (&a, &v) in img.words.range(h0..self.head(self.parts)) {
            if !(a - h0).is_multiple_of(8) {
                continue;
            }
            let p = (a - h0) / 8;
            let h = v & 0xffff_ffff;
            let s = self.start(p);
            if h != 0 && h != s && h != s + entry {
                return Err(format!(
                    "{what} log partition {p}: head {h} is neither {s} (empty) nor {} (one entry)",
                    s + entry
                ));
            }
        }
        Ok(())
    }

    /// `setupPartitions`: every head at its start, every tail at its end.
    pub fn set_up(&self, img: &mut PmImage) {
        for p in 0..self.parts {
            img.set(self.head(p), self.start(p));
            img.set(self.tail(p), self.end(p));
        }
    }
    /// An insert of `words` (4 B each) into the empty partition `p`.
    pub fn apply_insert(&self, img: &mut PmImage, p: u64, words: &[u64]) {
        let a = self.entry_addr(p);
        for (k, w) in words.iter().enumerate() {
            img.set(a + 4 * k as u64, *w);
        }
        img.set(self.head(p), self.start(p) + 4 * words.len() as u64);
        img.set(self.head(p) + 4, 0);
    }
    /// A clear of partition `p`.
    pub fn apply_clear(&self, img: &mut PmImage, p: u64) {
        if p == 0 {
            img.set(self.head(0), 0);
        } else {
            img.set(self.head(p), self.start(p));
            img.set(self.head(p) + 4, 0);
        }
    }

    /// `setupPartitions` for lanes `ids` (consecutive partitions): 8-B stores
    /// of head and tail, no fences (§2.1 kernel 1).
    pub fn setup_instrs(&self, out: &mut Vec<Instr>, lanes: &[u32], parts: &[u64]) {
        let heads = parts.iter().map(|&p| self.head(p)).collect();
        let tails = parts.iter().map(|&p| self.tail(p)).collect();
        let hv = parts.iter().map(|&p| self.start(p)).collect();
        let tv = parts.iter().map(|&p| self.end(p)).collect();
        out.push(st_lanes(Space::Pm, 8, lanes, heads, hv));
        out.push(st_lanes(Space::Pm, 8, lanes, tails, tv));
    }

    /// Insert into partition `parts[r]` by lane `lanes[r]` of an entry of
    /// `nwords` 4-B words, word `k` of rank `r` being `word(r, k)` (§2.0:
    /// read head and tail, copy as 4-B stores, oFence, head as two 4-B
    /// stores, oFence). Every partition is empty before the insert.
    pub fn insert_instrs(
        &self,
        out: &mut Vec<Instr>,
        lanes: &[u32],
        parts: &[u64],
        nwords: u64,
        word: &dyn Fn(usize, u64) -> u64,
        build: Build,
    ) {
        if lanes.is_empty() {
            return;
        }
        let heads: Vec<u64> = parts.iter().map(|&p| self.head(p)).collect();
        out.push(ld_lanes(Space::Pm, 8, lanes, heads.clone()));
        out.push(ld_lanes(
            Space::Pm,
            8,
            lanes,
            parts.iter().map(|&p| self.tail(p)).collect(),
        ));
        for k in 0..nwords {
            let a = parts.iter().map(|&p| self.entry_addr(p) + 4 * k).collect();
            let v = (0..lanes.len()).map(|r| word(r, k)).collect();
            out.push(st_lanes(Space::Pm, 4, lanes, a, v));
        }
        ofence(out, build);
        let nh = parts.iter().map(|&p| self.start(p) + 4 * nwords).collect();
        out.push(st_lanes(Space::Pm, 4, lanes, heads.clone(), nh));
        let hi = heads.iter().map(|h| h + 4).collect();
        out.push(st_lanes(Space::Pm, 4, lanes, hi, vec![0; lanes.len()]));
        ofence(out, build);
    }

    /// Clear of partition `parts[r]` by lane `lanes[r]` (§2.0: lock, read
    /// `tail[p-1]`, write `head[p]`, oFence, unlock, `fence.sc.gpu`).
    pub fn clear_instrs(&self, out: &mut Vec<Instr>, lanes: &[u32], parts: &[u64], build: Build) {
        if lanes.is_empty() {
            return;
        }
        out.push(atom_lanes(
            Space::Global,
            lanes,
            parts.iter().map(|&p| self.lock(p)).collect(),
        ));
        let (zl, zp, nl, np) = split_first(lanes, parts);
        if !nl.is_empty() {
            let t = np.iter().map(|&p| self.tail(p - 1)).collect();
            out.push(ld_lanes(Space::Pm, 8, &nl, t));
        }
        if !zl.is_empty() {
            let h = zp.iter().map(|&p| self.head(p)).collect();
            out.push(st_lanes(Space::Pm, 8, &zl, h, vec![0; zl.len()]));
        }
        if !nl.is_empty() {
            let h: Vec<u64> = np.iter().map(|&p| self.head(p)).collect();
            let v = np.iter().map(|&p| self.start(p)).collect();
            out.push(st_lanes(Space::Pm, 4, &nl, h.clone(), v));
            let hi = h.iter().map(|a| a + 4).collect();
            out.push(st_lanes(Space::Pm, 4, &nl, hi, vec![0; nl.len()]));
        }
        ofence(out, build);
        out.push(atom_lanes(
            Space::Global,
            lanes,
            parts.iter().map(|&p| self.lock(p)).collect(),
        ));
        out.push(Instr::Fence(FenceScope::Device));
    }

    /// `gpmlog_get_size` of `parts[r]` by lane `lanes[r]`: head and, past
    /// partition 0, the previous tail.
    pub fn size_instrs(&self, out: &mut Vec<Instr>, lanes: &[u32], parts: &[u64]) {
        if lanes.is_empty() {
            return;
        }
        let h = parts.iter().map(|&p| self.head(p)).collect();
        out.push(ld_lanes(Space::Pm, 8, lanes, h));
        let (_, _, nl, np) = split_first(lanes, parts);
        if !nl.is_empty() {
            let t = np.iter().map(|&p| self.tail(p - 1)).collect();
            out.push(ld_lanes(Space::Pm, 8, &nl, t));
        }
    }

    /// Read of one entry of `nwords` words (§2.0: lock, `__threadfence`, head
    /// and data, `__threadfence`, unlock); `has[r]` says whether lane `r`'s
    /// partition holds data to copy.
    pub fn read_instrs(
        &self,
        out: &mut Vec<Instr>,
        lanes: &[u32],
        parts: &[u64],
        has: &[bool],
        nwords: u64,
    ) {
        if lanes.is_empty() {
            return;
        }
        let locks: Vec<u64> = parts.iter().map(|&p| self.lock(p)).collect();
        out.push(atom_lanes(Space::Global, lanes, locks.clone()));
        out.push(Instr::Fence(FenceScope::Device));
        self.size_instrs(out, lanes, parts);
        let (dl, dp): (Vec<u32>, Vec<u64>) = lanes
            .iter()
            .zip(parts)
            .zip(has)
            .filter(|(_, h)| **h)
            .map(|((l, p), _)| (*l, *p))
            .unzip();
        if !dl.is_empty() {
            for k in 0..nwords {
                let a = dp.iter().map(|&p| self.entry_addr(p) + 4 * k).collect();
                out.push(ld_lanes(Space::Pm, 4, &dl, a));
            }
        }
        out.push(Instr::Fence(FenceScope::Device));
        out.push(atom_lanes(Space::Global, lanes, locks));
    }
}

/// Splits lanes into those on partition 0 and the others.
fn split_first(lanes: &[u32], parts: &[u64]) -> (Vec<u32>, Vec<u64>, Vec<u32>, Vec<u64>) {
    let (mut zl, mut zp, mut nl, mut np) = (vec![], vec![], vec![], vec![]);
    for (&l, &p) in lanes.iter().zip(parts) {
        if p == 0 {
            zl.push(l);
            zp.push(p);
        } else {
            nl.push(l);
            np.push(p);
        }
    }
    (zl, zp, nl, np)
}

/// oFence, and under GPM the `__threadfence` after it.
pub fn ofence(out: &mut Vec<Instr>, build: Build) {
    out.push(Instr::OFence);
    if build == Build::Gpm {
        out.push(Instr::Fence(FenceScope::Device));
    }
}

/// dFence, and under GPM the `__threadfence` after it.
pub fn dfence(out: &mut Vec<Instr>, build: Build) {
    out.push(Instr::DFence);
    if build == Build::Gpm {
        out.push(Instr::Fence(FenceScope::Device));
    }
}

/// The mask of `lanes`.
pub fn mask_of(lanes: &[u32]) -> u32 {
    lanes.iter().fold(0, |m, l| m | (1 << l))
}

/// Compact addresses: strided when lane `l` (of `lanes`) is at
/// `base + l * stride` for all of them, else a list.
pub fn addrs_for(lanes: &[u32], addrs: Vec<u64>) -> Addrs {
    if let (Some(&l0), Some(&a0)) = (lanes.first(), addrs.first()) {
        if lanes.len() == 1 {
            return Addrs::Strided {
                base: a0,
                stride: 0,
            };
        }
        let dl = (lanes[1] - l0) as i64;
        let da = addrs[1].wrapping_sub(a0) as i64;
        if da % dl == 0 {
            let stride = da / dl;
            let base = a0.wrapping_sub((l0 as i64 * stride) as u64);
            let fits = lanes
                .iter()
                .zip(&addrs)
                .all(|(&l, &a)| base.wrapping_add((l as i64 * stride) as u64) == a);
            if fits {
                return Addrs::Strided { base, stride };
            }
        }
    }
    Addrs::List(addrs)
}

/// Compact values: one value, an arithmetic sequence, or a list.
pub fn values_for(v: Vec<u64>) -> Values {
    match v.as_slice() {
        [] => Values::Unknown,
        [a] => Values::Same(*a),
        [a, b, ..] => {
            let step = b.wrapping_sub(*a);
            let seq = v
                .iter()
                .enumerate()
                .all(|(r, x)| a.wrapping_add(step.wrapping_mul(r as u64)) == *x);
            if step == 0 && seq {
                Values::Same(*a)
            } else if seq {
                Values::Seq { first: *a, step }
            } else {
                Values::List(v)
            }
        }
    }
}

pub fn ld_lanes(space: Space, size: u8, lanes: &[u32], addrs: Vec<u64>) -> Instr {
    Instr::Ld {
        space,
        size,
        mask: mask_of(lanes),
        addrs: addrs_for(lanes, addrs),
    }
}

pub fn st_lanes(space: Space, size: u8, lanes: &[u32], addrs: Vec<u64>, values: Vec<u64>) -> Instr {
    Instr::St {
        space,
        size,
        mask: mask_of(lanes),
        addrs: addrs_for(lanes, addrs),
        values: values_for(values),
    }
}

/// A store whose values are not modelled (volatile data).
pub fn st_lanes_unknown(space: Space, size: u8, lanes: &[u32], addrs: Vec<u64>) -> Instr {
    Instr::St {
        space,
        size,
        mask: mask_of(lanes),
        addrs: addrs_for(lanes, addrs),
        values: Values::Unknown,
    }
}

pub fn atom_lanes(space: Space, lanes: &[u32], addrs: Vec<u64>) -> Instr {
    Instr::Atom {
        space,
        size: 4,
        mask: mask_of(lanes),
        addrs: addrs_for(lanes, addrs),
    }
}

/// A fixed-seed uniform generator (splitmix64); §6.19 allows any uniform
/// generator with a fixed seed in place of glibc `rand()`.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_forms() {
        assert_eq!(
            addrs_for(&[1, 3], vec![108, 116]),
            Addrs::Strided {
                base: 104,
                stride: 4
            }
        );
        assert_eq!(
            addrs_for(&[0, 1], vec![8, 0]),
            Addrs::Strided {
                base: 8,
                stride: -8
            }
        );
        assert_eq!(addrs_for(&[0, 2], vec![8, 9]), Addrs::List(vec![8, 9]));
        assert_eq!(values_for(vec![5, 5]), Values::Same(5));
        assert_eq!(values_for(vec![5, 7, 9]), Values::Seq { first: 5, step: 2 });
        assert_eq!(values_for(vec![5, 7, 8]), Values::List(vec![5, 7, 8]));
    }

    #[test]
    fn insert_and_clear_image() {
        let mut a = Alloc::default();
        let log = ConvLog::new(&mut a, 16 * 3, 3);
        let mut img = PmImage::default();
        log.set_up(&mut img);
        assert_eq!(log.size_of(&img, 2), 0);
        log.apply_insert(&mut img, 2, &[1, 2, 3, 4]);
        assert_eq!(log.size_of(&img, 2), 16);
        assert_eq!(log.word_of(&img, 2, 3), 4);
        assert!(log.check_shape(&img, 16, "t").is_ok());
        log.apply_clear(&mut img, 2);
        assert_eq!(log.size_of(&img, 2), 0);
    }
}
