//! Automatic single-site mutants of generated Verilog, for the mutation
//! campaign of issue 28 item 1 (`sbrp mutate`, `docs/hardware.md` §5,
//! "Mutation campaign"): every place in a combinational assignment where
//! one operator, constant or condition can be changed, each change one
//! mutant of the whole file.
//!
//! Sites are taken from the right-hand sides of `wire x = ...;` and
//! one-line `always @(*) x = ...;` assignments (the logic of the blocks;
//! rust-hdl's multi-line port glue and the clocked blocks are left alone).
//! Kinds: operator swaps (`==`/`!=`, `<`/`>=`, `>`/`<=`, `&`/`|`,
//! `&&`/`||`, `+`/`-`), removal of one `~` or `!`, constant flips (`1'b0`
//! and `1'b1` swapped, `N'dK` to `N'd(K+1 mod 2^N)`), and condition
//! inversions (`(c) ? a : b` becomes `!(c) ? a : b`).

use std::fmt;

/// What a mutant changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MutationKind {
    /// One binary operator replaced by its counterpart.
    Operator,
    /// One `~` or `!` removed.
    Negation,
    /// One constant changed.
    Constant,
    /// The condition of a `?:` negated.
    Condition,
}

impl MutationKind {
    pub fn name(self) -> &'static str {
        match self {
            MutationKind::Operator => "operator",
            MutationKind::Negation => "negation",
            MutationKind::Constant => "constant",
            MutationKind::Condition => "condition",
        }
    }
}

/// One single-site change of a Verilog text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mutation {
    /// 1-based line of the change.
    pub line: usize,
    /// Byte offset of the changed text in the line.
    pub col: usize,
    pub kind: MutationKind,
    /// The text replaced and its replacement.
    pub from: String,
    pub to: String,
    /// The line before the change (trimmed), for reports.
    pub context: String,
}

impl fmt::Display for Mutation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {} ({}): `{}` -> `{}` in `{}`",
            self.line,
            self.kind.name(),
            self.from,
            self.to,
            self.context
        )
    }
}

impl Mutation {
    /// `verilog` with this one change (the text must be where it was found).
    pub fn apply(&self, verilog: &str) -> Option<String> {
        let mut out = String::with_capacity(verilog.len() + 4);
        let mut done = false;
        for (i, l) in verilog.split_inclusive('\n').enumerate() {
            if i + 1 == self.line {
                let at = l.get(self.col..)?;
                if !at.starts_with(&self.from) {
                    return None;
                }
                out.push_str(&l[..self.col]);
                out.push_str(&self.to);
                out.push_str(&at[self.from.len()..]);
                done = true;
            } else {
                out.push_str(l);
            }
        }
        done.then_some(out)
    }
}

/// The right-hand side of a one-line combinational assignment: its byte
/// offset in the line.
fn rhs_start(line: &str) -> Option<usize> {
    let t = line.trim_start();
    let indent = line.len() - t.len();
    let body = if let Some(r) = t.strip_prefix("always @(*) ") {
        if r.starts_with("begin") {
            return None;
        }
        r
    } else if t.starts_with("wire ") {
        t
    } else {
        return None;
    };
    if !t.trim_end().ends_with(';') {
        return None;
    }
    // the first `=` that is not part of `==`, `!=`, `<=`, `>=`
    let b = body.as_bytes();
    let off = indent + (t.len() - body.len());
    (0..b.len())
        .find(|&i| {
            b[i] == b'='
                && b.get(i + 1) != Some(&b'=')
                && (i == 0 || !matches!(b[i - 1], b'=' | b'!' | b'<' | b'>'))
        })
        .map(|i| off + i + 1)
}

/// The operator swaps, longest first.
const SWAPS: [(&str, &str); 10] = [
    ("==", "!="),
    ("!=", "=="),
    ("&&", "||"),
    ("||", "&&"),
    (">=", "<"),
    ("<=", ">"),
    ("<", ">="),
    (">", "<="),
    ("&", "|"),
    ("|", "&"),
];

/// Every mutation site of one right-hand side `rhs` starting at byte `at`
/// of line `line` (1-based).
fn sites_of(line: usize, text: &str, at: usize, out: &mut Vec<Mutation>) {
    let rhs = &text[at..];
    let context = text.trim().to_string();
    let b = rhs.as_bytes();
    let mut push = |col: usize, kind, from: &str, to: String| {
        out.push(Mutation {
            line,
            col: at + col,
            kind,
            from: from.to_string(),
            to,
            context: context.clone(),
        })
    };
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        // sized constants: 1'b0 / 1'b1, N'dK
        if c.is_ascii_digit() && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            let mut j = i;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            if j + 1 < b.len() && b[j] == b'\'' && matches!(b[j + 1], b'b' | b'd') {
                let width: u32 = rhs[i..j].parse().unwrap_or(0);
                let mut k = j + 2;
                while k < b.len() && b[k].is_ascii_digit() {
                    k += 1;
                }
                let lit = &rhs[i..k];
                let val = &rhs[j + 2..k];
                if b[j + 1] == b'b' && width == 1 && (val == "0" || val == "1") {
                    push(
                        i,
                        MutationKind::Constant,
                        lit,
                        format!("1'b{}", 1 - val.parse::<u8>().unwrap_or(0)),
                    );
                } else if b[j + 1] == b'd' && (1..=32).contains(&width) && !val.is_empty() {
                    if let Ok(v) = val.parse::<u64>() {
                        let next = (v + 1) % (1u64 << width);
                        push(i, MutationKind::Constant, lit, format!("{width}'d{next}"));
                    }
                }
                i = k;
                continue;
            }
            i = j;
            continue;
        }
        if c.is_ascii_alphanumeric() || c == b'_' || c == b'$' {
            i += 1;
            continue;
        }
        if c == b'~' || (c == b'!' && b.get(i + 1) != Some(&b'=')) {
            push(i, MutationKind::Negation, &rhs[i..i + 1], String::new());
            i += 1;
            continue;
        }
        if c == b'(' {
            // a condition: `(c) ? ...` with the parenthesis closed just before `?`
            let mut depth = 0usize;
            let mut close = None;
            for (k, &ch) in b.iter().enumerate().skip(i) {
                match ch {
                    b'(' => depth += 1,
                    b')' => {
                        depth -= 1;
                        if depth == 0 {
                            close = Some(k);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            if let Some(k) = close {
                if rhs[k + 1..].trim_start().starts_with('?') {
                    push(i, MutationKind::Condition, "(", "!(".to_string());
                }
            }
        }
        if let Some((from, to)) = SWAPS.iter().find(|(f, _)| rhs[i..].starts_with(f)) {
            // a lone `&`/`|` that is a reduction (after `(`, `~`, `=` or at
            // the start) is not a binary operator
            let prev = rhs[..i].trim_end().bytes().last();
            let unary = from.len() == 1
                && matches!(*from, "&" | "|")
                && matches!(
                    prev,
                    None | Some(b'(')
                        | Some(b'~')
                        | Some(b'{')
                        | Some(b',')
                        | Some(b'?')
                        | Some(b':')
                );
            if !unary {
                push(i, MutationKind::Operator, from, to.to_string());
            }
            i += from.len();
            continue;
        }
        if c == b'+' || (c == b'-' && b.get(i + 1) != Some(&b'>')) {
            let to = if c == b'+' { "-" } else { "+" };
            push(i, MutationKind::Operator, &rhs[i..i + 1], to.to_string());
        }
        i += 1;
    }
}

/// Every mutation site of `verilog`, in file order.
pub fn mutation_sites(verilog: &str) -> Vec<Mutation> {
    let mut out = vec![];
    for (n, line) in verilog.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        if let Some(at) = rhs_start(code) {
            sites_of(n + 1, code, at, &mut out);
        }
    }
    out
}

/// `count` sites of `verilog` spread evenly over the file (every site when
/// there are fewer), starting at an offset chosen by `seed`.
pub fn sample_mutations(verilog: &str, count: usize, seed: u64) -> Vec<Mutation> {
    let all = mutation_sites(verilog);
    if all.len() <= count || count == 0 {
        return all;
    }
    let step = all.len() as f64 / count as f64;
    let start = (seed % 1000) as f64 / 1000.0 * step;
    (0..count)
        .map(|i| all[((start + i as f64 * step) as usize).min(all.len() - 1)].clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: &str = "module m(a, b);\n    wire x = (a == b) ? a : ~b;\n    always @(*) y = c & d | 1'b0;\n    always @(*) begin\n        z = a;\n    end\n    wire [2:0] s = q + 3'd7;\n    always @(posedge clock) r <= a;\nendmodule\n";

    #[test]
    fn sites_cover_each_kind_and_apply_once() {
        let s = mutation_sites(V);
        let kinds: Vec<_> = s
            .iter()
            .map(|m| (m.line, m.kind, m.from.as_str(), m.to.as_str()))
            .collect();
        assert!(
            kinds.contains(&(2, MutationKind::Condition, "(", "!(")),
            "{kinds:?}"
        );
        assert!(
            kinds.contains(&(2, MutationKind::Operator, "==", "!=")),
            "{kinds:?}"
        );
        assert!(
            kinds.contains(&(2, MutationKind::Negation, "~", "")),
            "{kinds:?}"
        );
        assert!(
            kinds.contains(&(3, MutationKind::Operator, "&", "|")),
            "{kinds:?}"
        );
        assert!(
            kinds.contains(&(3, MutationKind::Constant, "1'b0", "1'b1")),
            "{kinds:?}"
        );
        assert!(
            kinds.contains(&(7, MutationKind::Constant, "3'd7", "3'd0")),
            "{kinds:?}"
        );
        assert!(
            kinds.contains(&(7, MutationKind::Operator, "+", "-")),
            "{kinds:?}"
        );
        // neither the glue block, the clocked block nor the declaration's range
        assert!(s.iter().all(|m| m.line != 5 && m.line != 8), "{kinds:?}");
        assert!(!kinds.iter().any(|k| k.2 == "2" || k.2 == ":"), "{kinds:?}");
        for m in &s {
            let v = m.apply(V).unwrap();
            assert_ne!(v, V, "{m}");
            assert_eq!(v.lines().count(), V.lines().count());
        }
        let m = s
            .iter()
            .find(|m| m.kind == MutationKind::Condition)
            .unwrap();
        assert!(m.apply(V).unwrap().contains("wire x = !(a == b) ? a : ~b;"));
    }

    #[test]
    fn a_reduction_is_not_a_binary_operator() {
        let s = mutation_sites("    wire r = &v | (|w);\n");
        let ops: Vec<_> = s
            .iter()
            .filter(|m| m.kind == MutationKind::Operator)
            .collect();
        assert_eq!(ops.len(), 1, "{s:?}");
        assert_eq!(ops[0].col, "    wire r = &v ".len());
    }

    #[test]
    fn a_sample_is_spread_and_reproducible() {
        let text: String = (0..300)
            .map(|i| format!("    wire w{i} = a{i} & b{i};\n"))
            .collect();
        let a = sample_mutations(&text, 100, 3);
        assert_eq!(a.len(), 100);
        assert_eq!(a, sample_mutations(&text, 100, 3));
        assert!(a.first().unwrap().line < 10 && a.last().unwrap().line > 290);
        let mut lines: Vec<_> = a.iter().map(|m| m.line).collect();
        lines.dedup();
        assert_eq!(lines.len(), 100);
        // a stale mutation (text moved) is refused
        let mut m = a[0].clone();
        m.col += 1;
        assert!(m.apply(&text).is_none());
    }
}
