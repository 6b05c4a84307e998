//! Several trees of one type at once: `map_n` and `zip_mut` run the typed
//! check then the typed lockstep walk ([`Flatten::zip_with`] /
//! [`Flatten::zip_mut`]) and, only
//! when it fails, compare the TreeDefs to report *every* mismatch, each
//! with its key path, its tree and both sides (the cold path costs nothing
//! on success). `check_same_structure` is that comparison on its own.

use alloc::vec::Vec;

use crate::__private::all_some;
use crate::error::Error;
use crate::flatten::Flatten;
use crate::leaf::{LeafMut, LeafRef};
use crate::ops::structure;
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

#[cold]
pub(crate) fn explain<Ns, T: Flatten<Ns>, const N: usize>(
    first: &T,
    others: [&T; N],
    err: Error,
) -> Error {
    let def = structure::<Ns, T>(first);
    let others = others
        .iter()
        .enumerate()
        .map(|(j, o)| (j + 1, structure::<Ns, T>(*o)));
    all_mismatches(&def, others, err)
}

/// Combines `first` with `N` more trees of the same type, leaf by leaf:
/// `f(leaf, [leaf of each other])` (JAX's `tree_map(f, a, *rest)`). On a
/// mismatch the error lists every place where the others differ from
/// `first` (one error if there is one place, [`ErrorKind::Mismatches`]
/// otherwise).
///
/// [`ErrorKind::Mismatches`]: crate::ErrorKind::Mismatches
///
/// ```
/// use pytree_std::Std;
/// let t = pytree_core::map_n::<Std, _, 1, _>(&(1, vec![2]), [&(10, vec![20])], |a, [b]| a + b)?;
/// assert_eq!(t, (11, vec![22]));
/// let err = pytree_core::map_n::<Std, _, 1, _>(&(Some(1), vec![2]), [&(None, vec![])], |a, [b]| a + b)
///     .unwrap_err();
/// assert_eq!(err.to_string(), "tree structures differ (2 mismatches found)\
///     \n  tree 1 at [0]: node mismatch: expected Some(_), found None\
///     \n  tree 1 at [1]: sequence length mismatch: expected 1, found 0");
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn map_n<'a, Ns, T, const N: usize, F>(
    first: &'a T,
    others: [&'a T; N],
    mut f: F,
) -> Result<T, Error>
where
    T: Flatten<Ns>,
    F: FnMut(LeafRef<'a, Ns, T::Leaf>, [LeafRef<'a, Ns, T::Leaf>; N]) -> T::Leaf,
{
    first
        .zip_with(others, &mut f)
        .map_err(|e| explain::<Ns, T, N>(first, others, e))
}

/// Updates `tree` in place from `N` other trees of the same type, leaf by
/// leaf. The structures are checked before the first update: on a
/// mismatch, `tree` is unchanged and the error lists every mismatch, as
/// [`map_n`] does.
///
/// ```
/// use pytree_std::Std;
/// let mut p = vec![1.0f64, 2.0];
/// pytree_core::zip_mut::<Std, _, 1, _>(&mut p, [&vec![0.5, 0.5]], |x, [g]| *x -= g)?;
/// assert_eq!(p, [0.5, 1.5]);
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

/// Updates `N` trees in place in one pass, reading `M` more, leaf by leaf:
/// `f([leaf of each tree in muts], [leaf of each tree in refs])` (an Adam
/// step updates the parameters and both moments while reading the
/// gradient). All `N + M` trees are checked against the first before
/// anything changes (structures, and signatures of array leaves): on a
/// mismatch nothing changes and the error lists every mismatch (trees are
/// numbered from 0, `muts` first). `f` gets each leaf for its call only.
///
/// ```
/// use pytree_std::Std;
/// let (mut p, mut m) = (vec![1.0f32, 2.0], vec![0.0f32, 0.0]);
/// let g = vec![0.5f32, 1.0];
/// pytree_core::zip_mut_n::<Std, _, 2, 1, _>([&mut p, &mut m], [&g], |[p, m], [g]| {
///     *m = 0.9 * *m + 0.1 * g;
///     *p -= *m;
/// })?;
/// assert_eq!((p, m), (vec![0.95, 1.9], vec![0.05, 0.1]));
/// let short = vec![1.0f32];
/// let err = pytree_core::zip_mut_n::<Std, _, 1, 1, _>([&mut vec![0.0f32, 0.0]], [&short], |_, _| {})
///     .unwrap_err();
/// assert_eq!(err.to_string(), "tree 1 at <root>: sequence length mismatch: expected 2, found 1");
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

/// The fallible [`zip_mut_n`]: the first error of `f` stops the pass and
/// names its leaf's path. After an error, the leaves before the failing one
/// are updated (in every tree of `muts`), the failing ones are as `f` left
/// them, and the rest are untouched.
///
/// ```
/// use pytree_std::Std;
/// let (mut p, mut v) = (vec![1.0f64, 2.0], vec![0.0f64, 0.0]);
/// let err = pytree_core::try_zip_mut_n::<Std, _, 2, 1, _, _>(
///     [&mut p, &mut v],
///     [&vec![4.0f64, -1.0]],
///     |[p, v], [g]| {
///         *v += g;
///         *p -= v.sqrt();
///         if p.is_nan() { Err("NaN") } else { Ok(()) }
///     },
/// )
/// .unwrap_err();
/// assert_eq!(err.to_string(), "at [1]: the function failed: NaN");
/// assert_eq!(p[0], -1.0);
/// ```
pub fn try_zip_mut_n<Ns, T, const N: usize, const M: usize, E, F>(
    mut muts: [&mut T; N],
    refs: [&T; M],
    mut f: F,
) -> Result<(), Error>
where
    T: Flatten<Ns>,
    E: crate::fallible::LeafFnErr,
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
    let def = match (muts.first(), refs.first()) {
        (Some(t), _) => structure::<Ns, T>(&**t),
        (None, Some(t)) => structure::<Ns, T>(*t),
        (None, None) => crate::TreeDef::leaf(),
    };
    let err = Error::leaf_fn(e);
    Err(match def.leaf_path(i) {
        Some(path) => err.under(&path),
        None => err,
    })
}

/// Checks every tree against the first (as `zip_check` does, signatures of
/// array leaves included); on failure lists every mismatch, trees numbered
/// from 0.
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

#[cold]
fn explain_all<Ns, T: Flatten<Ns>>(first: &T, rest: &[&T], err: Error) -> Error {
    let def = structure::<Ns, T>(first);
    let others = rest
        .iter()
        .enumerate()
        .map(|(j, o)| (j + 1, structure::<Ns, T>(*o)));
    all_mismatches(&def, others, err)
}

/// Checks that two trees (of any types) have the same structure, and
/// lists every difference otherwise (dm-tree's `assert_same_structure`,
/// as a value: the errors are about tree 1, `b`).
///
/// ```
/// use pytree_std::Std;
/// use std::collections::BTreeMap;
/// let a = (1.0f32, BTreeMap::from([("w", 1.0f32)]));
/// let b = (2u8, BTreeMap::from([("w", 0u8)]));
/// pytree_core::check_same_structure::<Std, _, _>(&a, &b)?;
/// let c = (2u8, BTreeMap::from([("v", 0u8)]));
/// let err = pytree_core::check_same_structure::<Std, _, _>(&a, &c).unwrap_err();
/// assert_eq!(err.to_string(), "tree 1 at [1]: map key mismatch; expected key(s): [\"w\"], \
///     got key(s): [\"v\"], missing key(s): [\"w\"], extra key(s): [\"v\"]");
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
