//! Tests of the program file form, the litmus conversion and the synthetic
//! program (`docs/trace-format.md`, "Programs"), one file per subject; the
//! program builders they share are here.

mod file_form;
mod litmus;
mod robust;
mod synth;

use std::collections::BTreeMap;

use super::*;
use crate::expect::{Expect, Expectation};
use crate::types::{Cell, Trace, WarpOp};
use crate::{parse, MAX_WARPS};

fn all(space: Space, size: u8, mask: u32, addrs: Addrs) -> Instr {
    Instr::Ld {
        space,
        size,
        mask,
        addrs,
    }
}

fn strided(base: u64, stride: i64) -> Addrs {
    Addrs::Strided { base, stride }
}

/// A program using every instruction form, operand form and kernel option.
fn every_form() -> FileProgram {
    let a = CtaCode {
        warps: vec![
            vec![
                all(Space::Pm, 4, u32::MAX, strided(0x1000, 4)),
                all(Space::Global, 8, 0x5, Addrs::List(vec![0x3000, 0x3080])),
                all(Space::Shared, 1, 1, strided(0x10, 0)),
                Instr::St {
                    space: Space::Pm,
                    size: 4,
                    mask: 1,
                    addrs: strided(0x2000, 0),
                    values: Values::Same(7),
                },
                Instr::St {
                    space: Space::Global,
                    size: 16,
                    mask: 0xff00,
                    addrs: strided(0x4000, -16),
                    values: Values::Seq { first: 5, step: 3 },
                },
                Instr::St {
                    space: Space::Shared,
                    size: 2,
                    mask: 0x3,
                    addrs: Addrs::List(vec![0x20, 0x40]),
                    values: Values::List(vec![65535, 0]),
                },
                Instr::St {
                    space: Space::Pm,
                    size: 8,
                    mask: u32::MAX,
                    addrs: strided(0x5000, 8),
                    values: Values::Seq {
                        first: 100,
                        step: 2u64.wrapping_neg(),
                    },
                },
                Instr::St {
                    space: Space::Global,
                    size: 4,
                    mask: u32::MAX,
                    addrs: strided(0x6000, 4),
                    values: Values::Unknown,
                },
            ],
            vec![
                Instr::Atom {
                    space: Space::Pm,
                    size: 8,
                    mask: 1,
                    addrs: strided(0x7000, 0),
                },
                Instr::Atom {
                    space: Space::Global,
                    size: 4,
                    mask: 0x80000000,
                    addrs: Addrs::List(vec![0x7100]),
                },
                Instr::Atom {
                    space: Space::Shared,
                    size: 4,
                    mask: u32::MAX,
                    addrs: strided(0x0, 4),
                },
                Instr::OFence,
                Instr::DFence,
                Instr::Fence(FenceScope::Device),
                Instr::Fence(FenceScope::System),
                Instr::Bar,
                Instr::Compute { cycles: 0 },
                Instr::Compute {
                    cycles: MAX_COMPUTE,
                },
            ],
        ],
    };
    let b = CtaCode {
        warps: vec![
            vec![
                Instr::PRel {
                    scope: Scope::Block,
                    space: Space::Global,
                    flag: 0xe000_0000,
                    value: 1,
                },
                Instr::PRel {
                    scope: Scope::Device,
                    space: Space::Pm,
                    flag: 0x8,
                    value: u64::MAX,
                },
            ],
            Vec::new(),
            vec![
                Instr::PAcq {
                    scope: Scope::Block,
                    space: Space::Global,
                    flag: 0xe000_0000,
                    want: 1,
                    mask: u64::MAX,
                },
                Instr::PAcq {
                    scope: Scope::Device,
                    space: Space::Shared,
                    flag: 0x10,
                    want: 2,
                    mask: 0xff,
                },
            ],
        ],
    };
    FileProgram {
        name: "every-form_1.x".into(),
        kernels: vec![
            KernelInfo {
                name: "first".into(),
                grid: 6,
                block: 64,
                regs: 0,
                smem: 0,
            },
            KernelInfo {
                name: "second".into(),
                grid: 2,
                block: 65,
                regs: 40,
                smem: 4096,
            },
        ],
        // CTAs 0..2 share code (written as one range), 2 has none, 3 differs.
        code: vec![
            vec![a.clone(), a.clone(), CtaCode::default(), a].into(),
            vec![b].into(),
        ],
        expects: vec![
            Expectation {
                line: 0,
                what: Expect::Pmo,
            },
            Expectation {
                line: 0,
                what: Expect::Forbid(
                    Cell {
                        addr: 0x2000,
                        value: 7,
                    },
                    Cell {
                        addr: 0x1000,
                        value: 1,
                    },
                ),
            },
        ],
        config: vec![("pm_latency".into(), "100".into(), 0)],
    }
}

/// The program with line numbers cleared (they are the read file's).
fn no_lines(mut p: FileProgram) -> FileProgram {
    p.expects.iter_mut().for_each(|e| e.line = 0);
    p.config.iter_mut().for_each(|c| c.2 = 0);
    p
}
