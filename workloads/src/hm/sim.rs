//! HM's batches computed functionally (`../shared/notes/sbrp-benchmarks.md`
//! §2.2): the earlier batch that filled the map, then the timed batch's
//! keys and values, compaction's moves, phase 1's bucket positions, and
//! phase 2's shared-memory cuckoo placement step by step, so the generator
//! can emit each warp's masks and the images can be built.
//!
//! Decisions:
//! - Compaction's and phase 1's `atomicAdd`s on a bucket's offset hand out
//!   positions in thread order (slot order, then key order).
//! - The three subtable hash functions are fixed mixes of the key (the note
//!   does not give them); `findKernel` uses the same ones.
//! - Of threads storing into the same shared entry in one step, the highest
//!   thread stores last and wins; shared memory starts zeroed.

use crate::log::Rng;

/// Buckets of the artifact's map and slots per bucket (§2.2 Data).
pub const BUCKETS: u64 = 300;
pub const SLOTS: u64 = 576;
/// Subtables of the shared cuckoo table, entries each, and rounds.
pub const SUBTABLES: u64 = 3;
pub const SUB: u64 = 192;
pub const ROUNDS: usize = 25;

/// A node: key and value, the two 4-B words of a slot (key 0: empty).
pub type Node = (u32, u32);

/// Entry of subtable `j` for `key`.
pub fn offset(j: u64, key: u32) -> u64 {
    let mut z = (key as u64) ^ (j + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) % SUB
}

/// One step (round `i`, subtable `j`) of a bucket's phase 2, per warp:
/// lanes that hold a location before it (they re-read their entry), and
/// lanes that store into subtable `j`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepMasks {
    pub located: u32,
    pub writers: u32,
}

/// One bucket's phase 2.
#[derive(Clone, Debug, Default)]
pub struct Bucket {
    /// Nodes (slot order after phase 1).
    pub count: usize,
    /// `steps[i * 3 + j][warp]`.
    pub steps: Vec<Vec<StepMasks>>,
    /// Per warp: lanes holding a location at the end.
    pub located: Vec<u32>,
    /// Per thread: the final slot (within the bucket), if placed.
    pub placed: Vec<Option<u64>>,
}

/// One batch inserted into a map of `buckets` buckets.
#[derive(Clone, Debug, Default)]
pub struct Insert {
    pub buckets_n: u64,
    pub keys: Vec<u32>,
    pub values: Vec<u32>,
    /// Per bucket: the nodes compaction keeps (slot within the bucket,
    /// node), in slot order; the `r`-th moves to position `r`.
    pub resident: Vec<Vec<(u64, Node)>>,
    /// Slot index (bucket * 576 + position) of key `i` after phase 1.
    pub phase1_slot: Vec<u64>,
    /// Phase-2 thread `t` of bucket `b` holds `members[b][t]`: the kept
    /// nodes, then the batch's keys of the bucket in key order.
    pub members: Vec<Vec<Node>>,
    pub buckets: Vec<Bucket>,
}

/// The map's bucket count for `n` keys a batch: the artifact's 300, or one
/// bucket per key below 300 keys (a reduced map for tests).
pub fn buckets_for(n: u64) -> u64 {
    n.min(BUCKETS)
}

/// The two batches of a run of `n` keys: the earlier one (keys `1..=n`
/// into the empty map) and the timed one (keys `n + 1 ..= 2n`, §2.2 Input),
/// values uniform below 100,000 (the timed batch's seeded 1, §6.19, the
/// earlier one's 2). The earlier batch, on the empty map:
pub fn earlier(n: u64) -> Insert {
    let mut rng = Rng::new(2);
    let keys: Vec<u32> = (1..=n).map(|k| k as u32).collect();
    let values = keys.iter().map(|_| rng.below(100_000) as u32).collect();
    run(
        buckets_for(n),
        vec![vec![]; buckets_for(n) as usize],
        keys,
        values,
    )
}

/// The timed batch, into a map whose buckets keep `resident` (the nodes
/// the earlier batch left, as the caller reads them from its image).
pub fn timed(n: u64, resident: Vec<Vec<(u64, Node)>>) -> Insert {
    let mut rng = Rng::new(1);
    let keys: Vec<u32> = (n + 1..=2 * n).map(|k| k as u32).collect();
    let values = keys.iter().map(|_| rng.below(100_000) as u32).collect();
    run(buckets_for(n), resident, keys, values)
}

/// Compaction, phase 1 and phase 2 of one batch.
pub fn run(nb: u64, resident: Vec<Vec<(u64, Node)>>, keys: Vec<u32>, values: Vec<u32>) -> Insert {
    let mut members: Vec<Vec<Node>> = resident
        .iter()
        .map(|r| r.iter().map(|x| x.1).collect())
        .collect();
    let phase1_slot = keys
        .iter()
        .zip(&values)
        .map(|(&k, &v)| {
            let b = (k as u64 % nb) as usize;
            members[b].push((k, v));
            b as u64 * SLOTS + members[b].len() as u64 - 1
        })
        .collect();
    let buckets = members.iter().map(|m| cuckoo(m)).collect();
    Insert {
        buckets_n: nb,
        keys,
        values,
        resident,
        phase1_slot,
        members,
        buckets,
    }
}

/// Phase 2 of one bucket: thread `t` holds node `m[t]`.
fn cuckoo(m: &[Node]) -> Bucket {
    let n = m.len();
    assert!(
        n as u64 <= SLOTS,
        "a bucket of {n} nodes: more than its slots"
    );
    let warps = n.div_ceil(32);
    let mut table = vec![0u32; (SUBTABLES * SUB) as usize];
    // (subtable, entry) each thread believes it holds.
    let mut loc: Vec<Option<(u64, u64)>> = vec![None; n];
    let mut steps = vec![];
    let key = |t: usize| m[t].0;
    let holds = |table: &[u32], l: Option<(u64, u64)>, k: u32| {
        l.is_some_and(|(j, o)| table[(j * SUB + o) as usize] == k)
    };
    for _ in 0..ROUNDS {
        for j in 0..SUBTABLES {
            let mut masks = vec![StepMasks::default(); warps];
            for t in 0..n {
                let bit = 1 << (t % 32);
                if loc[t].is_some() {
                    masks[t / 32].located |= bit;
                }
                if !holds(&table, loc[t], key(t)) {
                    loc[t] = None;
                    masks[t / 32].writers |= bit;
                }
            }
            // Stores in thread order: the last one to an entry wins.
            for t in 0..n {
                if masks[t / 32].writers & (1 << (t % 32)) != 0 {
                    table[(j * SUB + offset(j, key(t))) as usize] = key(t);
                }
            }
            for (t, l) in loc.iter_mut().enumerate() {
                let o = offset(j, key(t));
                if table[(j * SUB + o) as usize] == key(t) {
                    *l = Some((j, o));
                }
            }
            steps.push(masks);
        }
    }
    let mut located = vec![0u32; warps];
    let placed = (0..n)
        .map(|t| {
            if loc[t].is_some() {
                located[t / 32] |= 1 << (t % 32);
            }
            holds(&table, loc[t], key(t)).then(|| {
                let (j, o) = loc[t].unwrap_or_default();
                j * SUB + o
            })
        })
        .collect();
    Bucket {
        count: n,
        steps,
        located,
        placed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_batches_place_keys_once() {
        let e = earlier(25_000);
        assert_eq!(e.keys[0], 1);
        let kept: Vec<Vec<(u64, Node)>> = e
            .buckets
            .iter()
            .zip(&e.members)
            .map(|(bk, m)| {
                let mut v: Vec<(u64, Node)> = bk
                    .placed
                    .iter()
                    .zip(m)
                    .filter_map(|(p, &n)| p.map(|s| (s, n)))
                    .collect();
                v.sort_unstable();
                v
            })
            .collect();
        let ins = timed(25_000, kept);
        assert_eq!(ins.keys[0], 25_001);
        assert_eq!(*ins.keys.last().unwrap(), 50_000);
        let counts: Vec<usize> = ins.buckets.iter().map(|b| b.count).collect();
        assert!(
            counts.iter().all(|&c| (160..=172).contains(&c)),
            "{counts:?}"
        );
        let placed: usize = ins
            .buckets
            .iter()
            .map(|b| b.placed.iter().flatten().count())
            .sum();
        // Cuckoo placement of ~167 keys in 576 entries rarely fails.
        assert!(placed > 49_800, "{placed}");
        for b in &ins.buckets {
            let mut s: Vec<u64> = b.placed.iter().flatten().copied().collect();
            s.sort_unstable();
            s.dedup();
            assert_eq!(s.len(), b.placed.iter().flatten().count());
        }
        assert_eq!(buckets_for(40), 40);
    }
}
