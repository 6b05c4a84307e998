//! Flatten and rebuild, map and visit one tree: the operations users call
//! most ([`flatten`], [`unflatten`], [`structure`], [`leaves`],
//! [`leaves_mut`], [`map`], [`for_each`], [`for_each_mut`], also at the
//! crate's root), [`map_into`] (another leaf type), the fallible forms
//! [`try_map`], [`try_for_each_mut`], and [`drop_deep`] (drop a value of
//! any depth).
//!
//! Each function is fixed to [`Std`]; its body is one call to the engine,
//! generic over the namespace, in `pytree_core::ops::basic` (and
//! `pytree_core::ops::fallible` for the `try_` forms), reachable here as
//! [`generic`](crate::generic).

use crate::{Error, Flatten, LeafFnErr, LeafMut, LeafRef, Std, TreeDef, Unflatten};

/// Splits a tree into its leaves (pre-order) and its [`TreeDef`]
/// (JAX's `tree_flatten`).
///
/// Engine (any namespace): [`pytree_core::ops::basic::flatten`](crate::generic::basic::flatten).
///
/// ```
/// let (leaves, def) = pytree_std::flatten(vec![1.0, 2.0]);
/// assert_eq!(leaves, [1.0, 2.0]);
/// assert_eq!(def.to_string(), "[*, *]");
/// ```
pub fn flatten<T: Flatten<Std>>(tree: T) -> (Vec<T::Leaf>, TreeDef) {
    pytree_core::ops::basic::flatten::<Std, T>(tree)
}

/// Rebuilds a `T` from a [`TreeDef`] and leaves (JAX's `tree_unflatten`).
/// Wrong leaf counts and TreeDefs of another shape are errors that name the
/// key path.
///
/// Engine (any namespace): [`pytree_core::ops::basic::unflatten`](crate::generic::basic::unflatten).
///
/// ```
/// let def = pytree_std::structure(&(0, 0));
/// let t: (i32, i32) = pytree_std::unflatten(&def, [1, 2])?;
/// assert_eq!(t, (1, 2));
/// let err = pytree_std::unflatten::<(i32, i32)>(&def, [1, 2, 3]).unwrap_err();
/// assert_eq!(err.to_string(), "at <root>: too many leaves for TreeDef: expected 2, got 3");
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn unflatten<T: Unflatten<Std>>(
    def: &TreeDef,
    leaves: impl IntoIterator<Item = T::Leaf>,
) -> Result<T, Error> {
    pytree_core::ops::basic::unflatten::<Std, T, _>(def, leaves)
}

/// The [`TreeDef`] of a borrowed tree (JAX's `tree_structure`).
///
/// Engine (any namespace): [`pytree_core::ops::basic::structure`](crate::generic::basic::structure).
///
/// ```
/// assert_eq!(pytree_std::structure(&Some((1, 2))).to_string(), "Some((*, *))");
/// ```
pub fn structure<T: Flatten<Std>>(tree: &T) -> TreeDef {
    pytree_core::ops::basic::structure::<Std, T>(tree)
}

/// The leaves in pre-order, lent by reference (JAX's `tree_leaves`):
/// `&L` for scalars, a view for arrays ([`LeafRef`]).
///
/// Engine (any namespace): [`pytree_core::ops::basic::leaves`](crate::generic::basic::leaves).
///
/// ```
/// assert_eq!(pytree_std::leaves(&(1, [2, 3])), [&1, &2, &3]);
/// ```
pub fn leaves<T: Flatten<Std>>(tree: &T) -> Vec<LeafRef<'_, Std, T::Leaf>> {
    pytree_core::ops::basic::leaves::<Std, T>(tree)
}

/// Every leaf at once, lent by mutable reference for as long as the tree
/// is borrowed: `&mut L` for scalars, a mutable view for arrays
/// ([`LeafMut`]). The leaves are disjoint, so they can be updated in any
/// order, or split across threads.
///
/// Engine (any namespace): [`pytree_core::ops::basic::leaves_mut`](crate::generic::basic::leaves_mut).
///
/// ```
/// let mut t = (1.0f32, vec![2.0f32, 3.0]);
/// let mut all = pytree_std::leaves_mut(&mut t);
/// let (first, rest) = all.split_at_mut(1);
/// *first[0] += *rest[1]; // two leaves at once
/// assert_eq!(t.0, 4.0);
/// ```
pub fn leaves_mut<T: Flatten<Std>>(tree: &mut T) -> Vec<LeafMut<'_, Std, T::Leaf>> {
    pytree_core::ops::basic::leaves_mut::<Std, T>(tree)
}

/// Applies `f` to every leaf, keeping structure and leaf type
/// (JAX's `tree_map` with one tree). Builds no TreeDef for derived types
/// and std containers (a hand-written node that keeps the provided
/// [`Unflatten::map_leaves`] is flattened and rebuilt).
///
/// Engine (any namespace): [`pytree_core::ops::basic::map`](crate::generic::basic::map).
///
/// ```
/// assert_eq!(pytree_std::map((1, vec![2]), |x| x + 1), (2, vec![3]));
/// ```
pub fn map<T: Unflatten<Std>>(tree: T, f: impl FnMut(T::Leaf) -> T::Leaf) -> T {
    pytree_core::ops::basic::map::<Std, T, _>(tree, f)
}

/// Applies `f` to every leaf and rebuilds as a `U` with another leaf type,
/// checked through the TreeDef.
///
/// Engine (any namespace): [`pytree_core::ops::basic::map_into`](crate::generic::basic::map_into).
///
/// ```
/// let t: Vec<f64> = pytree_std::basic::map_into(vec![1.0f32], f64::from)?;
/// assert_eq!(t, [1.0]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn map_into<T: Flatten<Std>, U: Unflatten<Std>>(
    tree: T,
    f: impl FnMut(T::Leaf) -> U::Leaf,
) -> Result<U, Error> {
    pytree_core::ops::basic::map_into::<Std, T, U, _>(tree, f)
}

/// Drops `tree` by walking it, as [`flatten`] would, dropping each leaf:
/// a walk grows the stack when it runs low, so a value of any depth is
/// dropped without overflowing it, where the compiler's drop (a plain
/// `drop`, the end of a scope) recurses once per level on the thread's
/// stack, with no check, and kills the process when it runs out. What an
/// operation stopped by an error or a panic still holds is dropped this
/// way already; this is for the values you own. A shared `Rc` / `Arc`
/// with other handles only gives up its handle.
///
/// Engine (any namespace): [`pytree_core::ops::basic::drop_deep`](crate::generic::basic::drop_deep).
///
/// ```
/// #[derive(pytree_std::PyTree)]
/// struct Chain { v: f64, next: Option<Box<Chain>> }
/// let mut c = Chain { v: 0.0, next: None };
/// for _ in 0..100_000 {
///     c = Chain { v: 1.0, next: Some(Box::new(c)) };
/// }
/// pytree_std::basic::drop_deep(c);
/// ```
pub fn drop_deep<T: Flatten<Std>>(tree: T) {
    pytree_core::ops::basic::drop_deep::<Std, T>(tree)
}

/// Calls `f` on every leaf by reference ([`LeafRef`]).
///
/// Engine (any namespace): [`pytree_core::ops::basic::for_each`](crate::generic::basic::for_each).
///
/// ```
/// let mut n = 0;
/// pytree_std::for_each(&vec![(1, 2)], |_| n += 1);
/// assert_eq!(n, 2);
/// ```
pub fn for_each<'a, T: Flatten<Std>>(tree: &'a T, f: impl FnMut(LeafRef<'a, Std, T::Leaf>)) {
    pytree_core::ops::basic::for_each::<Std, T, _>(tree, f)
}

/// Calls `f` on every leaf by mutable reference ([`LeafMut`]): an
/// in-place update.
///
/// Engine (any namespace): [`pytree_core::ops::basic::for_each_mut`](crate::generic::basic::for_each_mut).
///
/// ```
/// let mut t = (1.0f32, vec![2.0f32]);
/// pytree_std::for_each_mut(&mut t, |x: &mut f32| *x *= 10.0);
/// assert_eq!(t, (10.0, vec![20.0]));
/// ```
pub fn for_each_mut<'a, T: Flatten<Std>>(
    tree: &'a mut T,
    f: impl FnMut(LeafMut<'a, Std, T::Leaf>),
) {
    pytree_core::ops::basic::for_each_mut::<Std, T, _>(tree, f)
}

/// Applies a fallible `f` to every leaf and rebuilds a `U` (whose leaf type
/// may differ). The first error of `f` comes back at its leaf's path, with
/// `f`'s error as the [`source`](std::error::Error::source); a `U` of
/// another structure is an error as in [`map_into`].
///
/// Engine (any namespace): [`pytree_core::ops::fallible::try_map`](crate::generic::fallible::try_map).
///
/// ```
/// let t: (u8, Vec<u8>) = pytree_std::basic::try_map((1i32, vec![2i32]), u8::try_from)?;
/// assert_eq!(t, (1, vec![2]));
/// let err = pytree_std::basic::try_map::<_, (u8, Vec<u8>), _>((1i32, vec![300i32]), u8::try_from).unwrap_err();
/// assert_eq!(err.to_string(), "at [1][0]: the function failed: out of range integral type conversion attempted");
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn try_map<T: Flatten<Std>, U: Unflatten<Std>, E: LeafFnErr>(
    tree: T,
    f: impl FnMut(T::Leaf) -> Result<U::Leaf, E>,
) -> Result<U, Error> {
    pytree_core::ops::fallible::try_map::<Std, T, U, E, _>(tree, f)
}

/// [`for_each_mut`] with a fallible `f`, stopping at its first error,
/// which names the leaf's path. After an error, the leaves before the
/// failing one are updated, the failing leaf is as `f` left it, the rest
/// are untouched.
///
/// Engine (any namespace): [`pytree_core::ops::fallible::try_for_each_mut`](crate::generic::fallible::try_for_each_mut).
///
/// ```
/// let mut t = (1u8, vec![200u8, 3]);
/// let err = pytree_std::basic::try_for_each_mut(&mut t, |x| {
///     *x = x.checked_mul(2).ok_or("overflow")?;
///     Ok::<(), &str>(())
/// })
/// .unwrap_err();
/// assert_eq!(err.to_string(), "at [1][0]: the function failed: overflow");
/// assert_eq!(t, (2, vec![200, 3]));
/// ```
pub fn try_for_each_mut<T: Flatten<Std>, E: LeafFnErr>(
    tree: &mut T,
    f: impl for<'x> FnMut(LeafMut<'x, Std, T::Leaf>) -> Result<(), E>,
) -> Result<(), Error> {
    pytree_core::ops::fallible::try_for_each_mut::<Std, T, E, _>(tree, f)
}
