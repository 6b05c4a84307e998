//! Transposes with the namespace fixed to [`Std`]: a `Vec` of trees and a
//! tree of `Vec`s (treevalue's `subside`), a tree of pairs and a pair of
//! trees (`rise`), and JAX's general `tree.transpose`.

use pytree_core::{Error, Flatten, TreeDef, Unflatten};

use crate::Std;

/// Turns a tree of structure `outer.compose(inner)` into one of structure
/// `inner.compose(outer)` (JAX's `tree.transpose`), checking the whole
/// structure.
///
/// ```
/// let outer = pytree_std::structure(&(0, 0));
/// let inner = pytree_std::structure(&vec![0, 0]);
/// let t: Vec<(i32, i32)> = pytree_std::transpose(&outer, &inner, (vec![1, 2], vec![3, 4]))?;
/// assert_eq!(t, [(1, 3), (2, 4)]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn transpose<T: Flatten<Std>, U: Unflatten<Std, Leaf = T::Leaf>>(
    outer: &TreeDef,
    inner: &TreeDef,
    tree: T,
) -> Result<U, Error> {
    pytree_core::transpose::<Std, T, U>(outer, inner, tree)
}

/// Stacks trees of one structure into one tree of sequences (treevalue's
/// `subside`): `U` is the trees' type with `Vec<L>` for each leaf.
///
/// ```
/// let s: (Vec<i32>, Vec<i32>) = pytree_std::stack([(1, 2), (3, 4), (5, 6)])?;
/// assert_eq!(s, (vec![1, 3, 5], vec![2, 4, 6]));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn stack<T: Flatten<Std>, U: Unflatten<Std, Leaf = T::Leaf>>(
    trees: impl IntoIterator<Item = T>,
) -> Result<U, Error> {
    pytree_core::stack::<Std, T, U>(trees)
}

/// Splits a tree of sequences into trees (the inverse of [`stack`]).
///
/// ```
/// let trees: Vec<(i32, i32)> = pytree_std::unstack((vec![1, 3, 5], vec![2, 4, 6]))?;
/// assert_eq!(trees, [(1, 2), (3, 4), (5, 6)]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn unstack<U: Flatten<Std>, T: Unflatten<Std, Leaf = U::Leaf>>(
    stacked: U,
) -> Result<Vec<T>, Error> {
    pytree_core::unstack::<Std, U, T>(stacked)
}

/// Pairs two trees of one structure into a tree of pairs.
///
/// ```
/// let z: Vec<(i32, i32)> = pytree_std::zip(vec![1, 2], vec![10, 20])?;
/// assert_eq!(z, [(1, 10), (2, 20)]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn zip<A, B, U>(a: A, b: B) -> Result<U, Error>
where
    A: Flatten<Std>,
    B: Flatten<Std, Leaf = A::Leaf>,
    U: Unflatten<Std, Leaf = A::Leaf>,
{
    pytree_core::zip::<Std, A, B, U>(a, b)
}

/// Splits a tree of pairs into a pair of trees (the inverse of [`zip`]).
///
/// ```
/// let (a, b): (Vec<i32>, Vec<i32>) = pytree_std::unzip(vec![(1, 10), (2, 20)])?;
/// assert_eq!((a, b), (vec![1, 2], vec![10, 20]));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn unzip<U, A, B>(tree: U) -> Result<(A, B), Error>
where
    U: Flatten<Std>,
    A: Unflatten<Std, Leaf = U::Leaf>,
    B: Unflatten<Std, Leaf = U::Leaf>,
{
    pytree_core::unzip::<Std, U, A, B>(tree)
}

/// Builds a pair of trees of structure `def` from one pair of values per
/// leaf (treevalue's `rise`); the halves may be subtrees.
///
/// ```
/// let def = pytree_std::structure(&(0, 0));
/// let (found, count): ((Option<usize>, Option<usize>), (usize, usize)) =
///     pytree_std::rise(&def, [(Some(1usize), 3usize), (None, 0)])?;
/// assert_eq!(found, (Some(1), None));
/// assert_eq!(count, (3, 0));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn rise<VA, VB, A, B>(
    def: &TreeDef,
    pairs: impl IntoIterator<Item = (VA, VB)>,
) -> Result<(A, B), Error>
where
    VA: Flatten<Std>,
    VB: Flatten<Std>,
    A: Unflatten<Std, Leaf = VA::Leaf>,
    B: Unflatten<Std, Leaf = VB::Leaf>,
{
    pytree_core::rise::<Std, VA, VB, A, B>(def, pairs)
}
