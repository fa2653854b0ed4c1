//! Tests of the reference model's read-only queries (`frozen`, `refuses`):
//! frozen steps change only the request pipeline. Split from `unit.rs`.

use super::*;
use sbrp_iface::stimulus::RawStimulus;

/// Everything but the request pipeline (`inq`, `r1`, `r2`) and the
/// response outputs.
fn core(m: &PbModel) -> Vec<u64> {
    let mut v = vec![];
    m.probe_fill(&mut v);
    v.extend(m.oq_n.iter().map(|&n| n as u64));
    v.extend(m.oq.iter().flatten().map(|&i| i as u64));
    v.extend(m.wait_idx.iter().map(|&i| i as u64));
    for f in &m.fifo {
        v.extend([f.line as u64, f.warps, f.evict as u64, f.epoch as u64]);
    }
    v.extend(m.fifo_line.iter().map(|&l| l as u64));
    v.extend([m.fifo_head as u64, m.ready as u64, m.err as u64]);
    v.extend([m.fsm, m.ep_edm_or, m.stall, m.ep_rel as u64]);
    let o = PbOut {
        rsp_valid: false,
        rsp_warp: 0,
        rsp_kind: 0,
        rsp_idx: 0,
        ..m.out
    };
    v.extend(format!("{o:?}").bytes().map(u64::from));
    v
}

/// A small unit that fills, stalls and wraps often.
fn small() -> PbParams {
    PbParams {
        entries: 16,
        warps: 4,
        lines: 16,
        actr_bits: 4,
        window: 2,
        policy: FlushPolicy::Window,
    }
}

/// `frozen` and `refuses` against `step`: whenever the model says it is
/// frozen for the coming inputs and refuses the request in `r2`, a step
/// changes nothing but the pipeline and answers replay; and a request it
/// does not refuse is indeed taken or waited (small unit, so that it
/// fills and stalls often).
#[test]
fn frozen_steps_change_only_the_pipeline() {
    let p = small();
    let (mut frozen, mut refused, mut taken) = (0, 0, 0);
    for seed in 0..8 {
        let mut m = PbModel::new(&p).unwrap();
        let mut stim = RawStimulus::new(&p, seed);
        for _ in 0..60_000 {
            let mut i = stim.next_input();
            // Quiet phases: no acknowledgement, no invalidation answer.
            if m.inq.ack_count == 0 && seed % 2 == 0 {
                i.ack_count = 0;
                i.inv_done = false;
            }
            let q = PbIn {
                rst: false,
                ack_count: 0,
                ack_epoch: 0,
                inv_done: false,
                ..i
            };
            let r2 = PbIn {
                req_valid: m.r2_valid,
                ..m.r2
            };
            if m.frozen(&q) && (r2.req_warp as u32) < p.warps {
                frozen += 1;
                let mut c = m.clone();
                c.step(&q);
                let rsp = c.out;
                if !r2.req_valid || m.refuses(&r2) {
                    refused += r2.req_valid as u32;
                    assert_eq!(core(&m), core(&c), "a frozen step changed the state");
                    if r2.req_valid {
                        assert_eq!(rsp.rsp_kind, RspKind::Replay as u8);
                    }
                } else {
                    taken += 1;
                    assert!(
                        rsp.rsp_kind != RspKind::Replay as u8 || core(&m) != core(&c),
                        "a request `refuses` takes was replayed with no effect"
                    );
                }
            }
            let o = m.step(&i);
            stim.observe(&i, &o);
        }
    }
    assert!(
        frozen > 1000 && refused > 100 && taken > 100,
        "{frozen} {refused} {taken}"
    );
}

/// Why mutant m092 of the mutation campaign (docs/hardware.md §5) is
/// equivalent: it changes `q1 < head` only when a warp's second ordering
/// entry `q1` is `head - 1` (odd head) in a cycle that retires the warp's
/// oldest one at the head; `head - 1` is live only in a full PB, and an
/// ordering entry is never the head of a full PB (it retires in its first
/// cycle there, and a PB that popped in the cycle before holds at most
/// N - 1 entries). Checked every cycle on raw and corners stimulus; both
/// halves of the condition occur often, never together.
#[test]
fn an_ordering_entry_is_never_the_head_of_a_full_pb() {
    use sbrp_iface::stimulus::Profile;
    let p = small();
    let (mut full, mut ord_head) = (0u64, 0u64);
    for (seed, profile) in [
        (1, Profile::Default),
        (2, Profile::Corners),
        (3, Profile::Corners),
    ] {
        let mut m = PbModel::new(&p).unwrap();
        let mut stim = RawStimulus::with_profile(&p, seed, profile);
        for _ in 0..200_000 {
            let i = stim.next_input();
            let o = m.step(&i);
            stim.observe(&i, &o);
            let head_ty = m.pb[m.head as usize].ty;
            let ordering = m.count > 0 && head_ty != ty::PERSIST && head_ty != ty::HOLE;
            assert!(!(m.full && ordering), "seed {seed}: full PB, ordering head");
            full += u64::from(m.full);
            ord_head += u64::from(ordering);
        }
    }
    assert!(full > 1_000 && ord_head > 1_000, "{full} {ord_head}");
}
