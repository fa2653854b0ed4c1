//! `sbrp verilog`: the unit's RTL as Verilog (`hdl`), with the parameters and
//! the storage table (`docs/microarch.md` §8) printed beside it.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use sbrp_iface::slices::Slices;
use sbrp_iface::{storage_table, storage_totals, PbParams};

use crate::args::{print_params, ParamArgs};
use crate::Verdict;

#[derive(Args)]
pub struct VerilogArgs {
    #[command(flatten)]
    params: ParamArgs,
    /// Output directory (created if missing); the file is DIR/sbrp_pb.v.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Register slices at the boundary, stages on the request, response
    /// and ack paths, each 0..2 (docs/microarch.md §2.1).
    #[arg(long, value_name = "REQ,RSP,ACK", default_value = "0,0,0")]
    slices: Slices,
}

pub fn run(a: &VerilogArgs) -> Result<Verdict> {
    let p = a.params.params()?;
    // Generate before touching the file system: a refused parameter writes nothing.
    let text = sbrp_hdl::generate_verilog_sliced(&p, a.slices)?;
    std::fs::create_dir_all(&a.out)
        .with_context(|| format!("cannot create {}", a.out.display()))?;
    let path = a.out.join("sbrp_pb.v");
    sbrp_tools::write_atomic(&path, text.as_bytes())?;
    print_params(&p);
    if !a.slices.is_none() {
        println!(
            "register slices {} (REQ,RSP,ACK): responses {} cycles after the request",
            a.slices,
            a.slices.rsp_latency()
        );
    }
    print_storage(&p);
    println!(
        "wrote {} ({} lines, top module sbrp_pb)",
        path.display(),
        text.lines().count()
    );
    Ok(Verdict::Pass)
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
