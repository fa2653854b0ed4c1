//! SRAD's programs (`../shared/notes/sbrp-benchmarks.md` §2.3): the CTAs of
//! setMemory, srad_cuda_1 and srad_cuda_2 (one warp per 32-pixel row of a
//! 32x32 tile), the run cut at the crash point and recovery_kernel. The
//! decisions are in `mod.rs`.

use sbrp_trace::program::{CtaCode, FenceScope, Instr, KernelInfo, Program, Space, Values};
use sbrp_trace::Scope;

use super::{
    bits, Srad, K1_MATH, K1_SMEM, K2_MATH, K2_SMEM, MARK, SETMEM_BLOCK, SETMEM_GRID, TILE,
};
use crate::layout::{ld, pacq, st};
use crate::{Build, PmImage};

impl Srad {
    fn kernels(&self, rec: bool) -> Vec<KernelInfo> {
        let g = (self.g() * self.g()) as u32;
        let k = |name: &str, grid, block, smem| KernelInfo {
            name: name.into(),
            grid,
            block,
            regs: 0,
            smem,
        };
        if rec {
            return vec![k("recovery_kernel", g, 1024, 0)];
        }
        vec![
            k("setMemory", SETMEM_GRID, SETMEM_BLOCK, 0),
            k("setMemory", SETMEM_GRID, SETMEM_BLOCK, 0),
            k("srad_cuda_1", g, 1024, K1_SMEM),
            k("srad_cuda_2", g, 1024, K2_SMEM),
        ]
    }

    /// One 32-pixel row segment of a computed array, as store values.
    fn row_vals(&self, a: &[f32], r: u64, c0: u64) -> Values {
        let i = self.idx(r, c0);
        Values::List(a[i..i + TILE as usize].iter().map(|&f| bits(f)).collect())
    }

    /// setMemory: a grid-stride fill of one array with the marker.
    fn setmem(&self, base: u64, cta: u32) -> CtaCode {
        let total = self.pixels();
        let stride = (SETMEM_GRID * SETMEM_BLOCK) as u64;
        let warps = (0..SETMEM_BLOCK / 32)
            .map(|w| {
                let mut v = Vec::new();
                let mut i = cta as u64 * SETMEM_BLOCK as u64 + w as u64 * 32;
                while i < total {
                    // Whole warps: side^2 is a multiple of 1024.
                    v.push(st(
                        Space::Pm,
                        4,
                        u32::MAX,
                        base + i * 4,
                        4,
                        Values::Same(MARK),
                    ));
                    i += stride;
                }
                v
            })
            .collect();
        CtaCode { warps }
    }

    fn fence_after(&self, v: &mut Vec<Instr>, op: Instr, build: Build) {
        v.push(op);
        if build == Build::Gpm {
            v.push(Instr::Fence(FenceScope::Device));
        }
    }

    /// srad_cuda_1: warp `w` of block (bx, by) handles row by*32+w.
    fn k1(&self, cta: u32, build: Build) -> CtaCode {
        let (g, last) = (self.g(), self.side - 1);
        let (bx, by) = (cta as u64 % g, cta as u64 / g);
        let c0 = bx * TILE;
        let l = &self.lay;
        let all = u32::MAX;
        let warps = (0..TILE)
            .map(|w| {
                let r = by * TILE + w;
                let mut v = Vec::with_capacity(20);
                // System-scope acquire of the already-set byte (see `//!`).
                v.push(pacq(Scope::Device, Space::Global, l.flag, 0));
                // North and south rows of the tile (clamped at the image edge).
                let north = (by * TILE).saturating_sub(1);
                let south = (by * TILE + TILE).min(last);
                v.push(ld(Space::Global, 4, all, self.at(l.j, north, c0), 4));
                v.push(ld(Space::Global, 4, all, self.at(l.j, south, c0), 4));
                v.push(Instr::Bar);
                // West and east columns: one address for the whole warp.
                let west = c0.saturating_sub(1);
                let east = (c0 + TILE).min(last);
                v.push(ld(Space::Global, 4, all, self.at(l.j, r, west), 0));
                v.push(ld(Space::Global, 4, all, self.at(l.j, r, east), 0));
                v.push(Instr::Bar);
                v.push(ld(Space::Global, 4, all, self.at(l.j, r, c0), 4));
                v.push(Instr::Bar);
                // C first: a pixel already >= 0 would be skipped (none here).
                v.push(ld(Space::Pm, 4, all, self.at(l.c, r, c0), 4));
                v.push(Instr::Compute { cycles: K1_MATH });
                for (base, a) in [
                    (l.e, &self.de),
                    (l.w, &self.dw),
                    (l.s, &self.ds),
                    (l.n, &self.dn),
                ] {
                    v.push(st(
                        Space::Pm,
                        4,
                        all,
                        self.at(base, r, c0),
                        4,
                        self.row_vals(a, r, c0),
                    ));
                }
                // The differences persist before the coefficient (§2.3).
                self.fence_after(&mut v, Instr::OFence, build);
                v.push(st(
                    Space::Pm,
                    4,
                    all,
                    self.at(l.c, r, c0),
                    4,
                    self.row_vals(&self.c, r, c0),
                ));
                v
            })
            .collect();
        CtaCode { warps }
    }

    /// srad_cuda_2: the update of row by*32+w into J_out.
    fn k2(&self, cta: u32, build: Build) -> CtaCode {
        let (g, last) = (self.g(), self.side - 1);
        let (bx, by) = (cta as u64 % g, cta as u64 / g);
        let c0 = bx * TILE;
        let l = &self.lay;
        let all = u32::MAX;
        let warps = (0..TILE)
            .map(|w| {
                let r = by * TILE + w;
                let mut v = Vec::with_capacity(20);
                v.push(ld(Space::Global, 4, all, self.at(l.j, r, c0), 4));
                v.push(Instr::Bar);
                let south = (by * TILE + TILE).min(last);
                v.push(ld(Space::Pm, 4, all, self.at(l.c, south, c0), 4));
                v.push(Instr::Bar);
                let east = (c0 + TILE).min(last);
                v.push(ld(Space::Pm, 4, all, self.at(l.c, r, east), 0));
                v.push(Instr::Bar);
                v.push(ld(Space::Pm, 4, all, self.at(l.c, r, c0), 4));
                v.push(Instr::Bar);
                // J_out first: a pixel already >= 0 would be skipped.
                for base in [l.jout, l.n, l.s, l.w, l.e] {
                    v.push(ld(Space::Pm, 4, all, self.at(base, r, c0), 4));
                }
                v.push(Instr::Compute { cycles: K2_MATH });
                v.push(st(
                    Space::Pm,
                    4,
                    all,
                    self.at(l.jout, r, c0),
                    4,
                    self.row_vals(&self.jout, r, c0),
                ));
                self.fence_after(&mut v, Instr::DFence, build);
                v
            })
            .collect();
        CtaCode { warps }
    }

    /// recovery_kernel: read C and J_out; lanes that find a negative value
    /// record the kernel to restart (0: C, else 1: J_out) in a volatile word.
    fn rec_cta(&self, cta: u32, restart: &[u8]) -> CtaCode {
        let g = self.g();
        let (bx, by) = (cta as u64 % g, cta as u64 / g);
        let c0 = bx * TILE;
        let l = &self.lay;
        let warps = (0..TILE)
            .map(|w| {
                let r = by * TILE + w;
                let mut v = vec![
                    ld(Space::Pm, 4, u32::MAX, self.at(l.c, r, c0), 4),
                    ld(Space::Pm, 4, u32::MAX, self.at(l.jout, r, c0), 4),
                    // The tests for < 0 wait for the data.
                    Instr::Compute { cycles: 2 },
                ];
                let i = self.idx(r, c0);
                let (mut mask, mut vals) = (0u32, Vec::new());
                for lane in 0..TILE as usize {
                    if restart[i + lane] != NONE {
                        mask |= 1 << lane;
                        vals.push(restart[i + lane] as u64);
                    }
                }
                if mask != 0 {
                    v.push(Instr::St {
                        space: Space::Global,
                        size: 4,
                        mask,
                        addrs: sbrp_trace::program::Addrs::Strided {
                            base: l.restart,
                            stride: 0,
                        },
                        values: Values::List(vals),
                    });
                }
                v
            })
            .collect();
        CtaCode { warps }
    }

    pub(super) fn run_prog(&self, build: Build) -> Box<dyn Program + '_> {
        let g = (self.g() * self.g()) as u32;
        Box::new(SradProgram {
            app: self,
            build,
            name: "srad",
            kernels: self.kernels(false),
            kinds: vec![
                Kind::SetMem(self.lay.c),
                Kind::SetMem(self.lay.jout),
                Kind::K1(g),
                Kind::K2,
            ],
            restart: Vec::new(),
        })
    }
    pub(super) fn crash_prog(&self) -> Box<dyn Program + '_> {
        let mut kernels = self.kernels(false);
        kernels.truncate(3);
        kernels[2].grid = self.crash_ctas();
        Box::new(SradProgram {
            app: self,
            build: Build::Gpu,
            name: "srad_rec",
            kernels,
            kinds: vec![
                Kind::SetMem(self.lay.c),
                Kind::SetMem(self.lay.jout),
                Kind::K1(self.crash_ctas()),
            ],
            restart: Vec::new(),
        })
    }
    pub(super) fn rec_prog(&self, image: &PmImage) -> Box<dyn Program + '_> {
        let l = &self.lay;
        let neg = |a: u64| (f32::from_bits(image.get(a) as u32)) < 0.0;
        let restart = (0..self.pixels())
            .map(|i| {
                if neg(l.c + i * 4) {
                    0
                } else if neg(l.jout + i * 4) {
                    1
                } else {
                    NONE
                }
            })
            .collect();
        Box::new(SradProgram {
            app: self,
            build: Build::Gpu,
            name: "srad_recovery",
            kernels: self.kernels(true),
            kinds: vec![Kind::Rec],
            restart,
        })
    }
}

/// Restart codes of recovery_kernel's lanes.
const NONE: u8 = u8::MAX;

/// The programs of this app: `kinds[k]` says what kernel `k` is.
struct SradProgram<'a> {
    app: &'a Srad,
    build: Build,
    name: &'static str,
    kernels: Vec<KernelInfo>,
    kinds: Vec<Kind>,
    /// recovery_kernel: per pixel, the restart code its thread records.
    restart: Vec<u8>,
}

#[derive(Clone, Copy)]
enum Kind {
    SetMem(u64),
    /// srad_cuda_1 with code for CTAs below the bound (the crash cut).
    K1(u32),
    K2,
    Rec,
}

impl Program for SradProgram<'_> {
    fn name(&self) -> &str {
        self.name
    }
    fn kernels(&self) -> &[KernelInfo] {
        &self.kernels
    }
    fn cta(&self, k: usize, cta: u32) -> CtaCode {
        let (Some(kind), Some(info)) = (self.kinds.get(k), self.kernels.get(k)) else {
            return CtaCode::default();
        };
        if cta >= info.grid {
            return CtaCode::default();
        }
        match *kind {
            Kind::SetMem(base) => self.app.setmem(base, cta),
            Kind::K1(cut) if cta < cut => self.app.k1(cta, self.build),
            Kind::K1(_) => CtaCode::default(),
            Kind::K2 => self.app.k2(cta, self.build),
            Kind::Rec => self.app.rec_cta(cta, &self.restart),
        }
    }
}
