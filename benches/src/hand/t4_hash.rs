//! T4's operations on a `HashMap<String, f64>` written by hand. Kept for
//! rebuilding: the keys, a `Vec<String>` in sorted order. The library walks
//! a `HashMap` in sorted key order (two maps with the same keys iterate in
//! different orders, each with its own hasher seed, so only a sorted order
//! lines up their leaves), so the operations that hand out leaves in order
//! ([`flatten`], [`leaves`], [`flatten_with_path`]) sort the entries too.
//! The others need no order: [`map`] and [`sgd`] work in place, [`map2`]
//! looks each key of one map up in the other. What the type forces:
//! building a map ([`unflatten`], [`map2`]) clones one `String` per entry
//! and hashes every key.

use std::collections::HashMap;

use pytree_std::KeyPath;

/// The entries sorted by key, moved out of the map.
fn sorted(t: HashMap<String, f64>) -> Vec<(String, f64)> {
    let mut entries: Vec<(String, f64)> = t.into_iter().collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    entries
}

/// The leaves by value and the keys, in sorted key order (the floor for
/// `flatten`); the keys are moved out of the map, not cloned.
///
/// ```
/// use pytree_benches::{hand::t4_hash, shapes};
/// let (leaves, keys) = t4_hash::flatten(shapes::t4_hash());
/// assert_eq!(leaves, pytree_std::flatten(shapes::t4_hash()).0);
/// assert_eq!(keys[42], "k00042");
/// ```
pub fn flatten(t: HashMap<String, f64>) -> (Vec<f64>, Vec<String>) {
    super::t4::split(sorted(t).into_iter())
}

/// Builds the map from the kept keys (cloned, so they can be used again)
/// and the leaves in the keys' order (the floor for `unflatten`). Panics
/// if there are fewer leaves than keys.
///
/// ```
/// use pytree_benches::{hand::t4_hash, shapes};
/// let (leaves, keys) = t4_hash::flatten(shapes::t4_hash());
/// assert_eq!(t4_hash::unflatten(&keys, leaves.iter().copied()), shapes::t4_hash());
/// ```
pub fn unflatten(keys: &[String], leaves: impl IntoIterator<Item = f64>) -> HashMap<String, f64> {
    let mut map = HashMap::with_capacity(keys.len());
    let mut leaves = leaves.into_iter();
    for k in keys {
        map.insert(k.clone(), leaves.next().expect("too few leaves"));
    }
    map
}

/// `f` applied to every value in place (the map's table and keys are
/// reused). `f` is called in the map's own order, not in key order: the
/// same result for a pure `f` such as the benchmark's `x + 1`.
///
/// ```
/// use pytree_benches::{hand::t4_hash, shapes};
/// let t = shapes::t4_hash;
/// assert_eq!(t4_hash::map(t(), |x| -x), pytree_std::map(t(), |x| -x));
/// ```
pub fn map(mut t: HashMap<String, f64>, mut f: impl FnMut(f64) -> f64) -> HashMap<String, f64> {
    for x in t.values_mut() {
        *x = f(*x);
    }
    t
}

/// `f` applied to each entry of `a` and the entry of `b` under the same
/// key, into a new map (one key clone and one hash per entry, plus one
/// lookup in `b`). Panics if the keys differ (the library returns an error
/// there).
///
/// ```
/// use pytree_benches::{hand::t4_hash, shapes};
/// let (a, b) = (shapes::t4_hash(), shapes::t4_hash());
/// assert_eq!(t4_hash::map2(&a, &b, |x, y| x + y), pytree_std::walk::map_n(&a, [&b], |x, [y]| x + y)?);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn map2(
    a: &HashMap<String, f64>,
    b: &HashMap<String, f64>,
    mut f: impl FnMut(&f64, &f64) -> f64,
) -> HashMap<String, f64> {
    assert_eq!(a.len(), b.len(), "keys differ");
    a.iter()
        .map(|(k, x)| (k.clone(), f(x, b.get(k).expect("keys differ"))))
        .collect()
}

/// The SGD step in place: `p -= lr * g`, each gradient looked up by key.
/// Panics if the keys differ (the library returns an error there).
///
/// ```
/// use pytree_benches::{hand::t4_hash, shapes};
/// let mut p = shapes::t4_hash();
/// t4_hash::sgd(&mut p, &shapes::t4_hash(), 0.5);
/// assert_eq!(p["k00042"], 21.0);
/// ```
pub fn sgd(params: &mut HashMap<String, f64>, grads: &HashMap<String, f64>, lr: f64) {
    assert_eq!(params.len(), grads.len(), "keys differ");
    for (k, p) in params.iter_mut() {
        *p -= lr * grads.get(k).expect("keys differ");
    }
}

/// References to the values, in sorted key order.
///
/// ```
/// use pytree_benches::{hand::t4_hash, shapes};
/// let t = shapes::t4_hash();
/// assert_eq!(t4_hash::leaves(&t), pytree_std::leaves(&t));
/// ```
pub fn leaves(t: &HashMap<String, f64>) -> Vec<&f64> {
    let mut entries: Vec<(&String, &f64)> = t.iter().collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    entries.into_iter().map(|(_, v)| v).collect()
}

/// Every value with its key path (`["k00042"]`), in sorted key order,
/// consuming the map like `flatten_with_path`: the keys are moved into the
/// paths, not cloned.
///
/// ```
/// use pytree_benches::{hand::t4_hash, shapes};
/// let paths = t4_hash::flatten_with_path(shapes::t4_hash());
/// assert_eq!(paths, pytree_std::flatten_with_path(shapes::t4_hash()).0);
/// assert_eq!(paths[42].0.to_string(), r#"["k00042"]"#);
/// ```
pub fn flatten_with_path(t: HashMap<String, f64>) -> Vec<(KeyPath, f64)> {
    super::t4::with_paths(sorted(t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shapes::{t4_hash, T4_LEAVES};

    flatten_leaves_and_paths_test!(t4_hash, HashMap<String, f64>);

    #[test]
    fn hand_written_flatten_keeps_the_sorted_keys_for_unflatten() {
        let (values, keys) = flatten(t4_hash());
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(unflatten(&keys, values), t4_hash());
        let t = t4_hash();
        let expected: Vec<f64> = (0..T4_LEAVES).map(|i| i as f64).collect();
        assert_eq!(
            leaves(&t).into_iter().copied().collect::<Vec<_>>(),
            expected
        );
    }

    map_map2_and_sgd_test!(t4_hash);

    #[test]
    #[should_panic(expected = "keys differ")]
    fn hand_written_sgd_panics_on_other_keys() {
        let mut b = t4_hash();
        let x = b.remove("k00007").unwrap();
        b.insert("other".to_string(), x);
        sgd(&mut t4_hash(), &b, 0.01);
    }
}
