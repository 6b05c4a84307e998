//! The walks that the provided methods of `Flatten` and `Unflatten` and
//! every operation are built from: flatten, unflatten, structure, leaves,
//! leaves_mut, num_leaves, each generic over the namespace `Ns`. They are
//! public as `pytree_core::ops::basic::*` and
//! `pytree_core::ops::reduce::num_leaves` (`pytree_std` re-exports them
//! with `Ns` fixed to the std namespace marker `pytree_std::Std`).

use alloc::vec::Vec;

use super::unwind::Unwinding;
use super::{Flatten, Unflatten};
use crate::error::Error;
use crate::leaf::{LeafMut, LeafRef};
use crate::paths::key_path::KeyRef;
use crate::sources::def_source::DefSource;
use crate::sources::trusted::TrustedSource;
use crate::static_data::StaticValue;
use crate::traits::visit::{visit_either, Sink, Stored, Visit};
use crate::treedef::node::NodeRef;
use crate::treedef::{type_key, TreeDef, TreeDefBuilder};
/// Bytes reserved up front for flatten's leaves and for its records: fewer
/// reallocations while they grow (glibc's `realloc` was a quarter of the
/// instructions of flattening T1); the records are trimmed to size by
/// `TreeDefBuilder::finish`.
const INITIAL_BYTES: usize = 1024;

/// The most bytes that one extrapolation from a sequence's first element
/// reserves (for leaves, and again for records), should the elements not
/// be alike; beyond it the `Vec`s grow as usual.
const MAX_RESERVE_BYTES: usize = 256 * 1024;

/// Room for `times + 1` more of `each`, the `+ 1` for what follows the
/// sequence (a closing field or two), at most `MAX_RESERVE_BYTES`.
fn extrapolate(each: usize, times: usize, size: usize) -> usize {
    let cap = MAX_RESERVE_BYTES / size.max(1);
    each.saturating_mul(times.saturating_add(1)).min(cap)
}

/// Collects leaves by value and the TreeDef. A leaf is one push onto
/// `leaves`: the TreeDef learns of the leaves since its last record from
/// the length of `leaves`, when the next node (or the end) comes.
struct FlattenSink<L> {
    leaves: Vec<L>,
    /// Leaves to make room for at the first push (the tree's
    /// `leaf_count_hint`, at least `INITIAL_BYTES` of them), reserved then
    /// and not up front: a tree that hands over a whole `Vec` of leaves
    /// (`Sink::leaf_vec`, a `Vec<f64>`) allocates nothing for them, its
    /// buffer becomes the leaves.
    want: usize,
    /// How many of `leaves` the TreeDef's records already count.
    recorded: usize,
    def: TreeDefBuilder,
}

impl<L> FlattenSink<L> {
    fn finish(self) -> (Vec<L>, TreeDef) {
        let num_leaves = self.leaves.len();
        let def = self
            .def
            .finish_after_leaves(num_leaves - self.recorded, num_leaves);
        (self.leaves, def)
    }

    /// Room for the next leaf: the first time, `want` leaves in all; then
    /// as `Vec::push` grows.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        if self.leaves.capacity() == 0 {
            self.leaves = Vec::with_capacity(core::mem::take(&mut self.want).max(1));
        } else {
            let want = core::mem::take(&mut self.want).saturating_sub(self.leaves.len());
            self.leaves.reserve(want.max(1));
        }
    }
}

impl<L> Sink<L> for FlattenSink<L> {
    #[inline]
    fn leaf(&mut self, leaf: L) {
        let len = self.leaves.len();
        if len == self.leaves.capacity() {
            self.grow();
        }
        // SAFETY: `grow` left room for at least one more leaf (it reserves
        // one or more), so `len < capacity`: the slot at `len` is
        // allocated and unused, and `len + 1` leaves are initialized after
        // the write. (`Vec::push` would check the capacity a second time.)
        unsafe {
            self.leaves.as_mut_ptr().add(len).write(leaf);
            self.leaves.set_len(len + 1);
        }
    }
    #[inline]
    fn leaf_vec(&mut self, mut leaves: Vec<L>) {
        if self.leaves.is_empty() {
            core::mem::swap(&mut self.leaves, &mut leaves);
        } else {
            self.leaves.append(&mut leaves);
        }
    }
    #[inline(always)]
    fn node(&mut self, node: NodeRef<'_>) {
        let len = self.leaves.len();
        self.def.node_after_leaves(len - self.recorded, node);
        self.recorded = len;
    }
    fn map_keys<F: FnOnce() -> StaticValue>(&mut self, keys: F) {
        self.def.map_keys(keys());
    }
    /// Leaves, and records counting a pending run of leaves as the record
    /// it will be.
    #[inline(always)]
    fn stored(&self) -> Stored {
        let len = self.leaves.len();
        Stored {
            leaves: len,
            records: self.def.records_written() + usize::from(len > self.recorded),
        }
    }
    /// Reserves for the rest of a sequence as many leaves and records as
    /// its first element took (so a `Vec` of like structs grows its
    /// buffers once, not at each doubling).
    #[inline]
    fn reserve_like(&mut self, since: Stored, times: usize) {
        let now = self.stored();
        let leaves = extrapolate(now.leaves - since.leaves, times, core::mem::size_of::<L>());
        let records = extrapolate(now.records - since.records, times, 16);
        self.leaves.reserve_exact(leaves);
        self.def.reserve(records);
    }
    /// Writes the records of the rest of a sequence of uniform elements as
    /// copies of the first element's, and reserves their leaves: they then
    /// arrive as leaves only, a push each. Declined when the first element
    /// wrote no record of its own (a leaf behind a box: its copies would
    /// have to merge into one run) or counts do not fit.
    #[inline]
    fn repeat_like(&mut self, since: Stored, times: usize, each: usize) -> Option<&mut Vec<L>> {
        let len = self.leaves.len();
        if self.def.records_written() <= since.records || len - since.leaves != each {
            return None;
        }
        let total = each.checked_mul(times)?;
        let run = len - self.recorded;
        self.def.repeat_records_since(since.records, run, times);
        self.leaves.reserve_exact(total);
        // The records count the leaves to come but the last copy's
        // trailing run, which stays pending like the first one's was.
        self.recorded = len + total - run;
        Some(&mut self.leaves)
    }
}

/// Builds a TreeDef from a borrowed tree.
struct StructureVisitor {
    def: TreeDefBuilder,
}

impl<R> Visit<R> for StructureVisitor {
    #[inline]
    fn leaf(&mut self, _leaf: R) {
        self.def.leaf();
    }
    #[inline]
    fn leaf_run<I: ExactSizeIterator<Item = R>>(&mut self, leaves: I) {
        self.def.leaves(leaves.len());
    }
    #[inline]
    fn node(&mut self, node: NodeRef<'_>) {
        self.def.node(node);
    }
    fn map_keys<F: FnOnce() -> StaticValue>(&mut self, keys: F) {
        self.def.map_keys(keys());
    }
}

/// Collects lent leaves (by reference or by mutable reference).
struct LeavesVisitor<R> {
    out: Vec<R>,
}

visit_either!(impl<R> for LeavesVisitor<R> {
    #[inline]
    fn leaf(&mut self, leaf: R) {
        self.out.push(leaf);
    }
    #[inline]
    fn leaf_run<I: ExactSizeIterator<Item = R>>(&mut self, leaves: I) {
        self.out.extend(leaves);
    }
    #[inline]
    fn reserve_leaves(&mut self, n: usize) {
        self.out.reserve(n);
    }
} visit_only {
    #[inline]
    fn leaf_entries<'k, I: ExactSizeIterator<Item = (KeyRef<'k>, R)>>(&mut self, entries: I) {
        // Written into the spare capacity with the count in a register
        // (`extend` keeps the `Vec`'s length in memory and checks the
        // capacity per entry: 2.4x the hand-written `values().collect()` on
        // an `IndexMap`, BENCHMARKS.md). An iterator that yields more than
        // its `len()` says gets the rest pushed one by one.
        let mut entries = entries.map(|(_, leaf)| leaf);
        self.out.reserve(entries.len());
        let spare = self.out.spare_capacity_mut();
        let mut written = 0;
        for (slot, leaf) in spare.iter_mut().zip(entries.by_ref()) {
            slot.write(leaf);
            written += 1;
        }
        let len = self.out.len() + written;
        // SAFETY: the `written` slots after the old length were initialized
        // just above, in order, and lie within the capacity (they come from
        // `spare_capacity_mut`). If the iterator panicked, this line is not
        // reached and the values written are leaked, never dropped twice.
        unsafe { self.out.set_len(len) };
        self.out.extend(entries);
    }
});

/// Counts leaves.
struct Count(usize);

impl<R> Visit<R> for Count {
    #[inline]
    fn leaf(&mut self, _leaf: R) {
        self.0 += 1;
    }
    #[inline]
    fn leaf_run<I: ExactSizeIterator<Item = R>>(&mut self, leaves: I) {
        self.0 += leaves.len();
    }
}

/// `pytree_std::walk::flatten` for any namespace `Ns` (documented there;
/// [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// let (leaves, def) = pytree_core::ops::basic::flatten::<pytree_std::Std, _>(vec![1.0, 2.0]);
/// assert_eq!(leaves, [1.0, 2.0]);
/// assert_eq!(def.to_string(), "[*, *]");
/// ```
pub fn flatten<Ns, T: Flatten<Ns>>(tree: T) -> (Vec<T::Leaf>, TreeDef) {
    let hint = tree.leaf_count_hint();
    let mut sink = FlattenSink {
        leaves: Vec::new(),
        want: hint.max(INITIAL_BYTES / core::mem::size_of::<T::Leaf>().max(1)),
        recorded: 0,
        def: TreeDefBuilder::with_capacity(INITIAL_BYTES / 16),
    };
    tree.flatten_into(&mut sink);
    sink.finish()
}

/// `pytree_std::walk::unflatten` for any namespace `Ns` (documented there;
/// [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// let def = pytree_std::structure(&(0, 0));
/// let t: (i32, i32) = pytree_core::ops::basic::unflatten::<pytree_std::Std, _, _>(&def, [1, 2])?;
/// assert_eq!(t, (1, 2));
/// let err = pytree_core::ops::basic::unflatten::<pytree_std::Std, (i32, i32), _>(&def, [1, 2, 3]).unwrap_err();
/// assert_eq!(err.to_string(), "at <root>: too many leaves for TreeDef: expected 2, got 3");
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn unflatten<Ns, T, I>(def: &TreeDef, leaves: I) -> Result<T, Error>
where
    T: Unflatten<Ns>,
    I: IntoIterator<Item = T::Leaf>,
{
    let key = type_key::<Ns, T>();
    let leaves = leaves.into_iter();
    // The value built is held in a guard until the source is finished: too
    // many leaves drops it with a walk (`unwind.rs`), however deep it is.
    if def.is_checked_for(key) && leaves.size_hint() == (def.num_leaves(), Some(def.num_leaves())) {
        let mut source = TrustedSource::new(def, leaves);
        let value = Unwinding::tree::<Ns>(T::unflatten_from(&mut source)?);
        source.finish()?;
        return Ok(value.take());
    }
    let mut source = DefSource::new(def, leaves);
    let value = Unwinding::tree::<Ns>(T::unflatten_from(&mut source)?);
    source.finish()?;
    if source.trustable() {
        def.set_checked_for(key);
    }
    Ok(value.take())
}

/// [`unflatten`], or, for a type that a TreeDef alone cannot build (its
/// `unflatten_from` answers [`ErrorKind::NeedsTemplate`](crate::ErrorKind::NeedsTemplate)
/// before taking a leaf), `like` (a tree of `def`'s structure) rebuilt
/// around `leaves` through its `zip_with_prechecked`. For every other type
/// it is `unflatten`, with its checks and errors.
///
/// ```
/// use pytree_core::ops::basic::{structure, unflatten_like};
/// let like = vec![(1, 2)];
/// let t: Vec<(i32, i32)> = unflatten_like::<pytree_std::Std, _>(&structure::<pytree_std::Std, _>(&like), &like, vec![3, 4])?;
/// assert_eq!(t, [(3, 4)]);
/// # Ok::<(), pytree_core::Error>(())
/// ```
pub fn unflatten_like<Ns, T>(def: &TreeDef, like: &T, leaves: Vec<T::Leaf>) -> Result<T, Error>
where
    T: Unflatten<Ns>,
{
    /// Takes each leaf out of its slot, leaving the slots of the leaves
    /// not taken full.
    struct Taking<'a, L>(core::slice::IterMut<'a, Option<L>>);
    impl<L> Iterator for Taking<'_, L> {
        type Item = L;
        fn next(&mut self) -> Option<L> {
            self.0.next()?.take()
        }
        fn size_hint(&self) -> (usize, Option<usize>) {
            self.0.size_hint()
        }
    }
    let mut slots: Vec<Option<T::Leaf>> = leaves.into_iter().map(Some).collect();
    let built = unflatten::<Ns, T, _>(def, Taking(slots.iter_mut()));
    match built {
        Err(e)
            if matches!(e.kind(), crate::error::ErrorKind::NeedsTemplate(_))
                && slots.iter().all(Option::is_some)
                && structure::<Ns, T>(like) == *def =>
        {
            let mut leaves = slots.into_iter().flatten();
            Ok(
                like.zip_with_prechecked([], &mut |_, []| match leaves.next() {
                    Some(leaf) => leaf,
                    // As many leaves as `def` has, and `like` has `def`'s
                    // structure: its walk visits that many.
                    None => panic!(
                        "a zip_with_prechecked walk visited more leaves than its TreeDef has"
                    ),
                }),
            )
        }
        other => other,
    }
}

/// `pytree_std::walk::structure` for any namespace `Ns` (documented there;
/// [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// assert_eq!(pytree_core::ops::basic::structure::<pytree_std::Std, _>(&Some((1, 2))).to_string(), "Some((*, *))");
/// ```
pub fn structure<Ns, T: Flatten<Ns>>(tree: &T) -> TreeDef {
    let mut v = StructureVisitor {
        def: TreeDefBuilder::new(),
    };
    tree.visit(&mut v);
    v.def.build()
}

/// `pytree_std::walk::leaves` for any namespace `Ns` (documented there;
/// [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// assert_eq!(pytree_core::ops::basic::leaves::<pytree_std::Std, _>(&(1, [2, 3])), [&1, &2, &3]);
/// ```
pub fn leaves<Ns, T: Flatten<Ns>>(tree: &T) -> Vec<LeafRef<'_, Ns, T::Leaf>> {
    let mut v = LeavesVisitor {
        out: Vec::with_capacity(tree.leaf_count_hint()),
    };
    tree.visit(&mut v);
    v.out
}

/// `pytree_std::walk::leaves_mut` for any namespace `Ns` (documented there;
/// [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// let mut t = (1.0f32, vec![2.0f32, 3.0]);
/// let mut all = pytree_core::ops::basic::leaves_mut::<pytree_std::Std, _>(&mut t);
/// let (first, rest) = all.split_at_mut(1);
/// *first[0] += *rest[1]; // two leaves at once
/// assert_eq!(t.0, 4.0);
/// ```
pub fn leaves_mut<Ns, T: Flatten<Ns>>(tree: &mut T) -> Vec<LeafMut<'_, Ns, T::Leaf>> {
    let mut v = LeavesVisitor {
        out: Vec::with_capacity(tree.leaf_count_hint()),
    };
    tree.visit_mut(&mut v);
    v.out
}

/// The number of leaves, for any namespace `Ns`
/// ([`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// assert_eq!(pytree_core::ops::reduce::num_leaves::<pytree_std::Std, _>(&(1, vec![2, 3], None::<i32>)), 3);
/// ```
pub fn num_leaves<Ns, T: Flatten<Ns>>(tree: &T) -> usize {
    let mut v = Count(0);
    tree.visit(&mut v);
    v.0
}
