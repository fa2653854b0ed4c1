//! Address allocation (PM and volatile regions, 256-byte aligned as
//! `cudaMallocPitch` is in the artifact) and builders of warp instructions.

use sbrp_trace::program::{Addrs, Instr, KernelInfo, Space, Values};
use sbrp_trace::Scope;

/// Start of PM allocations and of volatile ones.
pub const PM_BASE: u64 = 1 << 40;
pub const GLOBAL_BASE: u64 = 1 << 36;

/// A bump allocator for one program's data.
#[derive(Clone, Debug)]
pub struct Alloc {
    pm: u64,
    global: u64,
}

impl Default for Alloc {
    fn default() -> Self {
        Alloc {
            pm: PM_BASE,
            global: GLOBAL_BASE,
        }
    }
}

impl Alloc {
    pub fn pm(&mut self, bytes: u64) -> u64 {
        let a = self.pm;
        self.pm = (self.pm + bytes.max(1)).next_multiple_of(256);
        a
    }
    pub fn global(&mut self, bytes: u64) -> u64 {
        let a = self.global;
        self.global = (self.global + bytes.max(1)).next_multiple_of(256);
        a
    }
}

/// A kernel launch of `grid` CTAs of `block` threads (registers unknown).
pub fn kernel(name: &str, grid: u64, block: u64, smem: u64) -> KernelInfo {
    KernelInfo {
        name: name.to_string(),
        grid: grid as u32,
        block: block as u32,
        regs: 0,
        smem: smem as u32,
    }
}

/// Lanes `0..n` active.
pub fn lanes(n: u32) -> u32 {
    if n >= 32 {
        u32::MAX
    } else {
        (1u32 << n) - 1
    }
}

pub fn ld(space: Space, size: u8, mask: u32, base: u64, stride: i64) -> Instr {
    Instr::Ld {
        space,
        size,
        mask,
        addrs: Addrs::Strided { base, stride },
    }
}

pub fn ld_list(space: Space, size: u8, mask: u32, addrs: Vec<u64>) -> Instr {
    Instr::Ld {
        space,
        size,
        mask,
        addrs: Addrs::List(addrs),
    }
}

pub fn st(space: Space, size: u8, mask: u32, base: u64, stride: i64, values: Values) -> Instr {
    Instr::St {
        space,
        size,
        mask,
        addrs: Addrs::Strided { base, stride },
        values,
    }
}

pub fn st_list(space: Space, size: u8, mask: u32, addrs: Vec<u64>, values: Vec<u64>) -> Instr {
    Instr::St {
        space,
        size,
        mask,
        addrs: Addrs::List(addrs),
        values: Values::List(values),
    }
}

pub fn atom(space: Space, size: u8, mask: u32, base: u64, stride: i64) -> Instr {
    Instr::Atom {
        space,
        size,
        mask,
        addrs: Addrs::Strided { base, stride },
    }
}

pub fn pacq(scope: Scope, space: Space, flag: u64, want: u64) -> Instr {
    Instr::PAcq {
        scope,
        space,
        flag,
        want,
        mask: u64::MAX,
    }
}

pub fn prel(scope: Scope, space: Space, flag: u64, value: u64) -> Instr {
    Instr::PRel {
        scope,
        space,
        flag,
        value,
    }
}
