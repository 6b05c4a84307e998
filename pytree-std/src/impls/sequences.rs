//! Sequences: `Vec<T>`, `VecDeque<T>` and `[T; N]`. Each is one `Seq(len)`
//! node whose children are the elements, keyed by index. A sequence of leaf
//! values hands its elements over in one call (`flatten_vec` and friends),
//! so flattening `Vec<f64>` is a move, not a loop over node records.
//! Typed recursion may pass through a `Vec` (`children: Vec<Node>`), so its
//! methods run inside `ensure_stack` (see pytree-core's module `stack`).

use std::collections::VecDeque;

use pytree_core::__private::ensure_stack;
use pytree_core::{
    Error, ErrorKind, Flatten, KeyEntry, KeyRef, NodeRef, Sink, Source, Unflatten, Visit, VisitMut,
};

use crate::Std;

/// Checks that every other sequence has the first one's length.
pub(crate) fn check_lengths<const N: usize>(len: usize, others: [usize; N]) -> Result<(), Error> {
    match others.iter().position(|&n| n != len) {
        None => Ok(()),
        Some(j) => Err(Error::new(ErrorKind::LengthMismatch {
            expected: len,
            found: others[j],
        })
        .in_tree(j + 1)),
    }
}

/// Zips element `i` of every slice into a new element.
fn zip_slices<T, const N: usize, F>(
    first: &[T],
    others: [&[T]; N],
    f: &mut F,
) -> Result<Vec<T>, Error>
where
    T: Flatten<Std>,
    F: FnMut(&T::Leaf, [&T::Leaf; N]) -> T::Leaf,
{
    check_lengths(first.len(), others.map(<[T]>::len))?;
    // Not `collect::<Result<Vec<_>, _>>()`: it loses the length and grows
    // the Vec by doubling.
    let mut out = Vec::with_capacity(first.len());
    for (i, x) in first.iter().enumerate() {
        out.push(
            x.zip_with(others.map(|o| &o[i]), f)
                .map_err(|e| e.at(KeyEntry::Index(i)))?,
        );
    }
    Ok(out)
}

/// Zips element `i` of every slice into the first, in place.
fn zip_slices_mut<T, const N: usize, F>(
    first: &mut [T],
    others: [&[T]; N],
    f: &mut F,
) -> Result<(), Error>
where
    T: Flatten<Std>,
    F: FnMut(&mut T::Leaf, [&T::Leaf; N]),
{
    check_lengths(first.len(), others.map(<[T]>::len))?;
    for (i, x) in first.iter_mut().enumerate() {
        x.zip_mut(others.map(|o| &o[i]), f)
            .map_err(|e| e.at(KeyEntry::Index(i)))?;
    }
    Ok(())
}

impl<T: Flatten<Std>> Flatten<Std> for Vec<T> {
    type Leaf = T::Leaf;

    #[inline]
    fn flatten_into<S: Sink<Self::Leaf>>(self, sink: &mut S) {
        sink.node(NodeRef::Seq(self.len()));
        ensure_stack(|| T::flatten_vec(self, sink));
    }
    #[inline]
    fn visit<'a, V: Visit<'a, Self::Leaf>>(&'a self, visitor: &mut V) {
        visitor.node(NodeRef::Seq(self.len()));
        ensure_stack(|| T::visit_slice(self, visitor));
    }
    #[inline]
    fn visit_mut<V: VisitMut<Self::Leaf>>(&mut self, visitor: &mut V) {
        visitor.node(NodeRef::Seq(self.len()));
        ensure_stack(|| T::visit_slice_mut(self, visitor));
    }
    #[inline]
    fn map_leaves<F: FnMut(Self::Leaf) -> Self::Leaf>(self, f: &mut F) -> Self {
        ensure_stack(|| self.into_iter().map(|x| x.map_leaves(f)).collect())
    }
    #[inline]
    fn zip_with<const N: usize, F>(&self, others: [&Self; N], f: &mut F) -> Result<Self, Error>
    where
        F: FnMut(&Self::Leaf, [&Self::Leaf; N]) -> Self::Leaf,
    {
        ensure_stack(|| zip_slices(self, others.map(Vec::as_slice), f))
    }
    #[inline]
    fn zip_mut<const N: usize, F>(&mut self, others: [&Self; N], f: &mut F) -> Result<(), Error>
    where
        F: FnMut(&mut Self::Leaf, [&Self::Leaf; N]),
    {
        ensure_stack(|| zip_slices_mut(self, others.map(Vec::as_slice), f))
    }
}

impl<T: Unflatten<Std>> Unflatten<Std> for Vec<T> {
    #[inline]
    fn unflatten_from<S: Source<Self::Leaf>>(source: &mut S) -> Result<Self, Error> {
        let len = source.seq_node()?;
        ensure_stack(|| T::unflatten_vec(len, source))
    }
}

impl<T: Flatten<Std>> Flatten<Std> for VecDeque<T> {
    type Leaf = T::Leaf;

    fn flatten_into<S: Sink<Self::Leaf>>(self, sink: &mut S) {
        sink.node(NodeRef::Seq(self.len()));
        T::flatten_vec(Vec::from(self), sink);
    }
    fn visit<'a, V: Visit<'a, Self::Leaf>>(&'a self, visitor: &mut V) {
        visitor.node(NodeRef::Seq(self.len()));
        for (i, x) in self.iter().enumerate() {
            visitor.enter(KeyRef::Index(i));
            x.visit(visitor);
            visitor.exit();
        }
    }
    fn visit_mut<V: VisitMut<Self::Leaf>>(&mut self, visitor: &mut V) {
        visitor.node(NodeRef::Seq(self.len()));
        T::visit_slice_mut(self.make_contiguous(), visitor);
    }
    fn map_leaves<F: FnMut(Self::Leaf) -> Self::Leaf>(self, f: &mut F) -> Self {
        self.into_iter().map(|x| x.map_leaves(f)).collect()
    }
    fn zip_with<const N: usize, F>(&self, others: [&Self; N], f: &mut F) -> Result<Self, Error>
    where
        F: FnMut(&Self::Leaf, [&Self::Leaf; N]) -> Self::Leaf,
    {
        check_lengths(self.len(), others.map(VecDeque::len))?;
        self.iter()
            .enumerate()
            .map(|(i, x)| {
                x.zip_with(others.map(|o| &o[i]), f)
                    .map_err(|e| e.at(KeyEntry::Index(i)))
            })
            .collect()
    }
    fn zip_mut<const N: usize, F>(&mut self, others: [&Self; N], f: &mut F) -> Result<(), Error>
    where
        F: FnMut(&mut Self::Leaf, [&Self::Leaf; N]),
    {
        check_lengths(self.len(), others.map(VecDeque::len))?;
        for (i, x) in self.iter_mut().enumerate() {
            x.zip_mut(others.map(|o| &o[i]), f)
                .map_err(|e| e.at(KeyEntry::Index(i)))?;
        }
        Ok(())
    }
}

impl<T: Unflatten<Std>> Unflatten<Std> for VecDeque<T> {
    fn unflatten_from<S: Source<Self::Leaf>>(source: &mut S) -> Result<Self, Error> {
        let len = source.seq_node()?;
        T::unflatten_vec(len, source).map(VecDeque::from)
    }
}

/// Turns a `Vec` of exactly `N` elements into an array.
fn into_array<T, const N: usize>(items: Vec<T>) -> Result<[T; N], Error> {
    let found = items.len();
    items
        .try_into()
        .map_err(|_| Error::new(ErrorKind::LengthMismatch { expected: N, found }))
}

impl<T: Flatten<Std>, const N: usize> Flatten<Std> for [T; N] {
    type Leaf = T::Leaf;

    fn flatten_into<S: Sink<Self::Leaf>>(self, sink: &mut S) {
        sink.node(NodeRef::Seq(N));
        for (i, x) in self.into_iter().enumerate() {
            sink.enter(KeyRef::Index(i));
            x.flatten_into(sink);
            sink.exit();
        }
    }
    #[inline]
    fn visit<'a, V: Visit<'a, Self::Leaf>>(&'a self, visitor: &mut V) {
        visitor.node(NodeRef::Seq(N));
        T::visit_slice(self, visitor);
    }
    #[inline]
    fn visit_mut<V: VisitMut<Self::Leaf>>(&mut self, visitor: &mut V) {
        visitor.node(NodeRef::Seq(N));
        T::visit_slice_mut(self, visitor);
    }
    #[inline]
    fn map_leaves<F: FnMut(Self::Leaf) -> Self::Leaf>(self, f: &mut F) -> Self {
        self.map(|x| x.map_leaves(f))
    }
    fn zip_with<const M: usize, F>(&self, others: [&Self; M], f: &mut F) -> Result<Self, Error>
    where
        F: FnMut(&Self::Leaf, [&Self::Leaf; M]) -> Self::Leaf,
    {
        into_array(zip_slices(self, others.map(|o| o.as_slice()), f)?)
    }
    #[inline]
    fn zip_mut<const M: usize, F>(&mut self, others: [&Self; M], f: &mut F) -> Result<(), Error>
    where
        F: FnMut(&mut Self::Leaf, [&Self::Leaf; M]),
    {
        zip_slices_mut(self, others.map(|o| o.as_slice()), f)
    }
}

impl<T: Unflatten<Std>, const N: usize> Unflatten<Std> for [T; N] {
    fn unflatten_from<S: Source<Self::Leaf>>(source: &mut S) -> Result<Self, Error> {
        let len = source.seq_node()?;
        if len != N {
            return Err(Error::new(ErrorKind::LengthMismatch {
                expected: N,
                found: len,
            }));
        }
        into_array(T::unflatten_vec(N, source)?)
    }
}
