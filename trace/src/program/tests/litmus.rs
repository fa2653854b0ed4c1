//! The conversion of litmus traces into programs (`docs/trace-format.md`,
//! "Programs").

use super::*;

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
