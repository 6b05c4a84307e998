//! The callbacks through which a field of a `#[pytree(leaf_type = L)]`
//! struct reaches the struct's walks: its own `Flatten` / `Unflatten`
//! impl walks it with leaves of type `M`, and these adapters hand each
//! leaf on as an `L` ([`LeafAs`]): one adapter, [`As`], is the [`Sink`]
//! (by value), the [`Visit`] and [`VisitMut`] (by reference) and the
//! [`Source`] (back from the struct's leaves) that wraps the struct's own.
//! Everything else (nodes, keys, hints) passes through, so
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
use crate::sources::source::Source;
use crate::static_data::{Static, StaticValue};
use crate::traits::visit::{Sink, Stored, Visit, VisitMut};
use crate::treedef::node::NodeRef;
use crate::treedef::node::NodeView;
use crate::treedef::schema::Schema;

/// The struct's sink, visitor or source `T`, with leaves of namespace
/// `Ns` and type `L`, wrapped for a field whose leaves are `M`s (lent for
/// `'a`, when they are lent).
pub(crate) struct As<'t, 'a, Ns, L, M, T> {
    inner: &'t mut T,
    of: Of<'a, Ns, L, M>,
}

/// What an [`As`] is for: leaves of type `M` (lent for `'a`) handed on as
/// `L`s of namespace `Ns`.
type Of<'a, Ns, L, M> = PhantomData<fn(&'a ()) -> (Ns, L, M)>;

impl<'t, Ns, L, M, T> As<'t, '_, Ns, L, M, T> {
    #[inline(always)]
    pub(crate) fn new(inner: &'t mut T) -> Self {
        As {
            inner,
            of: PhantomData,
        }
    }
}

/// Callbacks handed on to `self.inner` unchanged: nodes, keys and hints
/// say nothing of the leaves' type.
macro_rules! pass_through {
    ($(fn $name:ident$(<$g:ident: $bound:ident>)?(&mut self $(, $arg:ident: $ty:ty)*) $(-> $ret:ty)?;)*) => {$(
        #[inline(always)]
        fn $name$(<$g: $bound>)?(&mut self $(, $arg: $ty)*) $(-> $ret)? {
            self.inner.$name$(::<$g>)?($($arg),*)
        }
    )*};
}

impl<Ns, L, M, S> Sink<M> for As<'_, '_, Ns, L, M, S>
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
    fn map_keys<F: FnOnce() -> StaticValue>(&mut self, keys: F) {
        self.inner.map_keys(keys)
    }
    #[inline(always)]
    fn stored(&self) -> Stored {
        self.inner.stored()
    }
    pass_through! {
        fn node(&mut self, node: NodeRef<'_>);
        fn enter(&mut self, key: KeyRef<'_>);
        fn exit(&mut self);
        fn reserve_like(&mut self, since: Stored, times: usize);
    }
    // `repeat_like` keeps its default (declines): the inner sink's buffer
    // holds `L`s, not the `M`s the field's walk would push.
}

impl<'a, Ns, L, M, V> Visit<LeafRef<'a, Ns, M>> for As<'_, 'a, Ns, L, M, V>
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
    fn map_keys<F: FnOnce() -> StaticValue>(&mut self, keys: F) {
        self.inner.map_keys(keys)
    }
    pass_through! {
        fn reserve_leaves(&mut self, n: usize);
        fn node(&mut self, node: NodeRef<'_>);
        fn enter(&mut self, key: KeyRef<'_>);
        fn exit(&mut self);
    }
}

impl<'a, Ns, L, M, V> VisitMut<LeafMut<'a, Ns, M>> for As<'_, 'a, Ns, L, M, V>
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
    pass_through! {
        fn reserve_leaves(&mut self, n: usize);
        fn node(&mut self, node: NodeRef<'_>);
        fn enter(&mut self, key: KeyRef<'_>);
        fn exit(&mut self);
    }
}

/// As a [`Source`], an `L` read that is not an `M` is an error
/// ([`LeafAs::from_leaf`]), which gains the field's path on its way out.
impl<Ns, L, M, S> Source<M> for As<'_, '_, Ns, L, M, S>
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
    pass_through! {
        fn struct_node(&mut self, candidates: &[&'static Schema]) -> Result<usize, Error>;
        fn static_field<T: Static>(&mut self) -> Result<T, Error>;
        fn seq_node(&mut self) -> Result<usize, Error>;
        fn tuple_node(&mut self, arity: usize) -> Result<(), Error>;
        fn map_node<K: Static>(&mut self) -> Result<Vec<K>, Error>;
        fn option_node(&mut self) -> Result<bool, Error>;
        fn any_node(&mut self) -> Result<NodeView, Error>;
    }
}
