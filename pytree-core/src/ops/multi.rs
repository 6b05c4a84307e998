//! Several trees of one type at once: `map_n` and `zip_mut` run the typed
//! check then the typed lockstep walk ([`Unflatten::zip_with`] /
//! [`Flatten::zip_mut`]) and, only
//! when it fails, compare the TreeDefs and the leaves' signatures to
//! report *every* mismatch, each with its key path, its tree and both
//! sides: every structural difference (a length, a key, a node type), and
//! every leaf whose dtype or shape differs from the first tree's leaf at
//! the same key path (the cold path costs nothing on success).
//! `check_same_structure` is the structural comparison on its own.

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::error::Error;
use crate::leaf::{LeafMut, LeafRef};
use crate::ops::structure;
use crate::traits::flatten::defaults::all_some;
use crate::traits::flatten::{Flatten, Unflatten};
use crate::treedef::TreeDef;

/// Every mismatch between `first` and each of `others` (tree `j + 1`), as
/// one error; `fallback` if the TreeDefs show none.
#[cold]
pub(crate) fn all_mismatches(
    first: &TreeDef,
    others: impl IntoIterator<Item = (usize, TreeDef)>,
    fallback: Error,
) -> Error {
    let mut found = Vec::new();
    for (tree, def) in others {
        found.extend(first.diff(&def).into_iter().map(|e| e.in_tree(tree)));
    }
    if found.is_empty() {
        fallback
    } else {
        Error::from_mismatches(found)
    }
}

/// Every mismatch between `first` and each of `others` (tree `j + 1`):
/// the TreeDefs' differences, then the leaves at one key path in both
/// trees whose signatures (dtype, shape) differ; `err` if there are none.
#[cold]
pub(crate) fn explain<Ns, T: Flatten<Ns>, const N: usize>(
    first: &T,
    others: [&T; N],
    err: Error,
) -> Error {
    explain_all::<Ns, T>(first, &others, err)
}

/// The leaves of `other` (tree `tree`) whose signature differs from that
/// of `first`'s leaf at the same key path, each as an error at that path.
/// Leaves at paths only one tree has are the TreeDefs' differences.
#[cold]
pub(crate) fn signature_mismatches<Ns, T: Flatten<Ns>>(
    first: &T,
    other: &T,
    tree: usize,
    out: &mut Vec<Error>,
) {
    let a = crate::ops::with_path::leaves_with_path::<Ns, T>(first);
    let b = crate::ops::with_path::leaves_with_path::<Ns, T>(other);
    let mut push = |path: &crate::paths::key_path::KeyPath,
                    x: &LeafRef<'_, Ns, T::Leaf>,
                    y: &LeafRef<'_, Ns, T::Leaf>| {
        let (sx, sy) = (
            <T::Leaf as crate::leaf::Leaf<Ns>>::signature(x),
            <T::Leaf as crate::leaf::Leaf<Ns>>::signature(y),
        );
        if let Some(e) = crate::error::signature_mismatch(sx.as_ref(), sy.as_ref()) {
            out.push(e.under(path).in_tree(tree));
        }
    };
    if a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| x.0 == y.0) {
        for ((path, x), (_, y)) in a.iter().zip(&b) {
            push(path, x, y);
        }
    } else {
        let index: BTreeMap<String, usize> = b
            .iter()
            .enumerate()
            .map(|(i, (path, _))| (path.to_string(), i))
            .collect();
        for (path, x) in &a {
            if let Some(&i) = index.get(&path.to_string()) {
                push(path, x, &b[i].1);
            }
        }
    }
}

/// `pytree_std::walk::map_n` for any namespace `Ns` (documented there;
/// [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// let t = pytree_core::ops::multi::map_n::<pytree_std::Std, _, _, _>(&(1, 2), [&(10, 20), &(100, 200)], |a, [b, c]| a + b + c)?;
/// assert_eq!(t, (111, 222));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn map_n<'a, Ns, T, const N: usize, F>(
    first: &'a T,
    others: [&'a T; N],
    mut f: F,
) -> Result<T, Error>
where
    T: Unflatten<Ns>,
    F: FnMut(LeafRef<'a, Ns, T::Leaf>, [LeafRef<'a, Ns, T::Leaf>; N]) -> T::Leaf,
{
    first
        .zip_with(others, &mut f)
        .map_err(|e| explain::<Ns, T, N>(first, others, e))
}

/// `pytree_std::walk::zip_mut` for any namespace `Ns` (documented there;
/// [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// let mut params = vec![1.0f64, 2.0];
/// pytree_core::ops::multi::zip_mut::<pytree_std::Std, _, _, _>(&mut params, [&vec![0.5, 0.5]], |p, [g]| *p -= g)?;
/// assert_eq!(params, [0.5, 1.5]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn zip_mut<'a, Ns, T, const N: usize, F>(
    tree: &'a mut T,
    others: [&'a T; N],
    mut f: F,
) -> Result<(), Error>
where
    T: Flatten<Ns>,
    F: FnMut(LeafMut<'a, Ns, T::Leaf>, [LeafRef<'a, Ns, T::Leaf>; N]),
{
    if let Err(e) = tree.zip_check(others) {
        return Err(explain::<Ns, T, N>(tree, others, e));
    }
    tree.zip_mut_prechecked(others, &mut f);
    Ok(())
}

/// The engine of `pytree_std::walk::zip_mut`, for any namespace `Ns`
/// (documented there; [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// use pytree_std::PyTree;
/// #[derive(PyTree, Debug, PartialEq)]
/// struct Linear { w: f32, b: f32 }
/// let mut params = Linear { w: 1.0, b: 1.0 };
/// let mut velocity = Linear { w: 0.0, b: 0.0 };
/// let grads = Linear { w: 1.0, b: -1.0 };
/// pytree_core::ops::multi::zip_mut_n::<pytree_std::Std, _, _, _, _>([&mut params, &mut velocity], [&grads], |[p, v], [g]| {
///     *v = 0.9 * *v + g;
///     *p -= 0.1 * *v;
/// })?;
/// assert_eq!(params, Linear { w: 0.9, b: 1.1 });
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn zip_mut_n<Ns, T, const N: usize, const M: usize, F>(
    muts: [&mut T; N],
    refs: [&T; M],
    mut f: F,
) -> Result<(), Error>
where
    T: Flatten<Ns>,
    F: for<'x> FnMut([LeafMut<'x, Ns, T::Leaf>; N], [LeafRef<'x, Ns, T::Leaf>; M]),
{
    try_zip_mut_n::<Ns, T, N, M, core::convert::Infallible, _>(muts, refs, |ms, rs| {
        f(ms, rs);
        Ok(())
    })
}

/// The engine of `pytree_std::walk::zip_mut` (with a closure returning a
/// `Result`), for any namespace `Ns` (documented there; [`ops`](crate::ops)
/// says how to name `Ns`).
///
/// ```
/// let (mut p, mut v) = (vec![1.0f64, 2.0], vec![0.0f64, 0.0]);
/// let err = pytree_core::ops::multi::try_zip_mut_n::<pytree_std::Std, _, _, _, _, _>([&mut p, &mut v], [&vec![4.0f64, -1.0]], |[p, v], [g]| {
///     *v += g;
///     *p -= v.sqrt();
///     if p.is_nan() { Err("NaN") } else { Ok(()) }
/// })
/// .unwrap_err();
/// assert_eq!(err.to_string(), "at [1]: the function failed: NaN");
/// ```
pub fn try_zip_mut_n<Ns, T, const N: usize, const M: usize, E, F>(
    mut muts: [&mut T; N],
    refs: [&T; M],
    mut f: F,
) -> Result<(), Error>
where
    T: Flatten<Ns>,
    E: crate::error::IntoLeafFnError,
    F: for<'x> FnMut([LeafMut<'x, Ns, T::Leaf>; N], [LeafRef<'x, Ns, T::Leaf>; M]) -> Result<(), E>,
{
    check_all::<Ns, T>(
        muts.iter()
            .map(|t| &**t)
            .chain(refs.iter().copied())
            .collect(),
    )?;
    let mut failed: Option<(usize, E)> = None;
    {
        let mut ms = muts
            .each_mut()
            .map(|t| crate::ops::leaves_mut::<Ns, T>(t).into_iter());
        let mut rs = refs.map(|t| crate::ops::leaves::<Ns, T>(t).into_iter());
        let mut i = 0;
        loop {
            let (Some(m), Some(r)) = (
                all_some(ms.each_mut().map(Iterator::next)),
                all_some(rs.each_mut().map(Iterator::next)),
            ) else {
                break;
            };
            if let Err(e) = f(m, r) {
                failed = Some((i, e));
                break;
            }
            i += 1;
        }
    }
    let Some((i, e)) = failed else {
        return Ok(());
    };
    let first = muts.first().map(|t| &**t).or(refs.first().copied());
    Err(leaf_fn_failed::<Ns, T, E>(first, i, e))
}

/// The error of a leaf function that failed at leaf `index` (in leaf
/// order) of trees shaped as `first`: `f`'s error at that leaf's key path.
/// The one place `try_zip_mut_n` and its parallel form
/// (`pytree_std::parallel::par_zip_mut`) build it.
///
/// ```
/// let err = pytree_core::ops::multi::leaf_fn_failed::<pytree_std::Std, _, _>(Some(&(1, vec![2, 3])), 2, "NaN");
/// assert_eq!(err.to_string(), "at [1][1]: the function failed: NaN");
/// ```
#[cold]
pub fn leaf_fn_failed<Ns, T: Flatten<Ns>, E: crate::error::IntoLeafFnError>(
    first: Option<&T>,
    index: usize,
    e: E,
) -> Error {
    let def = match first {
        Some(t) => structure::<Ns, T>(t),
        None => crate::treedef::TreeDef::leaf(),
    };
    let err = Error::leaf_fn(e);
    match def.leaf_path(index) {
        Some(path) => err.under(&path),
        None => err,
    }
}

/// Checks every tree against the first (as `zip_check` does, signatures of
/// array leaves included); on failure lists every mismatch (structure and
/// signatures, of every tree), trees numbered from 0. The check of
/// [`try_zip_mut_n`] and [`zip_mut_n`], and of their parallel forms
/// (`pytree_std::parallel`).
///
/// ```
/// use pytree_core::ops::multi::check_all;
/// assert!(check_all::<pytree_std::Std, _>(vec![&vec![1, 2], &vec![3, 4]]).is_ok());
/// let err = check_all::<pytree_std::Std, _>(vec![&vec![1, 2], &vec![3]]).unwrap_err();
/// assert_eq!(err.to_string(), "tree 1 at <root>: sequence length mismatch: expected 2, found 1");
/// ```
pub fn check_all<Ns, T: Flatten<Ns>>(trees: Vec<&T>) -> Result<(), Error> {
    let Some((first, rest)) = trees.split_first() else {
        return Ok(());
    };
    for (j, other) in rest.iter().enumerate() {
        if let Err(e) = first.zip_check([*other]) {
            return Err(explain_all::<Ns, T>(first, rest, e.with_tree(Some(j + 1))));
        }
    }
    Ok(())
}

/// [`explain`] for a slice of other trees.
#[cold]
pub(crate) fn explain_all<Ns, T: Flatten<Ns>>(first: &T, rest: &[&T], err: Error) -> Error {
    let def = structure::<Ns, T>(first);
    let mut found = Vec::new();
    for (j, other) in rest.iter().enumerate() {
        found.extend(
            def.diff(&structure::<Ns, T>(*other))
                .into_iter()
                .map(|e| e.in_tree(j + 1)),
        );
        signature_mismatches::<Ns, T>(first, other, j + 1, &mut found);
    }
    if found.is_empty() {
        err
    } else {
        Error::from_mismatches(found)
    }
}

/// Checks that every tree has the first one's structure, for any namespace `Ns`
/// ([`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// use std::collections::BTreeMap;
/// let a = BTreeMap::from([("a", vec![1.0f32, 2.0]), ("b", vec![3.0])]);
/// let b = BTreeMap::from([("a", vec![0u8]), ("c", vec![0u8])]);
/// pytree_core::ops::multi::check_same_structure::<pytree_std::Std, _, _>(&a, &a.clone())?;
/// let err = pytree_core::ops::multi::check_same_structure::<pytree_std::Std, _, _>(&a, &b).unwrap_err();
/// assert_eq!(err.to_string(), "tree structures differ (2 mismatches found)\
///     \n  tree 1 at <root>: map key mismatch; expected key(s): [\"a\", \"b\"], got key(s): [\"a\", \"c\"], \
///         missing key(s): [\"b\"], extra key(s): [\"c\"]\
///     \n  tree 1 at [\"a\"]: sequence length mismatch: expected 2, found 1");
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn check_same_structure<Ns, A: Flatten<Ns>, B: Flatten<Ns>>(a: &A, b: &B) -> Result<(), Error> {
    let (da, db) = (structure::<Ns, A>(a), structure::<Ns, B>(b));
    match da.diff(&db) {
        diff if diff.is_empty() => Ok(()),
        diff => Err(Error::from_mismatches(
            diff.into_iter().map(|e| e.in_tree(1)).collect(),
        )),
    }
}
