//! The generated Verilog passes Verilator's lint (`-Wall`, with the waivers of
//! `constraints/lint/verilator_waivers.vlt`) and yosys' generic synthesis with
//! `check -assert`, for entries {16, 64, 256, 512} x warps {32, 64}
//! (lines = max(512, entries)).
//!
//! A second test lints (Verilator only, it is fast) every warp count, both
//! ACTR widths, the smallest and largest entries and lines, and each policy,
//! and verilates each of them (`--cc -Wall`, C++ not compiled) as the
//! cosimulation build does. No UNOPTFLAT (a combinational cycle between
//! always blocks) is waived: the wiring is split into one always per
//! assignment (`hdl/src/pb.rs`); written as one block it raises UNOPTFLAT.
//!
//! yosys is the slow part (minutes for 512 entries and 64 warps: its memories
//! have two synchronous read ports and a per-bit write mask): the configurations run on two
//! threads, and each one's time is printed.

use sbrp_iface::PbParams;
use sbrp_tools::{error_lines, LogFile, Scratch, Tool};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

const INSTALL_HINT: &str = "scripts/test.sh installs it (apt-get install verilator yosys)";

fn verilator() -> Tool {
    Tool::new("verilator", INSTALL_HINT)
}

fn yosys() -> Tool {
    Tool::new("yosys", INSTALL_HINT)
}

fn configs() -> Vec<PbParams> {
    let mut v = vec![];
    for entries in [16, 64, 256, 512] {
        for warps in [32, 64] {
            v.push(PbParams {
                entries,
                warps,
                lines: entries.max(512),
                ..PbParams::default()
            });
        }
    }
    v
}

/// The waivers the library exports (`sbrp_hdl::VERILATOR_WAIVERS`), as the
/// file Verilator reads, in `dir`.
fn waiver_file(dir: &Path) -> PathBuf {
    let f = dir.join("verilator_waivers.vlt");
    std::fs::write(&f, sbrp_hdl::VERILATOR_WAIVERS).expect("write the waiver file");
    f
}

/// Runs a tool: whether it succeeded and what it printed. A missing tool
/// fails the test at once, with the install hint.
fn run(tool: &Tool, args: &[&str]) -> (bool, String) {
    let mut cmd = tool.command();
    cmd.args(args);
    match tool.capture(&mut cmd, &tool.program.display().to_string(), LogFile::None) {
        Ok(c) => (c.success(), c.text),
        Err(e) => panic!("{e}"),
    }
}

/// A scratch directory for the Verilog of the test.
fn scratch(what: &str) -> Scratch {
    Scratch::new(what).expect("scratch directory")
}

fn write_verilog(p: &PbParams, base: &Path) -> PathBuf {
    let v = sbrp_hdl::generate_verilog(p).expect("allowed parameters");
    assert!(v.contains("module sbrp_pb("), "top module is sbrp_pb");
    assert!(
        !v.contains("module top"),
        "rust-hdl's `top` name is replaced"
    );
    assert!(!v.contains("initial"), "no initial blocks");
    let dir = base.join(p.tag());
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("sbrp_pb.v"), v).unwrap();
    dir
}

#[test]
fn verilog_lints_and_synthesizes_clean() {
    // Missing tools fail at once, with the hint.
    run(&verilator(), &["--version"]);
    run(&yosys(), &["-V"]);
    let scratch = scratch("hdl-verilog");
    let base = scratch.path();
    let waivers = waiver_file(base);
    let failures = Mutex::new(Vec::<String>::new());

    let dirs: Vec<(PbParams, PathBuf)> = configs()
        .into_iter()
        .map(|p| {
            let d = write_verilog(&p, base);
            (p, d)
        })
        .collect();

    for (p, dir) in &dirs {
        let t = Instant::now();
        let res = lint(p, &dir.join("sbrp_pb.v"), &waivers);
        eprintln!("verilator {}: {:.1} s", p.tag(), t.elapsed().as_secs_f64());
        if let Err(e) = res {
            failures.lock().unwrap().push(e);
        }
    }

    // yosys: biggest first, two at a time.
    let queue = Mutex::new(dirs.iter().collect::<Vec<_>>());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let Some((p, dir)) = queue.lock().unwrap().pop() else {
                    break;
                };
                let file = dir.join("sbrp_pb.v");
                let script = format!(
                    "read_verilog {}; synth -top sbrp_pb; check -assert",
                    file.display()
                );
                let t = Instant::now();
                let (ok, text) = run(&yosys(), &["-q", "-p", &script]);
                eprintln!("yosys {}: {:.1} s", p.tag(), t.elapsed().as_secs_f64());
                if !ok {
                    failures.lock().unwrap().push(format!(
                        "yosys synth/check failed for {}:\n{}",
                        p.tag(),
                        error_lines(&text)
                    ));
                } else if !text.trim().is_empty() {
                    eprintln!("yosys {} said:\n{}", p.tag(), text.trim());
                }
            });
        }
    });

    let failures = failures.into_inner().unwrap();
    assert_no_failures(&failures, scratch);
}

/// Fails with every message, keeping the Verilog of `scratch` for a look;
/// it is removed when all passed.
fn assert_no_failures(failures: &[String], scratch: Scratch) {
    if failures.is_empty() {
        return;
    }
    let kept = scratch.keep();
    panic!(
        "{}\n(Verilog kept in {})",
        failures.join("\n\n"),
        kept.display()
    );
}

fn lint(p: &PbParams, file: &Path, waivers: &Path) -> Result<(), String> {
    let (ok, text) = run(
        &verilator(),
        &[
            "--lint-only",
            "-Wall",
            waivers.to_str().unwrap(),
            file.to_str().unwrap(),
            "--top-module",
            "sbrp_pb",
        ],
    );
    if ok {
        Ok(())
    } else {
        Err(format!(
            "verilator lint failed for {}:\n{}",
            p.tag(),
            error_lines(&text)
        ))
    }
}

/// `verilator --cc -Wall` (no C++ compile): the whole front end of the
/// cosimulation build, scheduling included.
fn verilate(p: &PbParams, file: &Path, waivers: &Path) -> Result<(), String> {
    let obj = file.with_file_name("obj");
    let (ok, text) = run(
        &verilator(),
        &[
            "--cc",
            "-Wall",
            waivers.to_str().unwrap(),
            file.to_str().unwrap(),
            "--top-module",
            "sbrp_pb",
            "--Mdir",
            obj.to_str().unwrap(),
        ],
    );
    if ok {
        Ok(())
    } else {
        Err(format!(
            "verilator --cc failed for {}:\n{}",
            p.tag(),
            error_lines(&text)
        ))
    }
}

#[test]
fn verilog_lints_clean_across_parameter_sets() {
    use sbrp_iface::{
        FlushPolicy, ACTR_BITS_CHOICES, ENTRIES_MAX, ENTRIES_MIN, LINES_MAX, WARP_CHOICES,
    };
    run(&verilator(), &["--version"]);
    let scratch = scratch("hdl-lint");
    let waivers = waiver_file(scratch.path());
    let mut failures = vec![];
    let policies = [
        (1, FlushPolicy::Lazy),
        (6, FlushPolicy::Window),
        (15, FlushPolicy::Eager),
    ];
    let mut n = 0;
    for warps in WARP_CHOICES {
        for actr_bits in ACTR_BITS_CHOICES {
            for (entries, lines) in [
                (ENTRIES_MIN, ENTRIES_MIN),
                (ENTRIES_MIN, LINES_MAX),
                (ENTRIES_MAX, ENTRIES_MAX),
                (ENTRIES_MAX, LINES_MAX),
            ] {
                let (window, policy) = policies[n % policies.len()];
                n += 1;
                let p = PbParams {
                    entries,
                    warps,
                    lines,
                    actr_bits,
                    window,
                    policy,
                };
                let dir = write_verilog(&p, scratch.path());
                let file = dir.join("sbrp_pb.v");
                for res in [lint(&p, &file, &waivers), verilate(&p, &file, &waivers)] {
                    if let Err(e) = res {
                        failures.push(e);
                    }
                }
            }
        }
    }
    assert_no_failures(&failures, scratch);
}
