//! Filter, partition and combine with the namespace fixed to [`Std`]
//! (equinox's `filter` / `partition` / `combine`, PAX's parameters versus
//! state): a `T` is split into trees of the same structure with `Option`
//! leaves (`Mlp<f32>` to `Mlp<Option<f32>>`) and put back together.

use pytree_core::{Error, Flatten, KeyPath, Unflatten};

use crate::Std;

/// Splits `tree` into the leaves for which `pred(path, leaf)` holds and the
/// others, each side with `None` holes where the other has a leaf
/// (equinox's `partition`). PAX's split is
/// `partition(model, |path, _| path.kind() == "param")`.
///
/// ```
/// use pytree_std::PyTree;
/// #[derive(PyTree, Debug, PartialEq)]
/// struct Counter<T> {
///     #[pytree(kind = "state")]
///     count: T,
///     bias: T,
/// }
/// let (params, state): (Counter<Option<f64>>, Counter<Option<f64>>) =
///     pytree_std::partition(Counter { count: 1.0, bias: 0.5 }, |path, _| path.kind() == "param")?;
/// assert_eq!(params, Counter { count: None, bias: Some(0.5) });
/// assert_eq!(state, Counter { count: Some(1.0), bias: None });
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn partition<T: Flatten<Std>, U: Unflatten<Std, Leaf = T::Leaf>>(
    tree: T,
    pred: impl FnMut(&KeyPath, &T::Leaf) -> bool,
) -> Result<(U, U), Error> {
    pytree_core::partition::<Std, T, U, _>(tree, pred)
}

/// Keeps the leaves for which `pred(path, leaf)` holds, with `None` holes
/// for the others (equinox's `filter`).
///
/// ```
/// let big: Vec<Option<i32>> = pytree_std::filter(vec![1, 20, 3], |_, x| *x > 10)?;
/// assert_eq!(big, [None, Some(20), None]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn filter<T: Flatten<Std>, U: Unflatten<Std, Leaf = T::Leaf>>(
    tree: T,
    pred: impl FnMut(&KeyPath, &T::Leaf) -> bool,
) -> Result<U, Error> {
    pytree_core::filter::<Std, T, U, _>(tree, pred)
}

/// Puts two trees of `Option` leaves back together (equinox's `combine`):
/// at each leaf of `T` exactly one of them must hold a leaf, else the error
/// names the path.
///
/// ```
/// let t: (i32, i32) = pytree_std::combine((Some(1), None), (None, Some(2)))?;
/// assert_eq!(t, (1, 2));
/// let err = pytree_std::combine::<_, (i32, i32)>((Some(1), None::<i32>), (None, None)).unwrap_err();
/// assert_eq!(err.to_string(), "at [1]: none of the 2 trees holds a leaf here; combine needs exactly one");
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn combine<U: Flatten<Std>, T: Unflatten<Std, Leaf = U::Leaf>>(a: U, b: U) -> Result<T, Error> {
    pytree_core::combine::<Std, U, T, 2>([a, b])
}

/// Puts `N` trees of `Option` leaves back together: [`combine`] for any
/// number of parts.
///
/// ```
/// let t: [u8; 3] = pytree_std::combine_n([[Some(1u8), None, None], [None, Some(2), None], [None, None, Some(3)]])?;
/// assert_eq!(t, [1, 2, 3]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn combine_n<U: Flatten<Std>, T: Unflatten<Std, Leaf = U::Leaf>, const N: usize>(
    parts: [U; N],
) -> Result<T, Error> {
    pytree_core::combine::<Std, U, T, N>(parts)
}
