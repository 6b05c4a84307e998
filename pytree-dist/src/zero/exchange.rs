//! [`ShardBuckets`]: the [`Buckets`] of ZeRO's two collectives over a
//! [`Layout`](super::layout::Layout): the gradients' reduce-scatter, packed
//! from the whole tree and drained into this rank's flat shard (averaged),
//! and the parameters' all-gather, filled from the flat shard and drained
//! into the whole tree. The tree side is [`TreeBuckets`]'s (the same
//! packing as every other collective of the crate); the shard side is
//! the shard tree's own leaves where each lends its memory (no copy
//! between a flat buffer and the leaves), else flat buffers.

use std::ops::{Div, Range};

use pytree_std::{ByteLeaf, DType, Error, Flatten, Std};

use super::Split;
use crate::backend::{Bucket, Buckets, BufMut, BufRef, Direct, Flow, Wire};
use crate::plan::{cast_mut, load_f32, load_f64, store_f32, store_f64, TreeBuckets};

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

impl Slot {
    /// Where `part` (a run of the flat shard inside this slot's) lies in
    /// the bytes of the leaf, or an error where the leaf's `len` bytes
    /// end before it.
    fn part_of(&self, part: &Range<usize>, len: usize) -> Result<Range<usize>, Error> {
        let size = self.dtype.size_in_bytes().unwrap_or(0);
        let at = (part.start - self.flat.start) * size..(part.end - self.flat.start) * size;
        if at.end > len {
            return Err(Error::custom(format!(
                "zero1: leaf {} of the shard is shorter than its part",
                self.leaf
            )));
        }
        Ok(at)
    }
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
    /// This rank, and the number of ranks (the parts of a bucket).
    rank: usize,
    ranks: usize,
}

impl<'a, T: Flatten<Std>> ShardBuckets<'a, T> {
    /// The exchange of `rank` over `split`'s layout.
    pub fn new(
        flow: Flow,
        tree: &'a mut T,
        split: &'a Split,
        rank: usize,
        side: ShardSide<'a, T>,
        divisor: Option<usize>,
    ) -> Self {
        debug_assert!(flow.scatters());
        ShardBuckets {
            tree: TreeBuckets::new(tree, &split.layout.plan, None),
            side,
            starts: &split.starts,
            flow,
            divisor,
            rank,
            ranks: split.layout.ranks,
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

/// `bytes` (a leaf's memory, lent only on a little-endian machine) as
/// elements of `dtype` where they are the wire's own (`f32`, `f64`) and
/// aligned for it; else `None`.
fn as_wire(bytes: &mut [u8], dtype: DType) -> Option<BufMut<'_>> {
    match dtype {
        DType::F32 => cast_mut::<f32>(bytes).map(BufMut::F32),
        DType::F64 => cast_mut::<f64>(bytes).map(BufMut::F64),
        _ => None,
    }
}

/// Memory cut from the front in order: the next run of `len` elements
/// that starts at element `at` (the elements before it, from the last cut
/// on, are skipped), or `None` if `at` lies behind the last cut or past
/// the end, or the memory is not of `wire`.
struct Cutter<'m> {
    rest: Option<BufMut<'m>>,
    at: usize,
}

impl<'m> Cutter<'m> {
    fn new(mem: Option<BufMut<'m>>) -> Self {
        Cutter { rest: mem, at: 0 }
    }

    fn cut(&mut self, wire: Wire, at: usize, len: usize) -> Option<BufMut<'m>> {
        let skip = at.checked_sub(self.at)?;
        let run = match self.rest.take()? {
            BufMut::F32(s) if wire == Wire::F32 && skip + len <= s.len() => {
                let (run, rest) = s[skip..].split_at_mut(len);
                self.rest = Some(BufMut::F32(rest));
                BufMut::F32(run)
            }
            BufMut::F64(s) if wire == Wire::F64 && skip + len <= s.len() => {
                let (run, rest) = s[skip..].split_at_mut(len);
                self.rest = Some(BufMut::F64(rest));
                BufMut::F64(run)
            }
            _ => return None,
        };
        self.at = at + len;
        Some(run)
    }
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

/// `out = b / divisor` elementwise (a mean), or a copy of `b` without
/// a divisor.
#[inline]
fn divide_into<X: Copy + Div<Output = X>>(out: &mut [X], b: &[X], divisor: Option<X>) {
    match divisor {
        Some(d) => out.iter_mut().zip(b).for_each(|(o, &v)| *o = v / d),
        None => out.copy_from_slice(b),
    }
}

impl<T> Buckets for ShardBuckets<'_, T>
where
    T: Flatten<Std>,
    T::Leaf: ByteLeaf,
{
    fn buckets(&self) -> Vec<Bucket> {
        self.tree.plan.buckets.clone()
    }

    fn direct(
        &mut self,
        collective: &mut dyn FnMut(Option<Direct<'_>>) -> Result<bool, Error>,
    ) -> Result<bool, Error> {
        let plan = self.tree.plan;
        let (rank, ranks) = (self.rank, self.ranks);
        // The tree's leaves as their wire's elements, where they are.
        let mut tree = pytree_std::leaves_mut(&mut *self.tree.tree);
        let mut leaves: Vec<Cutter<'_>> = tree
            .iter_mut()
            .enumerate()
            .map(|(i, leaf)| {
                let dtype = plan.specs.get(i)?.as_ref()?.dtype;
                as_wire(<T::Leaf as ByteLeaf>::bytes_mut(leaf)?, dtype)
            })
            .map(Cutter::new)
            .collect();
        // This rank's side: the shard's leaves by leaf, or the two flats.
        let mut shard_slots;
        let mut shard_leaves: Vec<Cutter<'_>> = Vec::new();
        let mut flat_runs = [Cutter::new(None), Cutter::new(None)];
        let slot_of: Vec<Option<&Slot>> = match &mut self.side {
            ShardSide::Leaves { shard, slots } => {
                let slot_of: Vec<Option<&Slot>> = (0..plan.specs.len())
                    .map(|i| slots.iter().find(|s| s.leaf == i))
                    .collect();
                shard_slots = pytree_std::leaves_mut(&mut **shard);
                shard_leaves = shard_slots
                    .iter_mut()
                    .zip(&slot_of)
                    .map(|(leaf, slot)| {
                        as_wire(<T::Leaf as ByteLeaf>::bytes_mut(leaf)?, (*slot)?.dtype)
                    })
                    .map(Cutter::new)
                    .collect();
                slot_of
            }
            ShardSide::Flat(flats) => {
                flat_runs = [
                    Cutter::new(Some(BufMut::F32(&mut flats.f32))),
                    Cutter::new(Some(BufMut::F64(&mut flats.f64))),
                ];
                Vec::new()
            }
        };
        let mut lent = || -> Option<Direct<'_>> {
            let mut whole = Vec::with_capacity(plan.buckets.len());
            let mut part = Vec::with_capacity(plan.buckets.len());
            for (k, b) in plan.buckets.iter().enumerate() {
                let mine = b.part(rank, ranks);
                let mut runs = Vec::new();
                let mut own = Vec::new();
                for seg in &plan.segments[k] {
                    runs.push(leaves.get_mut(seg.leaf)?.cut(b.wire, seg.start, seg.len)?);
                    // The segment's elements in this rank's part.
                    let end = seg.offset + seg.len;
                    let (lo, hi) = (seg.offset.max(mine.start), end.min(mine.end));
                    if lo >= hi {
                        continue;
                    }
                    // Its elements in this rank's flat shard.
                    let flat = self.starts[k] + (lo - mine.start);
                    let run = match slot_of.get(seg.leaf) {
                        Some(Some(slot)) => {
                            let at = flat.checked_sub(slot.flat.start)?;
                            shard_leaves.get_mut(seg.leaf)?.cut(b.wire, at, hi - lo)?
                        }
                        Some(None) => return None,
                        None => flat_runs[usize::from(b.wire == Wire::F64)].cut(
                            b.wire,
                            flat,
                            hi - lo,
                        )?,
                    };
                    own.push(run);
                }
                whole.push(runs);
                part.push(own);
            }
            Some(Direct {
                whole,
                part,
                divisor: self.divisor,
            })
        };
        let direct = lent();
        collective(direct)
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
                    let bytes = <T::Leaf as ByteLeaf>::bytes(&leaves[slot.leaf])?;
                    let src = &bytes[slot.part_of(&o, bytes.len())?];
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
                divide_into(out, b, self.divisor.map(|d| d as f32));
            }
            (ShardSide::Flat(flats), BufRef::F64(b)) => {
                let out = window(&mut flats.f64, start, b.len(), k)?;
                divide_into(out, b, self.divisor.map(|d| d as f64));
            }
            (ShardSide::Leaves { shard, slots }, buf) => {
                let (wire, len) = match buf {
                    BufRef::F32(b) => (Wire::F32, b.len()),
                    BufRef::F64(b) => (Wire::F64, b.len()),
                };
                let mut leaves = pytree_std::leaves_mut(&mut **shard);
                for (slot, o) in overlapping(slots, wire, start..start + len) {
                    let leaf = leaves.get_mut(slot.leaf).ok_or_else(|| {
                        Error::custom(format!("zero1: the shard has no leaf {}", slot.leaf))
                    })?;
                    let mem = <T::Leaf as ByteLeaf>::bytes_mut(leaf).ok_or_else(|| {
                        Error::custom(format!(
                            "zero1: leaf {} of the shard lends no memory",
                            slot.leaf
                        ))
                    })?;
                    let at = slot.part_of(&o, mem.len())?;
                    let dst = &mut mem[at];
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
