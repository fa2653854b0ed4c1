//! Warp traces: the text format of `docs/trace-format.md`, parsed into
//! per-warp programs plus the expectations a litmus trace asserts.

use std::collections::BTreeMap;
use std::fmt;

/// Scope of a persist acquire or release.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Scope {
    Block,
    Device,
}

/// One operation of a warp's program.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum WarpOp {
    StPm { addr: u64, value: u64 },
    LdPm { addr: u64 },
    StVol { addr: u64 },
    LdVol { addr: u64 },
    OFence,
    DFence,
    PAcq { scope: Scope, flag: String },
    PRel { scope: Scope, flag: String },
    Barrier,
    Delay { cycles: u32 },
}

/// A warp: SM number and warp number within the SM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WarpId {
    pub sm: u32,
    pub warp: u32,
}

impl fmt::Display for WarpId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.sm, self.warp)
    }
}

/// A durable-state term `ADDR=VALUE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    pub addr: u64,
    pub value: u64,
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}={}", self.addr, self.value)
    }
}

/// What a litmus trace expects of its execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    /// The warp is stalled by the unit at least once.
    Stall(WarpId),
    /// The warp is never stalled by the unit.
    NoStall(WarpId),
    /// The first flush of `a`'s line comes before the first flush of `b`'s line.
    Order(u64, u64),
    /// Never, at any cycle: `a` durable while `b` is not.
    Forbid(Cell, Cell),
    /// At some cycle: `a` durable while `b` is not (a reordering the hardware shows).
    Occurs(Cell, Cell),
    /// The warp's last stall ends after `cell` became durable, within `cycles` cycles.
    Resume(WarpId, Cell, u32),
    /// The warp's last PM load of `addr` missed in the L1.
    LoadMiss(WarpId, u64),
    /// Every persist of the trace is durable at the end, and the run ends.
    AllDurable,
    /// `addr`'s line was flushed exactly `n` times.
    Flushes(u64, u32),
    /// ACTR never exceeded `n` on any SM (outstanding flushes).
    MaxActr(u32),
    /// `addr`'s line was first flushed before `cell` became durable (not held by it).
    Early(u64, Cell),
}

/// One expectation with the line it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expectation {
    pub line: usize,
    pub what: Expect,
}

/// A parsed trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    /// Program of each warp, in program order.
    pub programs: BTreeMap<WarpId, Vec<WarpOp>>,
    pub expects: Vec<Expectation>,
    /// `config KEY=VALUE` lines, applied to the front end's configuration.
    pub config: Vec<(String, String, usize)>,
}

impl Trace {
    pub fn sms(&self) -> u32 {
        self.programs.keys().map(|w| w.sm + 1).max().unwrap_or(1)
    }
    pub fn warps_per_sm(&self) -> u32 {
        self.programs.keys().map(|w| w.warp + 1).max().unwrap_or(1)
    }
    pub fn ops(&self) -> usize {
        self.programs.values().map(Vec::len).sum()
    }
}

/// A trace that could not be read: the file, the line and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    pub file: String,
    pub line: usize,
    pub msg: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.msg)
    }
}

impl std::error::Error for TraceError {}

fn parse_num(s: &str) -> Option<u64> {
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(&h.replace('_', ""), 16).ok()
    } else {
        s.replace('_', "").parse().ok()
    }
}

fn parse_warp(s: &str) -> Option<WarpId> {
    let (a, b) = s.split_once('.')?;
    Some(WarpId {
        sm: a.parse().ok()?,
        warp: b.parse().ok()?,
    })
}

fn parse_cell(s: &str) -> Option<Cell> {
    let (a, v) = s.split_once('=')?;
    Some(Cell {
        addr: parse_num(a)?,
        value: parse_num(v)?,
    })
}

fn parse_flag(s: Option<&&str>) -> Result<String, String> {
    match s {
        Some(f) if f.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => Ok(f.to_string()),
        Some(f) => Err(format!(
            "expected a flag name (letters, digits, _), found `{f}`"
        )),
        None => Err("expected a flag name after the operation".into()),
    }
}

/// Maximum warps per SM and SMs a trace may name (the unit has at most 64 warps).
pub const MAX_WARPS: u32 = 64;
pub const MAX_SMS: u32 = 256;

/// Parses a trace; `file` names it in error messages.
pub fn parse(text: &str, file: &str) -> Result<Trace, TraceError> {
    let mut t = Trace::default();
    let mut stores = 0u64;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let err = |msg: String| TraceError {
            file: file.to_string(),
            line,
            msg,
        };
        let body = raw.split('#').next().unwrap_or("").trim();
        if body.is_empty() {
            continue;
        }
        let tok: Vec<&str> = body.split_whitespace().collect();
        match tok[0] {
            "config" => {
                for kv in &tok[1..] {
                    let (k, v) = kv.split_once('=').ok_or_else(|| {
                        err(format!("expected KEY=VALUE after config, found `{kv}`"))
                    })?;
                    t.config.push((k.to_string(), v.to_string(), line));
                }
                if tok.len() < 2 {
                    return Err(err("expected KEY=VALUE after config".into()));
                }
            }
            "expect" => {
                let what = parse_expect(&tok[1..]).map_err(err)?;
                t.expects.push(Expectation { line, what });
            }
            w => {
                let wid = parse_warp(w).ok_or_else(|| {
                    err(format!(
                        "expected `SM.WARP OP ...`, `expect ...` or `config ...`, found `{w}`"
                    ))
                })?;
                if wid.warp >= MAX_WARPS || wid.sm >= MAX_SMS {
                    return Err(err(format!(
                        "warp {wid} out of range: SM below {MAX_SMS}, warp below {MAX_WARPS}"
                    )));
                }
                let op = tok
                    .get(1)
                    .ok_or_else(|| err("expected an operation after the warp".into()))?;
                let addr = || -> Result<u64, TraceError> {
                    tok.get(2)
                        .and_then(|a| parse_num(a))
                        .ok_or_else(|| err(format!("expected an address after {op}")))
                };
                let nargs = |n: usize| -> Result<(), TraceError> {
                    if tok.len() > n {
                        Err(err(format!(
                            "unexpected `{}` after {op} (it takes {} argument{})",
                            tok[n],
                            n - 2,
                            if n == 3 { "" } else { "s" }
                        )))
                    } else {
                        Ok(())
                    }
                };
                let wop = match *op {
                    "st.pm" => {
                        stores += 1;
                        let value = match tok.get(3) {
                            Some(v) => parse_num(v)
                                .ok_or_else(|| err(format!("expected a value, found `{v}`")))?,
                            None => stores,
                        };
                        nargs(4)?;
                        WarpOp::StPm { addr: addr()?, value }
                    }
                    "ld.pm" => {
                        nargs(3)?;
                        WarpOp::LdPm { addr: addr()? }
                    }
                    "st.vol" => {
                        nargs(3)?;
                        WarpOp::StVol { addr: addr()? }
                    }
                    "ld.vol" => {
                        nargs(3)?;
                        WarpOp::LdVol { addr: addr()? }
                    }
                    "ofence" => {
                        nargs(2)?;
                        WarpOp::OFence
                    }
                    "dfence" => {
                        nargs(2)?;
                        WarpOp::DFence
                    }
                    "bar" => {
                        nargs(2)?;
                        WarpOp::Barrier
                    }
                    "delay" => {
                        nargs(3)?;
                        let c = tok
                            .get(2)
                            .and_then(|a| parse_num(a))
                            .filter(|&c| c <= 1_000_000)
                            .ok_or_else(|| err("expected a cycle count (0..1000000) after delay".into()))?;
                        WarpOp::Delay { cycles: c as u32 }
                    }
                    "pacq.block" | "pacq.dev" | "prel.block" | "prel.dev" => {
                        nargs(3)?;
                        let flag = parse_flag(tok.get(2)).map_err(err)?;
                        let scope = if op.ends_with(".dev") {
                            Scope::Device
                        } else {
                            Scope::Block
                        };
                        if op.starts_with("pacq") {
                            WarpOp::PAcq { scope, flag }
                        } else {
                            WarpOp::PRel { scope, flag }
                        }
                    }
                    other => {
                        return Err(err(format!(
                            "unknown operation `{other}`: expected st.pm, ld.pm, st.vol, ld.vol, ofence, dfence, pacq.block, pacq.dev, prel.block, prel.dev, bar or delay"
                        )))
                    }
                };
                t.programs.entry(wid).or_default().push(wop);
            }
        }
    }
    Ok(t)
}

fn parse_expect(tok: &[&str]) -> Result<Expect, String> {
    let warp = |i: usize| -> Result<WarpId, String> {
        tok.get(i)
            .and_then(|w| parse_warp(w))
            .ok_or_else(|| "expected a warp SM.WARP".to_string())
    };
    let cell = |i: usize| -> Result<Cell, String> {
        tok.get(i)
            .and_then(|c| parse_cell(c))
            .ok_or_else(|| "expected ADDR=VALUE".to_string())
    };
    let addr = |i: usize| -> Result<u64, String> {
        tok.get(i)
            .and_then(|a| parse_num(a))
            .ok_or_else(|| "expected an address".to_string())
    };
    let kw = |i: usize, k: &str| -> Result<(), String> {
        if tok.get(i) == Some(&k) {
            Ok(())
        } else {
            Err(format!("expected `{k}`"))
        }
    };
    let e = match tok.first().copied() {
        Some("stall") => Expect::Stall(warp(1)?),
        Some("nostall") => Expect::NoStall(warp(1)?),
        Some("order") => Expect::Order(addr(1)?, addr(2)?),
        Some("forbid") => {
            kw(2, "without")?;
            Expect::Forbid(cell(1)?, cell(3)?)
        }
        Some("occurs") => {
            kw(2, "without")?;
            Expect::Occurs(cell(1)?, cell(3)?)
        }
        Some("resume") => {
            kw(2, "after")?;
            kw(4, "within")?;
            let c = tok
                .get(5)
                .and_then(|c| parse_num(c))
                .ok_or("expected a cycle count after within")?;
            Expect::Resume(warp(1)?, cell(3)?, c as u32)
        }
        Some("ldmiss") => Expect::LoadMiss(warp(1)?, addr(2)?),
        Some("alldurable") => Expect::AllDurable,
        Some("flushes") => {
            let n = tok
                .get(2)
                .and_then(|c| parse_num(c))
                .ok_or("expected a count after the address")?;
            Expect::Flushes(addr(1)?, n as u32)
        }
        Some("maxactr") => {
            let n = tok
                .get(1)
                .and_then(|c| parse_num(c))
                .ok_or("expected a count after maxactr")?;
            Expect::MaxActr(n as u32)
        }
        Some("early") => {
            kw(2, "before")?;
            Expect::Early(addr(1)?, cell(3)?)
        }
        _ => {
            return Err(
                "expected one of: stall, nostall, order, forbid, occurs, resume, ldmiss, alldurable, flushes, maxactr, early after expect"
                    .into(),
            )
        }
    };
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_operation_and_expectation() {
        let t = parse(
            "# c\nconfig pm_latency=10\n0.0 st.pm 0x100 7\n0.0 ld.pm 0x100\n0.1 st.vol 4\n0.1 ld.vol 4\n\
             0.0 ofence\n0.0 dfence\n1.2 pacq.block f\n1.2 prel.dev f_2\n0.0 bar\n0.0 delay 3\n\
             expect stall 0.0\nexpect nostall 0.1\nexpect order 0x100 0x200\n\
             expect forbid 0x200=2 without 0x100=1\nexpect occurs 1=1 without 2=2\n\
             expect resume 0.0 after 0x100=7 within 2\nexpect ldmiss 1.0 0x40\nexpect alldurable\n\
             expect flushes 0x100 1\nexpect maxactr 6\nexpect early 0x200 before 0x100=1\n",
            "t",
        )
        .unwrap();
        assert_eq!(t.ops(), 10);
        assert_eq!(t.expects.len(), 11);
        assert_eq!((t.sms(), t.warps_per_sm()), (2, 3));
        assert_eq!(
            t.programs[&WarpId { sm: 0, warp: 0 }][0],
            WarpOp::StPm {
                addr: 0x100,
                value: 7
            }
        );
    }

    #[test]
    fn errors_name_file_line_and_expectation() {
        let e = parse("0.0 st.pm 0x10\n0.0 stpm 0x10\n", "a.trace").unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("a.trace", 2));
        assert!(e.msg.contains("unknown operation `stpm`"), "{e}");
        let e = parse("0.0 st.pm\n", "b").unwrap_err();
        assert!(e.msg.contains("expected an address"), "{e}");
        let e = parse("x st.pm 1\n", "b").unwrap_err();
        assert!(e.msg.contains("SM.WARP"), "{e}");
        let e = parse("0.70 ofence\n", "b").unwrap_err();
        assert!(e.msg.contains("out of range"), "{e}");
        let e = parse("expect forbid 1=1 with 2=2\n", "b").unwrap_err();
        assert!(e.msg.contains("`without`"), "{e}");
        let e = parse("0.0 ofence 3\n", "b").unwrap_err();
        assert!(e.msg.contains("unexpected `3`"), "{e}");
    }
}
