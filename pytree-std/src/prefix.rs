//! Prefix trees (JAX's `in_axes`): a tree whose leaves may each stand for
//! a whole subtree of a fuller tree, reached as a [`Subtree`]:
//! [`flatten_up_to`], [`broadcast_prefix`], [`broadcast`], [`map_prefix`],
//! [`map_with_prefix`], [`broadcast_common`], [`flatten_one_level`].
//!
//! Each function is fixed to [`Std`]; its body is one call to the engine in
//! `pytree_core::ops::prefix`.

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
/// let subs = pytree_std::prefix::flatten_up_to(&pytree_std::structure(&(0, 0)), args)?;
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
/// assert_eq!(pytree_std::prefix::broadcast_prefix(&7, &(1, vec![2, 3]))?, [&7, &7, &7]);
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
/// let b: (u8, Vec<u8>) = pytree_std::prefix::broadcast(&(0u8, 1u8), &(1.0f32, vec![2.0f32, 3.0]))?;
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

/// Maps over a prefix tree and a fuller one (JAX's `tree_map(f, prefix,
/// full)`): `f` receives each prefix leaf with the whole subtree of `full`
/// below it; the result has the prefix's structure.
///
/// Engine (any namespace): [`pytree_core::ops::prefix::map_prefix`](crate::generic::prefix::map_prefix).
///
/// ```
/// let sums: (i32, i32) = pytree_std::prefix::map_prefix(&(1, 2), &(vec![3, 4], 5), |p, sub| {
///     p * sub.leaves().iter().copied().sum::<i32>()
/// })?;
/// assert_eq!(sums, (7, 10));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn map_prefix<'p, 't, P, T, V, U>(
    prefix: &'p P,
    full: &'t T,
    f: impl FnMut(LeafRef<'p, Std, P::Leaf>, Subtree<LeafRef<'t, Std, T::Leaf>>) -> V,
) -> Result<U, Error>
where
    P: Flatten<Std>,
    T: Flatten<Std>,
    V: Flatten<Std>,
    U: Unflatten<Std, Leaf = V::Leaf>,
{
    pytree_core::ops::prefix::map_prefix::<Std, P, T, V, U, _>(prefix, full, f)
}

/// Maps over a tree and a prefix of it (`vmap`'s arguments and
/// `in_axes`): `f(leaf, prefix_leaf)` for every leaf of `tree`; the result
/// has `tree`'s structure. The two may differ in type and leaf type.
///
/// Engine (any namespace): [`pytree_core::ops::prefix::map_with_prefix`](crate::generic::prefix::map_with_prefix).
///
/// ```
/// let scaled: (f32, Vec<f32>) = pytree_std::prefix::map_with_prefix(
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
/// let (x, y): (Tree<i32>, Tree<i32>) = pytree_std::prefix::broadcast_common(a, b)?;
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
/// let (children, one) = pytree_std::prefix::flatten_one_level(t)?;
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
