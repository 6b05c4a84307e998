//! Impls for `Box<T>`, which only this crate may write (`Box` is
//! `#[fundamental]`), for every namespace. A box is transparent: it adds no
//! node, so `Box<T>` has the TreeDef of `T`. Typed recursion passes through
//! boxes, so each method runs inside [`ensure_stack`].

use alloc::boxed::Box;

use crate::error::Error;
use crate::flatten::{Flatten, Source, Unflatten};
use crate::stack::ensure_stack;
use crate::visit::{Sink, Visit, VisitMut};

impl<Ns, T: Flatten<Ns>> Flatten<Ns> for Box<T> {
    type Leaf = T::Leaf;

    #[inline]
    fn flatten_into<S: Sink<Self::Leaf>>(self, sink: &mut S) {
        ensure_stack(|| (*self).flatten_into(sink))
    }
    #[inline]
    fn visit<'a, V: Visit<'a, Self::Leaf>>(&'a self, visitor: &mut V) {
        ensure_stack(|| (**self).visit(visitor))
    }
    #[inline]
    fn visit_mut<V: VisitMut<Self::Leaf>>(&mut self, visitor: &mut V) {
        ensure_stack(|| (**self).visit_mut(visitor))
    }
    #[inline]
    fn map_leaves<F: FnMut(Self::Leaf) -> Self::Leaf>(self, f: &mut F) -> Self {
        Box::new(ensure_stack(|| (*self).map_leaves(f)))
    }
    #[inline]
    fn zip_with<const N: usize, F>(&self, others: [&Self; N], f: &mut F) -> Result<Self, Error>
    where
        F: FnMut(&Self::Leaf, [&Self::Leaf; N]) -> Self::Leaf,
    {
        ensure_stack(|| (**self).zip_with(others.map(|o| &**o), f)).map(Box::new)
    }
    #[inline]
    fn zip_mut<const N: usize, F>(&mut self, others: [&Self; N], f: &mut F) -> Result<(), Error>
    where
        F: FnMut(&mut Self::Leaf, [&Self::Leaf; N]),
    {
        ensure_stack(|| (**self).zip_mut(others.map(|o| &**o), f))
    }
}

impl<Ns, T: Unflatten<Ns>> Unflatten<Ns> for Box<T> {
    #[inline]
    fn unflatten_from<S: Source<Self::Leaf>>(source: &mut S) -> Result<Self, Error> {
        ensure_stack(|| T::unflatten_from(source)).map(Box::new)
    }
}
