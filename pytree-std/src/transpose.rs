//! Transposes: a tree of trees turned inside out. JAX's general
//! [`transpose`]; treevalue's pair [`subside`] (trees to one tree of `Vec`
//! leaves) and [`rise`] (its inverse); [`pair_leaves`] (two trees to one
//! tree of pairs) and [`unpair_leaves`] (its inverse); [`unflatten_pairs`]
//! (one pair of values, possibly subtrees, per leaf of a TreeDef, to a pair
//! of trees). Stacking arrays along a new axis is another thing: see the
//! ensembles (feature `ndarray`).
//!
//! Each function is fixed to [`Std`]; its body is one call to the engine in
//! `pytree_core::ops::transpose`.

use crate::{Error, Flatten, Std, TreeDef, Unflatten};

/// Turns a tree of structure `outer.compose(inner)` into one of structure
/// `inner.compose(outer)` (JAX's `tree.transpose`), checking the whole
/// structure.
///
/// Engine (any namespace): [`pytree_core::ops::transpose::transpose`](crate::generic::transpose::transpose).
///
/// ```
/// let outer = pytree_std::structure(&(0, 0));
/// let inner = pytree_std::structure(&vec![0, 0]);
/// let t: Vec<(i32, i32)> = pytree_std::transpose::transpose(&outer, &inner, (vec![1, 2], vec![3, 4]))?;
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
/// let s: (Vec<i32>, Vec<i32>) = pytree_std::transpose::subside([(1, 2), (3, 4), (5, 6)])?;
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
/// let trees: Vec<(i32, i32)> = pytree_std::transpose::rise((vec![1, 3, 5], vec![2, 4, 6]))?;
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
/// let z: Vec<(i32, i32)> = pytree_std::transpose::pair_leaves(vec![1, 2], vec![10, 20])?;
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
/// let (a, b): (Vec<i32>, Vec<i32>) = pytree_std::transpose::unpair_leaves(vec![(1, 10), (2, 20)])?;
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
///     pytree_std::transpose::unflatten_pairs(&def, [(Some(1usize), 3usize), (None, 0)])?;
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
