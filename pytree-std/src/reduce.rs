//! Reductions and queries with the namespace fixed to [`Std`]: [`fold`],
//! [`reduce`], [`all`], [`any`], [`count`], [`num_leaves`], [`sum`],
//! [`min`], [`max`] (JAX's `tree_reduce` / `tree_all`, optree's
//! `tree_sum` / `tree_min` / `tree_max`).

use std::iter::Sum;
use std::ops::Add;

use pytree_core::{Flatten, LeafRef};

use crate::Std;

/// Folds the leaves, lent by reference ([`LeafRef`]), into `init`, in pre-order (JAX's
/// `tree_reduce(f, tree, initializer)`).
///
/// ```
/// let norm2 = pytree_std::fold(&(3.0f32, vec![4.0f32]), 0.0, |acc, x| acc + x * x);
/// assert_eq!(norm2, 25.0);
/// ```
pub fn fold<'a, T: Flatten<Std>, A>(
    tree: &'a T,
    init: A,
    f: impl FnMut(A, LeafRef<'a, Std, T::Leaf>) -> A,
) -> A {
    pytree_core::fold::<Std, T, A, _>(tree, init, f)
}

/// Combines the leaves by value, left to right, the first being the start
/// (JAX's `tree_reduce(f, tree)`); `None` without leaves.
///
/// ```
/// assert_eq!(pytree_std::reduce((1, vec![2, 3]), |a, b| a * 10 + b), Some(123));
/// ```
pub fn reduce<T: Flatten<Std>>(
    tree: T,
    f: impl FnMut(T::Leaf, T::Leaf) -> T::Leaf,
) -> Option<T::Leaf> {
    pytree_core::reduce::<Std, T, _>(tree, f)
}

/// True if `pred` holds for every leaf (JAX's `tree_all` with a predicate).
///
/// ```
/// assert!(pytree_std::all(&vec![1.0f64, 2.0], |x| x.is_finite()));
/// assert!(pytree_std::all(&Vec::<f64>::new(), |_| false));
/// ```
pub fn all<'a, T: Flatten<Std>>(
    tree: &'a T,
    pred: impl FnMut(LeafRef<'a, Std, T::Leaf>) -> bool,
) -> bool {
    pytree_core::all::<Std, T, _>(tree, pred)
}

/// True if `pred` holds for some leaf.
///
/// ```
/// assert!(pytree_std::any(&(1.0f64, f64::NAN), |x| x.is_nan()));
/// ```
pub fn any<'a, T: Flatten<Std>>(
    tree: &'a T,
    pred: impl FnMut(LeafRef<'a, Std, T::Leaf>) -> bool,
) -> bool {
    pytree_core::any::<Std, T, _>(tree, pred)
}

/// The number of leaves for which `pred` holds.
///
/// ```
/// assert_eq!(pytree_std::count(&(0i32, [1i32, 0, 2]), |x| *x == 0), 2);
/// ```
pub fn count<'a, T: Flatten<Std>>(
    tree: &'a T,
    pred: impl FnMut(LeafRef<'a, Std, T::Leaf>) -> bool,
) -> usize {
    pytree_core::count::<Std, T, _>(tree, pred)
}

/// The number of leaves.
///
/// ```
/// assert_eq!(pytree_std::num_leaves(&(1, vec![2, 3], None::<i32>)), 3);
/// ```
pub fn num_leaves<T: Flatten<Std>>(tree: &T) -> usize {
    pytree_core::num_leaves::<Std, T>(tree)
}

/// The sum of the leaves, left to right (zero without leaves).
///
/// ```
/// assert_eq!(pytree_std::sum(&(1, vec![2, 3])), 6);
/// ```
pub fn sum<'a, T: Flatten<Std>>(tree: &'a T) -> T::Leaf
where
    T::Leaf: Sum<LeafRef<'a, Std, T::Leaf>> + Add<LeafRef<'a, Std, T::Leaf>, Output = T::Leaf>,
{
    pytree_core::sum::<Std, T>(tree)
}

/// The smallest leaf; `None` without leaves. A NaN leaf (not comparable
/// with itself) is the result, the first one found, as in `jnp.min`.
///
/// ```
/// assert_eq!(pytree_std::min(&(2.0, [1.0, 3.0])), Some(&1.0));
/// assert!(pytree_std::min(&(2.0f64, [f64::NAN, 1.0])).is_some_and(|x| x.is_nan()));
/// ```
pub fn min<T: Flatten<Std>>(tree: &T) -> Option<LeafRef<'_, Std, T::Leaf>>
where
    for<'a> LeafRef<'a, Std, T::Leaf>: PartialOrd,
{
    pytree_core::min::<Std, T>(tree)
}

/// The largest leaf; `None` without leaves. Same NaN rule as [`min`].
///
/// ```
/// assert_eq!(pytree_std::max(&(2, [1, 3])), Some(&3));
/// ```
pub fn max<T: Flatten<Std>>(tree: &T) -> Option<LeafRef<'_, Std, T::Leaf>>
where
    for<'a> LeafRef<'a, Std, T::Leaf>: PartialOrd,
{
    pytree_core::max::<Std, T>(tree)
}
