//! The standard namespace [`Std`] and the [`PyTree`] trait that names
//! "a pytree of the standard namespace" in bounds.

use pytree_core::{Flatten, Unflatten};

/// The standard namespace: the one `#[derive(PyTree)]` implements by default
/// and the one the impls for std types and primitive leaves belong to.
///
/// It is a type parameter of the core traits so that this crate may hold the
/// impls for `Vec`, `Option` and the rest (the orphan rule allows
/// `impl Flatten<Std> for Vec<T>` because `Std` is local here), and so that
/// other namespaces can treat the same types differently.
///
/// ```
/// use pytree_std::{Flatten, Std};
/// fn leaf_count<T: Flatten<Std>>(t: &T) -> usize { pytree_std::leaves(t).len() }
/// assert_eq!(leaf_count(&vec![1, 2, 3]), 3);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Std;

/// A pytree of the standard namespace: `Flatten<Std> + Unflatten<Std>`.
/// Implemented for every such type; write bounds with it:
///
/// ```
/// use pytree_std::PyTree;
/// fn total<P: PyTree<Leaf = f32>>(p: P) -> f32 {
///     pytree_std::flatten(p).0.iter().sum()
/// }
/// assert_eq!(total((1.0f32, vec![2.0f32, 3.0])), 6.0);
/// ```
pub trait PyTree: Flatten<Std> + Unflatten<Std> {}

impl<T: Flatten<Std> + Unflatten<Std>> PyTree for T {}

/// `Leaf<Std>` for types lent by reference (`&T`, `&mut T`): with `<P..>
/// T`, an `assign` that replaces the value (containers that are leaves of
/// a `Tree`, and `Tree` itself); with `@impl <P..> T { items }`, the
/// other items written by the caller (`impls/by_reference.rs`).
macro_rules! lent_by_reference {
    ($(<$($p:ident),*> $t:ty),* $(,)?) => {$(
        $crate::std_namespace::lent_by_reference!(@impl <$($p),*> $t {
            #[inline]
            fn assign(slot: &mut Self, value: Self) -> Result<Self, pytree_core::Error> {
                Ok(std::mem::replace(slot, value))
            }
        });
    )*};
    (@impl <$($p:ident),*> $t:ty { $($items:tt)* }) => {
        impl<$($p: 'static),*> pytree_core::Leaf<$crate::std_namespace::Std> for $t {
            type Ref<'a> = &'a $t;
            type Mut<'a> = &'a mut $t;
            #[inline(always)]
            fn lend(&self) -> &Self {
                self
            }
            #[inline(always)]
            fn lend_mut(&mut self) -> &mut Self {
                self
            }
            $($items)*
        }
    };
}

pub(crate) use lent_by_reference;
