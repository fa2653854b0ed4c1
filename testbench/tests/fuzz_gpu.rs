//! The GPU model's fuzzer in CI (issue 26): 560 programs, half mutated
//! excerpts of the apps' real programs, half generated; each the parser
//! takes runs under sbrp-near, epoch-near and gpm-far (over 1,000 runs)
//! with a small cycle limit: no panic, no run past its limits, no
//! persistency-checker violation on any run's record, every generated
//! program reads back as itself.

use sbrp_iface::stimulus::Rng;
use sbrp_testbench::fuzz::{fuzz, generate, FuzzOpts, PRESETS};
use sbrp_trace::program::{parse_program, program_to_text};

#[test]
fn a_thousand_program_runs_without_a_panic() {
    let o = FuzzOpts {
        programs: 560,
        seed: 26,
        max_cycles: 4000,
        max_secs: 20.0,
        check: true,
        ..FuzzOpts::default()
    };
    let r = fuzz(&o, |_, _| {}).unwrap();
    let shown: Vec<String> = r
        .findings
        .iter()
        .take(3)
        .map(|f| format!("program {} {:?}: {}\n{}", f.index, f.preset, f.what, f.text))
        .collect();
    assert!(
        r.findings.is_empty(),
        "{} findings:\n{}",
        r.findings.len(),
        shown.join("\n")
    );
    assert_eq!((r.programs, r.mutated, r.generated), (560, 280, 280));
    // Every preset ran every program the parser took; the runs reached
    // every kind of end, and most programs ran.
    assert_eq!(r.runs, (r.programs - r.refused) * PRESETS.len());
    assert!(r.runs >= 1000, "{r:?}");
    assert!(r.finished > 100 && r.cut > 50 && r.failed > 10, "{r:?}");
    // Mutations were refused with a place, and some were not refused.
    assert!(r.refused > 30 && r.refused < r.mutated, "{r:?}");
}

#[test]
fn generated_programs_round_trip_and_differ() {
    let mut rng = Rng::new(5);
    let mut texts = std::collections::BTreeSet::new();
    for i in 0..200 {
        let p = generate(&mut rng, &format!("g{i}"));
        let text = program_to_text(&p);
        let q = parse_program(&text, "g.prog").unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(q, p, "{text}");
        texts.insert(text.replace(&format!("program g{i}\n"), ""));
    }
    assert!(texts.len() > 190, "{} distinct programs", texts.len());
}
