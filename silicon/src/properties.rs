//! The properties of the formal environment (`constraints/formal/sbrp_pb_formal.sv`):
//! which checks and environment each run enables, which engine proves it,
//! and the deliberately broken variants (mutations of the generated RTL, or
//! a broken environment) that must fail it. Until a property is proved for
//! every depth, the deep search (`sbrp prove --deep`) runs its BMC to at
//! least 2N + 10 cycles ([`deep_depth`]), where the PB has filled and
//! wrapped, and adds the broken variants whose counterexamples lie there.

use sbrp_tools::VerilogPatch;

use crate::error::{Result, SiliconError};

/// How yosys-abc decides a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// Property-directed reachability (`pdr`): a full proof for every depth.
    Pdr,
    /// Bounded model checking (`bmc3`) to this many cycles from reset.
    Bmc(u32),
    /// BMC to N + this many cycles (N entries): for a run whose depth
    /// grows with the PB.
    BmcEntriesPlus(u32),
    /// k-induction at depth k (`sbrp prove --unbounded`): the base case by
    /// BMC from reset to k frames (`bmc3`), then the inductive step (`ind`):
    /// k consecutive states that satisfy the property (and the run's
    /// strengthening invariants) are followed by one that does too.
    Induction(u32),
}

impl Engine {
    /// The engine with the PB's size filled in (`BmcEntriesPlus` becomes `Bmc`).
    pub fn for_entries(self, entries: u32) -> Engine {
        match self {
            Engine::BmcEntriesPlus(k) => Engine::Bmc(entries + k),
            e => e,
        }
    }
}

/// What a broken variant changes.
#[derive(Clone, Copy, Debug)]
pub enum Breakage {
    /// A textual mutation of the generated Verilog.
    Rtl(VerilogPatch<'static>),
    /// Extra defines of the wrapper that break the environment or a monitor.
    Env(&'static [&'static str]),
}

/// A deliberately broken variant that must fail the property.
#[derive(Clone, Copy, Debug)]
pub struct BrokenVariant {
    /// What it breaks.
    pub what: &'static str,
    pub breakage: Breakage,
    /// The frame by which its counterexample must appear (measured: the
    /// frame of the shortest one). BMC searches the variant to
    /// `within + 1` frames (0..=within); a real BMC run must search at
    /// least as deep, or a pass could be too shallow to see the bug.
    pub within: u32,
    /// Run only by the deep search: its counterexample lies beyond the
    /// default depth of the real run (the deep real run reaches it).
    pub deep: bool,
}

/// One property of the formal environment.
#[derive(Clone, Copy, Debug)]
pub struct Property {
    pub name: &'static str,
    /// Defines of the wrapper: the environment and the checks.
    pub defines: &'static [&'static str],
    pub what: &'static str,
    pub engine: Engine,
    /// A cover: the run succeeds when BMC reaches the condition.
    pub cover: bool,
    /// The broken variants (none for a cover).
    pub broken: &'static [BrokenVariant],
}

const fn prop(
    name: &'static str,
    defines: &'static [&'static str],
    engine: Engine,
    what: &'static str,
    broken: &'static [BrokenVariant],
) -> Property {
    Property {
        name,
        defines,
        what,
        engine,
        cover: false,
        broken,
    }
}

const fn cover(
    name: &'static str,
    define: &'static [&'static str],
    depth: u32,
    what: &'static str,
) -> Property {
    cover_with(name, define, Engine::Bmc(depth), what)
}

const fn cover_with(
    name: &'static str,
    define: &'static [&'static str],
    engine: Engine,
    what: &'static str,
) -> Property {
    Property {
        name,
        defines: define,
        what,
        engine,
        cover: true,
        broken: &[],
    }
}

/// The properties, in the order `sbrp prove` runs them.
pub const PROPERTIES: &[Property] = &PROPS;

const PROPS: [Property; 17] = [
    prop(
        "actr",
        &["CHECK_ACTR"],
        Engine::Bmc(BMC_DEPTH),
        "ACTR accounting: with legal acks (only flushes taken and not yet acknowledged, tagged with their epoch), obs_actr = flushes queued + taken and unacknowledged + acks registered, the queued ones 0 exactly when flush_valid is 0 and at most F = 4; error bit 0 never set (hence each epoch's counter covers its unacknowledged flushes)",
        &[BrokenVariant {
            what: "environment acks flushes that were never taken",
            breakage: Breakage::Env(&["ENV_ACK_FREE"]),
            within: 3,
            deep: false,
        }],
    ),
    prop(
        "handshake",
        &["CHECK_HANDSHAKE"],
        // Proved for every depth: PDR needs under a second (0.2-0.5 s at
        // 16 entries / 4 warps and at 32 / 8).
        Engine::Pdr,
        "one response per taken request exactly three cycles later with its warp (replay for a warp >= W, rsp_idx 0 but for stores, all 0 when not valid); the flush at the FIFO head holds still while flush_valid && !flush_ready; req_ready 0 exactly in a reset cycle (the cycle after rst) and the cycle after it",
        &[BrokenVariant {
            what: "flush FIFO pops without flush_ready",
            breakage: Breakage::Rtl(VerilogPatch::once(
                "wire take = flush_ready;",
                "wire take = 1'b1;",
            )),
            within: 8,
            deep: false,
        }],
    ),
    prop(
        "lost",
        &["CHECK_LOST"],
        Engine::Bmc(BMC_DEPTH),
        "no lost persist: a store to line l performed or coalesced is followed by a flush of l taken in a later cycle, before idle and before the PB and the flush FIFO are both empty (free hooks)",
        &[BrokenVariant {
            what: "the head pops a persist as if it were a hole (the persist is dropped)",
            breakage: Breakage::Rtl(VerilogPatch::once(
                "wire a_pop = ~empty_w & (h_type == 3'd0);",
                "wire a_pop = ~empty_w & (h_type <= 3'd1);",
            )),
            within: 12,
            deep: false,
        }, BrokenVariant {
            what: "busy ignores the head flush of the same cycle (a store coalesces into a leaving entry)",
            breakage: Breakage::Rtl(VerilogPatch::once(
                "wire busy = fifo_has | (ha_flush & (h_line == r2_line));",
                "wire busy = fifo_has;",
            )),
            // 13 before requirement 6; 118 s of BMC at 16 entries
            within: 16,
            deep: true,
        }],
    ),
    prop(
        "pmo",
        &["ENV_HOOKS_EXACT", "CHECK_PMO"],
        // S1, O and S2 of one warp are at least 4 cycles apart under
        // requirement 6: the broken variant fails at frame 15 (9 before).
        Engine::Bmc(16),
        "per-warp persist order: for any warp w, store S1 of w, later ordering op of w, later store S2 of w, no flush of S2's line with w's bit is offered before the flush carrying S1 has been acknowledged (legal acks in any order, hooks follow the responses)",
        &[BrokenVariant {
            what: "head flush without the FSM gate",
            breakage: Breakage::Rtl(VerilogPatch::once(
                "{n1_t == 3'd1, n0_t == 3'd1} & ~{hf1_n, hf0_n}",
                "{n1_t == 3'd1, n0_t == 3'd1}",
            )),
            within: 15,
            deep: false,
        }],
    ),
    prop(
        "durable",
        &["CHECK_DURABLE"],
        Engine::Bmc(BMC_DEPTH),
        "durability: a dFence or device pRel of w taken after a store S of w sets w's stall with its response, and when that stall falls S's flush has been taken and acknowledged",
        &[BrokenVariant {
            what: "dFence / device pRel retire without joining the epoch's EDM",
            breakage: Breakage::Rtl(VerilogPatch::once(
                "edm_add = (f_retire & t_edm) ?",
                "edm_add = (1'b0) ?",
            )),
            within: 11,
            deep: false,
        }],
    ),
    prop(
        "coalesce",
        &["CHECK_COALESCE"],
        // The broken variant fails at frame 18 under requirement 6 (12 before).
        Engine::Bmc(19),
        "coalescing rule: after a store of w got entry k and a later ordering op of w was taken, no store of w coalesces into k until k is allocated again (free hooks)",
        &[BrokenVariant {
            what: "coalescing ignores the warp's younger ordering entry",
            breakage: Breakage::Rtl(VerilogPatch::once(
                "wire younger = yq_valid & k_older_y;",
                "wire younger = 1'b0;",
            )),
            within: 18,
            deep: false,
        }, BrokenVariant {
            what: "the age compare k_older_y inverted on its wrap branch (>= head becomes < head; review of v2)",
            breakage: Breakage::Rtl(VerilogPatch::once(
                "? (r2_pbidx < yq_idx) : (r2_pbidx >= head));",
                "? (r2_pbidx < yq_idx) : (r2_pbidx < head));",
            )),
            // needs the PB to wrap: frame 26 (235 s of BMC at 16 entries; 23
            // before requirement 6, per the review)
            within: KW_WITHIN,
            deep: true,
        }],
    ),
    prop(
        "xblock",
        &["ENV_HOOKS_EXACT", "CHECK_XBLOCK"],
        // The broken variant fails at frame 19 (S1, R, Q, S2 each one
        // response apart); 20 frames take 28 s.
        Engine::Bmc(20),
        "cross-warp block-scope order: store S1 of warp a, then a's pRel block R, then a pAcq block Q of another warp b taken after R's response (b saw the flag), then a store S2 of b: no flush of S2's line with b's bit is offered before the flush carrying S1 has been acknowledged (exact hooks, legal acks)",
        &[BrokenVariant {
            what: "a retiring pAcq block does not join its warps to FSM",
            breakage: Breakage::Rtl(VerilogPatch::once(
                "always @(*) fsm_add = f_retire ? h_warps",
                "always @(*) fsm_add = (f_retire & (h_type != 3'd4)) ? h_warps",
            )),
            within: 19,
            deep: false,
        }],
    ),
    prop(
        "release",
        &["ENV_FAIR", "CHECK_RELEASE"],
        // Depth 24 reaches the bound (ODM falls at frame 7 at the earliest
        // since the registered reset, spec §7, then B + 2 cycles): 5 s
        // before it; depth 27 took 263 s with no counterexample.
        Engine::Bmc(24),
        "bounded release: under a fair environment with arbitrary traffic (each taken flush acked within LACK = 3 cycles, flush_ready at least every R = 2 cycles), a warp whose dFence / device pRel retired stays in EDM (on its epoch) at most B + 1 = LACK + 4R + 3 cycles",
        &[BrokenVariant {
            what: "v1's global release: the oldest epoch is released only when ACTR is 0",
            breakage: Breakage::Rtl(VerilogPatch::once(
                "wire rel = old_z & (ep_old != ep_cur);",
                "wire rel = old_z & (ep_old != ep_cur) & (actr == 0);",
            )),
            within: 22,
            deep: false,
        }],
    ),
    prop(
        "drain",
        &["ENV_FAIR", "ENV_DRAIN", "CHECK_DRAIN"],
        // Deeper than BMC_DEPTH: the broken variant fails at frame 24 (the
        // PB empty at frame 7 at the earliest, then HI + 1 cycles not idle),
        // and at frame 26 on the head check alone (an FSM-gated head stands
        // still HM + 1 cycles); 27 frames take 3-5 s, 30 about 50 s.
        Engine::Bmc(27),
        "drain at kernel end: drain_all held, no new request, fair acks / ready / inv_done: the head stands still at most HM = 16 cycles while the PB holds entries, the unit is idle at most HI = 16 cycles after the PB is empty, hence idle within BD = (HM + 1) N + HI + 2 cycles of drain_all",
        &[BrokenVariant {
            what: "acks are dropped (ackq_count stays 0)",
            breakage: Breakage::Rtl(VerilogPatch::once(
                "ackq_count <= ack_count;",
                "ackq_count <= 3'd0;",
            )),
            within: 24,
            deep: false,
        }],
    ),
    // Reached at frame 14, cover_evict_fence at 16, cover_pmo at 15 (one
    // request per warp in flight, interface requirement 6).
    cover("cover_coalesce", &["COVER_COALESCE"], 16, "a store coalesces"),
    // Reached at frame N + 9 (25 at 16 entries).
    cover_with("cover_full", &["COVER_FULL"], Engine::BmcEntriesPlus(10), "the PB is full"),
    cover("cover_evict_fence", &["COVER_EVICT_FENCE"], 18, "an eviction flush is accepted while another warp is in ODM (its dFence older in the PB)"),
    cover("cover_epoch", &["COVER_EPOCH"], 16, "the current epoch reaches 3 (three epochs opened)"),
    cover("cover_pmo", &["COVER_PMO"], 17, "the PMO witness completes: S1 acked after S2 was taken"),
    cover("cover_edm", &["COVER_EDM"], 10, "a warp enters EDM on an epoch"),
    cover("cover_drain", &["ENV_FAIR", "ENV_DRAIN", "COVER_DRAIN"], 12, "a drain in which a flush was taken reaches idle (its ack came)"),
    // Reached at frame 19.
    cover("cover_xblock", &["ENV_HOOKS_EXACT", "COVER_XBLOCK"], 21, "the cross-warp witness completes: S1 acked after b's S2 was taken"),
];

/// How `sbrp prove --unbounded` tries to prove a property by k-induction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Induction {
    /// The depth k.
    pub k: u32,
    /// Extra defines of the wrapper: the strengthening invariants.
    pub defines: &'static [&'static str],
    /// Yosys scripts binding the invariants' wires to the unit's registers
    /// (`constraints/formal/inv_*.ys`), in order; a line `@MEMORIES@` stands
    /// for the binding of the PB memories' words ([`Induction::connect_script`]).
    pub connect: &'static [&'static str],
    /// Default time limit of the inductive step, seconds
    /// (`ProveOptions::induction_seconds` 0).
    pub seconds: u32,
}

/// The properties `sbrp prove --unbounded` proves for every depth: the
/// handshakes without invariants, the others with those of [`induction`].
pub const UNBOUNDED: [&str; 6] = ["handshake", "actr", "lost", "coalesce", "durable", "pmo"];

/// Default time limit of an inductive step, seconds.
pub const INDUCTION_SECONDS: u32 = 120;

/// The placeholder line of `inv_lost.ys` for the memory words.
const MEMORIES: &str = "@MEMORIES@";
/// The placeholder line of `inv_coal.ys` for the ordering queues' bit planes.
const PLANES: &str = "@PLANES@";

impl Induction {
    /// The Yosys commands of [`Induction::connect`] for a PB of `entries`
    /// entries, `warps` warps and `line_bits`-bit lines: each `@MEMORIES@`
    /// line becomes one `connect -set` per word of `pb_type`, `pb_line` and
    /// `pb_warps` (after `memory_map`, word i is the wire
    /// `dut.pb_type.mem[i]`), bound to its slice of `x_memt`, `x_meml`,
    /// `x_memw` (`INV_LOST` in the wrapper); each `@PLANES@` line becomes
    /// one `connect -set` per bit plane j of the ordering queues (`q0_j`,
    /// `q1_j` of `warps`, W bits each), bound to bits `[W(j+1)-1:Wj]` of
    /// `x_q0p`, `x_q1p` (`INV_COAL`).
    pub fn connect_script(&self, entries: u32, warps: u32, line_bits: u32) -> String {
        let iw = entries.max(2).next_power_of_two().trailing_zeros();
        let mut out = String::new();
        for script in self.connect {
            for line in script.lines() {
                if line.trim() == PLANES {
                    for j in 0..iw {
                        for (wire, reg) in [("x_q0p", "q0_"), ("x_q1p", "q1_")] {
                            out.push_str(&format!(
                                "connect -set {wire}[{}:{}] dut.warps.{reg}{j}\n",
                                warps * j + warps - 1,
                                warps * j
                            ));
                        }
                    }
                } else if line.trim() == MEMORIES {
                    for i in 0..entries {
                        for (wire, mem, w) in [
                            ("x_memt", "pb_type", 3),
                            ("x_meml", "pb_line", line_bits),
                            ("x_memw", "pb_warps", warps),
                        ] {
                            out.push_str(&format!(
                                "connect -set {wire}[{}:{}] dut.{mem}.mem[{i}]\n",
                                w * i + w - 1,
                                w * i
                            ));
                        }
                    }
                } else {
                    out.push_str(line);
                    out.push('\n');
                }
            }
        }
        out
    }
}

/// Depth of the inductive step for a property without its own: where
/// `handshake` becomes inductive (k = 3 is not).
pub const INDUCTION_K: u32 = 4;

/// The k-induction of property `name`: `actr` with its invariants
/// (`INV_ACTR`; proved at k = 2); `lost` with `INV_ACTR` and `INV_LOST`
/// (the PB's memories, head staging and request pipeline tied to the
/// pending store of the witness line; proved at k = [`LOST_K`]);
/// `coalesce` at [`COAL_K`] with those, `INV_MON` and `INV_COAL` (the
/// per-warp ordering queues sound and complete, the request's selected
/// queue registers, `last_type`, the coalescing monitor); `durable` at
/// [`DUR_K`] with `INV_ACTR`, `INV_MON`, `INV_LOST` and `INV_DUR` (the
/// witness warp's stalling entry and ODM, the witness flush's place and
/// epoch, the warp's EDM epoch, dead epochs empty); `pmo` at [`PMO_K`]
/// with all of those and `INV_PMO` (O's entry, S2's line, the warp's FSM
/// epoch, exact hooks, forwarding and response facts; docs/hardware.md
/// §5); every other at [`INDUCTION_K`] without.
pub fn induction(name: &str) -> Induction {
    match name {
        "actr" => Induction {
            k: 2,
            defines: &["INV_ACTR"],
            connect: &[crate::config::INV_ACTR_YS],
            seconds: INDUCTION_SECONDS,
        },
        "lost" => Induction {
            k: LOST_K,
            defines: &["INV_ACTR", "INV_LOST"],
            connect: &[crate::config::INV_ACTR_YS, crate::config::INV_LOST_YS],
            // CaDiCaL's step: 8 s at 16 entries, 21 s at 32 / 8 (yosys-abc's
            // `ind`: 180 s and 840 s)
            seconds: 1200,
        },
        "coalesce" => Induction {
            k: COAL_K,
            defines: &["INV_ACTR", "INV_MON", "INV_LOST", "INV_COAL"],
            connect: &[
                crate::config::INV_ACTR_YS,
                crate::config::INV_LOST_YS,
                crate::config::INV_COAL_YS,
            ],
            // CaDiCaL: 20 s at 16 entries, 149 s at 32 / 8 (`ind`: 494 s;
            // undecided at 32 / 8 in 7,200 s)
            seconds: 1500,
        },
        "durable" => Induction {
            k: DUR_K,
            defines: &["INV_ACTR", "INV_MON", "INV_LOST", "INV_DUR"],
            connect: &[
                crate::config::INV_ACTR_YS,
                crate::config::INV_LOST_YS,
                crate::config::INV_DUR_YS,
            ],
            // CaDiCaL: 22 s at 16 entries, 73 s at 32 / 8 (`ind`: 291 s, 3,239 s)
            seconds: 1200,
        },
        "pmo" => Induction {
            k: PMO_K,
            defines: &[
                "INV_ACTR", "INV_MON", "INV_LOST", "INV_COAL", "INV_DUR", "INV_PMO",
            ],
            connect: &[
                crate::config::INV_ACTR_YS,
                crate::config::INV_LOST_YS,
                crate::config::INV_COAL_YS,
                crate::config::INV_DUR_YS,
                crate::config::INV_PMO_YS,
            ],
            // CaDiCaL: 39 s at 16 entries, 256 s at 32 / 8 (`ind`: 1,915 s)
            seconds: 3000,
        },
        _ => Induction {
            k: INDUCTION_K,
            defines: &[],
            connect: &[],
            seconds: INDUCTION_SECONDS,
        },
    }
}

/// Depth of `lost`'s inductive step with `INV_LOST`. k = 1 is not
/// inductive; k = 2 is, with
/// the facts on the registers the unit recomputes every cycle (read data,
/// forwarding compares, `live_k`, `has_line`; without them k = 3).
pub const LOST_K: u32 = 2;

/// Depth of `coalesce`'s inductive step with `INV_LOST` and `INV_COAL`:
/// proved at k = 2 (at 16 and 32 entries); at k = 3 yosys-abc's step gave
/// no verdict in 817 s (docs/hardware.md §5).
pub const COAL_K: u32 = 2;

/// Depth of `durable`'s inductive step with `INV_LOST` and `INV_DUR`.
pub const DUR_K: u32 = 2;

/// Depth of `pmo`'s inductive step with `INV_PMO`: proved at k = 2 (at 16
/// and 32 entries, docs/hardware.md §5).
pub const PMO_K: u32 = 2;

/// Negative control of `actr`'s k-induction: ACTR may reach its maximum and
/// still let a flush start (`ep_room`'s "one below the maximum" compare
/// reads all ones), so the next flush wraps ACTR to 0. Needs 255
/// unacknowledged flushes (8-bit ACTR): far beyond BMC, so BMC passes it and
/// only the inductive step can reject it. The text is that of 8-bit ACTR.
pub const ACTR_WRAP: VerilogPatch<'static> = VerilogPatch::once(
    "wire m1_n = actr_m == {{7{1'b1}}, 1'b0};",
    "wire m1_n = actr_m == {8{1'b1}};",
);

/// Frame of the wrap mutant's counterexample (coalesce, deep).
const KW_WITHIN: u32 = 26;

/// The depth of the deep search's real BMC runs: 2N + 10 cycles, N entries
/// (42 at 16): the PB fills by frame N + 9, so every run sees it full,
/// wrapped and refilled.
pub const fn deep_depth(entries: u32) -> u32 {
    2 * entries + 10
}

/// BMC depth of the real-RTL runs of `actr`, `lost` and `durable` in the
/// default `sbrp prove`: frames 0..=13, beyond their broken variants'
/// `within` (`lost` fails at frame 12, `durable` at 11); `pmo` and
/// `coalesce` search one frame beyond their own broken variants.
pub const BMC_DEPTH: u32 = 14;

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
    /// `verilog` turned into broken variant `b`'s RTL (unchanged for a
    /// broken environment).
    pub fn break_rtl(&self, verilog: &str, b: &BrokenVariant) -> Result<String> {
        match b.breakage {
            Breakage::Rtl(patch) => patch.apply(verilog).map_err(|error| SiliconError::Patch {
                property: self.name.to_string(),
                what: b.what.to_string(),
                error,
            }),
            Breakage::Env(_) => Ok(verilog.to_string()),
        }
    }

    /// The wrapper's defines of a run (with broken variant `b`'s environment).
    pub fn run_defines(&self, b: Option<&BrokenVariant>) -> Vec<&'static str> {
        let mut d = self.defines.to_vec();
        if let Some(BrokenVariant {
            breakage: Breakage::Env(extra),
            ..
        }) = b
        {
            d.extend_from_slice(extra);
        }
        d
    }

    /// The broken variants a run checks: the deep ones only with `deep`.
    pub fn variants(&self, deep: bool) -> impl Iterator<Item = &'static BrokenVariant> {
        self.broken.iter().filter(move |b| deep || !b.deep)
    }

    /// The engine of the real run: the property's own, with the PB's size
    /// filled in; with `deep`, a BMC run (not a cover's) searches at least
    /// [`deep_depth`] frames.
    pub fn real_engine(&self, entries: u32, deep: bool) -> Engine {
        match self.engine.for_entries(entries) {
            Engine::Bmc(k) if deep && !self.cover => Engine::Bmc(k.max(deep_depth(entries))),
            e => e,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real BMC run searches at least as deep as its broken variant's
    /// counterexample, so a pass is not merely too shallow to see the bug.
    #[test]
    fn each_real_run_is_as_deep_as_its_broken_variant_fails() {
        for p in PROPERTIES {
            for deep in [false, true] {
                for b in p.variants(deep) {
                    // the smallest PB (16 entries) has the shallowest runs
                    if let Engine::Bmc(k) = p.real_engine(16, deep) {
                        assert!(
                            k > b.within,
                            "{} ({}): real run to {k} frames (0..={}), broken variant {:?} fails at frame {}",
                            p.name,
                            if deep { "deep" } else { "default" },
                            k - 1,
                            b.what,
                            b.within
                        );
                    }
                }
            }
        }
    }

    /// The deep search runs every bounded property to 2N + 10 (42 at 16
    /// entries) and adds the deep variants; PDR runs and covers keep theirs.
    #[test]
    fn the_deep_search_reaches_2n_plus_10() {
        assert_eq!(deep_depth(16), 42);
        for p in PROPERTIES {
            let (def, deep) = (p.real_engine(16, false), p.real_engine(16, true));
            match (p.cover, def) {
                (false, Engine::Bmc(k)) => {
                    assert_eq!(deep, Engine::Bmc(k.max(42)), "{}", p.name)
                }
                _ => assert_eq!(deep, def, "{}", p.name),
            }
        }
        let deep_only = |n: &str| {
            let p = property(n).unwrap();
            p.variants(true).count() - p.variants(false).count()
        };
        assert_eq!(
            (deep_only("coalesce"), deep_only("lost"), deep_only("pmo")),
            (1, 1, 0)
        );
    }

    /// The full PB is searched for N + 10 cycles (it is reached at N + 7).
    #[test]
    fn cover_full_grows_with_the_pb() {
        let e = property("cover_full").unwrap().engine;
        assert_eq!(e.for_entries(16), Engine::Bmc(26));
        assert_eq!(e.for_entries(32), Engine::Bmc(42));
    }

    /// `lost`'s binding script names every word of the three PB memories
    /// once, on its own slice, and keeps the fixed lines of both scripts.
    #[test]
    fn lost_binds_each_memory_word_once() {
        let ind = induction("lost");
        assert_eq!(ind.k, LOST_K);
        let s = ind.connect_script(16, 4, 4);
        assert!(!s.contains(MEMORIES), "{s}");
        assert_eq!(s.matches("connect -set x_memt[").count(), 16);
        assert_eq!(s.matches("connect -set x_meml[").count(), 16);
        assert_eq!(s.matches("connect -set x_memw[").count(), 16);
        assert!(s.contains("connect -set x_memt[2:0] dut.pb_type.mem[0]\n"));
        assert!(s.contains("connect -set x_meml[63:60] dut.pb_line.mem[15]\n"));
        assert!(s.contains("connect -set x_ectr0 dut.epochs.ectr[0]\n"));
        assert!(s.contains("connect -set x_ht dut.store.h_type\n"));
        let s32 = ind.connect_script(32, 8, 5);
        assert!(s32.contains("connect -set x_memw[255:248] dut.pb_warps.mem[31]\n"));
        assert!(s32.contains("connect -set x_meml[159:155] dut.pb_line.mem[31]\n"));
        // every bound bit once: a second `connect -set` would unset its driver
        let mut lhs: Vec<&str> = s32
            .lines()
            .filter_map(|l| l.strip_prefix("connect -set "))
            .map(|l| l.split_whitespace().next().unwrap())
            .collect();
        let n = lhs.len();
        lhs.sort();
        lhs.dedup();
        assert_eq!(lhs.len(), n);
        // actr binds no memory
        assert!(!induction("actr").connect_script(16, 4, 4).contains("mem["));
    }

    /// `coalesce`'s binding script names each bit plane of both ordering
    /// queue entries once (IW planes of W bits), after the memory words.
    #[test]
    fn coalesce_binds_each_queue_plane_once() {
        let ind = induction("coalesce");
        assert_eq!(ind.k, COAL_K);
        let s = ind.connect_script(16, 4, 4);
        assert!(!s.contains(PLANES), "{s}");
        assert_eq!(
            s.lines()
                .filter(|l| l.starts_with("connect -set x_q0p["))
                .count(),
            4
        );
        assert_eq!(
            s.lines()
                .filter(|l| l.starts_with("connect -set x_q1p["))
                .count(),
            4
        );
        assert!(s.contains("connect -set x_q0p[3:0] dut.warps.q0_0\n"));
        assert!(s.contains("connect -set x_q1p[15:12] dut.warps.q1_3\n"));
        assert_eq!(s.matches("connect -set x_memt[").count(), 16);
        let s32 = ind.connect_script(32, 8, 5);
        assert!(s32.contains("connect -set x_q1p[39:32] dut.warps.q1_4\n"));
        assert_eq!(
            s32.lines()
                .filter(|l| l.starts_with("connect -set x_q0p["))
                .count(),
            5
        );
        // lost binds no queue plane
        assert!(!induction("lost")
            .connect_script(16, 4, 4)
            .contains("dut.warps.q0_"));
    }

    /// Every property's binding scripts, at both sizes, bind each wire (or
    /// wire slice) once; `durable` binds the epochs' EDM and FSM masks.
    #[test]
    fn every_induction_binds_each_wire_once() {
        for p in PROPERTIES {
            for (n, w, lb) in [(16, 4, 4), (32, 8, 5)] {
                let s = induction(p.name).connect_script(n, w, lb);
                let mut lhs: Vec<&str> = s
                    .lines()
                    .filter_map(|l| l.strip_prefix("connect -set "))
                    .map(|l| l.split_whitespace().next().unwrap())
                    .collect();
                let all = lhs.len();
                lhs.sort();
                lhs.dedup();
                assert_eq!(lhs.len(), all, "{} at {n} entries", p.name);
            }
        }
        let ind = induction("durable");
        assert_eq!(ind.k, DUR_K);
        let s = ind.connect_script(16, 4, 4);
        assert!(
            s.contains("connect -set x_edm3 dut.epochs.ep_edm[3]\n"),
            "{s}"
        );
        assert!(s.contains("connect -set x_epold dut.epochs.ep_old\n"));
        assert_eq!(s.matches("connect -set x_memw[").count(), 16);
        assert!(!s.contains("dut.warps.q0_"));
    }

    /// Every property has a broken variant run by default, every cover none.
    #[test]
    fn each_property_has_a_broken_variant() {
        for p in PROPERTIES {
            assert_eq!(p.variants(false).next().is_none(), p.cover, "{}", p.name);
        }
    }
}
