//! `HashMap<K, V, S>` (feature `std`): a keyed map (see `maps.rs`) walked
//! in sorted key order, not the table's, so that its leaves come out in the
//! same order on every run, as JAX does for dicts (keys need `Ord`); the
//! values of other maps are looked up by key; `zip_check` checks in the
//! table's order first and sorts only to report a mismatch.

use alloc::vec::Vec;
use core::hash::BuildHasher;
use std::collections::HashMap;

use super::maps::{check_sorted, key_mismatch, keyed_map_impls, paired_by_key, KeyedMap};
use crate::error::Error;
use crate::static_data::{Static, StaticValue};

/// A hash map's entries in sorted key order.
fn sorted_entries<K: Ord, V, S>(map: &HashMap<K, V, S>) -> Vec<(&K, &V)> {
    let mut entries: Vec<(&K, &V)> = map.iter().collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    entries
}

impl<K: Static + Ord, V, H: BuildHasher + Default> KeyedMap for HashMap<K, V, H> {
    type Key = K;
    type Value = V;
    const POSITIONAL: bool = false;
    const CHECK_UNORDERED_FIRST: bool = true;

    #[inline]
    fn len(&self) -> usize {
        HashMap::len(self)
    }
    #[inline]
    fn into_entries(self) -> impl Iterator<Item = (K, V)> {
        let mut entries: Vec<(K, V)> = self.into_iter().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        entries.into_iter()
    }
    type Entries<'a>
        = Vec<(&'a K, &'a V)>
    where
        Self: 'a;
    #[inline]
    fn entries(&self) -> Vec<(&K, &V)> {
        sorted_entries(self)
    }
    #[inline]
    fn iter<'s, 'a: 's>(
        entries: &'s Vec<(&'a K, &'a V)>,
    ) -> impl ExactSizeIterator<Item = (&'a K, &'a V)> + 's
    where
        Self: 'a,
    {
        entries.iter().copied()
    }
    #[inline]
    fn entries_mut(&mut self) -> impl Iterator<Item = (&K, &mut V)> {
        let mut entries: Vec<(&K, &mut V)> = self.iter_mut().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        entries.into_iter()
    }
    #[inline]
    fn unordered(&self) -> impl Iterator<Item = (&K, &V)> {
        self.iter()
    }
    #[inline]
    fn get(&self, key: &K) -> Option<&V> {
        HashMap::get(self, key)
    }
    paired_by_key!();
    fn check_keys<const N: usize>(&self, others: [&Self; N]) -> Result<(), Error> {
        for (j, other) in others.iter().enumerate() {
            if other.len() != self.len() || !self.keys().all(|k| other.contains_key(k)) {
                let mut expected: Vec<&K> = self.keys().collect();
                let mut found: Vec<&K> = other.keys().collect();
                expected.sort();
                found.sort();
                return Err(key_mismatch(expected, found, j + 1));
            }
        }
        Ok(())
    }
    #[inline]
    fn record_keys(keys: Vec<K>) -> StaticValue {
        StaticValue::ordered_keys(keys)
    }

    type Builder = Self;
    #[inline]
    fn check_read_keys(keys: &[K]) -> Result<(), Error> {
        check_sorted(keys)
    }
    #[inline]
    fn builder(len: usize) -> Self {
        HashMap::with_capacity_and_hasher(len, H::default())
    }
    #[inline]
    fn push(builder: &mut Self, key: K, value: V) -> Result<(), (Error, V)> {
        // Keys were checked unique (`check_read_keys`, or the keys of a
        // map); a repeated one would hand back the value it replaces.
        match builder.insert(key, value) {
            None => Ok(()),
            Some(old) => Err((Error::custom("a map key repeats"), old)),
        }
    }
}

keyed_map_impls!(impl<K, V, H> HashMap<K, V, H> where [K: Static + Ord, H: BuildHasher + Default]);
