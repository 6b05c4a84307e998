//! The walks: a tree taken apart and rebuilt ([`flatten`], [`unflatten`],
//! [`structure`], [`leaves`], [`leaves_mut`], [`drop_deep`]), its leaves
//! mapped ([`map`], [`map_into`], over several trees [`map_n`]) and
//! updated in place ([`for_each_mut`], from other trees [`zip_mut`]).
//! "zip" always means walking trees in step.
//!
//! A visit that only reads is a loop over [`leaves`] (or a
//! [`fold`](crate::reductions::fold), which builds no `Vec`); the structure
//! of two trees is compared through their TreeDefs:
//!
//! | to do | write |
//! | --- | --- |
//! | call `f` on every leaf (was `for_each`) | `leaves(&t).into_iter().for_each(f)` |
//! | with its key path | `paths::leaves_with_path(&t)` |
//! | same structure? (was `check_same_structure`) | `structure(&a).diff(&structure(&b)).is_empty()` |
//!
//! ```
//! let mut seen = Vec::new();
//! pytree_std::leaves(&(1i32, vec![2i32, 3])).into_iter().for_each(|x| seen.push(*x));
//! assert_eq!(seen, [1, 2, 3]);
//! let (a, b) = (pytree_std::structure(&(1.0, vec![2.0])), pytree_std::structure(&(0u8, vec![0u8, 1])));
//! let diff: Vec<String> = a.diff(&b).iter().map(|e| e.to_string()).collect();
//! assert_eq!(diff, ["at [1]: sequence length mismatch: expected 1, found 2"]);
//! ```
//!
//! One function per walk, learned once:
//! - **Several trees** are one form: `map_n(&a, [&b, &c], |x, [y, z]| ..)`
//!   (JAX's `tree_map(f, a, b, c)`), `zip_mut([&mut p, &mut m], [&g], |[p,
//!   m], [g]| ..)` (update `N` trees in one pass while reading `M` more;
//!   `zip_mut([&mut p], [&g], |[p], [g]| ..)` for one).
//! - **Fallibility comes from the closure's return type**
//!   ([`LeafFnOutput`]): a function that returns `Result<_, E>` makes the
//!   walk stop at its first error, which comes back as an [`Error`] of kind
//!   [`LeafFn`](crate::ErrorKind::LeafFn) at the failing leaf's key path
//!   with `E` as its source; a function that returns the plain value takes
//!   the walk with no bookkeeping. ([`map`] is the exception: it keeps the
//!   tree's type and returns it without a `Result`; a fallible map is
//!   [`map_into`].)
//! - Key paths are [`paths`](crate::paths)' `*_with_path` walks; parallel
//!   walks are in `parallel` (feature `rayon`), with the same arguments.
//!
//! Each function is fixed to [`Std`]; its body calls the engine, generic
//! over the namespace, in `pytree_core::ops::basic`, `multi` and
//! `fallible`, reachable here as [`generic`](crate::generic).

use core::convert::Infallible;

use crate::std_namespace::Std;
use pytree_core::{Error, Flatten, IntoLeafFnError, Leaf, LeafMut, LeafRef, TreeDef, Unflatten};

/// What a leaf function may return: the value itself (a leaf `L`, or `()`
/// for an in-place update), or `Result<L, E>`, which makes the walk
/// fallible. Implemented for both (the target `L` is the trait's
/// parameter, so the two impls do not overlap), so [`map_into`],
/// [`map_n`], [`for_each_mut`], [`zip_mut`] and `parallel::par_zip_mut`
/// each have one form for both kinds of function.
///
/// ```
/// // One function, infallible and fallible:
/// let t: Vec<i64> = pytree_std::walk::map_into(vec![1i32, 2], i64::from)?;
/// assert_eq!(t, [1, 2]);
/// let err = pytree_std::walk::map_into::<_, Vec<u8>, _>(vec![1i32, 300], u8::try_from).unwrap_err();
/// assert_eq!(err.to_string(), "at [1]: the function failed: out of range integral type conversion attempted");
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub trait LeafFnOutput<L>: Sized {
    /// The function's error: `E`, or [`Infallible`] for a plain value.
    type Err: IntoLeafFnError;
    /// What [`for_each_mut`] returns: `()` for a plain function,
    /// `Result<(), Error>` for a fallible one.
    type Outcome;
    /// The value, or the function's error.
    fn into_result(self) -> Result<L, Self::Err>;

    /// [`map_into`] with the engine's walk for this kind of function.
    #[doc(hidden)]
    fn map_into<T, U, F>(tree: T, f: F) -> Result<U, Error>
    where
        T: Flatten<Std>,
        U: Unflatten<Std, Leaf = L>,
        F: FnMut(T::Leaf) -> Self;

    /// [`map_n`] with the engine's walk for this kind of function.
    #[doc(hidden)]
    fn map_n<T, const N: usize, F>(first: &T, others: [&T; N], f: F) -> Result<T, Error>
    where
        T: Unflatten<Std, Leaf = L>,
        L: Leaf<Std>,
        F: for<'x> FnMut(LeafRef<'x, Std, T::Leaf>, [LeafRef<'x, Std, T::Leaf>; N]) -> Self;

    /// [`for_each_mut`] with the engine's walk for this kind of function.
    #[doc(hidden)]
    fn for_each_mut<T, F>(tree: &mut T, f: F) -> Self::Outcome
    where
        T: Flatten<Std>,
        F: for<'x> FnMut(LeafMut<'x, Std, T::Leaf>) -> Self;

    /// [`zip_mut`] of one mutable tree (the typed lockstep walk) with the
    /// engine's walk for this kind of function.
    #[doc(hidden)]
    fn zip_mut_one<T, const M: usize, F>(tree: &mut T, refs: [&T; M], f: F) -> Result<(), Error>
    where
        T: Flatten<Std>,
        F: for<'x> FnMut(LeafMut<'x, Std, T::Leaf>, [LeafRef<'x, Std, T::Leaf>; M]) -> Self;
}

/// A plain value: the infallible walks.
impl<L> LeafFnOutput<L> for L {
    type Err = Infallible;
    type Outcome = ();
    #[inline]
    fn into_result(self) -> Result<L, Infallible> {
        Ok(self)
    }
    fn map_into<T, U, F>(tree: T, f: F) -> Result<U, Error>
    where
        T: Flatten<Std>,
        U: Unflatten<Std, Leaf = L>,
        F: FnMut(T::Leaf) -> L,
    {
        pytree_core::ops::basic::map_into::<Std, T, U, _>(tree, f)
    }
    fn map_n<T, const N: usize, F>(first: &T, others: [&T; N], f: F) -> Result<T, Error>
    where
        T: Unflatten<Std, Leaf = L>,
        L: Leaf<Std>,
        F: for<'x> FnMut(LeafRef<'x, Std, T::Leaf>, [LeafRef<'x, Std, T::Leaf>; N]) -> L,
    {
        pytree_core::ops::multi::map_n::<Std, T, N, _>(first, others, f)
    }
    fn for_each_mut<T, F>(tree: &mut T, f: F)
    where
        T: Flatten<Std>,
        F: for<'x> FnMut(LeafMut<'x, Std, T::Leaf>) -> L,
    {
        let mut f = f;
        pytree_core::ops::basic::for_each_mut::<Std, T, _>(tree, |x| {
            f(x);
        })
    }
    fn zip_mut_one<T, const M: usize, F>(tree: &mut T, refs: [&T; M], f: F) -> Result<(), Error>
    where
        T: Flatten<Std>,
        F: for<'x> FnMut(LeafMut<'x, Std, T::Leaf>, [LeafRef<'x, Std, T::Leaf>; M]) -> L,
    {
        let mut f = f;
        pytree_core::ops::multi::zip_mut::<Std, T, M, _>(tree, refs, |x, ys| {
            f(x, ys);
        })
    }
}

/// A `Result`: the fallible walks, stopped by the first error.
impl<L, E: IntoLeafFnError> LeafFnOutput<L> for Result<L, E> {
    type Err = E;
    type Outcome = Result<(), Error>;
    #[inline]
    fn into_result(self) -> Result<L, E> {
        self
    }
    fn map_into<T, U, F>(tree: T, f: F) -> Result<U, Error>
    where
        T: Flatten<Std>,
        U: Unflatten<Std, Leaf = L>,
        F: FnMut(T::Leaf) -> Self,
    {
        pytree_core::ops::fallible::try_map::<Std, T, U, E, _>(tree, f)
    }
    fn map_n<T, const N: usize, F>(first: &T, others: [&T; N], f: F) -> Result<T, Error>
    where
        T: Unflatten<Std, Leaf = L>,
        L: Leaf<Std>,
        F: for<'x> FnMut(LeafRef<'x, Std, T::Leaf>, [LeafRef<'x, Std, T::Leaf>; N]) -> Self,
    {
        pytree_core::ops::fallible::try_map_n::<Std, T, N, E, _>(first, others, f)
    }
    fn for_each_mut<T, F>(tree: &mut T, f: F) -> Result<(), Error>
    where
        T: Flatten<Std>,
        F: for<'x> FnMut(LeafMut<'x, Std, T::Leaf>) -> Self,
    {
        let mut f = f;
        pytree_core::ops::fallible::try_for_each_mut::<Std, T, E, _>(tree, |x| f(x).map(|_| ()))
    }
    fn zip_mut_one<T, const M: usize, F>(tree: &mut T, refs: [&T; M], f: F) -> Result<(), Error>
    where
        T: Flatten<Std>,
        F: for<'x> FnMut(LeafMut<'x, Std, T::Leaf>, [LeafRef<'x, Std, T::Leaf>; M]) -> Self,
    {
        let mut f = f;
        pytree_core::ops::fallible::try_zip_mut::<Std, T, M, E, _>(tree, refs, |x, ys| {
            f(x, ys).map(|_| ())
        })
    }
}

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

/// Applies `f` to every leaf and rebuilds a `U`, whose leaf type may
/// differ, checked through the TreeDef (a `U` of another structure is an
/// error). `f` may fail ([`LeafFnOutput`]): its first error comes back at
/// its leaf's path, with `f`'s error as the
/// [`source`](std::error::Error::source).
///
/// Engine (any namespace): [`pytree_core::ops::basic::map_into`](crate::generic::basic::map_into),
/// [`pytree_core::ops::fallible::try_map`](crate::generic::fallible::try_map).
///
/// ```
/// let t: Vec<f64> = pytree_std::walk::map_into(vec![1.0f32], f64::from)?;
/// assert_eq!(t, [1.0]);
/// let t: (u8, Vec<u8>) = pytree_std::walk::map_into((1i32, vec![2i32]), u8::try_from)?;
/// assert_eq!(t, (1, vec![2]));
/// let err = pytree_std::walk::map_into::<_, (u8, Vec<u8>), _>((1i32, vec![300i32]), u8::try_from).unwrap_err();
/// assert_eq!(err.to_string(), "at [1][0]: the function failed: out of range integral type conversion attempted");
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn map_into<T: Flatten<Std>, U: Unflatten<Std>, R: LeafFnOutput<U::Leaf>>(
    tree: T,
    f: impl FnMut(T::Leaf) -> R,
) -> Result<U, Error> {
    R::map_into::<T, U, _>(tree, f)
}

/// Combines `first` with `N` more trees of the same type, leaf by leaf
/// (JAX's `tree_map(f, first, *others)`; zero-cost for any fixed `N`: the
/// others travel as an array of references). Lengths, keys, holes,
/// variants and static fields must match, and array leaves must have the
/// same signature (shape, dtype): the error names the place where they do
/// not, or lists every place
/// ([`ErrorKind::Mismatches`](crate::ErrorKind::Mismatches)). Leaves are
/// lent by reference ([`LeafRef`]).
///
/// `f` may fail ([`LeafFnOutput`], for leaf operations that return
/// `Result`, as candle's do): the structures are checked first, and the
/// first error of `f` comes back at its leaf's path; the result is then
/// rebuilt through the TreeDef.
///
/// Engine (any namespace): [`pytree_core::ops::multi::map_n`](crate::generic::multi::map_n),
/// [`pytree_core::ops::fallible::try_map_n`](crate::generic::fallible::try_map_n).
///
/// ```
/// let t = pytree_std::map_n(&(1, 2), [&(10, 20), &(100, 200)], |a, [b, c]| a + b + c)?;
/// assert_eq!(t, (111, 222));
/// let sum = pytree_std::map_n(&vec![1, 2], [&vec![10, 20]], |a, [b]| a + b)?;
/// assert_eq!(sum, [11, 22]);
/// let err = pytree_std::map_n(&vec![1, 2], [&vec![10]], |a, [b]| a + b).unwrap_err();
/// assert_eq!(err.to_string(), "tree 1 at <root>: sequence length mismatch: expected 2, found 1");
/// let div = |a: &i32, [b]: [&i32; 1]| a.checked_div(*b).ok_or("division by zero");
/// assert_eq!(pytree_std::map_n(&(6i32, vec![8i32]), [&(3, vec![2])], div)?, (2, vec![4]));
/// let err = pytree_std::map_n(&(6i32, vec![8i32]), [&(3, vec![0])], div).unwrap_err();
/// assert_eq!(err.to_string(), "at [1][0]: the function failed: division by zero");
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn map_n<T: Unflatten<Std>, const N: usize, R: LeafFnOutput<T::Leaf>>(
    first: &T,
    others: [&T; N],
    f: impl for<'x> FnMut(LeafRef<'x, Std, T::Leaf>, [LeafRef<'x, Std, T::Leaf>; N]) -> R,
) -> Result<T, Error> {
    R::map_n::<T, N, _>(first, others, f)
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
/// pytree_std::walk::drop_deep(c);
/// ```
pub fn drop_deep<T: Flatten<Std>>(tree: T) {
    pytree_core::ops::basic::drop_deep::<Std, T>(tree)
}

/// Calls `f` on every leaf by mutable reference ([`LeafMut`]): an
/// in-place update. `f` may fail ([`LeafFnOutput`]): then the walk stops
/// at its first error, which names the leaf's path, and the result is a
/// `Result<(), Error>`; the leaves before the failing one are updated, the
/// failing leaf is as `f` left it, the rest are untouched.
///
/// Engine (any namespace): [`pytree_core::ops::basic::for_each_mut`](crate::generic::basic::for_each_mut),
/// [`pytree_core::ops::fallible::try_for_each_mut`](crate::generic::fallible::try_for_each_mut).
///
/// ```
/// let mut t = (1.0f32, vec![2.0f32]);
/// pytree_std::for_each_mut(&mut t, |x: &mut f32| *x *= 10.0);
/// assert_eq!(t, (10.0, vec![20.0]));
///
/// let mut t = (1u8, vec![200u8, 3]);
/// let err = pytree_std::for_each_mut(&mut t, |x| {
///     *x = x.checked_mul(2).ok_or("overflow")?;
///     Ok::<(), &str>(())
/// })
/// .unwrap_err();
/// assert_eq!(err.to_string(), "at [1][0]: the function failed: overflow");
/// assert_eq!(t, (2, vec![200, 3]));
/// ```
pub fn for_each_mut<T: Flatten<Std>, R: LeafFnOutput<()>>(
    tree: &mut T,
    f: impl for<'x> FnMut(LeafMut<'x, Std, T::Leaf>) -> R,
) -> R::Outcome {
    R::for_each_mut::<T, _>(tree, f)
}

/// Updates `N` trees in place in one pass while reading `M` more, leaf by
/// leaf: `f([leaf of each mutable tree], [leaf of each other tree])`, as
/// an optimizer updates parameters and moments from a gradient; the SGD
/// step is `zip_mut([&mut params], [&grads], |[p], [g]| *p -= lr * g)`.
/// Every tree is checked against the first before anything changes
/// (structures and array signatures; trees numbered from 0, mutable ones
/// first): on a mismatch nothing changes. The mutable trees' leaves are
/// lent as [`LeafMut`], the others' as [`LeafRef`].
///
/// `f` may fail ([`LeafFnOutput`]): the first error stops the pass and
/// names its leaf's path; the leaves before it are updated in every
/// mutable tree, the failing ones are as `f` left them, the rest are
/// untouched.
///
/// Engine (any namespace): [`pytree_core::ops::multi::zip_mut`](crate::generic::multi::zip_mut)
/// (one mutable tree), [`pytree_core::ops::multi::zip_mut_n`](crate::generic::multi::zip_mut_n)
/// and their fallible forms.
///
/// ```
/// use pytree_std::PyTree;
/// #[derive(PyTree, Debug, PartialEq)]
/// struct Linear { w: f32, b: f32 }
/// let mut params = Linear { w: 1.0, b: 1.0 };
/// let mut velocity = Linear { w: 0.0, b: 0.0 };
/// let grads = Linear { w: 1.0, b: -1.0 };
/// pytree_std::zip_mut([&mut params, &mut velocity], [&grads], |[p, v], [g]| {
///     *v = 0.9 * *v + g;
///     *p -= 0.1 * *v;
/// })?;
/// assert_eq!(params, Linear { w: 0.9, b: 1.1 });
///
/// let mut p = vec![1.0f64, 2.0, 3.0];
/// let g = vec![0.5f64, f64::NAN, 0.5];
/// let err = pytree_std::zip_mut([&mut p], [&g], |[p], [g]| {
///     if g.is_nan() { return Err("NaN gradient"); }
///     *p -= g;
///     Ok(())
/// })
/// .unwrap_err();
/// assert_eq!(err.to_string(), "at [1]: the function failed: NaN gradient");
/// assert_eq!(p, [0.5, 2.0, 3.0]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn zip_mut<T: Flatten<Std>, const N: usize, const M: usize, R: LeafFnOutput<()>>(
    muts: [&mut T; N],
    refs: [&T; M],
    mut f: impl for<'x> FnMut([LeafMut<'x, Std, T::Leaf>; N], [LeafRef<'x, Std, T::Leaf>; M]) -> R,
) -> Result<(), Error> {
    if N == 1 {
        // One mutable tree: the typed lockstep walk.
        if let Some(tree) = muts.into_iter().next() {
            return R::zip_mut_one::<T, M, _>(tree, refs, |x, ys| f(one(x), ys));
        }
        return Ok(());
    }
    pytree_core::ops::multi::try_zip_mut_n::<Std, T, N, M, R::Err, _>(muts, refs, |xs, ys| {
        f(xs, ys).into_result()
    })
}

/// `[x]` as an array of length `N`, for `N == 1` (the callers,
/// [`zip_mut`] and `paths::zip_mut_with_path`, branch on it; the check
/// folds away).
#[inline(always)]
pub(crate) fn one<X, const N: usize>(x: X) -> [X; N] {
    let mut x = Some(x);
    core::array::from_fn(|_| x.take().expect("called with N == 1"))
}
