//! The small models several test files share (each includes this module
//! with `mod models;`): an MLP of scalar leaves (`Linear<T>`, `Mlp<T>`,
//! [`mlp`]), an enum of each variant form ([`Shape`]) and an MLP of
//! ndarray arrays ([`arrays`]); [`tensor_values`] reads a candle tensor,
//! [`assert_same_safetensors`] compares two files.

// Each test file uses a part of this module.
#![allow(dead_code)]

use pytree_std::PyTree;

/// A dense layer of scalar leaves.
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct Linear<T> {
    pub w: T,
    pub b: T,
}

/// Layers and a static name.
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct Mlp<T> {
    pub layers: Vec<Linear<T>>,
    #[pytree(static)]
    pub name: String,
}

/// Two layers: `w` 1, `b` 2, then `w` 3, `b` 4.
pub fn two_layers() -> Vec<Linear<f32>> {
    vec![Linear { w: 1.0, b: 2.0 }, Linear { w: 3.0, b: 4.0 }]
}

/// [`two_layers`], named "mlp".
pub fn mlp() -> Mlp<f32> {
    Mlp {
        layers: two_layers(),
        name: "mlp".into(),
    }
}

/// A candle tensor's values (any dtype and rank) as `f32`s, in row-major
/// order.
pub fn tensor_values(t: &pytree_std::candle_core::Tensor) -> Vec<f32> {
    let t = t.to_dtype(pytree_std::candle_core::DType::F32).unwrap();
    t.flatten_all().unwrap().to_vec1().unwrap()
}

/// The two safetensors files hold the same tensors (names, dtypes, shapes
/// and bytes), read with the reference implementation of the format.
pub fn assert_same_safetensors(have: &[u8], want: &[u8]) {
    use safetensors::SafeTensors;
    let (have, want) = (
        SafeTensors::deserialize(have),
        SafeTensors::deserialize(want),
    );
    let (have, want) = (have.unwrap(), want.unwrap());
    let sorted = |s: &SafeTensors| {
        let mut names: Vec<String> = s.names().into_iter().map(|n| n.to_string()).collect();
        names.sort();
        names
    };
    assert_eq!(sorted(&have), sorted(&want));
    for name in sorted(&want) {
        let (a, b) = (have.tensor(&name).unwrap(), want.tensor(&name).unwrap());
        let dtype_shape_data = |t: &safetensors::tensor::TensorView| {
            (t.dtype(), t.shape().to_vec(), t.data().to_vec())
        };
        assert_eq!(dtype_shape_data(&a), dtype_shape_data(&b), "{name}");
    }
}

/// An enum of each variant form: named fields, a tuple, none.
#[derive(PyTree, Clone, Debug, PartialEq)]
pub enum Shape {
    Circle { r: f64 },
    Rect(f64, f64),
    Empty,
}

/// One [`Shape`] of each variant: a circle of radius 1, a 2 x 3
/// rectangle, the empty shape.
pub fn shapes() -> Vec<Shape> {
    vec![
        Shape::Circle { r: 1.0 },
        Shape::Rect(2.0, 3.0),
        Shape::Empty,
    ]
}

/// The same MLP with ndarray arrays as leaves.
pub mod arrays {
    use pytree_std::PyTree;

    /// A dense layer: weights and biases (the fuzz targets' layer).
    pub use pytree_tests::fuzz::checkpoint::Linear;

    /// Layers and a static name.
    #[derive(PyTree, Clone, Debug, PartialEq)]
    pub struct Mlp {
        pub layers: Vec<Linear>,
        #[pytree(static)]
        pub name: String,
    }
}
