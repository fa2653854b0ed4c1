//! Litmus traces as programs (`docs/trace-format.md`, "Programs", "Litmus
//! traces as programs"): one kernel whose CTA `s` is the trace's SM `s`, each
//! litmus op a one-lane warp instruction, flags as words of a reserved region.

use crate::types::{Trace, WarpOp};

use super::{Addrs, CtaCode, FileProgram, Instr, KernelInfo, Space, Values, WARP_LANES};

/// Start of the region holding litmus flag words: flag `k` (first-use
/// order, [`litmus_flags`]) is the 8-byte word at `LITMUS_FLAG_BASE + 8 * k`.
/// Litmus addresses stay far below it.
pub const LITMUS_FLAG_BASE: u64 = 0xE000_0000;

/// The flag names of a trace in first-use order: warps in (SM, warp) order,
/// each warp's ops in program order (the order the front end interns them,
/// so flag ids agree with its execution records).
pub fn litmus_flags(t: &Trace) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for op in t.programs.values().flatten() {
        if let WarpOp::PAcq { flag, .. } | WarpOp::PRel { flag, .. } = op {
            if !names.contains(flag) {
                names.push(flag.clone());
            }
        }
    }
    names
}

/// The word of flag number `k`.
pub fn litmus_flag_addr(k: usize) -> u64 {
    LITMUS_FLAG_BASE + 8 * k as u64
}

/// A one-lane access of lane 0 at `addr`.
fn lane0(addr: u64) -> Addrs {
    Addrs::Strided {
        base: addr,
        stride: 0,
    }
}

/// Litmus words are 8 bytes (values are 64-bit).
const LITMUS_SIZE: u8 = 8;

fn convert(op: &WarpOp, flags: &[String]) -> Instr {
    let flag_addr = |f: &String| litmus_flag_addr(flags.iter().position(|n| n == f).unwrap_or(0));
    let mem = |space| (space, LITMUS_SIZE, 1u32);
    match op {
        WarpOp::StPm { addr, value } => {
            let (space, size, mask) = mem(Space::Pm);
            Instr::St {
                space,
                size,
                mask,
                addrs: lane0(*addr),
                values: Values::Same(*value),
            }
        }
        WarpOp::StVol { addr } => {
            let (space, size, mask) = mem(Space::Global);
            Instr::St {
                space,
                size,
                mask,
                addrs: lane0(*addr),
                values: Values::Unknown,
            }
        }
        WarpOp::LdPm { addr } | WarpOp::LdVol { addr } => {
            let space = if matches!(op, WarpOp::LdPm { .. }) {
                Space::Pm
            } else {
                Space::Global
            };
            Instr::Ld {
                space,
                size: LITMUS_SIZE,
                mask: 1,
                addrs: lane0(*addr),
            }
        }
        WarpOp::OFence => Instr::OFence,
        WarpOp::DFence => Instr::DFence,
        WarpOp::Barrier => Instr::Bar,
        WarpOp::Delay { cycles } => Instr::Compute { cycles: *cycles },
        WarpOp::PRel { scope, flag } => Instr::PRel {
            scope: *scope,
            space: Space::Global,
            flag: flag_addr(flag),
            value: 1,
        },
        WarpOp::PAcq { scope, flag } => Instr::PAcq {
            scope: *scope,
            space: Space::Global,
            flag: flag_addr(flag),
            want: 1,
            mask: u64::MAX,
        },
    }
}

/// The program's name: the trace file's stem, reduced to name characters.
fn name_of(file: &str) -> String {
    let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
    let stem = base.strip_suffix(".trace").unwrap_or(base);
    let n: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if n.is_empty() {
        "litmus".into()
    } else {
        n
    }
}

/// A litmus trace as a program: kernel `litmus`, grid = the trace's SMs,
/// block = 32 lanes times its warps per SM; CTA `s` holds the warps of SM
/// `s` (the GPU model puts CTA `i` on SM `i` when the grid fits). The
/// trace's expectations and `config` items are kept.
pub fn litmus_program(t: &Trace) -> FileProgram {
    let flags = litmus_flags(t);
    let grid = t.sms();
    let wps = t.warps_per_sm();
    let mut code = vec![CtaCode::default(); grid as usize];
    for (id, ops) in &t.programs {
        let cta = &mut code[id.sm as usize];
        if cta.warps.is_empty() {
            cta.warps = vec![Vec::new(); wps as usize];
        }
        cta.warps[id.warp as usize] = ops.iter().map(|op| convert(op, &flags)).collect();
    }
    FileProgram {
        name: name_of(&t.file),
        kernels: vec![KernelInfo {
            name: "litmus".into(),
            grid,
            block: WARP_LANES * wps,
            regs: 0,
            smem: 0,
        }],
        code: vec![code.into()],
        expects: t.expects.clone(),
        config: t
            .config
            .iter()
            .map(|c| (c.key.clone(), c.value.clone(), c.line))
            .collect(),
    }
}
