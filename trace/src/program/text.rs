//! The program file form (`docs/trace-format.md`, "Programs"): the parser
//! `parse_program` and the writer `program_to_text`, both driven by one
//! mnemonic table so the two directions cannot drift apart.

use crate::expect::{parse_expect, Expectation};
use crate::ops::parse_num;
use crate::types::{Scope, MAX_WARPS};

use std::collections::BTreeMap;

use super::{
    check_instr, Addrs, CtaCode, FenceScope, FileProgram, Instr, KernelCode, KernelInfo, Program,
    Space, Values, MAX_COMPUTE, WARP_LANES,
};

/// A program file that could not be read: the file, the line and what is
/// wrong (naming the offending token).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {msg}")]
pub struct ProgramError {
    pub file: String,
    pub line: usize,
    pub msg: String,
}

/// Largest thread count of a CTA: 64 warps of 32 lanes (the unit's limit).
pub const MAX_BLOCK: u32 = MAX_WARPS * WARP_LANES;
/// Access sizes in bytes per lane.
pub const SIZES: [u8; 5] = [1, 2, 4, 8, 16];
/// Flag words are 8 bytes and must be 8-byte aligned.
pub const FLAG_ALIGN: u64 = 8;

/// An instruction's kind, without its operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstrKind {
    Ld(Space),
    St(Space),
    Atom(Space),
    OFence,
    DFence,
    Fence(FenceScope),
    PAcq(Scope),
    PRel(Scope),
    Bar,
    Compute,
}

/// Every instruction mnemonic: the one table of the parser and the writer.
pub const INSTR_MNEMONICS: [(&str, InstrKind); 20] = [
    ("ld.pm", InstrKind::Ld(Space::Pm)),
    ("ld.global", InstrKind::Ld(Space::Global)),
    ("ld.shared", InstrKind::Ld(Space::Shared)),
    ("st.pm", InstrKind::St(Space::Pm)),
    ("st.global", InstrKind::St(Space::Global)),
    ("st.shared", InstrKind::St(Space::Shared)),
    ("atom.pm", InstrKind::Atom(Space::Pm)),
    ("atom.global", InstrKind::Atom(Space::Global)),
    ("atom.shared", InstrKind::Atom(Space::Shared)),
    ("ofence", InstrKind::OFence),
    ("dfence", InstrKind::DFence),
    ("fence.dev", InstrKind::Fence(FenceScope::Device)),
    ("fence.sys", InstrKind::Fence(FenceScope::System)),
    ("pacq.block", InstrKind::PAcq(Scope::Block)),
    ("pacq.dev", InstrKind::PAcq(Scope::Device)),
    // A system-scope acquire (`ld.relaxed.sys`, SRAD) halts and invalidates
    // as a device-scope one does in every model: read as `pacq.dev`.
    ("pacq.sys", InstrKind::PAcq(Scope::Device)),
    ("prel.block", InstrKind::PRel(Scope::Block)),
    ("prel.dev", InstrKind::PRel(Scope::Device)),
    ("bar", InstrKind::Bar),
    ("compute", InstrKind::Compute),
];

/// Space names of the flag operand of `pacq` / `prel`.
const SPACE_NAMES: [(&str, Space); 3] = [
    ("pm", Space::Pm),
    ("global", Space::Global),
    ("shared", Space::Shared),
];

impl InstrKind {
    pub fn of(i: &Instr) -> InstrKind {
        match i {
            Instr::Ld { space, .. } => InstrKind::Ld(*space),
            Instr::St { space, .. } => InstrKind::St(*space),
            Instr::Atom { space, .. } => InstrKind::Atom(*space),
            Instr::OFence => InstrKind::OFence,
            Instr::DFence => InstrKind::DFence,
            Instr::Fence(s) => InstrKind::Fence(*s),
            Instr::PAcq { scope, .. } => InstrKind::PAcq(*scope),
            Instr::PRel { scope, .. } => InstrKind::PRel(*scope),
            Instr::Bar => InstrKind::Bar,
            Instr::Compute { .. } => InstrKind::Compute,
        }
    }

    pub fn mnemonic(self) -> &'static str {
        INSTR_MNEMONICS
            .iter()
            .find(|(_, k)| *k == self)
            .map(|(m, _)| *m)
            .unwrap_or("?")
    }

    pub fn from_mnemonic(m: &str) -> Option<InstrKind> {
        INSTR_MNEMONICS
            .iter()
            .find(|(n, _)| *n == m)
            .map(|(_, k)| *k)
    }
}

fn space_name(s: Space) -> &'static str {
    SPACE_NAMES
        .iter()
        .find(|(_, x)| *x == s)
        .map(|(n, _)| *n)
        .unwrap_or("?")
}

/// Splits a line (comment removed) into tokens; a bracketed list is one
/// token even with blanks inside, so `[1, 2, 3]` and `[1,2,3]` both read.
fn tokens(body: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_list = false;
    for c in body.chars() {
        match c {
            '[' if in_list => return Err("`[` inside a list".into()),
            '[' => {
                in_list = true;
                cur.push(c);
            }
            ']' if !in_list => return Err("`]` without `[`".into()),
            ']' => {
                in_list = false;
                cur.push(c);
            }
            c if c.is_whitespace() => {
                if !in_list && !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if in_list {
        return Err(format!("list `{cur}` has no closing `]`"));
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    Ok(out)
}

/// A name of a program or kernel: letters, digits, `_`, `-`, `.`.
fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

fn num(tok: &str, what: &str) -> Result<u64, String> {
    parse_num(tok).ok_or_else(|| format!("expected {what}, found `{tok}`"))
}

fn num32(tok: &str, what: &str) -> Result<u32, String> {
    let n = num(tok, what)?;
    u32::try_from(n).map_err(|_| format!("{what} `{tok}` out of range (at most {})", u32::MAX))
}

/// `[a,b,...]`: the numbers of a list token.
fn list(tok: &str, what: &str) -> Result<Vec<u64>, String> {
    let inner = tok
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .ok_or_else(|| format!("expected a list [..] of {what}, found `{tok}`"))?;
    if inner.is_empty() {
        return Ok(Vec::new());
    }
    inner.split(',').map(|x| num(x, what)).collect()
}

/// `+N` or `-N` as a signed step.
fn signed(tok: &str, what: &str) -> Result<i128, String> {
    let (neg, rest) = match tok.as_bytes().first() {
        Some(b'+') => (false, &tok[1..]),
        Some(b'-') => (true, &tok[1..]),
        _ => return Err(format!("expected {what} `+N` or `-N`, found `{tok}`")),
    };
    let n = parse_num(rest).ok_or_else(|| format!("expected {what} `+N` or `-N`, found `{tok}`"))?
        as i128;
    Ok(if neg { -n } else { n })
}

/// The first active lane of `mask` whose address `base + lane * stride`
/// (no wrap) is outside 0..2^64, if any.
fn lane_outside(base: i128, stride: i64, mask: u32) -> Option<u32> {
    (0..WARP_LANES)
        .filter(|l| mask >> l & 1 == 1)
        .find(|&lane| {
            let a = base + lane as i128 * stride as i128;
            a < 0 || a > u64::MAX as i128
        })
}

/// Checks the parts of a memory instruction that need its mask and size;
/// `base` is a strided base as written (it may be negative).
fn check_access(
    size: u8,
    mask: u32,
    addrs: &Addrs,
    base: i128,
    values: &Values,
) -> Result<(), String> {
    let active = mask.count_ones() as usize;
    match addrs {
        Addrs::List(v) if v.len() != active => {
            return Err(format!(
                "address list has {} entries but mask {mask:#x} has {active} active lanes",
                v.len()
            ))
        }
        Addrs::List(_) => {}
        Addrs::Strided { stride, .. } => {
            // Every active lane's address must be a real address, not a wrap.
            if let Some(lane) = lane_outside(base, *stride, mask) {
                let b = if base < 0 {
                    format!("-{:#x}", base.unsigned_abs())
                } else {
                    format!("{base:#x}")
                };
                return Err(format!(
                    "lane {lane}'s address {b} + {lane} * {stride} is outside 0..2^64"
                ));
            }
        }
    }
    if let Values::List(v) = values {
        if v.len() != active {
            return Err(format!(
                "value list has {} entries but mask {mask:#x} has {active} active lanes",
                v.len()
            ));
        }
    }
    if size < 8 {
        let limit = 1u64 << (8 * size as u32);
        for r in 0..active {
            if let Some(v) = values.get(r).filter(|&v| v >= limit) {
                return Err(format!(
                    "value {v} of lane rank {r} does not fit size {size}"
                ));
            }
        }
    }
    Ok(())
}

/// Parses `[size=N] [mask=M] ADDRS [= VALUES]` of a memory instruction.
fn parse_mem(kind: InstrKind, args: &[String]) -> Result<Instr, String> {
    let m = kind.mnemonic();
    let mut size: Option<u8> = None;
    let mut mask: Option<u32> = None;
    let mut i = 0;
    while let Some(t) = args.get(i) {
        let Some((k, v)) = t.split_once('=').filter(|(k, _)| !k.is_empty()) else {
            break;
        };
        match k {
            "size" if size.is_none() => {
                let s = num(v, "a size")?;
                size = Some(
                    SIZES
                        .iter()
                        .copied()
                        .find(|&x| x as u64 == s)
                        .ok_or_else(|| format!("size `{v}` is not one of 1, 2, 4, 8, 16"))?,
                );
            }
            "mask" if mask.is_none() => {
                let n = num(v, "a lane mask")?;
                let n =
                    u32::try_from(n).map_err(|_| format!("mask `{v}` has bits above lane 31"))?;
                if n == 0 {
                    return Err("mask `0` has no active lane".into());
                }
                mask = Some(n);
            }
            "size" | "mask" => return Err(format!("`{k}=` given twice")),
            _ => return Err(format!("unknown option `{t}` of {m} (size=, mask=)")),
        }
        i += 1;
    }
    let size = size.unwrap_or(4);
    let mask = mask.unwrap_or(u32::MAX);
    let a = args
        .get(i)
        .ok_or_else(|| format!("expected addresses after {m}: `BASE +STRIDE` or `[A,B,..]`"))?;
    let mut signed_base = 0i128;
    let addrs = if a.starts_with('[') {
        i += 1;
        Addrs::List(list(a, "addresses")?)
    } else {
        // A base may be negative when the lanes below the first active one
        // would be (HM's strides): `-0x100 +64`.
        signed_base = match a.strip_prefix('-') {
            Some(n) => -(num(n, "a base address")? as i128),
            None => num(a, "a base address")? as i128,
        };
        let base = signed_base as u64;
        let s = args
            .get(i + 1)
            .ok_or_else(|| format!("expected a stride `+N` or `-N` after base {a}"))?;
        let stride = i64::try_from(signed(s, "a stride")?)
            .map_err(|_| format!("stride `{s}` out of range"))?;
        i += 2;
        Addrs::Strided { base, stride }
    };
    let values = match (kind, args.get(i).map(String::as_str)) {
        (InstrKind::St(_), Some("=")) => {
            let v = args.get(i + 1).ok_or_else(|| {
                "expected values after `=`: `V`, `V +S` or `[A,B,..]`".to_string()
            })?;
            i += 2;
            if v.starts_with('[') {
                Values::List(list(v, "values")?)
            } else {
                let first = num(v, "a value")?;
                match args.get(i) {
                    Some(s) => {
                        i += 1;
                        let step = signed(s, "a value step")?;
                        // A negative step wraps, as lane values are computed.
                        let step = if step < 0 {
                            (step.unsigned_abs() as u64).wrapping_neg()
                        } else {
                            step as u64
                        };
                        Values::Seq { first, step }
                    }
                    None => Values::Same(first),
                }
            }
        }
        _ => Values::Unknown,
    };
    if let Some(t) = args.get(i) {
        return Err(format!("unexpected `{t}` after the operands of {m}"));
    }
    check_access(size, mask, &addrs, signed_base, &values)?;
    Ok(match kind {
        InstrKind::Ld(space) => Instr::Ld {
            space,
            size,
            mask,
            addrs,
        },
        InstrKind::Atom(space) => Instr::Atom {
            space,
            size,
            mask,
            addrs,
        },
        InstrKind::St(space) => Instr::St {
            space,
            size,
            mask,
            addrs,
            values,
        },
        _ => return Err(format!("{m} is not a memory instruction")),
    })
}

/// Parses one instruction line: mnemonic then operands.
fn parse_instr(tok: &[String]) -> Result<Instr, String> {
    let m = tok[0].as_str();
    let kind = InstrKind::from_mnemonic(m).ok_or_else(|| {
        let all: Vec<&str> = INSTR_MNEMONICS.iter().map(|(n, _)| *n).collect();
        format!(
            "unknown instruction `{m}`: expected one of {} (or program, kernel, cta, warp, config, expect)",
            all.join(", ")
        )
    })?;
    let args = &tok[1..];
    let i = parse_instr_unchecked(kind, m, args)?;
    check_instr(&i)?;
    Ok(i)
}

/// The instruction `m` with its operands, before `check_instr`.
fn parse_instr_unchecked(kind: InstrKind, m: &str, args: &[String]) -> Result<Instr, String> {
    let nargs = |lo: usize, hi: usize| -> Result<(), String> {
        if args.len() > hi {
            Err(format!("unexpected `{}` after {m}", args[hi]))
        } else if args.len() < lo {
            Err(format!("{m} takes {lo} operand(s), found {}", args.len()))
        } else {
            Ok(())
        }
    };
    let flag = |space: &str, addr: &str| -> Result<(Space, u64), String> {
        let sp = SPACE_NAMES
            .iter()
            .find(|(n, _)| *n == space)
            .map(|(_, s)| *s)
            .ok_or_else(|| format!("expected a space pm, global or shared, found `{space}`"))?;
        let a = num(addr, "a flag address")?;
        if a % FLAG_ALIGN != 0 {
            return Err(format!(
                "flag address `{addr}` is not {FLAG_ALIGN}-byte aligned"
            ));
        }
        Ok((sp, a))
    };
    Ok(match kind {
        InstrKind::Ld(_) | InstrKind::St(_) | InstrKind::Atom(_) => parse_mem(kind, args)?,
        InstrKind::OFence => {
            nargs(0, 0)?;
            Instr::OFence
        }
        InstrKind::DFence => {
            nargs(0, 0)?;
            Instr::DFence
        }
        InstrKind::Fence(s) => {
            nargs(0, 0)?;
            Instr::Fence(s)
        }
        InstrKind::Bar => {
            nargs(0, 0)?;
            Instr::Bar
        }
        InstrKind::Compute => {
            nargs(1, 1)?;
            let c = num(&args[0], "a cycle count")?;
            if c > MAX_COMPUTE as u64 {
                return Err(format!(
                    "compute `{}` too long (at most {MAX_COMPUTE} cycles)",
                    args[0]
                ));
            }
            Instr::Compute { cycles: c as u32 }
        }
        InstrKind::PAcq(scope) => {
            nargs(3, 4)?;
            let (space, flag) = flag(&args[0], &args[1])?;
            let want = num(&args[2], "the wanted value")?;
            let mask = match args.get(3) {
                Some(t) => num(t, "a value mask")?,
                None => u64::MAX,
            };
            if want & !mask != 0 {
                // The poll could never succeed.
                return Err(format!(
                    "wanted value `{}` has bits outside mask {mask:#x}: the acquire would spin forever",
                    args[2]
                ));
            }
            Instr::PAcq {
                scope,
                space,
                flag,
                want,
                mask,
            }
        }
        InstrKind::PRel(scope) => {
            nargs(3, 3)?;
            let (space, flag) = flag(&args[0], &args[1])?;
            let value = num(&args[2], "the released value")?;
            Instr::PRel {
                scope,
                space,
                flag,
                value,
            }
        }
    })
}

/// `key=value` options of a `kernel` line.
fn parse_kernel(tok: &[String]) -> Result<KernelInfo, String> {
    let name = tok
        .get(1)
        .ok_or_else(|| "expected `kernel NAME grid=G block=T [regs=R] [smem=S]`".to_string())?;
    if !valid_name(name) || name.contains('=') {
        return Err(format!(
            "expected a kernel name (letters, digits, _ - .), found `{name}`"
        ));
    }
    let mut k = KernelInfo {
        name: name.clone(),
        grid: 0,
        block: 0,
        regs: 0,
        smem: 0,
    };
    let mut seen: Vec<&str> = Vec::new();
    for t in &tok[2..] {
        let (key, v) = t
            .split_once('=')
            .ok_or_else(|| format!("expected KEY=VALUE on the kernel line, found `{t}`"))?;
        if seen.contains(&key) {
            return Err(format!("`{key}=` given twice"));
        }
        let n = num32(v, key)?;
        match key {
            "grid" => k.grid = n,
            "block" => k.block = n,
            "regs" => k.regs = n,
            "smem" => k.smem = n,
            _ => {
                return Err(format!(
                    "unknown kernel option `{t}` (grid=, block=, regs=, smem=)"
                ))
            }
        }
        seen.push(key);
    }
    if k.grid == 0 {
        return Err("kernel needs grid=G with G at least 1".into());
    }
    if k.block == 0 || k.block > MAX_BLOCK {
        return Err(format!(
            "kernel needs block=T with T in 1..={MAX_BLOCK} threads"
        ));
    }
    Ok(k)
}

/// `cta C`, `cta A..B` (B excluded) or `cta A..=B`.
fn parse_ctas(tok: &[String], grid: u32) -> Result<(u32, u32), String> {
    if tok.len() != 2 {
        return Err("expected `cta C`, `cta A..B` or `cta A..=B`".into());
    }
    let t = &tok[1];
    let (lo, hi) = if let Some((a, b)) = t.split_once("..=") {
        (
            num32(a, "a CTA number")?,
            num32(b, "a CTA number")? as u64 + 1,
        )
    } else if let Some((a, b)) = t.split_once("..") {
        (num32(a, "a CTA number")?, num32(b, "a CTA number")? as u64)
    } else {
        let c = num32(t, "a CTA number")?;
        (c, c as u64 + 1)
    };
    if lo as u64 >= hi {
        return Err(format!("CTA range `{t}` is empty"));
    }
    if hi > grid as u64 {
        return Err(format!(
            "CTA `{t}` out of range: the kernel's grid has {grid} CTAs"
        ));
    }
    Ok((lo, hi as u32))
}

/// The CTAs being read: their range, where they were named, and the code.
struct Block {
    lo: u32,
    hi: u32,
    code: CtaCode,
    /// Line of each warp's `warp` line, to refuse a warp given twice.
    warp_line: Vec<Option<usize>>,
    warp: Option<usize>,
}

struct Reader {
    p: FileProgram,
    /// Per kernel, the CTA ranges named so far: start -> (end, line).
    named: Vec<BTreeMap<u32, (u32, usize)>>,
    block: Option<Block>,
}

impl Reader {
    /// Stores the CTAs read so far into the current kernel's code.
    fn close_block(&mut self) {
        let (Some(b), Some(code)) = (self.block.take(), self.p.code.last_mut()) else {
            return;
        };
        code.insert(b.lo, b.hi, b.code);
    }

    fn line(&mut self, tok: &[String], line: usize) -> Result<(), String> {
        let first = tok[0].as_str();
        if self.p.name.is_empty() && first != "program" {
            return Err(format!("expected `program NAME` first, found `{first}`"));
        }
        match first {
            "program" => {
                if !self.p.name.is_empty() {
                    return Err("a second `program` line: one program per file".into());
                }
                match tok {
                    [_, n] if valid_name(n) => self.p.name = n.clone(),
                    _ => {
                        return Err(format!(
                            "expected `program NAME` (letters, digits, _ - .), found `{}`",
                            tok[1..].join(" ")
                        ))
                    }
                }
            }
            "config" => {
                if tok.len() < 2 {
                    return Err("expected KEY=VALUE after config".into());
                }
                for kv in &tok[1..] {
                    let (k, v) = kv
                        .split_once('=')
                        .filter(|(k, _)| !k.is_empty())
                        .ok_or_else(|| format!("expected KEY=VALUE after config, found `{kv}`"))?;
                    self.p.config.push((k.to_string(), v.to_string(), line));
                }
            }
            "expect" => {
                let words: Vec<&str> = tok[1..].iter().map(String::as_str).collect();
                let what = parse_expect(&words)?;
                self.p.expects.push(Expectation { line, what });
            }
            "kernel" => {
                self.close_block();
                let k = parse_kernel(tok)?;
                self.p.kernels.push(k);
                self.p.code.push(KernelCode::default());
                self.named.push(BTreeMap::new());
            }
            "cta" => {
                self.close_block();
                let Some(k) = self.p.kernels.last() else {
                    return Err("`cta` before any `kernel` line".into());
                };
                let (lo, hi) = parse_ctas(tok, k.grid)?;
                let wpc = k.warps_per_cta() as usize;
                let Some(named) = self.named.last_mut() else {
                    return Err("`cta` before any `kernel` line".into());
                };
                if let Some((&l0, &(h0, l))) = named.range(..hi).next_back() {
                    if h0 > lo {
                        return Err(format!("CTA {} already given at line {l}", lo.max(l0)));
                    }
                }
                named.insert(lo, (hi, line));
                self.block = Some(Block {
                    lo,
                    hi,
                    code: CtaCode {
                        warps: vec![Vec::new(); wpc],
                    },
                    warp_line: vec![None; wpc],
                    warp: None,
                });
            }
            "warp" => {
                let Some(b) = self.block.as_mut() else {
                    return Err("`warp` before any `cta` line".into());
                };
                let [_, w] = tok else {
                    return Err("expected `warp W`".into());
                };
                let n = num(w, "a warp number")?;
                let wpc = b.warp_line.len() as u64;
                if n >= wpc {
                    return Err(format!(
                        "warp `{w}` out of range: the kernel's block has {wpc} warp(s)"
                    ));
                }
                if let Some(l) = b.warp_line[n as usize] {
                    return Err(format!("warp {n} of this CTA already given at line {l}"));
                }
                b.warp_line[n as usize] = Some(line);
                b.warp = Some(n as usize);
            }
            _ => {
                let instr = parse_instr(tok)?;
                let Some((b, w)) = self.block.as_mut().and_then(|b| b.warp.map(|w| (b, w))) else {
                    return Err(format!("instruction `{first}` before any `warp` line"));
                };
                b.code.warps[w].push(instr);
            }
        }
        Ok(())
    }
}

/// Parses a program file; `file` names it in error messages. (Compressed
/// `.prog.gz` files are read by the command, which hands the text here.)
pub fn parse_program(text: &str, file: &str) -> Result<FileProgram, ProgramError> {
    let mut r = Reader {
        p: FileProgram::default(),
        named: Vec::new(),
        block: None,
    };
    let mut last = 0;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        last = line;
        let err = |msg: String| ProgramError {
            file: file.to_string(),
            line,
            msg,
        };
        let body = raw.split('#').next().unwrap_or("");
        let tok = tokens(body).map_err(err)?;
        if tok.is_empty() {
            continue;
        }
        r.line(&tok, line).map_err(err)?;
    }
    r.close_block();
    let end = |msg: &str| ProgramError {
        file: file.to_string(),
        line: last.max(1),
        msg: msg.to_string(),
    };
    if r.p.name.is_empty() {
        return Err(end("empty program: expected `program NAME`"));
    }
    if r.p.kernels.is_empty() {
        return Err(end("the program has no `kernel` line"));
    }
    Ok(r.p)
}

fn write_addrs(s: &mut String, a: &Addrs, mask: u32) {
    let list = |s: &mut String, v: &[u64]| {
        let l: Vec<String> = v.iter().map(|a| format!("{a:#x}")).collect();
        s.push_str(&format!(" [{}]", l.join(",")));
    };
    match a {
        Addrs::Strided { base, stride } => {
            // The base as unsigned, else as negative (lanes below the first
            // active one under 0), else (real wraps) the lanes as a list.
            let neg = *base as i64 as i128;
            let b = if lane_outside(*base as i128, *stride, mask).is_none() {
                format!("{base:#x}")
            } else if neg < 0 && lane_outside(neg, *stride, mask).is_none() {
                format!("-{:#x}", neg.unsigned_abs())
            } else {
                let lanes = (0..WARP_LANES).filter(|l| mask >> l & 1 == 1);
                let v: Vec<u64> = lanes.enumerate().map(|(r, l)| a.lane(l, r)).collect();
                return list(s, &v);
            };
            if *stride < 0 {
                s.push_str(&format!(" {b} -{}", stride.unsigned_abs()))
            } else {
                s.push_str(&format!(" {b} +{stride}"))
            }
        }
        Addrs::List(v) => list(s, v),
    }
}

/// One instruction in the file form (the writer's half of the table).
pub fn write_instr(i: &Instr) -> String {
    let mut s = InstrKind::of(i).mnemonic().to_string();
    match i {
        Instr::Ld {
            size, mask, addrs, ..
        }
        | Instr::Atom {
            size, mask, addrs, ..
        }
        | Instr::St {
            size, mask, addrs, ..
        } => {
            // Defaults are left out to keep the common lines short.
            if *size != 4 {
                s.push_str(&format!(" size={size}"));
            }
            if *mask != u32::MAX {
                s.push_str(&format!(" mask={mask:#x}"));
            }
            write_addrs(&mut s, addrs, *mask);
            if let Instr::St { values, .. } = i {
                match values {
                    Values::Unknown => {}
                    Values::Same(v) => s.push_str(&format!(" = {v}")),
                    Values::Seq { first, step } if (*step as i64) < 0 => {
                        s.push_str(&format!(" = {first} -{}", step.wrapping_neg()))
                    }
                    Values::Seq { first, step } => s.push_str(&format!(" = {first} +{step}")),
                    Values::List(v) => {
                        let l: Vec<String> = v.iter().map(u64::to_string).collect();
                        s.push_str(&format!(" = [{}]", l.join(",")));
                    }
                }
            }
        }
        Instr::PAcq {
            space,
            flag,
            want,
            mask,
            ..
        } => {
            s.push_str(&format!(" {} {flag:#x} {want}", space_name(*space)));
            if *mask != u64::MAX {
                s.push_str(&format!(" {mask:#x}"));
            }
        }
        Instr::PRel {
            space, flag, value, ..
        } => s.push_str(&format!(" {} {flag:#x} {value}", space_name(*space))),
        Instr::Compute { cycles } => s.push_str(&format!(" {cycles}")),
        Instr::OFence | Instr::DFence | Instr::Fence(_) | Instr::Bar => {}
    }
    s
}

/// The `program`, `config`, `expect` lines.
fn header(name: &str, config: &[(String, String, usize)], expects: &[Expectation]) -> String {
    let mut s = format!("program {name}\n");
    for (k, v, _) in config {
        s.push_str(&format!("config {k}={v}\n"));
    }
    for e in expects {
        s.push_str(&format!("expect {}\n", e.what));
    }
    s
}

fn kernel_line(kernel: &KernelInfo) -> String {
    let mut s = format!(
        "kernel {} grid={} block={}",
        kernel.name, kernel.grid, kernel.block
    );
    if kernel.regs != 0 {
        s.push_str(&format!(" regs={}", kernel.regs));
    }
    if kernel.smem != 0 {
        s.push_str(&format!(" smem={}", kernel.smem));
    }
    s.push('\n');
    s
}

/// The `cta` block of CTAs `lo..hi`, which share `code`.
fn cta_block(lo: u64, hi: u64, code: &CtaCode) -> String {
    let mut s = if hi == lo + 1 {
        format!("cta {lo}\n")
    } else {
        format!("cta {lo}..{hi}\n")
    };
    for (w, instrs) in code.warps.iter().enumerate() {
        if instrs.is_empty() {
            continue;
        }
        s.push_str(&format!("warp {w}\n"));
        for i in instrs {
            s.push_str("  ");
            s.push_str(&write_instr(i));
            s.push('\n');
        }
    }
    s
}

/// Merges runs of consecutive CTAs with equal code into one block each,
/// handing every finished block to `emit`. CTAs without code are left out.
struct Runs<'a, E> {
    emit: &'a mut E,
    run: Option<(u64, u64, CtaCode)>,
}

impl<E: FnMut(String) -> std::io::Result<()>> Runs<'_, E> {
    fn push(&mut self, c: u64, code: CtaCode) -> std::io::Result<()> {
        if let Some((_, hi, prev)) = self.run.as_mut() {
            if *hi == c && *prev == code {
                *hi = c + 1;
                return Ok(());
            }
        }
        self.flush()?;
        if !code.warps.is_empty() {
            self.run = Some((c, c + 1, code));
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.run.take() {
            Some((lo, hi, code)) => (self.emit)(cta_block(lo, hi, &code)),
            None => Ok(()),
        }
    }
}

/// Writes a program in the file form. Runs of consecutive CTAs with the same
/// code share one `cta A..B` block; CTAs without code and warps without
/// instructions are left out (they read back as such). Line numbers of
/// `config` and `expect` items are those of the file they came from, so they
/// change when written out.
pub fn program_to_text(p: &FileProgram) -> String {
    let mut s = header(&p.name, &p.config, &p.expects);
    for (k, kernel) in p.kernels.iter().enumerate() {
        s.push_str(&kernel_line(kernel));
        // Ranges are canonical (merged): one block each.
        if let Some(code) = p.code.get(k) {
            for (lo, hi, c) in code.ranges() {
                s.push_str(&cta_block(lo as u64, hi as u64, c));
            }
        }
    }
    s
}

/// Writes any program, a generator included, in the file form, asking for
/// one CTA at a time (every CTA of every grid), so the whole program is never
/// held in memory. Same text as [`program_to_text`] for a [`FileProgram`].
pub fn write_program(p: &dyn Program, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    out.write_all(header(p.name(), p.config(), p.expects()).as_bytes())?;
    for (k, kernel) in p.kernels().iter().enumerate() {
        out.write_all(kernel_line(kernel).as_bytes())?;
        let mut emit = |b: String| out.write_all(b.as_bytes());
        let mut runs = Runs {
            emit: &mut emit,
            run: None,
        };
        for c in 0..kernel.grid {
            runs.push(c as u64, p.cta(k, c))?;
        }
        runs.flush()?;
    }
    Ok(())
}
