//! Leaves by their position in leaf order, with the namespace fixed to
//! [`Std`]: the leaf at flat index `i` and its path, without flattening.

use pytree_core::{Error, Flatten, KeyPath, LeafMut, LeafRef};

use crate::Std;

/// The leaf at position `index` in leaf order (pre-order), lent by
/// reference: `leaves(t)[i]` without building the `Vec`. An index past
/// the last leaf is an error that says how many leaves there are.
///
/// ```
/// use pytree_std::{tree, Tree};
/// let t: Tree<i32> = tree! { "a" => 1, "x" => { "c" => 2, "d" => 3 } };
/// assert_eq!(pytree_std::leaf_at(&t, 2)?, &3);
/// assert!(pytree_std::leaf_at(&t, 3).is_err());
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn leaf_at<T: Flatten<Std>>(
    tree: &T,
    index: usize,
) -> Result<LeafRef<'_, Std, T::Leaf>, Error> {
    pytree_core::leaf_at::<Std, T>(tree, index)
}

/// The leaf at position `index` in leaf order, lent by mutable reference.
///
/// ```
/// let mut t = (1.0f32, vec![2.0f32, 3.0]);
/// *pytree_std::leaf_at_mut(&mut t, 2)? = 30.0;
/// assert_eq!(t, (1.0, vec![2.0, 30.0]));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn leaf_at_mut<T: Flatten<Std>>(
    tree: &mut T,
    index: usize,
) -> Result<LeafMut<'_, Std, T::Leaf>, Error> {
    pytree_core::leaf_at_mut::<Std, T>(tree, index)
}

/// The key path (with its kind) of the leaf at position `index` in leaf
/// order, without flattening. From a TreeDef:
/// [`TreeDef::leaf_path`](crate::TreeDef::leaf_path) (optree's
/// `treespec.paths()[i]`).
///
/// ```
/// let t = (1, vec![2, 3]);
/// assert_eq!(pytree_std::leaf_path_at(&t, 2)?.to_string(), "[1][1]");
/// assert_eq!(pytree_std::structure(&t).leaf_path(2), Some(pytree_std::leaf_path_at(&t, 2)?));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn leaf_path_at<T: Flatten<Std>>(tree: &T, index: usize) -> Result<KeyPath, Error> {
    pytree_core::leaf_path_at::<Std, T>(tree, index)
}
