//! The small tree of `data/optax_reference.json` (`{"b": f32[3], "s":
//! f32[], "w": f32[2,3]}`) and optax's numbers for it, shared by
//! `optax_reference.rs` and `foreign_transformations.rs`: the JSON and
//! its leaves, the comparison at optax's tolerance, the tree on scalar
//! leaves and the labels of its fields.

use pytree_std::{KeyPath, PyTree};
use serde_json::Value;

/// optax computes in `f32` with its own order of rounding, so results
/// agree to a few `f32` ulps: `TOL * (1 + |x|)`.
pub const TOL: f64 = 2e-6;

/// The tolerance of `scale_by_adam` alone (no learning rate to shrink the
/// difference): optax's bias correction `1 - b2^t` is computed in `f32`,
/// and `1 - f32(0.999)` is `1.3e-5` off `0.001` (relative), which moves
/// the first updates (about `±1`) by up to `7e-6`; ours are computed in
/// `f64`.
pub const SCALE_BY_ADAM_TOL: f64 = 2e-5;

pub fn json(text: &str) -> Value {
    serde_json::from_str(text).expect("valid JSON")
}

/// The inputs (`params0`, `grads`) and optax's cases.
pub fn reference() -> Value {
    json(include_str!("../data/optax_reference.json"))
}

/// A leaf of the JSON: (shape, flat data).
pub fn leaf(v: &Value, key: &str) -> (Vec<usize>, Vec<f32>) {
    let numbers = |field: &str| {
        let list = v[key][field].as_array().expect(field);
        list.iter().map(|x| x.as_f64().expect("number"))
    };
    let shape = numbers("shape").map(|d| d as usize).collect();
    let data = numbers("data").map(|x| x as f32).collect();
    (shape, data)
}

/// `got` against optax's `want` at [`TOL`] ([`SCALE_BY_ADAM_TOL`] where
/// `what` starts with `scale_by_adam`).
pub fn close(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    let tol = if what.starts_with("scale_by_adam") {
        SCALE_BY_ADAM_TOL
    } else {
        TOL
    };
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let (g, w) = (f64::from(*g), f64::from(*w));
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "{what}[{i}]: got {g}, optax {w}"
        );
    }
}

/// The tree on scalar leaves.
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct Small {
    pub b: Vec<f32>,
    pub s: f32,
    pub w: Vec<f32>,
}

pub fn small(v: &Value) -> Small {
    Small {
        b: leaf(v, "b").1,
        s: leaf(v, "s").1[0],
        w: leaf(v, "w").1,
    }
}

/// Every leaf of `p` against `v`'s.
pub fn check(p: &Small, v: &Value, what: &str) {
    close(&p.b, &leaf(v, "b").1, &format!("{what} .b"));
    close(&[p.s], &leaf(v, "s").1, &format!("{what} .s"));
    close(&p.w, &leaf(v, "w").1, &format!("{what} .w"));
}

/// The labeller of a `multi_transform` that names the groups of the
/// fields `.b`, `.s` and `.w`.
pub fn by_field(
    b: &'static str,
    s: &'static str,
    w: &'static str,
) -> impl Fn(&KeyPath) -> &'static str + Copy + Send + Sync + 'static {
    move |p: &KeyPath| match p.to_string().as_str() {
        f if f.starts_with(".b") => b,
        f if f.starts_with(".s") => s,
        _ => w,
    }
}
