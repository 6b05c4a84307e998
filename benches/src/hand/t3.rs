//! T3's operations (a chain of [`Deep`] levels through `Box`) written by
//! hand, as loops rather than recursion, so that any depth works. Kept for
//! rebuilding: the depth (the number of `Level`s). What the type forces:
//! building a chain ([`unflatten`], [`map2`]) allocates one `Box` per level,
//! and consuming one ([`flatten`], [`flatten_with_path`]) frees one per
//! level; [`map`] reuses the boxes in place.

use pytree_std::{paths::KeyEntry, KeyPath};

use crate::shapes::Deep;

/// The leaves by value, top first, and the depth (the floor for `flatten`).
/// Frees each `Box` as it moves out of it.
///
/// ```
/// use pytree_benches::{hand::t3, shapes};
/// let (leaves, depth) = t3::flatten(shapes::t3());
/// assert_eq!(leaves, pytree_std::flatten(shapes::t3()).0);
/// assert_eq!(depth, shapes::T3_DEPTH);
/// ```
pub fn flatten(t: Deep) -> (Vec<f64>, usize) {
    let mut leaves = Vec::new();
    let mut node = t;
    loop {
        match node {
            Deep::Level(x, next) => {
                leaves.push(x);
                node = *next;
            }
            Deep::End(x) => {
                leaves.push(x);
                let depth = leaves.len() - 1;
                return (leaves, depth);
            }
        }
    }
}

/// Builds a chain of `depth` levels from its `depth + 1` leaves, top first
/// (the floor for `unflatten`): bottom up, one `Box` per level. Takes a
/// slice, since the last leaf is placed first. Panics if the number of
/// leaves is not `depth + 1`.
///
/// ```
/// use pytree_benches::{hand::t3, shapes};
/// let (leaves, def) = pytree_std::flatten(shapes::t3());
/// let lib: shapes::Deep = pytree_std::unflatten(&def, leaves.iter().copied())?;
/// assert_eq!(t3::unflatten(shapes::T3_DEPTH, &leaves), lib);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn unflatten(depth: usize, leaves: &[f64]) -> Deep {
    assert_eq!(
        leaves.len(),
        depth + 1,
        "a chain of {depth} levels has {} leaves",
        depth + 1
    );
    let mut node = Deep::End(leaves[depth]);
    for &x in leaves[..depth].iter().rev() {
        node = Deep::Level(x, Box::new(node));
    }
    node
}

/// `f` applied to every leaf, top first, in place (each `Box` is reused).
///
/// ```
/// use pytree_benches::{hand::t3, shapes};
/// assert_eq!(t3::map(shapes::t3(), |x| x + 1.0), pytree_std::map(shapes::t3(), |x| x + 1.0));
/// ```
pub fn map(mut t: Deep, mut f: impl FnMut(f64) -> f64) -> Deep {
    let mut node = &mut t;
    loop {
        match node {
            Deep::Level(x, next) => {
                *x = f(*x);
                node = next;
            }
            Deep::End(x) => {
                *x = f(*x);
                break;
            }
        }
    }
    t
}

/// `f` applied leaf by leaf to two chains, building the output top down
/// (one `Box` per level). Panics if the depths differ (the library returns
/// an error there).
///
/// ```
/// use pytree_benches::{hand::t3, shapes};
/// let (a, b) = (shapes::t3(), shapes::t3());
/// assert_eq!(t3::map2(&a, &b, |x, y| x + y), pytree_std::walk::map_n(&a, [&b], |x, [y]| x + y)?);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn map2(a: &Deep, b: &Deep, mut f: impl FnMut(&f64, &f64) -> f64) -> Deep {
    let mut out = Deep::End(0.0);
    let mut slot = &mut out;
    let (mut a, mut b) = (a, b);
    loop {
        match (a, b) {
            (Deep::Level(x, na), Deep::Level(y, nb)) => {
                *slot = Deep::Level(f(x, y), Box::new(Deep::End(0.0)));
                let Deep::Level(_, next) = slot else {
                    unreachable!("just written as a level")
                };
                slot = next;
                (a, b) = (na, nb);
            }
            (Deep::End(x), Deep::End(y)) => {
                *slot = Deep::End(f(x, y));
                return out;
            }
            _ => panic!("depths differ"),
        }
    }
}

/// The SGD step in place: `p -= lr * g` for every leaf. Panics if the
/// depths differ (the library returns an error there).
///
/// ```
/// use pytree_benches::{hand::t3, shapes};
/// let mut p = shapes::t3();
/// t3::sgd(&mut p, &shapes::t3(), 0.5);
/// assert_eq!(p, pytree_std::map(shapes::t3(), |x| x / 2.0));
/// ```
pub fn sgd(params: &mut Deep, grads: &Deep, lr: f64) {
    let (mut p, mut g) = (params, grads);
    loop {
        match (p, g) {
            (Deep::Level(x, np), Deep::Level(y, ng)) => {
                *x -= lr * y;
                (p, g) = (np, ng);
            }
            (Deep::End(x), Deep::End(y)) => {
                *x -= lr * y;
                return;
            }
            _ => panic!("depths differ"),
        }
    }
}

/// References to the leaves, top first.
///
/// ```
/// use pytree_benches::{hand::t3, shapes};
/// let t = shapes::t3();
/// assert_eq!(t3::leaves(&t), pytree_std::leaves(&t));
/// ```
pub fn leaves(t: &Deep) -> Vec<&f64> {
    let mut out = Vec::new();
    let mut node = t;
    loop {
        match node {
            Deep::Level(x, next) => {
                out.push(x);
                node = next;
            }
            Deep::End(x) => {
                out.push(x);
                return out;
            }
        }
    }
}

/// Every leaf by value with its key path, as the library writes it
/// (`::Level.1::Level.0`: the variant, then the field), consuming the
/// chain like `flatten_with_path`. The path of level `i` has `2i + 2`
/// entries: a copy of the prefix so far plus two, so the output is
/// quadratic in the depth, as in Python.
///
/// ```
/// use pytree_benches::{hand::t3, shapes};
/// let (lib, _) = pytree_std::flatten_with_path(shapes::deep(2));
/// let paths = t3::flatten_with_path(shapes::deep(2));
/// assert_eq!(paths, lib);
/// assert_eq!(paths[2].0.to_string(), "::Level.1::Level.1::End.0");
/// ```
pub fn flatten_with_path(t: Deep) -> Vec<(KeyPath, f64)> {
    let mut out = Vec::new();
    let mut prefix: Vec<KeyEntry> = Vec::new();
    let with = |prefix: &[KeyEntry], variant| {
        let mut entries = Vec::with_capacity(prefix.len() + 2);
        entries.extend_from_slice(prefix);
        entries.push(KeyEntry::Variant(variant));
        entries.push(KeyEntry::Field("0"));
        KeyPath::from_entries(entries)
    };
    let mut node = t;
    loop {
        match node {
            Deep::Level(x, next) => {
                out.push((with(&prefix, "Level"), x));
                prefix.push(KeyEntry::Variant("Level"));
                prefix.push(KeyEntry::Field("1"));
                node = *next;
            }
            Deep::End(x) => {
                out.push((with(&prefix, "End"), x));
                return out;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shapes::{deep, t3, T3_DEPTH, T3_LEAVES};

    flatten_leaves_and_paths_test!(t3, Deep);

    #[test]
    fn hand_written_flatten_keeps_the_depth_for_unflatten() {
        let (leaves, depth) = flatten(t3());
        assert_eq!(depth, T3_DEPTH);
        assert_eq!(unflatten(depth, &leaves), t3());
        let paths = flatten_with_path(t3());
        assert_eq!(paths.len(), T3_LEAVES);
        assert_eq!(paths[T3_DEPTH].0.len(), 2 * T3_DEPTH + 2);
    }

    map_map2_and_sgd_test!(t3);

    #[test]
    fn hand_written_loops_take_a_hundred_thousand_levels() {
        let depth = 100_000;
        let (values, d) = flatten(deep(depth));
        assert_eq!((values.len(), d), (depth + 1, depth));
        let t = unflatten(d, &values);
        let doubled = map2(&t, &t, |x, y| x + y);
        let mut p = map(deep(depth), |x| x * 2.0);
        sgd(&mut p, &doubled, 1.0);
        assert_eq!(leaves(&p).into_iter().filter(|x| **x != 0.0).count(), 0);
        // Dropping a chain this deep recurses in the derived `Drop`; unlink it first.
        for chain in [t, doubled, p] {
            let (rest, _) = flatten(chain);
            assert_eq!(rest.len(), depth + 1);
        }
    }

    #[test]
    #[should_panic(expected = "depths differ")]
    fn hand_written_map2_panics_on_different_depths() {
        map2(&deep(3), &deep(4), |x, y| x + y);
    }
}
