//! The synthetic program: deterministic, sized, a valid program file, runs
//! to its end on an abstract machine (`docs/trace-format.md`, "Programs").

use super::*;

/// Runs one CTA's code on an abstract machine (no timing): flags are words,
/// `pAcq` blocks until its word matches, `bar` waits for every unfinished
/// warp. `pick` chooses among the runnable warps. Returns whether every warp
/// finished.
fn runs_to_end(code: &CtaCode, pick: impl Fn(&[usize]) -> usize) -> bool {
    let n = code.warps.len();
    let mut pc = vec![0usize; n];
    let mut words: BTreeMap<u64, u64> = BTreeMap::new();
    let mut at_bar = vec![false; n];
    loop {
        let done = |w: usize, pc: &[usize]| pc[w] >= code.warps[w].len();
        if (0..n).all(|w| done(w, &pc)) {
            return true;
        }
        // A barrier opens when every unfinished warp is at one.
        if (0..n).all(|w| done(w, &pc) || at_bar[w]) {
            for w in 0..n {
                if at_bar[w] {
                    at_bar[w] = false;
                    pc[w] += 1;
                }
            }
            continue;
        }
        let runnable: Vec<usize> = (0..n)
            .filter(|&w| !done(w, &pc) && !at_bar[w])
            .filter(|&w| match &code.warps[w][pc[w]] {
                Instr::PAcq {
                    flag, want, mask, ..
                } => words.get(flag).copied().unwrap_or(0) & mask == *want,
                _ => true,
            })
            .collect();
        if runnable.is_empty() {
            return false;
        }
        let w = pick(&runnable);
        match &code.warps[w][pc[w]] {
            Instr::Bar => at_bar[w] = true,
            Instr::PRel { flag, value, .. } => {
                words.insert(*flag, *value);
                pc[w] += 1;
            }
            _ => pc[w] += 1,
        }
    }
}

#[test]
fn synth_is_deterministic_and_sized() {
    let s = SynthProgram::new(2, 5, 4, 300, 42).unwrap();
    assert_eq!(s.name(), "synth");
    assert_eq!(s.kernels().len(), 2);
    assert_eq!(s.total_instrs(), 2 * 5 * 4 * 300);
    for k in s.kernels() {
        assert_eq!((k.grid, k.block, k.warps_per_cta()), (5, 128, 4));
    }
    let again = SynthProgram::new(2, 5, 4, 300, 42).unwrap();
    let other = SynthProgram::new(2, 5, 4, 300, 43).unwrap();
    for k in 0..2 {
        for c in 0..5 {
            let code = s.cta(k, c);
            assert_eq!(code, again.cta(k, c));
            assert_ne!(code, other.cta(k, c));
            assert_eq!(code.warps.len(), 4);
            assert!(code.warps.iter().all(|w| w.len() == 300));
            assert!(code.warps.iter().all(|w| w[299] == Instr::DFence));
        }
    }
    // Different CTAs and kernels get different code.
    assert_ne!(s.cta(0, 0), s.cta(0, 1));
    assert_ne!(s.cta(0, 0), s.cta(1, 0));
    assert_eq!(s.cta(2, 0), CtaCode::default());
    assert_eq!(s.cta(0, 5), CtaCode::default());
    assert!(s.warp_code(0, 0, 4).is_empty());
}

#[test]
fn synth_mix_pairs_and_barriers() {
    let s = SynthProgram::new(1, 3, 3, 1000, 7).unwrap();
    let code = s.cta(0, 1);
    let w = &code.warps;
    let count = |v: &[Instr], f: fn(&Instr) -> bool| v.iter().filter(|i| f(i)).count();
    for warp in w {
        // Barriers at the same slots in every warp.
        let bars: Vec<usize> = (0..warp.len()).filter(|&i| warp[i] == Instr::Bar).collect();
        assert_eq!(bars.len(), 15);
        assert!(bars.iter().all(|b| b % 64 == 63));
        let stores = count(warp, |i| {
            matches!(
                i,
                Instr::St {
                    space: Space::Pm,
                    ..
                }
            )
        });
        let ofences = count(warp, |i| *i == Instr::OFence);
        assert!(stores > 200, "{stores} stores");
        assert!(
            ofences == stores / 8 || ofences + 1 == stores / 8,
            "{ofences} for {stores}"
        );
        assert!(
            count(warp, |i| matches!(
                i,
                Instr::Ld {
                    space: Space::Global,
                    ..
                }
            )) > 50
        );
        assert!(
            count(warp, |i| matches!(
                i,
                Instr::Ld {
                    space: Space::Pm,
                    ..
                }
            )) > 50
        );
        for i in warp {
            if let Instr::Compute { cycles } = i {
                assert!((4..=20).contains(cycles));
            }
        }
    }
    // Warp 0 releases fresh words with counts 1, 2, ..; warp 1 acquires the
    // same word for the same count at the same slot; warp 2 does neither.
    let rel: Vec<(usize, u64, u64)> = (0..1000)
        .filter_map(|i| match w[0][i] {
            Instr::PRel { flag, value, .. } => Some((i, flag, value)),
            _ => None,
        })
        .collect();
    let acq: Vec<(usize, u64, u64)> = (0..1000)
        .filter_map(|i| match w[1][i] {
            Instr::PAcq { flag, want, .. } => Some((i, flag, want)),
            _ => None,
        })
        .collect();
    assert_eq!(rel.len(), 1000 / 32);
    assert_eq!(rel, acq);
    assert!(rel.iter().enumerate().all(|(j, r)| r.2 == j as u64 + 1));
    let mut flags: Vec<u64> = rel.iter().map(|r| r.1).collect();
    flags.dedup();
    assert_eq!(flags.len(), rel.len());
    assert!(!w[2]
        .iter()
        .any(|i| matches!(i, Instr::PRel { .. } | Instr::PAcq { .. })));
    // No deadlock whichever warp the scheduler favours.
    assert!(runs_to_end(&code, |r| r[0]));
    assert!(runs_to_end(&code, |r| r[r.len() - 1]));
    // The checker itself catches a deadlock: an acquire nobody releases.
    let mut stuck = code.clone();
    stuck.warps[0].retain(|i| !matches!(i, Instr::PRel { .. }));
    assert!(!runs_to_end(&stuck, |r| r[0]));
}

#[test]
fn synth_code_is_a_valid_program_file() {
    // Writing a synthetic CTA and reading it back runs every check of the
    // parser on it (value widths, lane addresses, flag alignment).
    let s = SynthProgram::new(2, 2, 2, 500, 3).unwrap();
    let p = FileProgram {
        name: "synth".into(),
        kernels: s.kernels().to_vec(),
        code: (0..2)
            .map(|k| (0..2).map(|c| s.cta(k, c)).collect::<Vec<_>>().into())
            .collect(),
        expects: Vec::new(),
        config: Vec::new(),
    };
    let q = parse_program(&program_to_text(&p), "synth.prog").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(q, p);
}

#[test]
fn synth_refuses_bad_sizes() {
    for (k, c, w, i, what) in [
        (0, 1, 1, 1, "kernels 0"),
        (1, 0, 1, 1, "CTAs per kernel 0"),
        (1, 1, MAX_WARPS + 1, 1, "warps per CTA 65"),
        (1, 1, 1, 0, "instructions per warp 0"),
        (1025, 1, 1, 1, "kernels 1025"),
    ] {
        let e = SynthProgram::new(k, c, w, i, 0).unwrap_err();
        assert!(e.contains(what), "{e}");
    }
    // A one-warp CTA has no pairs; a one-instruction warp is a dFence.
    let one = SynthProgram::new(1, 1, 1, 1, 0).unwrap();
    assert_eq!(one.cta(0, 0).warps, vec![vec![Instr::DFence]]);
}

#[test]
fn the_doc_shows_the_example_file() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let doc = std::fs::read_to_string(format!("{dir}/docs/trace-format.md")).unwrap();
    let file = std::fs::read_to_string(format!("{dir}/testbench/programs/example.prog")).unwrap();
    let start = doc
        .find("`testbench/programs/example.prog`:\n\n```\n")
        .expect("the doc names the example file");
    let body = &doc[start..];
    let body = &body[body.find("```\n").unwrap() + 4..];
    let body = &body[..body.find("```").unwrap()];
    assert_eq!(body, file);
}

#[test]
fn synth_regions_do_not_overlap() {
    let s = SynthProgram::new(2, 70, 64, 200, 9).unwrap();
    // 70 x 64 warps x 64 KiB = 280 MiB of PM: the next regions start at 8 and
    // 12 GiB.
    assert_eq!((s.global_base(), s.flag_base()), (2 << 32, 3 << 32));
    for k in 0..2 {
        for c in [0, 69] {
            for w in s.cta(k, c).warps {
                for i in w {
                    let (lo, hi, spans) = match &i {
                        Instr::St { space, addrs, .. } | Instr::Ld { space, addrs, .. } => {
                            let Addrs::Strided { base, stride } = addrs else {
                                panic!("synthetic accesses are strided: {i:?}");
                            };
                            let last = base + 31 * *stride as u64;
                            let region = match space {
                                Space::Pm => (SYNTH_PM_BASE, s.global_base()),
                                _ => (s.global_base(), s.flag_base()),
                            };
                            (*base, last, region)
                        }
                        Instr::PAcq { flag, .. } | Instr::PRel { flag, .. } => {
                            (*flag, *flag, (s.flag_base(), u64::MAX))
                        }
                        _ => continue,
                    };
                    assert!(lo >= spans.0 && hi < spans.1, "{i:?} outside {spans:x?}");
                }
            }
        }
    }
}
