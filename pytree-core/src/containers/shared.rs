//! Shared pointers `Rc<T>` and `Arc<T>`: transparent, like `Box` (no node of
//! their own). Consuming or mutating a shared value clones it first if other
//! handles exist (`Rc::unwrap_or_clone`, `Rc::make_mut`), hence `T: Clone`.
//! Typed recursion may pass through them, so each method runs inside
//! `ensure_stack` (`deep_recursion.rs`).

use alloc::rc::Rc;
use alloc::sync::Arc;

use super::StdContainers;
use crate::error::Error;
use crate::leaf::{LeafMut, LeafRef};
use crate::sources::source::Source;
use crate::traits::deep_recursion::ensure_stack;
use crate::traits::flatten::{zip_mut_method, zip_with_method, Flatten, Unflatten};
use crate::traits::visit::{Sink, Visit, VisitMut};

/// The impls for one shared pointer type, `Rc` or `Arc`, for every
/// namespace with the std containers.
macro_rules! shared_impls {
    ($ptr:ident) => {
        impl<Ns: StdContainers, T: Flatten<Ns> + Clone> Flatten<Ns> for $ptr<T> {
            type Leaf = T::Leaf;
            const UNIFORM_LEAVES: Option<usize> = T::UNIFORM_LEAVES;
            // `leaf_count_hint` stays the default (uniform or 0):
            // recursive types pass through shared pointers, and the
            // hint must not walk a deep chain.

            #[inline]
            fn flatten_into<S: Sink<Self::Leaf>>(self, sink: &mut S) {
                if S::DISCARDS {
                    // Taken apart to be dropped (`unwind.rs`): another
                    // handle keeps what it points to, so only the last
                    // one walks it.
                    if let Some(inner) = $ptr::into_inner(self) {
                        ensure_stack(|| inner.flatten_into(sink));
                    }
                    return;
                }
                ensure_stack(|| $ptr::unwrap_or_clone(self).flatten_into(sink))
            }
            #[inline]
            fn visit<'a, V: Visit<LeafRef<'a, Ns, Self::Leaf>>>(&'a self, visitor: &mut V) {
                ensure_stack(|| (**self).visit(visitor))
            }
            #[inline]
            fn visit_mut<'a, V: VisitMut<LeafMut<'a, Ns, Self::Leaf>>>(
                &'a mut self,
                visitor: &mut V,
            ) {
                ensure_stack(|| $ptr::make_mut(self).visit_mut(visitor))
            }
            #[inline]
            fn zip_check<const N: usize>(&self, others: [&Self; N]) -> Result<(), Error> {
                ensure_stack(|| (**self).zip_check(others.map(|o| &**o)))
            }
            zip_mut_method!(N, |this, others, f| ensure_stack(|| {
                $ptr::make_mut(this).zip_mut_prechecked(others.map(|o| &**o), f)
            }));
        }

        impl<Ns: StdContainers, T: Unflatten<Ns> + Clone> Unflatten<Ns> for $ptr<T> {
            #[inline]
            fn unflatten_from<S: Source<Self::Leaf>>(source: &mut S) -> Result<Self, Error> {
                ensure_stack(|| T::unflatten_from(source)).map($ptr::new)
            }
            #[inline]
            fn map_leaves<F: FnMut(Self::Leaf) -> Self::Leaf>(self, f: &mut F) -> Self {
                $ptr::new(ensure_stack(|| $ptr::unwrap_or_clone(self).map_leaves(f)))
            }
            zip_with_method!(N, |this, others, f| $ptr::new(ensure_stack(|| {
                (**this).zip_with_prechecked(others.map(|o| &**o), f)
            })));
        }
    };
}

shared_impls!(Rc);
shared_impls!(Arc);
