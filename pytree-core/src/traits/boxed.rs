//! Impls for `Box<T>`, which only this crate may write (`Box` is
//! `#[fundamental]`), for every namespace. A box is transparent: it adds no
//! node, so `Box<T>` has the TreeDef of `T`. Typed recursion passes through
//! boxes, so each method runs inside [`ensure_stack`].

use alloc::boxed::Box;
use core::mem::MaybeUninit;

use crate::error::Error;
use crate::leaf::{LeafMut, LeafRef};
use crate::sources::source::Source;
use crate::traits::deep_recursion::ensure_stack;
use crate::traits::flatten::{zip_mut_method, zip_with_method, Flatten, Unflatten};
use crate::traits::visit::{Sink, Visit, VisitMut};

impl<Ns, T: Flatten<Ns>> Flatten<Ns> for Box<T> {
    type Leaf = T::Leaf;
    const UNIFORM_LEAVES: Option<usize> = T::UNIFORM_LEAVES;

    // `leaf_count_hint` stays the default (uniform or 0): recursive types
    // pass through boxes, and the hint must not walk a deep chain.

    #[inline]
    fn flatten_into<S: Sink<Self::Leaf>>(self, sink: &mut S) {
        ensure_stack(|| (*self).flatten_into(sink))
    }
    #[inline]
    fn visit<'a, V: Visit<LeafRef<'a, Ns, Self::Leaf>>>(&'a self, visitor: &mut V) {
        ensure_stack(|| (**self).visit(visitor))
    }
    #[inline]
    fn visit_mut<'a, V: VisitMut<LeafMut<'a, Ns, Self::Leaf>>>(&'a mut self, visitor: &mut V) {
        ensure_stack(|| (**self).visit_mut(visitor))
    }
    #[inline]
    fn zip_check<const N: usize>(&self, others: [&Self; N]) -> Result<(), Error> {
        ensure_stack(|| (**self).zip_check(others.map(|o| &**o)))
    }
    zip_mut_method!(N, |this, others, f| ensure_stack(|| {
        (**this).zip_mut_prechecked(others.map(|o| &**o), f)
    }));
}

impl<Ns, T: Unflatten<Ns>> Unflatten<Ns> for Box<T> {
    #[inline]
    fn unflatten_from<S: Source<Self::Leaf>>(source: &mut S) -> Result<Self, Error> {
        ensure_stack(|| T::unflatten_from(source)).map(Box::new)
    }
    #[inline]
    fn map_leaves<F: FnMut(Self::Leaf) -> Self::Leaf>(self, f: &mut F) -> Self {
        // The mapped value goes back into the same allocation: a chain of
        // boxes is mapped without a free and a malloc per level.
        let slot: *mut T = Box::into_raw(self);
        // SAFETY: `slot` comes from `Box::into_raw`, so it is valid, aligned
        // and initialized; the value is read out exactly once. From here the
        // allocation is owned by `empty`, a box of `MaybeUninit<T>` (same
        // layout), which only frees the memory if `map_leaves` unwinds.
        let (value, mut empty) = unsafe {
            let value = slot.read();
            (value, Box::from_raw(slot.cast::<MaybeUninit<T>>()))
        };
        empty.write(ensure_stack(|| value.map_leaves(f)));
        // SAFETY: the slot was just written.
        unsafe { empty.assume_init() }
    }
    zip_with_method!(N, |this, others, f| Box::new(ensure_stack(|| {
        (**this).zip_with_prechecked(others.map(|o| &**o), f)
    })));
}
