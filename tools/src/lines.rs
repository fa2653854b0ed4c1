//! The error lines of a tool's output, so a failure shows what the tool
//! said and not its whole log.

/// Most lines kept; the rest is in the log.
const MAX_LINES: usize = 60;
/// Lines kept before each error line: Yosys and OpenSTA print the command or
/// file that failed just before the error.
const CONTEXT_BEFORE: usize = 2;
/// Lines kept when no line is tagged as an error: the tail of the output.
const TAIL: usize = 30;

/// Whether a line opens an error message of one of the tools we run.
fn is_error(line: &str) -> bool {
    let t = line.trim_start();
    let lower = t.to_ascii_lowercase();
    t.starts_with("%Error") // Verilator
        || t.starts_with("%Warning") // Verilator -Wall: fatal warnings
        || t.starts_with("ERROR") // Yosys `ERROR: ...`
        || t.starts_with("Error") // OpenSTA `Error: ...`
        || lower.contains("error:") // g++, ld, make
        || lower.contains("fatal error")
        || lower.contains("undefined reference")
        || lower.contains("no such file")
}

/// Verilator continues a message on indented lines (`   : ...` context,
/// `... For warning description see ...`).
fn continues(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with(':') || line.starts_with("   ") || t.is_empty()
}

/// The error lines of `output`: Verilator `%Error`/`%Warning` messages with
/// their continuation lines, Yosys `ERROR:`, OpenSTA `Error:`, compiler and
/// linker `error:` lines, each with the two lines before it; at most 60
/// lines. When no line matches, the last 30 lines of the output.
pub fn error_lines(output: &str) -> String {
    let lines: Vec<&str> = output.lines().collect();
    let mut keep = vec![false; lines.len()];
    let mut in_msg = false;
    for (i, l) in lines.iter().enumerate() {
        if is_error(l) {
            for k in keep
                .iter_mut()
                .take(i + 1)
                .skip(i.saturating_sub(CONTEXT_BEFORE))
            {
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
x.v:2: ERROR: syntax error, unexpected ';'
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
