//! `HashMap<K, V, S>` (feature `std`): one `Map(len)` node, as a
//! `BTreeMap` is, flattened in sorted key order, so that its leaves come
//! out in the same order on every run, as JAX does for dicts. `map_leaves`
//! maps the values in place: the table and the keys are kept and nothing
//! is rehashed.

use alloc::vec::Vec;
use core::hash::BuildHasher;
use core::mem::ManuallyDrop;
use std::collections::HashMap;

use super::{check_sorted, key_mismatch, map_value_in_place, StdContainers};
use crate::__private::{all_some, elements_hint};
use crate::{
    Error, Flatten, KeyEntry, KeyRef, LeafMut, LeafRef, NodeRef, Sink, Source, Static, StaticValue,
    Unflatten, Visit, VisitMut,
};

/// A hash map's entries in sorted key order.
fn sorted_entries<K: Ord, V, S>(map: &HashMap<K, V, S>) -> Vec<(&K, &V)> {
    let mut entries: Vec<(&K, &V)> = map.iter().collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    entries
}

/// Checks that every other hash map has exactly the first map's keys.
fn check_hash_keys<K: Static + Ord, V, H: BuildHasher, const N: usize>(
    first: &HashMap<K, V, H>,
    others: [&HashMap<K, V, H>; N],
) -> Result<(), Error> {
    for (j, other) in others.iter().enumerate() {
        if other.len() != first.len() || !first.keys().all(|k| other.contains_key(k)) {
            let mut expected: Vec<&K> = first.keys().collect();
            let mut found: Vec<&K> = other.keys().collect();
            expected.sort();
            found.sort();
            return Err(key_mismatch(expected, found, j + 1));
        }
    }
    Ok(())
}

impl<Ns: StdContainers, K, V, H> Flatten<Ns> for HashMap<K, V, H>
where
    K: Static + Ord,
    V: Flatten<Ns>,
    H: BuildHasher + Default,
{
    type Leaf = V::Leaf;

    fn flatten_into<S: Sink<Self::Leaf>>(self, sink: &mut S) {
        sink.node(NodeRef::Map(self.len()));
        let mut entries: Vec<(K, V)> = self.into_iter().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut keys = Vec::with_capacity(entries.len());
        for (k, v) in entries {
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
        let entries = sorted_entries(self);
        for (k, v) in &entries {
            visitor.enter(KeyRef::Key(*k));
            v.visit(visitor);
            visitor.exit();
        }
        visitor.map_keys(|| {
            StaticValue::ordered_keys(entries.iter().map(|(k, _)| (*k).clone()).collect())
        });
    }
    fn visit_mut<'a, V2: VisitMut<LeafMut<'a, Ns, Self::Leaf>>>(&'a mut self, visitor: &mut V2) {
        visitor.node(NodeRef::Map(self.len()));
        let mut entries: Vec<(&K, &mut V)> = self.iter_mut().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        for (k, v) in entries {
            visitor.enter(KeyRef::Key(k));
            v.visit_mut(visitor);
            visitor.exit();
        }
    }
    /// Maps the values in place: the table and the keys are kept and
    /// nothing is rehashed. `f` is still called in sorted key order, the
    /// leaf order, not in the table's order: `f` may count or record what
    /// it sees (an `FnMut`), and the table's order differs from run to run
    /// (a new hasher seed) and from map to map, so only the sorted order
    /// gives the same calls as `flatten` and the same result every time.
    /// If `f` (or `K`'s `Ord`) panics, the map is leaked, not dropped.
    fn map_leaves<F: FnMut(Self::Leaf) -> Self::Leaf>(self, f: &mut F) -> Self {
        // Held in `ManuallyDrop` while values are moved out and back, so a
        // panic in `f` leaks the map instead of dropping a moved-out value.
        let mut map = ManuallyDrop::new(self);
        let mut entries: Vec<(&K, &mut V)> = map.iter_mut().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        for (_, v) in entries {
            // SAFETY: `map` is in `ManuallyDrop`, and nothing but
            // `map_value_in_place` touches the slot until it is refilled.
            unsafe { map_value_in_place(v, f) };
        }
        ManuallyDrop::into_inner(map)
    }
    fn zip_check<const N: usize>(&self, others: [&Self; N]) -> Result<(), Error> {
        check_hash_keys(self, others)?;
        if V::UNIFORM_LEAVES.is_some() {
            return Ok(());
        }
        // Values are checked in hash order (no sort on success); a failure
        // is looked for again in key order, so that the error is the
        // first mismatch in leaf order on every run.
        let check = |k: &K, v: &V| v.zip_check(others.map(|o| o.get(k).unwrap_or(v)));
        if self.iter().all(|(k, v)| check(k, v).is_ok()) {
            return Ok(());
        }
        for (k, v) in sorted_entries(self) {
            check(k, v).map_err(|e| e.at(KeyEntry::key(k.clone())))?;
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
        // Entries in key order, so that `f` sees the leaves in leaf order;
        // a key missing from another map (the check was skipped) takes
        // `self`'s value.
        sorted_entries(self)
            .into_iter()
            .map(|(k, v)| {
                let vs = others.map(|o| o.get(k).unwrap_or(v));
                (k.clone(), v.zip_with_prechecked(vs, f))
            })
            .collect()
    }
    fn zip_mut_prechecked<'a, const N: usize, F>(&'a mut self, others: [&'a Self; N], f: &mut F)
    where
        F: FnMut(LeafMut<'a, Ns, Self::Leaf>, [LeafRef<'a, Ns, Self::Leaf>; N]),
    {
        let mut entries: Vec<(&K, &mut V)> = self.iter_mut().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        for (k, v) in entries {
            // A key missing from another map (the check was skipped): the
            // value is left as it is.
            if let Some(vs) = all_some(others.map(|o| o.get(k))) {
                v.zip_mut_prechecked(vs, f);
            }
        }
    }
}

impl<Ns: StdContainers, K, V, H> Unflatten<Ns> for HashMap<K, V, H>
where
    K: Static + Ord,
    V: Unflatten<Ns>,
    H: BuildHasher + Default,
{
    fn unflatten_from<S: Source<Self::Leaf>>(source: &mut S) -> Result<Self, Error> {
        let keys = source.map_node::<K>()?;
        check_sorted(&keys)?;
        let mut out = HashMap::with_capacity_and_hasher(keys.len(), H::default());
        for k in keys {
            let v = V::unflatten_from(source).map_err(|e| e.at(KeyEntry::key(k.clone())))?;
            out.insert(k, v);
        }
        Ok(out)
    }
}
