//! The `sbrp` command.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use sbrp_iface::{storage_table, storage_totals, FlushPolicy, PbParams};

#[derive(Parser)]
#[command(
    name = "sbrp",
    about = "Generator and verification bench for the SBRP persist buffer unit",
    version
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Emit the persist buffer RTL as Verilog (top module `sbrp_pb`) into DIR/sbrp_pb.v.
    Verilog {
        #[command(flatten)]
        params: ParamArgs,
        /// Output directory (created if missing); the file is DIR/sbrp_pb.v.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
}

/// Unit parameters shared by the subcommands.
#[derive(Args, Clone, Debug)]
struct ParamArgs {
    /// PB entries: a power of two from 16 to 512.
    #[arg(long, value_name = "N", default_value_t = 256)]
    entries: u32,
    /// Resident warps per SM: 4, 8, 16, 32 or 64.
    #[arg(long, value_name = "W", default_value_t = 32)]
    warps: u32,
    /// L1 cache lines: a power of two from --entries to 1024.
    #[arg(long, value_name = "L", default_value_t = 512)]
    lines: u32,
    /// Flush window: outstanding flushes allowed under the window policy (1 to 2^actr_bits - 1).
    #[arg(long, value_name = "K", default_value_t = 6)]
    window: u32,
    /// ACTR width in bits: 4 or 8.
    #[arg(long, value_name = "A", default_value_t = 8)]
    actr_bits: u32,
    /// Flush policy: window, eager or lazy.
    #[arg(long, value_name = "P", default_value = "window")]
    policy: String,
}

impl ParamArgs {
    fn params(&self) -> Result<PbParams> {
        let p = PbParams {
            entries: self.entries,
            warps: self.warps,
            lines: self.lines,
            actr_bits: self.actr_bits,
            window: self.window,
            policy: FlushPolicy::parse(&self.policy)?,
        };
        p.validate()?;
        Ok(p)
    }
}

fn print_params(p: &PbParams) {
    println!(
        "parameters: entries {} warps {} lines {} actr_bits {} window {} policy {}",
        p.entries, p.warps, p.lines, p.actr_bits, p.window, p.policy
    );
}

fn print_storage(p: &PbParams) {
    println!("storage (bits):");
    for r in storage_table(p) {
        let paper = r
            .paper_bits
            .map(|b| b.to_string())
            .unwrap_or_else(|| "-".into());
        println!(
            "  {:<40} {:>4} x {:>4} = {:>6}   paper {:>6}",
            r.item,
            r.bits_each,
            r.count,
            r.total(),
            paper
        );
    }
    let (ours, paper) = storage_totals(p);
    println!(
        "  {:<40} {:>20}   paper {:>6}  ({:.2} KiB vs {:.2} KiB)",
        "total",
        ours,
        paper,
        ours as f64 / 8192.0,
        paper as f64 / 8192.0
    );
}

fn cmd_verilog(args: &ParamArgs, out: &PathBuf) -> Result<()> {
    let p = args.params()?;
    // Generate before touching the file system: a refused parameter writes nothing.
    let text = sbrp_hdl::generate_verilog(&p)?;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let path = out.join("sbrp_pb.v");
    let tmp = out.join(".sbrp_pb.v.tmp");
    std::fs::write(&tmp, &text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, &path).with_context(|| format!("cannot write {}", path.display()))?;
    print_params(&p);
    print_storage(&p);
    println!(
        "wrote {} ({} lines, top module sbrp_pb)",
        path.display(),
        text.lines().count()
    );
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match &cli.cmd {
        Cmd::Verilog { params, out } => cmd_verilog(params, out),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sbrp: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
