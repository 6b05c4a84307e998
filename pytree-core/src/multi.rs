//! Several trees of one type at once: `map_n` and `zip_mut` run the typed
//! check then the typed lockstep walk ([`Flatten::zip_with`] /
//! [`Flatten::zip_mut`]) and, only
//! when it fails, compare the TreeDefs to report *every* mismatch, each
//! with its key path, its tree and both sides (the cold path costs nothing
//! on success). `check_same_structure` is that comparison on its own.

use alloc::vec::Vec;

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
fn explain<Ns, T: Flatten<Ns>, const N: usize>(first: &T, others: [&T; N], err: Error) -> Error {
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
