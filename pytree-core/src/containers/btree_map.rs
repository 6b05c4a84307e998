//! `BTreeMap<K, V>`: one `Map(len)` node whose keys are static data (so
//! keys need `Ord + Clone + Eq + Hash + Debug`); children are the values in
//! key order, keyed `[key]`. `map_leaves` maps the values in place (see
//! `map_value_in_place` in `mod.rs`): the B-tree and its keys are kept.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use core::mem::ManuallyDrop;

use super::{check_sorted, key_mismatch, map_value_in_place, StdContainers};
use crate::__private::{all_some, elements_hint};
use crate::{
    Error, Flatten, KeyEntry, KeyRef, LeafMut, LeafRef, NodeRef, Sink, Source, Static, StaticValue,
    Unflatten, Visit, VisitMut,
};

/// Checks that every other map has exactly the first map's keys.
fn check_keys<K: Static + Ord, V, const N: usize>(
    first: &BTreeMap<K, V>,
    others: [&BTreeMap<K, V>; N],
) -> Result<(), Error> {
    for (j, other) in others.iter().enumerate() {
        if other.len() != first.len() || !other.keys().eq(first.keys()) {
            return Err(key_mismatch(first.keys(), other.keys(), j + 1));
        }
    }
    Ok(())
}

impl<Ns: StdContainers, K: Static + Ord, V: Flatten<Ns>> Flatten<Ns> for BTreeMap<K, V> {
    type Leaf = V::Leaf;

    fn flatten_into<S: Sink<Self::Leaf>>(self, sink: &mut S) {
        sink.node(NodeRef::Map(self.len()));
        let mut keys = Vec::with_capacity(self.len());
        for (k, v) in self {
            sink.enter(KeyRef::Key(&k));
            v.flatten_into(sink);
            sink.exit();
            keys.push(k);
        }
        sink.map_keys(move || StaticValue::ordered_keys(keys));
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
        visitor.map_keys(|| StaticValue::ordered_keys(self.keys().cloned().collect()));
    }
    fn visit_mut<'a, V2: VisitMut<LeafMut<'a, Ns, Self::Leaf>>>(&'a mut self, visitor: &mut V2) {
        visitor.node(NodeRef::Map(self.len()));
        for (k, v) in self.iter_mut() {
            visitor.enter(KeyRef::Key(k));
            v.visit_mut(visitor);
            visitor.exit();
        }
    }
    /// Maps the values in place, in key order (the map's own order): the
    /// B-tree and its keys are kept. If `f` panics, the map is leaked, not
    /// dropped.
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
        let mut iters = others.map(|o| o.values());
        for (k, v) in self {
            // Equal key sets (checked above): every iterator has a value.
            let vs = iters.each_mut().map(|it| it.next().unwrap_or(v));
            v.zip_check(vs)
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
        // Values are paired by position (the keys were checked); a map of
        // another size (the check was skipped) is replaced by `self`.
        let others = others.map(|o| if o.len() == self.len() { o } else { self });
        let mut iters = others.map(|o| o.values());
        self.iter()
            .map(|(k, v)| {
                let vs = iters.each_mut().map(|it| it.next().unwrap_or(v));
                (k.clone(), v.zip_with_prechecked(vs, f))
            })
            .collect()
    }
    fn zip_mut_prechecked<'a, const N: usize, F>(&'a mut self, others: [&'a Self; N], f: &mut F)
    where
        F: FnMut(LeafMut<'a, Ns, Self::Leaf>, [LeafRef<'a, Ns, Self::Leaf>; N]),
    {
        // Values are paired by position (the keys were checked); a map of
        // another size (the check was skipped) is left as it is.
        if others.iter().any(|o| o.len() != self.len()) {
            return;
        }
        let mut iters = others.map(|o| o.values());
        for v in self.values_mut() {
            let Some(vs) = all_some(iters.each_mut().map(Iterator::next)) else {
                return;
            };
            v.zip_mut_prechecked(vs, f);
        }
    }
}

impl<Ns: StdContainers, K: Static + Ord, V: Unflatten<Ns>> Unflatten<Ns> for BTreeMap<K, V> {
    fn unflatten_from<S: Source<Self::Leaf>>(source: &mut S) -> Result<Self, Error> {
        let keys = source.map_node::<K>()?;
        check_sorted(&keys)?;
        let mut entries = Vec::with_capacity(keys.len());
        for k in keys {
            match V::unflatten_from(source) {
                Ok(v) => entries.push((k, v)),
                Err(e) => return Err(e.at(KeyEntry::key(k))),
            }
        }
        // From sorted entries a BTreeMap is built in one pass, not by
        // inserting one key at a time.
        Ok(BTreeMap::from_iter(entries))
    }
}
