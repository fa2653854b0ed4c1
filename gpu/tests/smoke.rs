//! Whole programs through the GPU model under every persistency model: they
//! finish, count what they did, and persist every PM store.

use sbrp_gpu::config::{Model, PmPlace};
use sbrp_gpu::{Gpu, GpuConfig, RunOpts};
use sbrp_trace::program::{Addrs, CtaCode, FileProgram, Instr, KernelInfo, Space, Values};
use sbrp_trace::Scope;

/// Each warp: stores a line of PM, oFence, stores another, a block release
/// (warp 0) / acquire (warp 1), loads, a barrier, a dFence.
fn program(ctas: u32, warps: u32) -> FileProgram {
    let mut code = vec![];
    for c in 0..ctas {
        let mut ws = vec![];
        for w in 0..warps {
            let base = 0xF000_0000u64 + ((c * warps + w) as u64) * 1024;
            let st = |off: u64, v: u64| Instr::St {
                space: Space::Pm,
                size: 4,
                mask: !0,
                addrs: Addrs::Strided {
                    base: base + off,
                    stride: 4,
                },
                values: Values::Seq { first: v, step: 1 },
            };
            let flag = 0x1000_0000 + c as u64 * 8;
            let mut p = vec![st(0, 1), Instr::OFence, st(128, 100)];
            if w == 0 {
                p.push(Instr::PRel {
                    scope: Scope::Block,
                    space: Space::Shared,
                    flag,
                    value: 1,
                });
            } else if w == 1 {
                p.push(Instr::PAcq {
                    scope: Scope::Block,
                    space: Space::Shared,
                    flag,
                    want: 1,
                    mask: !0,
                });
            }
            p.push(Instr::Ld {
                space: Space::Pm,
                size: 4,
                mask: !0,
                addrs: Addrs::Strided { base, stride: 4 },
            });
            p.push(Instr::Ld {
                space: Space::Global,
                size: 4,
                mask: !0,
                addrs: Addrs::Strided {
                    base: 0x2000_0000 + base % 0x1000_0000,
                    stride: 8,
                },
            });
            p.push(Instr::Compute { cycles: 10 });
            p.push(Instr::Bar);
            p.push(Instr::DFence);
            ws.push(p);
        }
        code.push(CtaCode { warps: ws });
    }
    let k = KernelInfo {
        name: "k".into(),
        grid: ctas,
        block: warps * 32,
        regs: 0,
        smem: 0,
    };
    FileProgram {
        name: "smoke".into(),
        kernels: vec![k.clone(), k],
        code: vec![code.clone().into(), code.into()],
        ..FileProgram::default()
    }
}

fn cfg(model: Model, place: PmPlace) -> GpuConfig {
    let mut c = GpuConfig {
        model,
        ..GpuConfig::default()
    };
    c.pm.place = place;
    c
}

#[test]
fn every_model_runs_a_two_kernel_program() {
    let prog = program(60, 8);
    for (model, place) in [
        (Model::Sbrp, PmPlace::Near),
        (Model::Sbrp, PmPlace::Far),
        (Model::SbrpDevice, PmPlace::Near),
        (Model::Epoch, PmPlace::Near),
        (Model::Epoch, PmPlace::Far),
        (Model::Gpm, PmPlace::Far),
        (Model::Spb, PmPlace::Near),
        (Model::Spb, PmPlace::Far),
    ] {
        let c = cfg(model, place);
        let mut gpu = Gpu::with_model_units(&c).unwrap();
        let r = gpu.run(&prog, RunOpts::default());
        assert!(
            r.finished,
            "{model:?} {place:?}: {:?} {:?}",
            r.deadlock, r.failures
        );
        assert!(r.failures.is_empty(), "{:?}", r.failures);
        assert_eq!(r.kernels.len(), 2);
        // 60 CTAs x 8 warps x (2 stores of one line each).
        assert_eq!(r.sm.persists, 2 * 60 * 8 * 2, "{model:?}");
        assert!(r.sm.pm_flushes > 0, "{model:?}");
        assert!(r.cycles > 2 * 5000, "{model:?}: {}", r.cycles);
        eprintln!(
            "{model:?} {place:?}: {} cycles, {} instrs, flushes {}, pm misses {}, stalls {:?}",
            r.cycles, r.sm.instrs, r.sm.pm_flushes, r.sm.l1_pm_read_misses, r.stalls
        );
    }
}

#[test]
fn a_cycle_limit_cuts_the_run_at_the_limit() {
    let prog = program(60, 8);
    for (limit, model) in [
        (0u64, Model::Epoch),
        (6000, Model::Epoch),
        (6000, Model::Sbrp),
    ] {
        let c = cfg(model, PmPlace::Near);
        let mut gpu = Gpu::with_model_units(&c).unwrap();
        let r = gpu.run(
            &prog,
            RunOpts {
                max_cycles: Some(limit),
                ..RunOpts::default()
            },
        );
        assert!(!r.finished, "{limit} {model:?}");
        assert_eq!(r.cycles, limit, "{model:?}");
    }
}
