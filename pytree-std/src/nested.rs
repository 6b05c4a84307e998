//! Nested trees: a tree seen as an outer tree whose leaves stand for inner
//! trees (a TreeDef `outer.compose(inner)`).
//!
//! - Prefix trees (JAX's `in_axes`): a prefix's leaves each stand for a
//!   whole subtree of a fuller tree, reached as a [`Subtree`]:
//!   [`flatten_up_to`], [`broadcast`], [`map_with_prefix`],
//!   [`broadcast_common`].
//! - Transposes, the outer and inner trees swapped: JAX's general
//!   [`transpose`]; treevalue's pair [`subside`] (trees to one tree of
//!   `Vec` leaves) and [`rise`] (its inverse). Stacking arrays along a new
//!   axis is another thing: see the ensembles (feature `ndarray`).
//!
//! The rest are these with one argument fixed:
//!
//! | to do | write |
//! | --- | --- |
//! | the root's children as subtrees (JAX's `flatten_one_level`) | `flatten_up_to(&structure(&t).one_level(), t)` |
//! | the prefix's leaves, one per leaf of `full` (optree's `broadcast_prefix`) | `leaves(&broadcast::<_, _, U>(&prefix, &full)?)` |
//! | two trees to one tree of pairs (was `pair_leaves`) | `transpose(&structure(&(0, 0)), &structure(&a), (a, b))` |
//! | a tree of pairs to two trees (was `unpair_leaves`) | `transpose(&outer, &structure(&(0, 0)), t)` |
//!
//! The engine keeps `flatten_one_level`, `broadcast_prefix`, `pair_leaves`,
//! `unpair_leaves` (which finds `outer` itself) and `unflatten_pairs` (one
//! pair of subtrees per leaf of a TreeDef, to a pair of trees) as
//! functions for any namespace, in `pytree_core::ops::prefix` and
//! `transpose` (reachable as [`generic`](crate::generic), called with
//! [`Std`] named: `pytree_std::generic::transpose::unpair_leaves::<pytree_std::Std, _, _, _>(t)`).
//!
//! ```
//! use pytree_std::{leaves, structure, nested::{broadcast, flatten_up_to, transpose}};
//! let t = (1, vec![2, 3]);
//! let children = flatten_up_to(&structure(&t).one_level(), t.clone())?;
//! assert_eq!(children[1].leaves(), [2, 3]);
//! let b: (u8, Vec<u8>) = broadcast(&7u8, &t)?;
//! assert_eq!(leaves(&b), [&7, &7, &7]);
//! let (a, b) = (vec![1, 2], vec![10, 20]);
//! let pairs: Vec<(i32, i32)> = transpose(&structure(&(0, 0)), &structure(&a), (a, b))?;
//! assert_eq!(pairs, [(1, 10), (2, 20)]);
//! let back: (Vec<i32>, Vec<i32>) = transpose(&structure(&vec![0, 0]), &structure(&(0, 0)), pairs)?;
//! assert_eq!(back, (vec![1, 2], vec![10, 20]));
//! # Ok::<(), pytree_std::Error>(())
//! ```
//!
//! Each function is fixed to [`Std`]; its body is one call to the engine in
//! `pytree_core::ops::prefix` or `pytree_core::ops::transpose`.

pub use pytree_core::Subtree;

use crate::std_namespace::Std;
use pytree_core::{Error, Flatten, LeafRef, TreeDef, Unflatten};

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
