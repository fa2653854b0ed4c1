//! The persistence domain behind the SMs (`docs/trace-format.md`, "Front
//! end"): accepts flushes and acknowledges them. Today's model is a fixed
//! latency, in-order queue per SM; the GPU model puts L2, NVM and PCIe
//! queues behind the same trait.

use std::collections::VecDeque;

/// Where an SM's flushes go.
pub trait PersistenceDomain {
    /// Flush `id` leaves the SM at cycle `now`.
    fn accept(&mut self, id: u64, now: u64);
    /// The flush acknowledged at `now`, if any (at most one per cycle).
    fn ack(&mut self, now: u64) -> Option<u64>;
    /// Flushes accepted and not yet acknowledged.
    fn in_flight(&self) -> usize;
}

/// Every flush is acknowledged `latency` cycles after it left, one per
/// cycle, in flush order (so writes of one line stay in order).
#[derive(Clone, Debug)]
pub struct FixedLatency {
    latency: u64,
    /// (due cycle, flush id)
    queue: VecDeque<(u64, u64)>,
}

impl FixedLatency {
    pub fn new(latency: u32) -> FixedLatency {
        FixedLatency {
            latency: latency as u64,
            queue: VecDeque::new(),
        }
    }
}

impl PersistenceDomain for FixedLatency {
    fn accept(&mut self, id: u64, now: u64) {
        self.queue.push_back((now + self.latency, id));
    }

    fn ack(&mut self, now: u64) -> Option<u64> {
        match self.queue.front() {
            Some(&(due, id)) if due <= now => {
                self.queue.pop_front();
                Some(id)
            }
            _ => None,
        }
    }

    fn in_flight(&self) -> usize {
        self.queue.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acks_in_order_one_per_cycle_after_the_latency() {
        let mut d = FixedLatency::new(3);
        d.accept(7, 0);
        d.accept(8, 0);
        assert_eq!(d.ack(2), None);
        assert_eq!((d.ack(3), d.in_flight()), (Some(7), 1));
        assert_eq!(d.ack(3), Some(8), "due, and asked again");
        assert_eq!(d.in_flight(), 0);
    }
}
