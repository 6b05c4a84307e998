//! The basic operations, generic over the namespace `Ns`: flatten,
//! unflatten, structure, leaves, leaves_mut (the walks of `traits/flatten/walks.rs`,
//! re-exported), map, map_into, for_each, for_each_mut, drop_deep.
//! `pytree_std` re-exports them with `Ns` fixed to the std namespace marker.

use crate::error::Error;
use crate::leaf::{LeafMut, LeafRef};
use crate::traits::flatten::{Flatten, Unflatten};
use crate::traits::visit::visit_either;

pub use crate::traits::flatten::walks::{
    flatten, leaves, leaves_mut, structure, unflatten, unflatten_like,
};

/// Calls a closure on each lent leaf (by reference or by mutable
/// reference).
struct ForEach<F>(F);

visit_either!(impl<R, F: FnMut(R)> for ForEach<F> {
    #[inline]
    fn leaf(&mut self, leaf: R) {
        (self.0)(leaf);
    }
    #[inline]
    fn leaf_run<I: ExactSizeIterator<Item = R>>(&mut self, leaves: I) {
        leaves.for_each(&mut self.0);
    }
});

/// `pytree_std::walk::map` for any namespace `Ns` (documented there;
/// [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// assert_eq!(pytree_core::ops::basic::map::<pytree_std::Std, _, _>((1, vec![2]), |x| x + 1), (2, vec![3]));
/// ```
pub fn map<Ns, T: Unflatten<Ns>, F: FnMut(T::Leaf) -> T::Leaf>(tree: T, mut f: F) -> T {
    tree.map_leaves(&mut f)
}

/// `pytree_std::walk::map_into` for any namespace `Ns` (documented there;
/// [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// let t: Vec<f64> = pytree_core::ops::basic::map_into::<pytree_std::Std, _, _, _>(vec![1.0f32], f64::from)?;
/// assert_eq!(t, [1.0]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn map_into<Ns, T, U, F>(tree: T, f: F) -> Result<U, Error>
where
    T: Flatten<Ns>,
    U: Unflatten<Ns>,
    F: FnMut(T::Leaf) -> U::Leaf,
{
    let (leaves, def) = flatten::<Ns, T>(tree);
    unflatten::<Ns, U, _>(&def, leaves.into_iter().map(f))
}

/// `pytree_std::walk::drop_deep` for any namespace `Ns` (documented there;
/// [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// pytree_core::ops::basic::drop_deep::<pytree_std::Std, _>(vec![Some(Box::new(1.0))]);
/// ```
pub fn drop_deep<Ns, T: Flatten<Ns>>(tree: T) {
    crate::traits::flatten::unwind::drop_deep::<Ns, T>(tree)
}

/// Calls `f` on each leaf by reference, in leaf order, for any namespace `Ns`
/// ([`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// let mut n = 0;
/// pytree_core::ops::basic::for_each::<pytree_std::Std, _, _>(&vec![(1, 2)], |_| n += 1);
/// assert_eq!(n, 2);
/// ```
pub fn for_each<'a, Ns, T, F>(tree: &'a T, f: F)
where
    T: Flatten<Ns>,
    F: FnMut(LeafRef<'a, Ns, T::Leaf>),
{
    tree.visit(&mut ForEach(f));
}

/// `pytree_std::walk::for_each_mut` for any namespace `Ns` (documented there;
/// [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// let mut t = (1.0f32, vec![2.0f32]);
/// pytree_core::ops::basic::for_each_mut::<pytree_std::Std, _, _>(&mut t, |x: &mut f32| *x *= 10.0);
/// assert_eq!(t, (10.0, vec![20.0]));
/// ```
pub fn for_each_mut<'a, Ns, T, F>(tree: &'a mut T, f: F)
where
    T: Flatten<Ns>,
    F: FnMut(LeafMut<'a, Ns, T::Leaf>),
{
    tree.visit_mut(&mut ForEach(f));
}
