//! Prefix trees (JAX's `in_axes`; seeds 000 and 001): a tree whose leaves
//! may each stand for a whole subtree of a fuller tree. `(None, 0)` is a
//! prefix of `(a1, {"k1": a2, "k2": a3})` and means
//! `(None, {"k1": 0, "k2": 0})`; a single leaf is a prefix of any tree;
//! `None` is a prefix only of `None` (it is a node, not a leaf: the rule
//! equinox PR 753 restored for JAX).
//!
//! Where a leaf of the prefix meets a subtree, the function receives that
//! subtree as a [`Subtree`]: its TreeDef and its leaves. A typed tree
//! cannot name "the subtree at this place" as one Rust type (at `.0` it is
//! an `f32`, at `.1` a `BTreeMap`), so the subtree travels in the form the
//! whole library already uses for "any tree": `(TreeDef, leaves)`, and
//! [`Subtree::into_parts`] plus `unflatten` gives back a typed value where
//! the caller knows the type.

use alloc::vec::Vec;

use crate::error::Error;
use crate::leaf::LeafRef;
use crate::ops::graft::graft;
use crate::ops::{flatten, leaves, structure, unflatten};
use crate::traits::flatten::unwind::Unwinding;
use crate::traits::flatten::{Flatten, Unflatten};
use crate::treedef::{align, common_suffix_plan, Arg, Policy, Span, TreeDef};

/// A subtree of a fuller tree, as a prefix leaf sees it: its structure and
/// its leaves (owned, or `&L` when the tree was borrowed).
///
/// ```
/// use pytree_std::Std;
/// let prefix = pytree_std::structure(&(0, 0));
/// let subs = pytree_core::ops::prefix::flatten_up_to::<Std, _>(&prefix, (vec![3, 4], 5))?;
/// assert_eq!(subs[0].def().to_string(), "[*, *]");
/// assert_eq!(subs[0].leaves(), [3, 4]);
/// assert!(subs[1].is_leaf());
/// let (def, leaves) = subs.into_iter().next().unwrap().into_parts();
/// let v: Vec<i32> = pytree_std::unflatten(&def, leaves)?;
/// assert_eq!(v, [3, 4]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subtree<L> {
    def: TreeDef,
    leaves: Vec<L>,
}

impl<L> Subtree<L> {
    /// The subtree's structure.
    ///
    /// ```
    /// let subs = pytree_core::ops::prefix::flatten_up_to::<pytree_std::Std, _>(&pytree_std::TreeDef::leaf(), vec![1])?;
    /// assert_eq!(subs[0].def().to_string(), "[*]");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn def(&self) -> &TreeDef {
        &self.def
    }

    /// The subtree's leaves, in pre-order.
    ///
    /// ```
    /// let subs = pytree_core::ops::prefix::flatten_up_to::<pytree_std::Std, _>(&pytree_std::TreeDef::leaf(), (1, 2))?;
    /// assert_eq!(subs[0].leaves(), [1, 2]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn leaves(&self) -> &[L] {
        &self.leaves
    }

    /// True when the subtree is a single leaf (the prefix had a leaf where
    /// the full tree has one too).
    ///
    /// ```
    /// let subs = pytree_core::ops::prefix::flatten_up_to::<pytree_std::Std, _>(&pytree_std::TreeDef::leaf(), 7)?;
    /// assert!(subs[0].is_leaf());
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn is_leaf(&self) -> bool {
        self.def.is_leaf()
    }

    /// The structure and the leaves, for `unflatten` into a typed value.
    ///
    /// ```
    /// let subs = pytree_core::ops::prefix::flatten_up_to::<pytree_std::Std, _>(&pytree_std::TreeDef::leaf(), Some(2))?;
    /// let (def, leaves) = subs.into_iter().next().unwrap().into_parts();
    /// assert_eq!(pytree_std::unflatten::<Option<i32>>(&def, leaves)?, Some(2));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn into_parts(self) -> (TreeDef, Vec<L>) {
        (self.def, self.leaves)
    }
}

/// Splits `leaves` (of the full tree) by the prefix's spans. The spans
/// follow the prefix's order; the full tree's map keys may come in another
/// order (keys without an order), so each span takes its own range.
fn split_by_spans<L>(spans: Vec<Span>, leaves: Vec<L>) -> Result<Vec<Subtree<L>>, Error> {
    let mut expected_start = 0;
    let in_order = spans.iter().all(|span| {
        let ok = span.start == expected_start;
        expected_start += span.def.as_ref().map_or(1, TreeDef::num_leaves);
        ok
    });
    if in_order {
        let mut rest = leaves.into_iter();
        return Ok(spans
            .into_iter()
            .map(|span| {
                let def = span.def.unwrap_or_else(TreeDef::leaf);
                let leaves = rest.by_ref().take(def.num_leaves()).collect();
                Subtree { def, leaves }
            })
            .collect());
    }
    let mut slots: Vec<Option<L>> = leaves.into_iter().map(Some).collect();
    spans
        .into_iter()
        .map(|span| {
            let def = span.def.unwrap_or_else(TreeDef::leaf);
            let range = span.start..span.start.saturating_add(def.num_leaves());
            let leaves = slots
                .get_mut(range)
                .ok_or_else(lost_leaf)?
                .iter_mut()
                .map(|slot| slot.take().ok_or_else(lost_leaf))
                .collect::<Result<_, _>>()?;
            Ok(Subtree { def, leaves })
        })
        .collect()
}

/// `pytree_std::nested::flatten_up_to` for any namespace `Ns` (documented
/// there; [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// use std::collections::BTreeMap;
/// // in_axes (None, 0) against the arguments (a1, {"k1": a2, "k2": a3})
/// let args = (1.0f32, BTreeMap::from([("k1", 2.0f32), ("k2", 3.0)]));
/// let subs = pytree_core::ops::prefix::flatten_up_to::<pytree_std::Std, _>(&pytree_std::structure(&(0, 0)), args)?;
/// assert_eq!(subs[0].leaves(), [1.0]);
/// assert_eq!(subs[1].leaves(), [2.0, 3.0]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn flatten_up_to<Ns, T: Flatten<Ns>>(
    prefix: &TreeDef,
    tree: T,
) -> Result<Vec<Subtree<T::Leaf>>, Error> {
    let (leaves, def) = flatten::<Ns, T>(tree);
    let spans = prefix.prefix_spans(&def).map_err(|errors| {
        Error::from_mismatches(errors.into_iter().map(|e| e.with_tree(None)).collect())
    })?;
    split_by_spans(spans, leaves)
}

/// A plan that points past the leaves (a TreeDef that does not describe
/// its tree): reported, never skipped.
#[cold]
fn lost_leaf() -> Error {
    Error::custom("a leaf of the prefix plan is missing from its tree")
}

/// The alignment of `prefix` (input 0) over `full` (input 1).
fn prefix_plan(
    prefix: &TreeDef,
    full: &TreeDef,
    spans: bool,
) -> Result<crate::treedef::Alignment, Error> {
    let policy = Policy {
        spans,
        ..Policy::prefix(0)
    };
    align(&[prefix, full], policy).map_err(Error::from_mismatches)
}

/// The leaves of a prefix tree broadcast over a full tree's structure, for any namespace `Ns`
/// ([`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// assert_eq!(pytree_core::ops::prefix::broadcast_prefix::<pytree_std::Std, _, _>(&7, &(1, vec![2, 3]))?, [&7, &7, &7]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn broadcast_prefix<'p, Ns, P, T>(
    prefix: &'p P,
    full: &T,
) -> Result<Vec<LeafRef<'p, Ns, P::Leaf>>, Error>
where
    P: Flatten<Ns>,
    T: Flatten<Ns>,
{
    let plan = prefix_plan(
        &structure::<Ns, P>(prefix),
        &structure::<Ns, T>(full),
        false,
    )?;
    let leaves = leaves::<Ns, P>(prefix);
    // Rows follow the prefix's order; place each at its leaf of `full`
    // (the same order unless `full`'s map keys come in another order).
    let mut out: Vec<Option<LeafRef<'p, Ns, P::Leaf>>> = alloc::vec![None; plan.def.num_leaves()];
    for row in plan.rows() {
        let (Arg::Leaf(i), Arg::Leaf(j)) = (row[0], row[1]) else {
            return Err(lost_leaf());
        };
        *out.get_mut(j).ok_or_else(lost_leaf)? =
            Some(leaves.get(i).cloned().ok_or_else(lost_leaf)?);
    }
    out.into_iter().map(|x| x.ok_or_else(lost_leaf)).collect()
}

/// `pytree_std::nested::broadcast` for any namespace `Ns` (documented there;
/// [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// let b: (u8, Vec<u8>) = pytree_core::ops::prefix::broadcast::<pytree_std::Std, _, _, _>(&(0u8, 1u8), &(1.0f32, vec![2.0f32, 3.0]))?;
/// assert_eq!(b, (0, vec![1, 1]));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn broadcast<Ns, P, T, U>(prefix: &P, full: &T) -> Result<U, Error>
where
    P: Flatten<Ns> + Clone,
    P::Leaf: Clone,
    T: Flatten<Ns>,
    U: Unflatten<Ns, Leaf = P::Leaf>,
{
    let full_def = structure::<Ns, T>(full);
    let plan = prefix_plan(&structure::<Ns, P>(prefix), &full_def, false)?;
    let (owned, _) = flatten::<Ns, P>(prefix.clone());
    let mut out: Vec<Option<usize>> = alloc::vec![None; plan.def.num_leaves()];
    for row in plan.rows() {
        let (Arg::Leaf(i), Arg::Leaf(j)) = (row[0], row[1]) else {
            return Err(lost_leaf());
        };
        *out.get_mut(j).ok_or_else(lost_leaf)? = Some(i);
    }
    let leaves = out
        .into_iter()
        .map(|i| i.and_then(|i| owned.get(i).cloned()).ok_or_else(lost_leaf))
        .collect::<Result<Vec<_>, Error>>()?;
    unflatten::<Ns, U, _>(&full_def, leaves)
}

/// An engine with no `pytree_std` form (the nearest is
/// `pytree_std::nested::map_with_prefix`), for any namespace `Ns` (documented
/// there; [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// let sums: (i32, i32) = pytree_core::ops::prefix::map_prefix::<pytree_std::Std, _, _, _, _, _>(&(1, 2), &(vec![3, 4], 5), |p, sub| {
///     p * sub.leaves().iter().copied().sum::<i32>()
/// })?;
/// assert_eq!(sums, (7, 10));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn map_prefix<'p, 't, Ns, P, T, V, U, F>(
    prefix: &'p P,
    full: &'t T,
    mut f: F,
) -> Result<U, Error>
where
    P: Flatten<Ns>,
    T: Flatten<Ns>,
    V: Flatten<Ns>,
    U: Unflatten<Ns, Leaf = V::Leaf>,
    F: FnMut(LeafRef<'p, Ns, P::Leaf>, Subtree<LeafRef<'t, Ns, T::Leaf>>) -> V,
{
    let prefix_def = structure::<Ns, P>(prefix);
    let plan = prefix_plan(&prefix_def, &structure::<Ns, T>(full), true)?;
    let subtrees = split_by_spans(plan.spans, leaves::<Ns, T>(full))?;
    let values = leaves::<Ns, P>(prefix)
        .into_iter()
        .zip(subtrees)
        .map(|(p, sub)| f(p, sub));
    let (leaves, def) = graft::<Ns, V>(&prefix_def, values)?;
    unflatten::<Ns, U, _>(&def, leaves)
}

/// `pytree_std::nested::map_with_prefix` for any namespace `Ns` (documented
/// there; [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// let scaled: (f32, Vec<f32>) = pytree_core::ops::prefix::map_with_prefix::<pytree_std::Std, _, _, _, _, _>(
///     &(1.0f32, vec![2.0f32, 3.0]),
///     &(10u8, 100u8),
///     |x, k| x * f32::from(*k),
/// )?;
/// assert_eq!(scaled, (10.0, vec![200.0, 300.0]));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn map_with_prefix<'t, 'p, Ns, T, P, V, U, F>(
    tree: &'t T,
    prefix: &'p P,
    mut f: F,
) -> Result<U, Error>
where
    T: Flatten<Ns>,
    P: Flatten<Ns>,
    V: Flatten<Ns>,
    U: Unflatten<Ns, Leaf = V::Leaf>,
    F: FnMut(LeafRef<'t, Ns, T::Leaf>, LeafRef<'p, Ns, P::Leaf>) -> V,
{
    let (dt, dp) = (structure::<Ns, T>(tree), structure::<Ns, P>(prefix));
    let plan = align(&[&dt, &dp], Policy::prefix(1)).map_err(Error::from_mismatches)?;
    let (lt, lp) = (leaves::<Ns, T>(tree), leaves::<Ns, P>(prefix));
    let mut values = Vec::with_capacity(lt.len());
    for row in plan.rows() {
        let (Arg::Leaf(i), Arg::Leaf(j)) = (row[0], row[1]) else {
            return Err(lost_leaf());
        };
        let (Some(x), Some(p)) = (lt.get(i), lp.get(j)) else {
            return Err(lost_leaf());
        };
        values.push(f(x.clone(), p.clone()));
    }
    let (leaves, def) = graft::<Ns, V>(&plan.def, values)?;
    unflatten::<Ns, U, _>(&def, leaves)
}

/// The root's children and its one-level structure, for any namespace `Ns`
/// ([`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// let (children, one) = pytree_core::ops::prefix::flatten_one_level::<pytree_std::Std, _>((1, vec![2, 3]))?;
/// assert_eq!(one.to_string(), "(*, *)");
/// assert_eq!(children[1].leaves(), [2, 3]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
// The pair JAX's `flatten_one_level` returns, spelled out.
#[allow(clippy::type_complexity)]
pub fn flatten_one_level<Ns, T: Flatten<Ns>>(
    tree: T,
) -> Result<(Vec<Subtree<T::Leaf>>, TreeDef), Error> {
    let (leaves, def) = flatten::<Ns, T>(tree);
    if def.is_leaf() {
        return Err(Error::new(crate::error::ErrorKind::NodeMismatch {
            expected: "a node".into(),
            found: "a leaf".into(),
        }));
    }
    let one = def.one_level();
    let spans = one.prefix_spans(&def).map_err(Error::from_mismatches)?;
    Ok((split_by_spans(spans, leaves)?, one))
}

/// Takes each leaf as often as `uses` says, moving it at its last use.
fn take_leaves<L: Clone>(leaves: Vec<L>, picks: &[usize]) -> Result<Vec<L>, Error> {
    let mut left = alloc::vec![0usize; leaves.len()];
    for &i in picks {
        *left.get_mut(i).ok_or_else(lost_leaf)? += 1;
    }
    let mut slots: Vec<Option<L>> = leaves.into_iter().map(Some).collect();
    picks
        .iter()
        .map(|&i| {
            let (slot, left) = slots
                .get_mut(i)
                .zip(left.get_mut(i))
                .ok_or_else(lost_leaf)?;
            *left -= 1;
            if *left == 0 {
                slot.take().ok_or_else(lost_leaf)
            } else {
                slot.clone().ok_or_else(lost_leaf)
            }
        })
        .collect()
}

/// The leaf of input `k` for each leaf of the plan's result.
fn picks_of(plan: &crate::treedef::Alignment, k: usize) -> Result<Vec<usize>, Error> {
    plan.rows()
        .map(|row| match row.get(k) {
            Some(Arg::Leaf(i)) => Ok(*i),
            _ => Err(lost_leaf()),
        })
        .collect()
}

/// `pytree_std::nested::broadcast_common` for any namespace `Ns` (documented
/// there; [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// use pytree_std::{tree, Tree};
/// // tree_broadcast_common([1, {'a': (2, 3)}, {'a': 4, 'b': 5}], [6, 7, {'a': 8, 'b': (9, 10)}])
/// let a: Tree<i32> = tree!([1, { "a" => [2, 3] }, { "a" => 4, "b" => 5 }]);
/// let b: Tree<i32> = tree!([6, 7, { "b" => [9, 10], "a" => 8 }]);
/// let (x, y): (Tree<i32>, Tree<i32>) = pytree_core::ops::prefix::broadcast_common::<pytree_std::Std, _, _, _, _>(a, b)?;
/// assert_eq!(format!("{x:?}"), r#"[1, {"a": [2, 3]}, {"a": 4, "b": [5, 5]}]"#);
/// assert_eq!(format!("{y:?}"), r#"[6, {"a": [7, 7]}, {"b": [9, 10], "a": 8}]"#);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn broadcast_common<Ns, A, B, UA, UB>(a: A, b: B) -> Result<(UA, UB), Error>
where
    A: Flatten<Ns>,
    B: Flatten<Ns>,
    A::Leaf: Clone,
    B::Leaf: Clone,
    UA: Unflatten<Ns, Leaf = A::Leaf>,
    UB: Unflatten<Ns, Leaf = B::Leaf>,
{
    let (la, da) = flatten::<Ns, A>(a);
    let (lb, db) = flatten::<Ns, B>(b);
    if da == db {
        // `ua` is held until `ub` is built: an error there drops it with a
        // walk (`unwind.rs`), however deep it is.
        let ua = Unwinding::tree::<Ns>(unflatten::<Ns, UA, _>(&da, la).map_err(|e| e.in_tree(0))?);
        let ub = unflatten::<Ns, UB, _>(&db, lb).map_err(|e| e.in_tree(1))?;
        return Ok((ua.take(), ub));
    }
    let for_a = common_suffix_plan(&da, &db, true)?;
    // The same alignment with `b` first gives the common structure in
    // `b`'s map key order.
    let for_b = common_suffix_plan(&db, &da, true)?;
    let la = take_leaves(la, &picks_of(&for_a, 0)?)?;
    let lb = take_leaves(lb, &picks_of(&for_b, 0)?)?;
    let ua =
        Unwinding::tree::<Ns>(unflatten::<Ns, UA, _>(&for_a.def, la).map_err(|e| e.in_tree(0))?);
    let ub = unflatten::<Ns, UB, _>(&for_b.def, lb).map_err(|e| e.in_tree(1))?;
    Ok((ua.take(), ub))
}
