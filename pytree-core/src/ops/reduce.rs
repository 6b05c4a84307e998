//! Reductions and queries over the leaves (JAX's `tree_reduce`,
//! `tree_all`, optree's `tree_sum` / `tree_max` / `tree_min`):
//! `fold`, `reduce`, `all`, `any`, `count`, `num_leaves`, `sum`, `min`,
//! `max`. Each is one walk with no allocation; leaves are taken in pre-order.

use core::iter::Sum;
use core::ops::Add;

use crate::leaf::LeafRef;
use crate::traits::flatten::Flatten;
use crate::traits::visit::{Sink, Visit};

pub use crate::traits::flatten::walks::num_leaves;

/// Folds leaf references into an accumulator.
struct Fold<A, F> {
    acc: Option<A>,
    f: F,
}

impl<R, A, F: FnMut(A, R) -> A> Visit<R> for Fold<A, F> {
    #[inline]
    fn leaf(&mut self, leaf: R) {
        self.acc = self.acc.take().map(|acc| (self.f)(acc, leaf));
    }
    #[inline]
    fn leaf_run<I: ExactSizeIterator<Item = R>>(&mut self, leaves: I) {
        self.acc = self.acc.take().map(|acc| leaves.fold(acc, &mut self.f));
    }
}

/// Combines leaves by value, the first one being the start.
struct Reduce<L, F> {
    acc: Option<L>,
    f: F,
}

impl<L, F: FnMut(L, L) -> L> Sink<L> for Reduce<L, F> {
    #[inline]
    fn leaf(&mut self, leaf: L) {
        self.acc = Some(match self.acc.take() {
            Some(acc) => (self.f)(acc, leaf),
            None => leaf,
        });
    }
    #[inline]
    fn leaf_vec(&mut self, leaves: alloc::vec::Vec<L>) {
        for leaf in leaves {
            Sink::leaf(self, leaf);
        }
    }
}

/// Keeps the leaf that `replaces(best, candidate)` prefers, NaN first.
struct Extreme<R, F> {
    best: Option<R>,
    replaces: F,
}

/// The leaf of `tree` that `replaces(best, candidate)` prefers, NaN first:
/// `min` and `max`.
fn extreme<'a, Ns, T, F>(tree: &'a T, replaces: F) -> Option<LeafRef<'a, Ns, T::Leaf>>
where
    T: Flatten<Ns>,
    LeafRef<'a, Ns, T::Leaf>: PartialOrd,
    F: FnMut(&LeafRef<'a, Ns, T::Leaf>, &LeafRef<'a, Ns, T::Leaf>) -> bool,
{
    let mut v = Extreme {
        best: None,
        replaces,
    };
    tree.visit(&mut v);
    v.best
}

/// True for a leaf that is not comparable with itself: a NaN.
#[inline]
#[allow(clippy::eq_op)]
fn unordered<L: PartialOrd>(x: &L) -> bool {
    x.partial_cmp(x).is_none()
}

impl<R: PartialOrd, F: FnMut(&R, &R) -> bool> Visit<R> for Extreme<R, F> {
    #[inline]
    fn leaf(&mut self, leaf: R) {
        self.best = match self.best.take() {
            None => Some(leaf),
            Some(best) if unordered(&best) => Some(best),
            Some(_) if unordered(&leaf) => Some(leaf),
            Some(best) if (self.replaces)(&best, &leaf) => Some(leaf),
            keep => keep,
        };
    }
    #[inline]
    fn leaf_run<I: ExactSizeIterator<Item = R>>(&mut self, leaves: I) {
        for leaf in leaves {
            Visit::leaf(self, leaf);
        }
    }
}

/// `pytree_std::reductions::fold` for any namespace `Ns` (documented there;
/// [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// let norm2 = pytree_core::ops::reduce::fold::<pytree_std::Std, _, _, _>(&(3.0f32, vec![4.0f32]), 0.0, |acc, x| acc + x * x);
/// assert_eq!(norm2, 25.0);
/// ```
pub fn fold<'a, Ns, T, A, F>(tree: &'a T, init: A, f: F) -> A
where
    T: Flatten<Ns>,
    F: FnMut(A, LeafRef<'a, Ns, T::Leaf>) -> A,
{
    let mut v = Fold { acc: Some(init), f };
    tree.visit(&mut v);
    match v.acc {
        Some(acc) => acc,
        // `acc` is taken and put back within each call; it is always set.
        None => unreachable_accumulator(),
    }
}

#[cold]
fn unreachable_accumulator() -> ! {
    unreachable!("the fold accumulator is restored after every leaf")
}

/// Folds the leaves with `f`, first leaf as the start (`None` with no leaves), for any namespace `Ns`
/// ([`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// assert_eq!(pytree_core::ops::reduce::reduce::<pytree_std::Std, _, _>((1, vec![2, 3]), |a, b| a * 10 + b), Some(123));
/// ```
pub fn reduce<Ns, T, F>(tree: T, f: F) -> Option<T::Leaf>
where
    T: Flatten<Ns>,
    F: FnMut(T::Leaf, T::Leaf) -> T::Leaf,
{
    let mut sink = Reduce { acc: None, f };
    tree.flatten_into(&mut sink);
    sink.acc
}

/// Whether `pred` holds for every leaf (true with no leaves), for any namespace `Ns`
/// ([`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// assert!(pytree_core::ops::reduce::all::<pytree_std::Std, _, _>(&vec![1.0f64, 2.0], |x| x.is_finite()));
/// assert!(pytree_core::ops::reduce::all::<pytree_std::Std, _, _>(&Vec::<f64>::new(), |_| false));
/// ```
pub fn all<'a, Ns, T, F>(tree: &'a T, mut pred: F) -> bool
where
    T: Flatten<Ns>,
    F: FnMut(LeafRef<'a, Ns, T::Leaf>) -> bool,
{
    fold::<Ns, T, _, _>(tree, true, |acc, x| acc && pred(x))
}

/// Whether `pred` holds for some leaf (false with no leaves), for any namespace `Ns`
/// ([`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// assert!(pytree_core::ops::reduce::any::<pytree_std::Std, _, _>(&(1.0f64, f64::NAN), |x| x.is_nan()));
/// ```
pub fn any<'a, Ns, T, F>(tree: &'a T, mut pred: F) -> bool
where
    T: Flatten<Ns>,
    F: FnMut(LeafRef<'a, Ns, T::Leaf>) -> bool,
{
    fold::<Ns, T, _, _>(tree, false, |acc, x| acc || pred(x))
}

/// How many leaves satisfy `pred`, for any namespace `Ns`
/// ([`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// assert_eq!(pytree_core::ops::reduce::count::<pytree_std::Std, _, _>(&(0i32, [1i32, 0, 2]), |x| *x == 0), 2);
/// ```
pub fn count<'a, Ns, T, F>(tree: &'a T, mut pred: F) -> usize
where
    T: Flatten<Ns>,
    F: FnMut(LeafRef<'a, Ns, T::Leaf>) -> bool,
{
    fold::<Ns, T, _, _>(tree, 0, |n, x| n + usize::from(pred(x)))
}

/// The sum of the leaves, for any namespace `Ns`
/// ([`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// assert_eq!(pytree_core::ops::reduce::sum::<pytree_std::Std, _>(&(1, vec![2, 3])), 6);
/// ```
pub fn sum<'a, Ns, T>(tree: &'a T) -> T::Leaf
where
    T: Flatten<Ns>,
    T::Leaf: Sum<LeafRef<'a, Ns, T::Leaf>> + Add<LeafRef<'a, Ns, T::Leaf>, Output = T::Leaf>,
{
    let zero: T::Leaf = core::iter::empty::<LeafRef<'a, Ns, T::Leaf>>().sum();
    fold::<Ns, T, _, _>(tree, zero, |acc, x| acc + x)
}

/// The smallest leaf (the first NaN wins), for any namespace `Ns`
/// ([`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// assert_eq!(pytree_core::ops::reduce::min::<pytree_std::Std, _>(&(2.0, [1.0, 3.0])), Some(&1.0));
/// assert!(pytree_core::ops::reduce::min::<pytree_std::Std, _>(&(2.0f64, [f64::NAN, 1.0])).is_some_and(|x| x.is_nan()));
/// ```
pub fn min<'a, Ns, T>(tree: &'a T) -> Option<LeafRef<'a, Ns, T::Leaf>>
where
    T: Flatten<Ns>,
    LeafRef<'a, Ns, T::Leaf>: PartialOrd,
{
    extreme::<Ns, T, _>(tree, |best, x| x < best)
}

/// The largest leaf (the first NaN wins), for any namespace `Ns`
/// ([`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// assert_eq!(pytree_core::ops::reduce::max::<pytree_std::Std, _>(&(2, [1, 3])), Some(&3));
/// ```
pub fn max<'a, Ns, T>(tree: &'a T) -> Option<LeafRef<'a, Ns, T::Leaf>>
where
    T: Flatten<Ns>,
    LeafRef<'a, Ns, T::Leaf>: PartialOrd,
{
    extreme::<Ns, T, _>(tree, |best, x| x > best)
}
