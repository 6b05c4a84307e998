//! `half::f16` / `half::bf16` as scalar leaves (feature `half`).

use pytree_std::half::{bf16, f16};
use pytree_std::{elements::Tolerance, DType, KeyPath, Leaf, PyTree, Signature, Std};

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Linear<T> {
    w: Vec<T>,
    b: T,
}

fn h(x: f32) -> f16 {
    f16::from_f32(x)
}

#[test]
fn half_floats_are_scalar_leaves_with_their_dtype() {
    assert_eq!(
        <f16 as Leaf<Std>>::signature(&&h(1.0)),
        Some(Signature::scalar(DType::F16))
    );
    assert_eq!(
        <bf16 as Leaf<Std>>::signature(&&bf16::ONE)
            .unwrap()
            .to_string(),
        "bf16[]"
    );
    let m = Linear {
        w: vec![h(1.0), h(2.0)],
        b: h(0.5),
    };
    let (leaves, def) = pytree_std::flatten(m.clone());
    assert_eq!(leaves, [h(1.0), h(2.0), h(0.5)]);
    assert_eq!(def.to_string(), "Linear { w: [*, *], b: * }");
    let back: Linear<f16> = pytree_std::unflatten(&def, leaves).unwrap();
    assert_eq!(back, m);
}

#[test]
fn operations_on_half_trees() {
    let m = Linear {
        w: vec![h(1.0), h(2.0)],
        b: h(0.5),
    };
    let sum = pytree_std::walk::map_n(&m, [&m], |x, [y]| x + y).unwrap();
    assert_eq!(sum.w, [h(2.0), h(4.0)]);
    let wide: Linear<f32> = pytree_std::walk::map_into(m.clone(), f16::to_f32).unwrap();
    assert_eq!(wide.b, 0.5);
    let brain: Linear<bf16> = pytree_std::walk::map_into(wide, bf16::from_f32).unwrap();
    assert_eq!(brain.w[1], bf16::from_f32(2.0));
    let mut p = m.clone();
    pytree_std::zip_mut([&mut p], [&m], |[x], [g]| *x -= *g).unwrap();
    assert_eq!(p.w, [h(0.0), h(0.0)]);
    let err = pytree_std::zip_mut(
        [&mut p],
        [&Linear {
            w: vec![h(1.0)],
            b: h(0.0),
        }],
        |[x], [g]| *x -= *g,
    )
    .unwrap_err();
    assert_eq!(err.path().to_string(), ".w");
    let old = pytree_std::paths::set(&mut p, &KeyPath::root().field("b"), h(9.0)).unwrap();
    assert_eq!((old, p.b), (h(0.0), h(9.0)));
}

#[test]
fn tree_equal_compares_half_floats_as_f32() {
    let a = Linear {
        w: vec![h(1.0)],
        b: h(0.5),
    };
    let b = Linear {
        w: vec![h(1.001)],
        b: h(0.5),
    };
    assert!(!pytree_std::elements::tree_equal(&a, &b, Tolerance::EXACT));
    assert!(pytree_std::elements::tree_equal(
        &a,
        &b,
        Tolerance::new(0.0, 1e-2)
    ));
    let nan = Linear {
        w: vec![f16::NAN],
        b: h(0.5),
    };
    assert!(!pytree_std::elements::tree_equal(
        &nan,
        &nan.clone(),
        Tolerance::new(1.0, 1.0)
    ));
}
