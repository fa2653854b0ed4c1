//! The GPU model's fuzzer (`sbrp fuzz-gpu`, issue 26): generated programs
//! in the text form, read by the parser and run on the GPU model under
//! several presets, each run under `catch_unwind` with a small cycle limit.
//! Two kinds: *mutated* (byte and line mutations of excerpts of the six
//! apps' real programs and of the example programs) and *generated*
//! (random programs of every instruction form, kernel shape and CTA range;
//! these must also round-trip through the text form). A finding is a panic
//! (parser, model, expectation evaluator or checker), a run past its cycle
//! limit or its wall-time limit, a parser error without a place, a
//! generated program that does not read back as itself, and (with
//! `check`) a persistency checker violation.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use sbrp_gpu::{Gpu, GpuConfig, RunOpts};
use sbrp_iface::stimulus::Rng;
use sbrp_trace::check;
use sbrp_trace::program::{
    check_instr, parse_program, program_to_text, Addrs, CtaCode, FenceScope, FileProgram, Instr,
    KernelCode, KernelInfo, Program, Space, Values, ADDR_END, SIZES,
};
use sbrp_trace::Scope;
use sbrp_workloads::{app, Build, APPS};

/// What a fuzz campaign does.
#[derive(Clone, Debug)]
pub struct FuzzOpts {
    /// Programs, each run under every preset.
    pub programs: usize,
    pub seed: u64,
    pub presets: Vec<String>,
    /// Cycle limit of each run.
    pub max_cycles: u64,
    /// Wall-time limit of each run (a run over it is a finding).
    pub max_secs: f64,
    /// Also run the persistency checker on each run's record: a violation
    /// is a finding.
    pub check: bool,
}

impl Default for FuzzOpts {
    fn default() -> FuzzOpts {
        FuzzOpts {
            programs: 1000,
            seed: 1,
            presets: PRESETS.iter().map(|s| s.to_string()).collect(),
            max_cycles: 20_000,
            max_secs: 10.0,
            check: false,
        }
    }
}

/// The default presets: SBRP, epoch and GPM.
pub const PRESETS: [&str; 3] = ["sbrp-near", "epoch-near", "gpm-far"];

/// A program that broke something: which, how to get it back, and why.
#[derive(Clone, Debug)]
pub struct Finding {
    pub index: usize,
    pub preset: Option<String>,
    pub what: String,
    /// The program text (a reproducer).
    pub text: String,
}

/// What a campaign saw.
#[derive(Clone, Debug, Default)]
pub struct FuzzReport {
    pub programs: usize,
    pub mutated: usize,
    pub generated: usize,
    /// Programs the parser (or the `config` check) refused, with a message.
    pub refused: usize,
    /// Runs by outcome.
    pub runs: usize,
    pub finished: usize,
    pub cut: usize,
    pub deadlocked: usize,
    pub failed: usize,
    pub findings: Vec<Finding>,
}

/// A preset made small for fuzzing: 2 SMs and a short launch latency, so
/// that a few thousand cycles reach the programs' code.
pub fn fuzz_config(preset: &str) -> Result<GpuConfig, String> {
    let mut c = sbrp_gpu::presets::preset_or_err(preset).map_err(|e| e.to_string())?;
    c.core.sms = 2;
    c.core.kernel_launch_latency = 100;
    c.validate().map_err(|e| e.to_string())?;
    Ok(c)
}

/// The text of `p` with each kernel cut to its first CTAs and each warp to
/// its first instructions: an excerpt small enough to run many times.
fn excerpt(p: &dyn Program, ctas: u32, instrs: usize) -> String {
    let mut f = FileProgram {
        name: p.name().to_string(),
        ..FileProgram::default()
    };
    for (k, kernel) in p.kernels().iter().enumerate().take(2) {
        let grid = kernel.grid.min(ctas);
        let mut kc = KernelCode::default();
        for c in 0..grid {
            let mut code = p.cta(k, c);
            code.warps.truncate(4);
            for w in &mut code.warps {
                w.truncate(instrs);
            }
            kc.insert(c, c + 1, code);
        }
        f.kernels.push(KernelInfo {
            grid,
            block: kernel.block.min(128),
            ..kernel.clone()
        });
        f.code.push(kc);
    }
    program_to_text(&f)
}

/// Seed texts for mutation: excerpts of every app (both builds, recovery)
/// at small sizes, and the repository's example programs.
pub fn seeds() -> Vec<String> {
    let mut out = Vec::new();
    for name in APPS {
        let size = match *name {
            "gpkvs" => 256,
            "hm" => 300,
            "srad" => 64,
            "reduction" => 65_536,
            "mq" => 8,
            _ => 512 * 8,
        };
        let Ok(a) = app(name, Some(size)) else {
            continue;
        };
        out.push(excerpt(a.program(Build::Gpu).as_ref(), 3, 12));
        out.push(excerpt(a.program(Build::Gpm).as_ref(), 2, 12));
        let crash = a.crash_image();
        out.push(excerpt(a.recovery(&crash).as_ref(), 2, 12));
    }
    for f in ["example.prog", "deadlock.prog"] {
        let p = concat!(env!("CARGO_MANIFEST_DIR"), "/programs/");
        if let Ok(t) = std::fs::read_to_string(format!("{p}{f}")) {
            out.push(t);
        }
    }
    out
}

/// Tokens a mutation may insert: the format's words and edge numbers.
const TOKENS: &[&str] = &[
    "0",
    "1",
    "-1",
    "+0",
    "-0x80",
    "4294967295",
    "4294967296",
    "0xffffffffffffffff",
    "0xfffffffffffeff80",
    "18446744073709551615",
    "99999999999999999999",
    "..",
    "..=",
    "[",
    "]",
    "[]",
    "=",
    "#",
    "mask=0",
    "size=3",
    "size=16",
    "grid=0",
    "grid=4294967295",
    "block=2049",
    "block=2048",
    "regs=65536",
    "smem=99999999",
    "cta",
    "warp",
    "kernel k grid=2 block=64",
    "program",
    "config l1_ways=3",
    "config remote_visibility=0",
    "expect pmo",
    "bar",
    "dfence",
    "ofence",
    "st.pm",
    "ld.global",
    "atom.shared",
    "pacq.dev pm 0x100 1",
    "prel.block global 0x100 1",
    "compute 1000000",
    "\u{1b}",
    "\0",
    "é",
];

/// One random mutation of `text`, in place.
fn mutate(rng: &mut Rng, text: &mut String) {
    let mut bytes = std::mem::take(text).into_bytes();
    let lines = |b: &[u8]| -> Vec<(usize, usize)> {
        let mut v = vec![];
        let mut s = 0;
        for (i, c) in b.iter().enumerate() {
            if *c == b'\n' {
                v.push((s, i + 1));
                s = i + 1;
            }
        }
        if s < b.len() {
            v.push((s, b.len()));
        }
        v
    };
    let pick = |rng: &mut Rng, n: usize| rng.below(n.max(1) as u64) as usize;
    match rng.below(9) {
        // A byte replaced.
        0 if !bytes.is_empty() => {
            let i = pick(rng, bytes.len());
            bytes[i] = rng.below(256) as u8;
        }
        // A digit changed (numbers stay numbers, more often valid).
        1 => {
            let digits: Vec<usize> = (0..bytes.len())
                .filter(|&i| bytes[i].is_ascii_digit())
                .collect();
            if !digits.is_empty() {
                let i = digits[pick(rng, digits.len())];
                bytes[i] = b'0' + rng.below(10) as u8;
            }
        }
        // A range of bytes deleted.
        2 if !bytes.is_empty() => {
            let i = pick(rng, bytes.len());
            let n = 1 + pick(rng, 8);
            bytes.drain(i..(i + n).min(bytes.len()));
        }
        // A token inserted.
        3 => {
            let i = pick(rng, bytes.len() + 1);
            let t = TOKENS[pick(rng, TOKENS.len())];
            let t = if rng.chance(50) {
                format!(" {t} ")
            } else {
                t.to_string()
            };
            bytes.splice(i..i, t.into_bytes());
        }
        // A whole line inserted from the tokens.
        4 => {
            let l = lines(&bytes);
            let at = l.get(pick(rng, l.len())).map_or(0, |x| x.0);
            let t = format!("{}\n", TOKENS[pick(rng, TOKENS.len())]);
            bytes.splice(at..at, t.into_bytes());
        }
        // A line deleted.
        5 => {
            let l = lines(&bytes);
            if let Some(&(a, b)) = l.get(pick(rng, l.len())) {
                bytes.drain(a..b);
            }
        }
        // A line duplicated.
        6 => {
            let l = lines(&bytes);
            if let Some(&(a, b)) = l.get(pick(rng, l.len())) {
                let copy = bytes[a..b].to_vec();
                bytes.splice(b..b, copy);
            }
        }
        // Two lines swapped.
        7 => {
            let l = lines(&bytes);
            if l.len() >= 2 {
                let (i, j) = (pick(rng, l.len()), pick(rng, l.len()));
                let (x, y) = (l[i.min(j)], l[i.max(j)]);
                if x != y {
                    let mut out = bytes[..x.0].to_vec();
                    out.extend_from_slice(&bytes[y.0..y.1]);
                    out.extend_from_slice(&bytes[x.1..y.0]);
                    out.extend_from_slice(&bytes[x.0..x.1]);
                    out.extend_from_slice(&bytes[y.1..]);
                    bytes = out;
                }
            }
        }
        // A number replaced by an edge value.
        _ => {
            let starts: Vec<usize> = (0..bytes.len())
                .filter(|&i| {
                    bytes[i].is_ascii_digit() && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric())
                })
                .collect();
            if !starts.is_empty() {
                let i = starts[pick(rng, starts.len())];
                let mut e = i;
                while e < bytes.len() && (bytes[e].is_ascii_alphanumeric() || bytes[e] == b'_') {
                    e += 1;
                }
                let edge = [
                    "0",
                    "1",
                    "4294967295",
                    "0xffffffffffffffff",
                    "65",
                    "2048",
                    "0x7fffffffffffffff",
                ];
                bytes.splice(i..e, edge[pick(rng, edge.len())].bytes());
            }
        }
    }
    *text = String::from_utf8_lossy(&bytes).into_owned();
}

/// A random address: mostly a small pool of lines (so warps meet), now
/// and then the top of the usable space.
fn addr(rng: &mut Rng, align: u64) -> u64 {
    let a = match rng.below(10) {
        0 => ADDR_END - 4096 + rng.below(4096 - 64),
        1 => rng.below(1 << 40),
        _ => 0x1000 + rng.below(16) * 128 + rng.below(128),
    };
    a / align * align
}

fn space(rng: &mut Rng) -> Space {
    [Space::Pm, Space::Pm, Space::Global, Space::Shared][rng.below(4) as usize]
}

/// A random instruction, valid for `check_instr` (else a compute).
fn instr(rng: &mut Rng) -> Instr {
    let size = SIZES[rng.below(SIZES.len() as u64) as usize];
    let mask = match rng.below(4) {
        0 => u32::MAX,
        1 => 1 << rng.below(32),
        _ => (rng.next_u64() as u32).max(1),
    };
    let addrs = |rng: &mut Rng| {
        if rng.chance(20) {
            Addrs::List((0..mask.count_ones()).map(|_| addr(rng, 1)).collect())
        } else {
            let stride =
                [0i64, size as i64, 8, 128, -(size as i64), -128, 1272][rng.below(7) as usize];
            let base = addr(rng, 1);
            // Lane 0 below the first active lane's address: a negative base.
            let lo = mask.trailing_zeros() as i64;
            let base = if stride > 0 && rng.chance(20) {
                base.wrapping_sub((lo * stride) as u64 + 8)
            } else {
                base
            };
            Addrs::Strided { base, stride }
        }
    };
    let flag = |rng: &mut Rng| 0x9000_0000 + rng.below(4) * 8;
    let i = match rng.below(14) {
        0..=2 => Instr::St {
            space: space(rng),
            size,
            mask,
            addrs: addrs(rng),
            values: match rng.below(4) {
                0 => Values::Unknown,
                1 => Values::Same(rng.below(256)),
                2 => Values::Seq {
                    first: rng.below(100),
                    step: rng.below(3),
                },
                _ => Values::List((0..mask.count_ones()).map(|_| rng.below(256)).collect()),
            },
        },
        3..=4 => Instr::Ld {
            space: space(rng),
            size,
            mask,
            addrs: addrs(rng),
        },
        5 => Instr::Atom {
            space: space(rng),
            size,
            mask,
            addrs: addrs(rng),
        },
        6 => Instr::OFence,
        7 => Instr::DFence,
        8 => Instr::Fence([FenceScope::Device, FenceScope::System][rng.below(2) as usize]),
        9 => Instr::PAcq {
            scope: [Scope::Block, Scope::Device][rng.below(2) as usize],
            space: space(rng),
            flag: flag(rng),
            want: rng.below(2),
            mask: if rng.chance(50) { u64::MAX } else { 1 },
        },
        10 => Instr::PRel {
            scope: [Scope::Block, Scope::Device][rng.below(2) as usize],
            space: space(rng),
            flag: flag(rng),
            value: rng.below(2),
        },
        11 => Instr::Bar,
        _ => Instr::Compute {
            cycles: if rng.chance(5) {
                1_000_000
            } else {
                rng.below(200) as u32
            },
        },
    };
    if check_instr(&i).is_ok() {
        i
    } else {
        Instr::Compute { cycles: 1 }
    }
}

/// A random program: 1-3 kernels of every shape, CTAs given in ranges
/// (some not at all), warps with 0-10 instructions.
pub fn generate(rng: &mut Rng, name: &str) -> FileProgram {
    let mut p = FileProgram {
        name: name.to_string(),
        ..FileProgram::default()
    };
    for k in 0..1 + rng.below(3) {
        // Shapes that do not fit an SM (a reported failure) now and then.
        let rare = rng.chance(10);
        let grid = match rng.below(20) {
            0 => 4_294_967_295,
            1 => 40,
            n => 1 + n as u32 % 6,
        };
        let block = if rare {
            [1024, 2048][rng.below(2) as usize]
        } else {
            [1, 32, 33, 64, 96, 128, 256][rng.below(7) as usize]
        };
        let info = KernelInfo {
            name: format!("k{k}"),
            grid,
            block,
            regs: if rare {
                255
            } else {
                [0, 32][rng.below(2) as usize]
            },
            smem: if rare {
                70_000
            } else {
                [0, 1024][rng.below(2) as usize]
            },
        };
        let wpc = info.warps_per_cta();
        let mut code = KernelCode::default();
        let mut c = 0u32;
        for _ in 0..1 + rng.below(3) {
            let lo = c + rng.below(2) as u32;
            let hi = (lo + 1 + rng.below(3) as u32).min(grid);
            if lo >= hi {
                break;
            }
            let mut warps = vec![Vec::new(); wpc as usize];
            for w in warps.iter_mut().take(4) {
                *w = (0..rng.below(11)).map(|_| instr(rng)).collect();
            }
            code.insert(lo, hi, CtaCode { warps });
            c = hi;
        }
        p.kernels.push(info);
        p.code.push(code);
    }
    p
}

fn panic_text(e: Box<dyn std::any::Any + Send>) -> String {
    e.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| e.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into())
}

/// Runs the campaign; findings are collected, not raised.
pub fn fuzz(o: &FuzzOpts, mut progress: impl FnMut(usize, usize)) -> Result<FuzzReport, String> {
    let configs = o
        .presets
        .iter()
        .map(|p| fuzz_config(p).map(|c| (p.clone(), c)))
        .collect::<Result<Vec<_>, _>>()?;
    let seeds = seeds();
    let mut rng = Rng::new(o.seed);
    let mut r = FuzzReport::default();
    for index in 0..o.programs {
        progress(index, o.programs);
        r.programs += 1;
        let name = format!("fuzz{index}");
        // Odd programs mutated, even ones generated.
        let (text, generated) = if index % 2 == 1 && !seeds.is_empty() {
            r.mutated += 1;
            let mut t = seeds[rng.below(seeds.len() as u64) as usize].clone();
            for _ in 0..1 + rng.below(4) {
                mutate(&mut rng, &mut t);
            }
            (t, None)
        } else {
            r.generated += 1;
            let p = generate(&mut rng, &name);
            (program_to_text(&p), Some(p))
        };
        let file = format!("{name}.prog");
        for (preset, what) in one(&text, generated.as_ref(), &file, &configs, o, &mut r) {
            r.findings.push(Finding {
                index,
                preset,
                what,
                text: text.clone(),
            });
        }
    }
    progress(o.programs, o.programs);
    Ok(r)
}

/// Reads and runs one program under every configuration; returns its
/// findings (preset, what) and counts its outcomes into `r`.
fn one(
    text: &str,
    generated: Option<&FileProgram>,
    file: &str,
    configs: &[(String, GpuConfig)],
    o: &FuzzOpts,
    r: &mut FuzzReport,
) -> Vec<(Option<String>, String)> {
    let mut found = vec![];
    let prog = match catch_unwind(|| parse_program(text, file)) {
        Err(e) => {
            found.push((None, format!("parser panicked: {}", panic_text(e))));
            return found;
        }
        Ok(Ok(p)) => p,
        Ok(Err(e)) => {
            if generated.is_some() {
                found.push((None, format!("a generated program was refused: {e}")));
            }
            let lines = text.lines().count().max(1);
            if e.line == 0 || e.line > lines || e.msg.is_empty() || e.file != file {
                found.push((None, format!("error without a place: {e:?}")));
            }
            r.refused += 1;
            return found;
        }
    };
    if generated.is_some_and(|g| *g != prog) {
        found.push((None, "a generated program reads back differently".into()));
    }
    let mut fe = sbrp_sim_fast::frontend::FrontEndConfig::default();
    if fe.apply_items(file, prog.config()).is_err() {
        r.refused += 1;
        return found;
    }
    for (preset, cfg) in configs {
        r.runs += 1;
        let t0 = Instant::now();
        let run = catch_unwind(AssertUnwindSafe(|| {
            let mut g = Gpu::with_model_units(cfg).map_err(|e| e.to_string())?;
            let rep = g.run(
                &prog,
                RunOpts {
                    record: o.check || !prog.expects().is_empty(),
                    max_cycles: Some(o.max_cycles),
                    ..RunOpts::default()
                },
            );
            // The record through the expectations and the persistency
            // checker: no panic, and a correct model breaks no rule.
            let mut broken = None;
            if let Some(ex) = &rep.execution {
                sbrp_trace::evaluate(prog.expects(), ex);
            }
            if let Some(ex) = rep.execution.as_ref().filter(|_| o.check) {
                let model = cfg.model.persist().checker();
                match check::check(ex, &check::Options::new(model)) {
                    Ok(c) if !c.ok() => {
                        broken = Some(format!(
                            "the checker found {} violation(s), first: {:?}",
                            c.violations_total,
                            c.violations.first()
                        ))
                    }
                    Ok(_) => {}
                    Err(e) => broken = Some(format!("the checker cannot read the record: {e}")),
                }
            }
            Ok::<_, String>((rep, broken))
        }));
        let secs = t0.elapsed();
        let p = Some(preset.clone());
        let rep = match run {
            Err(e) => {
                found.push((p, format!("panicked: {}", panic_text(e))));
                continue;
            }
            Ok(Err(e)) => {
                found.push((p, format!("cannot build the GPU: {e}")));
                continue;
            }
            Ok(Ok((rep, broken))) => {
                if let Some(b) = broken {
                    found.push((p.clone(), b));
                }
                rep
            }
        };
        if rep.cycles > o.max_cycles {
            let what = format!("ran {} cycles past the limit {}", rep.cycles, o.max_cycles);
            found.push((p.clone(), what));
        }
        if secs > Duration::from_secs_f64(o.max_secs) {
            found.push((p, format!("took {:.1} s", secs.as_secs_f64())));
        }
        if rep.finished {
            r.finished += 1;
        } else if rep.deadlock.is_some() {
            r.deadlocked += 1;
        } else if !rep.failures.is_empty() {
            r.failed += 1;
        } else {
            r.cut += 1;
        }
    }
    found
}
