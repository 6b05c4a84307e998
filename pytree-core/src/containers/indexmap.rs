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
use core::hash::BuildHasher;

use indexmap::map::Entry;
use indexmap::IndexMap;

use super::maps::{key_mismatch, keyed_map_impls, paired_by_key, walked_in_own_order, KeyedMap};
use crate::error::Error;
use crate::paths::key_path::KeyEntry;
use crate::static_data::{Static, StaticValue};

/// The error for a key that appears twice in the TreeDef.
#[cold]
fn repeated_key<K: Static>(key: &K) -> Error {
    Error::custom(format!("map key {key:?} appears twice in the TreeDef"))
        .at(KeyEntry::key(key.clone()))
}

/// An insertion-ordered map node; see the module docs.
impl<K: Static, V, S: BuildHasher + Default> KeyedMap for IndexMap<K, V, S> {
    type Key = K;
    type Value = V;
    const POSITIONAL: bool = false;
    const CHECK_UNORDERED_FIRST: bool = false;

    walked_in_own_order!(IndexMap);
    paired_by_key!();
    /// Every other map has exactly the first map's keys, in any order.
    fn check_keys<const N: usize>(&self, others: [&Self; N]) -> Result<(), Error> {
        for (j, other) in others.iter().enumerate() {
            if other.len() != self.len() || !self.keys().all(|k| other.contains_key(k)) {
                // Both key sets, each in its map's order.
                return Err(key_mismatch(self.keys(), other.keys(), j + 1));
            }
        }
        Ok(())
    }
    #[inline]
    fn record_keys(keys: Vec<K>) -> StaticValue {
        StaticValue::keys(keys)
    }

    /// Rebuilt in the TreeDef's key order; a key that appears twice in the
    /// TreeDef is an error (a value would be lost).
    type Builder = Self;
    #[inline]
    fn check_read_keys(_keys: &[K]) -> Result<(), Error> {
        // Checked as the entries come (`push`): hashing them twice would
        // cost the reads that succeed.
        Ok(())
    }
    #[inline]
    fn builder(len: usize) -> Self {
        IndexMap::with_capacity_and_hasher(len, S::default())
    }
    #[inline]
    fn push(builder: &mut Self, key: K, value: V) -> Result<(), (Error, V)> {
        match builder.entry(key) {
            Entry::Vacant(slot) => {
                slot.insert(value);
                Ok(())
            }
            Entry::Occupied(slot) => Err((repeated_key(slot.key()), value)),
        }
    }
}

keyed_map_impls!(impl<K, V, H> IndexMap<K, V, H> where [K: Static, H: BuildHasher + Default]);
