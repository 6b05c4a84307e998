//! A tree split into parts and put back together (equinox's `filter` /
//! `partition` / `combine`, PAX's parameters versus state): a `T` is split
//! into trees of the same structure with `Option` leaves, `None` where a
//! leaf was left out ([`partition`]; equinox's `filter` is its first half,
//! `partition(t, pred).map(|(kept, _)| kept)`), put back together by
//! [`combine`]; with fill values instead of `None` holes,
//! [`partition_fill`] (its first half is equinox's `filter(tree, spec,
//! replace=..)`); and [`replace_nones`].
//!
//! Each function is fixed to [`Std`]; its body is one call to the engine in
//! `pytree_core::ops::partition` or `pytree_core::ops::fill`.

use crate::std_namespace::Std;
use pytree_core::{Error, Flatten, KeyPath, Unflatten};

/// Splits `tree` into the leaves for which `pred(path, leaf)` holds and the
/// others, each side with `None` holes where the other has a leaf
/// (equinox's `partition`). PAX's split is
/// `partition(model, |path, _| path.kind() == "param")`.
///
/// Engine (any namespace): [`pytree_core::ops::partition::partition`](crate::generic::partition::partition).
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
///     pytree_std::split::partition(Counter { count: 1.0, bias: 0.5 }, |path, _| path.kind() == "param")?;
/// assert_eq!(params, Counter { count: None, bias: Some(0.5) });
/// assert_eq!(state, Counter { count: Some(1.0), bias: None });
///
/// // One half alone (equinox's `filter`):
/// let big: Vec<Option<i32>> = pytree_std::split::partition(vec![1, 20, 3], |_, x| *x > 10).map(|(kept, _)| kept)?;
/// assert_eq!(big, [None, Some(20), None]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn partition<T: Flatten<Std>, U: Unflatten<Std, Leaf = T::Leaf>>(
    tree: T,
    pred: impl FnMut(&KeyPath, &T::Leaf) -> bool,
) -> Result<(U, U), Error> {
    pytree_core::ops::partition::partition::<Std, T, U, _>(tree, pred)
}

/// Puts `N` trees of `Option` leaves back together (equinox's
/// `combine(*trees)`): at each leaf of `T` exactly one of them must hold a
/// leaf, else the error names the path.
///
/// Engine (any namespace): [`pytree_core::ops::partition::combine`](crate::generic::partition::combine).
///
/// ```
/// let t: (i32, i32) = pytree_std::split::combine([(Some(1), None), (None, Some(2))])?;
/// assert_eq!(t, (1, 2));
/// let err = pytree_std::split::combine::<_, (i32, i32), 2>([(Some(1), None::<i32>), (None, None)]).unwrap_err();
/// assert_eq!(err.to_string(), "at [1]: none of the 2 trees holds a leaf here; combine needs exactly one");
/// let t: [u8; 3] = pytree_std::split::combine([[Some(1u8), None, None], [None, Some(2), None], [None, None, Some(3)]])?;
/// assert_eq!(t, [1, 2, 3]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn combine<U: Flatten<Std>, T: Unflatten<Std, Leaf = U::Leaf>, const N: usize>(
    parts: [U; N],
) -> Result<T, Error> {
    pytree_core::ops::partition::combine::<Std, U, T, N>(parts)
}

/// Splits `tree` in two trees of its own type (equinox's
/// `partition(tree, filter_spec, replace=..)`): the first keeps the leaves
/// for which `pred(path, leaf)` holds, the second the others, and each has
/// `fill(path, leaf)` where the other has the leaf. The first alone is
/// equinox's `filter(tree, filter_spec, replace=..)`.
///
/// Engine (any namespace): [`pytree_core::ops::fill::partition_fill`](crate::generic::fill::partition_fill).
///
/// ```
/// use pytree_std::PyTree;
/// #[derive(PyTree, Debug, PartialEq)]
/// struct Counter { #[pytree(kind = "state")] count: f64, bias: f64 }
/// let (params, state) = pytree_std::split::partition_fill(
///     Counter { count: 3.0, bias: 0.5 },
///     |path, _| path.kind() == "param",
///     |_, _| 0.0,
/// )?;
/// assert_eq!(params, Counter { count: 0.0, bias: 0.5 });
/// assert_eq!(state, Counter { count: 3.0, bias: 0.0 });
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn partition_fill<T: Unflatten<Std>>(
    tree: T,
    pred: impl FnMut(&KeyPath, &T::Leaf) -> bool,
    fill: impl FnMut(&KeyPath, &T::Leaf) -> T::Leaf,
) -> Result<(T, T), Error> {
    pytree_core::ops::fill::partition_fill::<Std, T, _, _>(tree, pred, fill)
}

/// Rebuilds `tree`, whose leaves may sit in `Option`s, as a `T` with a
/// plain leaf where `T` wants one (optree's `tree_replace_nones`):
/// `Some(leaf)` gives the leaf, a `None` hole gives `fill()`. A dynamic
/// tree turns every `None` into a leaf.
///
/// Engine (any namespace): [`pytree_core::ops::fill::replace_nones`](crate::generic::fill::replace_nones).
///
/// ```
/// use pytree_std::{tree, PyTree, Tree};
/// #[derive(PyTree, Debug, PartialEq)]
/// struct Linear<T> { w: T, b: T }
/// let half = Linear { w: Some(1.0f32), b: None };
/// assert_eq!(pytree_std::split::replace_nones::<_, Linear<f32>>(half, || 0.0)?, Linear { w: 1.0, b: 0.0 });
/// let t: Tree<f32> = tree! { "w" => 1.0, "b" => None };
/// assert_eq!(pytree_std::split::replace_nones::<_, Tree<f32>>(t, || 0.0)?, tree! { "w" => 1.0, "b" => 0.0 });
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn replace_nones<U: Flatten<Std>, T: Unflatten<Std, Leaf = U::Leaf>>(
    tree: U,
    fill: impl FnMut() -> U::Leaf,
) -> Result<T, Error> {
    pytree_core::ops::fill::replace_nones::<Std, U, T, _>(tree, fill)
}
