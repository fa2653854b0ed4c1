//! Shared by the integration tests: the fixture and a Rust model of it.
#![allow(dead_code)]

use std::path::PathBuf;

use sbrp_iface::{PbIn, PbOut, PbParams, PbUnit};

/// tests/fixtures/counter_pb.v: the ports of `sbrp_pb`, trivial behaviour.
pub fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("fixtures")
        .join("counter_pb.v")
}

/// Parameters with the widest ports (W 64, L 1024, N 512) and the verilator
/// arguments that size the fixture for them.
pub fn wide() -> (PbParams, Vec<String>) {
    let p = PbParams {
        entries: 512,
        warps: 64,
        lines: 1024,
        ..PbParams::default()
    };
    let args = ["-GW=64", "-GLW=10", "-GIW=9", "-GA=8"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    (p, args)
}

/// What counter_pb.v does (see its header), cycle by cycle.
pub struct FixtureModel {
    pub p: PbParams,
    cycles: u32,
    accepted: u32,
    odm: u64,
    last_line: u32,
    acks: u32,
    prev_drain: bool,
}

impl FixtureModel {
    /// The state after a reset (the Verilog registers start at 0 too).
    pub fn new(p: PbParams) -> Self {
        FixtureModel {
            p,
            cycles: 0,
            accepted: 0,
            odm: 0,
            last_line: 0,
            acks: 0,
            prev_drain: false,
        }
    }
}

impl PbUnit for FixtureModel {
    fn params(&self) -> &PbParams {
        &self.p
    }
    fn step(&mut self, i: &PbIn) -> PbOut {
        let p = self.p;
        let imask = p.entries - 1;
        let line = i.req_line & (p.lines - 1);
        let warp = i.req_warp & 63;
        let op = i.req_op & 7;
        let accept = i.req_valid && !i.rst && op != 7 && (warp as u32) < p.warps;
        let flush = i.ack && !i.rst;
        let out = PbOut {
            req_ready: accept,
            req_wait: i.req_valid && !i.rst && op == 7,
            flush_valid: flush,
            flush_line: if flush { line } else { 0 },
            flush_warps: if flush { self.odm } else { 0 },
            flush_evict: flush && op & 1 == 1,
            inv_pm: i.drain_all && !i.rst,
            stall: self.odm,
            idle: self.cycles == 0,
            obs_odm: self.odm,
            obs_edm: self.last_line as u64,
            obs_fsm: !self.odm & p.warp_mask(),
            obs_actr: self.acks,
            obs_head: self.cycles,
            obs_tail: self.accepted,
            obs_full: self.prev_drain,
            obs_drain: self.cycles & 1 == 1,
        };
        if i.rst {
            *self = FixtureModel::new(p);
        } else {
            self.cycles = (self.cycles + 1) & imask;
            if accept {
                self.accepted = (self.accepted + 1) & imask;
                self.odm |= 1u64 << warp;
                self.last_line = line;
            }
            if i.ack {
                self.acks = (self.acks + 1) & p.actr_max();
            }
            self.prev_drain = i.drain_all;
        }
        out
    }
    fn name(&self) -> &str {
        "fixture-model"
    }
}
