//! How a tree's leaves go into buckets: [`Plan`], made once per structure
//! and kept ([`Dist`](crate::Dist) caches it by the structure's hash), and
//! [`TreeBuckets`], the [`Buckets`] that pack a tree's leaves into the
//! buckets of a plan and write the results back in place.
//!
//! Leaves are grouped by their root and element type, in leaf order, and
//! laid end to end into buckets of at most the bucket size; a leaf larger
//! than what is left of a bucket continues in the next one, so buffers
//! stay bounded and a leaf of any size travels in pieces MPI can count.

use std::borrow::Cow;
use std::collections::HashMap;

use pytree_std::checkpoint::{TensorLeaf, TensorView};
use pytree_std::{DType, Error, Flatten, Std};

use crate::backend::{Bucket, Buckets, BufMut, BufRef, Wire};

/// What a plan sends of one leaf.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LeafSpec {
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub elements: usize,
    pub wire: Wire,
    pub root: usize,
}

/// The wire a leaf of `dtype` travels as, or `None` for a dtype that is
/// not sent (integers, bools: left alone).
pub(crate) fn wire_of(dtype: DType) -> Option<Wire> {
    match dtype {
        DType::F32 | DType::F16 | DType::BF16 => Some(Wire::F32),
        DType::F64 => Some(Wire::F64),
        _ => None,
    }
}

/// A run of one leaf's elements in one bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Segment {
    pub leaf: usize,
    /// The first element of the leaf (C order) in this segment.
    pub start: usize,
    pub len: usize,
    /// Where it starts in the bucket.
    pub offset: usize,
}

/// The buckets of one structure: which leaves are sent, and where each
/// piece of them goes.
#[derive(Debug)]
pub(crate) struct Plan {
    /// By leaf index: what is sent of it (`None`: nothing).
    pub specs: Vec<Option<LeafSpec>>,
    pub buckets: Vec<Bucket>,
    /// By bucket: its segments, in leaf order.
    pub segments: Vec<Vec<Segment>>,
}

impl Plan {
    /// Lays out the leaves of `specs` into buckets of at most
    /// `bucket_bytes` (at least one element each).
    pub fn new(specs: Vec<Option<LeafSpec>>, bucket_bytes: usize) -> Plan {
        let mut order: Vec<usize> = (0..specs.len()).filter(|&i| specs[i].is_some()).collect();
        let key = |i: &usize| {
            let s = specs[*i].as_ref().expect("filtered to sent leaves");
            (s.root, s.wire == Wire::F64)
        };
        order.sort_by_key(key);
        let mut buckets: Vec<Bucket> = Vec::new();
        let mut segments: Vec<Vec<Segment>> = Vec::new();
        for i in order {
            let s = specs[i].as_ref().expect("filtered to sent leaves");
            let cap = (bucket_bytes / s.wire.bytes()).max(1);
            let mut start = 0;
            while start < s.elements {
                let open = buckets
                    .last()
                    .filter(|b| b.wire == s.wire && b.root == s.root && b.len < cap);
                if open.is_none() {
                    buckets.push(Bucket {
                        wire: s.wire,
                        len: 0,
                        root: s.root,
                    });
                    segments.push(Vec::new());
                }
                let b = buckets.last_mut().expect("pushed above");
                let len = (cap - b.len).min(s.elements - start);
                segments
                    .last_mut()
                    .expect("pushed with the bucket")
                    .push(Segment {
                        leaf: i,
                        start,
                        len,
                        offset: b.len,
                    });
                b.len += len;
                start += len;
            }
        }
        Plan {
            specs,
            buckets,
            segments,
        }
    }
}

/// Reads `n` elements of `dtype` from `bytes` into `out` (f32 wire).
fn load_f32(dtype: DType, bytes: &[u8], out: &mut [f32]) {
    match dtype {
        DType::F32 => {
            for (o, c) in out.iter_mut().zip(bytes.chunks_exact(4)) {
                *o = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            }
        }
        DType::F16 => {
            for (o, c) in out.iter_mut().zip(bytes.chunks_exact(2)) {
                *o = half::f16::from_le_bytes([c[0], c[1]]).to_f32();
            }
        }
        DType::BF16 => {
            for (o, c) in out.iter_mut().zip(bytes.chunks_exact(2)) {
                *o = half::bf16::from_le_bytes([c[0], c[1]]).to_f32();
            }
        }
        _ => unreachable!("only f32, f16 and bf16 leaves travel as f32"),
    }
}

/// Writes `values` (scaled by `1 / divisor`) as elements of `dtype` into `bytes`.
fn store_f32(dtype: DType, values: &[f32], divisor: Option<f32>, bytes: &mut [u8]) {
    let scaled = |v: f32| divisor.map_or(v, |d| v / d);
    match dtype {
        DType::F32 => {
            for (c, &v) in bytes.chunks_exact_mut(4).zip(values) {
                c.copy_from_slice(&scaled(v).to_le_bytes());
            }
        }
        DType::F16 => {
            for (c, &v) in bytes.chunks_exact_mut(2).zip(values) {
                c.copy_from_slice(&half::f16::from_f32(scaled(v)).to_le_bytes());
            }
        }
        DType::BF16 => {
            for (c, &v) in bytes.chunks_exact_mut(2).zip(values) {
                c.copy_from_slice(&half::bf16::from_f32(scaled(v)).to_le_bytes());
            }
        }
        _ => unreachable!("only f32, f16 and bf16 leaves travel as f32"),
    }
}

fn load_f64(bytes: &[u8], out: &mut [f64]) {
    for (o, c) in out.iter_mut().zip(bytes.chunks_exact(8)) {
        *o = f64::from_le_bytes(c.try_into().expect("chunks of 8"));
    }
}

fn store_f64(values: &[f64], divisor: Option<f64>, bytes: &mut [u8]) {
    for (c, &v) in bytes.chunks_exact_mut(8).zip(values) {
        c.copy_from_slice(&divisor.map_or(v, |d| v / d).to_le_bytes());
    }
}

/// The leaves of a tree packed into the buckets of a plan and the results
/// written back in place: into the leaf's memory where it lends it as
/// bytes ([`TensorLeaf::tensor_bytes_mut`]), else gathered per leaf and
/// copied in whole ([`TensorLeaf::copy_from_tensor`]).
pub(crate) struct TreeBuckets<'a, T: Flatten<Std>> {
    pub tree: &'a mut T,
    pub plan: &'a Plan,
    /// Results are divided by this (a mean over ranks).
    pub divisor: Option<usize>,
    /// The bytes of the last leaf whose bytes were a copy (candle), kept
    /// while its pieces are packed.
    read_cache: Option<(usize, Vec<u8>)>,
    /// Results of leaves that take their data whole, until complete.
    staging: HashMap<usize, Vec<u8>>,
}

impl<'a, T: Flatten<Std>> TreeBuckets<'a, T> {
    pub fn new(tree: &'a mut T, plan: &'a Plan, divisor: Option<usize>) -> Self {
        TreeBuckets {
            tree,
            plan,
            divisor,
            read_cache: None,
            staging: HashMap::new(),
        }
    }
}

impl<T> Buckets for TreeBuckets<'_, T>
where
    T: Flatten<Std>,
    T::Leaf: TensorLeaf,
{
    fn buckets(&self) -> Vec<Bucket> {
        self.plan.buckets.clone()
    }

    fn fill(&mut self, k: usize, mut buf: BufMut<'_>) -> Result<(), Error> {
        let leaves = pytree_std::leaves(&*self.tree);
        for seg in &self.plan.segments[k] {
            let spec = self.plan.specs[seg.leaf]
                .as_ref()
                .expect("segments are of sent leaves");
            let size = spec
                .dtype
                .size_in_bytes()
                .expect("float dtypes have a size");
            let range = seg.start * size..(seg.start + seg.len) * size;
            let cached = matches!(&self.read_cache, Some((i, _)) if *i == seg.leaf);
            let bytes: Cow<'_, [u8]> = if cached {
                Cow::Borrowed(&self.read_cache.as_ref().expect("checked").1[..])
            } else {
                match <T::Leaf as TensorLeaf>::tensor_bytes(&leaves[seg.leaf])? {
                    Cow::Borrowed(b) => Cow::Borrowed(b),
                    Cow::Owned(v) => {
                        self.read_cache = Some((seg.leaf, v));
                        Cow::Borrowed(&self.read_cache.as_ref().expect("just set").1[..])
                    }
                }
            };
            if bytes.len() != spec.elements * size {
                return Err(Error::custom(format!(
                    "leaf {}: {} bytes, expected {}",
                    seg.leaf,
                    bytes.len(),
                    spec.elements * size
                )));
            }
            let src = &bytes[range];
            match &mut buf {
                BufMut::F32(b) => {
                    load_f32(spec.dtype, src, &mut b[seg.offset..seg.offset + seg.len])
                }
                BufMut::F64(b) => load_f64(src, &mut b[seg.offset..seg.offset + seg.len]),
            }
        }
        Ok(())
    }

    fn drain(&mut self, k: usize, buf: BufRef<'_>) -> Result<(), Error> {
        let mut leaves = pytree_std::leaves_mut(&mut *self.tree)
            .into_iter()
            .enumerate();
        for seg in &self.plan.segments[k] {
            let spec = self.plan.specs[seg.leaf]
                .as_ref()
                .expect("segments are of sent leaves");
            let size = spec
                .dtype
                .size_in_bytes()
                .expect("float dtypes have a size");
            let Some((_, mut leaf)) = leaves.by_ref().find(|(i, _)| *i == seg.leaf) else {
                return Err(Error::custom(format!("the tree has no leaf {}", seg.leaf)));
            };
            let write = |dst: &mut [u8]| match buf {
                BufRef::F32(b) => store_f32(
                    spec.dtype,
                    &b[seg.offset..seg.offset + seg.len],
                    self.divisor.map(|d| d as f32),
                    dst,
                ),
                BufRef::F64(b) => store_f64(
                    &b[seg.offset..seg.offset + seg.len],
                    self.divisor.map(|d| d as f64),
                    dst,
                ),
            };
            let range = seg.start * size..(seg.start + seg.len) * size;
            if let Some(mem) = <T::Leaf as TensorLeaf>::tensor_bytes_mut(&mut leaf) {
                if mem.len() == spec.elements * size {
                    write(&mut mem[range]);
                    continue;
                }
            }
            let staged = self
                .staging
                .entry(seg.leaf)
                .or_insert_with(|| vec![0u8; spec.elements * size]);
            write(&mut staged[range]);
            if seg.start + seg.len == spec.elements {
                let data = self.staging.remove(&seg.leaf).expect("inserted above");
                let view = TensorView::new("", spec.dtype, &spec.shape, &data)?;
                <T::Leaf as TensorLeaf>::copy_from_tensor(leaf, &view)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(elements: usize, wire: Wire, root: usize) -> Option<LeafSpec> {
        Some(LeafSpec {
            dtype: if wire == Wire::F32 {
                DType::F32
            } else {
                DType::F64
            },
            shape: vec![elements],
            elements,
            wire,
            root,
        })
    }

    #[test]
    fn leaves_are_laid_end_to_end_and_split_at_the_bucket_size() {
        let plan = Plan::new(vec![spec(3, Wire::F32, 0), None, spec(6, Wire::F32, 0)], 16);
        assert_eq!(
            plan.buckets.iter().map(|b| b.len).collect::<Vec<_>>(),
            [4, 4, 1]
        );
        assert_eq!(
            plan.segments[0],
            [
                Segment {
                    leaf: 0,
                    start: 0,
                    len: 3,
                    offset: 0
                },
                Segment {
                    leaf: 2,
                    start: 0,
                    len: 1,
                    offset: 3
                }
            ]
        );
        assert_eq!(
            plan.segments[2],
            [Segment {
                leaf: 2,
                start: 5,
                len: 1,
                offset: 0
            }]
        );
    }

    #[test]
    fn buckets_hold_one_root_and_one_wire() {
        let plan = Plan::new(
            vec![
                spec(2, Wire::F32, 1),
                spec(2, Wire::F64, 0),
                spec(2, Wire::F32, 0),
            ],
            1 << 20,
        );
        let got: Vec<(usize, Wire, usize)> = plan
            .buckets
            .iter()
            .map(|b| (b.root, b.wire, b.len))
            .collect();
        assert_eq!(
            got,
            [(0, Wire::F32, 2), (0, Wire::F64, 2), (1, Wire::F32, 2)]
        );
        assert_eq!(plan.segments[0][0].leaf, 2);
    }
}
