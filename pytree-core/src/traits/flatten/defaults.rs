//! The provided methods that a hand-written node gets from its three walks
//! and `unflatten_from`: [`zip_check`](Flatten::zip_check) compares the
//! trees' structures (and, for leaves with a shape, their signatures),
//! [`zip_mut_prechecked`](Flatten::zip_mut_prechecked) lends the other
//! trees' leaves in order while it walks `self` mutably, and
//! [`map_leaves`](Unflatten::map_leaves) /
//! [`zip_with_prechecked`](Unflatten::zip_with_prechecked) compute the new
//! leaves and rebuild the value from its structure. The derive and the std
//! containers override all four with walks of their own, which build
//! nothing.

use alloc::vec::Vec;

use super::walks::{flatten, leaves, num_leaves, structure, unflatten};
use super::{Flatten, Unflatten};
use crate::error::{signature_mismatch, Error};
use crate::leaf::{Leaf, LeafMut, LeafRef};
use crate::signature::Signature;
use crate::traits::visit::VisitMut;
use crate::treedef::TreeDef;

/// The default [`Flatten::zip_check`]: each other tree's structure must
/// equal `tree`'s (the first place where one differs is the error, at its
/// key path, about that tree, 1-based); then, for leaves with a shape,
/// each leaf's signature must equal `tree`'s leaf's at the same place.
pub(crate) fn zip_check<Ns, T: Flatten<Ns>, const N: usize>(
    tree: &T,
    others: [&T; N],
) -> Result<(), Error> {
    if N == 0 {
        return Ok(());
    }
    let def = structure::<Ns, T>(tree);
    for (i, other) in others.iter().enumerate() {
        let found = structure::<Ns, T>(other);
        if found == def {
            continue;
        }
        let mut differences = def.diff(&found);
        let error = if differences.is_empty() {
            Error::custom(alloc::format!(
                "structure mismatch: expected {def}, found {found}"
            ))
        } else {
            differences.swap_remove(0)
        };
        return Err(error.with_tree(Some(i + 1)));
    }
    if !<T::Leaf as Leaf<Ns>>::HAS_SHAPE {
        return Ok(());
    }
    // The structures are equal, so the leaves line up one to one; the key
    // path is built for the first mismatch only.
    let expected = signatures::<Ns, T>(tree);
    for (i, other) in others.iter().enumerate() {
        let found = signatures::<Ns, T>(other);
        for (leaf, (e, f)) in expected.iter().zip(&found).enumerate() {
            if let Some(error) = signature_mismatch(e.as_ref(), f.as_ref()) {
                let error = match def.leaf_path(leaf) {
                    Some(path) => error.under(&path),
                    None => error,
                };
                return Err(error.in_tree(i + 1));
            }
        }
    }
    Ok(())
}

/// The signature of each leaf of `tree`, in order.
fn signatures<Ns, T: Flatten<Ns>>(tree: &T) -> Vec<Option<Signature>> {
    leaves::<Ns, T>(tree)
        .iter()
        .map(<T::Leaf as Leaf<Ns>>::signature)
        .collect()
}

/// The default [`Flatten::zip_mut_prechecked`]: the other trees' leaves
/// are collected in order, then `tree` is walked mutably and each of its
/// leaves updated with theirs. A tree with another number of leaves (the
/// check was skipped) leaves `tree` as it is.
pub(crate) fn zip_mut_prechecked<'a, Ns, T, const N: usize, F>(
    tree: &'a mut T,
    others: [&'a T; N],
    f: &mut F,
) where
    T: Flatten<Ns>,
    F: FnMut(LeafMut<'a, Ns, T::Leaf>, [LeafRef<'a, Ns, T::Leaf>; N]),
{
    let leaves = others.map(leaves::<Ns, T>);
    let count = num_leaves::<Ns, T>(tree);
    if leaves.iter().any(|l| l.len() != count) {
        return;
    }
    struct Zip<'f, I, F> {
        others: I,
        f: &'f mut F,
    }
    impl<M, R, const N: usize, F> VisitMut<M> for Zip<'_, [alloc::vec::IntoIter<R>; N], F>
    where
        F: FnMut(M, [R; N]),
    {
        fn leaf(&mut self, leaf: M) {
            if let Some(args) = all_some(self.others.each_mut().map(Iterator::next)) {
                (self.f)(leaf, args);
            }
        }
    }
    tree.visit_mut(&mut Zip {
        others: leaves.map(Vec::into_iter),
        f,
    });
}

/// The default [`Unflatten::map_leaves`]: flatten, map each leaf in order,
/// unflatten from the same TreeDef.
pub(crate) fn map_leaves<Ns, T, F>(tree: T, f: &mut F) -> T
where
    T: Unflatten<Ns>,
    F: FnMut(T::Leaf) -> T::Leaf,
{
    let (leaves, def) = flatten::<Ns, T>(tree);
    let mapped: Vec<T::Leaf> = leaves.into_iter().map(f).collect();
    rebuild::<Ns, T>(&def, mapped)
}

/// The default [`Unflatten::zip_with_prechecked`]: each tree's leaves lent
/// in order (a tree with another number of leaves, the check having been
/// skipped, is replaced by `tree`), `f` called leaf by leaf, the value
/// rebuilt from `tree`'s TreeDef.
pub(crate) fn zip_with_prechecked<'a, Ns, T, const N: usize, F>(
    tree: &'a T,
    others: [&'a T; N],
    f: &mut F,
) -> T
where
    T: Unflatten<Ns>,
    F: FnMut(LeafRef<'a, Ns, T::Leaf>, [LeafRef<'a, Ns, T::Leaf>; N]) -> T::Leaf,
{
    let own = leaves::<Ns, T>(tree);
    let count = own.len();
    let others = others.map(|o| {
        let theirs = leaves::<Ns, T>(o);
        if theirs.len() == count {
            theirs
        } else {
            leaves::<Ns, T>(tree)
        }
    });
    let mut others = others.map(Vec::into_iter);
    let mut built = Vec::with_capacity(count);
    for leaf in own {
        // Each iterator has `count` items, as `own` has.
        let Some(args) = all_some(others.each_mut().map(Iterator::next)) else {
            break;
        };
        built.push(f(leaf, args));
    }
    rebuild::<Ns, T>(&structure::<Ns, T>(tree), built)
}

/// `[Some(a), Some(b)]` to `Some([a, b])`; `None` if any is missing. Zips
/// use it to pair the fields of an enum variant across trees (a `None`
/// means another variant) and the values of maps whose keys were checked.
#[inline]
pub fn all_some<T, const N: usize>(items: [Option<T>; N]) -> Option<[T; N]> {
    if items.iter().any(Option::is_none) {
        return None;
    }
    Some(items.map(|item| match item {
        Some(x) => x,
        None => unreachable!("checked just above"),
    }))
}

/// `unflatten`, for a TreeDef the type's own `flatten_into` just wrote.
fn rebuild<Ns, T: Unflatten<Ns>>(def: &TreeDef, leaves: Vec<T::Leaf>) -> T {
    match unflatten::<Ns, T, _>(def, leaves) {
        Ok(value) => value,
        Err(e) => panic!(
            "`{}`: its `Unflatten::unflatten_from` cannot read back what its `Flatten::flatten_into` wrote: {e}",
            core::any::type_name::<T>()
        ),
    }
}
