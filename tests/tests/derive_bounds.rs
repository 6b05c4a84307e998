//! Where-clauses the derive infers beyond plain type parameters: fields
//! whose types are associated types of a parameter (a backend's tensor, as
//! burn and candle models are written), and generic leaf types.

use pytree_std::{Flatten, PyTree, Std};

/// A backend names its tensor type, as burn's `Backend` does.
trait Backend {
    type Tensor;
}

struct Cpu;
impl Backend for Cpu {
    type Tensor = f32;
}

struct Wide;
impl Backend for Wide {
    type Tensor = Vec<f64>;
}

/// The bound goes on `B::Tensor`, not on `B` (which is no pytree). (std's
/// `Debug` and `PartialEq` derives would bound `B`, so they are not used.)
#[derive(PyTree)]
struct Linear<B: Backend> {
    w: B::Tensor,
    b: Vec<B::Tensor>,
}

#[derive(PyTree)]
struct Qualified<B: Backend> {
    w: <B as Backend>::Tensor,
    #[pytree(static)]
    name: &'static str,
}

#[test]
fn a_field_of_an_associated_type_bounds_that_type() {
    let cpu: Linear<Cpu> = Linear {
        w: 1.0,
        b: vec![2.0, 3.0],
    };
    let (leaves, def) = pytree_std::flatten(cpu);
    assert_eq!(leaves, [1.0, 2.0, 3.0]);
    assert_eq!(def.to_string(), "Linear { w: *, b: [*, *] }");
    let back: Linear<Cpu> = pytree_std::unflatten(&def, leaves).unwrap();
    assert_eq!((back.w, back.b), (1.0, vec![2.0, 3.0]));

    // Another backend, another leaf type: the leaves of a Vec<f64> tensor.
    let wide: Linear<Wide> = Linear {
        w: vec![1.0],
        b: vec![vec![2.0, 3.0]],
    };
    assert_eq!(pytree_std::leaves(&wide), [&1.0, &2.0, &3.0]);

    let q: Qualified<Cpu> = Qualified { w: 4.0, name: "q" };
    assert_eq!(
        pytree_std::structure(&q).to_string(),
        r#"Qualified { w: *, name: "q" }"#
    );
}

fn leaf_of<T: Flatten<Std, Leaf = f32>>(_: &T) {}

#[test]
fn the_leaf_type_follows_the_backend() {
    leaf_of(&Linear::<Cpu> { w: 0.0, b: vec![] });
}

/// A generic leaf type: `#[pytree(leaf)]` goes through `impl_leaf!`.
#[derive(PyTree, Clone, Debug, PartialEq)]
#[pytree(leaf)]
struct Tensor<T> {
    data: Vec<T>,
}

#[derive(PyTree, Debug, PartialEq)]
struct Model<T: Clone + 'static> {
    layers: Vec<Tensor<T>>,
}

#[test]
fn a_generic_leaf_type_is_one_leaf_lent_by_reference() {
    let m = Model {
        layers: vec![Tensor { data: vec![1u8, 2] }, Tensor { data: vec![3] }],
    };
    let leaves = pytree_std::leaves(&m);
    assert_eq!(leaves.len(), 2);
    assert_eq!(leaves[1].data, [3]);
    let doubled = pytree_std::map(m, |t| Tensor {
        data: t.data.iter().map(|x| x * 2).collect(),
    });
    assert_eq!(doubled.layers[0].data, [2, 4]);
}
