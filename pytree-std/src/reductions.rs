//! Reductions and queries over the leaves (JAX's `tree_reduce` /
//! `tree_all`, optree's `tree_sum` / `tree_max`): [`fold`], [`reduce`],
//! [`all`], [`any`], [`count`], [`num_leaves`], [`sum`], [`min`], [`max`].
//!
//! Each function is fixed to [`Std`]; its body is one call to the engine in
//! `pytree_core::ops::reduce`.

use crate::{Flatten, LeafRef, Std};

/// Folds the leaves, lent by reference ([`LeafRef`]), into `init`, in pre-order (JAX's
/// `tree_reduce(f, tree, initializer)`).
///
/// Engine (any namespace): [`pytree_core::ops::reduce::fold`](crate::generic::reduce::fold).
///
/// ```
/// let norm2 = pytree_std::reductions::fold(&(3.0f32, vec![4.0f32]), 0.0, |acc, x| acc + x * x);
/// assert_eq!(norm2, 25.0);
/// ```
pub fn fold<'a, T: Flatten<Std>, A>(
    tree: &'a T,
    init: A,
    f: impl FnMut(A, LeafRef<'a, Std, T::Leaf>) -> A,
) -> A {
    pytree_core::ops::reduce::fold::<Std, T, A, _>(tree, init, f)
}

/// Combines the leaves by value, left to right, the first being the start
/// (JAX's `tree_reduce(f, tree)`); `None` without leaves.
///
/// Engine (any namespace): [`pytree_core::ops::reduce::reduce`](crate::generic::reduce::reduce).
///
/// ```
/// assert_eq!(pytree_std::reductions::reduce((1, vec![2, 3]), |a, b| a * 10 + b), Some(123));
/// ```
pub fn reduce<T: Flatten<Std>>(
    tree: T,
    f: impl FnMut(T::Leaf, T::Leaf) -> T::Leaf,
) -> ::core::option::Option<T::Leaf> {
    pytree_core::ops::reduce::reduce::<Std, T, _>(tree, f)
}

/// True if `pred` holds for every leaf (JAX's `tree_all` with a predicate).
///
/// Engine (any namespace): [`pytree_core::ops::reduce::all`](crate::generic::reduce::all).
///
/// ```
/// assert!(pytree_std::reductions::all(&vec![1.0f64, 2.0], |x| x.is_finite()));
/// assert!(pytree_std::reductions::all(&Vec::<f64>::new(), |_| false));
/// ```
pub fn all<'a, T: Flatten<Std>>(
    tree: &'a T,
    pred: impl FnMut(LeafRef<'a, Std, T::Leaf>) -> bool,
) -> bool {
    pytree_core::ops::reduce::all::<Std, T, _>(tree, pred)
}

/// True if `pred` holds for some leaf.
///
/// Engine (any namespace): [`pytree_core::ops::reduce::any`](crate::generic::reduce::any).
///
/// ```
/// assert!(pytree_std::reductions::any(&(1.0f64, f64::NAN), |x| x.is_nan()));
/// ```
pub fn any<'a, T: Flatten<Std>>(
    tree: &'a T,
    pred: impl FnMut(LeafRef<'a, Std, T::Leaf>) -> bool,
) -> bool {
    pytree_core::ops::reduce::any::<Std, T, _>(tree, pred)
}

/// The number of leaves for which `pred` holds.
///
/// Engine (any namespace): [`pytree_core::ops::reduce::count`](crate::generic::reduce::count).
///
/// ```
/// assert_eq!(pytree_std::reductions::count(&(0i32, [1i32, 0, 2]), |x| *x == 0), 2);
/// ```
pub fn count<'a, T: Flatten<Std>>(
    tree: &'a T,
    pred: impl FnMut(LeafRef<'a, Std, T::Leaf>) -> bool,
) -> usize {
    pytree_core::ops::reduce::count::<Std, T, _>(tree, pred)
}

/// The number of leaves.
///
/// Engine (any namespace): [`pytree_core::ops::reduce::num_leaves`](crate::generic::reduce::num_leaves).
///
/// ```
/// assert_eq!(pytree_std::reductions::num_leaves(&(1, vec![2, 3], None::<i32>)), 3);
/// ```
pub fn num_leaves<T: Flatten<Std>>(tree: &T) -> usize {
    pytree_core::ops::reduce::num_leaves::<Std, T>(tree)
}

/// The sum of the leaves, left to right (zero without leaves).
///
/// Engine (any namespace): [`pytree_core::ops::reduce::sum`](crate::generic::reduce::sum).
///
/// ```
/// assert_eq!(pytree_std::reductions::sum(&(1, vec![2, 3])), 6);
/// ```
pub fn sum<'a, T: Flatten<Std>>(tree: &'a T) -> T::Leaf
where
    T::Leaf: ::core::iter::Sum<LeafRef<'a, Std, T::Leaf>>
        + ::core::ops::Add<LeafRef<'a, Std, T::Leaf>, Output = T::Leaf>,
{
    pytree_core::ops::reduce::sum::<Std, T>(tree)
}

/// The smallest leaf; `None` without leaves. A NaN leaf (not comparable
/// with itself) is the result, the first one found, as in `jnp.min`.
///
/// Engine (any namespace): [`pytree_core::ops::reduce::min`](crate::generic::reduce::min).
///
/// ```
/// assert_eq!(pytree_std::reductions::min(&(2.0, [1.0, 3.0])), Some(&1.0));
/// assert!(pytree_std::reductions::min(&(2.0f64, [f64::NAN, 1.0])).is_some_and(|x| x.is_nan()));
/// ```
pub fn min<T: Flatten<Std>>(tree: &T) -> ::core::option::Option<LeafRef<'_, Std, T::Leaf>>
where
    for<'a> LeafRef<'a, Std, T::Leaf>: ::core::cmp::PartialOrd,
{
    pytree_core::ops::reduce::min::<Std, T>(tree)
}

/// The largest leaf; `None` without leaves. Same NaN rule as [`min`].
///
/// Engine (any namespace): [`pytree_core::ops::reduce::max`](crate::generic::reduce::max).
///
/// ```
/// assert_eq!(pytree_std::reductions::max(&(2, [1, 3])), Some(&3));
/// ```
pub fn max<T: Flatten<Std>>(tree: &T) -> ::core::option::Option<LeafRef<'_, Std, T::Leaf>>
where
    for<'a> LeafRef<'a, Std, T::Leaf>: ::core::cmp::PartialOrd,
{
    pytree_core::ops::reduce::max::<Std, T>(tree)
}
