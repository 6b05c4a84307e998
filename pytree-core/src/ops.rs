//! The basic operations, generic over the namespace `Ns`: flatten,
//! unflatten, structure, leaves, map, map_into, for_each, for_each_mut.
//! `pytree_std` re-exports them with `Ns` fixed to `Std`.

use alloc::vec::Vec;

use crate::error::Error;
use crate::flatten::{Flatten, Unflatten};
use crate::leaf::{LeafMut, LeafRef};
use crate::source::DefSource;
use crate::static_data::StaticValue;
use crate::treedef::{type_key, TreeDef, TreeDefBuilder};
use crate::trusted_source::TrustedSource;
use crate::visit::{NodeRef, Sink, Visit, VisitMut};

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
}

impl<L> Sink<L> for FlattenSink<L> {
    #[inline]
    fn leaf(&mut self, leaf: L) {
        self.leaves.push(leaf);
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
    fn stored(&self) -> (usize, usize) {
        let len = self.leaves.len();
        let records = self.def.records_written() + usize::from(len > self.recorded);
        (len, records)
    }
    /// Reserves for the rest of a sequence as many leaves and records as
    /// its first element took (so a `Vec` of like structs grows its
    /// buffers once, not at each doubling).
    #[inline]
    fn reserve_like(&mut self, since: (usize, usize), times: usize) {
        let (leaves, records) = self.stored();
        let leaves = extrapolate(leaves - since.0, times, core::mem::size_of::<L>());
        let records = extrapolate(records - since.1, times, 16);
        self.leaves.reserve_exact(leaves);
        self.def.reserve(records);
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

impl<R> Visit<R> for LeavesVisitor<R> {
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
}

impl<M> VisitMut<M> for LeavesVisitor<M> {
    #[inline]
    fn leaf(&mut self, leaf: M) {
        self.out.push(leaf);
    }
    #[inline]
    fn leaf_run<I: ExactSizeIterator<Item = M>>(&mut self, leaves: I) {
        self.out.extend(leaves);
    }
    #[inline]
    fn reserve_leaves(&mut self, n: usize) {
        self.out.reserve(n);
    }
}

/// Calls a closure on each lent leaf (by reference or by mutable
/// reference).
struct ForEach<F>(F);

impl<R, F: FnMut(R)> Visit<R> for ForEach<F> {
    #[inline]
    fn leaf(&mut self, leaf: R) {
        (self.0)(leaf);
    }
    #[inline]
    fn leaf_run<I: ExactSizeIterator<Item = R>>(&mut self, leaves: I) {
        leaves.for_each(&mut self.0);
    }
}

impl<M, F: FnMut(M)> VisitMut<M> for ForEach<F> {
    #[inline]
    fn leaf(&mut self, leaf: M) {
        (self.0)(leaf);
    }
    #[inline]
    fn leaf_run<I: ExactSizeIterator<Item = M>>(&mut self, leaves: I) {
        leaves.for_each(&mut self.0);
    }
}

/// Splits a tree into its leaves (pre-order) and its [`TreeDef`].
///
/// ```
/// let (leaves, def) = pytree_core::flatten::<pytree_std::Std, _>(vec![(1, 2), (3, 4)]);
/// assert_eq!(leaves, [1, 2, 3, 4]);
/// assert_eq!(def.to_string(), "[(*, *), (*, *)]");
/// ```
pub fn flatten<Ns, T: Flatten<Ns>>(tree: T) -> (Vec<T::Leaf>, TreeDef) {
    let hint = tree.leaf_count_hint();
    let mut sink = FlattenSink {
        leaves: Vec::with_capacity(
            hint.max(INITIAL_BYTES / core::mem::size_of::<T::Leaf>().max(1)),
        ),
        recorded: 0,
        def: TreeDefBuilder::with_capacity(INITIAL_BYTES / 16),
    };
    tree.flatten_into(&mut sink);
    sink.finish()
}

/// Rebuilds a tree of type `T` from a [`TreeDef`] and its leaves.
///
/// Errors (with the key path): too few or too many leaves, or a TreeDef that
/// does not describe a `T`.
///
/// The first call for a TreeDef and a type checks every record against the
/// type; when it succeeds, the TreeDef remembers the type (one slot), and
/// later calls for that type, given an iterator of exactly as many leaves,
/// read only what they need from it (sequence lengths, variants, keys,
/// static data).
/// A type that reads any structure (such as `pytree_std::Tree`) is always
/// checked.
///
/// ```
/// use pytree_std::Std;
/// let (leaves, def) = pytree_core::flatten::<Std, _>((1u8, [2u8, 3]));
/// let t: (u8, [u8; 2]) = pytree_core::unflatten::<Std, _, _>(&def, leaves).unwrap();
/// assert_eq!(t, (1, [2, 3]));
/// ```
pub fn unflatten<Ns, T, I>(def: &TreeDef, leaves: I) -> Result<T, Error>
where
    T: Unflatten<Ns>,
    I: IntoIterator<Item = T::Leaf>,
{
    let key = type_key::<Ns, T>();
    let leaves = leaves.into_iter();
    if def.is_checked_for(key) && leaves.size_hint() == (def.num_leaves(), Some(def.num_leaves())) {
        let mut source = TrustedSource::new(def, leaves);
        let value = T::unflatten_from(&mut source)?;
        source.finish()?;
        return Ok(value);
    }
    let mut source = DefSource::new(def, leaves);
    let value = T::unflatten_from(&mut source)?;
    source.finish()?;
    if !source.read_any_node() {
        def.set_checked_for(key);
    }
    Ok(value)
}

/// The [`TreeDef`] of a borrowed tree (static data is cloned into it).
///
/// ```
/// let def = pytree_core::structure::<pytree_std::Std, _>(&Some(vec![1.0f32]));
/// assert_eq!(def.to_string(), "Some([*])");
/// ```
pub fn structure<Ns, T: Flatten<Ns>>(tree: &T) -> TreeDef {
    let mut v = StructureVisitor {
        def: TreeDefBuilder::new(),
    };
    tree.visit(&mut v);
    v.def.build()
}

/// The leaves, lent by reference ([`LeafRef`]: `&L` for scalars, a view
/// for arrays), in pre-order.
///
/// ```
/// let t = (1u8, vec![2u8, 3]);
/// assert_eq!(pytree_core::leaves::<pytree_std::Std, _>(&t), [&1, &2, &3]);
/// ```
pub fn leaves<Ns, T: Flatten<Ns>>(tree: &T) -> Vec<LeafRef<'_, Ns, T::Leaf>> {
    let mut v = LeavesVisitor {
        out: Vec::with_capacity(tree.leaf_count_hint()),
    };
    tree.visit(&mut v);
    v.out
}

/// The leaves, lent by mutable reference ([`LeafMut`]: `&mut L` for
/// scalars, a mutable view for arrays), in pre-order: every leaf at once,
/// for as long as the tree is borrowed (the leaves are disjoint), so they
/// can be updated in any order or handed to threads.
///
/// ```
/// let mut t = (1u8, vec![2u8, 3]);
/// let mut all = pytree_core::leaves_mut::<pytree_std::Std, _>(&mut t);
/// all.reverse();
/// for (i, x) in all.into_iter().enumerate() {
///     *x += 10 * i as u8;
/// }
/// assert_eq!(t, (21, vec![12, 3]));
/// ```
pub fn leaves_mut<Ns, T: Flatten<Ns>>(tree: &mut T) -> Vec<LeafMut<'_, Ns, T::Leaf>> {
    let mut v = LeavesVisitor {
        out: Vec::with_capacity(tree.leaf_count_hint()),
    };
    tree.visit_mut(&mut v);
    v.out
}

/// Applies `f` to every leaf, keeping the structure and the leaf type.
///
/// ```
/// let t = pytree_core::map::<pytree_std::Std, _, _>((1, vec![2, 3]), |x| x * 10);
/// assert_eq!(t, (10, vec![20, 30]));
/// ```
pub fn map<Ns, T: Flatten<Ns>, F: FnMut(T::Leaf) -> T::Leaf>(tree: T, mut f: F) -> T {
    tree.map_leaves(&mut f)
}

/// Applies `f` to every leaf and rebuilds the result as a `U`, whose leaf
/// type may differ (`Mlp<f32>` to `Mlp<f64>`). The structure is carried by
/// the TreeDef, so a `U` of another shape is an error, not a wrong value.
///
/// ```
/// let t: (f64, Vec<f64>) = pytree_core::map_into::<pytree_std::Std, _, _, _>((1.5f32, vec![2.5f32]), f64::from).unwrap();
/// assert_eq!(t, (1.5, vec![2.5]));
/// ```
pub fn map_into<Ns, T, U, F>(tree: T, f: F) -> Result<U, Error>
where
    T: Flatten<Ns>,
    U: Unflatten<Ns>,
    F: FnMut(T::Leaf) -> U::Leaf,
{
    let (leaves, def) = flatten::<Ns, T>(tree);
    unflatten::<Ns, U, _>(&def, leaves.into_iter().map(f))
}

/// Calls `f` on every leaf by reference ([`LeafRef`]), in pre-order.
///
/// ```
/// let mut sum = 0;
/// pytree_core::for_each::<pytree_std::Std, _, _>(&(1i32, [2i32, 3]), |x| sum += *x);
/// assert_eq!(sum, 6);
/// ```
pub fn for_each<'a, Ns, T, F>(tree: &'a T, f: F)
where
    T: Flatten<Ns>,
    F: FnMut(LeafRef<'a, Ns, T::Leaf>),
{
    tree.visit(&mut ForEach(f));
}

/// Calls `f` on every leaf by mutable reference ([`LeafMut`]), in
/// pre-order: an in-place update with no rebuild.
///
/// ```
/// let mut t = (1i32, vec![2i32, 3]);
/// pytree_core::for_each_mut::<pytree_std::Std, _, _>(&mut t, |x| *x += 1);
/// assert_eq!(t, (2, vec![3, 4]));
/// ```
pub fn for_each_mut<'a, Ns, T, F>(tree: &'a mut T, f: F)
where
    T: Flatten<Ns>,
    F: FnMut(LeafMut<'a, Ns, T::Leaf>),
{
    tree.visit_mut(&mut ForEach(f));
}
