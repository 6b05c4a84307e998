//! `BTreeMap<K, V>`: a keyed map (see `maps.rs`) whose keys are recorded
//! sorted (so keys need `Ord` as well as `Static`), walked in key order,
//! the map's own; the values of other maps are paired by position (their
//! keys were checked equal); rebuilt in one pass from the TreeDef's sorted
//! keys.

use alloc::collections::btree_map::{BTreeMap, Values};
use alloc::vec::Vec;

use super::maps::{check_sorted, key_mismatch, keyed_map_impls, walked_in_own_order, KeyedMap};
use crate::error::Error;
use crate::static_data::{Static, StaticValue};

impl<K: Static + Ord, V> KeyedMap for BTreeMap<K, V> {
    type Key = K;
    type Value = V;
    const POSITIONAL: bool = true;
    const CHECK_UNORDERED_FIRST: bool = false;

    walked_in_own_order!(BTreeMap);
    type Cursor<'a>
        = Values<'a, K, V>
    where
        Self: 'a;
    #[inline]
    fn cursor(other: &Self) -> Values<'_, K, V> {
        other.values()
    }
    #[inline]
    fn partner<'a>(cursor: &mut Values<'a, K, V>, _key: &K) -> Option<&'a V>
    where
        Self: 'a,
    {
        cursor.next()
    }
    fn check_keys<const N: usize>(&self, others: [&Self; N]) -> Result<(), Error> {
        for (j, other) in others.iter().enumerate() {
            if other.len() != self.len() || !other.keys().eq(self.keys()) {
                return Err(key_mismatch(self.keys(), other.keys(), j + 1));
            }
        }
        Ok(())
    }
    #[inline]
    fn record_keys(keys: Vec<K>) -> StaticValue {
        StaticValue::ordered_keys(keys)
    }

    type Builder = Vec<(K, V)>;
    #[inline]
    fn check_read_keys(keys: &[K]) -> Result<(), Error> {
        check_sorted(keys)
    }
    #[inline]
    fn builder(len: usize) -> Vec<(K, V)> {
        Vec::with_capacity(len)
    }
    #[inline]
    fn push(builder: &mut Vec<(K, V)>, key: K, value: V) -> Result<(), (Error, V)> {
        builder.push((key, value));
        Ok(())
    }
    #[inline]
    fn finish(builder: Vec<(K, V)>) -> Self {
        // From sorted entries a BTreeMap is built in one pass, not by
        // inserting one key at a time.
        BTreeMap::from_iter(builder)
    }
}

keyed_map_impls!(impl<K, V> BTreeMap<K, V> where [K: Static + Ord]);
