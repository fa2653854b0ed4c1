//! gpKVS's batch computed functionally (`../shared/notes/sbrp-benchmarks.md`
//! §2.1): the input elements, and for every block step of
//! `hash_insert_2choice` what each 4-lane group does in each iteration of the
//! two placement loops, so that the generator can emit the warps' code and
//! the images can be built.
//!
//! Decisions (races the artifact leaves to the hardware):
//! - All ballots of one loop iteration see the table as it was when the
//!   iteration began (before any of its signature stores).
//! - Of groups storing their signature to the same slot in one iteration,
//!   the highest key index stores last and wins; the others see the lost race
//!   at the re-read and try again in the next iteration.
//! - Signatures are drawn nonzero and distinct within the batch and the table
//!   starts empty (host memset), so the "same signature already present"
//!   ballots never match; their loads are still emitted.

use std::collections::HashMap;

use crate::log::Rng;

/// Blocks and threads of the insert kernel (§2.1, §2.7).
pub const BLOCKS: u64 = 16;
pub const THREADS: u64 = 512;
/// Lanes per key and keys per block step.
pub const ELEM: u64 = 4;
pub const GROUPS: usize = (THREADS / ELEM) as usize;
/// Buckets (2^22 of 32 B = the 128-MiB table) and each block's slice.
pub const BUCKETS: u64 = 1 << 22;
pub const SLICE: u64 = BUCKETS / BLOCKS;
const BLOCK_MASK: u64 = SLICE - 1;

/// One input element: signature, first bucket, value ("loc").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Elem {
    pub sig: u32,
    pub bucket: u32,
    pub loc: u32,
}

impl Elem {
    /// The second choice: the signature's low bits mixed into the bucket's
    /// offset within the block slice (the slice is kept).
    pub fn bucket2(&self) -> u32 {
        let h = self.bucket as u64;
        ((((h ^ self.sig as u64) & BLOCK_MASK) | (h & !BLOCK_MASK)) & (BUCKETS - 1)) as u32
    }
}

/// What a group does in one loop iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Act {
    /// Done, failed, or the loop's last (breaking) iteration.
    Idle,
    /// Found an empty slot `lane` and stored its signature; `won` if the
    /// re-read after the barrier still shows it (then it logs and stores loc).
    Write { lane: u8, won: bool },
    /// No empty slot. In the second bucket it then overwrites slot
    /// `sig & 3`'s signature without logging (the artifact's give-up path).
    Full { overwrite: Option<u8> },
}

/// One block step: the iterations of both loops (the last of each is the
/// one that breaks, all idle).
#[derive(Clone, Debug, Default)]
pub struct Step {
    pub first: Vec<Vec<Act>>,
    pub second: Vec<Vec<Act>>,
}

/// The whole batch.
#[derive(Clone, Debug, Default)]
pub struct Batch {
    pub elems: Vec<Elem>,
    /// Steps of block `b`: `steps[b * steps_per_block + s]`.
    pub steps: Vec<Step>,
    pub steps_per_block: usize,
    /// Slot (bucket * 4 + lane) each key logged, if it logged.
    pub logged: Vec<Option<u64>>,
    /// Final (sig, loc) of every slot the batch wrote.
    pub post: HashMap<u64, (u32, u32)>,
    /// Every signature stored to each slot, in order.
    pub sig_writes: HashMap<u64, Vec<u32>>,
    /// The signatures stored to each slot in the last iteration that stored
    /// any: groups of one iteration race, and on the GPU model any of them
    /// may land last (the race resolution above decides only the program).
    pub last_sigs: HashMap<u64, Vec<u32>>,
}

/// The input: element `i` of block `b`'s slice hashes uniformly into that
/// block's bucket range (§2.1 Input), seeded 1 (§6.19).
pub fn elems(n: u64) -> Vec<Elem> {
    let mut rng = Rng::new(1);
    let per_block = n / BLOCKS;
    let mut seen = std::collections::HashSet::new();
    (0..n)
        .map(|i| {
            let sig = loop {
                let s = 1 + rng.below((1 << 31) - 1) as u32;
                if seen.insert(s) {
                    break s;
                }
            };
            let bucket = ((i / per_block) * SLICE + rng.below(SLICE)) as u32;
            let loc = 1 + rng.below((1 << 31) - 1) as u32;
            Elem { sig, bucket, loc }
        })
        .collect()
}

/// First empty slot at or after the preferred lane `sig & 3`, else the
/// first empty one before it.
fn pick(sigs: &[u32; 4], sig: u32) -> Option<u8> {
    let pref = (sig & 3) as usize;
    (pref..4)
        .chain(0..pref)
        .find(|&l| sigs[l] == 0)
        .map(|l| l as u8)
}

/// Runs the batch (blocks touch disjoint slices, so block by block).
pub fn run(n: u64) -> Batch {
    let elems = elems(n);
    let per_block = (n / BLOCKS) as usize;
    let steps_per_block = per_block / GROUPS;
    let mut table: HashMap<u64, [u32; 4]> = HashMap::new();
    let mut locs: HashMap<u64, u32> = HashMap::new();
    let mut b = Batch {
        logged: vec![None; n as usize],
        steps_per_block,
        ..Batch::default()
    };
    // Iterations so far, and per slot (iteration, signatures) of its last.
    let mut iteration = 0u64;
    let mut last: HashMap<u64, (u64, Vec<u32>)> = HashMap::new();
    for blk in 0..BLOCKS as usize {
        for s in 0..steps_per_block {
            let first = blk * per_block + s * GROUPS;
            let keys: Vec<Elem> = elems[first..first + GROUPS].to_vec();
            let mut done = [false; GROUPS];
            let mut step = Step::default();
            // Counts in groups (the artifact counts threads: 4 per group).
            let mut count = [0usize; 2];
            for phase in 0..2 {
                let mut fail = [false; GROUPS];
                loop {
                    let mut acts = vec![Act::Idle; GROUPS];
                    let mut writes: Vec<(usize, u64, u8)> = vec![];
                    for g in 0..GROUPS {
                        if done[g] || fail[g] {
                            continue;
                        }
                        let e = &keys[g];
                        let bk = if phase == 0 { e.bucket } else { e.bucket2() } as u64;
                        let sigs = table.get(&bk).copied().unwrap_or([0; 4]);
                        match pick(&sigs, e.sig) {
                            Some(l) => {
                                acts[g] = Act::Write {
                                    lane: l,
                                    won: false,
                                };
                                writes.push((g, bk, l));
                            }
                            None => {
                                fail[g] = true;
                                count[phase] += 1;
                                if phase == 1 {
                                    let l = (e.sig & 3) as u8;
                                    acts[g] = Act::Full { overwrite: Some(l) };
                                    writes.push((g, bk, l));
                                } else {
                                    acts[g] = Act::Full { overwrite: None };
                                }
                            }
                        }
                    }
                    // Stores in key order: the last writer of a slot wins.
                    iteration += 1;
                    for &(g, bk, l) in &writes {
                        table.entry(bk).or_insert([0; 4])[l as usize] = keys[g].sig;
                        let slot = bk * 4 + l as u64;
                        b.sig_writes.entry(slot).or_default().push(keys[g].sig);
                        let last = last.entry(slot).or_insert((iteration, vec![]));
                        if last.0 != iteration {
                            *last = (iteration, vec![]);
                        }
                        last.1.push(keys[g].sig);
                    }
                    if count[phase] == GROUPS {
                        // The breaking iteration: every group idle.
                        debug_assert!(acts.iter().all(|a| *a == Act::Idle));
                        step_push(&mut step, phase, acts);
                        break;
                    }
                    for g in 0..GROUPS {
                        let Act::Write { lane, .. } = acts[g] else {
                            continue;
                        };
                        let e = &keys[g];
                        let bk = if phase == 0 { e.bucket } else { e.bucket2() } as u64;
                        if table[&bk][lane as usize] == e.sig {
                            acts[g] = Act::Write { lane, won: true };
                            let slot = bk * 4 + lane as u64;
                            b.logged[first + g] = Some(slot);
                            locs.insert(slot, e.loc);
                            done[g] = true;
                            count[0] += 1;
                            count[1] += 1;
                        }
                    }
                    step_push(&mut step, phase, acts);
                }
            }
            b.steps.push(step);
        }
    }
    for (bk, sigs) in &table {
        for (l, &sig) in sigs.iter().enumerate() {
            let slot = bk * 4 + l as u64;
            if b.sig_writes.contains_key(&slot) {
                b.post
                    .insert(slot, (sig, locs.get(&slot).copied().unwrap_or(0)));
            }
        }
    }
    b.last_sigs = last.into_iter().map(|(slot, (_, v))| (slot, v)).collect();
    b.elems = elems;
    b
}

fn step_push(step: &mut Step, phase: usize, acts: Vec<Act>) {
    if phase == 0 {
        step.first.push(acts);
    } else {
        step.second.push(acts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_placed_in_a_small_batch() {
        let b = run(2048);
        assert!(b.logged.iter().all(Option::is_some));
        assert_eq!(b.post.len(), 2048);
        // One write iteration, then the breaking one, nothing in loop two.
        assert!(b.steps.iter().all(|s| s.second.len() == 1));
        assert!(pick(&[1, 0, 0, 1], 3).is_some_and(|l| l == 1));
        assert_eq!(pick(&[0, 0, 1, 0], 2), Some(3));
        assert_eq!(pick(&[1, 1, 1, 1], 2), None);
    }
}
