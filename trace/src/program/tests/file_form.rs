//! The program file form: every form round-trips, the example file, bad
//! input named by file, line and token (`docs/trace-format.md`, "Programs").

use super::*;

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
