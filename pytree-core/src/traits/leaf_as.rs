//! The callbacks through which a field of a `#[pytree(leaf_type = L)]`
//! struct reaches the struct's walks: its own `Flatten` / `Unflatten`
//! impl walks it with leaves of type `M`, and these adapters hand each
//! leaf on as an `L` ([`LeafAs`]), by value ([`SinkAs`]), by reference
//! ([`VisitAs`], [`VisitMutAs`]) or back from the struct's leaves
//! ([`SourceAs`]). Everything else (nodes, keys, hints) passes through, so
//! the TreeDef is the one the field's type writes, and the field's own
//! fast paths (a run of leaves, a `Vec` of leaves) stay runs.
//!
//! The derive reaches them through `__private::ConvertedField`.

use alloc::vec::Vec;
use core::marker::PhantomData;

use crate::error::Error;
use crate::leaf::leaf_as::LeafAs;
use crate::leaf::{Leaf, LeafMut, LeafRef};
use crate::paths::key_path::{KeyEntry, KeyRef};
use crate::static_data::{Static, StaticValue};
use crate::traits::source::Source;
use crate::traits::visit::{Sink, Stored, Visit, VisitMut};
use crate::treedef::node::NodeRef;
use crate::treedef::node::NodeView;
use crate::treedef::schema::Schema;

/// A [`Sink`] of `M` leaves that hands each on to a sink of `L` leaves.
pub(crate) struct SinkAs<'s, Ns, L, S> {
    inner: &'s mut S,
    of: PhantomData<fn() -> (Ns, L)>,
}

impl<'s, Ns, L, S> SinkAs<'s, Ns, L, S> {
    #[inline(always)]
    pub(crate) fn new(inner: &'s mut S) -> Self {
        SinkAs {
            inner,
            of: PhantomData,
        }
    }
}

impl<Ns, L, M, S> Sink<M> for SinkAs<'_, Ns, L, S>
where
    L: Leaf<Ns>,
    M: LeafAs<Ns, L>,
    S: Sink<L>,
{
    #[inline(always)]
    fn leaf(&mut self, leaf: M) {
        self.inner.leaf(leaf.into_leaf())
    }
    #[inline]
    fn leaf_vec(&mut self, leaves: Vec<M>) {
        self.inner
            .leaf_vec(leaves.into_iter().map(M::into_leaf).collect())
    }
    #[inline(always)]
    fn node(&mut self, node: NodeRef<'_>) {
        self.inner.node(node)
    }
    #[inline(always)]
    fn map_keys<F: FnOnce() -> StaticValue>(&mut self, keys: F) {
        self.inner.map_keys(keys)
    }
    #[inline(always)]
    fn enter(&mut self, key: KeyRef<'_>) {
        self.inner.enter(key)
    }
    #[inline(always)]
    fn exit(&mut self) {
        self.inner.exit()
    }
    #[inline(always)]
    fn stored(&self) -> Stored {
        self.inner.stored()
    }
    #[inline(always)]
    fn reserve_like(&mut self, since: Stored, times: usize) {
        self.inner.reserve_like(since, times)
    }
    // `repeat_like` keeps its default (declines): the inner sink's buffer
    // holds `L`s, not the `M`s the field's walk would push.
}

/// What the visitors are for: leaves of type `M` lent for `'a`, handed
/// on as `L`s of namespace `Ns`.
type LentAs<'a, Ns, L, M> = PhantomData<fn(&'a ()) -> (Ns, L, M)>;

/// A [`Visit`] of `M` leaves, lent for `'a`, that lends each on as an `L`.
pub(crate) struct VisitAs<'v, 'a, Ns, L, M, V> {
    inner: &'v mut V,
    of: LentAs<'a, Ns, L, M>,
}

impl<'v, Ns, L, M, V> VisitAs<'v, '_, Ns, L, M, V> {
    #[inline(always)]
    pub(crate) fn new(inner: &'v mut V) -> Self {
        VisitAs {
            inner,
            of: PhantomData,
        }
    }
}

impl<'a, Ns, L, M, V> Visit<LeafRef<'a, Ns, M>> for VisitAs<'_, 'a, Ns, L, M, V>
where
    L: Leaf<Ns>,
    M: LeafAs<Ns, L>,
    V: Visit<LeafRef<'a, Ns, L>>,
{
    #[inline(always)]
    fn leaf(&mut self, leaf: LeafRef<'a, Ns, M>) {
        self.inner.leaf(M::lend_as(leaf))
    }
    #[inline(always)]
    fn leaf_run<I: ExactSizeIterator<Item = LeafRef<'a, Ns, M>>>(&mut self, leaves: I) {
        self.inner.leaf_run(leaves.map(M::lend_as))
    }
    #[inline(always)]
    fn leaf_entries<'k, I: ExactSizeIterator<Item = (KeyRef<'k>, LeafRef<'a, Ns, M>)>>(
        &mut self,
        entries: I,
    ) {
        self.inner
            .leaf_entries(entries.map(|(k, leaf)| (k, M::lend_as(leaf))))
    }
    #[inline(always)]
    fn reserve_leaves(&mut self, n: usize) {
        self.inner.reserve_leaves(n)
    }
    #[inline(always)]
    fn node(&mut self, node: NodeRef<'_>) {
        self.inner.node(node)
    }
    #[inline(always)]
    fn map_keys<F: FnOnce() -> StaticValue>(&mut self, keys: F) {
        self.inner.map_keys(keys)
    }
    #[inline(always)]
    fn enter(&mut self, key: KeyRef<'_>) {
        self.inner.enter(key)
    }
    #[inline(always)]
    fn exit(&mut self) {
        self.inner.exit()
    }
}

/// A [`VisitMut`] of `M` leaves, lent for `'a`, that lends each on as an
/// `L`.
pub(crate) struct VisitMutAs<'v, 'a, Ns, L, M, V> {
    inner: &'v mut V,
    of: LentAs<'a, Ns, L, M>,
}

impl<'v, Ns, L, M, V> VisitMutAs<'v, '_, Ns, L, M, V> {
    #[inline(always)]
    pub(crate) fn new(inner: &'v mut V) -> Self {
        VisitMutAs {
            inner,
            of: PhantomData,
        }
    }
}

impl<'a, Ns, L, M, V> VisitMut<LeafMut<'a, Ns, M>> for VisitMutAs<'_, 'a, Ns, L, M, V>
where
    L: Leaf<Ns>,
    M: LeafAs<Ns, L>,
    V: VisitMut<LeafMut<'a, Ns, L>>,
{
    #[inline(always)]
    fn leaf(&mut self, leaf: LeafMut<'a, Ns, M>) {
        self.inner.leaf(M::lend_mut_as(leaf))
    }
    #[inline(always)]
    fn leaf_run<I: ExactSizeIterator<Item = LeafMut<'a, Ns, M>>>(&mut self, leaves: I) {
        self.inner.leaf_run(leaves.map(M::lend_mut_as))
    }
    #[inline(always)]
    fn reserve_leaves(&mut self, n: usize) {
        self.inner.reserve_leaves(n)
    }
    #[inline(always)]
    fn node(&mut self, node: NodeRef<'_>) {
        self.inner.node(node)
    }
    #[inline(always)]
    fn enter(&mut self, key: KeyRef<'_>) {
        self.inner.enter(key)
    }
    #[inline(always)]
    fn exit(&mut self) {
        self.inner.exit()
    }
}

/// A [`Source`] of `M` leaves that reads `L` leaves and converts each
/// back ([`LeafAs::from_leaf`]): an `L` that is not an `M` is an error,
/// which gains the field's path on its way out.
pub(crate) struct SourceAs<'s, Ns, L, S> {
    inner: &'s mut S,
    of: PhantomData<fn() -> (Ns, L)>,
}

impl<'s, Ns, L, S> SourceAs<'s, Ns, L, S> {
    #[inline(always)]
    pub(crate) fn new(inner: &'s mut S) -> Self {
        SourceAs {
            inner,
            of: PhantomData,
        }
    }
}

impl<Ns, L, M, S> Source<M> for SourceAs<'_, Ns, L, S>
where
    L: Leaf<Ns>,
    M: LeafAs<Ns, L>,
    S: Source<L>,
{
    #[inline]
    fn leaf(&mut self) -> Result<M, Error> {
        M::from_leaf(self.inner.leaf()?)
    }
    #[inline]
    fn leaf_vec(&mut self, len: usize) -> Result<Vec<M>, Error> {
        self.inner
            .leaf_vec(len)?
            .into_iter()
            .enumerate()
            .map(|(i, leaf)| M::from_leaf(leaf).map_err(|e| e.at(KeyEntry::Index(i))))
            .collect()
    }
    #[inline(always)]
    fn struct_node(&mut self, candidates: &[&'static Schema]) -> Result<usize, Error> {
        self.inner.struct_node(candidates)
    }
    #[inline(always)]
    fn static_field<T: Static>(&mut self) -> Result<T, Error> {
        self.inner.static_field::<T>()
    }
    #[inline(always)]
    fn seq_node(&mut self) -> Result<usize, Error> {
        self.inner.seq_node()
    }
    #[inline(always)]
    fn tuple_node(&mut self, arity: usize) -> Result<(), Error> {
        self.inner.tuple_node(arity)
    }
    #[inline(always)]
    fn map_node<K: Static>(&mut self) -> Result<Vec<K>, Error> {
        self.inner.map_node::<K>()
    }
    #[inline(always)]
    fn option_node(&mut self) -> Result<bool, Error> {
        self.inner.option_node()
    }
    #[inline(always)]
    fn any_node(&mut self) -> Result<NodeView, Error> {
        self.inner.any_node()
    }
}
