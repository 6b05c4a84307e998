//! Several trees of one type at once: combine them leaf by leaf
//! ([`map2`], [`map_n`]), update one or several in place from the others
//! ([`zip_mut`], [`zip_mut_n`]), the fallible forms ([`try_map2`],
//! [`try_map_n`], [`try_zip_mut`], [`try_zip_mut_n`]) and the structural
//! comparison on its own ([`check_same_structure`]). A mismatch error lists
//! every place where the trees differ, each with its key path. "zip" here
//! always means walking trees in step.
//!
//! Each function is fixed to [`Std`]; its body is one call to the engine in
//! `pytree_core::ops::multi` (`pytree_core::ops::fallible` for `try_map_n`
//! and `try_zip_mut`). The parallel forms are in
//! `parallel` (feature `rayon`).

use crate::{Error, Flatten, LeafFnErr, LeafMut, LeafRef, Std, Unflatten};

/// Combines two trees of the same type leaf by leaf (JAX's
/// `tree_map(f, a, b)`). Lengths, keys, holes, variants and static fields
/// must match; the error names the place where they do not, or lists every
/// place ([`ErrorKind::Mismatches`](crate::ErrorKind::Mismatches)) when
/// there are several.
///
/// Leaves are lent by reference ([`LeafRef`]); array leaves must have the
/// same signature (shape, dtype), else the error names the path and both.
///
/// Engine (any namespace): [`pytree_core::ops::multi::map_n`](crate::generic::multi::map_n).
///
/// ```
/// let sum = pytree_std::multi::map2(&vec![1, 2], &vec![10, 20], |a, b| a + b)?;
/// assert_eq!(sum, [11, 22]);
/// let err = pytree_std::multi::map2(&vec![1, 2], &vec![10], |a, b| a + b).unwrap_err();
/// assert_eq!(err.to_string(), "tree 1 at <root>: sequence length mismatch: expected 2, found 1");
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn map2<'a, T: Unflatten<Std>>(
    a: &'a T,
    b: &'a T,
    mut f: impl FnMut(LeafRef<'a, Std, T::Leaf>, LeafRef<'a, Std, T::Leaf>) -> T::Leaf,
) -> Result<T, Error> {
    pytree_core::ops::multi::map_n::<Std, T, 1, _>(a, [b], |x, [y]| f(x, y))
}

/// Combines `first` with `N` more trees of the same type, leaf by leaf
/// (zero-cost for any fixed `N`: the others travel as an array of
/// references). A mismatch error lists every place where the others differ
/// from `first`.
///
/// Engine (any namespace): [`pytree_core::ops::multi::map_n`](crate::generic::multi::map_n).
///
/// ```
/// let t = pytree_std::map_n(&(1, 2), [&(10, 20), &(100, 200)], |a, [b, c]| a + b + c)?;
/// assert_eq!(t, (111, 222));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn map_n<'a, T: Unflatten<Std>, const N: usize>(
    first: &'a T,
    others: [&'a T; N],
    f: impl FnMut(LeafRef<'a, Std, T::Leaf>, [LeafRef<'a, Std, T::Leaf>; N]) -> T::Leaf,
) -> Result<T, Error> {
    pytree_core::ops::multi::map_n::<Std, T, N, _>(first, others, f)
}

/// Updates `tree` in place from `N` other trees of the same type, leaf by
/// leaf: the SGD step `zip_mut(&mut params, [&grads], |p, [g]| *p -= lr * g)`.
/// The structures (and the signatures of array leaves) are checked before
/// the first update: on a mismatch, `tree` is unchanged. The leaf of
/// `tree` is lent as [`LeafMut`], the others' as [`LeafRef`].
///
/// Engine (any namespace): [`pytree_core::ops::multi::zip_mut`](crate::generic::multi::zip_mut).
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
    pytree_core::ops::multi::zip_mut::<Std, T, N, _>(tree, others, f)
}

/// Combines two trees of the same type leaf by leaf with a fallible `f`
/// (for leaf operations that return `Result`, as candle's do). Structures
/// and array signatures are checked first; the first error of `f` comes
/// back at its leaf's path. The result is rebuilt through the TreeDef, so
/// an array of another rank in a rank-typed field is an error, not a
/// panic.
///
/// Engine (any namespace): [`pytree_core::ops::fallible::try_map_n`](crate::generic::fallible::try_map_n).
///
/// ```
/// let div = |a: &i32, b: &i32| a.checked_div(*b).ok_or("division by zero");
/// assert_eq!(pytree_std::multi::try_map2(&(6i32, vec![8i32]), &(3, vec![2]), div)?, (2, vec![4]));
/// let err = pytree_std::multi::try_map2(&(6i32, vec![8i32]), &(3, vec![0]), div).unwrap_err();
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
    pytree_core::ops::fallible::try_map_n::<Std, T, 1, E, _>(a, [b], |x, [y]| f(x, y))
}

/// [`map_n`] with a fallible `f`: checked as [`try_map2`] is.
///
/// Engine (any namespace): [`pytree_core::ops::fallible::try_map_n`](crate::generic::fallible::try_map_n).
///
/// ```
/// let t = pytree_std::multi::try_map_n(&vec![1u8, 2], [&vec![3u8, 4], &vec![5u8, 250]], |a, [b, c]| {
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
    pytree_core::ops::fallible::try_map_n::<Std, T, N, E, _>(first, others, f)
}

/// [`zip_mut`] with a fallible `f`. Structures and array signatures are
/// checked before the first update (on a mismatch nothing changes). If `f`
/// fails, the leaves before the failing one are updated, the failing leaf
/// is as `f` left it, the rest are untouched, and the error names the
/// failing leaf's path.
///
/// Engine (any namespace): [`pytree_core::ops::fallible::try_zip_mut`](crate::generic::fallible::try_zip_mut).
///
/// ```
/// let mut p = vec![1.0f64, 2.0, 3.0];
/// let g = vec![0.5f64, f64::NAN, 0.5];
/// let err = pytree_std::multi::try_zip_mut(&mut p, [&g], |p, [g]| {
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
    pytree_core::ops::fallible::try_zip_mut::<Std, T, N, E, _>(tree, others, f)
}

/// Updates `N` trees in place in one pass while reading `M` more, leaf by
/// leaf: `f([leaf of each mutable tree], [leaf of each other tree])`, as
/// an optimizer updates parameters and moments from a gradient. Every
/// tree is checked against the first before anything changes (structures
/// and array signatures; trees numbered from 0, mutable ones first).
///
/// Engine (any namespace): [`pytree_core::ops::multi::zip_mut_n`](crate::generic::multi::zip_mut_n).
///
/// ```
/// use pytree_std::PyTree;
/// #[derive(PyTree, Debug, PartialEq)]
/// struct Linear { w: f32, b: f32 }
/// let mut params = Linear { w: 1.0, b: 1.0 };
/// let mut velocity = Linear { w: 0.0, b: 0.0 };
/// let grads = Linear { w: 1.0, b: -1.0 };
/// pytree_std::multi::zip_mut_n([&mut params, &mut velocity], [&grads], |[p, v], [g]| {
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
    pytree_core::ops::multi::zip_mut_n::<Std, T, N, M, _>(muts, refs, f)
}

/// [`zip_mut_n`] with a fallible `f`: the first error stops the pass and
/// names its leaf's path; the leaves before it are updated in every
/// mutable tree, the failing ones are as `f` left them, the rest are
/// untouched.
///
/// Engine (any namespace): [`pytree_core::ops::multi::try_zip_mut_n`](crate::generic::multi::try_zip_mut_n).
///
/// ```
/// let (mut p, mut v) = (vec![1.0f64, 2.0], vec![0.0f64, 0.0]);
/// let err = pytree_std::multi::try_zip_mut_n([&mut p, &mut v], [&vec![4.0f64, -1.0]], |[p, v], [g]| {
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
    pytree_core::ops::multi::try_zip_mut_n::<Std, T, N, M, E, _>(muts, refs, f)
}

/// Checks that two trees (of any types, any leaf types) have the same
/// structure; otherwise the error lists every place where `b` differs from
/// `a` (dm-tree's `assert_same_structure`, as a value).
///
/// Engine (any namespace): [`pytree_core::ops::multi::check_same_structure`](crate::generic::multi::check_same_structure).
///
/// ```
/// use std::collections::BTreeMap;
/// let a = BTreeMap::from([("a", vec![1.0f32, 2.0]), ("b", vec![3.0])]);
/// let b = BTreeMap::from([("a", vec![0u8]), ("c", vec![0u8])]);
/// pytree_std::multi::check_same_structure(&a, &a.clone())?;
/// let err = pytree_std::multi::check_same_structure(&a, &b).unwrap_err();
/// assert_eq!(err.to_string(), "tree structures differ (2 mismatches found)\
///     \n  tree 1 at <root>: map key mismatch; expected key(s): [\"a\", \"b\"], got key(s): [\"a\", \"c\"], \
///         missing key(s): [\"b\"], extra key(s): [\"c\"]\
///     \n  tree 1 at [\"a\"]: sequence length mismatch: expected 2, found 1");
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn check_same_structure<A: Flatten<Std>, B: Flatten<Std>>(a: &A, b: &B) -> Result<(), Error> {
    pytree_core::ops::multi::check_same_structure::<Std, A, B>(a, b)
}
