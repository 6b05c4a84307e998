//! Sequences: `Vec<T>`, `VecDeque<T>` and `[T; N]`. Each is one `Seq(len)`
//! node whose children are the elements, keyed by index. A sequence of leaf
//! values hands its elements over in one call (`flatten_vec` and friends),
//! so flattening `Vec<f64>` is a move, not a loop over node records.
//! Typed recursion may pass through a `Vec` (`children: Vec<Node>`), so its
//! methods run inside `ensure_stack` (`deep_recursion.rs`).

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use super::StdContainers;
use crate::__private::{check_lengths, elements_hint};
use crate::error::{Error, ErrorKind};
use crate::leaf::{LeafMut, LeafRef};
use crate::paths::key_path::{KeyEntry, KeyRef};
use crate::sources::source::Source;
use crate::traits::deep_recursion::ensure_stack;
use crate::traits::flatten::unwind::{flatten_elements, Unwinding};
use crate::traits::flatten::{zip_mut_method, zip_with_method, Flatten, Unflatten};
use crate::traits::visit::{Sink, Visit, VisitMut};
use crate::treedef::node::NodeRef;

impl<Ns: StdContainers, T: Flatten<Ns>> Flatten<Ns> for Vec<T> {
    type Leaf = T::Leaf;

    #[inline]
    fn leaf_count_hint(&self) -> usize {
        elements_hint::<Ns, T>(self.len())
    }

    #[inline]
    fn flatten_into<S: Sink<Self::Leaf>>(self, sink: &mut S) {
        sink.node(NodeRef::Seq(self.len()));
        ensure_stack(|| T::flatten_vec(self, sink));
    }
    #[inline]
    fn visit<'a, V: Visit<LeafRef<'a, Ns, Self::Leaf>>>(&'a self, visitor: &mut V) {
        visitor.node(NodeRef::Seq(self.len()));
        ensure_stack(|| T::visit_slice(self, visitor));
    }
    #[inline]
    fn visit_mut<'a, V: VisitMut<LeafMut<'a, Ns, Self::Leaf>>>(&'a mut self, visitor: &mut V) {
        visitor.node(NodeRef::Seq(self.len()));
        ensure_stack(|| T::visit_slice_mut(self, visitor));
    }
    #[inline]
    fn zip_check<const N: usize>(&self, others: [&Self; N]) -> Result<(), Error> {
        ensure_stack(|| zip_slices_check(self, others.map(Vec::as_slice)))
    }
    zip_mut_method!(N, |this, others, f| ensure_stack(|| {
        zip_slices_mut_prechecked(this, others.map(Vec::as_slice), f)
    }));
}

impl<Ns: StdContainers, T: Unflatten<Ns>> Unflatten<Ns> for Vec<T> {
    #[inline]
    fn unflatten_from<S: Source<Self::Leaf>>(source: &mut S) -> Result<Self, Error> {
        let len = source.seq_node()?;
        ensure_stack(|| T::unflatten_vec(len, source))
    }
    #[inline]
    fn map_leaves<F: FnMut(Self::Leaf) -> Self::Leaf>(self, f: &mut F) -> Self {
        if !::core::mem::needs_drop::<T>() {
            return ensure_stack(|| self.into_iter().map(|x| x.map_leaves(f)).collect());
        }
        ensure_stack(|| {
            let done = Vec::with_capacity(self.len());
            map_elements_held::<Ns, T, _, _, _, F>(self, done, Vec::push, f)
        })
    }
    zip_with_method!(N, |this, others, f| ensure_stack(|| {
        zip_slices_prechecked(this, others.map(Vec::as_slice), f)
    }));
}

impl<Ns: StdContainers, T: Flatten<Ns>> Flatten<Ns> for VecDeque<T> {
    type Leaf = T::Leaf;

    #[inline]
    fn leaf_count_hint(&self) -> usize {
        elements_hint::<Ns, T>(self.len())
    }

    fn flatten_into<S: Sink<Self::Leaf>>(self, sink: &mut S) {
        sink.node(NodeRef::Seq(self.len()));
        T::flatten_vec(Vec::from(self), sink);
    }
    fn visit<'a, V: Visit<LeafRef<'a, Ns, Self::Leaf>>>(&'a self, visitor: &mut V) {
        visitor.node(NodeRef::Seq(self.len()));
        for (i, x) in self.iter().enumerate() {
            visitor.enter(KeyRef::Index(i));
            x.visit(visitor);
            visitor.exit();
        }
    }
    fn visit_mut<'a, V: VisitMut<LeafMut<'a, Ns, Self::Leaf>>>(&'a mut self, visitor: &mut V) {
        visitor.node(NodeRef::Seq(self.len()));
        T::visit_slice_mut(self.make_contiguous(), visitor);
    }
    fn zip_check<const N: usize>(&self, others: [&Self; N]) -> Result<(), Error> {
        check_lengths(self.len(), others.map(VecDeque::len))?;
        for (i, x) in self.iter().enumerate() {
            x.zip_check(others.map(|o| o.get(i).unwrap_or(x)))
                .map_err(|e| e.at(KeyEntry::Index(i)))?;
        }
        Ok(())
    }
    zip_mut_method!(N, |this, others, f| {
        if others.iter().any(|o| o.len() != this.len()) {
            return;
        }
        for (i, x) in this.iter_mut().enumerate() {
            x.zip_mut_prechecked(others.map(|o| &o[i]), f);
        }
    });
}

impl<Ns: StdContainers, T: Unflatten<Ns>> Unflatten<Ns> for VecDeque<T> {
    fn unflatten_from<S: Source<Self::Leaf>>(source: &mut S) -> Result<Self, Error> {
        let len = source.seq_node()?;
        T::unflatten_vec(len, source).map(VecDeque::from)
    }
    fn map_leaves<F: FnMut(Self::Leaf) -> Self::Leaf>(self, f: &mut F) -> Self {
        if !::core::mem::needs_drop::<T>() {
            return self.into_iter().map(|x| x.map_leaves(f)).collect();
        }
        let done = VecDeque::with_capacity(self.len());
        map_elements_held::<Ns, T, _, _, _, F>(self, done, VecDeque::push_back, f)
    }
    zip_with_method!(N, |this, others, f| {
        let zip = |(i, x): (usize, &'a T)| {
            x.zip_with_prechecked(others.map(|o| o.get(i).unwrap_or(x)), f)
        };
        if !::core::mem::needs_drop::<T>() {
            return this.iter().enumerate().map(zip).collect();
        }
        // The elements built are held in a guard (a panic in `f` drops
        // deep elements with a walk, `unwind.rs`).
        let mut done = Unwinding::elements::<Ns>(VecDeque::with_capacity(this.len()));
        for y in this.iter().enumerate().map(zip) {
            done.get_mut().push_back(y);
        }
        done.take()
    });
}

/// Zips sequences that passed [`Flatten::zip_check`] (equal lengths),
/// element by element. A sequence of another length (the check was
/// skipped) is replaced by `items`, so indexing stays in bounds.
#[inline]
fn zip_slices_prechecked<'a, Ns, T, const N: usize, F>(
    items: &'a [T],
    others: [&'a [T]; N],
    f: &mut F,
) -> Vec<T>
where
    T: Unflatten<Ns>,
    F: FnMut(LeafRef<'a, Ns, T::Leaf>, [LeafRef<'a, Ns, T::Leaf>; N]) -> T::Leaf,
{
    let len = items.len();
    let others = others.map(|o| if o.len() == len { o } else { items });
    // `move`: the closure owns its copy of `others`, so the slices stay in
    // registers instead of being reloaded after every output store.
    let zipped = items
        .iter()
        .enumerate()
        .map(move |(i, item)| item.zip_with_prechecked(others.map(|o| &o[i]), f));
    if !core::mem::needs_drop::<T>() {
        return zipped.collect();
    }
    // The elements built are held in a guard, so that a panic in `f`
    // drops deep elements with a walk (`unwind.rs`), not with std's
    // recursive drop of a half-collected `Vec`.
    let mut done = Unwinding::elements::<Ns>(Vec::with_capacity(len));
    for y in zipped {
        done.get_mut().push(y);
    }
    done.take()
}

/// The in-place form of [`zip_slices_prechecked`]. If a sequence has
/// another length (the check was skipped), nothing is updated.
#[inline]
fn zip_slices_mut_prechecked<'a, Ns, T, const N: usize, F>(
    items: &'a mut [T],
    others: [&'a [T]; N],
    f: &mut F,
) where
    T: Flatten<Ns>,
    F: FnMut(LeafMut<'a, Ns, T::Leaf>, [LeafRef<'a, Ns, T::Leaf>; N]),
{
    let len = items.len();
    if others.iter().any(|o| o.len() != len) {
        return;
    }
    for (i, item) in items.iter_mut().enumerate() {
        item.zip_mut_prechecked(others.map(|o| &o[i]), f);
    }
}

/// Checks that sequences have equal lengths, then their elements, for
/// [`Flatten::zip_check`].
#[inline]
fn zip_slices_check<Ns, T: Flatten<Ns>, const N: usize>(
    items: &[T],
    others: [&[T]; N],
) -> Result<(), Error> {
    check_lengths(items.len(), others.map(<[T]>::len))?;
    zip_elements_check(items, others)
}

/// Checks the elements of sequences of equal length (arrays, or after
/// [`check_lengths`]), skipping the walk where no element can differ.
#[inline]
fn zip_elements_check<Ns, T: Flatten<Ns>, const N: usize>(
    items: &[T],
    others: [&[T]; N],
) -> Result<(), Error> {
    if T::UNIFORM_LEAVES.is_some() {
        return Ok(());
    }
    for (i, item) in items.iter().enumerate() {
        item.zip_check(others.map(|o| o.get(i).unwrap_or(item)))
            .map_err(|e| e.at(KeyEntry::Index(i)))?;
    }
    Ok(())
}

/// `f` mapped over the leaves of each of `items`, the results pushed into
/// `done`; both are held in guards, so that a panic in `f` drops deep
/// elements with a walk (`unwind.rs`). The iterator is held (not the
/// collection): what it has not yet yielded is what a panic leaves to drop.
#[inline]
fn map_elements_held<Ns, T, I, C, P, F>(items: I, done: C, mut push: P, f: &mut F) -> C
where
    T: Unflatten<Ns>,
    I: IntoIterator<Item = T>,
    C: IntoIterator<Item = T>,
    P: FnMut(&mut C, T),
    F: FnMut(T::Leaf) -> T::Leaf,
{
    let mut done = Unwinding::elements::<Ns>(done);
    let iter = items.into_iter();
    let mut rest = Unwinding::elements::<Ns>(iter);
    while let Some(x) = rest.get_mut().next() {
        let y = x.map_leaves(f);
        push(done.get_mut(), y);
    }
    drop(rest.take());
    done.take()
}

/// Turns a `Vec` of exactly `N` elements into an array.
fn into_array<T, const N: usize>(items: Vec<T>) -> Result<[T; N], Error> {
    let found = items.len();
    items
        .try_into()
        .map_err(|_| Error::new(ErrorKind::LengthMismatch { expected: N, found }))
}

impl<Ns: StdContainers, T: Flatten<Ns>, const N: usize> Flatten<Ns> for [T; N] {
    type Leaf = T::Leaf;
    const UNIFORM_LEAVES: Option<usize> = crate::__private::uniform_times(N, T::UNIFORM_LEAVES);

    #[inline]
    fn leaf_count_hint(&self) -> usize {
        elements_hint::<Ns, T>(N)
    }

    fn flatten_into<S: Sink<Self::Leaf>>(self, sink: &mut S) {
        sink.node(NodeRef::Seq(N));
        // The elements not handed on yet are held in a guard (a sink
        // that panics drops deep elements with a walk).
        // The iterator is held (not the collection): what it has not yet
        // yielded is what a panic leaves to drop.
        let iter = self.into_iter();
        flatten_elements::<Ns, _, _>(Unwinding::elements::<Ns>(iter), 0, sink);
    }
    #[inline]
    fn visit<'a, V: Visit<LeafRef<'a, Ns, Self::Leaf>>>(&'a self, visitor: &mut V) {
        visitor.node(NodeRef::Seq(N));
        T::visit_slice(self, visitor);
    }
    #[inline]
    fn visit_mut<'a, V: VisitMut<LeafMut<'a, Ns, Self::Leaf>>>(&'a mut self, visitor: &mut V) {
        visitor.node(NodeRef::Seq(N));
        T::visit_slice_mut(self, visitor);
    }
    #[inline]
    fn zip_check<const M: usize>(&self, others: [&Self; M]) -> Result<(), Error> {
        zip_elements_check(self, others.map(|o| o.as_slice()))
    }
    zip_mut_method!(M, |this, others, f| {
        zip_slices_mut_prechecked(this, others.map(|o| o.as_slice()), f)
    });
}

impl<Ns: StdContainers, T: Unflatten<Ns>, const N: usize> Unflatten<Ns> for [T; N] {
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
    #[inline]
    fn map_leaves<F: FnMut(Self::Leaf) -> Self::Leaf>(self, f: &mut F) -> Self {
        if !::core::mem::needs_drop::<T>() {
            return self.map(|x| x.map_leaves(f));
        }
        // The mapped elements in a `Vec` of exactly `N`, then moved into
        // the array.
        let done =
            map_elements_held::<Ns, T, _, _, _, F>(self, Vec::with_capacity(N), Vec::push, f);
        match <[T; N]>::try_from(done) {
            Ok(mapped) => mapped,
            Err(_) => unreachable!("an array's iterator yields N elements"),
        }
    }
    zip_with_method!(M, |this, others, f| {
        if !::core::mem::needs_drop::<T>() {
            let mut i = 0;
            return this.each_ref().map(|x| {
                let out = x.zip_with_prechecked(others.map(|o| &o[i]), f);
                i += 1;
                out
            });
        }
        // The elements built are held in a guard (a panic in `f` drops
        // deep elements with a walk), then moved into the array.
        let mut done = Unwinding::elements::<Ns>(Vec::with_capacity(N));
        for (i, x) in this.iter().enumerate() {
            let y = x.zip_with_prechecked(others.map(|o| &o[i]), f);
            done.get_mut().push(y);
        }
        match <[T; N]>::try_from(done.take()) {
            Ok(zipped) => zipped,
            Err(_) => unreachable!("an array has N elements"),
        }
    });
}
