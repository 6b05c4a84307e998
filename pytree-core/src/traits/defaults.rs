//! The provided [`Flatten`] methods that a hand-written node gets from its
//! walks: [`zip_check`](Flatten::zip_check) compares the trees'
//! structures (and, for leaves with a shape, their signatures), and
//! [`zip_mut_prechecked`](Flatten::zip_mut_prechecked) lends the other
//! trees' leaves in order while it walks `self` mutably. The derive and
//! the std containers override both with walks of their own, which check
//! without building anything.

use alloc::vec::Vec;

use crate::error::Error;
use crate::leaf::signature::Signature;
use crate::leaf::{Leaf, LeafMut, LeafRef};
use crate::ops::basic::{leaves, structure};
use crate::ops::multi::signature_mismatches;
use crate::ops::reduce::num_leaves;
use crate::traits::flatten::Flatten;
use crate::traits::visit::VisitMut;

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
    // Compared as plain lists first (no key paths built on success); the
    // error, with its key path, from the multi-tree operations' own report.
    let expected = signatures::<Ns, T>(tree);
    for (i, other) in others.iter().enumerate() {
        if signatures::<Ns, T>(other) != expected {
            let mut found = Vec::new();
            signature_mismatches::<Ns, T>(tree, other, i + 1, &mut found);
            if !found.is_empty() {
                return Err(found.swap_remove(0));
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
            if let Some(args) =
                crate::__private::all_some(self.others.each_mut().map(Iterator::next))
            {
                (self.f)(leaf, args);
            }
        }
    }
    tree.visit_mut(&mut Zip {
        others: leaves.map(Vec::into_iter),
        f,
    });
}
