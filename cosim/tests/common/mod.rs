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
    /// The registered outputs: the state.
    o: PbOut,
}

impl FixtureModel {
    /// The state after a reset (the Verilog registers start at 0 too).
    pub fn new(p: PbParams) -> Self {
        FixtureModel {
            p,
            o: derive(PbOut::default(), &p),
        }
    }
}

/// The outputs that are functions of the output registers.
fn derive(mut n: PbOut, p: &PbParams) -> PbOut {
    n.stall = n.obs_odm;
    n.idle = n.obs_head == 0;
    n.obs_fsm = !n.obs_odm & p.warp_mask();
    n.obs_drain = n.obs_head & 1 == 1;
    n.obs_epoch = (n.obs_head & 3) as u8;
    n
}

impl PbUnit for FixtureModel {
    fn params(&self) -> &PbParams {
        &self.p
    }
    fn step(&mut self, i: &PbIn) -> PbOut {
        let p = self.p;
        let imask = p.entries - 1;
        let o = self.o;
        if i.rst {
            self.o = derive(PbOut::default(), &p);
            return o;
        }
        let line = i.req_line & (p.lines - 1);
        let warp = i.req_warp & 63;
        let taken = i.req_valid && o.req_ready;
        let warp_ok = (warp as u32) < p.warps;
        let mut n = o;
        n.req_ready = true;
        n.obs_head = (o.obs_head + 1) & imask;
        n.rsp_valid = taken;
        n.rsp_warp = if taken { warp } else { 0 };
        n.rsp_kind = if taken { i.req_op & 3 } else { 0 };
        n.rsp_idx = match (taken, i.req_pbv) {
            (false, _) => 0,
            (true, true) => i.req_pbidx & imask,
            (true, false) => o.obs_tail,
        };
        if taken {
            n.obs_tail = (o.obs_tail + 1) & imask;
            if warp_ok {
                n.obs_odm |= 1u64 << warp;
            }
            n.obs_edm = line as u64;
        }
        if i.ack_count & 7 != 0 {
            n.flush_valid = true;
            n.flush_line = line;
            n.flush_warps = o.obs_odm;
            n.flush_evict = i.req_op & 1 == 1;
            n.flush_epoch = i.ack_epoch & 3;
        } else if i.flush_ready {
            n.flush_valid = false;
        }
        n.inv_req = i.inv_done;
        n.error |= ((taken && !warp_ok) as u8) << 1 | (i.ack_count & 7 == 7) as u8;
        n.obs_actr = (o.obs_actr + (i.ack_count & 7) as u32) & p.actr_max();
        n.obs_full = i.drain_all;
        self.o = derive(n, &p);
        o
    }
    fn name(&self) -> &str {
        "fixture-model"
    }
}
