//! Damaged and hostile program files: errors, not panics; memory bounded by
//! the file; the address space's top refused; the checker's shortcuts.

use super::*;

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
