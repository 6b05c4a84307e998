//! Several trees of one type with key paths (JAX's
//! `tree_map_with_path(f, tree, *rest)`): `map_with_path_n`,
//! `for_each_with_path_n` and `zip_mut_with_path` hand `f` the path of each
//! leaf of the first tree (with its [`kind`](KeyPath::kind)) and the
//! matching leaf of every other tree.
//!
//! The structures are checked as `map_n` checks them ([`Flatten::zip_check`]:
//! lengths, keys, holes, variants, static fields, and the signatures of
//! array leaves), and on a mismatch every difference is listed. The others'
//! leaves are then lined up with the first tree's: in the same order when
//! the TreeDefs are equal, else by key through the alignment engine (the
//! dynamic tree's maps pair by key whatever their order). The first tree is
//! walked with a path tracker, so paths cost what they cost in
//! `map_with_path`.

use alloc::vec::Vec;

use crate::error::Error;
use crate::flatten::{Flatten, Unflatten};
use crate::key_path::KeyPath;
use crate::leaf::{LeafMut, LeafRef};
use crate::multi::all_mismatches;
use crate::ops::{leaves, structure, unflatten};
use crate::treedef::{align, Arg, Policy, TreeDef};
use crate::with_path::{for_each_mut_with_path, for_each_with_path};

/// The structure check of `map_n`, with every mismatch listed on failure.
fn check<Ns, T: Flatten<Ns>, const N: usize>(first: &T, others: [&T; N]) -> Result<(), Error> {
    first.zip_check(others).map_err(|err| {
        let def = structure::<Ns, T>(first);
        let defs = others
            .iter()
            .enumerate()
            .map(|(j, o)| (j + 1, structure::<Ns, T>(*o)));
        all_mismatches(&def, defs, err)
    })
}

/// A plan that points past the leaves: reported, never skipped.
#[cold]
fn lost_leaf() -> Error {
    Error::custom("a leaf of another tree is missing from the plan")
}

/// The leaves of `other` in the order of the leaves of the tree of
/// structure `first` (they pair by key where `other`'s maps list their
/// keys in another order).
fn in_order_of<'a, Ns, T: Flatten<Ns>>(
    first: &TreeDef,
    other: &'a T,
) -> Result<Vec<LeafRef<'a, Ns, T::Leaf>>, Error> {
    let own = leaves::<Ns, T>(other);
    let def = structure::<Ns, T>(other);
    if def == *first {
        return Ok(own);
    }
    let plan = align(&[first, &def], Policy::diff()).map_err(Error::from_mismatches)?;
    plan.rows()
        .map(|row| match row.get(1) {
            Some(Arg::Leaf(j)) => own.get(*j).cloned().ok_or_else(lost_leaf),
            _ => Err(lost_leaf()),
        })
        .collect()
}

/// The lent leaves of `N` trees, one `Vec` per tree.
type Lined<'a, Ns, L, const N: usize> = [Vec<LeafRef<'a, Ns, L>>; N];

/// The others' leaves, each in the first tree's leaf order.
fn others_in_order<'a, Ns, T: Flatten<Ns>, const N: usize>(
    first: &TreeDef,
    others: [&'a T; N],
) -> Result<Lined<'a, Ns, T::Leaf, N>, Error> {
    let mut out: Lined<'a, Ns, T::Leaf, N> = core::array::from_fn(|_| Vec::new());
    for (slot, other) in out.iter_mut().zip(others) {
        *slot = in_order_of::<Ns, T>(first, other)?;
    }
    Ok(out)
}

/// Leaf `i` of each other tree (`None` if a list is short, which the
/// check rules out).
fn row<R: Clone, const N: usize>(others: &[Vec<R>; N], i: usize) -> Option<[R; N]> {
    crate::__private::all_some(core::array::from_fn(|j| others[j].get(i).cloned()))
}

/// Combines `first` with `N` more trees of the same type leaf by leaf,
/// with paths (JAX's `tree_map_with_path(f, tree, *rest)`):
/// `f(path, leaf, [leaf of each other])`, where `path` is the key path of
/// the leaf in `first` (with its [`kind`](KeyPath::kind)). The result is a
/// `U` of `first`'s structure whose leaf type may differ (checked through
/// the TreeDef, as in [`map_with_path`](crate::map_with_path)). The
/// structures are checked as in [`map_n`](crate::map_n), and a mismatch
/// lists every difference.
///
/// ```
/// use pytree_std::{KeyPath, Std};
/// let a = (1i32, vec![2i32, 3]);
/// let b = (10i32, vec![20i32, 30]);
/// let t: (String, Vec<String>) = pytree_core::map_with_path_n::<Std, _, _, 1, _>(
///     &a,
///     [&b],
///     |path: &KeyPath, x: &i32, [y]: [&i32; 1]| format!("{path}={}", x + y),
/// )?;
/// assert_eq!(t, ("[0]=11".to_string(), vec!["[1][0]=22".to_string(), "[1][1]=33".to_string()]));
/// let err = pytree_core::map_with_path_n::<Std, _, (i32, Vec<i32>), 1, _>(
///     &a, [&(1, vec![2])], |_, x, [y]| x + y,
/// ).unwrap_err();
/// assert_eq!(err.to_string(), "tree 1 at [1]: sequence length mismatch: expected 2, found 1");
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn map_with_path_n<'a, Ns, T, U, const N: usize, F>(
    first: &'a T,
    others: [&'a T; N],
    mut f: F,
) -> Result<U, Error>
where
    T: Flatten<Ns>,
    U: Unflatten<Ns>,
    F: FnMut(&KeyPath, LeafRef<'a, Ns, T::Leaf>, [LeafRef<'a, Ns, T::Leaf>; N]) -> U::Leaf,
{
    check::<Ns, T, N>(first, others)?;
    let def = structure::<Ns, T>(first);
    let lined = others_in_order::<Ns, T, N>(&def, others)?;
    let mut out = Vec::with_capacity(def.num_leaves());
    let mut lost = false;
    for_each_with_path::<Ns, T, _>(first, |path, x| match row(&lined, out.len()) {
        Some(ys) => out.push(f(path, x, ys)),
        None => lost = true,
    });
    if lost {
        return Err(lost_leaf());
    }
    unflatten::<Ns, U, _>(&def, out)
}

/// Calls `f(path, leaf, [leaf of each other])` on the leaves of `first`
/// and of `N` more trees of the same type, in `first`'s leaf order, with
/// the path of each leaf in `first`. The structures are checked first
/// (as in [`map_n`](crate::map_n)): on a mismatch `f` is never called.
///
/// ```
/// use pytree_std::Std;
/// let mut seen = Vec::new();
/// pytree_core::for_each_with_path_n::<Std, _, 1, _>(&(1i32, Some(2i32)), [&(3i32, Some(4i32))], |path, x, [y]| {
///     seen.push(format!("{path}: {x} {y}"))
/// })?;
/// assert_eq!(seen, ["[0]: 1 3", "[1]: 2 4"]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn for_each_with_path_n<'a, Ns, T, const N: usize, F>(
    first: &'a T,
    others: [&'a T; N],
    mut f: F,
) -> Result<(), Error>
where
    T: Flatten<Ns>,
    F: FnMut(&KeyPath, LeafRef<'a, Ns, T::Leaf>, [LeafRef<'a, Ns, T::Leaf>; N]),
{
    check::<Ns, T, N>(first, others)?;
    let def = structure::<Ns, T>(first);
    let lined = others_in_order::<Ns, T, N>(&def, others)?;
    let mut i = 0;
    let mut lost = false;
    for_each_with_path::<Ns, T, _>(first, |path, x| {
        match row(&lined, i) {
            Some(ys) => f(path, x, ys),
            None => lost = true,
        }
        i += 1;
    });
    if lost {
        return Err(lost_leaf());
    }
    Ok(())
}

/// Updates `tree` in place from `N` other trees of the same type, leaf by
/// leaf, with paths: `f(path, &mut leaf, [leaf of each other])` (the
/// path-aware [`zip_mut`](crate::zip_mut); optree's
/// `tree_map_with_path_` over several trees). The structures are checked
/// before the first update: on a mismatch `tree` is unchanged and the
/// error lists every difference.
///
/// ```
/// use pytree_std::{PyTree, Std};
/// #[derive(PyTree, Debug, PartialEq)]
/// struct Counter { #[pytree(kind = "state")] count: f64, w: f64 }
/// let mut params = Counter { count: 1.0, w: 1.0 };
/// let grads = Counter { count: 5.0, w: 0.5 };
/// // An SGD step that leaves state alone.
/// pytree_core::zip_mut_with_path::<Std, _, 1, _>(&mut params, [&grads], |path, p, [g]| {
///     if path.kind() == "param" { *p -= 0.1 * g }
/// })?;
/// assert_eq!(params, Counter { count: 1.0, w: 0.95 });
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn zip_mut_with_path<'a, Ns, T, const N: usize, F>(
    tree: &'a mut T,
    others: [&'a T; N],
    mut f: F,
) -> Result<(), Error>
where
    T: Flatten<Ns>,
    F: FnMut(&KeyPath, LeafMut<'a, Ns, T::Leaf>, [LeafRef<'a, Ns, T::Leaf>; N]),
{
    check::<Ns, T, N>(tree, others)?;
    let def = structure::<Ns, T>(tree);
    let lined = others_in_order::<Ns, T, N>(&def, others)?;
    if lined.iter().any(|l| l.len() != def.num_leaves()) {
        return Err(lost_leaf());
    }
    let mut i = 0;
    for_each_mut_with_path::<Ns, T, _>(tree, |path, x| {
        if let Some(ys) = row(&lined, i) {
            f(path, x, ys);
        }
        i += 1;
    });
    Ok(())
}
