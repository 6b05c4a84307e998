//! Key paths: every leaf with its [`KeyPath`] (JAX's `*_with_path`
//! functions: [`flatten_with_path`], [`leaves_with_path`],
//! [`map_with_path`], [`for_each_with_path`], [`for_each_mut_with_path`];
//! over several trees [`map_with_path_n`], [`for_each_with_path_n`],
//! [`zip_mut_with_path`]); lookup and update by path (equinox's `tree_at`,
//! in place: [`get`], [`set`], [`set_subtree`], [`update`]); leaves by
//! their position in leaf order ([`leaf_at`], [`leaf_at_mut`],
//! [`leaf_path_at`]). Every error names the path.
//!
//! Each function is fixed to [`Std`]; its body is one call to the engine in
//! `pytree_core::ops::with_path`, `multi_path`, `at_path` or `by_index`.

pub use pytree_core::{KeyEntry, KeyStr};

use crate::{Error, Flatten, KeyPath, LeafMut, LeafRef, Std, TreeDef, Unflatten};

/// The leaf at `path`, lent by reference ([`LeafRef`]); an error naming
/// the path if there is none (the path does not exist, or leads to a
/// subtree or `None`).
///
/// Engine (any namespace): [`pytree_core::ops::at_path::get`](crate::generic::at_path::get).
///
/// ```
/// use pytree_std::{KeyPath, PyTree};
/// #[derive(PyTree)]
/// struct Linear { w: f32, b: f32 }
/// let layers = vec![Linear { w: 1.0, b: 2.0 }];
/// assert_eq!(pytree_std::paths::get(&layers, &KeyPath::root().index(0).field("b")), Ok(&2.0));
/// let err = pytree_std::paths::get(&layers, &KeyPath::root().index(0)).unwrap_err();
/// assert_eq!(err.to_string(), "at [0]: node mismatch: expected a leaf, found Linear { w: *, b: * }");
/// ```
pub fn get<'a, T: Flatten<Std>>(
    tree: &'a T,
    path: &KeyPath,
) -> Result<LeafRef<'a, Std, T::Leaf>, Error> {
    pytree_core::ops::at_path::get::<Std, T>(tree, path)
}

/// Calls `f` on the leaf at `path` by mutable reference ([`LeafMut`]) and returns its
/// result (equinox's `tree_at(..., replace_fn=f)`). On error the tree is
/// unchanged.
///
/// Engine (any namespace): [`pytree_core::ops::at_path::update`](crate::generic::at_path::update).
///
/// ```
/// use pytree_std::KeyPath;
/// let mut t = (1i32, vec![2i32, 3]);
/// pytree_std::paths::update(&mut t, &KeyPath::root().index(1).index(0), |x| *x *= 100)?;
/// assert_eq!(t, (1, vec![200, 3]));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn update<T: Flatten<Std>, R>(
    tree: &mut T,
    path: &KeyPath,
    f: impl ::core::ops::FnOnce(LeafMut<'_, Std, T::Leaf>) -> R,
) -> Result<R, Error> {
    pytree_core::ops::at_path::update::<Std, T, R>(tree, path, f)
}

/// Replaces the leaf at `path` and returns the old one (equinox's
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
/// ```
pub fn set<T: Flatten<Std>>(tree: &mut T, path: &KeyPath, leaf: T::Leaf) -> Result<T::Leaf, Error> {
    pytree_core::ops::at_path::set::<Std, T>(tree, path, leaf)
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

/// The leaf at position `index` in leaf order (pre-order), lent by
/// reference: `leaves(t)[i]` without building the `Vec`. An index past
/// the last leaf is an error that says how many leaves there are.
///
/// Engine (any namespace): [`pytree_core::ops::by_index::leaf_at`](crate::generic::by_index::leaf_at).
///
/// ```
/// use pytree_std::{tree, Tree};
/// let t: Tree<i32> = tree! { "a" => 1, "x" => { "c" => 2, "d" => 3 } };
/// assert_eq!(pytree_std::paths::leaf_at(&t, 2)?, &3);
/// assert!(pytree_std::paths::leaf_at(&t, 3).is_err());
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn leaf_at<T: Flatten<Std>>(
    tree: &T,
    index: usize,
) -> Result<LeafRef<'_, Std, T::Leaf>, Error> {
    pytree_core::ops::by_index::leaf_at::<Std, T>(tree, index)
}

/// The leaf at position `index` in leaf order, lent by mutable reference.
///
/// Engine (any namespace): [`pytree_core::ops::by_index::leaf_at_mut`](crate::generic::by_index::leaf_at_mut).
///
/// ```
/// let mut t = (1.0f32, vec![2.0f32, 3.0]);
/// *pytree_std::paths::leaf_at_mut(&mut t, 2)? = 30.0;
/// assert_eq!(t, (1.0, vec![2.0, 30.0]));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn leaf_at_mut<T: Flatten<Std>>(
    tree: &mut T,
    index: usize,
) -> Result<LeafMut<'_, Std, T::Leaf>, Error> {
    pytree_core::ops::by_index::leaf_at_mut::<Std, T>(tree, index)
}

/// The key path (with its kind) of the leaf at position `index` in leaf
/// order, without flattening. From a TreeDef:
/// [`TreeDef::leaf_path`](crate::TreeDef::leaf_path) (optree's
/// `treespec.paths()[i]`).
///
/// Engine (any namespace): [`pytree_core::ops::by_index::leaf_path_at`](crate::generic::by_index::leaf_path_at).
///
/// ```
/// let t = (1, vec![2, 3]);
/// assert_eq!(pytree_std::paths::leaf_path_at(&t, 2)?.to_string(), "[1][1]");
/// assert_eq!(pytree_std::structure(&t).leaf_path(2), Some(pytree_std::paths::leaf_path_at(&t, 2)?));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn leaf_path_at<T: Flatten<Std>>(tree: &T, index: usize) -> Result<KeyPath, Error> {
    pytree_core::ops::by_index::leaf_path_at::<Std, T>(tree, index)
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

/// The leaves, lent by reference ([`LeafRef`]), with their paths, in
/// pre-order (JAX's `tree_leaves_with_path`).
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
/// TreeDef as in [`map_into`](crate::basic::map_into).
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

/// Calls `f(path, leaf)` on every leaf by reference ([`LeafRef`]), in pre-order.
///
/// Engine (any namespace): [`pytree_core::ops::with_path::for_each_with_path`](crate::generic::with_path::for_each_with_path).
///
/// ```
/// let mut paths = Vec::new();
/// pytree_std::paths::for_each_with_path(&vec![(1, 2)], |path, _| paths.push(path.to_string()));
/// assert_eq!(paths, ["[0][0]", "[0][1]"]);
/// ```
pub fn for_each_with_path<'a, T: Flatten<Std>>(
    tree: &'a T,
    f: impl FnMut(&KeyPath, LeafRef<'a, Std, T::Leaf>),
) {
    pytree_core::ops::with_path::for_each_with_path::<Std, T, _>(tree, f)
}

/// Calls `f(path, leaf)` on every leaf by mutable reference ([`LeafMut`]): an in-place
/// update that can depend on where (or of which kind) the leaf is.
///
/// Engine (any namespace): [`pytree_core::ops::with_path::for_each_mut_with_path`](crate::generic::with_path::for_each_mut_with_path).
///
/// ```
/// let mut t = (1.0f32, vec![1.0f32, 1.0]);
/// pytree_std::paths::for_each_mut_with_path(&mut t, |path, x| *x *= path.len() as f32);
/// assert_eq!(t, (1.0, vec![2.0, 2.0]));
/// ```
pub fn for_each_mut_with_path<'a, T: Flatten<Std>>(
    tree: &'a mut T,
    f: impl FnMut(&KeyPath, LeafMut<'a, Std, T::Leaf>),
) {
    pytree_core::ops::with_path::for_each_mut_with_path::<Std, T, _>(tree, f)
}

/// Combines `first` with `N` more trees of the same type leaf by leaf,
/// with the path of each leaf in `first` (JAX's
/// `tree_map_with_path(f, tree, *rest)`): `f(path, leaf, [leaf of each
/// other])`, rebuilt as a `U` of `first`'s structure (the leaf type may
/// change). The structures are checked as in [`map_n`](crate::map_n)
/// (array leaves: their signatures too), and a mismatch lists every
/// difference. The dynamic tree's maps pair by key, whatever their order.
///
/// Engine (any namespace): [`pytree_core::ops::multi_path::map_with_path_n`](crate::generic::multi_path::map_with_path_n).
///
/// ```
/// use pytree_std::{tree, KeyPath, Tree};
/// let a: Tree<i32> = tree! { "w" => 1, "b" => [2, 3] };
/// let b: Tree<i32> = tree! { "b" => [20, 30], "w" => 10 }; // other order: paired by key
/// let t: Tree<String> = pytree_std::paths::map_with_path_n(&a, [&b], |path: &KeyPath, x: &i32, [y]: [&i32; 1]| {
///     format!("{path}={}", x + y)
/// })?;
/// assert_eq!(format!("{t:?}"), r#"{"w": "[\"w\"]=11", "b": ["[\"b\"][0]=22", "[\"b\"][1]=33"]}"#);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn map_with_path_n<'a, T: Flatten<Std>, U: Unflatten<Std>, const N: usize>(
    first: &'a T,
    others: [&'a T; N],
    f: impl FnMut(&KeyPath, LeafRef<'a, Std, T::Leaf>, [LeafRef<'a, Std, T::Leaf>; N]) -> U::Leaf,
) -> Result<U, Error> {
    pytree_core::ops::multi_path::map_with_path_n::<Std, T, U, N, _>(first, others, f)
}

/// Calls `f(path, leaf, [leaf of each other])` on `first` and `N` more
/// trees of the same type, in `first`'s leaf order, after the structure
/// check of [`map_n`](crate::map_n) (on a mismatch `f` is never called).
///
/// Engine (any namespace): [`pytree_core::ops::multi_path::for_each_with_path_n`](crate::generic::multi_path::for_each_with_path_n).
///
/// ```
/// let mut diffs = Vec::new();
/// pytree_std::paths::for_each_with_path_n(&vec![1.0f32, 2.0], [&vec![1.0f32, 2.5]], |path, x, [y]| {
///     if x != y { diffs.push(path.to_string()) }
/// })?;
/// assert_eq!(diffs, ["[1]"]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn for_each_with_path_n<'a, T: Flatten<Std>, const N: usize>(
    first: &'a T,
    others: [&'a T; N],
    f: impl FnMut(&KeyPath, LeafRef<'a, Std, T::Leaf>, [LeafRef<'a, Std, T::Leaf>; N]),
) -> Result<(), Error> {
    pytree_core::ops::multi_path::for_each_with_path_n::<Std, T, N, _>(first, others, f)
}

/// Updates `tree` in place from `N` other trees of the same type, leaf by
/// leaf, with paths: `f(path, leaf, [leaf of each other])` (the path-aware
/// [`zip_mut`](crate::zip_mut)). Checked before the first update: on a
/// mismatch `tree` is unchanged and the error lists every difference.
///
/// Engine (any namespace): [`pytree_core::ops::multi_path::zip_mut_with_path`](crate::generic::multi_path::zip_mut_with_path).
///
/// ```
/// use pytree_std::PyTree;
/// #[derive(PyTree, Debug, PartialEq)]
/// struct Layer { w: f32, #[pytree(kind = "state")] steps: f32 }
/// let mut p = Layer { w: 1.0, steps: 0.0 };
/// let g = Layer { w: 0.5, steps: 1.0 };
/// pytree_std::paths::zip_mut_with_path(&mut p, [&g], |path, x, [dx]| match path.kind() {
///     "state" => *x += dx,
///     _ => *x -= 0.1 * dx,
/// })?;
/// assert_eq!(p, Layer { w: 0.95, steps: 1.0 });
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn zip_mut_with_path<'a, T: Flatten<Std>, const N: usize>(
    tree: &'a mut T,
    others: [&'a T; N],
    f: impl FnMut(&KeyPath, LeafMut<'a, Std, T::Leaf>, [LeafRef<'a, Std, T::Leaf>; N]),
) -> Result<(), Error> {
    pytree_core::ops::multi_path::zip_mut_with_path::<Std, T, N, _>(tree, others, f)
}
