//! The program a user writes on day one (the foundation issue's listing),
//! as a test: derive, flatten, unflatten, structure, map_into, errors,
//! in-place updates, a user leaf type, and a generic function over pytrees.

use pytree_std::{ErrorKind, PyTree, TreeDef};

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Linear<T> {
    w: T,
    b: T,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Activation {
    Relu,
    Tanh,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Mlp<T> {
    layers: Vec<Linear<T>>,
    #[pytree(static)]
    activation: Activation,
    #[pytree(static)]
    name: String,
}

fn mlp() -> Mlp<f32> {
    Mlp {
        layers: vec![Linear { w: 1.0, b: 2.0 }, Linear { w: 3.0, b: 4.0 }],
        activation: Activation::Relu,
        name: "mlp".into(),
    }
}

#[test]
fn flatten_gives_leaves_in_declaration_order_and_a_treedef() {
    let (leaves, def): (Vec<f32>, TreeDef) = pytree_std::flatten(mlp());
    assert_eq!(leaves, [1.0, 2.0, 3.0, 4.0]);
    assert_eq!(def.num_leaves(), 4);
    assert_eq!(
        def.to_string(),
        "Mlp { layers: [Linear { w: *, b: * }, Linear { w: *, b: * }], activation: Relu, name: \"mlp\" }"
    );
}

#[test]
fn unflatten_rebuilds_the_value_with_its_static_fields() {
    let (leaves, def) = pytree_std::flatten(mlp());
    let back: Mlp<f32> = pytree_std::unflatten(&def, leaves).unwrap();
    assert_eq!(back, mlp());
}

#[test]
fn structure_of_a_borrowed_tree_equals_the_flattened_treedef() {
    let (_, def) = pytree_std::flatten(mlp());
    assert_eq!(pytree_std::structure(&mlp()), def);
}

#[test]
fn try_map_changes_the_leaf_type() {
    let wide: Mlp<f64> = pytree_std::walk::map_into(mlp(), |x| x as f64 * 2.0).unwrap();
    assert_eq!(wide.layers[1].b, 8.0);
    assert_eq!(wide.name, "mlp");
    assert_eq!(wide.activation, Activation::Relu);
}

#[test]
fn unflatten_with_too_few_leaves_names_the_missing_leaf() {
    let def = pytree_std::structure(&mlp());
    let err = pytree_std::unflatten::<Mlp<f32>>(&def, vec![1.0, 2.0, 3.0]).unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::TooFewLeaves {
            expected: 4,
            found: 3
        }
    );
    assert_eq!(err.path().to_string(), ".layers[1].b");
    assert_eq!(
        err.to_string(),
        "at .layers[1].b: too few leaves for TreeDef: expected 4, got 3"
    );
}

#[test]
fn for_each_mut_updates_leaves_in_place() {
    let mut m = mlp();
    pytree_std::for_each_mut(&mut m, |x: &mut f32| *x *= 10.0);
    assert_eq!(pytree_std::flatten(m).0, [10.0, 20.0, 30.0, 40.0]);
}

#[test]
fn leaves_borrows_every_leaf() {
    let m = mlp();
    let leaves: Vec<&f32> = pytree_std::leaves(&m);
    assert_eq!(leaves.len(), 4);
}

#[derive(PyTree, Clone, Debug, PartialEq)]
#[pytree(leaf)]
struct Tensor(Vec<f32>);

#[test]
fn a_user_leaf_type_is_one_leaf() {
    let t: Mlp<Tensor> = Mlp {
        layers: vec![Linear {
            w: Tensor(vec![1.0, 2.0]),
            b: Tensor(vec![3.0]),
        }],
        activation: Activation::Tanh,
        name: "t".into(),
    };
    let (leaves, def): (Vec<Tensor>, TreeDef) = pytree_std::flatten(t.clone());
    assert_eq!(leaves, [Tensor(vec![1.0, 2.0]), Tensor(vec![3.0])]);
    assert_eq!(
        pytree_std::unflatten::<Mlp<Tensor>>(&def, leaves).unwrap(),
        t
    );
}

fn total<P: pytree_std::PyTree<Leaf = f32>>(p: P) -> f32 {
    pytree_std::flatten(p).0.iter().sum()
}

#[test]
fn generic_code_bounds_on_pytree_with_a_leaf_type() {
    assert_eq!(total(mlp()), 10.0);
    assert_eq!(total((1.0f32, vec![2.0f32])), 3.0);
}
