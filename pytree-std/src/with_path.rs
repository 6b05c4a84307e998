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
