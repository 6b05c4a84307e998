//! Lookup and update by key path with the namespace fixed to [`Std`]
//! (equinox's `tree_at`, in place): [`get`], [`update`], [`set`],
//! [`set_subtree`]. Every error names the path.

use pytree_core::{Error, Flatten, KeyPath, LeafMut, LeafRef, Unflatten};

use crate::Std;

/// The leaf at `path`, lent by reference ([`LeafRef`]); an error naming
/// the path if there is none (the path does not exist, or leads to a
/// subtree or `None`).
///
/// ```
/// use pytree_std::{KeyPath, PyTree};
/// #[derive(PyTree)]
/// struct Linear { w: f32, b: f32 }
/// let layers = vec![Linear { w: 1.0, b: 2.0 }];
/// assert_eq!(pytree_std::get(&layers, &KeyPath::root().index(0).field("b")), Ok(&2.0));
/// let err = pytree_std::get(&layers, &KeyPath::root().index(0)).unwrap_err();
/// assert_eq!(err.to_string(), "at [0]: node mismatch: expected a leaf, found Linear { w: *, b: * }");
/// ```
pub fn get<'a, T: Flatten<Std>>(
    tree: &'a T,
    path: &KeyPath,
) -> Result<LeafRef<'a, Std, T::Leaf>, Error> {
    pytree_core::get::<Std, T>(tree, path)
}

/// Calls `f` on the leaf at `path` by mutable reference ([`LeafMut`]) and returns its
/// result (equinox's `tree_at(..., replace_fn=f)`). On error the tree is
/// unchanged.
///
/// ```
/// use pytree_std::KeyPath;
/// let mut t = (1i32, vec![2i32, 3]);
/// pytree_std::update(&mut t, &KeyPath::root().index(1).index(0), |x| *x *= 100)?;
/// assert_eq!(t, (1, vec![200, 3]));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn update<T: Flatten<Std>, R>(
    tree: &mut T,
    path: &KeyPath,
    f: impl FnOnce(LeafMut<'_, Std, T::Leaf>) -> R,
) -> Result<R, Error> {
    pytree_core::update::<Std, T, R>(tree, path, f)
}

/// Replaces the leaf at `path` and returns the old one (equinox's
/// `tree_at(..., replace=leaf)`). An array leaf keeps its shape: a new
/// leaf of another shape is an error. On error the tree is unchanged.
///
/// ```
/// use pytree_std::KeyPath;
/// let mut t = vec![1, 2];
/// assert_eq!(pytree_std::set(&mut t, &KeyPath::root().index(0), 10), Ok(1));
/// assert_eq!(t, [10, 2]);
/// let err = pytree_std::set(&mut t, &KeyPath::root().index(2), 0).unwrap_err();
/// assert_eq!(err.to_string(), "at [2]: no such key path: <root> has no child [2]");
/// ```
pub fn set<T: Flatten<Std>>(tree: &mut T, path: &KeyPath, leaf: T::Leaf) -> Result<T::Leaf, Error> {
    pytree_core::set::<Std, T>(tree, path, leaf)
}

/// Replaces the subtree at `path` by `subtree`, whose TreeDef must equal
/// the one there, and returns the old subtree (equinox's `tree_at` on a
/// node). On error the tree is unchanged.
///
/// ```
/// use std::collections::BTreeMap;
/// use pytree_std::KeyPath;
/// let mut t = BTreeMap::from([("a".to_string(), vec![1, 2]), ("b".to_string(), vec![3])]);
/// let old = pytree_std::set_subtree(&mut t, &KeyPath::root().key("a".to_string()), vec![7, 8])?;
/// assert_eq!(old, [1, 2]);
/// assert_eq!(t["a"], [7, 8]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn set_subtree<T, S>(tree: &mut T, path: &KeyPath, subtree: S) -> Result<S, Error>
where
    T: Flatten<Std>,
    S: Unflatten<Std, Leaf = T::Leaf>,
{
    pytree_core::set_subtree::<Std, T, S>(tree, path, subtree)
}
