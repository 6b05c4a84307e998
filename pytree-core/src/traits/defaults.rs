//! The provided [`Flatten`] methods that a hand-written node gets from its
//! walks: [`zip_check`](Flatten::zip_check) compares the trees'
//! structures (and, for leaves with a shape, their signatures), and
//! [`zip_mut_prechecked`](Flatten::zip_mut_prechecked) lends the other
//! trees' leaves in order while it walks `self` mutably. The derive and
//! the std containers override both with walks of their own, which check
//! without building anything.

use alloc::vec::Vec;
use core::marker::PhantomData;

use crate::error::Error;
use crate::leaf::signature::Signature;
use crate::leaf::{Leaf, LeafMut, LeafRef};
use crate::paths::key_path::{KeyEntry, KeyRef};
use crate::traits::flatten::Flatten;
use crate::traits::visit::{Visit, VisitMut};
use crate::treedef::TreeDef;

/// Builds `tree`'s TreeDef (the engine of `structure`).
fn structure<Ns, T: Flatten<Ns>>(tree: &T) -> TreeDef {
    crate::ops::basic::structure::<Ns, T>(tree)
}

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
    let expected = signatures::<Ns, T>(tree);
    for (i, other) in others.iter().enumerate() {
        let found = signatures::<Ns, T>(other);
        if let Some(k) = (0..expected.len()).find(|&k| expected[k] != found[k]) {
            let (Some(e), Some(f)) = (expected[k].clone(), found[k].clone()) else {
                continue;
            };
            let error = Error::new(crate::error::ErrorKind::SignatureMismatch {
                expected: e,
                found: f,
            });
            let mut at = PathOf {
                target: k,
                seen: 0,
                path: Vec::new(),
                found: None,
            };
            tree.visit(&mut at);
            let path = at.found.unwrap_or_default();
            let error = path.into_iter().rev().fold(error, Error::at);
            return Err(error.with_tree(Some(i + 1)));
        }
    }
    Ok(())
}

/// The signature of each leaf of `tree`, in order.
fn signatures<Ns, T: Flatten<Ns>>(tree: &T) -> Vec<Option<Signature>> {
    struct Signatures<Ns, L>(Vec<Option<Signature>>, PhantomData<fn() -> (Ns, L)>);
    impl<'a, Ns, L: Leaf<Ns>> Visit<LeafRef<'a, Ns, L>> for Signatures<Ns, L> {
        fn leaf(&mut self, leaf: LeafRef<'a, Ns, L>) {
            self.0.push(L::signature(&leaf));
        }
    }
    let mut v = Signatures::<Ns, T::Leaf>(Vec::new(), PhantomData);
    tree.visit(&mut v);
    v.0
}

/// Finds the key path of leaf number `target` (pre-order).
struct PathOf {
    target: usize,
    seen: usize,
    path: Vec<KeyEntry>,
    found: Option<Vec<KeyEntry>>,
}

impl<R> Visit<R> for PathOf {
    fn leaf(&mut self, _leaf: R) {
        if self.seen == self.target {
            self.found = Some(self.path.clone());
        }
        self.seen += 1;
    }
    fn enter(&mut self, key: KeyRef<'_>) {
        self.path.push(key.to_owned_entry());
    }
    fn exit(&mut self) {
        self.path.pop();
    }
}

/// The leaves of `tree`, lent in order.
fn lent<'a, Ns, T: Flatten<Ns>>(tree: &'a T) -> Vec<LeafRef<'a, Ns, T::Leaf>> {
    struct Lent<R>(Vec<R>);
    impl<R> Visit<R> for Lent<R> {
        fn leaf(&mut self, leaf: R) {
            self.0.push(leaf);
        }
    }
    let mut v = Lent(Vec::new());
    tree.visit(&mut v);
    v.0
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
    let leaves = others.map(lent::<Ns, T>);
    let count = {
        struct Count(usize);
        impl<R> Visit<R> for Count {
            fn leaf(&mut self, _leaf: R) {
                self.0 += 1;
            }
        }
        let mut c = Count(0);
        (*tree).visit(&mut c);
        c.0
    };
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
