//! Shared pointers `Rc<T>` and `Arc<T>`: transparent, like `Box` (no node of
//! their own). Consuming or mutating a shared value clones it first if other
//! handles exist (`Rc::unwrap_or_clone`, `Rc::make_mut`), hence `T: Clone`.
//! Typed recursion may pass through them, so each method runs inside
//! `ensure_stack` (see pytree-core's module `stack`).

/// The impls for namespace `$ns` (expanded once for `Std`, and by
/// [`std_containers!`](crate::std_containers) for a user namespace).
#[doc(hidden)]
#[macro_export]
macro_rules! __pytree_shared {
    ($ns:ty) => {
        $crate::__pytree_shared!(@ptr $ns, Rc);
        $crate::__pytree_shared!(@ptr $ns, Arc);
    };
    (@ptr $ns:ty, $ptr:ident) => {
        const _: () = {
            #[allow(unused_imports)]
            use ::std::{rc::Rc, sync::Arc};
            use $crate::__private::ensure_stack;
            use $crate::{Error, Flatten, LeafMut, LeafRef, Sink, Source, Unflatten, Visit, VisitMut};
            /// The namespace these impls are for.
            type Std = $ns;

            impl<T: Flatten<Std> + Clone> Flatten<Std> for $ptr<T> {
                type Leaf = T::Leaf;
                const UNIFORM_LEAVES: Option<usize> = T::UNIFORM_LEAVES;
                // `leaf_count_hint` stays the default (uniform or 0):
                // recursive types pass through shared pointers, and the
                // hint must not walk a deep chain.

                #[inline]
                fn flatten_into<S: Sink<Self::Leaf>>(self, sink: &mut S) {
                    ensure_stack(|| $ptr::unwrap_or_clone(self).flatten_into(sink))
                }
                #[inline]
                fn visit<'a, V: Visit<LeafRef<'a, Std, Self::Leaf>>>(&'a self, visitor: &mut V) {
                    ensure_stack(|| (**self).visit(visitor))
                }
                #[inline]
                fn visit_mut<'a, V: VisitMut<LeafMut<'a, Std, Self::Leaf>>>(
                    &'a mut self,
                    visitor: &mut V,
                ) {
                    ensure_stack(|| $ptr::make_mut(self).visit_mut(visitor))
                }
                #[inline]
                fn map_leaves<F: FnMut(Self::Leaf) -> Self::Leaf>(self, f: &mut F) -> Self {
                    $ptr::new(ensure_stack(|| $ptr::unwrap_or_clone(self).map_leaves(f)))
                }
                #[inline]
                fn zip_check<const N: usize>(&self, others: [&Self; N]) -> Result<(), Error> {
                    ensure_stack(|| (**self).zip_check(others.map(|o| &**o)))
                }
                #[inline]
                fn zip_with_prechecked<'a, const N: usize, F>(
                    &'a self,
                    others: [&'a Self; N],
                    f: &mut F,
                ) -> Self
                where
                    F: FnMut(
                        LeafRef<'a, Std, Self::Leaf>,
                        [LeafRef<'a, Std, Self::Leaf>; N],
                    ) -> Self::Leaf,
                {
                    $ptr::new(ensure_stack(|| {
                        (**self).zip_with_prechecked(others.map(|o| &**o), f)
                    }))
                }
                #[inline]
                fn zip_mut_prechecked<'a, const N: usize, F>(
                    &'a mut self,
                    others: [&'a Self; N],
                    f: &mut F,
                ) where
                    F: FnMut(LeafMut<'a, Std, Self::Leaf>, [LeafRef<'a, Std, Self::Leaf>; N]),
                {
                    ensure_stack(|| $ptr::make_mut(self).zip_mut_prechecked(others.map(|o| &**o), f))
                }
            }

            impl<T: Unflatten<Std> + Clone> Unflatten<Std> for $ptr<T> {
                #[inline]
                fn unflatten_from<S: Source<Self::Leaf>>(source: &mut S) -> Result<Self, Error> {
                    ensure_stack(|| T::unflatten_from(source)).map($ptr::new)
                }
            }
        };
    };
}
