//! Key paths: every leaf with its [`KeyPath`] (JAX's `*_with_path`
//! functions), one form per walk: [`for_each_with_path`] (a tree's
//! leaves read with their paths, each path lent: the loop to reach for),
//! [`flatten_with_path`], [`leaves_with_path`] (the pairs collected),
//! [`map_with_path`], and over several trees in step, read or updated in
//! place, [`zip_mut_with_path`] (the arguments of [`zip_mut`](crate::walk::zip_mut));
//! a leaf found by its address ([`LeafAddress`]: its key path or its
//! position in leaf order) to read ([`get`]), update ([`update`]) or
//! replace ([`set`]) in place (equinox's `tree_at`), a subtree replaced
//! ([`set_subtree`]). The path of the leaf at an index is
//! `structure(&t).leaf_path(i)` (with its kind:
//! `generic::by_index::leaf_path_at::<Std, _>(&t, i)`). Every error names
//! the path.
//!
//! Each function is fixed to [`Std`]; its body calls the engine in
//! `pytree_core::ops::with_path`, `multi_path`, `at_path` or `by_index`.

pub use pytree_core::{KeyEntry, KeyStr};

use crate::std_namespace::Std;
use pytree_core::{Error, Flatten, KeyPath, Leaf, LeafMut, LeafRef, TreeDef, Unflatten};

/// The leaf at `at`, a key path or a position in leaf order
/// ([`LeafAddress`]), lent by reference ([`LeafRef`]); an error naming
/// the path if there is none (the path does not exist, or leads to a
/// subtree or `None`; the index is past the last leaf: the error says how
/// many leaves there are). By index it is `leaves(t)[i]` without building
/// the `Vec`.
///
/// Engine (any namespace): [`pytree_core::ops::at_path::get`](crate::generic::at_path::get),
/// [`pytree_core::ops::by_index::leaf_at`](crate::generic::by_index::leaf_at).
///
/// ```
/// use pytree_std::{KeyPath, PyTree};
/// #[derive(PyTree)]
/// struct Linear { w: f32, b: f32 }
/// let layers = vec![Linear { w: 1.0, b: 2.0 }];
/// assert_eq!(pytree_std::paths::get(&layers, &KeyPath::root().index(0).field("b")), Ok(&2.0));
/// let err = pytree_std::paths::get(&layers, &KeyPath::root().index(0)).unwrap_err();
/// assert_eq!(err.to_string(), "at [0]: node mismatch: expected a leaf, found Linear { w: *, b: * }");
/// assert_eq!(pytree_std::paths::get(&layers, 1)?, &2.0); // the second leaf
/// assert!(pytree_std::paths::get(&layers, 2).is_err());
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn get<T: Flatten<Std>>(
    tree: &T,
    at: impl LeafAddress,
) -> Result<LeafRef<'_, Std, T::Leaf>, Error> {
    at.get::<T>(tree)
}

/// Calls `f` on the leaf at `at` (a key path or a position in leaf order,
/// [`LeafAddress`]) by mutable reference ([`LeafMut`]) and returns its
/// result (equinox's `tree_at(..., replace_fn=f)`). On error the tree is
/// unchanged.
///
/// Engine (any namespace): [`pytree_core::ops::at_path::update`](crate::generic::at_path::update),
/// [`pytree_core::ops::by_index::leaf_at_mut`](crate::generic::by_index::leaf_at_mut).
///
/// ```
/// use pytree_std::KeyPath;
/// let mut t = (1i32, vec![2i32, 3]);
/// pytree_std::paths::update(&mut t, &KeyPath::root().index(1).index(0), |x| *x *= 100)?;
/// assert_eq!(t, (1, vec![200, 3]));
/// pytree_std::paths::update(&mut t, 2, |x| *x = 30)?; // the third leaf
/// assert_eq!(t, (1, vec![200, 30]));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn update<T: Flatten<Std>, R>(
    tree: &mut T,
    at: impl LeafAddress,
    f: impl FnOnce(LeafMut<'_, Std, T::Leaf>) -> R,
) -> Result<R, Error> {
    at.update::<T, R>(tree, f)
}

/// Replaces the leaf at `at` (a key path or a position in leaf order,
/// [`LeafAddress`]) and returns the old one (equinox's
/// `tree_at(..., replace=leaf)`). An array leaf keeps its shape: a new
/// leaf of another shape is an error. On error the tree is unchanged.
///
/// Engine (any namespace): [`pytree_core::ops::at_path::set`](crate::generic::at_path::set).
///
/// ```
/// use pytree_std::KeyPath;
/// let mut t = vec![1, 2];
/// assert_eq!(pytree_std::paths::set(&mut t, &KeyPath::root().index(0), 10), Ok(1));
/// assert_eq!(t, [10, 2]);
/// let err = pytree_std::paths::set(&mut t, &KeyPath::root().index(2), 0).unwrap_err();
/// assert_eq!(err.to_string(), "at [2]: no such key path: <root> has no child [2]");
/// assert_eq!(pytree_std::paths::set(&mut t, 1, 20), Ok(2));
/// assert_eq!(t, [10, 20]);
/// ```
pub fn set<T: Flatten<Std>>(
    tree: &mut T,
    at: impl LeafAddress,
    leaf: T::Leaf,
) -> Result<T::Leaf, Error> {
    at.set::<T>(tree, leaf)
}

/// Replaces the subtree at `path` by `subtree`, whose TreeDef must equal
/// the one there, and returns the old subtree (equinox's `tree_at` on a
/// node). On error the tree is unchanged.
///
/// Engine (any namespace): [`pytree_core::ops::at_path::set_subtree`](crate::generic::at_path::set_subtree).
///
/// ```
/// use std::collections::BTreeMap;
/// use pytree_std::KeyPath;
/// let mut t = BTreeMap::from([("a".to_string(), vec![1, 2]), ("b".to_string(), vec![3])]);
/// let old = pytree_std::paths::set_subtree(&mut t, &KeyPath::root().key("a".to_string()), vec![7, 8])?;
/// assert_eq!(old, [1, 2]);
/// assert_eq!(t["a"], [7, 8]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn set_subtree<T, S>(tree: &mut T, path: &KeyPath, subtree: S) -> Result<S, Error>
where
    T: Flatten<Std>,
    S: Unflatten<Std, Leaf = T::Leaf>,
{
    pytree_core::ops::at_path::set_subtree::<Std, T, S>(tree, path, subtree)
}

/// Where a leaf is, for [`get`], [`update`] and [`set`]: its key path
/// (`&KeyPath`) or its position in leaf order (`usize`, pre-order, as in
/// [`leaves`](crate::walk::leaves)). The path of the leaf at an index is its
/// TreeDef's [`leaf_path`](crate::TreeDef::leaf_path) (optree's
/// `treespec.paths()[i]`, without the field's kind); the engine's
/// `by_index::leaf_path_at` finds it with its kind, without building the
/// TreeDef.
///
/// ```
/// use pytree_std::KeyPath;
/// let t = (1i32, vec![2i32, 3]);
/// let path = KeyPath::root().index(1).index(1);
/// let (by_path, by_index) = (pytree_std::paths::get(&t, &path)?, pytree_std::paths::get(&t, 2)?);
/// assert_eq!(by_path, by_index);
/// assert_eq!(pytree_std::structure(&t).leaf_path(2), Some(path));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub trait LeafAddress {
    /// [`get`] at this address.
    #[doc(hidden)]
    fn get<T: Flatten<Std>>(self, tree: &T) -> Result<LeafRef<'_, Std, T::Leaf>, Error>;
    /// [`update`] at this address.
    #[doc(hidden)]
    fn update<T: Flatten<Std>, R>(
        self,
        tree: &mut T,
        f: impl FnOnce(LeafMut<'_, Std, T::Leaf>) -> R,
    ) -> Result<R, Error>;
    /// [`set`] at this address.
    #[doc(hidden)]
    fn set<T: Flatten<Std>>(self, tree: &mut T, leaf: T::Leaf) -> Result<T::Leaf, Error>;
}

/// A key path.
impl LeafAddress for &KeyPath {
    fn get<T: Flatten<Std>>(self, tree: &T) -> Result<LeafRef<'_, Std, T::Leaf>, Error> {
        pytree_core::ops::at_path::get::<Std, T>(tree, self)
    }
    fn update<T: Flatten<Std>, R>(
        self,
        tree: &mut T,
        f: impl FnOnce(LeafMut<'_, Std, T::Leaf>) -> R,
    ) -> Result<R, Error> {
        pytree_core::ops::at_path::update::<Std, T, R>(tree, self, f)
    }
    fn set<T: Flatten<Std>>(self, tree: &mut T, leaf: T::Leaf) -> Result<T::Leaf, Error> {
        pytree_core::ops::at_path::set::<Std, T>(tree, self, leaf)
    }
}

/// A position in leaf order (pre-order).
impl LeafAddress for usize {
    fn get<T: Flatten<Std>>(self, tree: &T) -> Result<LeafRef<'_, Std, T::Leaf>, Error> {
        pytree_core::ops::by_index::leaf_at::<Std, T>(tree, self)
    }
    fn update<T: Flatten<Std>, R>(
        self,
        tree: &mut T,
        f: impl FnOnce(LeafMut<'_, Std, T::Leaf>) -> R,
    ) -> Result<R, Error> {
        pytree_core::ops::by_index::leaf_at_mut::<Std, T>(tree, self).map(f)
    }
    fn set<T: Flatten<Std>>(self, tree: &mut T, leaf: T::Leaf) -> Result<T::Leaf, Error> {
        let slot = pytree_core::ops::by_index::leaf_at_mut::<Std, T>(tree, self)?;
        <T::Leaf as Leaf<Std>>::assign(slot, leaf).map_err(|err| {
            match pytree_core::ops::by_index::leaf_path_at::<Std, T>(tree, self) {
                Ok(path) => err.under(&path),
                Err(_) => err,
            }
        })
    }
}

/// Splits a tree into `(path, leaf)` pairs in pre-order and its [`TreeDef`]
/// (JAX's `tree_flatten_with_path`).
///
/// Engine (any namespace): [`pytree_core::ops::with_path::flatten_with_path`](crate::generic::with_path::flatten_with_path).
///
/// ```
/// use pytree_std::PyTree;
/// #[derive(PyTree)]
/// struct Linear { w: f32, b: f32 }
/// let (pairs, def) = pytree_std::flatten_with_path(vec![Linear { w: 1.0, b: 2.0 }]);
/// assert_eq!(pairs[1].0.to_string(), "[0].b");
/// assert_eq!(pairs[1].1, 2.0);
/// assert_eq!(def.num_leaves(), 2);
/// ```
pub fn flatten_with_path<T: Flatten<Std>>(tree: T) -> (Vec<(KeyPath, T::Leaf)>, TreeDef) {
    pytree_core::ops::with_path::flatten_with_path::<Std, T>(tree)
}

/// Calls `f(path, leaf)` on every leaf in pre-order, the leaf lent by
/// reference ([`LeafRef`]) and its path lent for the call: the read of a
/// tree's leaves with their paths. Nothing is allocated per leaf (the one
/// path grows and shrinks as the walk goes), so memory is the depth of the
/// tree, however many leaves it has; keep a path with `path.clone()`. To
/// collect the pairs instead, [`leaves_with_path`]; to read several trees
/// in step or update in place, [`zip_mut_with_path`].
///
/// Engine (any namespace): [`pytree_core::ops::with_path::for_each_with_path`](crate::generic::with_path::for_each_with_path).
///
/// ```
/// use pytree_std::PyTree;
/// #[derive(PyTree)]
/// struct Linear { w: Vec<f32>, b: f32 }
/// let model = Linear { w: vec![0.5, -2.0], b: 1.0 };
/// let mut report = Vec::new();
/// pytree_std::paths::for_each_with_path(&model, |path, x| {
///     if x.abs() > 0.75 { report.push(format!("{path} = {x}")) }
/// });
/// assert_eq!(report, [".w[1] = -2", ".b = 1"]);
/// ```
pub fn for_each_with_path<'a, T: Flatten<Std>>(
    tree: &'a T,
    f: impl FnMut(&KeyPath, LeafRef<'a, Std, T::Leaf>),
) {
    pytree_core::ops::with_path::for_each_with_path::<Std, T, _>(tree, f)
}

/// The leaves, lent by reference ([`LeafRef`]), with their paths, in
/// pre-order (JAX's `tree_leaves_with_path`): a `Vec` of pairs, each
/// holding its own [`KeyPath`] (memory: leaves times depth). A loop that
/// needs each path only while it looks at the leaf is
/// [`for_each_with_path`], which lends them.
///
/// Engine (any namespace): [`pytree_core::ops::with_path::leaves_with_path`](crate::generic::with_path::leaves_with_path).
///
/// ```
/// let t = (1, Some(2));
/// let shown: Vec<String> = pytree_std::paths::leaves_with_path(&t)
///     .into_iter()
///     .map(|(path, x)| format!("{path}: {x}"))
///     .collect();
/// assert_eq!(shown, ["[0]: 1", "[1]: 2"]);
/// ```
pub fn leaves_with_path<T: Flatten<Std>>(tree: &T) -> Vec<(KeyPath, LeafRef<'_, Std, T::Leaf>)> {
    pytree_core::ops::with_path::leaves_with_path::<Std, T>(tree)
}

/// Applies `f(path, leaf)` to every leaf and rebuilds a `U` (JAX's
/// `tree_map_with_path`); the leaf type may change, checked through the
/// TreeDef as in [`map_into`](crate::walk::map_into).
///
/// Engine (any namespace): [`pytree_core::ops::with_path::map_with_path`](crate::generic::with_path::map_with_path).
///
/// ```
/// use pytree_std::KeyPath;
/// let t: (String, Vec<String>) =
///     pytree_std::map_with_path((1, vec![2]), |path: &KeyPath, x: i32| format!("{path}={x}"))?;
/// assert_eq!(t, ("[0]=1".to_string(), vec!["[1][0]=2".to_string()]));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn map_with_path<T: Flatten<Std>, U: Unflatten<Std>>(
    tree: T,
    f: impl FnMut(&KeyPath, T::Leaf) -> U::Leaf,
) -> Result<U, Error> {
    pytree_core::ops::with_path::map_with_path::<Std, T, U, _>(tree, f)
}

/// Walks `N` trees updated in place and `M` more read, leaf by leaf, with
/// the key path: `f(path, [leaf of each mutable tree], [leaf of each other
/// tree])` (the path-aware [`zip_mut`](crate::walk::zip_mut), with its
/// arguments; JAX's `tree_map_with_path(f, tree, *rest)` and optree's
/// in-place `tree_map_with_path_`). The mutable trees' leaves are lent as
/// [`LeafMut`], the others' as [`LeafRef`]. Every tree is checked against
/// the first before `f` is first called (structures and array signatures,
/// as [`map_n`](crate::walk::map_n) checks them): on a mismatch nothing changes
/// and the error lists every difference; a dynamic tree read beside the
/// first ([`Tree`](crate::Tree)) pairs its maps' entries by key, whatever
/// their order.
///
/// - `zip_mut_with_path([&mut t], [], |path, [x], []| ..)`: an in-place
///   update that can depend on where, or of which kind, the leaf is;
/// - `zip_mut_with_path([], [&a, &b], |path, [], [x, y]| ..)`: trees read
///   in step (a map over several trees with paths collects `f`'s results
///   and [`unflatten`](crate::walk::unflatten)s them with the first's
///   [`structure`](crate::walk::structure));
/// - one tree read: a loop over [`leaves_with_path`], which cannot fail
///   (it clones each leaf's path); `zip_mut_with_path([], [&t], |path, [],
///   [x]| ..)` allocates nothing per leaf (and returns `Ok`).
///
/// Engine (any namespace): [`pytree_core::ops::multi_path::zip_mut_with_path`](crate::generic::multi_path::zip_mut_with_path)
/// (one mutable tree), [`pytree_core::ops::multi_path::for_each_with_path_n`](crate::generic::multi_path::for_each_with_path_n)
/// and [`pytree_core::ops::with_path::for_each_with_path`](crate::generic::with_path::for_each_with_path)
/// (none).
///
/// ```
/// use pytree_std::PyTree;
/// #[derive(PyTree, Debug, PartialEq)]
/// struct Layer { w: f32, #[pytree(kind = "state")] steps: f32 }
/// let mut p = Layer { w: 1.0, steps: 0.0 };
/// let g = Layer { w: 0.5, steps: 1.0 };
/// pytree_std::paths::zip_mut_with_path([&mut p], [&g], |path, [x], [dx]| match path.kind() {
///     "state" => *x += dx,
///     _ => *x -= 0.1 * dx,
/// })?;
/// assert_eq!(p, Layer { w: 0.95, steps: 1.0 });
///
/// let mut t = (1.0f32, vec![1.0f32, 1.0]);
/// pytree_std::paths::zip_mut_with_path([&mut t], [], |path, [x], []| *x *= path.len() as f32)?;
/// assert_eq!(t, (1.0, vec![2.0, 2.0]));
///
/// // Two trees updated from a third.
/// let (mut p, mut m) = (vec![1.0f32, 2.0], vec![0.0f32; 2]);
/// pytree_std::paths::zip_mut_with_path([&mut p, &mut m], [&vec![1.0f32, 1.0]], |path, [p, m], [g]| {
///     *m += g * path.len() as f32;
///     *p -= *m;
/// })?;
/// assert_eq!((p, m), (vec![0.0, 1.0], vec![1.0, 1.0]));
///
/// // Trees read in step: where they differ.
/// let mut diffs = Vec::new();
/// pytree_std::paths::zip_mut_with_path([], [&vec![1.0f32, 2.0], &vec![1.0f32, 2.5]], |path, [], [x, y]| {
///     if x != y { diffs.push(path.to_string()) }
/// })?;
/// assert_eq!(diffs, ["[1]"]);
///
/// use pytree_std::{tree, Tree};
/// let a: Tree<i32> = tree! { "w" => 1, "b" => [2, 3] };
/// let b: Tree<i32> = tree! { "b" => [20, 30], "w" => 10 }; // other order: paired by key
/// let mut out = Vec::new();
/// pytree_std::paths::zip_mut_with_path([], [&a, &b], |path, [], [x, y]| out.push(format!("{path}={}", x + y)))?;
/// let t: Tree<String> = pytree_std::unflatten(&pytree_std::structure(&a), out)?;
/// assert_eq!(format!("{t:?}"), r#"{"w": "[\"w\"]=11", "b": ["[\"b\"][0]=22", "[\"b\"][1]=33"]}"#);
///
/// // One tree read: its leaves with their paths (`for_each_with_path`).
/// let mut paths = Vec::new();
/// pytree_std::paths::for_each_with_path(&vec![(1, 2)], |path, _| paths.push(path.to_string()));
/// assert_eq!(paths, ["[0][0]", "[0][1]"]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn zip_mut_with_path<'a, T: Flatten<Std>, const N: usize, const M: usize>(
    muts: [&'a mut T; N],
    refs: [&'a T; M],
    mut f: impl FnMut(&KeyPath, [LeafMut<'a, Std, T::Leaf>; N], [LeafRef<'a, Std, T::Leaf>; M]),
) -> Result<(), Error> {
    if N == 0 {
        let Some(&first) = refs.first() else {
            return Ok(());
        };
        if M == 1 {
            // One tree: nothing to check or line up, nothing allocated.
            for_each_with_path(first, |path, x| {
                if let Some(none) = pytree_core::__private::all_some(core::array::from_fn(|_| None))
                {
                    f(path, none, crate::walk::one(x));
                }
            });
            return Ok(());
        }
        // Trees read in step: checked first, numbered as `zip_mut` numbers
        // them; then the first is walked beside all of them (itself
        // included, which lines up trivially: the engine takes the first
        // and the others apart, and `M - 1` cannot be written here).
        pytree_core::ops::multi::check_all::<Std, T>(refs.to_vec())?;
        return pytree_core::ops::multi_path::for_each_with_path_n::<Std, T, M, _>(
            first,
            refs,
            |path, _, ys| {
                if let Some(none) = pytree_core::__private::all_some(core::array::from_fn(|_| None))
                {
                    f(path, none, ys);
                }
            },
        );
    }
    if N == 1 {
        let Some(tree) = muts.into_iter().next() else {
            return Ok(());
        };
        if M == 0 {
            // Nothing to check or line up.
            pytree_core::ops::with_path::for_each_mut_with_path::<Std, T, _>(tree, |path, x| {
                if let Some(none) = pytree_core::__private::all_some(core::array::from_fn(|_| None))
                {
                    f(path, crate::walk::one(x), none);
                }
            });
            return Ok(());
        }
        return pytree_core::ops::multi_path::zip_mut_with_path::<Std, T, M, _>(
            tree,
            refs,
            |path, x, ys| f(path, crate::walk::one(x), ys),
        );
    }
    // Several mutable trees: checked as `zip_mut` checks them, then walked
    // in step in leaf order, with the first's paths.
    check_in_step(&muts, &refs)?;
    let paths: Vec<KeyPath> = match muts.first() {
        // The walk's paths, which carry their kind (a TreeDef's do not).
        Some(first) => leaves_with_path(&**first)
            .into_iter()
            .map(|(path, _)| path)
            .collect(),
        None => Vec::new(),
    };
    let mut ms = muts.map(|t| crate::walk::leaves_mut(t).into_iter());
    let mut rs = refs.map(|t| crate::walk::leaves(t).into_iter());
    for path in &paths {
        match (
            pytree_core::__private::all_some(ms.each_mut().map(Iterator::next)),
            pytree_core::__private::all_some(rs.each_mut().map(Iterator::next)),
        ) {
            (Some(xs), Some(ys)) => f(path, xs, ys),
            _ => break,
        }
    }
    Ok(())
}

/// Checks `N` trees updated and `M` read in step against the first (the
/// first mutable one, else the first read), numbered as
/// [`zip_mut`](crate::walk::zip_mut) numbers them; `parallel::par_zip_mut`
/// checks the same way.
pub(crate) fn check_in_step<T: Flatten<Std>>(muts: &[&mut T], refs: &[&T]) -> Result<(), Error> {
    let trees = muts.iter().map(|t| &**t).chain(refs.iter().copied());
    pytree_core::ops::multi::check_all::<Std, T>(trees.collect())
}
