//! The persistence domain behind each SM (`docs/trace-format.md`,
//! "Persistence domains"; `docs/microarch.md` §2, flush/ack and interface
//! requirement 4): it takes flushes from the L1 write-back path
//! (`flush_ready`), makes them durable, and acknowledges them as counts per
//! epoch (`ack_count`, `ack_epoch`). Two domains: a fixed, in-order one, and
//! a hostile one (random latency, out-of-order bursts, back-pressure) that
//! still keeps writes of one line in order, and asserts it.

use std::collections::{HashMap, VecDeque};

use sbrp_iface::consts::ACKS_MAX;
use sbrp_iface::stimulus::Rng;

/// A flush the L1 took from the unit's FIFO.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Taken {
    /// Flush id of the execution record.
    pub id: u64,
    /// Line address (the unit of interface requirement 4).
    pub line: u64,
    /// `flush_epoch`: its acknowledgement carries it back.
    pub epoch: u8,
}

/// What a domain does in one cycle.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tick {
    /// Flushes durable from this cycle on, in the order they became durable.
    pub durable: Vec<u64>,
    /// Acknowledgements presented this cycle: (count 0..7, epoch).
    pub ack: (u8, u8),
}

/// Where an SM's flushes go.
pub trait PersistenceDomain {
    /// `flush_ready` for cycle `now` (decided before the unit's outputs are seen).
    fn flush_ready(&mut self, now: u64) -> bool;
    /// A flush taken at `now`.
    fn accept(&mut self, f: Taken, now: u64);
    /// Cycle `now`: durability and the acknowledgements to present (into `t`).
    fn tick(&mut self, now: u64, t: &mut Tick);
    /// Cycles the L1 takes to answer an invalidation request.
    fn inv_delay(&mut self) -> u64;
    /// Flushes taken and not yet acknowledged.
    fn in_flight(&self) -> usize;
    /// The first breach of interface requirement 4, if any (a bench bug).
    fn violation(&self) -> Option<&str>;
}

/// Interface requirement 4 as an assertion: per line, the flushes taken and
/// not yet durable, in take order; a flush may become durable only when
/// every earlier flush of its line has.
#[derive(Clone, Debug, Default)]
struct LineOrder {
    open: HashMap<u64, VecDeque<u64>>,
    violation: Option<String>,
}

impl LineOrder {
    fn taken(&mut self, f: &Taken) {
        self.open.entry(f.line).or_default().push_back(f.id);
    }
    fn durable(&mut self, line: u64, id: u64, now: u64) {
        let q = self.open.entry(line).or_default();
        if q.front() == Some(&id) {
            q.pop_front();
            if q.is_empty() {
                self.open.remove(&line);
            }
        } else if self.violation.is_none() {
            self.violation = Some(format!(
                "persistence domain: flush {id} of line {line:#x} durable at cycle {now} before the line's earlier flush {:?} (interface requirement 4)",
                q.front()
            ));
        }
    }
}

/// Every flush is durable and acknowledged `latency` cycles after it was
/// taken, in take order; the acks of one cycle are those due, up to 7, of
/// the oldest's epoch (the port carries one epoch per cycle). Always ready.
#[derive(Clone, Debug)]
pub struct FixedLatency {
    latency: u64,
    /// (due cycle, flush)
    queue: VecDeque<(u64, Taken)>,
    order: LineOrder,
}

impl FixedLatency {
    pub fn new(latency: u32) -> FixedLatency {
        FixedLatency {
            latency: latency as u64,
            queue: VecDeque::new(),
            order: LineOrder::default(),
        }
    }
}

impl PersistenceDomain for FixedLatency {
    fn flush_ready(&mut self, _now: u64) -> bool {
        true
    }

    fn accept(&mut self, f: Taken, now: u64) {
        self.order.taken(&f);
        self.queue.push_back((now + self.latency, f));
    }

    fn tick(&mut self, now: u64, t: &mut Tick) {
        t.durable.clear();
        t.ack = (0, 0);
        let Some(&(_, first)) = self.queue.front() else {
            return;
        };
        while let Some(&(due, f)) = self.queue.front() {
            if due > now || f.epoch != first.epoch || t.ack.0 as u32 == ACKS_MAX {
                break;
            }
            self.queue.pop_front();
            self.order.durable(f.line, f.id, now);
            t.durable.push(f.id);
            t.ack = (t.ack.0 + 1, f.epoch);
        }
    }

    fn inv_delay(&mut self) -> u64 {
        0
    }

    fn in_flight(&self) -> usize {
        self.queue.len()
    }

    fn violation(&self) -> Option<&str> {
        self.order.violation.as_deref()
    }
}

/// The hostile domain: each flush gets a random latency of 1..=2000 cycles
/// (three in four drawn from 1..=200, so that runs stay short, the rest from
/// the whole range), delayed only as far as the line's earlier flush
/// (interface requirement 4). Acks follow durability in any order: in a
/// cycle, with probability 3/4, up to 7 durable flushes of one epoch (that
/// of a random durable flush) are acknowledged, the rest wait. `flush_ready`
/// is low in random cycles and in holds of up to 60 cycles; invalidations
/// are answered after 0..40 cycles. Seeded: a run is reproducible.
#[derive(Clone, Debug)]
pub struct Hostile {
    rng: Rng,
    seq: u64,
    /// Flushes not yet durable: (due, take sequence, flush).
    waiting: Vec<(u64, u64, Taken)>,
    /// Due cycle of the latest flush of each line with one not yet durable.
    line_due: HashMap<u64, u64>,
    /// Durable, not yet acknowledged.
    unacked: Vec<Taken>,
    hold: u32,
    order: LineOrder,
}

/// Longest latency of the hostile domain.
pub const HOSTILE_MAX_LATENCY: u64 = 2000;

impl Hostile {
    pub fn new(seed: u64) -> Hostile {
        Hostile {
            rng: Rng::new(seed ^ 0x0D0_4A1E),
            seq: 0,
            waiting: vec![],
            line_due: HashMap::new(),
            unacked: vec![],
            hold: 0,
            order: LineOrder::default(),
        }
    }
}

impl PersistenceDomain for Hostile {
    fn flush_ready(&mut self, _now: u64) -> bool {
        if self.hold > 0 {
            self.hold -= 1;
            return false;
        }
        if self.rng.chance(3) {
            self.hold = 1 + self.rng.below(60) as u32;
            return false;
        }
        self.rng.chance(75)
    }

    fn accept(&mut self, f: Taken, now: u64) {
        self.order.taken(&f);
        let range = if self.rng.chance(25) {
            HOSTILE_MAX_LATENCY
        } else {
            200
        };
        let mut due = now + 1 + self.rng.below(range);
        // A later flush of a line is durable no earlier than the earlier one.
        if let Some(&d) = self.line_due.get(&f.line) {
            due = due.max(d);
        }
        self.line_due.insert(f.line, due);
        self.waiting.push((due, self.seq, f));
        self.seq += 1;
    }

    fn tick(&mut self, now: u64, t: &mut Tick) {
        t.durable.clear();
        t.ack = (0, 0);
        if self.waiting.iter().any(|w| w.0 <= now) {
            let mut done: Vec<(u64, u64, Taken)> = vec![];
            self.waiting.retain(|w| {
                if w.0 <= now {
                    done.push(*w);
                    false
                } else {
                    true
                }
            });
            // Same due cycle: take order (a line's flushes stay in order).
            done.sort_by_key(|w| (w.0, w.1));
            for (due, _, f) in done {
                self.order.durable(f.line, f.id, now);
                if self.line_due.get(&f.line) == Some(&due)
                    && !self.waiting.iter().any(|w| w.2.line == f.line)
                {
                    self.line_due.remove(&f.line);
                }
                t.durable.push(f.id);
                self.unacked.push(f);
            }
        }
        if self.unacked.is_empty() || self.rng.chance(25) {
            return;
        }
        let e = self.unacked[self.rng.below(self.unacked.len() as u64) as usize].epoch;
        let mut n = 0u8;
        self.unacked.retain(|f| {
            if f.epoch == e && (n as u32) < ACKS_MAX {
                n += 1;
                false
            } else {
                true
            }
        });
        t.ack = (n, e);
    }

    fn inv_delay(&mut self) -> u64 {
        self.rng.below(40)
    }

    fn in_flight(&self) -> usize {
        self.waiting.len() + self.unacked.len()
    }

    fn violation(&self) -> Option<&str> {
        self.order.violation.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taken(id: u64, line: u64, epoch: u8) -> Taken {
        Taken { id, line, epoch }
    }

    #[test]
    fn fixed_acks_in_order_grouped_by_epoch_after_the_latency() {
        let mut d = FixedLatency::new(3);
        let mut t = Tick::default();
        d.accept(taken(7, 0x80, 0), 0);
        d.accept(taken(8, 0x100, 0), 0);
        d.accept(taken(9, 0x80, 1), 0);
        d.tick(2, &mut t);
        assert_eq!((t.ack, t.durable.len()), ((0, 0), 0));
        d.tick(3, &mut t);
        assert_eq!((t.ack, t.durable.clone()), ((2, 0), vec![7, 8]));
        d.tick(3, &mut t);
        assert_eq!(
            (t.ack, t.durable.clone()),
            ((1, 1), vec![9]),
            "next epoch, next call"
        );
        assert_eq!(d.in_flight(), 0);
        assert!(d.violation().is_none());
    }

    #[test]
    fn hostile_reorders_lines_but_keeps_each_line_in_order() {
        let mut d = Hostile::new(5);
        let mut t = Tick::default();
        let mut durable = vec![];
        let mut acked = 0u32;
        let mut id = 0;
        let mut max_burst = 0;
        let mut ready = 0;
        for now in 0..20_000u64 {
            ready += d.flush_ready(now) as u32;
            if now < 5_000 && now % 3 == 0 {
                d.accept(taken(id, 0x80 * (id % 5), (id / 10 % 4) as u8), now);
                id += 1;
            }
            d.tick(now, &mut t);
            durable.extend(t.durable.iter().copied());
            acked += t.ack.0 as u32;
            max_burst = max_burst.max(t.ack.0);
        }
        assert_eq!(acked as u64, id, "every flush acknowledged");
        assert_eq!(d.in_flight(), 0);
        assert!(d.violation().is_none());
        assert!(max_burst > 1, "bursts");
        assert!(ready > 5_000 && ready < 19_000, "back-pressure: {ready}");
        // Out of order overall, in order per line.
        assert!(durable.windows(2).any(|w| w[0] > w[1]));
        for line in 0..5 {
            let of_line: Vec<u64> = durable.iter().copied().filter(|i| i % 5 == line).collect();
            assert!(of_line.windows(2).all(|w| w[0] < w[1]), "line {line}");
        }
    }

    #[test]
    fn a_line_breach_is_reported() {
        let mut o = LineOrder::default();
        o.taken(&taken(1, 0x80, 0));
        o.taken(&taken(2, 0x80, 0));
        o.durable(0x80, 2, 10);
        assert!(o.violation.unwrap().contains("flush 2 of line 0x80"));
    }
}
