//! The properties of the formal wrapper (`formal/sbrp_pb_formal.sv`), each
//! with the deliberately broken variant of the RTL that must fail it.

use sbrp_tools::VerilogPatch;

use crate::error::{Result, SiliconError};

/// A deliberately broken variant of the generated Verilog.
#[derive(Clone, Copy, Debug)]
pub struct BrokenVariant {
    /// What it breaks.
    pub what: &'static str,
    pub patch: VerilogPatch<'static>,
}

/// One property of the formal wrapper and its broken variant.
#[derive(Clone, Copy, Debug)]
pub struct Property {
    pub name: &'static str,
    /// `define`s of the wrapper that enable its assertions.
    pub defines: &'static [&'static str],
    pub what: &'static str,
    pub broken: BrokenVariant,
}

/// The proved properties.
pub const PROPERTIES: [Property; 5] = [
    Property {
        name: "actr",
        defines: &["CHECK_ACTR"],
        what: "ACTR never underflows or exceeds 2^A-1: no flush starts at the maximum, and every cycle ACTR' = ACTR + flush - (ack && ACTR != 0) without wrapping",
        broken: BrokenVariant {
            what: "head flush without the ACTR-maximum guard",
            patch: VerilogPatch::once(
                "&& (~actr_max) && (force_dr || policy_ok)",
                "&& (force_dr || policy_ok)",
            ),
        },
    },
    Property {
        name: "overflow",
        defines: &["CHECK_OVERFLOW"],
        what: "the PB never overflows: full implies head == tail, and occupancy changes by at most one entry per cycle (no wrap from N to 0)",
        broken: BrokenVariant {
            what: "store allocation without the full guard",
            // The full guard appears twice (stores, then ordering
            // entries): the store's is the one followed by its type write.
            patch: VerilogPatch::once(
                "else if (~r_full$q) begin\n                    acc = 1'b1;\n                    alloc = 1'b1;\n                    m_type$we",
                "else if (1'b1) begin\n                    acc = 1'b1;\n                    alloc = 1'b1;\n                    m_type$we",
            ),
        },
    },
    Property {
        name: "fsm_gate",
        defines: &["CHECK_FSM_GATE"],
        what: "no persist is flushed (from the head or by eviction) while one of its warps is in FSM and ACTR is non-zero",
        broken: BrokenVariant {
            what: "head flush without the FSM gate",
            patch: VerilogPatch::once(
                "if ((~|(m_warps$rd0 & fsm_eff)) && (~actr_max)",
                "if ((~actr_max)",
            ),
        },
    },
    Property {
        name: "release",
        defines: &["CHECK_INV_DRAIN", "CHECK_RELEASE"],
        what: "a warp in ODM or EDM is released within 2N + 2^A cycles once acknowledgements keep arriving (ack whenever ACTR != 0) and no new request is issued; with the invariants: a pending drain target is a live entry, and a warp is in ODM exactly when a live dFence/device pAcq/device pRel entry names it, at or before the drain target",
        broken: BrokenVariant {
            what: "EDM never cleared",
            patch: VerilogPatch::once("if (actr_zero && (~r_dpend$q)) begin", "if (1'b0) begin"),
        },
    },
    Property {
        name: "flush_order",
        defines: &["CHECK_INV_ORDER", "CHECK_FLUSH_ORDER"],
        what: "every flushed line had no older ordering entry of its warps in the PB (head flushes trivially; evictions through the snapshot check); with the invariants: lo is the youngest live ordering entry, and every live persist's snapshot is at or after every older live ordering entry",
        broken: BrokenVariant {
            what: "eviction without the snapshot check",
            patch: VerilogPatch::once(
                "else if (m_snapv$rd0 && (age_s < age_k)) begin",
                "else if (1'b0) begin",
            ),
        },
    },
];

/// Looks a property up by name.
pub fn property(name: &str) -> Result<&'static Property> {
    PROPERTIES
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| SiliconError::UnknownProperty {
            name: name.to_string(),
            known: PROPERTIES
                .iter()
                .map(|p| p.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

impl Property {
    /// `verilog` turned into this property's broken variant.
    pub fn break_rtl(&self, verilog: &str) -> Result<String> {
        self.broken
            .patch
            .apply(verilog)
            .map_err(|error| SiliconError::Patch {
                property: self.name.to_string(),
                what: self.broken.what.to_string(),
                error,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_property_lists_the_known_ones() {
        let e = property("nonsense").unwrap_err();
        assert!(e.is_usage());
        assert!(e.to_string().contains("flush_order"), "{e}");
        assert_eq!(property("release").unwrap().name, "release");
    }

    #[test]
    fn a_patch_that_no_longer_applies_is_an_error() {
        let e = property("actr")
            .unwrap()
            .break_rtl("module sbrp_pb(); endmodule")
            .unwrap_err();
        assert!(!e.is_usage());
        let msg = e.to_string();
        assert!(
            msg.contains("actr") && msg.contains("occurs 0 times"),
            "{msg}"
        );
    }
}
