//! T4's operations on a `BTreeMap<String, f64>` written by hand. Kept for
//! rebuilding: the keys, a `Vec<String>` in key order. What the type
//! forces: building a map ([`unflatten`], [`map2`]) clones one `String` per
//! entry (the kept keys must stay reusable, and the input maps are
//! borrowed) and allocates the B-tree's nodes; consuming one ([`flatten`],
//! [`flatten_with_path`]) frees the nodes. A `BTreeMap` iterates in key
//! order, which is the library's leaf order, so nothing is sorted.

use std::collections::BTreeMap;

use pytree_std::{paths::KeyEntry, KeyPath};

/// The leaves by value and the keys, in key order (the floor for
/// `flatten`); the keys are moved out of the map, not cloned.
///
/// ```
/// use pytree_benches::{hand::t4, shapes};
/// let (leaves, keys) = t4::flatten(shapes::t4());
/// assert_eq!(leaves, pytree_std::flatten(shapes::t4()).0);
/// assert_eq!(keys[42], "k00042");
/// ```
pub fn flatten(t: BTreeMap<String, f64>) -> (Vec<f64>, Vec<String>) {
    split(t.into_iter())
}

/// [`flatten`] of the entries in their order (`t4_hash` sorts them first).
pub(super) fn split(
    entries: impl ExactSizeIterator<Item = (String, f64)>,
) -> (Vec<f64>, Vec<String>) {
    let mut leaves = Vec::with_capacity(entries.len());
    let mut keys = Vec::with_capacity(entries.len());
    for (k, v) in entries {
        keys.push(k);
        leaves.push(v);
    }
    (leaves, keys)
}

/// Builds the map from the kept keys (cloned, so they can be used again)
/// and the leaves in key order (the floor for `unflatten`). Panics if
/// there are fewer leaves than keys.
///
/// ```
/// use pytree_benches::{hand::t4, shapes};
/// let (leaves, keys) = t4::flatten(shapes::t4());
/// assert_eq!(t4::unflatten(&keys, leaves.iter().copied()), shapes::t4());
/// ```
pub fn unflatten(keys: &[String], leaves: impl IntoIterator<Item = f64>) -> BTreeMap<String, f64> {
    let map: BTreeMap<String, f64> = keys.iter().cloned().zip(leaves).collect();
    assert_eq!(map.len(), keys.len(), "too few leaves");
    map
}

/// `f` applied to every value, in key order, in place (the map's nodes and
/// keys are reused).
///
/// ```
/// use pytree_benches::{hand::t4, shapes};
/// assert_eq!(t4::map(shapes::t4(), |x| -x), pytree_std::map(shapes::t4(), |x| -x));
/// ```
pub fn map(mut t: BTreeMap<String, f64>, mut f: impl FnMut(f64) -> f64) -> BTreeMap<String, f64> {
    for x in t.values_mut() {
        *x = f(*x);
    }
    t
}

/// `f` applied entry by entry to two maps walked side by side in key
/// order, into a new map (one key clone per entry). Panics if the keys
/// differ (the library returns an error there).
///
/// ```
/// use pytree_benches::{hand::t4, shapes};
/// let (a, b) = (shapes::t4(), shapes::t4());
/// assert_eq!(t4::map2(&a, &b, |x, y| x + y), pytree_std::walk::map_n(&a, [&b], |x, [y]| x + y)?);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn map2(
    a: &BTreeMap<String, f64>,
    b: &BTreeMap<String, f64>,
    mut f: impl FnMut(&f64, &f64) -> f64,
) -> BTreeMap<String, f64> {
    assert_eq!(a.len(), b.len(), "keys differ");
    a.iter()
        .zip(b)
        .map(|((ka, x), (kb, y))| {
            assert_eq!(ka, kb, "keys differ");
            (ka.clone(), f(x, y))
        })
        .collect()
}

/// The SGD step in place: `p -= lr * g` for every entry, the two maps
/// walked side by side. Panics if the keys differ (the library returns an
/// error there).
///
/// ```
/// use pytree_benches::{hand::t4, shapes};
/// let mut p = shapes::t4();
/// t4::sgd(&mut p, &shapes::t4(), 0.5);
/// assert_eq!(p["k00042"], 21.0);
/// ```
pub fn sgd(params: &mut BTreeMap<String, f64>, grads: &BTreeMap<String, f64>, lr: f64) {
    assert_eq!(params.len(), grads.len(), "keys differ");
    for ((kp, p), (kg, g)) in params.iter_mut().zip(grads) {
        assert_eq!(kp, kg, "keys differ");
        *p -= lr * g;
    }
}

/// References to the values, in key order.
///
/// ```
/// use pytree_benches::{hand::t4, shapes};
/// let t = shapes::t4();
/// assert_eq!(t4::leaves(&t), pytree_std::leaves(&t));
/// ```
pub fn leaves(t: &BTreeMap<String, f64>) -> Vec<&f64> {
    t.values().collect()
}

/// Every value with its key path (`["k00042"]`, one `KeyEntry::Key` each),
/// consuming the map like `flatten_with_path`: the keys are moved into the
/// paths, not cloned.
///
/// ```
/// use pytree_benches::{hand::t4, shapes};
/// let paths = t4::flatten_with_path(shapes::t4());
/// assert_eq!(paths, pytree_std::flatten_with_path(shapes::t4()).0);
/// assert_eq!(paths[42].0.to_string(), r#"["k00042"]"#);
/// ```
pub fn flatten_with_path(t: BTreeMap<String, f64>) -> Vec<(KeyPath, f64)> {
    with_paths(t)
}

/// [`flatten_with_path`] of the entries in their order (`t4_hash` sorts
/// them first).
pub(super) fn with_paths(entries: impl IntoIterator<Item = (String, f64)>) -> Vec<(KeyPath, f64)> {
    let path = |k| KeyPath::from_entries(vec![KeyEntry::key(k)]);
    entries.into_iter().map(|(k, v)| (path(k), v)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shapes::{t4, T4_LEAVES};

    flatten_leaves_and_paths_test!(t4, BTreeMap<String, f64>);

    #[test]
    fn hand_written_flatten_keeps_the_keys_for_unflatten() {
        let (leaves, keys) = flatten(t4());
        assert_eq!(keys.len(), T4_LEAVES);
        assert_eq!(unflatten(&keys, leaves), t4());
        assert_eq!(flatten_with_path(t4()).len(), T4_LEAVES);
    }

    map_map2_and_sgd_test!(t4);

    #[test]
    #[should_panic(expected = "keys differ")]
    fn hand_written_map2_panics_on_other_keys() {
        let mut b = t4();
        let x = b.remove("k00007").unwrap();
        b.insert("other".to_string(), x);
        map2(&t4(), &b, |x, y| x + y);
    }
}
