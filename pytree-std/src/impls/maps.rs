//! Maps: `BTreeMap<K, V>` and `HashMap<K, V, S>`. One `Map(len)` node whose
//! keys are static data (so keys need `Ord + Clone + Eq + Hash + Debug`);
//! children are the values in sorted key order, keyed `[key]`. A `HashMap`
//! is flattened in sorted key order too, so its leaves come out in the same
//! order on every run, as JAX does for dicts.
//!
//! `map_leaves` maps the values in place (see [`map_value_in_place`]): the
//! map keeps its nodes or table and its keys, and nothing is rehashed.

/// The impls for namespace `$ns` (expanded once for `Std`, and by
/// [`std_containers!`](crate::std_containers) for a user namespace).
#[doc(hidden)]
#[macro_export]
macro_rules! __pytree_maps {
    ($ns:ty) => {
        const _: () = {
            use ::std::collections::{BTreeMap, HashMap};
            use ::std::hash::BuildHasher;
            use ::std::mem::ManuallyDrop;
            use ::std::ptr;
            #[allow(unused_imports)]
            use $crate::__private::{
                all_some, check_lengths, elements_hint, ensure_stack, zip_elements_check,
                zip_slices_check, zip_slices_mut_prechecked, zip_slices_prechecked,
            };
            #[allow(unused_imports)]
            use $crate::{
                Error, ErrorKind, Flatten, KeyEntry, KeyRef, LeafMut, LeafRef, NodeRef, Sink,
                Source, Static, StaticValue, Unflatten, Visit, VisitMut,
            };
            /// The namespace these impls are for.
            type Std = $ns;

            /// The error for maps whose key sets differ; lists both key sets.
            #[cold]
            fn key_mismatch<'k, K: Static + 'k>(
                expected: impl IntoIterator<Item = &'k K>,
                found: impl IntoIterator<Item = &'k K>,
                tree: usize,
            ) -> Error {
                let show = |keys: &mut dyn Iterator<Item = &'k K>| {
                    keys.map(|k| format!("{k:?}")).collect()
                };
                Error::new(ErrorKind::KeyMismatch {
                    expected: show(&mut expected.into_iter()),
                    found: show(&mut found.into_iter()),
                })
                .in_tree(tree)
            }

            /// Replaces the value in `slot` by `value.map_leaves(f)`, moving it out of
            /// the slot and back: the way a map's values are mapped without rebuilding
            /// the map (`map_leaves` takes its leaves by value, so `values_mut` alone
            /// cannot do it).
            ///
            /// # Safety
            ///
            /// While `f` runs, the slot's value has been moved out. If `f` panics, the
            /// slot is left holding a value that has been (or is being) dropped
            /// elsewhere, so the caller must never drop or read it after an unwind:
            /// the map that owns the slot must be held in [`ManuallyDrop`] while its
            /// values are mapped, so that a panic leaks the map (sound) instead of
            /// dropping that value a second time (unsound).
            #[inline(always)]
            unsafe fn map_value_in_place<V: Flatten<Std>, F: FnMut(V::Leaf) -> V::Leaf>(
                slot: &mut V,
                f: &mut F,
            ) {
                // SAFETY: `slot` is valid for reads and writes (a `&mut`); the value is
                // read out once and a value is written back before the slot is used
                // again. On unwind the caller leaks the slot's owner (see above).
                unsafe {
                    let value = ptr::read(slot);
                    ptr::write(slot, value.map_leaves(f));
                }
            }

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

            /// Checks that unflattened keys are strictly increasing, so that no value is
            /// dropped by a repeated key.
            fn check_sorted<K: Static + Ord>(keys: &[K]) -> Result<(), Error> {
                match keys.windows(2).position(|w| w[0] >= w[1]) {
                    None => Ok(()),
                    Some(i) => Err(Error::custom(format!(
                        "map keys in the TreeDef are not sorted and unique: {:?} then {:?}",
                        keys[i],
                        keys[i + 1]
                    ))),
                }
            }

            impl<K: Static + Ord, V: Flatten<Std>> Flatten<Std> for BTreeMap<K, V> {
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
                    elements_hint::<Std, V>(self.len())
                }
                fn visit<'a, V2: Visit<LeafRef<'a, Std, Self::Leaf>>>(&'a self, visitor: &mut V2) {
                    visitor.node(NodeRef::Map(self.len()));
                    visitor.reserve_leaves(elements_hint::<Std, V>(self.len()));
                    for (k, v) in self {
                        visitor.enter(KeyRef::Key(k));
                        v.visit(visitor);
                        visitor.exit();
                    }
                    visitor.map_keys(|| StaticValue::ordered_keys(self.keys().cloned().collect()));
                }
                fn visit_mut<'a, V2: VisitMut<LeafMut<'a, Std, Self::Leaf>>>(
                    &'a mut self,
                    visitor: &mut V2,
                ) {
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
                    F: FnMut(
                        LeafRef<'a, Std, Self::Leaf>,
                        [LeafRef<'a, Std, Self::Leaf>; N],
                    ) -> Self::Leaf,
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
                fn zip_mut_prechecked<'a, const N: usize, F>(
                    &'a mut self,
                    others: [&'a Self; N],
                    f: &mut F,
                ) where
                    F: FnMut(LeafMut<'a, Std, Self::Leaf>, [LeafRef<'a, Std, Self::Leaf>; N]),
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

            impl<K: Static + Ord, V: Unflatten<Std>> Unflatten<Std> for BTreeMap<K, V> {
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

            impl<K, V, H> Flatten<Std> for HashMap<K, V, H>
            where
                K: Static + Ord,
                V: Flatten<Std>,
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
                    elements_hint::<Std, V>(self.len())
                }
                fn visit<'a, V2: Visit<LeafRef<'a, Std, Self::Leaf>>>(&'a self, visitor: &mut V2) {
                    visitor.node(NodeRef::Map(self.len()));
                    visitor.reserve_leaves(elements_hint::<Std, V>(self.len()));
                    let entries = sorted_entries(self);
                    for (k, v) in &entries {
                        visitor.enter(KeyRef::Key(*k));
                        v.visit(visitor);
                        visitor.exit();
                    }
                    visitor.map_keys(|| {
                        StaticValue::ordered_keys(
                            entries.iter().map(|(k, _)| (*k).clone()).collect(),
                        )
                    });
                }
                fn visit_mut<'a, V2: VisitMut<LeafMut<'a, Std, Self::Leaf>>>(
                    &'a mut self,
                    visitor: &mut V2,
                ) {
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
                    F: FnMut(
                        LeafRef<'a, Std, Self::Leaf>,
                        [LeafRef<'a, Std, Self::Leaf>; N],
                    ) -> Self::Leaf,
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
                fn zip_mut_prechecked<'a, const N: usize, F>(
                    &'a mut self,
                    others: [&'a Self; N],
                    f: &mut F,
                ) where
                    F: FnMut(LeafMut<'a, Std, Self::Leaf>, [LeafRef<'a, Std, Self::Leaf>; N]),
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

            impl<K, V, H> Unflatten<Std> for HashMap<K, V, H>
            where
                K: Static + Ord,
                V: Unflatten<Std>,
                H: BuildHasher + Default,
            {
                fn unflatten_from<S: Source<Self::Leaf>>(source: &mut S) -> Result<Self, Error> {
                    let keys = source.map_node::<K>()?;
                    check_sorted(&keys)?;
                    let mut out = HashMap::with_capacity_and_hasher(keys.len(), H::default());
                    for k in keys {
                        let v = V::unflatten_from(source)
                            .map_err(|e| e.at(KeyEntry::key(k.clone())))?;
                        out.insert(k, v);
                    }
                    Ok(out)
                }
            }
        };
    };
}
