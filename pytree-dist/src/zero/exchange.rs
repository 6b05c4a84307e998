//! [`ShardBuckets`]: the [`Buckets`] of ZeRO's two collectives over a
//! [`Layout`](super::layout::Layout): the gradients' reduce-scatter, packed
//! from the whole tree and drained into this rank's flat shard (averaged),
//! and the parameters' all-gather, filled from the flat shard and drained
//! into the whole tree. The tree side is [`TreeBuckets`]'s (the same
//! packing as every other collective of the crate); the shard side is
//! the shard tree's own leaves where each lends its memory (no copy
//! between a flat buffer and the leaves), else flat buffers.

use std::ops::Range;

use pytree_std::{ByteLeaf, DType, Error, Flatten, Std};

use crate::backend::{Bucket, Buckets, BufMut, BufRef, Flow, Wire};
use crate::plan::{load_f32, load_f64, store_f32, store_f64, Plan, TreeBuckets};

/// This rank's flat shards, one per wire type: its parts of the buckets,
/// end to end in bucket order.
#[derive(Clone, Debug, Default)]
pub(crate) struct Flats {
    pub f32: Vec<f32>,
    pub f64: Vec<f64>,
}

/// Where this rank's elements live on the shard's side of an exchange.
pub(crate) enum ShardSide<'a, T> {
    /// In flat buffers, one per wire type.
    Flat(&'a mut Flats),
    /// In the shard's own leaves (each split leaf lends its memory, in C
    /// order): `slots` says which leaf holds which run of the flat shard.
    Leaves { shard: &'a mut T, slots: &'a [Slot] },
}

/// One split leaf of a shard tree in this rank's flat shard of its wire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Slot {
    pub leaf: usize,
    pub wire: Wire,
    pub dtype: DType,
    /// Its elements' place in the flat shard.
    pub flat: Range<usize>,
}

/// A [`Flow::SumScatter`] (`tree` → the shard, divided by `divisor`) or
/// a [`Flow::Gather`] (the shard → `tree`) over the buckets of `plan`.
pub(crate) struct ShardBuckets<'a, T: Flatten<Std>> {
    tree: TreeBuckets<'a, T>,
    side: ShardSide<'a, T>,
    /// By bucket: where this rank's part starts in its flat shard.
    starts: &'a [usize],
    flow: Flow,
    divisor: Option<usize>,
}

impl<'a, T: Flatten<Std>> ShardBuckets<'a, T> {
    pub fn new(
        flow: Flow,
        tree: &'a mut T,
        plan: &'a Plan,
        side: ShardSide<'a, T>,
        starts: &'a [usize],
        divisor: Option<usize>,
    ) -> Self {
        debug_assert!(flow.scatters());
        ShardBuckets {
            tree: TreeBuckets::new(tree, plan, None),
            side,
            starts,
            flow,
            divisor,
        }
    }
}

/// The slots of `wire` that overlap `flat`, each with the overlap (in
/// flat coordinates).
fn overlapping<'s>(
    slots: &'s [Slot],
    wire: Wire,
    flat: Range<usize>,
) -> impl Iterator<Item = (&'s Slot, Range<usize>)> + 's {
    slots.iter().filter_map(move |s| {
        let (lo, hi) = (s.flat.start.max(flat.start), s.flat.end.min(flat.end));
        (s.wire == wire && lo < hi).then_some((s, lo..hi))
    })
}

/// `flat[start..start + len]`, or an error naming bucket `k`.
fn window<X>(flat: &mut [X], start: usize, len: usize, k: usize) -> Result<&mut [X], Error> {
    let total = flat.len();
    flat.get_mut(start..start + len).ok_or_else(|| {
        Error::custom(format!(
            "bucket {k}: its part ({len} elements at {start}) is outside the flat shard of {total}"
        ))
    })
}

impl<T> Buckets for ShardBuckets<'_, T>
where
    T: Flatten<Std>,
    T::Leaf: ByteLeaf,
{
    fn buckets(&self) -> Vec<Bucket> {
        self.tree.plan.buckets.clone()
    }

    fn fill(&mut self, k: usize, buf: BufMut<'_>) -> Result<(), Error> {
        if self.flow != Flow::Gather {
            return self.tree.fill(k, buf);
        }
        let start = self.starts[k];
        match (&mut self.side, buf) {
            (ShardSide::Flat(flats), BufMut::F32(b)) => {
                b.copy_from_slice(window(&mut flats.f32, start, b.len(), k)?)
            }
            (ShardSide::Flat(flats), BufMut::F64(b)) => {
                b.copy_from_slice(window(&mut flats.f64, start, b.len(), k)?)
            }
            (ShardSide::Leaves { shard, slots }, mut buf) => {
                let (wire, len) = match &buf {
                    BufMut::F32(b) => (Wire::F32, b.len()),
                    BufMut::F64(b) => (Wire::F64, b.len()),
                };
                let leaves = pytree_std::leaves(&**shard);
                for (slot, o) in overlapping(slots, wire, start..start + len) {
                    let size = slot.dtype.size_in_bytes().unwrap_or(0);
                    let bytes = <T::Leaf as ByteLeaf>::bytes(&leaves[slot.leaf])?;
                    let at = (o.start - slot.flat.start) * size..(o.end - slot.flat.start) * size;
                    let src = bytes.get(at).ok_or_else(|| {
                        Error::custom(format!(
                            "zero1: leaf {} of the shard is shorter than its part",
                            slot.leaf
                        ))
                    })?;
                    let dst = o.start - start..o.end - start;
                    match &mut buf {
                        BufMut::F32(b) => load_f32(slot.dtype, src, &mut b[dst]),
                        BufMut::F64(b) => load_f64(src, &mut b[dst]),
                    }
                }
            }
        }
        Ok(())
    }

    fn drain(&mut self, k: usize, buf: BufRef<'_>) -> Result<(), Error> {
        if self.flow != Flow::SumScatter {
            return self.tree.drain(k, buf);
        }
        let start = self.starts[k];
        // The division of a mean, as `all_reduce_mean` divides each sum.
        match (&mut self.side, buf) {
            (ShardSide::Flat(flats), BufRef::F32(b)) => {
                let out = window(&mut flats.f32, start, b.len(), k)?;
                match self.divisor {
                    Some(d) => {
                        let d = d as f32;
                        out.iter_mut().zip(b).for_each(|(o, &v)| *o = v / d);
                    }
                    None => out.copy_from_slice(b),
                }
            }
            (ShardSide::Flat(flats), BufRef::F64(b)) => {
                let out = window(&mut flats.f64, start, b.len(), k)?;
                match self.divisor {
                    Some(d) => {
                        let d = d as f64;
                        out.iter_mut().zip(b).for_each(|(o, &v)| *o = v / d);
                    }
                    None => out.copy_from_slice(b),
                }
            }
            (ShardSide::Leaves { shard, slots }, buf) => {
                let (wire, len) = match buf {
                    BufRef::F32(b) => (Wire::F32, b.len()),
                    BufRef::F64(b) => (Wire::F64, b.len()),
                };
                let mut leaves = pytree_std::leaves_mut(&mut **shard);
                for (slot, o) in overlapping(slots, wire, start..start + len) {
                    let size = slot.dtype.size_in_bytes().unwrap_or(0);
                    let leaf = leaves.get_mut(slot.leaf).ok_or_else(|| {
                        Error::custom(format!("zero1: the shard has no leaf {}", slot.leaf))
                    })?;
                    let mem = <T::Leaf as ByteLeaf>::bytes_mut(leaf).ok_or_else(|| {
                        Error::custom(format!(
                            "zero1: leaf {} of the shard lends no memory",
                            slot.leaf
                        ))
                    })?;
                    let at = (o.start - slot.flat.start) * size..(o.end - slot.flat.start) * size;
                    let dst = mem.get_mut(at).ok_or_else(|| {
                        Error::custom(format!(
                            "zero1: leaf {} of the shard is shorter than its part",
                            slot.leaf
                        ))
                    })?;
                    let src = o.start - start..o.end - start;
                    match buf {
                        BufRef::F32(b) => {
                            store_f32(slot.dtype, &b[src], self.divisor.map(|d| d as f32), dst)
                        }
                        BufRef::F64(b) => store_f64(&b[src], self.divisor.map(|d| d as f64), dst),
                    }
                }
            }
        }
        Ok(())
    }
}
