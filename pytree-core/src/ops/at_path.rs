//! Lookup and update by key path (equinox's `tree_at`, done in place):
//! `get` a leaf, `update` it with a closure, `set` it, or `set_subtree` to
//! replace a whole subtree by another value of the same structure.
//!
//! A `PathMatcher` follows the walk's `enter`/`exit` and counts how much
//! of the wanted path the current place matches, comparing borrowed keys
//! with the wanted entries (no path is built, no key cloned). A sequence of
//! leaves is indexed directly. A path that leads nowhere is an error naming
//! the path, the longest prefix that exists and the entry it lacks; a path
//! that leads to a subtree where a leaf is wanted names what is there.

use alloc::string::ToString;
use alloc::vec::Vec;

use crate::error::signature_mismatch;
use crate::error::{Error, ErrorKind};
use crate::leaf::{Leaf, LeafMut, LeafRef};
use crate::ops::tracker::follow_path;
use crate::ops::{flatten, unflatten};
use crate::paths::key_path::{KeyEntry, KeyPath, KeyRef};
use crate::signature::Signature;
use crate::static_data::StaticValue;
use crate::traits::flatten::{Flatten, Unflatten};
use crate::traits::visit::{Visit, VisitMut};
use crate::treedef::node::NodeRef;
use crate::treedef::{TreeDef, TreeDefBuilder};

/// How far the current place of a walk matches a wanted path.
struct PathMatcher<'p> {
    target: &'p [KeyEntry],
    /// Entries on the current path.
    depth: usize,
    /// Leading entries of the current path equal to the target's.
    matched: usize,
    /// The most entries ever matched: the longest prefix that exists.
    deepest: usize,
}

/// Which elements of a sequence of leaves at the current place the wanted
/// path covers.
enum SliceRegion {
    /// None of them.
    Nothing,
    /// All of them (the wanted subtree contains the sequence).
    All,
    /// Element `i`, which is the wanted leaf itself.
    Leaf(usize),
}

impl<'p> PathMatcher<'p> {
    fn new(target: &'p KeyPath) -> Self {
        PathMatcher {
            target: target.entries(),
            depth: 0,
            matched: 0,
            deepest: 0,
        }
    }

    #[inline]
    fn enter(&mut self, key: KeyRef<'_>) {
        if self.matched == self.depth
            && self.depth < self.target.len()
            && key.matches(&self.target[self.depth])
        {
            self.matched += 1;
            self.deepest = self.deepest.max(self.matched);
        }
        self.depth += 1;
    }

    #[inline]
    fn exit(&mut self) {
        self.depth = self.depth.saturating_sub(1);
        self.matched = self.matched.min(self.depth);
    }

    /// The walk is inside the wanted subtree.
    #[inline]
    fn inside(&self) -> bool {
        self.matched == self.target.len()
    }

    /// The walk is at the wanted place itself (a leaf reported now is the
    /// wanted leaf; `Option` and pointers add no entries).
    #[inline]
    fn at_target(&self) -> bool {
        self.inside() && self.depth == self.target.len()
    }

    /// For a sequence of `len` leaves at the current place.
    #[inline]
    fn slice(&mut self, len: usize) -> SliceRegion {
        if self.inside() {
            return SliceRegion::All;
        }
        if self.matched != self.depth {
            return SliceRegion::Nothing;
        }
        match self.target.get(self.depth) {
            Some(KeyEntry::Index(i)) if *i < len => {
                self.deepest = self.deepest.max(self.depth + 1);
                if self.depth + 1 == self.target.len() {
                    SliceRegion::Leaf(*i)
                } else {
                    SliceRegion::Nothing
                }
            }
            _ => SliceRegion::Nothing,
        }
    }

    /// The error for a path whose prefix of `deepest` entries is all that
    /// exists.
    #[cold]
    fn not_found(&self) -> Error {
        let existing = KeyPath::from_entries(self.target[..self.deepest].to_vec());
        match self.target.get(self.deepest) {
            Some(missing) => Error::new(ErrorKind::PathNotFound {
                existing,
                missing: missing.clone(),
            }),
            None => Error::custom("the key path exists but was not reached"),
        }
    }

    /// True if the whole wanted path exists in the tree walked.
    fn found(&self) -> bool {
        self.deepest == self.target.len()
    }
}

/// Finds the leaf at the wanted place.
struct FindLeaf<'p, R> {
    matcher: PathMatcher<'p>,
    found: Option<R>,
}

impl<R> Visit<R> for FindLeaf<'_, R> {
    #[inline]
    fn leaf(&mut self, leaf: R) {
        if self.matcher.at_target() {
            self.found = Some(leaf);
        }
    }
    #[inline]
    fn leaf_run<I: ExactSizeIterator<Item = R>>(&mut self, mut leaves: I) {
        if let SliceRegion::Leaf(i) = self.matcher.slice(leaves.len()) {
            self.found = leaves.nth(i);
        }
    }
    follow_path!(matcher);
}

/// Builds the TreeDef of the wanted subtree.
struct RegionDef<'p> {
    matcher: PathMatcher<'p>,
    def: TreeDefBuilder,
}

impl<R> Visit<R> for RegionDef<'_> {
    #[inline]
    fn leaf(&mut self, _leaf: R) {
        if self.matcher.inside() {
            self.def.leaf();
        }
    }
    #[inline]
    fn leaf_run<I: ExactSizeIterator<Item = R>>(&mut self, leaves: I) {
        match self.matcher.slice(leaves.len()) {
            SliceRegion::All => self.def.leaves(leaves.len()),
            SliceRegion::Leaf(_) => self.def.leaf(),
            SliceRegion::Nothing => {}
        }
    }
    #[inline]
    fn node(&mut self, node: NodeRef<'_>) {
        if self.matcher.inside() {
            self.def.node(node);
        }
    }
    fn map_keys<F: FnOnce() -> StaticValue>(&mut self, keys: F) {
        if self.matcher.inside() {
            self.def.map_keys(keys());
        }
    }
    follow_path!(matcher);
}

/// The TreeDef of the subtree at `path`, or the error naming the path.
fn region_def<Ns, T: Flatten<Ns>>(tree: &T, path: &KeyPath) -> Result<TreeDef, Error> {
    let mut v = RegionDef {
        matcher: PathMatcher::new(path),
        def: TreeDefBuilder::new(),
    };
    tree.visit(&mut v);
    if v.matcher.found() {
        Ok(v.def.build())
    } else {
        Err(v.matcher.not_found().under(path))
    }
}

/// The error for a path that exists but holds no single leaf: names what is
/// there (walks the tree again; only on this cold path).
#[cold]
fn not_a_leaf<Ns, T: Flatten<Ns>>(tree: &T, path: &KeyPath) -> Error {
    match region_def::<Ns, T>(tree, path) {
        Ok(def) => Error::new(ErrorKind::NodeMismatch {
            expected: "a leaf".to_string(),
            found: def.to_string(),
        })
        .under(path),
        Err(err) => err,
    }
}

/// `pytree_std::paths::get` for any namespace `Ns` (documented there;
/// [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// use pytree_std::{KeyPath, PyTree};
/// #[derive(PyTree)]
/// struct Linear { w: f32, b: f32 }
/// let layers = vec![Linear { w: 1.0, b: 2.0 }];
/// assert_eq!(pytree_core::ops::at_path::get::<pytree_std::Std, _>(&layers, &KeyPath::root().index(0).field("b")), Ok(&2.0));
/// let err = pytree_core::ops::at_path::get::<pytree_std::Std, _>(&layers, &KeyPath::root().index(0)).unwrap_err();
/// assert_eq!(err.to_string(), "at [0]: node mismatch: expected a leaf, found Linear { w: *, b: * }");
/// ```
pub fn get<'a, Ns, T: Flatten<Ns>>(
    tree: &'a T,
    path: &KeyPath,
) -> Result<LeafRef<'a, Ns, T::Leaf>, Error> {
    let mut v = FindLeaf {
        matcher: PathMatcher::new(path),
        found: None,
    };
    tree.visit(&mut v);
    match v.found {
        Some(leaf) => Ok(leaf),
        None if !v.matcher.found() => Err(v.matcher.not_found().under(path)),
        None => Err(not_a_leaf::<Ns, T>(tree, path)),
    }
}

/// Calls a closure once on the leaf at the wanted place.
struct UpdateLeaf<'p, F, R> {
    matcher: PathMatcher<'p>,
    f: Option<F>,
    out: Option<R>,
}

impl<M, F: FnOnce(M) -> R, R> VisitMut<M> for UpdateLeaf<'_, F, R> {
    #[inline]
    fn leaf(&mut self, leaf: M) {
        if self.matcher.at_target() {
            if let Some(f) = self.f.take() {
                self.out = Some(f(leaf));
            }
        }
    }
    #[inline]
    fn leaf_run<I: ExactSizeIterator<Item = M>>(&mut self, mut leaves: I) {
        if let SliceRegion::Leaf(i) = self.matcher.slice(leaves.len()) {
            if let (Some(leaf), Some(f)) = (leaves.nth(i), self.f.take()) {
                self.out = Some(f(leaf));
            }
        }
    }
    follow_path!(matcher);
}

/// `pytree_std::paths::update` for any namespace `Ns` (documented there;
/// [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// use pytree_std::KeyPath;
/// let mut t = (1i32, vec![2i32, 3]);
/// pytree_core::ops::at_path::update::<pytree_std::Std, _, _>(&mut t, &KeyPath::root().index(1).index(0), |x| *x *= 100)?;
/// assert_eq!(t, (1, vec![200, 3]));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn update<Ns, T, R>(
    tree: &mut T,
    path: &KeyPath,
    f: impl FnOnce(LeafMut<'_, Ns, T::Leaf>) -> R,
) -> Result<R, Error>
where
    T: Flatten<Ns>,
{
    // Find the leaf by reference first, so that the walk by mutable
    // reference (which lends for the whole borrow) only runs when it will
    // reach it; errors come from the walk by reference.
    get::<Ns, T>(tree, path)?;
    let mut v = UpdateLeaf {
        matcher: PathMatcher::new(path),
        f: Some(f),
        out: None,
    };
    tree.visit_mut(&mut v);
    v.out.ok_or_else(|| {
        Error::custom("the leaf was found by reference but not by mutable reference").under(path)
    })
}

/// `pytree_std::paths::set` for any namespace `Ns` (documented there;
/// [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// use pytree_std::KeyPath;
/// let mut t = vec![1, 2];
/// assert_eq!(pytree_core::ops::at_path::set::<pytree_std::Std, _>(&mut t, &KeyPath::root().index(0), 10), Ok(1));
/// assert_eq!(t, [10, 2]);
/// let err = pytree_core::ops::at_path::set::<pytree_std::Std, _>(&mut t, &KeyPath::root().index(2), 0).unwrap_err();
/// assert_eq!(err.to_string(), "at [2]: no such key path: <root> has no child [2]");
/// ```
pub fn set<Ns, T: Flatten<Ns>>(
    tree: &mut T,
    path: &KeyPath,
    leaf: T::Leaf,
) -> Result<T::Leaf, Error> {
    update::<Ns, T, _>(tree, path, |slot| T::Leaf::assign(slot, leaf))?
        .map_err(|err| err.under(path))
}

/// Swaps the leaves of the wanted subtree, in order, for new ones
/// ([`Leaf::assign`]); the first failure is kept.
struct ReplaceRegion<'p, Ns, L, I> {
    matcher: PathMatcher<'p>,
    new: I,
    old: Vec<L>,
    failed: Option<Error>,
    ns: core::marker::PhantomData<Ns>,
}

impl<Ns, L: Leaf<Ns>, I: Iterator<Item = L>> ReplaceRegion<'_, Ns, L, I> {
    #[inline]
    fn swap(&mut self, leaf: L::Mut<'_>) {
        if let Some(new) = self.new.next() {
            match L::assign(leaf, new) {
                Ok(old) => self.old.push(old),
                Err(err) => {
                    self.failed.get_or_insert(err);
                }
            }
        }
    }
}

impl<'t, Ns, L: Leaf<Ns>, I: Iterator<Item = L>> VisitMut<L::Mut<'t>>
    for ReplaceRegion<'_, Ns, L, I>
{
    #[inline]
    fn leaf(&mut self, leaf: L::Mut<'t>) {
        if self.matcher.inside() {
            self.swap(leaf);
        }
    }
    #[inline]
    fn leaf_run<It: ExactSizeIterator<Item = L::Mut<'t>>>(&mut self, mut leaves: It) {
        match self.matcher.slice(leaves.len()) {
            SliceRegion::All => leaves.for_each(|leaf| self.swap(leaf)),
            SliceRegion::Leaf(i) => {
                if let Some(leaf) = leaves.nth(i) {
                    self.swap(leaf);
                }
            }
            SliceRegion::Nothing => {}
        }
    }
    follow_path!(matcher);
}

/// `pytree_std::paths::set_subtree` for any namespace `Ns` (documented there;
/// [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// use std::collections::BTreeMap;
/// use pytree_std::KeyPath;
/// let mut t = BTreeMap::from([("a".to_string(), vec![1, 2]), ("b".to_string(), vec![3])]);
/// let old = pytree_core::ops::at_path::set_subtree::<pytree_std::Std, _, _>(&mut t, &KeyPath::root().key("a".to_string()), vec![7, 8])?;
/// assert_eq!(old, [1, 2]);
/// assert_eq!(t["a"], [7, 8]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn set_subtree<Ns, T, S>(tree: &mut T, path: &KeyPath, subtree: S) -> Result<S, Error>
where
    T: Flatten<Ns>,
    S: Unflatten<Ns, Leaf = T::Leaf>,
{
    let def = region_def::<Ns, T>(tree, path)?;
    let (leaves, new_def) = flatten::<Ns, S>(subtree);
    if new_def != def {
        return Err(Error::new(ErrorKind::NodeMismatch {
            expected: def.to_string(),
            found: new_def.to_string(),
        })
        .under(path));
    }
    check_region_signatures::<Ns, T>(tree, path, &leaves)?;
    let mut v = ReplaceRegion {
        matcher: PathMatcher::new(path),
        new: leaves.into_iter(),
        old: Vec::with_capacity(def.num_leaves()),
        failed: None,
        ns: core::marker::PhantomData::<Ns>,
    };
    tree.visit_mut(&mut v);
    if let Some(err) = v.failed {
        return Err(err.under(path));
    }
    unflatten::<Ns, S, _>(&def, v.old).map_err(|err| err.under(path))
}

/// Collects the signatures of the leaves of the wanted subtree.
struct RegionSignatures<'p, Ns, L> {
    matcher: PathMatcher<'p>,
    out: Vec<Option<Signature>>,
    ns: core::marker::PhantomData<(Ns, L)>,
}

impl<'t, Ns, L: Leaf<Ns>> Visit<L::Ref<'t>> for RegionSignatures<'_, Ns, L> {
    #[inline]
    fn leaf(&mut self, leaf: L::Ref<'t>) {
        if self.matcher.inside() {
            self.out.push(L::signature(&leaf));
        }
    }
    fn leaf_run<I: ExactSizeIterator<Item = L::Ref<'t>>>(&mut self, mut leaves: I) {
        match self.matcher.slice(leaves.len()) {
            SliceRegion::All => leaves.for_each(|leaf| self.out.push(L::signature(&leaf))),
            SliceRegion::Leaf(i) => {
                if let Some(leaf) = leaves.nth(i) {
                    self.out.push(L::signature(&leaf));
                }
            }
            SliceRegion::Nothing => {}
        }
    }
    follow_path!(matcher);
}

/// Checks, before anything is replaced, that each new leaf has the
/// signature (shape, dtype) of the leaf it replaces: a leaf lent as a view
/// cannot change shape in place.
fn check_region_signatures<Ns, T: Flatten<Ns>>(
    tree: &T,
    path: &KeyPath,
    new: &[T::Leaf],
) -> Result<(), Error> {
    let mut v = RegionSignatures {
        matcher: PathMatcher::new(path),
        out: Vec::new(),
        ns: core::marker::PhantomData::<(Ns, T::Leaf)>,
    };
    tree.visit(&mut v);
    for (i, (old, leaf)) in v.out.iter().zip(new).enumerate() {
        let new = T::Leaf::signature(&leaf.lend());
        if let Some(err) = signature_mismatch(old.as_ref(), new.as_ref()) {
            return Err(err.under(&region_leaf_path::<Ns, T>(tree, path, i)));
        }
    }
    Ok(())
}

/// The path of leaf `i` of the subtree at `path` (for errors only).
#[cold]
fn region_leaf_path<Ns, T: Flatten<Ns>>(tree: &T, path: &KeyPath, i: usize) -> KeyPath {
    crate::ops::with_path::leaves_with_path::<Ns, T>(tree)
        .into_iter()
        .map(|(p, _)| p)
        .filter(|p| p.entries().starts_with(path.entries()))
        .nth(i)
        .unwrap_or_else(|| path.clone())
}
