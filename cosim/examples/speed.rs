//! Stepping speed of the Verilated unit on random inputs, without VCD.
//!
//! ```text
//! cargo run --release -p sbrp-cosim --example speed -- [--rtl FILE] [--cycles N]
//!     [--entries N] [--warps W] [--lines L] [--actr-bits A] [--window K] [--policy P] [-G...] [-V ARG]
//! ```
//! Without `--rtl` it builds the generated RTL of the parameters (default:
//! the default parameters); with it, any Verilog file with the `sbrp_pb`
//! ports of the parameters (e.g. tests/fixtures/counter_pb.v). Arguments
//! starting with `-G`, and `-V ARG`, are passed to verilator.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use sbrp_cosim::{BuildOpts, RtlSource, VerilatedPb};
use sbrp_iface::stimulus::RawStimulus;
use sbrp_iface::{FlushPolicy, PbIn, PbParams, PbUnit};

fn main() -> ExitCode {
    let mut source: Option<RtlSource> = None;
    let mut cycles: u64 = 5_000_000;
    let mut opts = BuildOpts {
        verbose: true,
        ..BuildOpts::default()
    };
    let mut p = PbParams::default();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut num = |field: &mut u32| match args.next().and_then(|s| s.parse().ok()) {
            Some(n) => {
                *field = n;
                true
            }
            None => false,
        };
        let ok = match a.as_str() {
            "--entries" => num(&mut p.entries),
            "--warps" => num(&mut p.warps),
            "--lines" => num(&mut p.lines),
            "--actr-bits" => num(&mut p.actr_bits),
            "--window" => num(&mut p.window),
            _ => true,
        };
        if !ok {
            eprintln!("{a} needs a number");
            return ExitCode::FAILURE;
        }
        match a.as_str() {
            "--entries" | "--warps" | "--lines" | "--actr-bits" | "--window" => {}
            "--policy" => match FlushPolicy::parse(&args.next().unwrap_or_default()) {
                Ok(pol) => p.policy = pol,
                Err(e) => {
                    eprintln!("{e}");
                    return ExitCode::FAILURE;
                }
            },
            "--rtl" => {
                source = Some(RtlSource::File(PathBuf::from(
                    args.next().unwrap_or_default(),
                )))
            }
            "--cycles" => match args.next().and_then(|s| s.parse().ok()) {
                Some(n) => cycles = n,
                None => {
                    eprintln!("--cycles needs a number");
                    return ExitCode::FAILURE;
                }
            },
            g if g.starts_with("-G") => opts.extra_args.push(g.to_string()),
            "-V" => opts.extra_args.push(args.next().unwrap_or_default()),
            other => {
                eprintln!("unknown argument {other}; see the header of cosim/examples/speed.rs");
                return ExitCode::FAILURE;
            }
        }
    }

    let t0 = Instant::now();
    let source = match source {
        Some(s) => s,
        // The generated RTL, built with the generator's waivers.
        None => match sbrp_hdl::generate_verilog(&p) {
            Ok(text) => {
                opts.waivers = Some(sbrp_hdl::VERILATOR_WAIVERS.into());
                RtlSource::Verilog {
                    text,
                    name: "sbrp_pb.v".into(),
                }
            }
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        },
    };
    let mut rtl = match VerilatedPb::build(&p, source, &opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let r = rtl.build_report();
    println!(
        "model {} ({}): {} in {:.2} s",
        p.tag(),
        r.source,
        if r.cache_hit { "cache hit" } else { "built" },
        t0.elapsed().as_secs_f64()
    );

    // Pre-generated raw stimulus (the fuzz suite's), so that only stepping
    // is timed; a reset now and then keeps the unit from locking up in stalls.
    let mut raw = RawStimulus::new(&p, 0x5eed);
    let stim: Vec<PbIn> = (0..(1 << 16))
        .map(|k| {
            let mut i = raw.next_input();
            i.rst |= k % 4096 == 0;
            i
        })
        .collect();

    let mut sink = 0u64;
    let t = Instant::now();
    for c in 0..cycles {
        let o = rtl.step(&stim[(c as usize) & (stim.len() - 1)]);
        sink = sink.wrapping_add(o.flush_line as u64 ^ o.stall ^ o.obs_head as u64);
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{cycles} cycles in {secs:.2} s: {:.3} M cycles/s ({:.0} ns/cycle) [checksum {sink:x}]",
        cycles as f64 / secs / 1e6,
        secs * 1e9 / cycles as f64
    );
    ExitCode::SUCCESS
}
