//! Unit tests of the parser, the writer, the evaluator and the record.

use super::*;

#[test]
fn parses_every_operation_and_expectation() {
    let t = parse(
        "# c\nconfig pm_latency=10\n0.0 st.pm 0x100 7\n0.0 ld.pm 0x100\n0.1 st.vol 4\n0.1 ld.vol 4\n\
         0.0 ofence\n0.0 dfence\n1.2 pacq.block f\n1.2 prel.dev f_2\n0.0 bar\n0.0 delay 3\n\
         expect stall 0.0\nexpect nostall 0.1\nexpect order 0x100 0x200\n\
         expect forbid 0x200=2 without 0x100=1\nexpect occurs 1=1 without 2=2\n\
         expect resume 0.0 after 0x100=7 within 2\nexpect ldmiss 1.0 0x40\nexpect alldurable\n\
         expect flushes 0x100 1\nexpect maxactr 6\nexpect early 0x200 before 0x100=1\nexpect pmo\n",
        "t",
    )
    .unwrap();
    assert_eq!(t.ops(), 10);
    assert_eq!(t.expects.len(), 12);
    assert_eq!(t.expects[11].what, Expect::Pmo);
    assert_eq!((t.sms(), t.warps_per_sm()), (2, 3));
    assert_eq!(
        t.programs[&WarpId { sm: 0, warp: 0 }][0],
        WarpOp::StPm {
            addr: 0x100,
            value: 7
        }
    );
    assert_eq!(t.first_line[&WarpId { sm: 1, warp: 2 }], 9);
    assert_eq!(t.config[0].line, 2);
}

#[test]
fn errors_name_file_line_and_expectation() {
    let e = parse("0.0 st.pm 0x10\n0.0 stpm 0x10\n", "a.trace").unwrap_err();
    assert_eq!((e.file.as_str(), e.line), ("a.trace", 2));
    assert!(e.msg.contains("unknown operation `stpm`"), "{e}");
    assert!(e.to_string().starts_with("a.trace:2: "), "{e}");
    let e = parse("0.0 st.pm\n", "b").unwrap_err();
    assert!(e.msg.contains("expected an address"), "{e}");
    let e = parse("x st.pm 1\n", "b").unwrap_err();
    assert!(e.msg.contains("SM.WARP"), "{e}");
    let e = parse("0.70 ofence\n", "b").unwrap_err();
    assert!(e.msg.contains("out of range"), "{e}");
    let e = parse("expect forbid 1=1 with 2=2\n", "b").unwrap_err();
    assert!(e.msg.contains("`without`"), "{e}");
    let e = parse("0.0 ofence 3\n", "b").unwrap_err();
    assert!(e.msg.contains("unexpected `3`"), "{e}");
}

#[test]
fn out_of_range_counts_are_refused_not_truncated() {
    for (text, what) in [
        ("expect flushes 0x40 4294967297\n", "4294967297"),
        ("expect maxactr 4294967296\n", "4294967296"),
        (
            "0.0 ofence\nexpect resume 0.0 after 1=1 within 0x100000000\n",
            "0x100000000",
        ),
    ] {
        let e = parse(text, "n.trace").unwrap_err();
        assert!(
            e.msg.contains("out of range") && e.msg.contains(what),
            "{e}"
        );
        assert_eq!(e.file, "n.trace");
    }
    // The largest 32-bit count is accepted.
    let t = parse("expect flushes 0x40 4294967295\n", "n").unwrap();
    assert_eq!(t.expects[0].what, Expect::Flushes(0x40, u32::MAX));
}

#[test]
fn writer_and_parser_share_one_table_and_round_trip() {
    let ops = vec![
        WarpOp::StPm {
            addr: 0x40,
            value: 9,
        },
        WarpOp::LdPm { addr: 0x80 },
        WarpOp::StVol { addr: 4 },
        WarpOp::LdVol { addr: 8 },
        WarpOp::OFence,
        WarpOp::DFence,
        WarpOp::PAcq {
            scope: Scope::Block,
            flag: "a".into(),
        },
        WarpOp::PAcq {
            scope: Scope::Device,
            flag: "b".into(),
        },
        WarpOp::PRel {
            scope: Scope::Block,
            flag: "c".into(),
        },
        WarpOp::PRel {
            scope: Scope::Device,
            flag: "d_1".into(),
        },
        WarpOp::Barrier,
        WarpOp::Delay { cycles: 1_000_000 },
    ];
    // Every mnemonic of the table is written by exactly one op.
    for (m, k) in MNEMONICS {
        let op = ops.iter().find(|o| OpKind::of(o) == k).unwrap();
        assert!(write_op(op).starts_with(m), "{m}");
    }
    let mut t = Trace::default();
    t.programs.insert(WarpId { sm: 1, warp: 3 }, ops.clone());
    let back = parse(&to_text(&t, "test"), "rt").unwrap();
    assert_eq!(back.programs, t.programs);
}

fn op(sm: u32, warp: u32, seq: u32) -> OpRef {
    OpRef {
        warp: WarpId { sm, warp },
        seq,
        inst: 0,
    }
}

fn persist(o: OpRef, addr: u64, value: u64, cycle: u64) -> Event {
    Event::Persist {
        op: o,
        cell: Cell { addr, value },
        cycle,
    }
}

fn flush_durable(id: u64, sm: u32, cells: &[(u64, u64)], cycle: u64, done: u64) -> [Event; 2] {
    [
        Event::Flush {
            id,
            sm,
            line: cells[0].0 / 128 * 128,
            cells: cells
                .iter()
                .map(|&(addr, value)| Cell { addr, value })
                .collect(),
            evict: false,
            cycle,
            read_cycle: cycle,
        },
        Event::Durable { id, cycle: done },
    ]
}

/// SM 0 stores X=1 and releases at device scope; SM 1 acquires it and stores
/// X=2. The durable X is 2, or (negative control) a stale 1 written back.
fn lost_update(final_value: u64) -> Execution {
    let mut ex = Execution::new(128);
    ex.warps = vec![WarpId { sm: 0, warp: 0 }, WarpId { sm: 1, warp: 0 }];
    ex.flags = vec!["F".into()];
    ex.end = RunEnd::Finished;
    ex.events.push(persist(op(0, 0, 0), 0x40, 1, 1));
    ex.events.extend(flush_durable(0, 0, &[(0x40, 1)], 2, 10));
    ex.events.push(Event::Ordering {
        op: op(0, 0, 1),
        kind: OrderingOp::PRel(Scope::Device),
        flag: Some(0),
        cycle: 3,
    });
    ex.events.push(Event::Ordering {
        op: op(1, 0, 0),
        kind: OrderingOp::PAcq(Scope::Device),
        flag: Some(0),
        cycle: 12,
    });
    ex.events.push(Event::Match {
        acq: op(1, 0, 0),
        acq_scope: Scope::Device,
        rel: op(0, 0, 1),
        rel_scope: Scope::Device,
        cycle: 12,
    });
    ex.events.push(persist(op(1, 0, 1), 0x40, 2, 14));
    ex.events.extend(flush_durable(1, 1, &[(0x40, 2)], 15, 20));
    if final_value != 2 {
        ex.events
            .extend(flush_durable(2, 0, &[(0x40, final_value)], 21, 30));
    }
    ex
}

fn alldurable() -> Vec<Expectation> {
    vec![Expectation {
        line: 7,
        what: Expect::AllDurable,
    }]
}

#[test]
fn alldurable_accepts_the_last_store_across_sms() {
    assert_eq!(evaluate(&alldurable(), &lost_update(2)), vec![]);
}

#[test]
fn alldurable_reports_a_stale_final_value() {
    let f = evaluate(&alldurable(), &lost_update(1));
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].line, 7);
    assert!(f[0].message.contains("0x40=1, expected 2"), "{}", f[0]);
}

#[test]
fn alldurable_accepts_either_racing_store_and_needs_device_scope_across_sms() {
    // The same execution with block scope on both sides: nothing orders the
    // SMs, so the late write-back of 1 is a legal final value.
    let mut ex = lost_update(1);
    for e in &mut ex.events {
        if let Event::Match {
            acq_scope,
            rel_scope,
            ..
        } = e
        {
            *acq_scope = Scope::Block;
            *rel_scope = Scope::Block;
        }
    }
    assert_eq!(evaluate(&alldurable(), &ex), vec![]);
    // A store that never became durable, and an unfinished run.
    let mut ex = lost_update(2);
    ex.events.push(persist(op(1, 0, 2), 0x44, 5, 40));
    ex.end = RunEnd::Cut;
    let f = evaluate(&alldurable(), &ex);
    assert_eq!(f.len(), 2, "{f:?}");
    assert!(f[0].message.contains("did not finish"));
    assert!(
        f[1].message.contains("never became durable, first: 0x44"),
        "{}",
        f[1]
    );
}

#[test]
fn forbid_and_occurs_replay_durability_by_cycle() {
    let ex = lost_update(1);
    let e = |what| Expectation { line: 1, what };
    let c = |addr, value| Cell { addr, value };
    // 0x40=2 durable at 20 while 0x40 is not 1: occurs; forbidding it fails.
    let f = evaluate(
        &[
            e(Expect::Occurs(c(0x40, 2), c(0x40, 1))),
            e(Expect::Forbid(c(0x40, 2), c(0x40, 1))),
            e(Expect::Occurs(c(0x40, 3), c(0x40, 1))),
        ],
        &ex,
    );
    assert_eq!(f.len(), 2, "{f:?}");
    assert!(f[0].message.contains("at cycle 20"), "{}", f[0]);
    assert!(f[1].message.contains("never occurred"), "{}", f[1]);
}

#[test]
fn stall_resume_flush_and_load_expectations() {
    let mut ex = lost_update(2);
    let w = WarpId { sm: 0, warp: 0 };
    ex.events.push(Event::StallBegin { warp: w, cycle: 3 });
    ex.events.push(Event::StallEnd { warp: w, cycle: 11 });
    ex.events.push(Event::Load {
        op: op(1, 0, 2),
        addr: 0x80,
        hit: false,
        cycle: 30,
    });
    ex.actr_peak = vec![1, 2];
    let e = |what| Expectation { line: 2, what };
    let c = Cell {
        addr: 0x40,
        value: 1,
    };
    let ok = [
        e(Expect::Stall(w)),
        e(Expect::NoStall(WarpId { sm: 1, warp: 0 })),
        e(Expect::Resume(w, c, 1)),
        e(Expect::LoadMiss(WarpId { sm: 1, warp: 0 }, 0x80)),
        e(Expect::Flushes(0x44, 2)),
        e(Expect::MaxActr(2)),
        e(Expect::Early(
            0x40,
            Cell {
                addr: 0x40,
                value: 2,
            },
        )),
    ];
    assert_eq!(evaluate(&ok, &ex), vec![]);
    let bad = [
        e(Expect::NoStall(w)),
        e(Expect::Stall(WarpId { sm: 3, warp: 0 })),
        e(Expect::Resume(w, c, 0)),
        e(Expect::Flushes(0x40, 1)),
        e(Expect::MaxActr(1)),
        e(Expect::Order(0x40, 0x1000)),
    ];
    let f = evaluate(&bad, &ex);
    assert_eq!(f.len(), bad.len(), "{f:?}");
    assert!(f[0].message.contains("cycles 3-11"), "{}", f[0]);
    assert!(f[5].message.contains("at never"), "{}", f[5]);
}

#[test]
fn execution_record_round_trips_as_json_with_version() {
    let ex = lost_update(1);
    let json = serde_json::to_string(&ex).unwrap();
    assert!(json.contains("\"format\":\"sbrp-execution\""));
    let back: Execution = serde_json::from_str(&json).unwrap();
    assert_eq!(back, ex);
    back.validate().unwrap();
    let mut old = back;
    old.version = 1;
    assert!(old.validate().is_err());
}

fn ordering(o: OpRef, cycle: u64) -> Event {
    Event::Ordering {
        op: o,
        kind: OrderingOp::OFence,
        flag: None,
        cycle,
    }
}

/// One warp: X=1 (op 0), oFence (op 1), Y=2 (op 2), each flushed alone;
/// X durable at `x_done`, Y at `y_done`.
fn fenced_pair(x_done: Option<u64>, y_done: u64) -> Execution {
    let mut ex = Execution::new(128);
    ex.warps = vec![WarpId { sm: 0, warp: 0 }];
    ex.end = RunEnd::Finished;
    ex.events.push(persist(op(0, 0, 0), 0x40, 1, 1));
    ex.events.push(ordering(op(0, 0, 1), 2));
    ex.events.push(persist(op(0, 0, 2), 0x1000, 2, 3));
    let [f, d] = flush_durable(0, 0, &[(0x40, 1)], 4, x_done.unwrap_or(0));
    ex.events.push(f);
    if x_done.is_some() {
        ex.events.push(d);
    }
    ex.events
        .extend(flush_durable(1, 0, &[(0x1000, 2)], 5, y_done));
    ex.events.sort_by_key(|e| match e {
        Event::Durable { cycle, .. } | Event::Flush { cycle, .. } => *cycle,
        Event::Persist { cycle, .. } | Event::Ordering { cycle, .. } => *cycle,
        _ => 0,
    });
    ex
}

#[test]
fn pmo_holds_when_the_store_after_the_fence_is_durable_no_earlier() {
    let pmo = [Expectation {
        line: 7,
        what: Expect::Pmo,
    }];
    assert_eq!(evaluate(&pmo, &fenced_pair(Some(20), 30)), vec![]);
    assert_eq!(evaluate(&pmo, &fenced_pair(Some(20), 20)), vec![]);
    let f = evaluate(&pmo, &fenced_pair(Some(40), 30));
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(
        f[0].message.contains(
            "op 2 [0x1000]=2 (durable at cycle 30) is durable before warp 0.0#0 op 0 [0x40]=1"
        ),
        "{}",
        f[0]
    );
    // The store before the fence never durable, the one after it durable.
    let f = evaluate(&pmo, &fenced_pair(None, 30));
    assert!(f[0].message.contains("(durable never)"), "{}", f[0]);
}

#[test]
fn pmo_lets_a_later_store_to_the_same_address_carry_an_earlier_one() {
    // X=1; oFence; X=2; one flush (read after both) carries X=2: X=1 is
    // moot, not lost. Y=3 after a second fence is durable after it.
    let mut ex = Execution::new(128);
    ex.warps = vec![WarpId { sm: 0, warp: 0 }];
    ex.end = RunEnd::Finished;
    ex.events.push(persist(op(0, 0, 0), 0x40, 1, 1));
    ex.events.push(ordering(op(0, 0, 1), 2));
    ex.events.push(persist(op(0, 0, 2), 0x40, 2, 3));
    ex.events.push(ordering(op(0, 0, 3), 4));
    ex.events.extend(flush_durable(0, 0, &[(0x40, 2)], 5, 9));
    ex.events.push(persist(op(0, 0, 4), 0x2000, 3, 10));
    ex.events
        .extend(flush_durable(1, 0, &[(0x2000, 3)], 11, 12));
    let pmo = [Expectation {
        line: 1,
        what: Expect::Pmo,
    }];
    assert_eq!(evaluate(&pmo, &ex), vec![]);
    // An eviction flush whose words were read before the store does not carry it.
    let mut ev = ex.clone();
    for e in &mut ev.events {
        if let Event::Flush {
            id: 0, read_cycle, ..
        } = e
        {
            *read_cycle = 2;
        }
    }
    let f = evaluate(&pmo, &ev);
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(f[0].message.contains("op 4 [0x2000]=3"), "{}", f[0]);
}
