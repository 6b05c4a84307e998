//! `ravel` / `unravel` (JAX's `ravel_pytree`): leaves end to end in one
//! flat buffer, and a plan that rebuilds the tree from any buffer of the
//! right length.

use pytree_std::{ErrorKind, PyTree};

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Linear {
    w: Vec<f64>,
    b: f64,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
enum Layer {
    Dense(Linear),
    Skip,
}

fn model() -> Vec<Layer> {
    vec![
        Layer::Dense(Linear {
            w: vec![1.0, 2.0],
            b: 3.0,
        }),
        Layer::Skip,
        Layer::Dense(Linear {
            w: vec![4.0],
            b: 5.0,
        }),
    ]
}

#[test]
fn ravel_lays_leaves_in_leaf_order_and_unravel_inverts_it() {
    let (flat, plan) = pytree_std::elements::ravel(&model()).unwrap();
    assert_eq!(flat, [1.0, 2.0, 3.0, 4.0, 5.0]);
    assert_eq!(
        flat,
        pytree_std::leaves(&model())
            .into_iter()
            .copied()
            .collect::<Vec<_>>()
    );
    assert_eq!(plan.unravel(&flat).unwrap(), model());
}

#[test]
fn the_plan_rebuilds_any_buffer_of_its_length() {
    let (flat, plan) = pytree_std::elements::ravel(&model()).unwrap();
    let step: Vec<f64> = flat.iter().map(|x| x - 1.0).collect();
    let moved = plan.unravel(&step).unwrap();
    assert_eq!(
        moved[2],
        Layer::Dense(Linear {
            w: vec![3.0],
            b: 4.0
        })
    );
}

#[test]
fn a_buffer_of_another_length_is_an_error() {
    let (_, plan) = pytree_std::elements::ravel(&model()).unwrap();
    let err = plan.unravel(&[0.0; 6]).unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::LengthMismatch {
            expected: 5,
            found: 6
        }
    );
}

#[test]
fn ravel_into_reuses_the_buffer_and_checks_the_structure() {
    let (mut buf, plan) = pytree_std::elements::ravel(&model()).unwrap();
    let capacity = buf.capacity();
    let mut other = model();
    if let Layer::Dense(l) = &mut other[0] {
        l.b = 30.0;
    }
    plan.ravel_into(&other, &mut buf).unwrap();
    assert_eq!(buf, [1.0, 2.0, 30.0, 4.0, 5.0]);
    assert_eq!(buf.capacity(), capacity);

    let mut wrong = model();
    wrong[1] = Layer::Dense(Linear { w: vec![], b: 0.0 });
    let err = plan.ravel_into(&wrong, &mut buf).unwrap_err();
    assert_eq!(err.path().to_string(), "[1]");
}

#[test]
fn a_tree_without_leaves_ravels_to_nothing() {
    let (flat, plan) = pytree_std::elements::ravel(&vec![Layer::Skip]).unwrap();
    assert!(flat.is_empty() && plan.is_empty());
    assert_eq!(plan.unravel(&[]).unwrap(), vec![Layer::Skip]);
}
