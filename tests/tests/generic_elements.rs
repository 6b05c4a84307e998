//! A model generic over its element type (`f32`, `f16`, `bf16`), as
//! transformers' dtypes need, derives without a hand-written `'static`,
//! and a checkpoint of one element type loads into another with
//! `Load::convert_floats`.

use pytree_std::checkpoint::{self, Load};
use pytree_std::half::{bf16, f16};
use pytree_std::ndarray::{array, Array1, Array2};
use pytree_std::PyTree;

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Linear<A> {
    w: Array2<A>,
    b: Array1<A>,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Mlp<A> {
    layers: Vec<Linear<A>>,
}

fn mlp<A: Clone>(x: impl Fn(f32) -> A) -> Mlp<A> {
    Mlp {
        layers: vec![Linear {
            w: array![[x(1.5), x(-2.0)], [x(0.25), x(3.0)]],
            b: array![x(0.5), x(-0.125)],
        }],
    }
}

#[test]
fn a_model_generic_over_its_element_type_is_a_pytree() {
    let m = mlp(|v| v);
    assert_eq!(pytree_std::leaves(&m).len(), 2);
    let h = mlp(f16::from_f32);
    assert_eq!(pytree_std::leaves(&h).len(), 2);
}

#[test]
fn an_f32_checkpoint_loads_into_the_f16_and_bf16_model_when_asked() {
    let bytes = checkpoint::Save::new().to_bytes(&mlp(|v| v)).unwrap();
    let like = mlp(|_| f16::ZERO);
    let err = Load::new()
        .from_bytes(bytes.clone())
        .unwrap()
        .load_like(&like)
        .unwrap_err();
    pytree_tests::assert_mentions(&err, "expected f16[2,2], found f32[2,2]");
    let file = Load::new().convert_floats().from_bytes(bytes).unwrap();
    // Every value is exact in both 16-bit formats, so the conversion is too.
    assert_eq!(file.load_like(&like).unwrap().0, mlp(f16::from_f32));
    let back: Mlp<bf16> = file.load_like(&mlp(|_| bf16::ZERO)).unwrap().0;
    assert_eq!(back, mlp(bf16::from_f32));
    // And by type alone (the TreeDef is in the file): f32 to f64.
    let wide: Mlp<f64> = file.load().unwrap().0;
    assert_eq!(wide, mlp(f64::from));
}
