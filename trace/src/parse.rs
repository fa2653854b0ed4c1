//! The trace line parser and writer (`docs/trace-format.md`, "Lines"):
//! `SM.WARP OP`, `config`, `expect` lines in, the same text out.

use crate::expect::{parse_expect, parse_warp, Expectation};
use crate::ops::{parse_op, write_op};
use crate::types::{ConfigItem, Trace, MAX_SMS, MAX_WARPS};

/// A trace that could not be read: the file, the line and what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {msg}")]
pub struct TraceError {
    pub file: String,
    pub line: usize,
    pub msg: String,
}

/// Parses a trace; `file` names it in error messages.
pub fn parse(text: &str, file: &str) -> Result<Trace, TraceError> {
    let mut t = Trace {
        file: file.to_string(),
        ..Trace::default()
    };
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
                if tok.len() < 2 {
                    return Err(err("expected KEY=VALUE after config".into()));
                }
                for kv in &tok[1..] {
                    let (k, v) = kv.split_once('=').ok_or_else(|| {
                        err(format!("expected KEY=VALUE after config, found `{kv}`"))
                    })?;
                    t.config.push(ConfigItem {
                        key: k.to_string(),
                        value: v.to_string(),
                        line,
                    });
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
                let op = parse_op(&tok, &mut stores).map_err(err)?;
                t.first_line.entry(wid).or_insert(line);
                t.programs.entry(wid).or_default().push(op);
            }
        }
    }
    Ok(t)
}

/// Writes a trace's programs in the text format (warp by warp, program
/// order), prefixed with `header` as a comment. Expectations and config
/// lines are not written.
pub fn to_text(t: &Trace, header: &str) -> String {
    let mut s = format!("# {header}\n");
    for (id, prog) in &t.programs {
        for op in prog {
            s.push_str(&format!("{id} {}\n", write_op(op)));
        }
    }
    s
}
