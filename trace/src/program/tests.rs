//! Tests of the program file form, the litmus conversion and the synthetic
//! program (`docs/trace-format.md`, "Programs").

use std::collections::BTreeMap;

use super::*;
use crate::expect::{Expect, Expectation};
use crate::types::{Cell, Trace, WarpOp};
use crate::{parse, MAX_WARPS};

fn all(space: Space, size: u8, mask: u32, addrs: Addrs) -> Instr {
    Instr::Ld {
        space,
        size,
        mask,
        addrs,
    }
}

fn strided(base: u64, stride: i64) -> Addrs {
    Addrs::Strided { base, stride }
}

/// A program using every instruction form, operand form and kernel option.
fn every_form() -> FileProgram {
    let a = CtaCode {
        warps: vec![
            vec![
                all(Space::Pm, 4, u32::MAX, strided(0x1000, 4)),
                all(Space::Global, 8, 0x5, Addrs::List(vec![0x3000, 0x3080])),
                all(Space::Shared, 1, 1, strided(0x10, 0)),
                Instr::St {
                    space: Space::Pm,
                    size: 4,
                    mask: 1,
                    addrs: strided(0x2000, 0),
                    values: Values::Same(7),
                },
                Instr::St {
                    space: Space::Global,
                    size: 16,
                    mask: 0xff00,
                    addrs: strided(0x4000, -16),
                    values: Values::Seq { first: 5, step: 3 },
                },
                Instr::St {
                    space: Space::Shared,
                    size: 2,
                    mask: 0x3,
                    addrs: Addrs::List(vec![0x20, 0x40]),
                    values: Values::List(vec![65535, 0]),
                },
                Instr::St {
                    space: Space::Pm,
                    size: 8,
                    mask: u32::MAX,
                    addrs: strided(0x5000, 8),
                    values: Values::Seq {
                        first: 100,
                        step: 2u64.wrapping_neg(),
                    },
                },
                Instr::St {
                    space: Space::Global,
                    size: 4,
                    mask: u32::MAX,
                    addrs: strided(0x6000, 4),
                    values: Values::Unknown,
                },
            ],
            vec![
                Instr::Atom {
                    space: Space::Pm,
                    size: 8,
                    mask: 1,
                    addrs: strided(0x7000, 0),
                },
                Instr::Atom {
                    space: Space::Global,
                    size: 4,
                    mask: 0x80000000,
                    addrs: Addrs::List(vec![0x7100]),
                },
                Instr::Atom {
                    space: Space::Shared,
                    size: 4,
                    mask: u32::MAX,
                    addrs: strided(0x0, 4),
                },
                Instr::OFence,
                Instr::DFence,
                Instr::Fence(FenceScope::Device),
                Instr::Fence(FenceScope::System),
                Instr::Bar,
                Instr::Compute { cycles: 0 },
                Instr::Compute {
                    cycles: MAX_COMPUTE,
                },
            ],
        ],
    };
    let b = CtaCode {
        warps: vec![
            vec![
                Instr::PRel {
                    scope: Scope::Block,
                    space: Space::Global,
                    flag: 0xe000_0000,
                    value: 1,
                },
                Instr::PRel {
                    scope: Scope::Device,
                    space: Space::Pm,
                    flag: 0x8,
                    value: u64::MAX,
                },
            ],
            Vec::new(),
            vec![
                Instr::PAcq {
                    scope: Scope::Block,
                    space: Space::Global,
                    flag: 0xe000_0000,
                    want: 1,
                    mask: u64::MAX,
                },
                Instr::PAcq {
                    scope: Scope::Device,
                    space: Space::Shared,
                    flag: 0x10,
                    want: 2,
                    mask: 0xff,
                },
            ],
        ],
    };
    FileProgram {
        name: "every-form_1.x".into(),
        kernels: vec![
            KernelInfo {
                name: "first".into(),
                grid: 6,
                block: 64,
                regs: 0,
                smem: 0,
            },
            KernelInfo {
                name: "second".into(),
                grid: 2,
                block: 65,
                regs: 40,
                smem: 4096,
            },
        ],
        // CTAs 0..2 share code (written as one range), 2 has none, 3 differs.
        code: vec![
            vec![a.clone(), a.clone(), CtaCode::default(), a].into(),
            vec![b].into(),
        ],
        expects: vec![
            Expectation {
                line: 0,
                what: Expect::Pmo,
            },
            Expectation {
                line: 0,
                what: Expect::Forbid(
                    Cell {
                        addr: 0x2000,
                        value: 7,
                    },
                    Cell {
                        addr: 0x1000,
                        value: 1,
                    },
                ),
            },
        ],
        config: vec![("pm_latency".into(), "100".into(), 0)],
    }
}

/// The program with line numbers cleared (they are the read file's).
fn no_lines(mut p: FileProgram) -> FileProgram {
    p.expects.iter_mut().for_each(|e| e.line = 0);
    p.config.iter_mut().for_each(|c| c.2 = 0);
    p
}

#[test]
fn every_form_round_trips() {
    let p = every_form();
    let text = program_to_text(&p);
    // One range for CTAs 0 and 1; CTA 2 (no code) is left out.
    assert!(
        text.contains("\ncta 0..2\n") && text.contains("\ncta 3\n"),
        "{text}"
    );
    assert!(!text.contains("cta 2"), "{text}");
    let q = parse_program(&text, "every.prog").unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(no_lines(q.clone()), p);
    // Lines now name the written text: a second round is exact.
    assert_eq!(program_to_text(&q), text);
    assert_eq!(parse_program(&text, "x").unwrap(), q);
    assert_eq!(q.expects[0].line, 3);
    // Every mnemonic of the table was written (`pacq.sys` is read as, and
    // written back as, `pacq.dev`).
    for (m, _) in INSTR_MNEMONICS.iter().filter(|(m, _)| *m != "pacq.sys") {
        assert!(
            text.lines().any(|l| l.trim().split(' ').next() == Some(m)),
            "{m} not written"
        );
    }
    let sys = parse_program(&text.replace("pacq.dev", "pacq.sys"), "sys.prog").unwrap();
    assert_eq!(no_lines(sys), p, "pacq.sys reads as pacq.dev");
}

#[test]
fn example_file_parses_and_round_trips() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testbench/programs/example.prog"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let p = parse_program(&text, "example.prog").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.name, "example");
    assert_eq!(p.kernels.len(), 2);
    assert_eq!((p.kernels[0].grid, p.kernels[0].warps_per_cta()), (4, 2));
    assert_eq!((p.kernels[0].regs, p.kernels[0].smem), (32, 1024));
    // `cta 0..3` excludes 3, which has its own code.
    assert_eq!(p.cta(0, 0), p.cta(0, 2));
    assert_ne!(p.cta(0, 2), p.cta(0, 3));
    assert_eq!(p.cta(0, 0).instrs(), 12);
    assert_eq!(p.cta(1, 0).instrs(), 3);
    assert_eq!(p.config, vec![("pm_latency".into(), "40".into(), 6)]);
    // Lane 0 of the log record writes 100, lane 31 writes 131, one line.
    let Instr::St { addrs, values, .. } = &p.cta(0, 1).warps[0][1] else {
        panic!("expected the log store");
    };
    assert_eq!((addrs.lane(31, 31), values.get(31)), (0x10_007c, Some(131)));
    let Instr::St { addrs, values, .. } = &p.cta(0, 3).warps[1][3] else {
        panic!("expected the descending store");
    };
    assert_eq!((addrs.lane(2, 2), values.get(2)), (0xa000_00fc, Some(38)));
    let q = parse_program(&program_to_text(&p), "w").unwrap();
    assert_eq!(no_lines(q), no_lines(p));
}

#[test]
fn out_of_range_lookups_give_no_code() {
    let p = every_form();
    assert_eq!(p.cta(0, 2), CtaCode::default());
    assert_eq!(p.cta(0, 5), CtaCode::default());
    assert_eq!(p.cta(7, 0), CtaCode::default());
}

#[test]
fn bad_inputs_name_file_line_and_token() {
    const HEAD: &str = "program p\nkernel k grid=2 block=64\ncta 0\nwarp 0\n";
    let cases: &[(&str, usize, &str)] = &[
        ("", 1, "empty program"),
        (
            "kernel k grid=1 block=32\n",
            1,
            "expected `program NAME` first",
        ),
        ("program p\nprogram q\n", 2, "second `program`"),
        ("program a b\n", 1, "`a b`"),
        ("program p\n", 1, "no `kernel`"),
        ("program p\ncta 0\n", 2, "before any `kernel`"),
        ("program p\nkernel k grid=0 block=32\n", 2, "grid=G"),
        ("program p\nkernel k grid=1 block=4096\n", 2, "1..=2048"),
        ("program p\nkernel k grid=1 block=32 foo=1\n", 2, "`foo=1`"),
        (
            "program p\nkernel k grid=1 grid=2 block=32\n",
            2,
            "`grid=` given twice",
        ),
        (
            "program p\nkernel k grid=1 block=32\nbar\n",
            3,
            "before any `warp`",
        ),
        (
            "program p\nkernel k grid=1 block=32\ncta 0\nbar\n",
            4,
            "before any `warp`",
        ),
        (
            "program p\nkernel k grid=2 block=32\ncta 2\n",
            3,
            "`2` out of range",
        ),
        (
            "program p\nkernel k grid=4 block=32\ncta 1..5\n",
            3,
            "`1..5` out of range",
        ),
        (
            "program p\nkernel k grid=4 block=32\ncta 2..2\n",
            3,
            "empty",
        ),
        (
            "program p\nkernel k grid=4 block=32\ncta 0..=2\ncta 2\n",
            4,
            "CTA 2 already given at line 3",
        ),
        (
            "program p\nkernel k grid=1 block=32\ncta 0\nwarp 1\n",
            4,
            "warp `1` out of range",
        ),
        (
            "program p\nkernel k grid=1 block=2048\ncta 0\nwarp 64\n",
            4,
            "warp `64` out of range",
        ),
        (
            "program p\nkernel k grid=1 block=64\ncta 0\nwarp 1\nwarp 1\n",
            5,
            "already given at line 4",
        ),
        (
            &format!("{HEAD}st.pm mask=0 0x0 +4\n"),
            5,
            "mask `0` has no active lane",
        ),
        (
            &format!("{HEAD}st.pm mask=0x1_0000_0000 0x0 +4\n"),
            5,
            "above lane 31",
        ),
        (
            &format!("{HEAD}ld.pm mask=0x3 [0x0]\n"),
            5,
            "1 entries but mask 0x3 has 2",
        ),
        (
            &format!("{HEAD}st.pm mask=0x1 0x0 +0 = [1,2]\n"),
            5,
            "value list has 2",
        ),
        (&format!("{HEAD}ld.pm size=3 0x0 +4\n"), 5, "size `3`"),
        (
            &format!("{HEAD}ld.pm size=4 size=4 0x0 +4\n"),
            5,
            "given twice",
        ),
        (&format!("{HEAD}ld.pm 0x100\n"), 5, "expected a stride"),
        (&format!("{HEAD}ld.pm 0x100 4\n"), 5, "found `4`"),
        (&format!("{HEAD}ld.pm 0x0 -4\n"), 5, "lane 1's address"),
        (&format!("{HEAD}ld.pm [0x0,0x4\n"), 5, "no closing `]`"),
        (&format!("{HEAD}ld.pm [0x0,zz]\n"), 5, "found `zz`"),
        (
            &format!("{HEAD}st.pm size=1 mask=1 0x0 +0 = 256\n"),
            5,
            "value 256",
        ),
        (
            &format!("{HEAD}st.pm 0x0 +4 =\n"),
            5,
            "expected values after `=`",
        ),
        (&format!("{HEAD}ld.pm 0x0 +4 = 1\n"), 5, "unexpected `=`"),
        (
            &format!("{HEAD}st.vol 0x0\n"),
            5,
            "unknown instruction `st.vol`",
        ),
        (&format!("{HEAD}bar 3\n"), 5, "unexpected `3` after bar"),
        (&format!("{HEAD}compute 1000001\n"), 5, "too long"),
        (&format!("{HEAD}compute\n"), 5, "takes 1 operand"),
        (
            &format!("{HEAD}prel.block global 0x1004 1\n"),
            5,
            "`0x1004` is not 8-byte aligned",
        ),
        (
            &format!("{HEAD}prel.block vol 0x1000 1\n"),
            5,
            "found `vol`",
        ),
        (
            &format!("{HEAD}pacq.dev pm 0x1000 0x100 0xff\n"),
            5,
            "spin forever",
        ),
        (
            &format!("{HEAD}expect forbid 1=1 with 2=2\n"),
            5,
            "`without`",
        ),
        (&format!("{HEAD}config pm_latency\n"), 5, "`pm_latency`"),
    ];
    assert!(cases.len() >= 8);
    for (text, line, what) in cases {
        let e = parse_program(text, "bad.prog").expect_err(text);
        assert_eq!(
            (e.file.as_str(), e.line),
            ("bad.prog", *line),
            "{e}\n{text}"
        );
        assert!(e.msg.contains(what), "`{what}` not in: {e}\n{text}");
        assert!(
            e.to_string().starts_with(&format!("bad.prog:{line}: ")),
            "{e}"
        );
    }
}

#[test]
fn comments_blanks_and_list_spacing_are_accepted() {
    let p = parse_program(
        "# c\n\nprogram p   # name\nkernel k grid=1 block=32\ncta 0\n  warp 0\n\tld.pm mask=0x3 [ 0x40, 0x80 ]  # two\n",
        "c",
    )
    .unwrap();
    assert_eq!(
        p.cta(0, 0).warps[0],
        vec![all(Space::Pm, 4, 3, Addrs::List(vec![0x40, 0x80]))]
    );
}

fn litmus_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testbench/litmus")
}

/// The instruction a litmus op must become.
fn expected_instr(op: &WarpOp, flags: &[String]) -> Instr {
    let one = |space, addr| Instr::Ld {
        space,
        size: 8,
        mask: 1,
        addrs: strided(addr, 0),
    };
    let fl = |f: &String| LITMUS_FLAG_BASE + 8 * flags.iter().position(|n| n == f).unwrap() as u64;
    match op {
        WarpOp::StPm { addr, value } => Instr::St {
            space: Space::Pm,
            size: 8,
            mask: 1,
            addrs: strided(*addr, 0),
            values: Values::Same(*value),
        },
        WarpOp::StVol { addr } => Instr::St {
            space: Space::Global,
            size: 8,
            mask: 1,
            addrs: strided(*addr, 0),
            values: Values::Unknown,
        },
        WarpOp::LdPm { addr } => one(Space::Pm, *addr),
        WarpOp::LdVol { addr } => one(Space::Global, *addr),
        WarpOp::OFence => Instr::OFence,
        WarpOp::DFence => Instr::DFence,
        WarpOp::Barrier => Instr::Bar,
        WarpOp::Delay { cycles } => Instr::Compute { cycles: *cycles },
        WarpOp::PRel { scope, flag } => Instr::PRel {
            scope: *scope,
            space: Space::Global,
            flag: fl(flag),
            value: 1,
        },
        WarpOp::PAcq { scope, flag } => Instr::PAcq {
            scope: *scope,
            space: Space::Global,
            flag: fl(flag),
            want: 1,
            mask: u64::MAX,
        },
    }
}

#[test]
fn every_litmus_trace_converts() {
    let mut files: Vec<_> = std::fs::read_dir(litmus_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "trace"))
        .collect();
    files.sort();
    assert!(files.len() >= 19, "{files:?}");
    let mut with_flags = 0;
    for f in &files {
        let name = f.display().to_string();
        let t: Trace = parse(&std::fs::read_to_string(f).unwrap(), &name).unwrap();
        let p = litmus_program(&t);
        let flags = litmus_flags(&t);
        with_flags += usize::from(!flags.is_empty());
        let stem = f.file_stem().unwrap().to_str().unwrap();
        assert_eq!(p.name, stem);
        assert_eq!(p.kernels.len(), 1, "{name}");
        let k = &p.kernels[0];
        assert_eq!((k.name.as_str(), k.grid), ("litmus", t.sms()), "{name}");
        assert_eq!(k.block, 32 * t.warps_per_sm(), "{name}");
        let total: usize = (0..k.grid).map(|c| p.cta(0, c).instrs()).sum();
        assert_eq!(total, t.ops(), "{name}");
        for (id, ops) in &t.programs {
            let code = p.cta(0, id.sm);
            assert_eq!(code.warps.len() as u32, t.warps_per_sm(), "{name}");
            let want: Vec<Instr> = ops.iter().map(|o| expected_instr(o, &flags)).collect();
            assert_eq!(code.warps[id.warp as usize], want, "{name} warp {id}");
        }
        assert_eq!(p.expects, t.expects, "{name}");
        let cfg: Vec<_> = t
            .config
            .iter()
            .map(|c| (c.key.clone(), c.value.clone(), c.line))
            .collect();
        assert_eq!(p.config, cfg, "{name}");
        // The file form holds a converted trace too.
        let q = parse_program(&program_to_text(&p), &name).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(no_lines(q), no_lines(p), "{name}");
    }
    assert!(with_flags >= 3, "only {with_flags} traces with flags");
}

#[test]
fn litmus_flags_are_numbered_in_first_use_order() {
    let t = parse(
        "1.0 pacq.dev b\n0.1 prel.block a\n0.0 st.pm 0x100 5\n0.0 prel.dev b\n0.1 pacq.block b\n\
         0.0 st.vol 0x40\n0.0 ld.vol 0x40\n0.0 ld.pm 0x100\n0.0 delay 7\n0.0 bar\n0.0 ofence\n0.0 dfence\n",
        "dir/x y.trace",
    )
    .unwrap();
    // Warp 0.0 comes first (SM, warp order), so `b` is flag 0.
    assert_eq!(litmus_flags(&t), vec!["b".to_string(), "a".to_string()]);
    let p = litmus_program(&t);
    assert_eq!(p.name, "x_y");
    assert_eq!((p.kernels[0].grid, p.kernels[0].block), (2, 64));
    let w00 = &p.cta(0, 0).warps[0];
    assert_eq!(
        w00[1],
        Instr::PRel {
            scope: Scope::Device,
            space: Space::Global,
            flag: LITMUS_FLAG_BASE,
            value: 1
        }
    );
    assert_eq!(w00[5], Instr::Compute { cycles: 7 });
    assert_eq!(w00.len(), 9);
    let w01 = &p.cta(0, 0).warps[1];
    assert_eq!(
        w01[0],
        Instr::PRel {
            scope: Scope::Block,
            space: Space::Global,
            flag: LITMUS_FLAG_BASE + 8,
            value: 1
        }
    );
    // SM 1 has only warp 0: its warp 1 has no code.
    assert!(p.cta(0, 1).warps[1].is_empty());
    assert_eq!(
        p.cta(0, 1).warps[0],
        vec![Instr::PAcq {
            scope: Scope::Device,
            space: Space::Global,
            flag: LITMUS_FLAG_BASE,
            want: 1,
            mask: u64::MAX
        }]
    );
}

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

#[test]
fn damaged_files_give_errors_not_panics() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testbench/programs/example.prog"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let mut errors = 0;
    // Every one-character deletion, and a few insertions, at every position.
    for at in text.char_indices().map(|(i, _)| i) {
        let mut cut = text.clone();
        cut.remove(at);
        errors += usize::from(parse_program(&cut, "cut").is_err());
        for ins in ['[', ']', '0', '-', '='] {
            let mut more = text.clone();
            more.insert(at, ins);
            errors += usize::from(parse_program(&more, "ins").is_err());
        }
    }
    // Most damage is caught (a comment or a digit of a value is not).
    assert!(
        errors > text.len(),
        "{errors} errors for {} positions",
        text.len()
    );
}

#[test]
fn any_program_is_written_cta_by_cta() {
    // A FileProgram: the same text as program_to_text.
    let p = every_form();
    let mut out = Vec::new();
    write_program(&p, &mut out).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), program_to_text(&p));
    // A generator: reads back as the CTAs it hands out.
    let s = SynthProgram::new(2, 3, 2, 100, 5).unwrap();
    let mut out = Vec::new();
    write_program(&s, &mut out).unwrap();
    let q = parse_program(std::str::from_utf8(&out).unwrap(), "synth.prog").unwrap();
    assert_eq!(q.kernels, s.kernels());
    for k in 0..2 {
        for c in 0..3 {
            assert_eq!(q.cta(k, c), s.cta(k, c));
        }
    }
    // A write error is passed on, not swallowed.
    struct Full;
    impl std::io::Write for Full {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk full"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let e = write_program(&s, &mut Full).unwrap_err();
    assert_eq!(e.to_string(), "disk full");
}

#[test]
fn negative_bases_round_trip() {
    // HM's shape: lane 0's address is below 0, the active lanes' are not.
    let st = |mask: u32, base: u64, stride: i64| Instr::St {
        space: Space::Shared,
        size: 8,
        mask,
        addrs: strided(base, stride),
        values: Values::Unknown,
    };
    let hm = st(0x6000, (-15000i64) as u64, 1272);
    let wrap = st(0x3, 0xffff_ffff_fffe_0000, 0x30000);
    let ok = st(0x3, 0x100, -0x80);
    let p = FileProgram {
        name: "neg".into(),
        kernels: vec![KernelInfo {
            name: "k".into(),
            grid: 1,
            block: 32,
            regs: 0,
            smem: 0,
        }],
        code: vec![vec![CtaCode {
            warps: vec![vec![hm.clone(), wrap, ok]],
        }]
        .into()],
        ..FileProgram::default()
    };
    let text = program_to_text(&p);
    assert!(text.contains("-0x3a98 +1272"), "{text}");
    // A real wrap past 2^64 is written as the lanes' addresses.
    assert!(text.contains("[0xfffffffffffe0000,0x10000]"), "{text}");
    let q = parse_program(&text, "neg.prog").unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(q.cta(0, 0).warps[0][0], hm);
    assert_eq!(q.cta(0, 0).warps[0][2], p.cta(0, 0).warps[0][2]);
    // Every lane addresses what it did.
    let (Instr::St { addrs: a, .. }, Instr::St { addrs: b, .. }) =
        (&p.cta(0, 0).warps[0][1], &q.cta(0, 0).warps[0][1])
    else {
        panic!("stores expected");
    };
    assert_eq!((a.lane(0, 0), a.lane(1, 1)), (b.lane(0, 0), b.lane(1, 1)));
    // A negative base whose active lanes fall below 0 is refused.
    let bad = "program p\nkernel k grid=1 block=32\ncta 0\nwarp 0\n st.pm mask=0x3 -0x10 +8\n";
    let e = parse_program(bad, "bad.prog").unwrap_err();
    assert_eq!(e.line, 5);
    assert!(e.msg.contains("lane 0's address -0x10"), "{e}");
}

#[test]
fn parser_memory_follows_the_file_not_the_grid() {
    // A 60-byte file naming the last CTA of a 2^32 - 1 grid, and one range
    // over every CTA: both read at once, small.
    let t = std::time::Instant::now();
    let last = "program p\nkernel k grid=4294967295 block=64\ncta 4294967294\nwarp 1\n dfence\n";
    let p = parse_program(last, "last.prog").unwrap();
    assert_eq!(p.cta(0, 4294967294).warps[1], vec![Instr::DFence]);
    assert_eq!(p.cta(0, 0), CtaCode::default());
    let all = "program p\nkernel k grid=4294967295 block=32\ncta 0..4294967295\nwarp 0\n bar\n";
    let p = parse_program(all, "all.prog").unwrap();
    assert_eq!(p.cta(0, 123_456_789).warps[0], vec![Instr::Bar]);
    assert_eq!(program_to_text(&p).lines().count(), 5);
    assert!(t.elapsed().as_secs() < 2, "{:?}", t.elapsed());
    // Overlapping ranges are still refused, naming the first CTA given twice.
    let twice = "program p\nkernel k grid=100 block=32\ncta 10..20\ncta 15..=40\n";
    let e = parse_program(twice, "twice.prog").unwrap_err();
    assert_eq!(
        (e.line, e.msg.as_str()),
        (4, "CTA 15 already given at line 3")
    );
    let twice = "program p\nkernel k grid=100 block=32\ncta 10..20\ncta 0..=10\n";
    let e = parse_program(twice, "twice.prog").unwrap_err();
    assert_eq!(
        (e.line, e.msg.as_str()),
        (4, "CTA 10 already given at line 3")
    );
    // Adjacent ranges with equal code are one range, however written.
    let split =
        "program p\nkernel k grid=9 block=32\ncta 3..6\nwarp 0\n bar\ncta 0..3\nwarp 0\n bar\n";
    let p = parse_program(split, "split.prog").unwrap();
    assert_eq!(p.code[0].ranges().count(), 1);
    assert!(program_to_text(&p).contains("\ncta 0..6\n"));
}

#[test]
fn the_top_of_the_address_space_is_refused() {
    let head = "program p\nkernel k grid=1 block=32\ncta 0\nwarp 0\n";
    for (instr, what) in [
        (
            "st.pm size=8 mask=1 0xfffffffffffffff8 +0 = 1",
            "lane 0's access at 0xfffffffffffffff8",
        ),
        (
            "ld.global mask=0x2 0xfffffffffffefffc +4",
            "lane 1's access at 0xffffffffffff0000",
        ),
        (
            "prel.dev pm 0xfffffffffffffff8 1",
            "flag word at 0xfffffffffffffff8",
        ),
        (
            "pacq.block global 0xffffffffffff0000 1",
            "flag word at 0xffffffffffff0000",
        ),
    ] {
        let e = parse_program(&format!("{head}  {instr}\n"), "top.prog").unwrap_err();
        assert_eq!(e.line, 5, "{instr}");
        assert!(
            e.msg.contains(what) && e.msg.contains("reserved top"),
            "{instr}: {e}"
        );
    }
    // The last usable bytes are fine.
    let ok = format!("{head}  st.pm size=8 mask=1 0xfffffffffffefff8 +0 = 1\n  prel.dev pm 0xfffffffffffefff8 1\n");
    parse_program(&ok, "ok.prog").unwrap();
    // The same check refuses an instruction built in memory.
    let i = Instr::PRel {
        scope: crate::Scope::Device,
        space: Space::Pm,
        flag: ADDR_END,
        value: 1,
    };
    assert!(check_instr(&i).unwrap_err().contains("reserved top"));
}

/// `check_instr`'s shortcuts (a strided access's end lanes, a value
/// sequence's last value) give the verdict and message of the lane by lane
/// check, which an address list and a value list always take.
#[test]
fn check_instr_shortcuts_agree_with_lane_by_lane() {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for n in 0..20_000 {
        let r = rnd();
        let base = match r % 4 {
            0 => rnd() % 0x1_0000,
            1 => ADDR_END - rnd() % 0x2000,
            2 => u64::MAX - rnd() % 0x2000,
            _ => rnd(),
        };
        let stride = match (r >> 8) % 4 {
            0 => (rnd() % 64) as i64 - 32,
            1 => (rnd() % 0x800) as i64 - 0x400,
            // Large, but 31 lanes' offset fits an i64 (`Addrs::lane`).
            2 => (rnd() >> 6) as i64 * if rnd() & 1 == 0 { 1 } else { -1 },
            _ => 4,
        };
        let mask = match (r >> 16) % 3 {
            0 => u32::MAX,
            _ => (rnd() as u32).max(1),
        };
        let size = SIZES[(r >> 24) as usize % SIZES.len()];
        let (first, step) = match (r >> 32) % 3 {
            0 => (rnd() % 0x100, rnd() % 8),
            1 => (rnd() % 0x1_0000, rnd() % 0x800),
            _ => (rnd(), rnd()),
        };
        let active = mask.count_ones() as usize;
        let lanes: Vec<u32> = (0..32).filter(|l| mask >> l & 1 == 1).collect();
        let addrs = Addrs::Strided { base, stride };
        let list = Addrs::List(
            lanes
                .iter()
                .enumerate()
                .map(|(k, &l)| addrs.lane(l, k))
                .collect(),
        );
        let seq = Values::Seq { first, step };
        let vals = Values::List((0..active).map(|k| seq.get(k).unwrap()).collect());
        let st = |addrs: &Addrs, values: &Values| Instr::St {
            space: Space::Pm,
            size,
            mask,
            addrs: addrs.clone(),
            values: values.clone(),
        };
        assert_eq!(
            check_instr(&all(Space::Global, size, mask, addrs.clone())),
            check_instr(&all(Space::Global, size, mask, list.clone())),
            "case {n}: load at {base:#x} stride {stride} mask {mask:#x} size {size}"
        );
        assert_eq!(
            check_instr(&st(&addrs, &seq)),
            check_instr(&st(&list, &vals)),
            "case {n}: store at {base:#x} stride {stride} mask {mask:#x} size {size}, values {first} + {step} r"
        );
    }
}
