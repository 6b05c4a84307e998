//! `IndexMap<K, V, S>`: an insertion-ordered map node (optree's
//! `dict_insertion_ordered`, Python's dict order), as the maps of
//! pytree-std's `Tree` are. One `Map(len)` node whose children are the
//! values in the map's own order, keyed `[key]`; the keys are static data
//! recorded *unordered*
//! ([`StaticValue::keys`](crate::StaticValue::keys)), so operations
//! that merge key sets (`Treelize`, prefix trees) follow the first tree's
//! order rather than sorting. Keys need `Clone + Eq + Hash + Debug + Send + Sync`, not
//! `Ord`.
//!
//! In multi-tree operations (`zip_check`, `map2`, `map_n`, `zip_mut`)
//! entries pair by key: two maps with the same keys in different orders
//! zip, and the result has the first map's order. Their TreeDefs still
//! differ (the order is part of the structure), so `tree_equal` and
//! `check_same_structure` tell them apart, as they do for `Tree`s.
//!
//! Behind this crate's feature `indexmap`, which pytree-std turns on
//! (its `Tree` is built on indexmap); the examples are in pytree-std's
//! `impls/indexmap.rs`.
//!
//! Paths name the keys; values are mapped in place, in the map's order; a
//! map is rebuilt in the TreeDef's key order, and a key that appears twice
//! there is an error (a value would be lost).

use alloc::format;
use alloc::vec::Vec;
use core::hash::{BuildHasher, Hash};
use core::mem::ManuallyDrop;

use indexmap::map::Entry;
use indexmap::IndexMap;

use super::{map_value_in_place, StdContainers};
use crate::__private::{all_some, elements_hint};
use crate::{
    Error, ErrorKind, Flatten, KeyEntry, KeyRef, LeafMut, LeafRef, NodeRef, Sink, Source, Static,
    StaticValue, Unflatten, Visit, VisitMut,
};

/// The error for maps whose key sets differ; lists both key sets in their
/// maps' orders.
#[cold]
fn key_mismatch<K: Static, V, S>(
    expected: &IndexMap<K, V, S>,
    found: &IndexMap<K, V, S>,
    tree: usize,
) -> Error {
    let show = |m: &IndexMap<K, V, S>| m.keys().map(|k| format!("{k:?}")).collect();
    Error::new(ErrorKind::KeyMismatch {
        expected: show(expected),
        found: show(found),
    })
    .in_tree(tree)
}

/// Checks that every other map has exactly the first map's keys, in any
/// order.
fn check_keys<K: Static, V, S: BuildHasher, const N: usize>(
    first: &IndexMap<K, V, S>,
    others: [&IndexMap<K, V, S>; N],
) -> Result<(), Error> {
    for (j, other) in others.iter().enumerate() {
        if other.len() != first.len() || !first.keys().all(|k| other.contains_key(k)) {
            return Err(key_mismatch(first, other, j + 1));
        }
    }
    Ok(())
}

/// An insertion-ordered map node; see the module docs.
impl<Ns: StdContainers, K, V, S> Flatten<Ns> for IndexMap<K, V, S>
where
    K: Static,
    V: Flatten<Ns>,
    S: BuildHasher + Default,
{
    type Leaf = V::Leaf;

    fn flatten_into<Si: Sink<Self::Leaf>>(self, sink: &mut Si) {
        sink.node(NodeRef::Map(self.len()));
        let mut keys = Vec::with_capacity(self.len());
        for (k, v) in self {
            sink.enter(KeyRef::Key(&k));
            v.flatten_into(sink);
            sink.exit();
            keys.push(k);
        }
        sink.map_keys(move || StaticValue::keys(keys));
    }
    #[inline]
    fn leaf_count_hint(&self) -> usize {
        elements_hint::<Ns, V>(self.len())
    }
    fn visit<'a, V2: Visit<LeafRef<'a, Ns, Self::Leaf>>>(&'a self, visitor: &mut V2) {
        visitor.node(NodeRef::Map(self.len()));
        visitor.reserve_leaves(elements_hint::<Ns, V>(self.len()));
        for (k, v) in self {
            visitor.enter(KeyRef::Key(k));
            v.visit(visitor);
            visitor.exit();
        }
        visitor.map_keys(|| StaticValue::keys(self.keys().cloned().collect()));
    }
    fn visit_mut<'a, V2: VisitMut<LeafMut<'a, Ns, Self::Leaf>>>(&'a mut self, visitor: &mut V2) {
        visitor.node(NodeRef::Map(self.len()));
        for (k, v) in self.iter_mut() {
            visitor.enter(KeyRef::Key(k));
            v.visit_mut(visitor);
            visitor.exit();
        }
    }
    /// Maps the values in place, in the map's order: the table and the
    /// keys are kept, nothing is rehashed. If `f` panics, the map is
    /// leaked, not dropped.
    fn map_leaves<F: FnMut(Self::Leaf) -> Self::Leaf>(self, f: &mut F) -> Self {
        // Held in `ManuallyDrop` while values are moved out and back, so a
        // panic in `f` leaks the map instead of dropping a moved-out value.
        let mut map = ManuallyDrop::new(self);
        for v in map.values_mut() {
            // SAFETY: `map` is in `ManuallyDrop`, and nothing but
            // `map_value_in_place` touches the slot until it is refilled.
            unsafe { map_value_in_place(v, f) };
        }
        ManuallyDrop::into_inner(map)
    }
    fn zip_check<const N: usize>(&self, others: [&Self; N]) -> Result<(), Error> {
        check_keys(self, others)?;
        if V::UNIFORM_LEAVES.is_some() {
            return Ok(());
        }
        for (k, v) in self {
            // Equal key sets (checked above): every map has the key.
            v.zip_check(others.map(|o| o.get(k).unwrap_or(v)))
                .map_err(|e| e.at(KeyEntry::key(k.clone())))?;
        }
        Ok(())
    }
    fn zip_with_prechecked<'a, const N: usize, F>(
        &'a self,
        others: [&'a Self; N],
        f: &mut F,
    ) -> Self
    where
        F: FnMut(LeafRef<'a, Ns, Self::Leaf>, [LeafRef<'a, Ns, Self::Leaf>; N]) -> Self::Leaf,
    {
        // In `self`'s order, values paired by key; a key missing from
        // another map (the check was skipped) takes `self`'s value.
        let mut out = IndexMap::with_capacity_and_hasher(self.len(), S::default());
        for (k, v) in self {
            let vs = others.map(|o| o.get(k).unwrap_or(v));
            out.insert(k.clone(), v.zip_with_prechecked(vs, f));
        }
        out
    }
    fn zip_mut_prechecked<'a, const N: usize, F>(&'a mut self, others: [&'a Self; N], f: &mut F)
    where
        F: FnMut(LeafMut<'a, Ns, Self::Leaf>, [LeafRef<'a, Ns, Self::Leaf>; N]),
    {
        for (k, v) in self.iter_mut() {
            // A key missing from another map (the check was skipped): the
            // value is left as it is.
            if let Some(vs) = all_some(others.map(|o| o.get(k))) {
                v.zip_mut_prechecked(vs, f);
            }
        }
    }
}

/// Rebuilt in the TreeDef's key order; a key that appears twice in the
/// TreeDef is an error (a value would be lost).
impl<Ns: StdContainers, K, V, S> Unflatten<Ns> for IndexMap<K, V, S>
where
    K: Static,
    V: Unflatten<Ns>,
    S: BuildHasher + Default,
{
    fn unflatten_from<Si: Source<Self::Leaf>>(source: &mut Si) -> Result<Self, Error> {
        let keys = source.map_node::<K>()?;
        let mut out = IndexMap::with_capacity_and_hasher(keys.len(), S::default());
        for k in keys {
            let v = V::unflatten_from(source).map_err(|e| e.at(KeyEntry::key(k.clone())))?;
            match out.entry(k) {
                Entry::Vacant(slot) => {
                    slot.insert(v);
                }
                Entry::Occupied(slot) => return Err(repeated_key(slot.key())),
            }
        }
        Ok(out)
    }
}

#[cold]
fn repeated_key<K: Static + Hash>(key: &K) -> Error {
    Error::custom(format!("map key {key:?} appears twice in the TreeDef"))
        .at(KeyEntry::key(key.clone()))
}
