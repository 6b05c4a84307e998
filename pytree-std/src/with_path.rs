//! The key-path operations with the namespace fixed to [`Std`]: each leaf
//! comes with its [`KeyPath`] (JAX's `*_with_path` functions), whose
//! [`kind`](KeyPath::kind) says whether it sits under a
//! `#[pytree(kind = "...")]` field.

use pytree_core::{Error, Flatten, KeyPath, LeafMut, LeafRef, TreeDef, Unflatten};

use crate::Std;

/// Splits a tree into `(path, leaf)` pairs in pre-order and its [`TreeDef`]
/// (JAX's `tree_flatten_with_path`).
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
    pytree_core::flatten_with_path::<Std, T>(tree)
}

/// The leaves, lent by reference ([`LeafRef`]), with their paths, in
/// pre-order (JAX's `tree_leaves_with_path`).
///
/// ```
/// let t = (1, Some(2));
/// let shown: Vec<String> = pytree_std::leaves_with_path(&t)
///     .into_iter()
///     .map(|(path, x)| format!("{path}: {x}"))
///     .collect();
/// assert_eq!(shown, ["[0]: 1", "[1]: 2"]);
/// ```
pub fn leaves_with_path<T: Flatten<Std>>(tree: &T) -> Vec<(KeyPath, LeafRef<'_, Std, T::Leaf>)> {
    pytree_core::leaves_with_path::<Std, T>(tree)
}

/// Applies `f(path, leaf)` to every leaf and rebuilds a `U` (JAX's
/// `tree_map_with_path`); the leaf type may change, checked through the
/// TreeDef as in [`map_into`](crate::map_into).
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
    pytree_core::map_with_path::<Std, T, U, _>(tree, f)
}

/// Calls `f(path, leaf)` on every leaf by reference ([`LeafRef`]), in pre-order.
///
/// ```
/// let mut paths = Vec::new();
/// pytree_std::for_each_with_path(&vec![(1, 2)], |path, _| paths.push(path.to_string()));
/// assert_eq!(paths, ["[0][0]", "[0][1]"]);
/// ```
pub fn for_each_with_path<'a, T: Flatten<Std>>(
    tree: &'a T,
    f: impl FnMut(&KeyPath, LeafRef<'a, Std, T::Leaf>),
) {
    pytree_core::for_each_with_path::<Std, T, _>(tree, f)
}

/// Calls `f(path, leaf)` on every leaf by mutable reference ([`LeafMut`]): an in-place
/// update that can depend on where (or of which kind) the leaf is.
///
/// ```
/// let mut t = (1.0f32, vec![1.0f32, 1.0]);
/// pytree_std::for_each_mut_with_path(&mut t, |path, x| *x *= path.len() as f32);
/// assert_eq!(t, (1.0, vec![2.0, 2.0]));
/// ```
pub fn for_each_mut_with_path<'a, T: Flatten<Std>>(
    tree: &'a mut T,
    f: impl FnMut(&KeyPath, LeafMut<'a, Std, T::Leaf>),
) {
    pytree_core::for_each_mut_with_path::<Std, T, _>(tree, f)
}

/// Combines `first` with `N` more trees of the same type leaf by leaf,
/// with the path of each leaf in `first` (JAX's
/// `tree_map_with_path(f, tree, *rest)`): `f(path, leaf, [leaf of each
/// other])`, rebuilt as a `U` of `first`'s structure (the leaf type may
/// change). The structures are checked as in [`map_n`](crate::map_n)
/// (array leaves: their signatures too), and a mismatch lists every
/// difference. The dynamic tree's maps pair by key, whatever their order.
///
/// ```
/// use pytree_std::{tree, KeyPath, Tree};
/// let a: Tree<i32> = tree! { "w" => 1, "b" => [2, 3] };
/// let b: Tree<i32> = tree! { "b" => [20, 30], "w" => 10 }; // other order: paired by key
/// let t: Tree<String> = pytree_std::map_with_path_n(&a, [&b], |path: &KeyPath, x: &i32, [y]: [&i32; 1]| {
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
    pytree_core::map_with_path_n::<Std, T, U, N, _>(first, others, f)
}

/// Calls `f(path, leaf, [leaf of each other])` on `first` and `N` more
/// trees of the same type, in `first`'s leaf order, after the structure
/// check of [`map_n`](crate::map_n) (on a mismatch `f` is never called).
///
/// ```
/// let mut diffs = Vec::new();
/// pytree_std::for_each_with_path_n(&vec![1.0f32, 2.0], [&vec![1.0f32, 2.5]], |path, x, [y]| {
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
    pytree_core::for_each_with_path_n::<Std, T, N, _>(first, others, f)
}

/// Updates `tree` in place from `N` other trees of the same type, leaf by
/// leaf, with paths: `f(path, leaf, [leaf of each other])` (the path-aware
/// [`zip_mut`](crate::zip_mut)). Checked before the first update: on a
/// mismatch `tree` is unchanged and the error lists every difference.
///
/// ```
/// use pytree_std::PyTree;
/// #[derive(PyTree, Debug, PartialEq)]
/// struct Layer { w: f32, #[pytree(kind = "state")] steps: f32 }
/// let mut p = Layer { w: 1.0, steps: 0.0 };
/// let g = Layer { w: 0.5, steps: 1.0 };
/// pytree_std::zip_mut_with_path(&mut p, [&g], |path, x, [dx]| match path.kind() {
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
    pytree_core::zip_mut_with_path::<Std, T, N, _>(tree, others, f)
}
