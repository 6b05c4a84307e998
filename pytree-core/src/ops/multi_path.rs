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
use crate::leaf::{LeafMut, LeafRef};
use crate::ops::multi::explain;
use crate::ops::with_path::{for_each_mut_with_path, for_each_with_path};
use crate::ops::{leaves, structure, unflatten};
use crate::paths::key_path::KeyPath;
use crate::traits::flatten::{Flatten, Unflatten};
use crate::treedef::{align, Arg, Policy, TreeDef};

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

/// What each walk below starts from: the structure check of `map_n` (with
/// every mismatch listed on failure), the first tree's TreeDef, and the
/// others' leaves in its leaf order, as many as it has.
fn lined_up<'a, Ns, T: Flatten<Ns>, const N: usize>(
    first: &T,
    others: [&'a T; N],
) -> Result<(TreeDef, Lined<'a, Ns, T::Leaf, N>), Error> {
    if let Err(err) = first.zip_check(others) {
        return Err(explain::<Ns, T, N>(first, others, err));
    }
    let def = structure::<Ns, T>(first);
    let lined = others_in_order::<Ns, T, N>(&def, others)?;
    if lined.iter().any(|l| l.len() != def.num_leaves()) {
        return Err(lost_leaf());
    }
    Ok((def, lined))
}

/// Leaf `i` of each other tree (`None` past the end: the first tree has
/// as many leaves, [`lined_up`]).
fn row<R: Clone, const N: usize>(others: &[Vec<R>; N], i: usize) -> Option<[R; N]> {
    crate::traits::flatten::defaults::all_some(core::array::from_fn(|j| others[j].get(i).cloned()))
}

/// The walk of the first tree calling `f` on each leaf with the others'
/// leaves at the same place (`lined`, from [`lined_up`]: leaf `i` of each
/// with the walk's `i`-th leaf).
fn in_step<'l, X, R: Clone + 'l, const N: usize>(
    lined: &'l [Vec<R>; N],
    mut f: impl FnMut(&KeyPath, X, [R; N]) + 'l,
) -> impl FnMut(&KeyPath, X) + 'l {
    let mut i = 0;
    move |path, x| {
        if let Some(ys) = row(lined, i) {
            f(path, x, ys);
        }
        i += 1;
    }
}

/// Maps several trees in step with each leaf's key path, for any
/// namespace `Ns` (no pytree-std door; the nearest is
/// `pytree_std::paths::zip_mut_with_path`; [`ops`](crate::ops) says how to
/// name `Ns`).
///
/// ```
/// use pytree_std::{tree, KeyPath, Tree};
/// let a: Tree<i32> = tree! { "w" => 1, "b" => [2, 3] };
/// let b: Tree<i32> = tree! { "b" => [20, 30], "w" => 10 }; // other order: paired by key
/// let t: Tree<String> = pytree_core::ops::multi_path::map_with_path_n::<pytree_std::Std, _, _, _, _>(&a, [&b], |path: &KeyPath, x: &i32, [y]: [&i32; 1]| {
///     format!("{path}={}", x + y)
/// })?;
/// assert_eq!(format!("{t:?}"), r#"{"w": "[\"w\"]=11", "b": ["[\"b\"][0]=22", "[\"b\"][1]=33"]}"#);
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
    let (def, lined) = lined_up::<Ns, T, N>(first, others)?;
    let mut out = Vec::with_capacity(def.num_leaves());
    for_each_with_path::<Ns, T, _>(
        first,
        in_step(&lined, |path, x, ys| out.push(f(path, x, ys))),
    );
    unflatten::<Ns, U, _>(&def, out)
}

/// Calls `f` on each leaf of several trees with its key path, for any
/// namespace `Ns` ([`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// let mut diffs = Vec::new();
/// pytree_core::ops::multi_path::for_each_with_path_n::<pytree_std::Std, _, _, _>(&vec![1.0f32, 2.0], [&vec![1.0f32, 2.5]], |path, x, [y]| {
///     if x != y { diffs.push(path.to_string()) }
/// })?;
/// assert_eq!(diffs, ["[1]"]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn for_each_with_path_n<'a, Ns, T, const N: usize, F>(
    first: &'a T,
    others: [&'a T; N],
    f: F,
) -> Result<(), Error>
where
    T: Flatten<Ns>,
    F: FnMut(&KeyPath, LeafRef<'a, Ns, T::Leaf>, [LeafRef<'a, Ns, T::Leaf>; N]),
{
    let (_, lined) = lined_up::<Ns, T, N>(first, others)?;
    for_each_with_path::<Ns, T, _>(first, in_step(&lined, f));
    Ok(())
}

/// `pytree_std::paths::zip_mut_with_path` for any namespace `Ns` (documented
/// there; [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// use pytree_std::PyTree;
/// #[derive(PyTree, Debug, PartialEq)]
/// struct Layer { w: f32, #[pytree(kind = "state")] steps: f32 }
/// let mut p = Layer { w: 1.0, steps: 0.0 };
/// let g = Layer { w: 0.5, steps: 1.0 };
/// pytree_core::ops::multi_path::zip_mut_with_path::<pytree_std::Std, _, _, _>(&mut p, [&g], |path, x, [dx]| match path.kind() {
///     "state" => *x += dx,
///     _ => *x -= 0.1 * dx,
/// })?;
/// assert_eq!(p, Layer { w: 0.95, steps: 1.0 });
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn zip_mut_with_path<'a, Ns, T, const N: usize, F>(
    tree: &'a mut T,
    others: [&'a T; N],
    f: F,
) -> Result<(), Error>
where
    T: Flatten<Ns>,
    F: FnMut(&KeyPath, LeafMut<'a, Ns, T::Leaf>, [LeafRef<'a, Ns, T::Leaf>; N]),
{
    let (_, lined) = lined_up::<Ns, T, N>(tree, others)?;
    for_each_mut_with_path::<Ns, T, _>(tree, in_step(&lined, f));
    Ok(())
}
