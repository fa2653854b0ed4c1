//! The expectation language of `docs/trace-format.md` ("Expectations"):
//! what a litmus trace asserts about its execution, and its parser.

use std::fmt;

use crate::ops::parse_num;
use crate::types::{Cell, WarpId};

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
    /// The run ends, every stored address is durable, with a final value no
    /// other store supersedes (see `durable.rs`).
    AllDurable,
    /// `addr`'s line was flushed exactly `n` times.
    Flushes(u64, u32),
    /// ACTR never exceeded `n` on any SM (outstanding flushes).
    MaxActr(u32),
    /// `addr`'s line was first flushed before `cell` became durable (not held by it).
    Early(u64, Cell),
    /// Per-warp persist order (`pmo.rs`): no store after an ordering op of
    /// its warp becomes durable before a store of that warp before the op.
    Pmo,
}

impl Expect {
    /// A race the trace was written for at the unsliced unit's round trip
    /// (a reordering shown, a stall seen, a flush count): register slices
    /// that lengthen the round trip may close its window
    /// (`docs/microarch.md` §2.1). `resume ... within` bounds count cycles
    /// and are a separate case ([`Expect::Resume`]).
    pub fn is_race(&self) -> bool {
        matches!(
            self,
            Expect::Occurs(..) | Expect::Stall(..) | Expect::Flushes(..)
        )
    }
}

/// One expectation with the line it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expectation {
    pub line: usize,
    pub what: Expect,
}

impl fmt::Display for Expect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expect::Stall(w) => write!(f, "stall {w}"),
            Expect::NoStall(w) => write!(f, "nostall {w}"),
            Expect::Order(a, b) => write!(f, "order {a:#x} {b:#x}"),
            Expect::Forbid(a, b) => write!(f, "forbid {a} without {b}"),
            Expect::Occurs(a, b) => write!(f, "occurs {a} without {b}"),
            Expect::Resume(w, c, n) => write!(f, "resume {w} after {c} within {n}"),
            Expect::LoadMiss(w, a) => write!(f, "ldmiss {w} {a:#x}"),
            Expect::AllDurable => write!(f, "alldurable"),
            Expect::Flushes(a, n) => write!(f, "flushes {a:#x} {n}"),
            Expect::MaxActr(n) => write!(f, "maxactr {n}"),
            Expect::Early(a, c) => write!(f, "early {a:#x} before {c}"),
            Expect::Pmo => write!(f, "pmo"),
        }
    }
}

pub(crate) fn parse_warp(s: &str) -> Option<WarpId> {
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

/// A count that must fit 32 bits: refused, not truncated, when it does not.
fn count(tok: Option<&&str>, what: &str) -> Result<u32, String> {
    let s = tok.ok_or_else(|| format!("expected {what}"))?;
    let n = parse_num(s).ok_or_else(|| format!("expected {what}, found `{s}`"))?;
    u32::try_from(n).map_err(|_| format!("{what} {s} out of range (at most {})", u32::MAX))
}

/// Parses the words after `expect`.
pub(crate) fn parse_expect(tok: &[&str]) -> Result<Expect, String> {
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
            let c = count(tok.get(5), "a cycle count after within")?;
            Expect::Resume(warp(1)?, cell(3)?, c)
        }
        Some("ldmiss") => Expect::LoadMiss(warp(1)?, addr(2)?),
        Some("alldurable") => Expect::AllDurable,
        Some("pmo") => Expect::Pmo,
        Some("flushes") => {
            let n = count(tok.get(2), "a count after the address")?;
            Expect::Flushes(addr(1)?, n)
        }
        Some("maxactr") => Expect::MaxActr(count(tok.get(1), "a count after maxactr")?),
        Some("early") => {
            kw(2, "before")?;
            Expect::Early(addr(1)?, cell(3)?)
        }
        _ => {
            return Err(
                "expected one of: stall, nostall, order, forbid, occurs, resume, ldmiss, alldurable, pmo, flushes, maxactr, early after expect"
                    .into(),
            )
        }
    };
    Ok(e)
}
