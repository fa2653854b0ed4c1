//! Seeded, reproducible constrained-random warp traces.
//!
//! Every operation appears; addresses come from three pools so that stores
//! hit and coalesce (a few hot lines), miss and evict (many lines crowded into
//! a few L1 sets), or spread out; scopes mix across warps and SMs. Acquires
//! only name flags released by a warp earlier in a fixed global order, so a
//! generated trace never deadlocks. No barriers (they could wait on an
//! acquire); the litmus traces cover them.

use std::collections::BTreeMap;

use sbrp_iface::stimulus::Rng;
use sbrp_trace::{Scope, Trace, WarpId, WarpOp};

/// Shape of a random trace.
#[derive(Clone, Debug)]
pub struct RandSpec {
    pub sms: u32,
    pub warps_per_sm: u32,
    pub ops_per_warp: u32,
    /// L1 lines and ways of the front end (to aim evictions at few sets).
    pub l1_lines: u32,
    pub l1_ways: u32,
    pub line_bytes: u64,
    /// Prefix for flag names, so that chained traces never reuse a flag.
    pub flag_prefix: String,
    /// Share of ordering operations in percent (0..=29; default 29).
    pub ordering_percent: u64,
}

impl RandSpec {
    /// The random suite's traces for units of parameters `p` (2 SMs, every
    /// warp busy): chunk `chunk` of a chained run, flags prefixed by the
    /// chunk, every third chunk nearly free of ordering operations.
    pub fn random_suite(
        p: &sbrp_iface::PbParams,
        l1_ways: u32,
        line_bytes: u64,
        chunk: u32,
    ) -> RandSpec {
        RandSpec {
            sms: 2,
            warps_per_sm: p.warps,
            ops_per_warp: (1024 / p.warps).max(16),
            l1_lines: p.lines,
            l1_ways,
            line_bytes,
            flag_prefix: format!("c{chunk}_"),
            ordering_percent: if chunk % 3 == 2 { 2 } else { 29 },
        }
    }
}

/// Generates one trace from `seed`.
pub fn generate(spec: &RandSpec, seed: u64) -> Trace {
    let mut rng = Rng::new(seed);
    let sets = (spec.l1_lines / spec.l1_ways.max(1)).max(1) as u64;
    // Hot lines: a handful shared by all warps (hits, coalescing).
    let hot: Vec<u64> = (0..6).map(|i| 4096 + i * 3).collect();
    // Conflict lines: 3x the ways, all in two sets (misses and evictions).
    let conflict: Vec<u64> = (0..(spec.l1_ways as u64 * 3))
        .map(|i| 7 + (i % 2) + sets * (1 + i))
        .collect();
    let mut programs: BTreeMap<WarpId, Vec<WarpOp>> = BTreeMap::new();
    // Flags released so far, by scope, with the SM of the releasing warp.
    let mut released: Vec<(String, Scope, u32)> = vec![];
    let mut nflag = 0;
    for sm in 0..spec.sms {
        for warp in 0..spec.warps_per_sm {
            let mut prog = vec![];
            let mut stores = 0u64;
            for _ in 0..spec.ops_per_warp {
                let mut r = rng.below(100);
                // Ordering ops occupy 59..=87; thin them out when asked.
                if (59..=87).contains(&r) && rng.below(29) >= spec.ordering_percent.min(29) {
                    r = 0;
                }
                let line_addr = |rng: &mut Rng| -> u64 {
                    let line = match rng.below(10) {
                        0..=3 => hot[rng.below(hot.len() as u64) as usize],
                        4..=6 => conflict[rng.below(conflict.len() as u64) as usize],
                        _ => 100_000 + rng.below(4 * spec.l1_lines as u64),
                    };
                    line * spec.line_bytes + 4 * rng.below(spec.line_bytes / 4)
                };
                let op = match r {
                    0..=44 => {
                        stores += 1;
                        WarpOp::StPm {
                            addr: line_addr(&mut rng),
                            value: (sm as u64) << 48 | (warp as u64) << 32 | stores,
                        }
                    }
                    45..=53 => WarpOp::LdPm {
                        addr: line_addr(&mut rng),
                    },
                    54..=56 => WarpOp::StVol {
                        addr: rng.below(1 << 20) * 4,
                    },
                    57..=58 => WarpOp::LdVol {
                        addr: rng.below(1 << 20) * 4,
                    },
                    59..=68 => WarpOp::OFence,
                    69..=71 => WarpOp::DFence,
                    72..=79 => {
                        let scope = if rng.chance(60) {
                            Scope::Block
                        } else {
                            Scope::Device
                        };
                        let flag = format!("{}f{}", spec.flag_prefix, nflag);
                        nflag += 1;
                        released.push((flag.clone(), scope, sm));
                        WarpOp::PRel { scope, flag }
                    }
                    80..=87 if !released.is_empty() => {
                        // Mostly a matching scope: block scope for a flag of
                        // this SM, device scope otherwise; sometimes the other.
                        let (flag, rscope, rsm) =
                            released[rng.below(released.len() as u64) as usize].clone();
                        let natural = if rsm == sm && rscope == Scope::Block {
                            Scope::Block
                        } else {
                            Scope::Device
                        };
                        let scope = if rng.chance(85) {
                            natural
                        } else if natural == Scope::Block {
                            Scope::Device
                        } else {
                            Scope::Block
                        };
                        WarpOp::PAcq { scope, flag }
                    }
                    80..=87 => WarpOp::OFence,
                    _ => WarpOp::Delay {
                        cycles: rng.below(12) as u32,
                    },
                };
                prog.push(op);
            }
            programs.insert(WarpId { sm, warp }, prog);
        }
    }
    Trace {
        file: format!("random seed {seed}"),
        programs,
        ..Trace::default()
    }
}

/// Writes a generated trace in the text format (`sbrp_trace::to_text`).
pub fn to_text(t: &Trace) -> String {
    sbrp_trace::to_text(t, "generated by sbrp (random)")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> RandSpec {
        RandSpec {
            sms: 2,
            warps_per_sm: 4,
            ops_per_warp: 200,
            l1_lines: 64,
            l1_ways: 4,
            line_bytes: 128,
            flag_prefix: "c0".into(),
            ordering_percent: 29,
        }
    }

    #[test]
    fn same_seed_same_trace_and_text_round_trips() {
        let a = generate(&spec(), 7);
        assert_eq!(a, generate(&spec(), 7));
        assert_ne!(a, generate(&spec(), 8));
        let back = sbrp_trace::parse(&to_text(&a), "gen").unwrap();
        assert_eq!(back.programs, a.programs);
    }

    #[test]
    fn every_operation_and_both_scopes_appear() {
        let t = generate(&spec(), 1);
        let ops: Vec<&WarpOp> = t.programs.values().flatten().collect();
        let has = |f: &dyn Fn(&WarpOp) -> bool| ops.iter().any(|o| f(o));
        assert!(has(&|o| matches!(o, WarpOp::StPm { .. })));
        assert!(has(&|o| matches!(o, WarpOp::LdPm { .. })));
        assert!(has(&|o| matches!(o, WarpOp::StVol { .. })));
        assert!(has(&|o| matches!(o, WarpOp::LdVol { .. })));
        assert!(has(&|o| matches!(o, WarpOp::OFence)));
        assert!(has(&|o| matches!(o, WarpOp::DFence)));
        assert!(has(&|o| matches!(o, WarpOp::Delay { .. })));
        for scope in [Scope::Block, Scope::Device] {
            assert!(has(
                &|o| matches!(o, WarpOp::PAcq { scope: s, .. } if *s == scope)
            ));
            assert!(has(
                &|o| matches!(o, WarpOp::PRel { scope: s, .. } if *s == scope)
            ));
        }
    }
}
