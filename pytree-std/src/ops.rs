//! The operations with the namespace fixed to [`Std`], named after
//! `jax.tree`: no turbofish, no namespace in sight.

use pytree_core::{Error, Flatten, LeafFnErr, LeafMut, LeafRef, TreeDef, Unflatten};

use crate::Std;

/// Splits a tree into its leaves (pre-order) and its [`TreeDef`]
/// (JAX's `tree_flatten`).
///
/// ```
/// let (leaves, def) = pytree_std::flatten(vec![1.0, 2.0]);
/// assert_eq!(leaves, [1.0, 2.0]);
/// assert_eq!(def.to_string(), "[*, *]");
/// ```
pub fn flatten<T: Flatten<Std>>(tree: T) -> (Vec<T::Leaf>, TreeDef) {
    pytree_core::flatten::<Std, T>(tree)
}

/// Rebuilds a `T` from a [`TreeDef`] and leaves (JAX's `tree_unflatten`).
/// Wrong leaf counts and TreeDefs of another shape are errors that name the
/// key path.
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
    pytree_core::unflatten::<Std, T, _>(def, leaves)
}

/// The [`TreeDef`] of a borrowed tree (JAX's `tree_structure`).
///
/// ```
/// assert_eq!(pytree_std::structure(&Some((1, 2))).to_string(), "Some((*, *))");
/// ```
pub fn structure<T: Flatten<Std>>(tree: &T) -> TreeDef {
    pytree_core::structure::<Std, T>(tree)
}

/// The leaves in pre-order, lent by reference (JAX's `tree_leaves`):
/// `&L` for scalars, a view for arrays ([`LeafRef`]).
///
/// ```
/// assert_eq!(pytree_std::leaves(&(1, [2, 3])), [&1, &2, &3]);
/// ```
pub fn leaves<T: Flatten<Std>>(tree: &T) -> Vec<LeafRef<'_, Std, T::Leaf>> {
    pytree_core::leaves::<Std, T>(tree)
}

/// Every leaf at once, lent by mutable reference for as long as the tree
/// is borrowed: `&mut L` for scalars, a mutable view for arrays
/// ([`LeafMut`]). The leaves are disjoint, so they can be updated in any
/// order, or split across threads.
///
/// ```
/// let mut t = (1.0f32, vec![2.0f32, 3.0]);
/// let mut all = pytree_std::leaves_mut(&mut t);
/// let (first, rest) = all.split_at_mut(1);
/// *first[0] += *rest[1]; // two leaves at once
/// assert_eq!(t.0, 4.0);
/// ```
pub fn leaves_mut<T: Flatten<Std>>(tree: &mut T) -> Vec<LeafMut<'_, Std, T::Leaf>> {
    pytree_core::leaves_mut::<Std, T>(tree)
}

/// Applies `f` to every leaf, keeping structure and leaf type
/// (JAX's `tree_map` with one tree). Builds no TreeDef.
///
/// ```
/// assert_eq!(pytree_std::map((1, vec![2]), |x| x + 1), (2, vec![3]));
/// ```
pub fn map<T: Flatten<Std>>(tree: T, f: impl FnMut(T::Leaf) -> T::Leaf) -> T {
    pytree_core::map::<Std, T, _>(tree, f)
}

/// Applies `f` to every leaf and rebuilds as a `U` with another leaf type,
/// checked through the TreeDef.
///
/// ```
/// let t: Vec<f64> = pytree_std::map_into(vec![1.0f32], f64::from)?;
/// assert_eq!(t, [1.0]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn map_into<T: Flatten<Std>, U: Unflatten<Std>>(
    tree: T,
    f: impl FnMut(T::Leaf) -> U::Leaf,
) -> Result<U, Error> {
    pytree_core::map_into::<Std, T, U, _>(tree, f)
}

/// Combines two trees of the same type leaf by leaf (JAX's
/// `tree_map(f, a, b)`). Lengths, keys, holes, variants and static fields
/// must match; the error names the place where they do not, or lists every
/// place ([`ErrorKind::Mismatches`](crate::ErrorKind::Mismatches)) when
/// there are several.
///
/// Leaves are lent by reference ([`LeafRef`]); array leaves must have the
/// same signature (shape, dtype), else the error names the path and both.
///
/// ```
/// let sum = pytree_std::map2(&vec![1, 2], &vec![10, 20], |a, b| a + b)?;
/// assert_eq!(sum, [11, 22]);
/// let err = pytree_std::map2(&vec![1, 2], &vec![10], |a, b| a + b).unwrap_err();
/// assert_eq!(err.to_string(), "tree 1 at <root>: sequence length mismatch: expected 2, found 1");
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn map2<'a, T: Flatten<Std>>(
    a: &'a T,
    b: &'a T,
    mut f: impl FnMut(LeafRef<'a, Std, T::Leaf>, LeafRef<'a, Std, T::Leaf>) -> T::Leaf,
) -> Result<T, Error> {
    pytree_core::map_n::<Std, T, 1, _>(a, [b], |x, [y]| f(x, y))
}

/// Combines `first` with `N` more trees of the same type, leaf by leaf
/// (zero-cost for any fixed `N`: the others travel as an array of
/// references). A mismatch error lists every place where the others differ
/// from `first`.
///
/// ```
/// let t = pytree_std::map_n(&(1, 2), [&(10, 20), &(100, 200)], |a, [b, c]| a + b + c)?;
/// assert_eq!(t, (111, 222));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn map_n<'a, T: Flatten<Std>, const N: usize>(
    first: &'a T,
    others: [&'a T; N],
    f: impl FnMut(LeafRef<'a, Std, T::Leaf>, [LeafRef<'a, Std, T::Leaf>; N]) -> T::Leaf,
) -> Result<T, Error> {
    pytree_core::map_n::<Std, T, N, _>(first, others, f)
}

/// Updates `tree` in place from `N` other trees of the same type, leaf by
/// leaf: the SGD step `zip_mut(&mut params, [&grads], |p, [g]| *p -= lr * g)`.
/// The structures (and the signatures of array leaves) are checked before
/// the first update: on a mismatch, `tree` is unchanged. The leaf of
/// `tree` is lent as [`LeafMut`], the others' as [`LeafRef`].
///
/// ```
/// let mut params = vec![1.0f64, 2.0];
/// pytree_std::zip_mut(&mut params, [&vec![0.5, 0.5]], |p, [g]| *p -= g)?;
/// assert_eq!(params, [0.5, 1.5]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn zip_mut<'a, T: Flatten<Std>, const N: usize>(
    tree: &'a mut T,
    others: [&'a T; N],
    f: impl FnMut(LeafMut<'a, Std, T::Leaf>, [LeafRef<'a, Std, T::Leaf>; N]),
) -> Result<(), Error> {
    pytree_core::zip_mut::<Std, T, N, _>(tree, others, f)
}

/// Calls `f` on every leaf by reference ([`LeafRef`]).
///
/// ```
/// let mut n = 0;
/// pytree_std::for_each(&vec![(1, 2)], |_| n += 1);
/// assert_eq!(n, 2);
/// ```
pub fn for_each<'a, T: Flatten<Std>>(tree: &'a T, f: impl FnMut(LeafRef<'a, Std, T::Leaf>)) {
    pytree_core::for_each::<Std, T, _>(tree, f)
}

/// Calls `f` on every leaf by mutable reference ([`LeafMut`]): an
/// in-place update.
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
    pytree_core::for_each_mut::<Std, T, _>(tree, f)
}

/// Applies a fallible `f` to every leaf and rebuilds a `U` (whose leaf type
/// may differ). The first error of `f` comes back at its leaf's path, with
/// `f`'s error as the [`source`](std::error::Error::source); a `U` of
/// another structure is an error as in [`map_into`].
///
/// ```
/// let t: (u8, Vec<u8>) = pytree_std::try_map((1i32, vec![2i32]), u8::try_from)?;
/// assert_eq!(t, (1, vec![2]));
/// let err = pytree_std::try_map::<_, (u8, Vec<u8>), _>((1i32, vec![300i32]), u8::try_from).unwrap_err();
/// assert_eq!(err.to_string(), "at [1][0]: the function failed: out of range integral type conversion attempted");
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn try_map<T: Flatten<Std>, U: Unflatten<Std>, E: LeafFnErr>(
    tree: T,
    f: impl FnMut(T::Leaf) -> Result<U::Leaf, E>,
) -> Result<U, Error> {
    pytree_core::try_map::<Std, T, U, E, _>(tree, f)
}

/// Combines two trees of the same type leaf by leaf with a fallible `f`
/// (for leaf operations that return `Result`, as candle's do). Structures
/// and array signatures are checked first; the first error of `f` comes
/// back at its leaf's path. The result is rebuilt through the TreeDef, so
/// an array of another rank in a rank-typed field is an error, not a
/// panic.
///
/// ```
/// let div = |a: &i32, b: &i32| a.checked_div(*b).ok_or("division by zero");
/// assert_eq!(pytree_std::try_map2(&(6i32, vec![8i32]), &(3, vec![2]), div)?, (2, vec![4]));
/// let err = pytree_std::try_map2(&(6i32, vec![8i32]), &(3, vec![0]), div).unwrap_err();
/// assert_eq!(err.to_string(), "at [1][0]: the function failed: division by zero");
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn try_map2<T: Unflatten<Std>, E: LeafFnErr>(
    a: &T,
    b: &T,
    mut f: impl for<'x> FnMut(
        LeafRef<'x, Std, T::Leaf>,
        LeafRef<'x, Std, T::Leaf>,
    ) -> Result<T::Leaf, E>,
) -> Result<T, Error> {
    pytree_core::try_map_n::<Std, T, 1, E, _>(a, [b], |x, [y]| f(x, y))
}

/// [`map_n`] with a fallible `f`: checked as [`try_map2`] is.
///
/// ```
/// let t = pytree_std::try_map_n(&vec![1u8, 2], [&vec![3u8, 4], &vec![5u8, 250]], |a, [b, c]| {
///     a.checked_add(*b).and_then(|s| s.checked_add(*c)).ok_or("overflow")
/// });
/// assert_eq!(t.unwrap_err().to_string(), "at [1]: the function failed: overflow");
/// ```
pub fn try_map_n<T: Unflatten<Std>, const N: usize, E: LeafFnErr>(
    first: &T,
    others: [&T; N],
    f: impl for<'x> FnMut(
        LeafRef<'x, Std, T::Leaf>,
        [LeafRef<'x, Std, T::Leaf>; N],
    ) -> Result<T::Leaf, E>,
) -> Result<T, Error> {
    pytree_core::try_map_n::<Std, T, N, E, _>(first, others, f)
}

/// [`zip_mut`] with a fallible `f`. Structures and array signatures are
/// checked before the first update (on a mismatch nothing changes). If `f`
/// fails, the leaves before the failing one are updated, the failing leaf
/// is as `f` left it, the rest are untouched, and the error names the
/// failing leaf's path.
///
/// ```
/// let mut p = vec![1.0f64, 2.0, 3.0];
/// let g = vec![0.5f64, f64::NAN, 0.5];
/// let err = pytree_std::try_zip_mut(&mut p, [&g], |p, [g]| {
///     if g.is_nan() { return Err("NaN gradient"); }
///     *p -= g;
///     Ok(())
/// })
/// .unwrap_err();
/// assert_eq!(err.to_string(), "at [1]: the function failed: NaN gradient");
/// assert_eq!(p, [0.5, 2.0, 3.0]);
/// ```
pub fn try_zip_mut<T: Flatten<Std>, const N: usize, E: LeafFnErr>(
    tree: &mut T,
    others: [&T; N],
    f: impl for<'x> FnMut(LeafMut<'x, Std, T::Leaf>, [LeafRef<'x, Std, T::Leaf>; N]) -> Result<(), E>,
) -> Result<(), Error> {
    pytree_core::try_zip_mut::<Std, T, N, E, _>(tree, others, f)
}

/// [`for_each_mut`] with a fallible `f`, stopping at its first error,
/// which names the leaf's path. After an error, the leaves before the
/// failing one are updated, the failing leaf is as `f` left it, the rest
/// are untouched.
///
/// ```
/// let mut t = (1u8, vec![200u8, 3]);
/// let err = pytree_std::try_for_each_mut(&mut t, |x| {
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
    pytree_core::try_for_each_mut::<Std, T, E, _>(tree, f)
}

/// Updates `N` trees in place in one pass while reading `M` more, leaf by
/// leaf: `f([leaf of each mutable tree], [leaf of each other tree])`, as
/// an optimizer updates parameters and moments from a gradient. Every
/// tree is checked against the first before anything changes (structures
/// and array signatures; trees numbered from 0, mutable ones first).
///
/// ```
/// use pytree_std::PyTree;
/// #[derive(PyTree, Debug, PartialEq)]
/// struct Linear { w: f32, b: f32 }
/// let mut params = Linear { w: 1.0, b: 1.0 };
/// let mut velocity = Linear { w: 0.0, b: 0.0 };
/// let grads = Linear { w: 1.0, b: -1.0 };
/// pytree_std::zip_mut_n([&mut params, &mut velocity], [&grads], |[p, v], [g]| {
///     *v = 0.9 * *v + g;
///     *p -= 0.1 * *v;
/// })?;
/// assert_eq!(params, Linear { w: 0.9, b: 1.1 });
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn zip_mut_n<T: Flatten<Std>, const N: usize, const M: usize>(
    muts: [&mut T; N],
    refs: [&T; M],
    f: impl for<'x> FnMut([LeafMut<'x, Std, T::Leaf>; N], [LeafRef<'x, Std, T::Leaf>; M]),
) -> Result<(), Error> {
    pytree_core::zip_mut_n::<Std, T, N, M, _>(muts, refs, f)
}

/// [`zip_mut_n`] with a fallible `f`: the first error stops the pass and
/// names its leaf's path; the leaves before it are updated in every
/// mutable tree, the failing ones are as `f` left them, the rest are
/// untouched.
///
/// ```
/// let (mut p, mut v) = (vec![1.0f64, 2.0], vec![0.0f64, 0.0]);
/// let err = pytree_std::try_zip_mut_n([&mut p, &mut v], [&vec![4.0f64, -1.0]], |[p, v], [g]| {
///     *v += g;
///     *p -= v.sqrt();
///     if p.is_nan() { Err("NaN") } else { Ok(()) }
/// })
/// .unwrap_err();
/// assert_eq!(err.to_string(), "at [1]: the function failed: NaN");
/// ```
pub fn try_zip_mut_n<T: Flatten<Std>, const N: usize, const M: usize, E: LeafFnErr>(
    muts: [&mut T; N],
    refs: [&T; M],
    f: impl for<'x> FnMut(
        [LeafMut<'x, Std, T::Leaf>; N],
        [LeafRef<'x, Std, T::Leaf>; M],
    ) -> Result<(), E>,
) -> Result<(), Error> {
    pytree_core::try_zip_mut_n::<Std, T, N, M, E, _>(muts, refs, f)
}
