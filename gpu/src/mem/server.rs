//! The latency/bandwidth primitives of the memory system
//! (`docs/model-memory.md` §2, "Servers"): the event-free analytic FCFS
//! server, its order-free variant for responses (the calendar), and the
//! bounded queue that can stand in front of a server.
//!
//! Time inside the memory system is kept in fixed point: [`FP`] fractional
//! bits per core cycle (`Fine`), so fractional bandwidths (5.13 bytes per
//! cycle for a PM-near read channel) accumulate without drift and without
//! floating point in the hot path. Everything is integer arithmetic, so runs
//! are deterministic.

/// Fractional bits per core cycle.
pub const FP: u32 = 20;
/// One core cycle in fine units.
pub const CYCLE: u64 = 1 << FP;

/// Whole cycles to fine units.
#[inline]
pub fn fine(cycles: u64) -> u64 {
    cycles << FP
}

/// Fine units to whole cycles, rounding up (an event inside a cycle is
/// visible at the end of that cycle).
#[inline]
pub fn cycles_ceil(t: u64) -> u64 {
    (t + CYCLE - 1) >> FP
}

/// Cost of one byte, in fine units, at `bytes_per_cycle`.
pub fn cost_per_byte(bytes_per_cycle: f64) -> u64 {
    assert!(
        bytes_per_cycle > 0.0 && bytes_per_cycle.is_finite(),
        "a server needs a positive bandwidth, got {bytes_per_cycle} bytes/cycle"
    );
    ((CYCLE as f64) / bytes_per_cycle).round().max(1.0) as u64
}

/// Idle intervals a server remembers for requests that arrive out of order
/// (a power of two: they are kept in a ring).
const GAPS: usize = 8;

/// A FCFS bandwidth server with a fixed latency behind it.
///
/// `serve(arrival, bytes)`: `start = max(arrival, free_at)`,
/// `free_at = start + bytes * cost`, `done = free_at + latency`.
///
/// Requests are booked in send order, but their arrival times at a server
/// deep in the path are not always monotonic (an L2 hit's response reaches
/// the SM port before an earlier miss's). Booking such a request strictly
/// after `free_at` would make it wait for idle time that was reserved in the
/// future, so the server remembers up to [`GAPS`] idle intervals before
/// `free_at` and places a late-booked, early-arriving request in the first
/// one that holds it whole (non-preemptive). Intervals that end before the
/// current send time are dropped; when the list is full the shortest
/// interval is forgotten (treated as used): an approximation that can only
/// delay, never speed up, a request.
///
/// Zero-byte requests (control packets: read requests, write acks) use no
/// bandwidth and only pay the latency.
#[derive(Clone, Debug)]
pub struct Server {
    cost: u64,
    latency: u64,
    free_at: u64,
    /// Remembered idle intervals: a ring of `ngaps` from `head`.
    gaps: [(u64, u64); GAPS],
    head: usize,
    ngaps: usize,
    /// Requests served with a non-zero size.
    pub served: u64,
    /// Bytes served.
    pub bytes: u64,
    /// Sum of `start - arrival`, fine units.
    pub wait_total: u64,
    /// Largest `start - arrival`, fine units.
    pub wait_max: u64,
}

impl Server {
    /// A server moving `bytes_per_cycle` with `latency_cycles` after service.
    pub fn new(bytes_per_cycle: f64, latency_cycles: u64) -> Server {
        Server {
            cost: cost_per_byte(bytes_per_cycle),
            latency: fine(latency_cycles),
            free_at: 0,
            gaps: [(0, 0); GAPS],
            head: 0,
            ngaps: 0,
            served: 0,
            bytes: 0,
            wait_total: 0,
            wait_max: 0,
        }
    }

    /// Fine units one byte occupies the server.
    pub fn cost(&self) -> u64 {
        self.cost
    }

    /// The latency after service, fine units.
    pub fn latency(&self) -> u64 {
        self.latency
    }

    /// The time the server's booked work ends, fine units.
    pub fn free_at(&self) -> u64 {
        self.free_at
    }

    /// Serves `bytes` arriving at `arrival` (fine units); returns
    /// `(start, done)`: the service start and the time the last byte is out
    /// of the latency behind the server.
    #[inline]
    pub fn serve(&mut self, arrival: u64, bytes: u64) -> (u64, u64) {
        self.serve_after(0, arrival, bytes)
    }

    /// [`Self::serve`], also telling the server that no request will ever
    /// arrive before `floor` again (the current send time): remembered idle
    /// intervals that end by then are dropped.
    #[inline]
    pub fn serve_after(&mut self, floor: u64, arrival: u64, bytes: u64) -> (u64, u64) {
        if bytes == 0 {
            return (arrival, arrival + self.latency);
        }
        self.bytes += bytes;
        let (start, end) = self.book(floor, arrival, bytes * self.cost);
        (start, end + self.latency)
    }

    /// Books `service` fine units of occupancy for a request arriving at
    /// `arrival`, no request arriving before `floor` any more; returns
    /// `(start, end of service)`. No latency is added.
    #[inline]
    pub fn book(&mut self, floor: u64, arrival: u64, service: u64) -> (u64, u64) {
        self.served += 1;
        let start = if arrival >= self.free_at {
            if arrival > self.free_at && self.free_at > 0 {
                self.push_gap(floor, self.free_at, arrival);
            }
            self.free_at = arrival + service;
            arrival
        } else if let Some(s) = self.fill_gap(floor, arrival, service) {
            s
        } else {
            let s = self.free_at;
            self.free_at = s + service;
            s
        };
        let wait = start - arrival;
        self.wait_total += wait;
        self.wait_max = self.wait_max.max(wait);
        (start, start + service)
    }

    /// The `k`-th remembered interval (0 = oldest).
    #[inline]
    fn gap(&mut self, k: usize) -> &mut (u64, u64) {
        &mut self.gaps[(self.head + k) & (GAPS - 1)]
    }

    /// Remembers the idle interval `[a, b)`, the latest so far, after
    /// dropping those that end by `floor`. O(1) unless the ring is still
    /// full: then the shortest interval (this one included) is forgotten.
    #[inline]
    fn push_gap(&mut self, floor: u64, a: u64, b: u64) {
        self.prune(floor);
        if self.ngaps == GAPS {
            match self.shortest(b - a) {
                Some(r) => self.remove_gap(r),
                None => return,
            }
        }
        *self.gap(self.ngaps) = (a, b);
        self.ngaps += 1;
    }

    /// The interval to forget to make room for a new one of length `len`:
    /// the shortest, the oldest among equals, the new one counting as the
    /// newest; `None` when that is the new one.
    fn shortest(&mut self, len: u64) -> Option<usize> {
        let mut best = 0;
        let mut best_len = u64::MAX;
        for k in 0..self.ngaps {
            let (a, b) = *self.gap(k);
            if b - a < best_len {
                best_len = b - a;
                best = k;
            }
        }
        (best_len <= len).then_some(best)
    }

    /// Drops the intervals that end by `floor` (the oldest ones).
    #[inline]
    fn prune(&mut self, floor: u64) {
        while self.ngaps > 0 && self.gap(0).1 <= floor {
            self.head = (self.head + 1) & (GAPS - 1);
            self.ngaps -= 1;
        }
    }

    /// Removes the `k`-th interval.
    fn remove_gap(&mut self, k: usize) {
        if k == 0 {
            self.head = (self.head + 1) & (GAPS - 1);
        } else {
            for j in k..self.ngaps - 1 {
                *self.gap(j) = *self.gap(j + 1);
            }
        }
        self.ngaps -= 1;
    }

    /// Inserts `g` as the `k`-th interval (there is room).
    fn insert_gap(&mut self, k: usize, g: (u64, u64)) {
        let mut j = self.ngaps;
        while j > k {
            *self.gap(j) = *self.gap(j - 1);
            j -= 1;
        }
        *self.gap(k) = g;
        self.ngaps += 1;
    }

    /// Places a request in the first remembered idle interval that holds it
    /// (they are disjoint and in time order).
    #[inline]
    fn fill_gap(&mut self, floor: u64, arrival: u64, service: u64) -> Option<u64> {
        // The latest interval ends before the arrival: none can hold it.
        if self.ngaps == 0 || self.gap(self.ngaps - 1).1 <= arrival {
            return None;
        }
        self.prune(floor);
        for k in 0..self.ngaps {
            let (a, b) = *self.gap(k);
            let st = a.max(arrival);
            if st + service > b {
                continue;
            }
            let left = st > a;
            let right = st + service < b;
            match (left, right) {
                (false, false) => self.remove_gap(k),
                (true, false) => *self.gap(k) = (a, st),
                (false, true) => *self.gap(k) = (st + service, b),
                (true, true) => {
                    *self.gap(k) = (a, st);
                    let right = (st + service, b);
                    let mut at = k + 1;
                    if self.ngaps == GAPS {
                        // Full: forget the shortest piece, perhaps the new one.
                        match self.shortest(right.1 - right.0) {
                            None => return Some(st),
                            Some(r) => {
                                self.remove_gap(r);
                                if r < at {
                                    at -= 1;
                                }
                            }
                        }
                    }
                    self.insert_gap(at, right);
                }
            }
            return Some(st);
        }
        None
    }

    /// Forgets all state (time and counters).
    pub fn reset(&mut self) {
        *self = Server {
            cost: self.cost,
            latency: self.latency,
            ..Server::new(1.0, 0)
        };
    }
}

/// Buckets of a [`Calendar`] (a power of two).
const BUCKETS: usize = 4096;
/// Cycles per bucket of a [`Calendar`] (a power of two).
const BUCKET_CYCLES: u64 = 16;

/// A bandwidth server for traffic whose arrivals are far from time order
/// (the SM ports' response direction: an L2 hit's data arrives 180 cycles
/// after its send, a queued PM read's tens of thousands of cycles after).
///
/// Time ahead of the current send time is cut into buckets of
/// [`BUCKET_CYCLES`] cycles, each holding that many cycles of service; a
/// request takes service from the bucket it arrives in (from its arrival on)
/// and spills into the following buckets when that one is full. Its
/// service ends at `max(arrival + service, bucket start + bucket use)` of the
/// bucket where it finishes: exact when unloaded, work-conserving to within a
/// bucket when loaded, and independent of the order requests are booked in.
/// The buckets form a ring of [`BUCKETS`] (a horizon of 65,536 cycles) that
/// advances with the send time; a request arriving beyond the horizon is not
/// accounted (it pays its service and latency only) and is counted in
/// `beyond`.
#[derive(Clone, Debug)]
pub struct Calendar {
    cost: u64,
    latency: u64,
    /// Service booked per bucket, fine units (at most a bucket's length).
    used: Vec<u32>,
    /// The bucket number the ring starts at (the current send time's).
    base: u64,
    /// Requests served with a non-zero size.
    pub served: u64,
    /// Bytes served.
    pub bytes: u64,
    /// Sum of the delays beyond the bare service time, fine units.
    pub wait_total: u64,
    /// Largest such delay, fine units.
    pub wait_max: u64,
    /// Requests that arrived beyond the horizon.
    pub beyond: u64,
}

const BUCKET_SHIFT: u32 = FP + BUCKET_CYCLES.trailing_zeros();
const BUCKET_FINE: u64 = 1 << BUCKET_SHIFT;

impl Calendar {
    pub fn new(bytes_per_cycle: f64, latency_cycles: u64) -> Calendar {
        Calendar {
            cost: cost_per_byte(bytes_per_cycle),
            latency: fine(latency_cycles),
            used: vec![0; BUCKETS],
            base: 0,
            served: 0,
            bytes: 0,
            wait_total: 0,
            wait_max: 0,
            beyond: 0,
        }
    }

    /// Moves the ring's start to the bucket of `floor`, clearing the buckets
    /// that fall behind it.
    #[inline]
    fn advance(&mut self, floor: u64) {
        let fb = floor >> BUCKET_SHIFT;
        if fb <= self.base {
            return;
        }
        if fb - self.base >= BUCKETS as u64 {
            self.used.fill(0);
        } else {
            for b in self.base..fb {
                self.used[b as usize & (BUCKETS - 1)] = 0;
            }
        }
        self.base = fb;
    }

    /// Serves `bytes` arriving at `arrival`, no request arriving before
    /// `floor` any more; returns `(start, done)` like [`Server::serve`]
    /// (`start` is the end of service minus the service time).
    #[inline]
    pub fn serve_after(&mut self, floor: u64, arrival: u64, bytes: u64) -> (u64, u64) {
        if bytes == 0 {
            return (arrival, arrival + self.latency);
        }
        self.advance(floor);
        self.served += 1;
        self.bytes += bytes;
        let service = bytes * self.cost;
        let first = (arrival >> BUCKET_SHIFT).max(self.base);
        let end_ring = self.base + BUCKETS as u64;
        let mut end = arrival + service;
        let mut left = service;
        let mut b = first;
        while left > 0 {
            if b >= end_ring {
                if b == first {
                    self.beyond += 1;
                } else {
                    end = end.max((b << BUCKET_SHIFT) + left);
                }
                break;
            }
            let slot = &mut self.used[b as usize & (BUCKETS - 1)];
            let start_b = b << BUCKET_SHIFT;
            // In the arrival's bucket only the part after the arrival counts.
            let room_time = if b == first {
                (start_b + BUCKET_FINE).saturating_sub(arrival)
            } else {
                BUCKET_FINE
            };
            let room = room_time.min(BUCKET_FINE - *slot as u64);
            let take = room.min(left);
            *slot += take as u32;
            left -= take;
            if left == 0 {
                end = end.max(start_b + *slot as u64);
            }
            b += 1;
        }
        let wait = end - (arrival + service);
        self.wait_total += wait;
        self.wait_max = self.wait_max.max(wait);
        (end - service, end + self.latency)
    }
}

/// A bounded queue of `cap` requests in front of a server, modelled by the
/// last `cap` departure times (a ring): a request enters at
/// `max(arrival, departure of the request cap places earlier)`.
///
/// Departures are recorded as a running maximum, so the ring stays sorted
/// even when the server behind fills an idle interval out of order.
#[derive(Clone, Debug)]
pub struct BoundedQueue {
    deps: Vec<u64>,
    head: usize,
    last: u64,
    /// Requests that had to wait for a free slot.
    pub stalls: u64,
    /// Largest wait for a slot, fine units.
    pub wait_max: u64,
}

impl BoundedQueue {
    pub fn new(cap: u32) -> BoundedQueue {
        BoundedQueue {
            deps: vec![0; cap.max(1) as usize],
            head: 0,
            last: 0,
            stalls: 0,
            wait_max: 0,
        }
    }

    /// The time a request arriving at `arrival` gets a slot.
    #[inline]
    pub fn enter(&mut self, arrival: u64) -> u64 {
        let free = self.deps[self.head];
        if free > arrival {
            self.stalls += 1;
            self.wait_max = self.wait_max.max(free - arrival);
            free
        } else {
            arrival
        }
    }

    /// Records the departure of the request that last entered.
    #[inline]
    pub fn leave(&mut self, departure: u64) {
        self.last = self.last.max(departure);
        self.deps[self.head] = self.last;
        self.head += 1;
        if self.head == self.deps.len() {
            self.head = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fcfs_back_to_back() {
        let mut s = Server::new(4.0, 10);
        let (a, d) = s.serve(0, 8);
        assert_eq!((a, d), (0, fine(2) + fine(10)));
        let (a, d) = s.serve(0, 8);
        assert_eq!((a, d), (fine(2), fine(4) + fine(10)));
    }

    #[test]
    fn early_arrival_fills_gap() {
        let mut s = Server::new(1.0, 0);
        s.serve(fine(10), 1); // busy [10, 11); nothing before it is remembered
        s.serve(fine(100), 1); // idle [11, 100) remembered
        let (st, _) = s.serve(fine(20), 5);
        assert_eq!(st, fine(20));
        let (st, _) = s.serve(fine(20), 5);
        assert_eq!(st, fine(25));
        // Does not fit before 100: booked after free_at.
        let (st, _) = s.serve(fine(95), 10);
        assert_eq!(st, fine(101));
    }

    #[test]
    fn gap_ring_stays_ordered_when_full() {
        let mut s = Server::new(1.0, 0);
        // Ten idle intervals [10k+1, 10k+10) for k = 0..10: the ring keeps
        // the last eight (k = 2..10).
        for k in 0..=10u64 {
            s.serve(fine(10 * k), 1);
        }
        assert_eq!(s.ngaps, GAPS);
        // All equally long: [1, 10) and [11, 20), the oldest, are forgotten,
        // and the earliest fit is [21, 30).
        assert_eq!(s.serve(fine(2), 1).0, fine(21));
        // Split [22, 30) while full: its left piece [22, 23) is the shortest
        // and is forgotten.
        assert_eq!(s.serve(fine(23), 2).0, fine(23));
        // Split [51, 60): the new right piece [57, 60) is the shortest.
        assert_eq!(s.serve(fine(55), 2).0, fine(55));
        assert_eq!(s.serve(fine(21), 2).0, fine(25));
        assert_eq!(s.serve(fine(51), 4).0, fine(51));
        assert_eq!(s.serve(fine(51), 1).0, fine(61));
        let mut prev = 0;
        for k in 0..s.ngaps {
            let (a, b) = *s.gap(k);
            assert!(prev <= a && a < b, "ring out of order at {k}");
            prev = b;
        }
    }

    #[test]
    fn calendar_unloaded_exact_loaded_rate_order_free() {
        let mut c = Calendar::new(4.0, 10);
        // Unloaded: service + latency.
        assert_eq!(c.serve_after(0, fine(5), 8), (fine(5), fine(5 + 2 + 10)));
        // A late-booked request far ahead does not delay an earlier one.
        let mut c = Calendar::new(4.0, 0);
        c.serve_after(0, fine(1000), 4000); // 1000 cycles of service
        assert_eq!(c.serve_after(0, fine(100), 8).1, fine(102));
        // Back-to-back: the rate is the bandwidth (to within a bucket).
        let mut c = Calendar::new(4.0, 0);
        let mut last = 0;
        for _ in 0..1000 {
            last = c.serve_after(0, 0, 64).1; // 16 cycles each
        }
        assert_eq!(last, fine(16_000));
        // Beyond the horizon: not accounted.
        let far = fine(BUCKET_CYCLES * BUCKETS as u64 + 5);
        assert_eq!(c.serve_after(0, far, 8).1, far + fine(2));
        assert_eq!(c.beyond, 1);
    }

    #[test]
    fn bounded_queue_ring() {
        let mut q = BoundedQueue::new(2);
        for dep in [5, 6, 7] {
            q.enter(0);
            q.leave(dep);
        }
        // The 4th waits for the 2nd's departure (2 places earlier).
        assert_eq!(q.enter(0), 6);
    }
}
