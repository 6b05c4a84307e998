//! Transposes: a tree of trees turned inside out (JAX's `tree.transpose`;
//! treevalue's `subside` and `rise`). A tree whose structure is
//! `outer.compose(inner)` becomes one of structure `inner.compose(outer)`.
//! `subside` / `rise` are the case `outer = [*; n]` (a `Vec` of trees and
//! a tree of `Vec`s), `pair_leaves` / `unpair_leaves` the case `(*, *)` (a
//! pair of trees and a tree of pairs), and `unflatten_pairs` builds a pair
//! of trees from one value pair per leaf, where the values may be subtrees
//! (an `Option`). The full structure is checked, not only the leaf count
//! (jax issue 19810).
//!
//! Trees with no leaves: a transpose puts the outer level at the leaves
//! (each leaf becomes a sequence of `n`, or a pair), so a tree without
//! leaves has nowhere to keep it. `subside` of `n` leafless trees is the
//! leafless tree (`n` is lost, and `rise` of it gives no trees),
//! `transpose` gives `inner.compose(outer)` (just `inner` when `inner` has
//! no leaves), `pair_leaves` the structure and `unpair_leaves` two copies;
//! the structures are still checked. JAX's `tree_transpose` does the same.

use alloc::vec::Vec;

use crate::error::Error;
use crate::ops::graft::graft;
use crate::ops::multi::all_mismatches;
use crate::ops::{flatten, unflatten};
use crate::paths::key_path::KeyEntry;
use crate::traits::flatten::unwind::Unwinding;
use crate::traits::flatten::{Flatten, Unflatten};
use crate::treedef::{align, pair_of_leaves, seq_of_leaves, Arg, Policy, Record, TreeDef};

/// Reorders `rows * cols` leaves from row-major to column-major.
fn transpose_leaves<L>(mut leaves: Vec<L>, rows: usize, cols: usize) -> Vec<L> {
    let mut row_iters = Vec::with_capacity(rows);
    for r in (0..rows).rev() {
        row_iters.push(leaves.split_off((r * cols).min(leaves.len())).into_iter());
    }
    row_iters.reverse();
    let mut out = Vec::with_capacity(rows * cols);
    for _ in 0..cols {
        for row in &mut row_iters {
            out.extend(row.next());
        }
    }
    out
}

/// `pytree_std::nested::transpose` for any namespace `Ns` (documented there;
/// [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// let outer = pytree_std::structure(&(0, 0));
/// let inner = pytree_std::structure(&vec![0, 0]);
/// let t: Vec<(i32, i32)> = pytree_core::ops::transpose::transpose::<pytree_std::Std, _, _>(&outer, &inner, (vec![1, 2], vec![3, 4]))?;
/// assert_eq!(t, [(1, 3), (2, 4)]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn transpose<Ns, T, U>(outer: &TreeDef, inner: &TreeDef, tree: T) -> Result<U, Error>
where
    T: Flatten<Ns>,
    U: Unflatten<Ns, Leaf = T::Leaf>,
{
    let (leaves, def) = flatten::<Ns, T>(tree);
    // `outer` and `inner` may come from documents: the composed structure
    // is built (to list the differences) only if it is no more than twice
    // the size of the tree's, so the work stays proportional to the tree.
    let size = |d: &TreeDef| d.num_nodes();
    match outer.composed_counts(inner) {
        Some((nodes, _)) if nodes <= size(&def).saturating_mul(2).saturating_add(16) => {
            let expected = outer.compose_within_a_tree(inner)?;
            if def != expected {
                return Err(Error::from_mismatches(expected.diff(&def)));
            }
        }
        counts => {
            return Err(Error::custom(alloc::format!(
                "the tree has {} nodes; outer.compose(inner) has {}",
                size(&def),
                counts.map_or_else(
                    || "more than a usize counts".into(),
                    |c| alloc::format!("{}", c.0)
                )
            )))
        }
    }
    let leaves = transpose_leaves(leaves, outer.num_leaves(), inner.num_leaves());
    // The result's structure has the tree's leaves, but its nodes may be
    // many more (inner's leaves times outer's nodes): beyond about twice
    // the tree's, it answers to the output budget.
    let result = match inner.composed_counts(outer) {
        Some((nodes, _)) if nodes <= size(&def).saturating_mul(2).saturating_add(16) => {
            inner.compose_within_a_tree(outer)?
        }
        _ => inner.compose(outer)?,
    };
    unflatten::<Ns, U, _>(&result, leaves)
}

/// `pytree_std::nested::subside` for any namespace `Ns` (documented there;
/// [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// let s: (Vec<i32>, Vec<i32>) = pytree_core::ops::transpose::subside::<pytree_std::Std, _, _>([(1, 2), (3, 4), (5, 6)])?;
/// assert_eq!(s, (vec![1, 3, 5], vec![2, 4, 6]));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn subside<Ns, T, U>(trees: impl IntoIterator<Item = T>) -> Result<U, Error>
where
    T: Flatten<Ns>,
    U: Unflatten<Ns, Leaf = T::Leaf>,
{
    let mut leaves = Vec::new();
    let mut inner: Option<TreeDef> = None;
    let mut n = 0;
    let mut mismatches = Vec::new();
    for tree in trees {
        let (l, d) = flatten::<Ns, T>(tree);
        match &inner {
            None => {
                leaves.extend(l);
                inner = Some(d);
            }
            Some(first) if *first == d => leaves.extend(l),
            Some(first) => match in_order_of(first, &d, l) {
                Ok(l) => leaves.extend(l),
                Err(errors) => mismatches.extend(errors.into_iter().map(|e| e.in_tree(n))),
            },
        }
        n += 1;
    }
    let Some(inner) = inner else {
        return Err(Error::custom(
            "cannot subside zero trees: the result's structure is unknown",
        ));
    };
    if !mismatches.is_empty() {
        return Err(Error::from_mismatches(mismatches));
    }
    let leaves = transpose_leaves(leaves, n, inner.num_leaves());
    unflatten::<Ns, U, _>(&inner.compose_within_a_tree(&seq_of_leaves(n))?, leaves)
}

/// The `leaves` of a tree of structure `def` in the order of `first`'s:
/// the structures must be equal but for the order of map keys without an
/// order (a dynamic tree's keys), whose entries pair by key. The errors
/// list every other difference.
fn in_order_of<L>(first: &TreeDef, def: &TreeDef, leaves: Vec<L>) -> Result<Vec<L>, Vec<Error>> {
    let plan = align(&[first, def], Policy::diff())?;
    let mut slots: Vec<Option<L>> = leaves.into_iter().map(Some).collect();
    let lost = || alloc::vec![Error::custom("a leaf of the plan is missing from its tree")];
    plan.rows()
        .map(|row| match row[1] {
            Arg::Leaf(j) => slots.get_mut(j).and_then(Option::take).ok_or_else(lost),
            Arg::Missing => Err(lost()),
        })
        .collect()
}

/// `pytree_std::nested::rise` for any namespace `Ns` (documented there;
/// [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// let trees: Vec<(i32, i32)> = pytree_core::ops::transpose::rise::<pytree_std::Std, _, _>((vec![1, 3, 5], vec![2, 4, 6]))?;
/// assert_eq!(trees, [(1, 2), (3, 4), (5, 6)]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn rise<Ns, U, T>(stacked: U) -> Result<Vec<T>, Error>
where
    U: Flatten<Ns>,
    T: Unflatten<Ns, Leaf = U::Leaf>,
{
    let (leaves, def) = flatten::<Ns, U>(stacked);
    let (outer, level) =
        def.split_leaf_level(|n| matches!(n, Record::Seq(_)), "a sequence of leaves")?;
    let n = match level {
        Some(node) => node.arity(),
        None => return Ok(Vec::new()),
    };
    let m = outer.num_leaves();
    let mut leaves = transpose_leaves(leaves, m, n).into_iter();
    (0..n)
        .map(|k| {
            unflatten::<Ns, T, _>(&outer, leaves.by_ref().take(m))
                .map_err(|e| e.at(KeyEntry::Index(k)))
        })
        .collect()
}

/// A tree of pairs from a pair of trees (`transpose` with `(*, *)` inside), for any namespace `Ns`
/// ([`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// let z: Vec<(i32, i32)> = pytree_core::ops::transpose::pair_leaves::<pytree_std::Std, _, _, _>(vec![1, 2], vec![10, 20])?;
/// assert_eq!(z, [(1, 10), (2, 20)]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn pair_leaves<Ns, A, B, U>(a: A, b: B) -> Result<U, Error>
where
    A: Flatten<Ns>,
    B: Flatten<Ns, Leaf = A::Leaf>,
    U: Unflatten<Ns, Leaf = A::Leaf>,
{
    let (mut la, da) = flatten::<Ns, A>(a);
    let (mut lb, db) = flatten::<Ns, B>(b);
    if da != db {
        return Err(all_mismatches(
            &da,
            [(1, db)],
            Error::custom("the trees differ"),
        ));
    }
    let m = da.num_leaves();
    la.append(&mut lb);
    unflatten::<Ns, U, _>(
        &da.compose_within_a_tree(&pair_of_leaves())?,
        transpose_leaves(la, 2, m),
    )
}

/// A pair of trees from a tree of pairs (`transpose` with `(*, *)` outside), for any namespace `Ns`
/// ([`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// let (a, b): (Vec<i32>, Vec<i32>) = pytree_core::ops::transpose::unpair_leaves::<pytree_std::Std, _, _, _>(vec![(1, 10), (2, 20)])?;
/// assert_eq!((a, b), (vec![1, 2], vec![10, 20]));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn unpair_leaves<Ns, U, A, B>(tree: U) -> Result<(A, B), Error>
where
    U: Flatten<Ns>,
    A: Unflatten<Ns, Leaf = U::Leaf>,
    B: Unflatten<Ns, Leaf = U::Leaf>,
{
    let (leaves, def) = flatten::<Ns, U>(tree);
    let (outer, _) = def.split_leaf_level(|n| n == Record::Tuple(2), "a pair of leaves")?;
    let m = outer.num_leaves();
    let mut leaves = transpose_leaves(leaves, m, 2).into_iter();
    // `a` is held until `b` is built: an error there drops it with a walk
    // (`unwind.rs`), however deep it is.
    let a = Unwinding::tree::<Ns>(
        unflatten::<Ns, A, _>(&outer, leaves.by_ref().take(m)).map_err(|e| e.in_tree(0))?,
    );
    let b = unflatten::<Ns, B, _>(&outer, leaves).map_err(|e| e.in_tree(1))?;
    Ok((a.take(), b))
}

/// Unflattens pairs of leaves into a pair of trees, for any namespace `Ns`
/// ([`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// let def = pytree_std::structure(&(0, 0));
/// let (found, count): ((Option<usize>, Option<usize>), (usize, usize)) =
///     pytree_core::ops::transpose::unflatten_pairs::<pytree_std::Std, _, _, _, _>(&def, [(Some(1usize), 3usize), (None, 0)])?;
/// assert_eq!(found, (Some(1), None));
/// assert_eq!(count, (3, 0));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn unflatten_pairs<Ns, VA, VB, A, B>(
    def: &TreeDef,
    pairs: impl IntoIterator<Item = (VA, VB)>,
) -> Result<(A, B), Error>
where
    VA: Flatten<Ns>,
    VB: Flatten<Ns>,
    A: Unflatten<Ns, Leaf = VA::Leaf>,
    B: Unflatten<Ns, Leaf = VB::Leaf>,
{
    let (first, second): (Vec<VA>, Vec<VB>) = pairs.into_iter().unzip();
    let (la, da) = graft::<Ns, VA>(def, first)?;
    let (lb, db) = graft::<Ns, VB>(def, second)?;
    let a = Unwinding::tree::<Ns>(unflatten::<Ns, A, _>(&da, la).map_err(|e| e.in_tree(0))?);
    let b = unflatten::<Ns, B, _>(&db, lb).map_err(|e| e.in_tree(1))?;
    Ok((a.take(), b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn transposing_leaves_turns_rows_into_columns() {
        assert_eq!(
            transpose_leaves(vec![1, 2, 3, 4, 5, 6], 2, 3),
            [1, 4, 2, 5, 3, 6]
        );
        assert_eq!(transpose_leaves(Vec::<i32>::new(), 0, 3), Vec::<i32>::new());
        assert_eq!(transpose_leaves(vec![1, 2], 2, 1), [1, 2]);
    }
}
