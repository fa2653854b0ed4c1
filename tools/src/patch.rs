//! Textual patches of generated Verilog, for negative controls (a
//! deliberately broken design): a patch whose text is not found the
//! expected number of times is an error, so a control cannot silently
//! test the unbroken design after the RTL text moved.

/// Replace every occurrence of `find` by `replace`, which must occur
/// exactly `expected_count` times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VerilogPatch<'a> {
    pub find: &'a str,
    pub replace: &'a str,
    pub expected_count: usize,
}

/// The text of a patch occurs a different number of times than expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "Verilog patch: `{find}` occurs {found} times, expected {expected} (has the RTL text changed?)"
)]
pub struct PatchError {
    pub find: String,
    pub found: usize,
    pub expected: usize,
}

impl<'a> VerilogPatch<'a> {
    /// A patch of text that occurs once.
    pub const fn once(find: &'a str, replace: &'a str) -> VerilogPatch<'a> {
        VerilogPatch {
            find,
            replace,
            expected_count: 1,
        }
    }

    /// `verilog` with the patch applied.
    pub fn apply(&self, verilog: &str) -> Result<String, PatchError> {
        let found = if self.find.is_empty() {
            0
        } else {
            verilog.matches(self.find).count()
        };
        if found != self.expected_count || found == 0 {
            return Err(PatchError {
                find: self.find.to_string(),
                found,
                expected: self.expected_count,
            });
        }
        Ok(verilog.replace(self.find, self.replace))
    }

    /// `verilog` with every patch applied in order.
    pub fn apply_all(patches: &[VerilogPatch<'_>], verilog: &str) -> Result<String, PatchError> {
        patches
            .iter()
            .try_fold(verilog.to_string(), |v, p| p.apply(&v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: &str = "if (a && b) x <= 1;\nif (a && b) y <= 1;\nif (c) z <= 1;\n";

    #[test]
    fn applies_when_the_count_matches() {
        let v = VerilogPatch::once("if (c)", "if (1'b0)").apply(V).unwrap();
        assert!(v.contains("if (1'b0) z") && !v.contains("if (c)"));
        let p = VerilogPatch {
            find: "a && b",
            replace: "a",
            expected_count: 2,
        };
        assert_eq!(p.apply(V).unwrap().matches("if (a)").count(), 2);
    }

    #[test]
    fn fails_loudly_when_the_text_moved() {
        let e = VerilogPatch::once("if (d)", "").apply(V).unwrap_err();
        assert_eq!((e.found, e.expected), (0, 1));
        let e = VerilogPatch::once("a && b", "a").apply(V).unwrap_err();
        assert_eq!((e.found, e.expected), (2, 1));
        assert!(e.to_string().contains("a && b"), "{e}");
        // Expecting zero occurrences patches nothing: refused too.
        let p = VerilogPatch {
            find: "if (d)",
            replace: "",
            expected_count: 0,
        };
        assert!(p.apply(V).is_err());
    }

    #[test]
    fn apply_all_stops_at_the_first_bad_patch() {
        let ok = VerilogPatch::once("if (c)", "if (d)");
        let then = VerilogPatch::once("if (d)", "if (e)");
        let v = VerilogPatch::apply_all(&[ok, then], V).unwrap();
        assert!(v.contains("if (e) z"));
        assert!(VerilogPatch::apply_all(&[then, ok], V).is_err());
    }
}
