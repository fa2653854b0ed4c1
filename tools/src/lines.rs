//! The error lines of a tool's output, so a failure shows what the tool
//! said and not its whole log.

/// Most lines kept; the rest is in the log.
const MAX_LINES: usize = 60;
/// Lines kept before a Yosys or OpenSTA error: they print the command or
/// file that failed just before it. Verilator and compilers name the place
/// in the message itself.
const CONTEXT_BEFORE: usize = 2;
/// Lines kept when no line is tagged as an error: the tail of the output.
const TAIL: usize = 30;

/// The kind of error message a line opens, if any.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Opens {
    /// Verilator `%Error`/`%Warning` (fatal with -Wall), compiler, linker.
    SelfContained,
    /// Yosys `ERROR: ...`, OpenSTA `Error: ...`.
    WithContext,
}

fn opens(line: &str) -> Option<Opens> {
    let t = line.trim_start();
    let lower = t.to_ascii_lowercase();
    if t.starts_with("%Error") || t.starts_with("%Warning") {
        Some(Opens::SelfContained)
    } else if t.starts_with("ERROR") || t.starts_with("Error") {
        Some(Opens::WithContext)
    } else if lower.contains("error:")
        || lower.contains("fatal error")
        || lower.contains("undefined reference")
        || lower.contains("no such file")
    {
        Some(Opens::SelfContained)
    } else {
        None
    }
}

/// Verilator continues a message on indented lines (`   : ...` context,
/// `... For warning description see ...`).
fn continues(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with(':') || line.starts_with("   ") || t.is_empty()
}

/// The error lines of `output`: Verilator `%Error`/`%Warning` messages with
/// their continuation lines, compiler and linker `error:` lines, Yosys
/// `ERROR:` and OpenSTA `Error:` lines with the two lines before each; at
/// most 60 lines. When no line matches, the last 30 lines of the output.
pub fn error_lines(output: &str) -> String {
    let lines: Vec<&str> = output.lines().collect();
    let mut keep = vec![false; lines.len()];
    let mut in_msg = false;
    for (i, l) in lines.iter().enumerate() {
        if let Some(kind) = opens(l) {
            let from = match kind {
                Opens::WithContext => i.saturating_sub(CONTEXT_BEFORE),
                Opens::SelfContained => i,
            };
            for k in keep.iter_mut().take(i + 1).skip(from) {
                *k = true;
            }
            in_msg = true;
        } else if in_msg && continues(l) {
            keep[i] = true;
        } else {
            in_msg = false;
        }
    }
    let mut picked: Vec<&str> = lines
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(l, _)| *l)
        .collect();
    if picked.is_empty() {
        let from = lines.len().saturating_sub(TAIL);
        return lines[from..].join("\n");
    }
    if picked.len() > MAX_LINES {
        picked.truncate(MAX_LINES);
        picked.push("... (more in the log)");
    }
    picked.join("\n")
}

#[cfg(test)]
mod tests {
    use super::error_lines;

    #[test]
    fn keeps_each_tools_error_lines_with_context() {
        let out = "\
noise A
noise B
noise C
-- Running command `read_verilog x.v' --
1. Executing Verilog frontend
ERROR: syntax error, unexpected ';' in x.v:2
unrelated progress
%Error: sbrp_pb.v:10:5: Cannot find: foo
        : ... note: In instance sbrp_pb
next unrelated
Error: sbrp_pb.sdc line 3, unknown port
done
shim.cpp:4:1: error: expected ';'
make: *** [obj] Error 2
";
        let e = error_lines(out);
        assert!(e.contains("ERROR: syntax error"), "{e}");
        assert!(e.contains("1. Executing Verilog frontend"), "context: {e}");
        assert!(e.contains("%Error: sbrp_pb.v:10:5"), "{e}");
        assert!(e.contains("note: In instance sbrp_pb"), "continuation: {e}");
        assert!(e.contains("Error: sbrp_pb.sdc"), "{e}");
        assert!(e.contains("error: expected ';'"), "{e}");
        assert!(!e.contains("noise A"), "far from any error: {e}");
    }

    #[test]
    fn verilator_messages_come_without_unrelated_lines_before() {
        let out = "make stuff\n%Error: x.v:3:5: syntax error, unexpected foo\n    3 | bad\n      |     ^~~\n%Error: Exiting due to 1 error(s)\nother\n";
        let e = error_lines(out);
        assert!(e.contains("syntax error, unexpected foo"), "{e}");
        assert!(e.contains("3 | bad"), "{e}");
        assert!(!e.contains("make stuff") && !e.contains("other"), "{e}");
    }

    #[test]
    fn untagged_output_gives_its_tail() {
        let out: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let e = error_lines(&out);
        assert!(e.starts_with("line 70\n") && e.ends_with("line 99"), "{e}");
    }

    #[test]
    fn long_error_output_is_cut() {
        let out: String = (0..500).map(|i| format!("ERROR: {i}\n")).collect();
        let e = error_lines(&out);
        assert_eq!(e.lines().count(), 61);
        assert!(e.ends_with("(more in the log)"));
    }
}
