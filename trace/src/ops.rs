//! The mnemonic table of `docs/trace-format.md` ("Operations") and the op
//! parser and writer built on it, so both directions use one spelling.

use crate::types::{Scope, WarpOp, MAX_DELAY};

/// An operation's kind, without its arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    StPm,
    LdPm,
    StVol,
    LdVol,
    OFence,
    DFence,
    PAcq(Scope),
    PRel(Scope),
    Barrier,
    Delay,
}

/// Every operation's mnemonic: the single table of the parser and the writer.
pub const MNEMONICS: [(&str, OpKind); 12] = [
    ("st.pm", OpKind::StPm),
    ("ld.pm", OpKind::LdPm),
    ("st.vol", OpKind::StVol),
    ("ld.vol", OpKind::LdVol),
    ("ofence", OpKind::OFence),
    ("dfence", OpKind::DFence),
    ("pacq.block", OpKind::PAcq(Scope::Block)),
    ("pacq.dev", OpKind::PAcq(Scope::Device)),
    ("prel.block", OpKind::PRel(Scope::Block)),
    ("prel.dev", OpKind::PRel(Scope::Device)),
    ("bar", OpKind::Barrier),
    ("delay", OpKind::Delay),
];

impl OpKind {
    pub fn of(op: &WarpOp) -> OpKind {
        match op {
            WarpOp::StPm { .. } => OpKind::StPm,
            WarpOp::LdPm { .. } => OpKind::LdPm,
            WarpOp::StVol { .. } => OpKind::StVol,
            WarpOp::LdVol { .. } => OpKind::LdVol,
            WarpOp::OFence => OpKind::OFence,
            WarpOp::DFence => OpKind::DFence,
            WarpOp::PAcq { scope, .. } => OpKind::PAcq(*scope),
            WarpOp::PRel { scope, .. } => OpKind::PRel(*scope),
            WarpOp::Barrier => OpKind::Barrier,
            WarpOp::Delay { .. } => OpKind::Delay,
        }
    }

    /// The mnemonic of this kind.
    pub fn mnemonic(self) -> &'static str {
        MNEMONICS
            .iter()
            .find(|(_, k)| *k == self)
            .map(|(m, _)| *m)
            .unwrap_or("?")
    }

    pub fn from_mnemonic(m: &str) -> Option<OpKind> {
        MNEMONICS.iter().find(|(n, _)| *n == m).map(|(_, k)| *k)
    }
}

/// Writes one operation as `MNEMONIC ARGS`.
pub fn write_op(op: &WarpOp) -> String {
    let m = OpKind::of(op).mnemonic();
    match op {
        WarpOp::StPm { addr, value } => format!("{m} {addr:#x} {value}"),
        WarpOp::LdPm { addr } | WarpOp::StVol { addr } | WarpOp::LdVol { addr } => {
            format!("{m} {addr:#x}")
        }
        WarpOp::PAcq { flag, .. } | WarpOp::PRel { flag, .. } => format!("{m} {flag}"),
        WarpOp::Delay { cycles } => format!("{m} {cycles}"),
        WarpOp::OFence | WarpOp::DFence | WarpOp::Barrier => m.to_string(),
    }
}

/// A number: decimal or `0x` hexadecimal, `_` separators allowed.
pub fn parse_num(s: &str) -> Option<u64> {
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(&h.replace('_', ""), 16).ok()
    } else {
        s.replace('_', "").parse().ok()
    }
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

/// Parses `tok` = [warp, mnemonic, args...]. `stores` counts the trace's
/// stores so far (the default value of a `st.pm` without one).
pub(crate) fn parse_op(tok: &[&str], stores: &mut u64) -> Result<WarpOp, String> {
    let op = *tok
        .get(1)
        .ok_or_else(|| "expected an operation after the warp".to_string())?;
    let kind = OpKind::from_mnemonic(op).ok_or_else(|| {
        let all: Vec<&str> = MNEMONICS.iter().map(|(m, _)| *m).collect();
        format!(
            "unknown operation `{op}`: expected one of {}",
            all.join(", ")
        )
    })?;
    let addr = || -> Result<u64, String> {
        tok.get(2)
            .and_then(|a| parse_num(a))
            .ok_or_else(|| format!("expected an address after {op}"))
    };
    let nargs = |n: usize| -> Result<(), String> {
        if tok.len() > n {
            Err(format!(
                "unexpected `{}` after {op} (it takes {} argument{})",
                tok[n],
                n - 2,
                if n == 3 { "" } else { "s" }
            ))
        } else {
            Ok(())
        }
    };
    Ok(match kind {
        OpKind::StPm => {
            *stores += 1;
            let value = match tok.get(3) {
                Some(v) => parse_num(v).ok_or_else(|| format!("expected a value, found `{v}`"))?,
                None => *stores,
            };
            nargs(4)?;
            WarpOp::StPm {
                addr: addr()?,
                value,
            }
        }
        OpKind::LdPm => {
            nargs(3)?;
            WarpOp::LdPm { addr: addr()? }
        }
        OpKind::StVol => {
            nargs(3)?;
            WarpOp::StVol { addr: addr()? }
        }
        OpKind::LdVol => {
            nargs(3)?;
            WarpOp::LdVol { addr: addr()? }
        }
        OpKind::OFence => {
            nargs(2)?;
            WarpOp::OFence
        }
        OpKind::DFence => {
            nargs(2)?;
            WarpOp::DFence
        }
        OpKind::Barrier => {
            nargs(2)?;
            WarpOp::Barrier
        }
        OpKind::Delay => {
            nargs(3)?;
            let c = tok
                .get(2)
                .and_then(|a| parse_num(a))
                .filter(|&c| c <= MAX_DELAY as u64)
                .ok_or_else(|| format!("expected a cycle count (0..{MAX_DELAY}) after delay"))?;
            WarpOp::Delay { cycles: c as u32 }
        }
        OpKind::PAcq(scope) => {
            nargs(3)?;
            WarpOp::PAcq {
                scope,
                flag: parse_flag(tok.get(2))?,
            }
        }
        OpKind::PRel(scope) => {
            nargs(3)?;
            WarpOp::PRel {
                scope,
                flag: parse_flag(tok.get(2))?,
            }
        }
    })
}
