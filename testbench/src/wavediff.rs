//! Two waveforms compared signal by signal (`sbrp wavediff`): the signals
//! both files name (scope path and name), sampled at every time either file
//! changes one of them; the first time they differ and which signals, with
//! both values. Read with the `vcd` crate. Vectors compare by value (a
//! Verilator `wire [7:0]` and our writer's `integer` agree when their bits
//! do); `x` and `z` compare as written. In this project's waveforms one
//! cycle is two time units (`sbrp_iface::vcd`), so time `t` is cycle `t / 2`.

use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;
use std::path::Path;

use vcd::{Command, IdCode, ScopeItem};

use crate::error::{BenchError, Result};

/// One differing signal at the first differing time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    pub signal: String,
    pub a: String,
    pub b: String,
}

/// What the comparison found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WaveDiff {
    /// Signals both files have (compared).
    pub shared: Vec<String>,
    /// Signals of one file only (not compared).
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
    /// The first time some shared signal differs, and every signal that
    /// differs then; `None` when they agree at every time.
    pub first: Option<(u64, Vec<Difference>)>,
    /// The last time either file reached.
    pub end: u64,
}

/// A waveform: its signals' full names and its value changes in time order.
struct Wave {
    names: Vec<(String, IdCode)>,
    /// (time, code, value) in file order.
    changes: Vec<(u64, IdCode, String)>,
}

fn read_wave(path: &Path) -> Result<Wave> {
    let f = std::fs::File::open(path)
        .map_err(|e| BenchError::Invalid(format!("{}: cannot read: {e}", path.display())))?;
    parse(std::io::BufReader::new(f), &path.display().to_string())
}

fn parse<R: BufRead>(r: R, what: &str) -> Result<Wave> {
    let mut p = vcd::Parser::new(r);
    let bad = |line: u64, e: &dyn std::fmt::Display| {
        BenchError::Invalid(format!("{what}:{line}: not a VCD file: {e}"))
    };
    let header = p.parse_header().map_err(|e| bad(p.line(), &e))?;
    let mut names = vec![];
    fn walk(items: &[ScopeItem], prefix: &str, out: &mut Vec<(String, IdCode)>) {
        for it in items {
            match it {
                ScopeItem::Scope(s) => walk(&s.items, &format!("{prefix}{}.", s.identifier), out),
                ScopeItem::Var(v) => {
                    let idx = v.index.map(|i| i.to_string()).unwrap_or_default();
                    out.push((format!("{prefix}{}{idx}", v.reference), v.code));
                }
                _ => {}
            }
        }
    }
    walk(&header.items, "", &mut names);
    let mut changes = vec![];
    let mut t = 0u64;
    loop {
        let line = p.line();
        let Some(c) = p.next() else { break };
        match c.map_err(|e| bad(line, &e))? {
            Command::Timestamp(x) => t = x,
            Command::ChangeScalar(id, v) => changes.push((t, id, v.to_string())),
            Command::ChangeVector(id, v) => changes.push((t, id, v.to_string())),
            Command::ChangeReal(id, v) => changes.push((t, id, v.to_string())),
            Command::ChangeString(id, v) => changes.push((t, id, v)),
            _ => {}
        }
    }
    Ok(Wave { names, changes })
}

/// A value as compared: binary digits without leading zeros ("0" for
/// zero); anything else (x, z, reals, strings) as written.
fn canonical(v: &str) -> String {
    if !v.is_empty() && v.bytes().all(|b| b == b'0' || b == b'1') {
        let t = v.trim_start_matches('0');
        if t.is_empty() {
            "0".into()
        } else {
            t.into()
        }
    } else {
        v.to_string()
    }
}

/// A compared value for people: binary as hexadecimal.
fn shown(v: &str) -> String {
    if v.bytes().all(|b| b == b'0' || b == b'1') && v.len() <= 64 {
        format!("{:#x}", u64::from_str_radix(v, 2).unwrap_or(0))
    } else {
        v.to_string()
    }
}

/// Compares two VCD files over the signals both name.
pub fn diff_files(a: &Path, b: &Path) -> Result<WaveDiff> {
    Ok(diff(&read_wave(a)?, &read_wave(b)?))
}

/// Compares two VCD texts (for tests).
pub fn diff_texts(a: &str, b: &str) -> Result<WaveDiff> {
    Ok(diff(&parse(a.as_bytes(), "A")?, &parse(b.as_bytes(), "B")?))
}

fn diff(a: &Wave, b: &Wave) -> WaveDiff {
    let an: BTreeMap<&str, IdCode> = a.names.iter().map(|(n, c)| (n.as_str(), *c)).collect();
    let bn: BTreeMap<&str, IdCode> = b.names.iter().map(|(n, c)| (n.as_str(), *c)).collect();
    let shared: Vec<&str> = an.keys().filter(|n| bn.contains_key(*n)).copied().collect();
    let mut d = WaveDiff {
        shared: shared.iter().map(|s| s.to_string()).collect(),
        only_a: an
            .keys()
            .filter(|n| !bn.contains_key(*n))
            .map(|s| s.to_string())
            .collect(),
        only_b: bn
            .keys()
            .filter(|n| !an.contains_key(*n))
            .map(|s| s.to_string())
            .collect(),
        ..WaveDiff::default()
    };
    // Per file: code -> the shared signals carried by it (a code may carry
    // several names).
    let index = |names: &BTreeMap<&str, IdCode>| {
        let mut m: HashMap<IdCode, Vec<usize>> = HashMap::new();
        for (i, n) in shared.iter().enumerate() {
            m.entry(names[n]).or_default().push(i);
        }
        m
    };
    let (ia, ib) = (index(&an), index(&bn));
    let n = shared.len();
    // Undumped signals start unknown in both.
    let mut va = vec![String::from("x"); n];
    let mut vb = vec![String::from("x"); n];
    let (mut i, mut j) = (0, 0);
    d.end = a
        .changes
        .last()
        .map_or(0, |c| c.0)
        .max(b.changes.last().map_or(0, |c| c.0));
    while i < a.changes.len() || j < b.changes.len() {
        let t = match (a.changes.get(i), b.changes.get(j)) {
            (Some(x), Some(y)) => x.0.min(y.0),
            (Some(x), None) => x.0,
            (None, Some(y)) => y.0,
            (None, None) => break,
        };
        let mut touched = vec![];
        while let Some(c) = a.changes.get(i).filter(|c| c.0 == t) {
            for &k in ia.get(&c.1).into_iter().flatten() {
                va[k] = canonical(&c.2);
                touched.push(k);
            }
            i += 1;
        }
        while let Some(c) = b.changes.get(j).filter(|c| c.0 == t) {
            for &k in ib.get(&c.1).into_iter().flatten() {
                vb[k] = canonical(&c.2);
                touched.push(k);
            }
            j += 1;
        }
        touched.sort_unstable();
        touched.dedup();
        let diffs: Vec<Difference> = touched
            .into_iter()
            .filter(|&k| va[k] != vb[k])
            .map(|k| Difference {
                signal: shared[k].to_string(),
                a: shown(&va[k]),
                b: shown(&vb[k]),
            })
            .collect();
        if !diffs.is_empty() {
            d.first = Some((t, diffs));
            break;
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wave(kind: &str, width: u32, vals: &[(u64, &str, &str)]) -> String {
        let mut s = format!(
            "$timescale 1ns $end\n$scope module sbrp_pb $end\n$var wire 1 ! clock $end\n$var {kind} {width} \" ack $end\n$var wire 1 # only $end\n$upscope $end\n$enddefinitions $end\n"
        );
        for (t, clk, ack) in vals {
            s += &format!("#{t}\n{clk}!\nb{ack} \"\n");
        }
        s
    }

    #[test]
    fn equal_values_of_different_widths_agree_and_the_first_difference_is_found() {
        let a = wave(
            "wire",
            8,
            &[
                (0, "0", "00000000"),
                (1, "1", "00000011"),
                (2, "0", "00000101"),
            ],
        );
        let b = wave(
            "integer",
            32,
            &[(0, "0", "0"), (1, "1", "11"), (2, "0", "110")],
        );
        let d = diff_texts(&a, &b).unwrap();
        assert_eq!(
            d.shared,
            vec!["sbrp_pb.ack", "sbrp_pb.clock", "sbrp_pb.only"]
        );
        let (t, v) = d.first.unwrap();
        assert_eq!(t, 2);
        assert_eq!(
            v,
            vec![Difference {
                signal: "sbrp_pb.ack".into(),
                a: "0x5".into(),
                b: "0x6".into()
            }]
        );
        let same = diff_texts(&a, &a).unwrap();
        assert!(same.first.is_none() && same.end == 2);
    }

    #[test]
    fn signals_of_one_file_only_are_listed_not_compared() {
        let a = wave("wire", 4, &[(0, "0", "1")]);
        let b = a.replace(
            "$var wire 1 # only $end\n",
            "$scope module model $end\n$var wire 4 $ head $end\n$upscope $end\n",
        );
        let d = diff_texts(&a, &(b + "#1\nb1111 $\n")).unwrap();
        assert_eq!(d.only_a, vec!["sbrp_pb.only"]);
        assert_eq!(d.only_b, vec!["sbrp_pb.model.head"]);
        assert!(d.first.is_none());
    }

    #[test]
    fn a_file_that_is_not_vcd_is_refused_with_its_line() {
        let e = diff_texts("$scope module a $end\n$var wire 1 ! c $end\n$bogus\n", "").unwrap_err();
        assert!(e.to_string().contains("A:"), "{e}");
    }
}
