//! Nested trees: a tree seen as an outer tree whose leaves stand for inner
//! trees (a TreeDef `outer.compose(inner)`).
//!
//! - Prefix trees (JAX's `in_axes`): a prefix's leaves each stand for a
//!   whole subtree of a fuller tree, reached as a [`Subtree`]:
//!   [`flatten_up_to`], [`broadcast_prefix`], [`broadcast`],
//!   [`map_with_prefix`], [`broadcast_common`], [`flatten_one_level`].
//! - Transposes, the outer and inner trees swapped: JAX's general
//!   [`transpose`]; treevalue's pair [`subside`] (trees to one tree of
//!   `Vec` leaves) and [`rise`] (its inverse); [`pair_leaves`] (two trees
//!   to one tree of pairs) and [`unpair_leaves`] (its inverse);
//!   [`unflatten_pairs`] (one pair of values, possibly subtrees, per leaf
//!   of a TreeDef, to a pair of trees). Stacking arrays along a new axis is
//!   another thing: see the ensembles (feature `ndarray`).
//!
//! Each function is fixed to [`Std`]; its body is one call to the engine in
//! `pytree_core::ops::prefix` or `pytree_core::ops::transpose`.

pub use pytree_core::Subtree;

use crate::{Error, Flatten, LeafRef, Std, TreeDef, Unflatten};

/// For each leaf of the prefix `prefix`, the subtree of `tree` it stands
/// for (JAX's `PyTreeDef.flatten_up_to`).
///
/// Engine (any namespace): [`pytree_core::ops::prefix::flatten_up_to`](crate::generic::prefix::flatten_up_to).
///
/// ```
/// use std::collections::BTreeMap;
/// // in_axes (None, 0) against the arguments (a1, {"k1": a2, "k2": a3})
/// let args = (1.0f32, BTreeMap::from([("k1", 2.0f32), ("k2", 3.0)]));
/// let subs = pytree_std::nested::flatten_up_to(&pytree_std::structure(&(0, 0)), args)?;
/// assert_eq!(subs[0].leaves(), [1.0]);
/// assert_eq!(subs[1].leaves(), [2.0, 3.0]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn flatten_up_to<T: Flatten<Std>>(
    prefix: &TreeDef,
    tree: T,
) -> Result<Vec<Subtree<T::Leaf>>, Error> {
    pytree_core::ops::prefix::flatten_up_to::<Std, T>(prefix, tree)
}

/// The prefix's leaves, one per leaf of `full` (optree's
/// `broadcast_prefix`).
///
/// Engine (any namespace): [`pytree_core::ops::prefix::broadcast_prefix`](crate::generic::prefix::broadcast_prefix).
///
/// ```
/// assert_eq!(pytree_std::nested::broadcast_prefix(&7, &(1, vec![2, 3]))?, [&7, &7, &7]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn broadcast_prefix<'p, P: Flatten<Std>, T: Flatten<Std>>(
    prefix: &'p P,
    full: &T,
) -> Result<Vec<LeafRef<'p, Std, P::Leaf>>, Error> {
    pytree_core::ops::prefix::broadcast_prefix::<Std, P, T>(prefix, full)
}

/// The prefix spelled out to `full`'s structure, as a `U` (optree's
/// `tree_broadcast_prefix`). The prefix's leaves are cloned.
///
/// Engine (any namespace): [`pytree_core::ops::prefix::broadcast`](crate::generic::prefix::broadcast).
///
/// ```
/// let b: (u8, Vec<u8>) = pytree_std::nested::broadcast(&(0u8, 1u8), &(1.0f32, vec![2.0f32, 3.0]))?;
/// assert_eq!(b, (0, vec![1, 1]));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn broadcast<P, T, U>(prefix: &P, full: &T) -> Result<U, Error>
where
    P: Flatten<Std> + Clone,
    P::Leaf: Clone,
    T: Flatten<Std>,
    U: Unflatten<Std, Leaf = P::Leaf>,
{
    pytree_core::ops::prefix::broadcast::<Std, P, T, U>(prefix, full)
}

/// Maps over a tree and a prefix of it (`vmap`'s arguments and
/// `in_axes`): `f(leaf, prefix_leaf)` for every leaf of `tree`; the result
/// has `tree`'s structure. The two may differ in type and leaf type.
///
/// Engine (any namespace): [`pytree_core::ops::prefix::map_with_prefix`](crate::generic::prefix::map_with_prefix).
///
/// ```
/// let scaled: (f32, Vec<f32>) = pytree_std::nested::map_with_prefix(
///     &(1.0f32, vec![2.0f32, 3.0]),
///     &(10u8, 100u8),
///     |x, k| x * f32::from(*k),
/// )?;
/// assert_eq!(scaled, (10.0, vec![200.0, 300.0]));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn map_with_prefix<'t, 'p, T, P, V, U>(
    tree: &'t T,
    prefix: &'p P,
    f: impl FnMut(LeafRef<'t, Std, T::Leaf>, LeafRef<'p, Std, P::Leaf>) -> V,
) -> Result<U, Error>
where
    T: Flatten<Std>,
    P: Flatten<Std>,
    V: Flatten<Std>,
    U: Unflatten<Std, Leaf = V::Leaf>,
{
    pytree_core::ops::prefix::map_with_prefix::<Std, T, P, V, U, _>(tree, prefix, f)
}

/// Two trees broadcast to their common suffix structure (optree's
/// `tree_broadcast_common`): where one has a leaf and the other a
/// subtree, the leaf is copied over that subtree, in either direction;
/// elsewhere the structures must agree (the error lists every
/// difference, about tree 1, `b`). Each result keeps its input's leaf
/// type and, for the dynamic tree, its own map key order.
///
/// Engine (any namespace): [`pytree_core::ops::prefix::broadcast_common`](crate::generic::prefix::broadcast_common).
///
/// ```
/// use pytree_std::{tree, Tree};
/// // tree_broadcast_common([1, {'a': (2, 3)}, {'a': 4, 'b': 5}], [6, 7, {'a': 8, 'b': (9, 10)}])
/// let a: Tree<i32> = tree!([1, { "a" => [2, 3] }, { "a" => 4, "b" => 5 }]);
/// let b: Tree<i32> = tree!([6, 7, { "b" => [9, 10], "a" => 8 }]);
/// let (x, y): (Tree<i32>, Tree<i32>) = pytree_std::nested::broadcast_common(a, b)?;
/// assert_eq!(format!("{x:?}"), r#"[1, {"a": [2, 3]}, {"a": 4, "b": [5, 5]}]"#);
/// assert_eq!(format!("{y:?}"), r#"[6, {"a": [7, 7]}, {"b": [9, 10], "a": 8}]"#);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn broadcast_common<A, B, UA, UB>(a: A, b: B) -> Result<(UA, UB), Error>
where
    A: Flatten<Std>,
    B: Flatten<Std>,
    A::Leaf: Clone,
    B::Leaf: Clone,
    UA: Unflatten<Std, Leaf = A::Leaf>,
    UB: Unflatten<Std, Leaf = B::Leaf>,
{
    pytree_core::ops::prefix::broadcast_common::<Std, A, B, UA, UB>(a, b)
}

/// The children of the root of `tree`, each as a [`Subtree`] (its TreeDef
/// and leaves), and the root's one-level structure (JAX's
/// `flatten_one_level`). A leaf has no level to flatten: an error.
///
/// Engine (any namespace): [`pytree_core::ops::prefix::flatten_one_level`](crate::generic::prefix::flatten_one_level).
///
/// ```
/// use pytree_std::{tree, Tree};
/// let t: Tree<i32> = tree! { "a" => 1, "x" => { "c" => 2, "d" => 3 } };
/// let (children, one) = pytree_std::nested::flatten_one_level(t)?;
/// assert_eq!(one.to_string(), r#"{"a": *, "x": *}"#);
/// let (def, leaves) = children[1].clone().into_parts();
/// let x: Tree<i32> = pytree_std::unflatten(&def, leaves)?;
/// assert_eq!(format!("{x:?}"), r#"{"c": 2, "d": 3}"#);
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[allow(clippy::type_complexity)]
// The pair JAX's `flatten_one_level` returns, spelled out.
pub fn flatten_one_level<T: Flatten<Std>>(
    tree: T,
) -> Result<(Vec<Subtree<T::Leaf>>, TreeDef), Error> {
    pytree_core::ops::prefix::flatten_one_level::<Std, T>(tree)
}

/// Turns a tree of structure `outer.compose(inner)` into one of structure
/// `inner.compose(outer)` (JAX's `tree.transpose`), checking the whole
/// structure.
///
/// Engine (any namespace): [`pytree_core::ops::transpose::transpose`](crate::generic::transpose::transpose).
///
/// ```
/// let outer = pytree_std::structure(&(0, 0));
/// let inner = pytree_std::structure(&vec![0, 0]);
/// let t: Vec<(i32, i32)> = pytree_std::nested::transpose(&outer, &inner, (vec![1, 2], vec![3, 4]))?;
/// assert_eq!(t, [(1, 3), (2, 4)]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn transpose<T: Flatten<Std>, U: Unflatten<Std, Leaf = T::Leaf>>(
    outer: &TreeDef,
    inner: &TreeDef,
    tree: T,
) -> Result<U, Error> {
    pytree_core::ops::transpose::transpose::<Std, T, U>(outer, inner, tree)
}

/// Turns trees of one structure into one tree of sequences (treevalue's
/// `subside`): `U` is the trees' type with `Vec<L>` for each leaf.
///
/// Engine (any namespace): [`pytree_core::ops::transpose::subside`](crate::generic::transpose::subside).
///
/// ```
/// let s: (Vec<i32>, Vec<i32>) = pytree_std::nested::subside([(1, 2), (3, 4), (5, 6)])?;
/// assert_eq!(s, (vec![1, 3, 5], vec![2, 4, 6]));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn subside<T: Flatten<Std>, U: Unflatten<Std, Leaf = T::Leaf>>(
    trees: impl IntoIterator<Item = T>,
) -> Result<U, Error> {
    pytree_core::ops::transpose::subside::<Std, T, U>(trees)
}

/// Splits a tree of sequences into trees (treevalue's `rise`, the inverse of [`subside`]).
///
/// Engine (any namespace): [`pytree_core::ops::transpose::rise`](crate::generic::transpose::rise).
///
/// ```
/// let trees: Vec<(i32, i32)> = pytree_std::nested::rise((vec![1, 3, 5], vec![2, 4, 6]))?;
/// assert_eq!(trees, [(1, 2), (3, 4), (5, 6)]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn rise<U: Flatten<Std>, T: Unflatten<Std, Leaf = U::Leaf>>(
    stacked: U,
) -> Result<Vec<T>, Error> {
    pytree_core::ops::transpose::rise::<Std, U, T>(stacked)
}

/// Pairs two trees of one structure into one tree whose leaves are pairs
/// (`(a's leaf, b's leaf)` at each place).
///
/// Engine (any namespace): [`pytree_core::ops::transpose::pair_leaves`](crate::generic::transpose::pair_leaves).
///
/// ```
/// let z: Vec<(i32, i32)> = pytree_std::nested::pair_leaves(vec![1, 2], vec![10, 20])?;
/// assert_eq!(z, [(1, 10), (2, 20)]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn pair_leaves<A, B, U>(a: A, b: B) -> Result<U, Error>
where
    A: Flatten<Std>,
    B: Flatten<Std, Leaf = A::Leaf>,
    U: Unflatten<Std, Leaf = A::Leaf>,
{
    pytree_core::ops::transpose::pair_leaves::<Std, A, B, U>(a, b)
}

/// Splits a tree of pairs into a pair of trees (the inverse of [`pair_leaves`]).
///
/// Engine (any namespace): [`pytree_core::ops::transpose::unpair_leaves`](crate::generic::transpose::unpair_leaves).
///
/// ```
/// let (a, b): (Vec<i32>, Vec<i32>) = pytree_std::nested::unpair_leaves(vec![(1, 10), (2, 20)])?;
/// assert_eq!((a, b), (vec![1, 2], vec![10, 20]));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn unpair_leaves<U, A, B>(tree: U) -> Result<(A, B), Error>
where
    U: Flatten<Std>,
    A: Unflatten<Std, Leaf = U::Leaf>,
    B: Unflatten<Std, Leaf = U::Leaf>,
{
    pytree_core::ops::transpose::unpair_leaves::<Std, U, A, B>(tree)
}

/// Builds a pair of trees of structure `def` from one pair of values per
/// leaf: [`unflatten`](crate::unflatten) for pairs (treevalue's `rise` of
/// a tree of pairs). The halves may be subtrees (an `Option`, a tuple),
/// which take the place of their leaf.
///
/// Engine (any namespace): [`pytree_core::ops::transpose::unflatten_pairs`](crate::generic::transpose::unflatten_pairs).
///
/// ```
/// let def = pytree_std::structure(&(0, 0));
/// let (found, count): ((Option<usize>, Option<usize>), (usize, usize)) =
///     pytree_std::nested::unflatten_pairs(&def, [(Some(1usize), 3usize), (None, 0)])?;
/// assert_eq!(found, (Some(1), None));
/// assert_eq!(count, (3, 0));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn unflatten_pairs<VA, VB, A, B>(
    def: &TreeDef,
    pairs: impl IntoIterator<Item = (VA, VB)>,
) -> Result<(A, B), Error>
where
    VA: Flatten<Std>,
    VB: Flatten<Std>,
    A: Unflatten<Std, Leaf = VA::Leaf>,
    B: Unflatten<Std, Leaf = VB::Leaf>,
{
    pytree_core::ops::transpose::unflatten_pairs::<Std, VA, VB, A, B>(def, pairs)
}
