//! SRAD (speckle-reducing anisotropic diffusion) with its native recovery,
//! as a program generator. Follows `../shared/notes/sbrp-benchmarks.md`
//! §2.3 (kernels, per-warp sequences, recovery, invariant), §2.0 (what is
//! timed, crash emulation), §2.7 (sizes) and §6 items 14, 16 and 19.
//!
//! The generator computes the real data in f32 (values are f32 bit patterns
//! in the low 32 bits of the image words): a deterministic pseudo-random
//! image `J = exp(u)`, `u` uniform in [0, 1) (§6.19: any fixed-seed uniform
//! generator); `q0sqr` from the speckle region rows/cols 0-31; per pixel the
//! four differences to the clamped neighbours, the clamped diffusion
//! coefficient `C`, and `J_out` from `C` of the pixel, its south and its east
//! neighbour, lambda 0.5, one iteration.
//!
//! Decisions where the note leaves room:
//! - The "already set" volatile byte of srad_cuda_1's entry acquire is a flag
//!   word the model starts at 0, so the acquire waits for 0: it succeeds on
//!   its first poll, as the host-set byte does in the artifact.
//! - GPM build: a `fence.dev` follows the oFence and the dFence (libGPM
//!   helpers); the entry acquire is inline PTX, not a helper, so none there.
//! - `compute` delays for the float math (K1 [`K1_MATH`], K2 [`K2_MATH`])
//!   are estimates, not measured.
//! - Crash point (`crash_program`): setMemory x2, then srad_cuda_1 cut after
//!   the first half of its CTAs (the block rows 0..gy/2 completed, the rest
//!   never launched): part of C is persisted, the rest is still the -1
//!   marker, J_out is all -1. The cut kernel's grid is the CTAs that ran
//!   (half of 16x16 by default) rather than the full grid with empty CTAs:
//!   under epoch the GPU model did not drain a kernel whose last CTAs to
//!   run had no code (it reported a deadlock).
//! - `recovery` is recovery_kernel alone; it only reads, so `recover`
//!   returns the image unchanged (the redo is the main kernels, §2.3).
//! - In `check`, a coefficient word never stored counts as "not computed",
//!   as the -1 marker does.
//! - The invariant (`check`), each clause with the program ordering it
//!   relies on: 1. a persisted coefficient `C[i]` (>= 0) is the computed
//!   one and its four differences are durable: srad_cuda_1's oFence between
//!   the difference stores and the coefficient store; 2. a written
//!   `J_out[i]` (>= 0) is the computed one and `C` of the pixel, of its south
//!   and of its east neighbour are persisted: srad_cuda_1's kernel end
//!   (every persist durable, `docs/model.md`, "Persistency models") before
//!   srad_cuda_2 reads them.

mod gen;
mod inc;

use sbrp_trace::program::Program;

use crate::incremental::Incremental;
use crate::layout::Alloc;
use crate::{App, Build, PmImage};

/// Tile side: blocks of 32x32 threads, one warp per tile row (§2.3).
const TILE: u64 = 32;
const DEFAULT_SIDE: u64 = 512;
/// Largest side accepted (7 arrays of side^2 f32 are held in memory).
const MAX_SIDE: u64 = 2048;
/// setMemory's launch shape (§2.3).
const SETMEM_GRID: u32 = 30;
const SETMEM_BLOCK: u32 = 1024;
/// Estimated ALU cycles per warp for the coefficient and the update.
pub const K1_MATH: u32 = 40;
pub const K2_MATH: u32 = 12;
const LAMBDA: f32 = 0.5;
const SEED: u64 = 0x5EED_5AAD;
/// The "not yet computed" marker setMemory writes: -1.0f32.
pub const MARK: u64 = 0xBF80_0000;
/// Shared memory per CTA: 6 tiles of 32x32 f32 in K1, 5 in K2 (§2.3).
const K1_SMEM: u32 = 6 * 4096;
const K2_SMEM: u32 = 5 * 4096;

/// Where each array lives.
#[derive(Clone, Debug)]
struct Layout {
    c: u64,
    e: u64,
    w: u64,
    s: u64,
    n: u64,
    jout: u64,
    /// Volatile: the input image, the entry-acquire byte, the restart word.
    j: u64,
    flag: u64,
    restart: u64,
}

/// SRAD on a `side` x `side` image.
pub struct Srad {
    side: u64,
    lay: Layout,
    j: Vec<f32>,
    c: Vec<f32>,
    dn: Vec<f32>,
    ds: Vec<f32>,
    de: Vec<f32>,
    dw: Vec<f32>,
    jout: Vec<f32>,
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn bits(f: f32) -> u64 {
    f.to_bits() as u64
}

impl Srad {
    /// `size` is the image side (default 512): a multiple of 32, 64..=2048.
    pub fn new(size: Option<u64>) -> Result<Self, String> {
        let side = size.unwrap_or(DEFAULT_SIDE);
        if side < 2 * TILE || !side.is_multiple_of(TILE) || side > MAX_SIDE {
            return Err(format!(
                "srad: image side {side} refused: it must be a multiple of 32 between 64 and {MAX_SIDE}"
            ));
        }
        let px = (side * side) as usize;
        let mut al = Alloc::default();
        let bytes = side * side * 4;
        // PM arrays in the note's order (§2.3), then the volatile ones.
        let lay = Layout {
            c: al.pm(bytes),
            e: al.pm(bytes),
            w: al.pm(bytes),
            n: al.pm(bytes),
            s: al.pm(bytes),
            jout: al.pm(bytes),
            j: al.global(bytes),
            flag: al.global(8),
            restart: al.global(8),
        };
        let j: Vec<f32> = (0..px as u64)
            .map(|i| {
                let u = (splitmix(SEED ^ i) >> 40) as f32 / (1u64 << 24) as f32;
                u.exp()
            })
            .collect();
        // q0sqr from the speckle region, rows and cols 0..=31.
        let (mut sum, mut sum2) = (0f32, 0f32);
        for r in 0..TILE {
            for c in 0..TILE {
                let v = j[(r * side + c) as usize];
                sum += v;
                sum2 += v * v;
            }
        }
        let size_r = (TILE * TILE) as f32;
        let mean = sum / size_r;
        let var = sum2 / size_r - mean * mean;
        let q0sqr = var / (mean * mean);

        let mut app = Srad {
            side,
            lay,
            c: vec![0.0; px],
            dn: vec![0.0; px],
            ds: vec![0.0; px],
            de: vec![0.0; px],
            dw: vec![0.0; px],
            jout: vec![0.0; px],
            j,
        };
        for i in 0..px {
            let (r, c) = (i as u64 / side, i as u64 % side);
            let jc = app.j[i];
            let n = app.j[app.idx(r.saturating_sub(1), c)] - jc;
            let s = app.j[app.idx((r + 1).min(side - 1), c)] - jc;
            let w = app.j[app.idx(r, c.saturating_sub(1))] - jc;
            let e = app.j[app.idx(r, (c + 1).min(side - 1))] - jc;
            let g2 = (n * n + s * s + w * w + e * e) / (jc * jc);
            let l = (n + s + w + e) / jc;
            let num = 0.5 * g2 - (1.0 / 16.0) * (l * l);
            let den = 1.0 + 0.25 * l;
            let qsqr = num / (den * den);
            let den = (qsqr - q0sqr) / (q0sqr * (1.0 + q0sqr));
            let coef = 1.0 / (1.0 + den);
            app.c[i] = coef.clamp(0.0, 1.0);
            if app.c[i].is_nan() {
                return Err(format!("srad: coefficient of pixel {i} is NaN"));
            }
            (app.dn[i], app.ds[i], app.dw[i], app.de[i]) = (n, s, w, e);
        }
        for i in 0..px {
            let (r, c) = (i as u64 / side, i as u64 % side);
            let cs = app.c[app.idx((r + 1).min(side - 1), c)];
            let ce = app.c[app.idx(r, (c + 1).min(side - 1))];
            let cc = app.c[i];
            let d = cc * app.dn[i] + cs * app.ds[i] + cc * app.dw[i] + ce * app.de[i];
            app.jout[i] = app.j[i] + 0.25 * LAMBDA * d;
        }
        Ok(app)
    }

    fn idx(&self, r: u64, c: u64) -> usize {
        (r * self.side + c) as usize
    }
    /// Blocks per grid side.
    fn g(&self) -> u64 {
        self.side / TILE
    }
    fn pixels(&self) -> u64 {
        self.side * self.side
    }
    fn at(&self, base: u64, r: u64, c: u64) -> u64 {
        base + (r * self.side + c) * 4
    }
    /// The computed coefficient C and J_out of pixel (r, c), `None` outside
    /// the image.
    pub fn coefficient(&self, r: u64, c: u64) -> Option<f32> {
        (r < self.side && c < self.side).then(|| self.c[self.idx(r, c)])
    }
    pub fn j_out(&self, r: u64, c: u64) -> Option<f32> {
        (r < self.side && c < self.side).then(|| self.jout[self.idx(r, c)])
    }
    /// Addresses of C, N and J_out of pixel (r, c).
    pub fn c_addr(&self, r: u64, c: u64) -> u64 {
        self.at(self.lay.c, r, c)
    }
    pub fn n_addr(&self, r: u64, c: u64) -> u64 {
        self.at(self.lay.n, r, c)
    }
    pub fn j_out_addr(&self, r: u64, c: u64) -> u64 {
        self.at(self.lay.jout, r, c)
    }

    fn final_or_crash(&self, rows: u64) -> PmImage {
        // Rows 0..rows have srad_cuda_1's results; J_out only if all do.
        let mut img = self.initial_image();
        let l = &self.lay;
        for i in 0..self.pixels() {
            let done = i / self.side < rows;
            let a = i * 4;
            img.set(l.c + a, if done { bits(self.c[i as usize]) } else { MARK });
            img.set(
                l.jout + a,
                if rows == self.side {
                    bits(self.jout[i as usize])
                } else {
                    MARK
                },
            );
            if done {
                let i = i as usize;
                img.set(l.e + a, bits(self.de[i]));
                img.set(l.w + a, bits(self.dw[i]));
                img.set(l.s + a, bits(self.ds[i]));
                img.set(l.n + a, bits(self.dn[i]));
            }
        }
        img
    }

    /// A word as f32, `None` if never stored.
    fn word(&self, img: &PmImage, addr: u64) -> Result<Option<f32>, String> {
        match img.words.get(&addr) {
            None => Ok(None),
            Some(&v) if v > u32::MAX as u64 => {
                Err(format!("word {addr:#x} = {v:#x} is not an f32"))
            }
            Some(&v) => Ok(Some(f32::from_bits(v as u32))),
        }
    }

    /// One array's words as f32 in pixel order (`None`: never stored), read
    /// in one pass.
    fn plane(&self, img: &PmImage, base: u64) -> Result<Vec<Option<f32>>, String> {
        let mut v = vec![None; self.pixels() as usize];
        for (&a, &x) in img.words.range(base..base + self.pixels() * 4) {
            if x > u32::MAX as u64 {
                return Err(format!("word {a:#x} = {x:#x} is not an f32"));
            }
            if (a - base).is_multiple_of(4) {
                v[((a - base) / 4) as usize] = Some(f32::from_bits(x as u32));
            }
        }
        Ok(v)
    }

    /// A persisted coefficient: stored and >= 0 (the marker is -1).
    fn persisted_c(&self, img: &PmImage, r: u64, c: u64) -> Result<bool, String> {
        Ok(matches!(self.word(img, self.c_addr(r, c))?, Some(f) if f >= 0.0))
    }
}

impl Srad {
    fn crash_rows(&self) -> u64 {
        self.side / 2
    }
    fn crash_ctas(&self) -> u32 {
        (self.g() * self.g() / 2) as u32
    }
}

impl App for Srad {
    fn name(&self) -> &'static str {
        "srad"
    }
    fn size(&self) -> u64 {
        self.side
    }
    fn size_unit(&self) -> &'static str {
        "pixels per image side"
    }
    /// Nothing in PM is host-initialised: setMemory writes the markers.
    fn initial_image(&self) -> PmImage {
        PmImage::default()
    }
    fn program(&self, build: Build) -> Box<dyn Program + '_> {
        self.run_prog(build)
    }
    fn final_image(&self) -> PmImage {
        self.final_or_crash(self.side)
    }
    fn crash_program(&self) -> Box<dyn Program + '_> {
        self.crash_prog()
    }
    fn crash_image(&self) -> PmImage {
        // CTAs are numbered row-major over the blocks: the first half of the
        // CTAs are the first half of the block rows.
        self.final_or_crash(self.crash_rows())
    }
    fn recovery(&self, image: &PmImage) -> Box<dyn Program + '_> {
        self.rec_prog(image)
    }
    /// recovery_kernel makes no persists.
    fn recover(&self, image: &PmImage) -> PmImage {
        image.clone()
    }
    fn check(&self, image: &PmImage) -> Result<(), String> {
        let l = &self.lay;
        let last = self.side - 1;
        let [c, n, s, e, w, jout] = [l.c, l.n, l.s, l.e, l.w, l.jout].map(|b| self.plane(image, b));
        let (c, jout) = (c?, jout?);
        let persisted = |i: usize| matches!(c[i], Some(f) if f >= 0.0);
        let diffs = [
            ("N", n?, &self.dn),
            ("S", s?, &self.ds),
            ("E", e?, &self.de),
            ("W", w?, &self.dw),
        ];
        for r in 0..self.side {
            for cc in 0..self.side {
                let i = self.idx(r, cc);
                if persisted(i) {
                    let got = c[i];
                    if got.map(bits) != Some(bits(self.c[i])) {
                        return Err(format!(
                            "srad: C[{r}][{cc}] = {got:?}, computed {}",
                            self.c[i]
                        ));
                    }
                    for (name, plane, a) in &diffs {
                        let got = plane[i];
                        if got.map(bits) != Some(bits(a[i])) {
                            return Err(format!(
                                "srad: C[{r}][{cc}] persisted but {name}[{r}][{cc}] = {got:?}, computed {}",
                                a[i]
                            ));
                        }
                    }
                }
                if let Some(f) = jout[i].filter(|f| *f >= 0.0) {
                    for (rr, c2) in [(r, cc), ((r + 1).min(last), cc), (r, (cc + 1).min(last))] {
                        if !persisted(self.idx(rr, c2)) {
                            return Err(format!(
                                "srad: J_out[{r}][{cc}] written but C[{rr}][{c2}] is not persisted"
                            ));
                        }
                    }
                    if bits(f) != bits(self.jout[i]) {
                        return Err(format!(
                            "srad: J_out[{r}][{cc}] = {f}, computed {}",
                            self.jout[i]
                        ));
                    }
                }
            }
        }
        Ok(())
    }
    /// The first pixel with a persisted coefficient gets N = the marker; if
    /// none has one, pixel (0, 0) gets its coefficient with N left unset.
    fn incremental(&self, img: &PmImage) -> Option<Box<dyn Incremental + '_>> {
        Some(Box::new(inc::SradInc::new(self, img)))
    }
    fn corrupt(&self, image: &PmImage) -> PmImage {
        let mut img = image.clone();
        let hit = (0..self.side)
            .flat_map(|r| (0..self.side).map(move |c| (r, c)))
            .find(|&(r, c)| self.persisted_c(image, r, c).unwrap_or(false));
        let (r, c) = hit.unwrap_or((0, 0));
        if hit.is_none() {
            img.set(self.c_addr(r, c), bits(self.c[0]));
        }
        let want = bits(self.dn[self.idx(r, c)]);
        // The marker, unless that happens to be the computed value.
        img.set(self.n_addr(r, c), if want == MARK { 0 } else { MARK });
        img
    }
}
