//! The small models several test files share (each includes this module
//! with `mod models;`): an MLP of scalar leaves (`Linear<T>`, `Mlp<T>`,
//! [`mlp`]), an enum of each variant form ([`Shape`]) and an MLP of
//! ndarray arrays ([`arrays`]).

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
    use pytree_std::ndarray::{Array1, Array2};
    use pytree_std::PyTree;

    /// A dense layer: weights and bias.
    #[derive(PyTree, Clone, Debug, PartialEq)]
    pub struct Linear {
        pub w: Array2<f32>,
        pub b: Array1<f32>,
    }

    /// Layers and a static name.
    #[derive(PyTree, Clone, Debug, PartialEq)]
    pub struct Mlp {
        pub layers: Vec<Linear>,
        #[pytree(static)]
        pub name: String,
    }
}
