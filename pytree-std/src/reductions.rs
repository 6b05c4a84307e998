//! Reductions over the leaves: one door, [`fold`] (JAX's
//! `tree.reduce(f, tree, initializer)`, by reference and in pre-order);
//! every other reduction is a line over it or over the leaves:
//!
//! | JAX / optree | pytree |
//! | --- | --- |
//! | `tree.reduce(f, t)` (no initializer) | `flatten(t).0.into_iter().reduce(f)` |
//! | `tree.all(t)` / `tree_all` with a predicate | `fold(&t, true, \|ok, x\| ok && p(x))` |
//! | `tree_any` | `fold(&t, false, \|hit, x\| hit \|\| p(x))` |
//! | a count | `fold(&t, 0, \|n, x\| n + usize::from(p(x)))` |
//! | `tree_sum` | `fold(&t, 0.0, \|s, x\| s + x)`, `leaves(&t).into_iter().sum::<f64>()` |
//! | `tree_max` / `tree_min` | `leaves(&t).into_iter().reduce(\|a, b\| if b > a { b } else { a })` |
//! | number of leaves | `fold(&t, 0, \|n, _\| n + 1)` (allocates nothing), `leaves(&t).len()` |
//!
//! ```
//! use pytree_std::{flatten, leaves, reductions::fold};
//! let t = (1.0f64, vec![2.0, 3.0]);
//! assert_eq!(flatten(t.clone()).0.into_iter().reduce(|a, b| a * 10.0 + b), Some(123.0));
//! assert!(fold(&t, true, |ok, x| ok && x.is_finite()));
//! assert!(!fold(&t, false, |hit, x| hit || x.is_nan()));
//! assert_eq!(fold(&t, 0, |n, x| n + usize::from(*x > 1.0)), 2);
//! assert_eq!(leaves(&t).into_iter().sum::<f64>(), 6.0);
//! assert_eq!(leaves(&t).into_iter().reduce(|a, b| if b > a { b } else { a }), Some(&3.0));
//! assert_eq!(leaves(&t).len(), 3);
//! ```
//!
//! The engine keeps these as functions for any namespace, in
//! `pytree_core::ops::reduce` (reachable as [`generic`](crate::generic)):
//! `any`, `all`, `count`, `sum`, `num_leaves`, `reduce`, and `min` / `max`,
//! which return the first NaN found as `jnp.min` does
//! (`pytree_std::generic::reduce::max::<pytree_std::Std, _>(&t)`).
//!
//! [`fold`] is fixed to [`Std`]; its body is one call to the engine.

use crate::std_namespace::Std;
use pytree_core::{Flatten, LeafRef};

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
