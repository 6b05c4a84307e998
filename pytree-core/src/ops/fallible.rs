//! Operations whose leaf function can fail (`try_map`, `try_map_n`,
//! `try_zip_mut`, `try_for_each_mut`): the function returns
//! `Result<_, E>` (a candle operation, a check), and its first error comes
//! back as an [`Error`] of kind [`LeafFn`](crate::ErrorKind::LeafFn) at the
//! key path of the leaf that failed, with `E` as its source.
//!
//! The functions take leaves lent for the call only (`for<'x> FnMut(..)`),
//! so that the tree is free again to name the failing leaf's path.
//!
//! What an in-place form leaves behind after an error: the leaves before
//! the failing one (in pre-order) are updated, the failing leaf is as the
//! function left it, and the leaves after it are untouched. Operations
//! that build a new tree drop what they built.

use alloc::vec::Vec;

use crate::error::Error;
pub use crate::error::IntoLeafFnError;
use crate::leaf::{LeafMut, LeafRef};
use crate::ops::multi::explain;
use crate::ops::{flatten, leaves, structure, unflatten};
use crate::traits::flatten::{Flatten, Unflatten};

/// The error of the function at leaf `i` of a tree of structure `def`.
#[cold]
fn failed_at(def: &crate::treedef::TreeDef, i: usize, err: impl IntoLeafFnError) -> Error {
    let err = Error::leaf_fn(err);
    match def.leaf_path(i) {
        Some(path) => err.under(&path),
        None => err,
    }
}

/// The engine of `pytree_std::walk::map_into` (with a closure returning a
/// `Result`), for any namespace `Ns` (documented there; [`ops`](crate::ops)
/// says how to name `Ns`).
///
/// ```
/// let t: (u8, Vec<u8>) = pytree_core::ops::fallible::try_map::<pytree_std::Std, _, _, _, _>((1i32, vec![2i32]), u8::try_from)?;
/// assert_eq!(t, (1, vec![2]));
/// let err = pytree_core::ops::fallible::try_map::<pytree_std::Std, _, (u8, Vec<u8>), _, _>((1i32, vec![300i32]), u8::try_from).unwrap_err();
/// assert_eq!(err.to_string(), "at [1][0]: the function failed: out of range integral type conversion attempted");
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn try_map<Ns, T, U, E, F>(tree: T, mut f: F) -> Result<U, Error>
where
    T: Flatten<Ns>,
    U: Unflatten<Ns>,
    E: IntoLeafFnError,
    F: FnMut(T::Leaf) -> Result<U::Leaf, E>,
{
    let (leaves, def) = flatten::<Ns, T>(tree);
    let mut out = Vec::with_capacity(leaves.len());
    for (i, leaf) in leaves.into_iter().enumerate() {
        match f(leaf) {
            Ok(x) => out.push(x),
            Err(e) => return Err(failed_at(&def, i, e)),
        }
    }
    unflatten::<Ns, U, _>(&def, out)
}

/// The engine of `pytree_std::walk::map_n` (with a closure returning a
/// `Result`), for any namespace `Ns` (documented there; [`ops`](crate::ops)
/// says how to name `Ns`).
///
/// ```
/// let t = pytree_core::ops::fallible::try_map_n::<pytree_std::Std, _, _, _, _>(&vec![1u8, 2], [&vec![3u8, 4], &vec![5u8, 250]], |a, [b, c]| {
///     a.checked_add(*b).and_then(|s| s.checked_add(*c)).ok_or("overflow")
/// });
/// assert_eq!(t.unwrap_err().to_string(), "at [1]: the function failed: overflow");
/// ```
pub fn try_map_n<Ns, T, const N: usize, E, F>(
    first: &T,
    others: [&T; N],
    mut f: F,
) -> Result<T, Error>
where
    T: Unflatten<Ns>,
    E: IntoLeafFnError,
    F: for<'x> FnMut(LeafRef<'x, Ns, T::Leaf>, [LeafRef<'x, Ns, T::Leaf>; N]) -> Result<T::Leaf, E>,
{
    if let Err(e) = first.zip_check(others) {
        return Err(explain::<Ns, T, N>(first, others, e));
    }
    let def = structure::<Ns, T>(first);
    let mut theirs = others.map(|o| leaves::<Ns, T>(o).into_iter());
    let mut out = Vec::with_capacity(def.num_leaves());
    for (i, x) in leaves::<Ns, T>(first).into_iter().enumerate() {
        let Some(ys) =
            crate::traits::flatten::defaults::all_some(theirs.each_mut().map(Iterator::next))
        else {
            return Err(Error::custom("the trees have different numbers of leaves"));
        };
        match f(x, ys) {
            Ok(y) => out.push(y),
            Err(e) => return Err(failed_at(&def, i, e)),
        }
    }
    // Through the TreeDef (its checks: a typed array of another rank is an
    // error at its path), or like `first` for a type a TreeDef cannot
    // build alone (a burn module).
    crate::traits::flatten::walks::unflatten_like::<Ns, T>(&def, first, out)
}

/// The engine of `pytree_std::walk::zip_mut` (with one tree written and a
/// closure returning a `Result`), for any namespace `Ns` (documented there;
/// [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// let mut p = vec![1.0f64, 2.0, 3.0];
/// let g = vec![0.5f64, f64::NAN, 0.5];
/// let err = pytree_core::ops::fallible::try_zip_mut::<pytree_std::Std, _, _, _, _>(&mut p, [&g], |p, [g]| {
///     if g.is_nan() { return Err("NaN gradient"); }
///     *p -= g;
///     Ok(())
/// })
/// .unwrap_err();
/// assert_eq!(err.to_string(), "at [1]: the function failed: NaN gradient");
/// assert_eq!(p, [0.5, 2.0, 3.0]);
/// ```
pub fn try_zip_mut<Ns, T, const N: usize, E, F>(
    tree: &mut T,
    others: [&T; N],
    mut f: F,
) -> Result<(), Error>
where
    T: Flatten<Ns>,
    E: IntoLeafFnError,
    F: for<'x> FnMut(LeafMut<'x, Ns, T::Leaf>, [LeafRef<'x, Ns, T::Leaf>; N]) -> Result<(), E>,
{
    if let Err(e) = tree.zip_check(others) {
        return Err(explain::<Ns, T, N>(tree, others, e));
    }
    let mut failed: Option<(usize, E)> = None;
    let mut i = 0;
    tree.zip_mut_prechecked(others, &mut |x, ys| {
        if failed.is_none() {
            if let Err(e) = f(x, ys) {
                failed = Some((i, e));
            }
            i += 1;
        }
    });
    match failed {
        None => Ok(()),
        Some((i, e)) => Err(failed_at(&structure::<Ns, T>(tree), i, e)),
    }
}

/// The engine of `pytree_std::walk::for_each_mut` (with a closure returning a
/// `Result`), for any namespace `Ns` (documented there; [`ops`](crate::ops)
/// says how to name `Ns`).
///
/// ```
/// let mut t = (1u8, vec![200u8, 3]);
/// let err = pytree_core::ops::fallible::try_for_each_mut::<pytree_std::Std, _, _, _>(&mut t, |x| {
///     *x = x.checked_mul(2).ok_or("overflow")?;
///     Ok::<(), &str>(())
/// })
/// .unwrap_err();
/// assert_eq!(err.to_string(), "at [1][0]: the function failed: overflow");
/// assert_eq!(t, (2, vec![200, 3]));
/// ```
pub fn try_for_each_mut<Ns, T, E, F>(tree: &mut T, mut f: F) -> Result<(), Error>
where
    T: Flatten<Ns>,
    E: IntoLeafFnError,
    F: for<'x> FnMut(LeafMut<'x, Ns, T::Leaf>) -> Result<(), E>,
{
    let mut failed: Option<(usize, E)> = None;
    let mut i = 0;
    crate::ops::for_each_mut::<Ns, T, _>(&mut *tree, |x| {
        if failed.is_none() {
            if let Err(e) = f(x) {
                failed = Some((i, e));
            }
            i += 1;
        }
    });
    match failed {
        None => Ok(()),
        Some((i, e)) => Err(failed_at(&structure::<Ns, T>(tree), i, e)),
    }
}
