//! T1's operations as a user would write them without the library, field
//! by field. Kept: the layer count (for [`build`]); `leaves_with_path`
//! borrows the tree (the library's `flatten_with_path` consumes it; with
//! `f64` leaves the cost is the same).

use pytree_std::{paths::KeyEntry, KeyPath};

use crate::shapes::{Attn, Gb, Layer, Mlp, Transformer, Wb, W};

/// The leaves by value, in declaration order (the floor for `flatten`:
/// a leaves-only loop, growing a `Vec` from empty).
///
/// ```
/// use pytree_benches::{hand::t1, shapes};
/// assert_eq!(t1::leaves_owned(shapes::t1()), pytree_std::flatten(shapes::t1()).0);
/// ```
pub fn leaves_owned(t: Transformer) -> Vec<f64> {
    let mut out = Vec::new();
    out.push(t.embed.w);
    for l in t.layers {
        for p in [l.attn.q, l.attn.k, l.attn.v, l.attn.o, l.mlp.fc1, l.mlp.fc2] {
            out.push(p.w);
            out.push(p.b);
        }
        for n in [l.ln1, l.ln2] {
            out.push(n.g);
            out.push(n.b);
        }
    }
    out.push(t.final_ln.g);
    out.push(t.final_ln.b);
    out
}

/// References to the leaves, in declaration order.
///
/// ```
/// use pytree_benches::{hand::t1, shapes};
/// let t = shapes::t1();
/// assert_eq!(t1::leaves_ref(&t), pytree_std::leaves(&t));
/// ```
pub fn leaves_ref(t: &Transformer) -> Vec<&f64> {
    push_leaves_ref(t, Vec::new())
}

/// References to the leaves, in declaration order, in a `Vec` sized up
/// front (the count is known from the layer count).
///
/// ```
/// use pytree_benches::{hand::t1, shapes};
/// let t = shapes::t1();
/// assert_eq!(t1::leaves_ref_sized(&t), pytree_std::leaves(&t));
/// ```
pub fn leaves_ref_sized(t: &Transformer) -> Vec<&f64> {
    push_leaves_ref(t, Vec::with_capacity(1 + 16 * t.layers.len() + 2))
}

/// [`leaves_ref`]'s loop, pushing onto `out` (inlined into each caller, so
/// that each measures the loop as written there).
#[inline(always)]
fn push_leaves_ref<'a>(t: &'a Transformer, mut out: Vec<&'a f64>) -> Vec<&'a f64> {
    out.push(&t.embed.w);
    for l in &t.layers {
        for p in [
            &l.attn.q, &l.attn.k, &l.attn.v, &l.attn.o, &l.mlp.fc1, &l.mlp.fc2,
        ] {
            out.push(&p.w);
            out.push(&p.b);
        }
        for n in [&l.ln1, &l.ln2] {
            out.push(&n.g);
            out.push(&n.b);
        }
    }
    out.push(&t.final_ln.g);
    out.push(&t.final_ln.b);
    out
}

/// Builds a T1 of `layers` layers from leaves in declaration order (the
/// floor for `unflatten`). Panics if there are too few leaves.
///
/// ```
/// use pytree_benches::hand::t1;
/// let leaves: Vec<f64> = (1..=771).map(|i| i as f64).collect();
/// assert_eq!(pytree_std::flatten(t1::build(48, leaves.clone())).0, leaves);
/// ```
pub fn build(layers: usize, leaves: impl IntoIterator<Item = f64>) -> Transformer {
    let mut it = leaves.into_iter();
    let mut next = move || it.next().expect("too few leaves");
    fn wb(next: &mut impl FnMut() -> f64) -> Wb {
        Wb {
            w: next(),
            b: next(),
        }
    }
    let embed = W { w: next() };
    let layers = (0..layers)
        .map(|_| Layer {
            attn: Attn {
                q: wb(&mut next),
                k: wb(&mut next),
                v: wb(&mut next),
                o: wb(&mut next),
            },
            mlp: Mlp {
                fc1: wb(&mut next),
                fc2: wb(&mut next),
            },
            ln1: Gb {
                g: next(),
                b: next(),
            },
            ln2: Gb {
                g: next(),
                b: next(),
            },
        })
        .collect();
    let final_ln = Gb {
        g: next(),
        b: next(),
    };
    Transformer {
        embed,
        layers,
        final_ln,
    }
}

/// [`build`] fallible at every level, as the library's `unflatten_from`
/// is: each struct comes back as a `Result<_, Error>` after a `?`, and a
/// missing leaf is an error (built out of line), not a panic. Not what a
/// user writes; it is the floor for an unflatten that returns errors
/// (`benches/anchors.rs`, `unflatten/hand_result`).
///
/// ```
/// use pytree_benches::{hand::t1, shapes};
/// assert_eq!(t1::build_result(48, (1..=771).map(|i| i as f64))?, shapes::t1());
/// assert!(t1::build_result(48, (1..=770).map(|i| i as f64)).is_err());
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn build_result(
    layers: usize,
    leaves: impl IntoIterator<Item = f64>,
) -> Result<Transformer, pytree_std::Error> {
    #[cold]
    #[inline(never)]
    fn too_few() -> pytree_std::Error {
        pytree_std::Error::custom("too few leaves")
    }
    fn leaf(it: &mut impl Iterator<Item = f64>) -> Result<f64, pytree_std::Error> {
        it.next().ok_or_else(too_few)
    }
    fn wb(it: &mut impl Iterator<Item = f64>) -> Result<Wb, pytree_std::Error> {
        Ok(Wb {
            w: leaf(it)?,
            b: leaf(it)?,
        })
    }
    fn gb(it: &mut impl Iterator<Item = f64>) -> Result<Gb, pytree_std::Error> {
        Ok(Gb {
            g: leaf(it)?,
            b: leaf(it)?,
        })
    }
    fn layer(it: &mut impl Iterator<Item = f64>) -> Result<Layer, pytree_std::Error> {
        Ok(Layer {
            attn: Attn {
                q: wb(it)?,
                k: wb(it)?,
                v: wb(it)?,
                o: wb(it)?,
            },
            mlp: Mlp {
                fc1: wb(it)?,
                fc2: wb(it)?,
            },
            ln1: gb(it)?,
            ln2: gb(it)?,
        })
    }
    let mut it = leaves.into_iter();
    let embed = W { w: leaf(&mut it)? };
    let mut out = Vec::with_capacity(layers);
    for _ in 0..layers {
        out.push(layer(&mut it)?);
    }
    Ok(Transformer {
        embed,
        layers: out,
        final_ln: gb(&mut it)?,
    })
}

fn map_wb(p: Wb, f: &mut impl FnMut(f64) -> f64) -> Wb {
    Wb {
        w: f(p.w),
        b: f(p.b),
    }
}

fn map_gb(n: Gb, f: &mut impl FnMut(f64) -> f64) -> Gb {
    Gb {
        g: f(n.g),
        b: f(n.b),
    }
}

/// `f` applied to every leaf, by value.
///
/// ```
/// use pytree_benches::{hand::t1, shapes};
/// assert_eq!(t1::map(shapes::t1(), |x| -x).embed.w, -1.0);
/// ```
pub fn map(t: Transformer, mut f: impl FnMut(f64) -> f64) -> Transformer {
    let f = &mut f;
    Transformer {
        embed: W { w: f(t.embed.w) },
        layers: t
            .layers
            .into_iter()
            .map(|l| Layer {
                attn: Attn {
                    q: map_wb(l.attn.q, f),
                    k: map_wb(l.attn.k, f),
                    v: map_wb(l.attn.v, f),
                    o: map_wb(l.attn.o, f),
                },
                mlp: Mlp {
                    fc1: map_wb(l.mlp.fc1, f),
                    fc2: map_wb(l.mlp.fc2, f),
                },
                ln1: map_gb(l.ln1, f),
                ln2: map_gb(l.ln2, f),
            })
            .collect(),
        final_ln: map_gb(t.final_ln, f),
    }
}

fn map2_wb(p: &Wb, q: &Wb, f: &mut impl FnMut(&f64, &f64) -> f64) -> Wb {
    Wb {
        w: f(&p.w, &q.w),
        b: f(&p.b, &q.b),
    }
}

fn map2_gb(n: &Gb, m: &Gb, f: &mut impl FnMut(&f64, &f64) -> f64) -> Gb {
    Gb {
        g: f(&n.g, &m.g),
        b: f(&n.b, &m.b),
    }
}

/// `f` applied leaf by leaf to two trees. Panics if the layer counts differ
/// (the library returns an error there).
///
/// ```
/// use pytree_benches::{hand::t1, shapes};
/// let t = shapes::t1();
/// assert_eq!(t1::map2(&t, &t, |x, y| x + y).final_ln.b, 1542.0);
/// ```
pub fn map2(a: &Transformer, b: &Transformer, mut f: impl FnMut(&f64, &f64) -> f64) -> Transformer {
    assert_eq!(a.layers.len(), b.layers.len(), "layer counts differ");
    let f = &mut f;
    Transformer {
        embed: W {
            w: f(&a.embed.w, &b.embed.w),
        },
        layers: a
            .layers
            .iter()
            .zip(&b.layers)
            .map(|(l, m)| map2_layer(l, m, f))
            .collect(),
        final_ln: map2_gb(&a.final_ln, &b.final_ln, f),
    }
}

/// One layer of [`map2`].
fn map2_layer(l: &Layer, m: &Layer, f: &mut impl FnMut(&f64, &f64) -> f64) -> Layer {
    Layer {
        attn: Attn {
            q: map2_wb(&l.attn.q, &m.attn.q, f),
            k: map2_wb(&l.attn.k, &m.attn.k, f),
            v: map2_wb(&l.attn.v, &m.attn.v, f),
            o: map2_wb(&l.attn.o, &m.attn.o, f),
        },
        mlp: Mlp {
            fc1: map2_wb(&l.mlp.fc1, &m.mlp.fc1, f),
            fc2: map2_wb(&l.mlp.fc2, &m.mlp.fc2, f),
        },
        ln1: map2_gb(&l.ln1, &m.ln1, f),
        ln2: map2_gb(&l.ln2, &m.ln2, f),
    }
}

/// [`map2`] with one change: each layer comes back as a
/// `Result<Layer, Error>` (the return type of the library's `zip_with`)
/// and is pushed after a `?`. Not what a user writes; it shows what that
/// return type costs by itself (`benches/anchors.rs`, `map2/hand_result`).
///
/// ```
/// use pytree_benches::{hand::t1, shapes};
/// let t = shapes::t1();
/// assert_eq!(t1::map2_result(&t, &t, |x, y| x * y)?.embed.w, 1.0);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn map2_result(
    a: &Transformer,
    b: &Transformer,
    mut f: impl FnMut(&f64, &f64) -> f64,
) -> Result<Transformer, pytree_std::Error> {
    fn layer(
        l: &Layer,
        m: &Layer,
        f: &mut impl FnMut(&f64, &f64) -> f64,
    ) -> Result<Layer, pytree_std::Error> {
        Ok(map2_layer(l, m, f))
    }
    if a.layers.len() != b.layers.len() {
        return Err(pytree_std::Error::custom("layer counts differ"));
    }
    let f = &mut f;
    let mut layers = Vec::with_capacity(a.layers.len());
    for (l, m) in a.layers.iter().zip(&b.layers) {
        layers.push(layer(l, m, f)?);
    }
    Ok(Transformer {
        embed: W {
            w: f(&a.embed.w, &b.embed.w),
        },
        layers,
        final_ln: map2_gb(&a.final_ln, &b.final_ln, f),
    })
}

/// `f` applied to every leaf in place, in declaration order (the floor for
/// `for_each_mut`).
///
/// ```
/// use pytree_benches::{hand::t1, shapes};
/// let mut t = shapes::t1();
/// t1::for_each_mut(&mut t, |x| *x = -*x);
/// assert_eq!(t.final_ln.b, -771.0);
/// ```
pub fn for_each_mut(t: &mut Transformer, mut f: impl FnMut(&mut f64)) {
    f(&mut t.embed.w);
    for l in &mut t.layers {
        for p in [
            &mut l.attn.q,
            &mut l.attn.k,
            &mut l.attn.v,
            &mut l.attn.o,
            &mut l.mlp.fc1,
            &mut l.mlp.fc2,
        ] {
            f(&mut p.w);
            f(&mut p.b);
        }
        for n in [&mut l.ln1, &mut l.ln2] {
            f(&mut n.g);
            f(&mut n.b);
        }
    }
    f(&mut t.final_ln.g);
    f(&mut t.final_ln.b);
}

/// The SGD step in place: `p -= lr * g` for every leaf. Panics if the
/// layer counts differ (the library returns an error there).
///
/// ```
/// use pytree_benches::{hand::t1, shapes};
/// let mut p = shapes::t1();
/// t1::sgd(&mut p, &shapes::t1(), 0.5);
/// assert_eq!(p.embed.w, 0.5);
/// ```
pub fn sgd(params: &mut Transformer, grads: &Transformer, lr: f64) {
    assert_eq!(
        params.layers.len(),
        grads.layers.len(),
        "layer counts differ"
    );
    let step = |p: &mut f64, g: &f64| *p -= lr * g;
    step(&mut params.embed.w, &grads.embed.w);
    for (l, m) in params.layers.iter_mut().zip(&grads.layers) {
        for (p, g) in [
            (&mut l.attn.q, &m.attn.q),
            (&mut l.attn.k, &m.attn.k),
            (&mut l.attn.v, &m.attn.v),
            (&mut l.attn.o, &m.attn.o),
            (&mut l.mlp.fc1, &m.mlp.fc1),
            (&mut l.mlp.fc2, &m.mlp.fc2),
        ] {
            step(&mut p.w, &g.w);
            step(&mut p.b, &g.b);
        }
        for (n, g) in [(&mut l.ln1, &m.ln1), (&mut l.ln2, &m.ln2)] {
            step(&mut n.g, &g.g);
            step(&mut n.b, &g.b);
        }
    }
    step(&mut params.final_ln.g, &grads.final_ln.g);
    step(&mut params.final_ln.b, &grads.final_ln.b);
}

/// Every leaf with its key path (`.layers[3].attn.q.w`), built field by
/// field into the library's `KeyPath`, so that the output is the same as
/// the library's and only the traversal differs.
///
/// ```
/// let t = pytree_benches::shapes::t1();
/// let paths = pytree_benches::hand::t1::leaves_with_path(&t);
/// assert_eq!(paths[1].0.to_string(), ".layers[0].attn.q.w");
/// ```
pub fn leaves_with_path(t: &Transformer) -> Vec<(KeyPath, &f64)> {
    use KeyEntry::{Field, Index};
    let path = |entries: &[KeyEntry]| KeyPath::from_entries(entries.to_vec());
    // The path of field `leaf` under `at`.
    let under = |at: &[KeyEntry], leaf| {
        let mut v = at.to_vec();
        v.push(Field(leaf));
        KeyPath::from_entries(v)
    };
    let mut out = Vec::new();
    out.push((path(&[Field("embed"), Field("w")]), &t.embed.w));
    for (i, l) in t.layers.iter().enumerate() {
        let params = [
            ("attn", "q", &l.attn.q),
            ("attn", "k", &l.attn.k),
            ("attn", "v", &l.attn.v),
            ("attn", "o", &l.attn.o),
            ("mlp", "fc1", &l.mlp.fc1),
            ("mlp", "fc2", &l.mlp.fc2),
        ];
        for (block, name, p) in params {
            let at = [Field("layers"), Index(i), Field(block), Field(name)];
            out.push((under(&at, "w"), &p.w));
            out.push((under(&at, "b"), &p.b));
        }
        for (name, n) in [("ln1", &l.ln1), ("ln2", &l.ln2)] {
            let at = [Field("layers"), Index(i), Field(name)];
            out.push((under(&at, "g"), &n.g));
            out.push((under(&at, "b"), &n.b));
        }
    }
    out.push((path(&[Field("final_ln"), Field("g")]), &t.final_ln.g));
    out.push((path(&[Field("final_ln"), Field("b")]), &t.final_ln.b));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shapes::{t1, T1_LEAVES};

    #[test]
    fn hand_written_leaves_equal_the_librarys_in_order() {
        let (lib, _) = pytree_std::flatten(t1());
        assert_eq!(leaves_owned(t1()), lib);
        let t = t1();
        assert_eq!(leaves_ref(&t), pytree_std::leaves(&t));
    }

    #[test]
    fn hand_written_build_equals_unflatten() {
        let (leaves, def) = pytree_std::flatten(t1());
        let lib: Transformer = pytree_std::unflatten(&def, leaves.iter().copied()).unwrap();
        assert_eq!(build(48, leaves), lib);
        assert_eq!(lib, t1());
    }

    map_map2_and_sgd_test!(t1);

    #[test]
    fn hand_written_map2_result_and_for_each_mut_equal_the_librarys() {
        let (a, b) = (t1(), t1());
        assert_eq!(
            map2_result(&a, &b, |x, y| x + y).unwrap(),
            map2(&a, &b, |x, y| x + y)
        );
        let (mut p, mut q) = (t1(), t1());
        let mut order = Vec::new();
        for_each_mut(&mut p, |x| order.push(*x));
        assert_eq!(order, pytree_std::flatten(t1()).0);
        for_each_mut(&mut p, |x| *x *= 3.0);
        pytree_std::for_each_mut(&mut q, |x| *x *= 3.0);
        assert_eq!(p, q);
    }

    #[test]
    fn hand_written_paths_name_every_leaf_like_keystr() {
        let t = t1();
        let paths = leaves_with_path(&t);
        assert_eq!(paths.len(), T1_LEAVES);
        assert_eq!(paths[0].0.to_string(), ".embed.w");
        assert_eq!(paths[1].0.to_string(), ".layers[0].attn.q.w");
        assert_eq!(paths[16].0.to_string(), ".layers[0].ln2.b");
        assert_eq!(paths[770].0.to_string(), ".final_ln.b");
        let leaves: Vec<&f64> = paths.iter().map(|(_, x)| *x).collect();
        assert_eq!(leaves, pytree_std::leaves(&t));
    }
}
