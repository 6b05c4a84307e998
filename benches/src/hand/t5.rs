//! T5's operations (`(Small { a, b: Vec<f64> }, f64)`, four leaves)
//! written by hand. Kept for rebuilding: the length of `b`. What the type
//! forces: every output that is a new tree or a `Vec` allocates one buffer
//! (`b`'s, or the leaves'); consuming the tree frees `b`'s.

use pytree_std::{paths::KeyEntry, KeyPath};

use crate::shapes::Small;

/// The tree of T5.
pub type T5 = (Small, f64);

/// The leaves by value (`a`, then `b`, then the float) and the length of
/// `b` (the floor for `flatten`).
///
/// ```
/// use pytree_benches::{hand::t5, shapes};
/// assert_eq!(t5::flatten(shapes::t5()), (pytree_std::flatten(shapes::t5()).0, 2));
/// ```
pub fn flatten(t: T5) -> (Vec<f64>, usize) {
    let (Small { a, b }, x) = t;
    let mut leaves = Vec::with_capacity(b.len() + 2);
    leaves.push(a);
    leaves.extend_from_slice(&b);
    leaves.push(x);
    (leaves, b.len())
}

/// Builds the tree from the length of `b` and the leaves in order (the
/// floor for `unflatten`). Panics if there are too few leaves.
///
/// ```
/// use pytree_benches::{hand::t5, shapes};
/// assert_eq!(t5::unflatten(2, [1.0, 2.0, 3.0, 4.0]), shapes::t5());
/// ```
pub fn unflatten(b_len: usize, leaves: impl IntoIterator<Item = f64>) -> T5 {
    let mut it = leaves.into_iter();
    let a = it.next().expect("too few leaves");
    let b: Vec<f64> = it.by_ref().take(b_len).collect();
    assert_eq!(b.len(), b_len, "too few leaves");
    let x = it.next().expect("too few leaves");
    (Small { a, b }, x)
}

/// `f` applied to every leaf, in order; `b`'s buffer is reused.
///
/// ```
/// use pytree_benches::{hand::t5, shapes};
/// assert_eq!(t5::map(shapes::t5(), |x| -x), pytree_std::map(shapes::t5(), |x| -x));
/// ```
pub fn map(t: T5, mut f: impl FnMut(f64) -> f64) -> T5 {
    let (Small { a, mut b }, x) = t;
    let a = f(a);
    for y in &mut b {
        *y = f(*y);
    }
    (Small { a, b }, f(x))
}

/// `f` applied leaf by leaf to two trees. Panics if the lengths of `b`
/// differ (the library returns an error there).
///
/// ```
/// use pytree_benches::{hand::t5, shapes};
/// let (p, q) = (shapes::t5(), shapes::t5());
/// assert_eq!(t5::map2(&p, &q, |x, y| x + y), pytree_std::walk::map_n(&p, [&q], |x, [y]| x + y)?);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn map2(p: &T5, q: &T5, mut f: impl FnMut(&f64, &f64) -> f64) -> T5 {
    assert_eq!(p.0.b.len(), q.0.b.len(), "lengths differ");
    let a = f(&p.0.a, &q.0.a);
    let b = p.0.b.iter().zip(&q.0.b).map(|(x, y)| f(x, y)).collect();
    (Small { a, b }, f(&p.1, &q.1))
}

/// The SGD step in place: `p -= lr * g` for every leaf. Panics if the
/// lengths of `b` differ (the library returns an error there).
///
/// ```
/// use pytree_benches::{hand::t5, shapes};
/// let mut p = shapes::t5();
/// t5::sgd(&mut p, &shapes::t5(), 0.5);
/// assert_eq!(p, pytree_std::map(shapes::t5(), |x| x / 2.0));
/// ```
pub fn sgd(params: &mut T5, grads: &T5, lr: f64) {
    assert_eq!(params.0.b.len(), grads.0.b.len(), "lengths differ");
    params.0.a -= lr * grads.0.a;
    for (p, g) in params.0.b.iter_mut().zip(&grads.0.b) {
        *p -= lr * g;
    }
    params.1 -= lr * grads.1;
}

/// References to the leaves, in order.
///
/// ```
/// use pytree_benches::{hand::t5, shapes};
/// let t = shapes::t5();
/// assert_eq!(t5::leaves(&t), pytree_std::leaves(&t));
/// ```
pub fn leaves(t: &T5) -> Vec<&f64> {
    let mut out = Vec::with_capacity(t.0.b.len() + 2);
    out.push(&t.0.a);
    out.extend(&t.0.b);
    out.push(&t.1);
    out
}

/// Every leaf with its key path (`[0].a`, `[0].b[1]`, `[1]`), consuming the
/// tree like `flatten_with_path`.
///
/// ```
/// use pytree_benches::{hand::t5, shapes};
/// let paths = t5::flatten_with_path(shapes::t5());
/// assert_eq!(paths, pytree_std::flatten_with_path(shapes::t5()).0);
/// assert_eq!(paths[2].0.to_string(), "[0].b[1]");
/// ```
pub fn flatten_with_path(t: T5) -> Vec<(KeyPath, f64)> {
    use KeyEntry::{Field, Index};
    let (Small { a, b }, x) = t;
    let mut out = Vec::with_capacity(b.len() + 2);
    out.push((KeyPath::from_entries(vec![Index(0), Field("a")]), a));
    for (i, y) in b.into_iter().enumerate() {
        out.push((
            KeyPath::from_entries(vec![Index(0), Field("b"), Index(i)]),
            y,
        ));
    }
    out.push((KeyPath::from_entries(vec![Index(1)]), x));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shapes::t5;

    flatten_leaves_and_paths_test!(t5, T5);

    #[test]
    fn hand_written_flatten_keeps_the_length_of_b_for_unflatten() {
        let (leaves, b_len) = flatten(t5());
        assert_eq!(b_len, 2);
        assert_eq!(unflatten(b_len, leaves), t5());
        let paths = flatten_with_path(t5());
        let shown: Vec<String> = paths.iter().map(|(p, x)| format!("{p}={x}")).collect();
        assert_eq!(shown, ["[0].a=1", "[0].b[0]=2", "[0].b[1]=3", "[1]=4"]);
    }

    map_map2_and_sgd_test!(t5);

    #[test]
    #[should_panic(expected = "too few leaves")]
    fn hand_written_unflatten_panics_on_too_few_leaves() {
        unflatten(2, [1.0, 2.0, 3.0]);
    }
}
