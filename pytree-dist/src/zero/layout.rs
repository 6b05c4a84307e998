//! [`Layout`]: how ZeRO splits the float leaves by element. The leaves of
//! at least one dimension are laid end to end in leaf order (those sent as
//! `f32` first, then the `f64` ones) and cut into packed buckets of at most
//! the bucket size, as every collective of the crate is; each bucket is
//! then split into one consecutive [part](crate::Bucket::part) per rank.
//! A rank owns its part of every bucket, so its share of the elements is
//! `1/N` of each bucket (within one element) whatever the leaf sizes, and
//! each reduce-scatter or all-gather of a bucket is balanced across the
//! ranks.
//!
//! A rank's parts, taken in bucket order, are its *flat* shard of each
//! wire type; a leaf's elements in it are consecutive (the leaves run in
//! order through the buckets), though in the leaf they may be several
//! ranges (one per bucket the leaf spans).

use std::ops::Range;

use pytree_std::{DType, Signature};

use crate::backend::Wire;
use crate::plan::{wire_of, LeafSpec, Plan};

/// A run of one leaf's elements that one rank owns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Piece {
    pub leaf: usize,
    /// The first element of the run in the leaf (C order).
    pub start: usize,
    pub len: usize,
}

/// The element partition of one tree over `ranks` ranks.
#[derive(Debug)]
pub(crate) struct Layout {
    pub plan: Plan,
    pub ranks: usize,
}

impl Layout {
    /// The layout of the leaves with these signatures: a leaf of a float
    /// dtype and at least one dimension is split; the others (scalars,
    /// integers) are not in it.
    pub fn new(signatures: &[Signature], bucket_bytes: usize, ranks: usize) -> Layout {
        let specs = signatures
            .iter()
            .map(|s| {
                let wire = wire_of(s.dtype())?;
                if s.shape().is_empty() {
                    return None;
                }
                Some(LeafSpec {
                    dtype: s.dtype(),
                    shape: s.shape().to_vec(),
                    elements: s.num_elements(),
                    wire,
                    root: 0,
                })
            })
            .collect();
        // Packed buckets only: a reduce-scatter leaves each rank a part,
        // not the leaf's memory.
        Layout {
            plan: Plan::new(specs, bucket_bytes, usize::MAX),
            ranks: ranks.max(1),
        }
    }

    /// Whether leaf `i` is split by element (else every rank holds it
    /// whole, or it is not a float).
    pub fn splits(&self, i: usize) -> bool {
        self.plan.specs.get(i).is_some_and(Option::is_some)
    }

    /// Where bucket `k`'s part of `rank` starts in that rank's flat shard
    /// of the bucket's wire type.
    pub fn flat_starts(&self, rank: usize) -> Vec<usize> {
        let mut next = [0usize; 2];
        self.plan
            .buckets
            .iter()
            .map(|b| {
                let w = usize::from(b.wire == Wire::F64);
                let at = next[w];
                next[w] += b.part(rank, self.ranks).len();
                at
            })
            .collect()
    }

    /// The length of `rank`'s flat shard of `wire`.
    pub fn flat_len(&self, rank: usize, wire: Wire) -> usize {
        self.plan
            .buckets
            .iter()
            .filter(|b| b.wire == wire)
            .map(|b| b.part(rank, self.ranks).len())
            .sum()
    }

    /// The runs of elements `rank` owns, in the order of its flat shards
    /// (those of the `f32` wire, then the `f64` ones).
    pub fn pieces(&self, rank: usize) -> Vec<Piece> {
        let mut pieces: Vec<Piece> = Vec::new();
        for (k, b) in self.plan.buckets.iter().enumerate() {
            let part = b.part(rank, self.ranks);
            for seg in &self.plan.segments[k] {
                let lo = seg.offset.max(part.start);
                let hi = (seg.offset + seg.len).min(part.end);
                if lo >= hi {
                    continue;
                }
                let start = seg.start + (lo - seg.offset);
                // A run that continues the last one (the leaf goes on in
                // the next bucket, and so does this rank's part) is one.
                match pieces.last_mut() {
                    Some(p) if p.leaf == seg.leaf && p.start + p.len == start => p.len += hi - lo,
                    _ => pieces.push(Piece {
                        leaf: seg.leaf,
                        start,
                        len: hi - lo,
                    }),
                }
            }
        }
        pieces
    }

    /// By leaf: how many of its elements `rank` owns, and where they start
    /// in its flat shard of the leaf's wire.
    pub fn shard_ranges(&self, rank: usize, leaves: usize) -> Vec<Range<usize>> {
        let mut ranges = vec![0..0; leaves];
        let mut next = [0usize; 2];
        for p in self.pieces(rank) {
            let w = usize::from(self.wire(p.leaf) == Some(Wire::F64));
            let r = &mut ranges[p.leaf];
            if r.start == r.end {
                *r = next[w]..next[w];
            }
            r.end += p.len;
            next[w] += p.len;
        }
        ranges
    }

    /// The wire type of leaf `i`, if it is split.
    pub fn wire(&self, i: usize) -> Option<Wire> {
        self.plan.specs.get(i)?.as_ref().map(|s| s.wire)
    }

    /// The dtype and shape of leaf `i`, if it is split.
    pub fn leaf(&self, i: usize) -> Option<(DType, &[usize])> {
        let s = self.plan.specs.get(i)?.as_ref()?;
        Some((s.dtype, &s.shape))
    }
}

/// The shape of a shard of `n` elements of a leaf of shape `shape`: the
/// leaf's rank kept (`[n, 1, ..., 1]`), so that a leaf type of a fixed
/// rank (`Array2<f32>`) holds it.
pub(crate) fn shard_shape(n: usize, shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len().max(1)];
    s[0] = n;
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(shape: &[usize]) -> Signature {
        Signature::new(DType::F32, shape.to_vec())
    }

    /// Each rank's elements of the split leaves.
    fn shares(layout: &Layout) -> Vec<usize> {
        (0..layout.ranks)
            .map(|r| layout.pieces(r).iter().map(|p| p.len).sum())
            .collect()
    }

    /// Every element of every split leaf is owned by exactly one rank.
    fn covers_once(layout: &Layout, sigs: &[Signature]) {
        let mut seen: Vec<Vec<u8>> = sigs.iter().map(|s| vec![0; s.num_elements()]).collect();
        for r in 0..layout.ranks {
            for p in layout.pieces(r) {
                seen[p.leaf][p.start..p.start + p.len]
                    .iter_mut()
                    .for_each(|x| *x += 1);
            }
        }
        for (i, s) in seen.iter().enumerate() {
            if layout.splits(i) {
                assert!(s.iter().all(|&x| x == 1), "leaf {i}: {s:?}");
            }
        }
    }

    /// Within 1% of 1/N (and one element per bucket).
    fn balanced(layout: &Layout, total: usize) {
        let n = layout.ranks;
        for (r, &mine) in shares(layout).iter().enumerate() {
            let ideal = total as f64 / n as f64;
            let slack = layout.plan.buckets.len() as f64;
            assert!(
                (mine as f64 - ideal).abs() <= (0.01 * ideal).max(slack),
                "rank {r} of {n}: {mine} of {total}"
            );
        }
    }

    #[test]
    fn one_leaf_splits_evenly_at_any_world_size() {
        let sigs = [sig(&[1000, 7])];
        for n in [1, 2, 3, 4, 8] {
            let layout = Layout::new(&sigs, 4096, n);
            covers_once(&layout, &sigs);
            balanced(&layout, 7000);
        }
    }

    #[test]
    fn an_embedding_of_99_percent_does_not_unbalance_the_ranks() {
        let sigs = [
            sig(&[50_000, 64]),
            sig(&[64, 64]),
            sig(&[64]),
            Signature::scalar(DType::F32),
        ];
        let total = 50_000 * 64 + 64 * 64 + 64;
        for n in [2, 3, 4, 8] {
            let layout = Layout::new(&sigs, 25 << 20, n);
            covers_once(&layout, &sigs);
            balanced(&layout, total);
            assert!(!layout.splits(3), "a scalar is held whole");
        }
    }

    /// GPT-2 small's parameter shapes (148 leaves, 124,439,808 elements).
    fn gpt2() -> Vec<Signature> {
        let mut sigs = vec![sig(&[50257, 768]), sig(&[1024, 768])];
        for _ in 0..12 {
            for shape in [
                &[768][..],
                &[768],
                &[768, 2304],
                &[2304],
                &[768, 768],
                &[768],
                &[768],
                &[768],
                &[768, 3072],
                &[3072],
                &[3072, 768],
                &[768],
            ] {
                sigs.push(sig(shape));
            }
        }
        sigs.extend([sig(&[768]), sig(&[768])]);
        sigs
    }

    #[test]
    fn gpt2_splits_within_one_percent_of_one_nth_at_2_3_4_and_8_ranks() {
        let sigs = gpt2();
        let total: usize = sigs.iter().map(Signature::num_elements).sum();
        assert_eq!(total, 124_439_808);
        for n in [2, 3, 4, 8] {
            let layout = Layout::new(&sigs, 25 << 20, n);
            covers_once(&layout, &sigs);
            balanced(&layout, total);
        }
    }

    #[test]
    fn a_leaf_s_runs_are_consecutive_in_the_flat_shard() {
        // Buckets of 10 f32 (of 10, 10 and 8 elements here): the leaf of
        // 25 spans three, so rank 1 of 2 owns three runs of it, one after
        // the other in its flat shard.
        let sigs = [sig(&[3]), sig(&[25]), Signature::new(DType::F64, vec![4])];
        let layout = Layout::new(&sigs, 40, 2);
        assert_eq!(
            layout.pieces(1),
            [
                Piece {
                    leaf: 1,
                    start: 2,
                    len: 5
                },
                Piece {
                    leaf: 1,
                    start: 12,
                    len: 5
                },
                Piece {
                    leaf: 1,
                    start: 21,
                    len: 4
                },
                Piece {
                    leaf: 2,
                    start: 2,
                    len: 2
                },
            ]
        );
        let ranges = layout.shard_ranges(1, 3);
        assert_eq!(ranges, [0..0, 0..14, 0..2]);
        assert_eq!(
            (layout.flat_len(1, Wire::F32), layout.flat_len(1, Wire::F64)),
            (14, 2)
        );
        assert_eq!(layout.flat_starts(1), [0, 5, 10, 0]);
        covers_once(&layout, &sigs);
    }

    #[test]
    fn the_shard_keeps_the_leaf_s_rank() {
        assert_eq!(shard_shape(6, &[4, 5, 2]), [6, 1, 1]);
        assert_eq!(shard_shape(0, &[3]), [0]);
    }
}
