//! How a tree's leaves go into buckets: [`Plan`], made once per structure
//! and kept ([`Dist`](crate::Dist) caches it by the structure's hash), and
//! [`TreeBuckets`], the [`Buckets`] that pack a tree's leaves into the
//! buckets of a plan and write the results back in place.
//!
//! Leaves are grouped by their root and element type, in leaf order. A
//! leaf whose elements are already what the wire sends (`f32` on an `f32`
//! wire, `f64` on an `f64` one) and which holds at least the in-place size
//! in bytes is reduced in the leaf's memory, in buckets of its own
//! ([`Bucket::in_place`]: no copy in or out) of at most the bucket size,
//! so that a mean divides each piece right after its collective, while it
//! is still in the cache. The other leaves (small ones, `f16` / `bf16`)
//! are laid end to end into packed buckets of at most the bucket size; a
//! leaf larger than what is left of a bucket continues in the next one.
//! So every collective is bounded (buffers, and counts MPI can hold).
//!
//! Whether a leaf goes in place depends on its signature only, so every
//! rank makes the same plan; a leaf planned in place whose memory is not
//! contiguous on this rank (an array in another order, a candle tensor)
//! travels through a copy in [`TreeBuckets::in_place`], with the same
//! collective as on the other ranks.

use std::borrow::Cow;
use std::collections::HashMap;

use pytree_std::{ByteLeaf, ByteTensor, DType, Error, Flatten, Signature, Std};

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

impl LeafSpec {
    /// Whether this leaf is reduced in its own memory when in-place
    /// buckets start at `min_bytes`: its elements are the wire's, and
    /// there are at least `min_bytes` of them.
    fn in_place(&self, min_bytes: usize) -> bool {
        let native = match self.wire {
            Wire::F32 => DType::F32,
            Wire::F64 => DType::F64,
        };
        self.dtype == native && self.elements * self.wire.bytes() >= min_bytes
    }
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
    /// What is sent of leaf `leaf`, which a segment names, and the size of
    /// one of its elements in bytes.
    fn sent(&self, leaf: usize) -> (&LeafSpec, usize) {
        let spec = self.specs[leaf]
            .as_ref()
            .expect("segments are of sent leaves");
        let size = spec.dtype.size_in_bytes();
        (spec, size.expect("float dtypes have a size"))
    }

    /// Lays out the leaves of `specs`: those of at least `in_place_bytes`
    /// whose elements are the wire's in buckets of their own, in place;
    /// the others into packed buckets; every bucket of at most
    /// `bucket_bytes` (at least one element).
    pub fn new(specs: Vec<Option<LeafSpec>>, bucket_bytes: usize, in_place_bytes: usize) -> Plan {
        let mut order: Vec<usize> = (0..specs.len()).filter(|&i| specs[i].is_some()).collect();
        let key = |i: &usize| {
            let s = specs[*i].as_ref().expect("filtered to sent leaves");
            (s.root, s.wire == Wire::F64)
        };
        order.sort_by_key(key);
        let mut buckets: Vec<Bucket> = Vec::new();
        let mut segments: Vec<Vec<Segment>> = Vec::new();
        // The packed bucket being filled (in-place ones come between).
        let mut open: Option<usize> = None;
        for i in order {
            let s = specs[i].as_ref().expect("filtered to sent leaves");
            let cap = (bucket_bytes / s.wire.bytes()).max(1);
            if s.in_place(in_place_bytes) {
                for start in (0..s.elements).step_by(cap) {
                    let len = (s.elements - start).min(cap);
                    buckets.push(Bucket {
                        wire: s.wire,
                        len,
                        root: s.root,
                        in_place: true,
                    });
                    segments.push(vec![Segment {
                        leaf: i,
                        start,
                        len,
                        offset: 0,
                    }]);
                }
                continue;
            }
            let mut start = 0;
            while start < s.elements {
                let b = match open.filter(|&b| {
                    let b = &buckets[b];
                    b.wire == s.wire && b.root == s.root && b.len < cap
                }) {
                    Some(b) => b,
                    None => {
                        buckets.push(Bucket {
                            wire: s.wire,
                            len: 0,
                            root: s.root,
                            in_place: false,
                        });
                        segments.push(Vec::new());
                        buckets.len() - 1
                    }
                };
                open = Some(b);
                let len = (cap - buckets[b].len).min(s.elements - start);
                segments[b].push(Segment {
                    leaf: i,
                    start,
                    len,
                    offset: buckets[b].len,
                });
                buckets[b].len += len;
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
pub(crate) fn load_f32(dtype: DType, bytes: &[u8], out: &mut [f32]) {
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
pub(crate) fn store_f32(dtype: DType, values: &[f32], divisor: Option<f32>, bytes: &mut [u8]) {
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

pub(crate) fn load_f64(bytes: &[u8], out: &mut [f64]) {
    for (o, c) in out.iter_mut().zip(bytes.chunks_exact(8)) {
        *o = f64::from_le_bytes(c.try_into().expect("chunks of 8"));
    }
}

pub(crate) fn store_f64(values: &[f64], divisor: Option<f64>, bytes: &mut [u8]) {
    for (c, &v) in bytes.chunks_exact_mut(8).zip(values) {
        c.copy_from_slice(&divisor.map_or(v, |d| v / d).to_le_bytes());
    }
}

/// The leaves of a tree packed into the buckets of a plan and the results
/// written back in place: into the leaf's memory where it lends it as
/// bytes ([`ByteLeaf::bytes_mut`]), else gathered per leaf and
/// copied in whole ([`ByteLeaf::copy_from_tensor`]).
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
    T::Leaf: ByteLeaf,
{
    fn buckets(&self) -> Vec<Bucket> {
        self.plan.buckets.clone()
    }

    fn fill(&mut self, k: usize, mut buf: BufMut<'_>) -> Result<(), Error> {
        let leaves = pytree_std::leaves(&*self.tree);
        for seg in &self.plan.segments[k] {
            let (spec, size) = self.plan.sent(seg.leaf);
            let range = seg.start * size..(seg.start + seg.len) * size;
            let cached = matches!(&self.read_cache, Some((i, _)) if *i == seg.leaf);
            let bytes: Cow<'_, [u8]> = if cached {
                Cow::Borrowed(&self.read_cache.as_ref().expect("checked").1[..])
            } else {
                match <T::Leaf as ByteLeaf>::bytes(&leaves[seg.leaf])? {
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
            let (spec, size) = self.plan.sent(seg.leaf);
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
            if let Some(mem) = <T::Leaf as ByteLeaf>::bytes_mut(&mut leaf) {
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
                let view = ByteTensor::new(spec.dtype, &spec.shape, &data)?;
                <T::Leaf as ByteLeaf>::write_bytes(leaf, &view)?;
            }
        }
        Ok(())
    }

    fn in_place(
        &mut self,
        k: usize,
        result: bool,
        collective: &mut dyn FnMut(BufMut<'_>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let seg = match self.plan.segments[k][..] {
            [seg] => seg,
            _ => {
                return Err(Error::custom(format!(
                    "bucket {k} is not one piece of a leaf"
                )))
            }
        };
        match self.plan.sent(seg.leaf).0.wire {
            Wire::F32 => self.reduce_piece::<f32>(k, seg, result, collective),
            Wire::F64 => self.reduce_piece::<f64>(k, seg, result, collective),
        }
    }
}

impl<T> TreeBuckets<'_, T>
where
    T: Flatten<Std>,
    T::Leaf: ByteLeaf,
{
    /// [`Buckets::in_place`] for the one piece `seg` of a leaf whose
    /// elements travel as `X`: in the leaf's own memory where it lends it
    /// (its elements in C order), else through a copy, as a packed bucket.
    fn reduce_piece<X: WireElement>(
        &mut self,
        k: usize,
        seg: Segment,
        result: bool,
        collective: &mut dyn FnMut(BufMut<'_>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let (spec, size) = self.plan.sent(seg.leaf);
        let range = seg.start * size..(seg.start + seg.len) * size;
        {
            let mut leaves = pytree_std::leaves_mut(&mut *self.tree);
            let Some(leaf) = leaves.get_mut(seg.leaf) else {
                return Err(Error::custom(format!("the tree has no leaf {}", seg.leaf)));
            };
            let lent = <T::Leaf as ByteLeaf>::bytes_mut(leaf)
                .filter(|mem| mem.len() == spec.elements * size)
                .and_then(|mem| cast_mut::<X>(&mut mem[range]));
            if let Some(xs) = lent {
                collective(X::buf_mut(&mut *xs))?;
                if let Some(d) = self.divisor.filter(|_| result) {
                    let d = X::from_count(d);
                    xs.iter_mut().for_each(|x| *x /= d);
                }
                return Ok(());
            }
        }
        // Not lendable on this rank: through a copy, as a packed bucket.
        let mut buf = vec![X::default(); seg.len];
        self.fill(k, X::buf_mut(&mut buf))?;
        collective(X::buf_mut(&mut buf))?;
        if result {
            self.drain(k, X::buf_ref(&buf))?;
        }
        Ok(())
    }
}

/// A wire's element type: `f32` or `f64` (the only impls), for which
/// every bit pattern is a value.
pub(crate) trait WireElement: Copy + Default + std::ops::DivAssign {
    /// `n` as an element (a divisor).
    fn from_count(n: usize) -> Self;
    /// `xs` as a bucket's buffer.
    fn buf_mut(xs: &mut [Self]) -> BufMut<'_>;
    /// `xs` as a bucket's result.
    fn buf_ref(xs: &[Self]) -> BufRef<'_>;
}

macro_rules! wire_element {
    ($($t:ident: $wire:ident),*) => {$(
        impl WireElement for $t {
            fn from_count(n: usize) -> $t {
                n as $t
            }
            fn buf_mut(xs: &mut [$t]) -> BufMut<'_> {
                BufMut::$wire(xs)
            }
            fn buf_ref(xs: &[$t]) -> BufRef<'_> {
                BufRef::$wire(xs)
            }
        }
    )*};
}

wire_element!(f32: F32, f64: F64);

/// `bytes` (a leaf's little-endian elements, which `bytes_mut`
/// lends only on a little-endian machine) as elements of `X`, where they
/// are aligned for them (else `None`).
pub(crate) fn cast_mut<X: WireElement>(bytes: &mut [u8]) -> Option<&mut [X]> {
    // SAFETY: `X` is `f32` or `f64`, for which every bit pattern is a
    // value (and every element's bytes are u8s), so the middle part
    // `align_to_mut` returns may be read and written as `X`s; it covers
    // the same memory as `bytes`, whose borrow it keeps. It is all of
    // `bytes` only when the head and tail are empty, which is checked.
    let (head, xs, tail) = unsafe { bytes.align_to_mut::<X>() };
    (head.is_empty() && tail.is_empty()).then_some(xs)
}

/// The signature of each leaf of `tree`, in leaf order.
pub(crate) fn signatures<T>(tree: &T) -> Result<Vec<Signature>, Error>
where
    T: Flatten<Std>,
    T::Leaf: ByteLeaf,
{
    pytree_std::leaves(tree)
        .iter()
        .map(<T::Leaf as ByteLeaf>::signature)
        .collect()
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
        let plan = Plan::new(
            vec![spec(3, Wire::F32, 0), None, spec(6, Wire::F32, 0)],
            16,
            usize::MAX,
        );
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
            usize::MAX,
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

    #[test]
    fn large_leaves_of_the_wire_s_type_are_buckets_of_their_own_in_place() {
        let f16 = Some(LeafSpec {
            dtype: DType::F16,
            shape: vec![8],
            elements: 8,
            wire: Wire::F32,
            root: 0,
        });
        // In place from 16 bytes: leaf 1 (4 x f32), leaf 3 (2 x f64), not
        // leaf 0 (3 x f32 = 12 bytes), leaf 4 (f16: 16 bytes, but not f32)
        // nor leaf 5 (1 x f32).
        let plan = Plan::new(
            vec![
                spec(3, Wire::F32, 0),
                spec(4, Wire::F32, 0),
                None,
                spec(2, Wire::F64, 0),
                f16,
                spec(1, Wire::F32, 0),
            ],
            1 << 20,
            16,
        );
        let got: Vec<(bool, Wire, usize)> = plan
            .buckets
            .iter()
            .map(|b| (b.in_place, b.wire, b.len))
            .collect();
        // The packed bucket opened by leaf 0 takes leaves 4 and 5 after
        // the in-place bucket of leaf 1.
        assert_eq!(
            got,
            [
                (false, Wire::F32, 12),
                (true, Wire::F32, 4),
                (true, Wire::F64, 2)
            ]
        );
        assert_eq!(
            plan.segments[0].iter().map(|s| s.leaf).collect::<Vec<_>>(),
            [0, 4, 5]
        );
        assert_eq!(
            plan.segments[1],
            [Segment {
                leaf: 1,
                start: 0,
                len: 4,
                offset: 0
            }]
        );
        // A leaf over the bucket size is several in-place buckets.
        let plan = Plan::new(vec![spec(11, Wire::F32, 0)], 16, 0);
        assert_eq!(
            plan.buckets
                .iter()
                .map(|b| (b.in_place, b.len))
                .collect::<Vec<_>>(),
            [(true, 4), (true, 4), (true, 3)]
        );
        assert_eq!(
            plan.segments[2],
            [Segment {
                leaf: 0,
                start: 8,
                len: 3,
                offset: 0
            }]
        );
    }

    #[test]
    fn an_in_place_bucket_lends_the_leaf_s_memory_or_a_copy_of_it() {
        use pytree_std::ndarray::{Array2, ShapeBuilder};
        use pytree_std::AnyArray;
        let values = |(i, j): (usize, usize)| (i * 3 + j) as f32;
        let c = Array2::from_shape_fn((2, 3), values).into_dyn();
        let f = Array2::from_shape_fn((2, 3).f(), values).into_dyn();
        assert!(f.as_slice().is_none());
        let mut tree = vec![AnyArray::from(c.clone()), AnyArray::from(f)];
        let memory = match &tree[0] {
            AnyArray::F32(a) => a.as_ptr(),
            _ => unreachable!(),
        };
        let spec = Some(LeafSpec {
            dtype: DType::F32,
            shape: vec![2, 3],
            elements: 6,
            wire: Wire::F32,
            root: 0,
        });
        let plan = Plan::new(vec![spec.clone(), spec], 1 << 20, 0);
        assert!(plan.buckets.iter().all(|b| b.in_place && b.len == 6));
        // A "sum over three ranks" (each value times 3), then the mean
        // over two: the leaf holds 1.5 times its values, in C order.
        let mut lent = Vec::new();
        let mut buckets = TreeBuckets::new(&mut tree, &plan, Some(2));
        for k in 0..2 {
            buckets
                .in_place(k, true, &mut |buf| {
                    let BufMut::F32(xs) = buf else {
                        panic!("an f32 bucket")
                    };
                    lent.push(xs.as_ptr());
                    assert_eq!(xs, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
                    xs.iter_mut().for_each(|x| *x *= 3.0);
                    Ok(())
                })
                .unwrap();
        }
        let want = AnyArray::from(c.mapv(|x| x * 1.5));
        assert_eq!(tree, [want.clone(), want]);
        // The C-order leaf's own memory; the Fortran-order one a copy.
        assert_eq!(lent[0], memory);
        assert_ne!(lent[1], lent[0]);
        // No result on this rank: nothing divided, nothing written back.
        let mut buckets = TreeBuckets::new(&mut tree, &plan, Some(2));
        for k in 0..2 {
            buckets
                .in_place(k, false, &mut |buf| {
                    if let BufMut::F32(xs) = buf {
                        xs.iter_mut().for_each(|x| *x = -1.0);
                    }
                    Ok(())
                })
                .unwrap();
        }
        // (The collective wrote into the lent memory itself; a copy's
        // writes are dropped.)
        assert_eq!(tree[0], AnyArray::from(c.mapv(|_| -1.0f32)));
        assert_eq!(tree[1], AnyArray::from(c.mapv(|x| x * 1.5)));
    }
}
