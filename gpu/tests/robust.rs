//! Regression tests of issue 26 ("No panics, clear errors") on the GPU
//! model: programs the format allows that once panicked or hung, each run
//! under SBRP, epoch and GPM presets to a finished, counted result.

use sbrp_gpu::{Gpu, RunOpts, RunReport};
use sbrp_trace::program::{parse_program, Addrs, Instr, KernelCode, Space, Values};

const PRESETS: [&str; 4] = ["sbrp-near", "sbrp-far", "epoch-near", "gpm-far"];

fn run(text: &str, preset: &str) -> RunReport {
    let p = parse_program(text, "test.prog").unwrap_or_else(|e| panic!("{e}"));
    let cfg = sbrp_gpu::presets::preset(preset).unwrap();
    let mut g = Gpu::with_model_units(&cfg).unwrap();
    g.run(
        &p,
        RunOpts {
            max_cycles: Some(2_000_000),
            ..RunOpts::default()
        },
    )
}

fn finished(r: &RunReport, what: &str) {
    assert!(
        r.finished && r.failures.is_empty() && r.deadlock.is_none(),
        "{what}: finished {} failures {:?} deadlock {:?}",
        r.finished,
        r.failures,
        r.deadlock
    );
}

/// Warps without code in CTAs of which several share an SM: a later CTA's
/// warp once took the slot of an earlier CTA's codeless warp, and the
/// earlier CTA's exit emptied it (a panic under SBRP, lost work elsewhere).
#[test]
fn codeless_warps_beside_other_ctas_run_to_the_end() {
    let text = "program x\nkernel k grid=90 block=96\ncta 0..90\nwarp 1\n  st.pm 0x1000 +4\n  compute 500\n  dfence\n  st.pm 0x1000 +4\n";
    for preset in PRESETS {
        let r = run(text, preset);
        finished(&r, preset);
        // 90 CTAs, one warp of four instructions each.
        assert_eq!(r.sm.instrs, 90 * 4, "{preset}");
    }
}

/// CTA 0 without code and code only in a CTA placed as an SM's second CTA:
/// once reported as a deadlock with no warp listed.
#[test]
fn code_only_past_the_first_wave_runs() {
    for (grid, cta) in [(31, 30), (40, 35), (200, 199)] {
        let text = format!(
            "program x\nkernel k grid={grid} block=64\ncta {cta}\nwarp 0\n  st.pm 0x1000 +4\n  dfence\n"
        );
        for preset in PRESETS {
            let r = run(&text, preset);
            finished(&r, &format!("grid {grid} cta {cta} {preset}"));
            assert_eq!(r.sm.instrs, 2, "{preset}");
            assert_eq!(r.sm.persists, 1, "{preset}");
        }
    }
}

/// Stores, loads and releases in the last usable line of the address space
/// (once a panic in the unit's port, and for a volatile store a failed
/// internal check); an in-memory program past `ADDR_END` (no parser to
/// refuse it) is a reported failure, not a panic.
#[test]
fn the_top_of_the_address_space_is_usable_or_refused() {
    let text = "program x\nkernel k grid=2 block=64\ncta 0..2\nwarp 0\n  st.pm size=8 0xfffffffffffeff00 +8\n  prel.dev pm 0xfffffffffffefff8 1\n  st.global size=8 mask=0x3 0xfffffffffffefff0 +8 = 5\n  ld.global 0xfffffffffffeff80 +4\n  dfence\nwarp 1\n  pacq.dev pm 0xfffffffffffefff8 1\n  atom.global mask=1 0xfffffffffffefffc +0\n  ld.pm 0xfffffffffffeff80 +4\n";
    for preset in PRESETS {
        let r = run(text, preset);
        finished(&r, preset);
        assert_eq!(r.sm.instrs - r.sm.polls, 2 * 8, "{preset}");
    }
    let mut p = parse_program(text, "top.prog").unwrap();
    let Some(code) = p.code[0].get(1).cloned() else {
        panic!("CTA 1 has code");
    };
    let mut bad = code.clone();
    bad.warps[0][0] = Instr::St {
        space: Space::Pm,
        size: 8,
        mask: 1,
        addrs: Addrs::Strided {
            base: u64::MAX - 7,
            stride: 0,
        },
        values: Values::Same(1),
    };
    p.code[0] = KernelCode::default();
    p.code[0].insert(0, 1, code);
    p.code[0].insert(1, 2, bad);
    for preset in PRESETS {
        let cfg = sbrp_gpu::presets::preset(preset).unwrap();
        let r = Gpu::with_model_units(&cfg)
            .unwrap()
            .run(&p, RunOpts::default());
        assert!(!r.finished, "{preset}");
        assert_eq!(r.failures.len(), 1, "{preset}");
        assert!(
            r.failures[0].starts_with(
                "kernel 0 (k) CTA 1 warp 0 instruction 0: lane 0's access at 0xfffffffffffffff8"
            ),
            "{preset}: {}",
            r.failures[0]
        );
    }
}
