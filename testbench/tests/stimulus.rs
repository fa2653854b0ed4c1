//! Stimulus generators of the benchmarks: the front end's recorded inputs.

use sbrp_iface::{Op, PbParams};
use sbrp_testbench::suites::workload_stimulus;

#[test]
fn workload_stimulus_is_a_reproducible_front_end_stream() {
    let p = PbParams::default();
    let s = workload_stimulus(&p, 3, 40_000).unwrap();
    assert_eq!(s.len(), 40_000);
    // Each recorded run starts with the unit's reset.
    assert!(s[0].rst, "the stream starts with a reset");
    let reqs: Vec<_> = s.iter().filter(|i| i.req_valid).collect();
    assert!(!reqs.is_empty() && reqs.len() < s.len());
    for op in [Op::Store, Op::OFence, Op::AcqBlock, Op::RelBlock] {
        assert!(
            reqs.iter().any(|i| i.req_op == op as u8),
            "no {op:?} request in the stream"
        );
    }
    assert!(reqs.iter().all(|i| (i.req_warp as u32) < p.warps));
    assert!(s.iter().any(|i| i.ack_count > 0), "no persistence acks");
    assert_eq!(
        s,
        workload_stimulus(&p, 3, 40_000).unwrap(),
        "same seed, same stream"
    );
    assert_ne!(s, workload_stimulus(&p, 4, 40_000).unwrap(), "seed is used");
}
