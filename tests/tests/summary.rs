//! `summary` and `signatures`: what a tree of tensors holds, per leaf and
//! per subtree.

use pytree_std::{DType, PyTree, Signature, Tree};

#[derive(PyTree, Clone)]
struct Linear {
    w: Vec<f32>,
    b: Vec<f32>,
}

#[derive(PyTree, Clone)]
struct BatchNorm {
    scale: f32,
    #[pytree(kind = "state")]
    mean: f32,
}

#[derive(PyTree, Clone)]
struct Mlp {
    layers: Vec<Linear>,
    norm: BatchNorm,
    #[pytree(static)]
    name: String,
}

fn mlp() -> Mlp {
    Mlp {
        layers: vec![
            Linear {
                w: vec![0.0; 1200],
                b: vec![0.0; 3],
            },
            Linear {
                w: vec![0.0; 300],
                b: vec![0.0; 100],
            },
        ],
        norm: BatchNorm {
            scale: 1.0,
            mean: 0.0,
        },
        name: "mlp".into(),
    }
}

#[test]
fn the_table_shows_subtrees_with_their_totals_and_totals_per_kind() {
    let s = pytree_std::elements::summary(&mlp()).max_depth(3);
    insta::assert_snapshot!(s.to_string());
}

#[test]
fn totals_count_elements_and_bytes() {
    let s = pytree_std::elements::summary(&mlp());
    assert_eq!(s.num_leaves(), 1605);
    assert_eq!(s.num_elements(), 1605);
    assert_eq!(s.num_bytes(), Some(1605 * 4));
    let layer0 = s
        .rows()
        .iter()
        .find(|r| r.path.to_string() == ".layers[0]")
        .unwrap();
    assert_eq!(
        (layer0.leaves, layer0.elements, layer0.bytes),
        (1203, 1203, Some(4812))
    );
    assert!(!layer0.is_leaf);
}

#[test]
fn a_tree_without_leaves_has_an_empty_table_and_zero_totals() {
    let s = pytree_std::elements::summary(&Vec::<f32>::new());
    assert_eq!(
        (s.num_leaves(), s.num_elements(), s.num_bytes()),
        (0, 0, Some(0))
    );
    assert_eq!(
        s.to_string(),
        "path   dtype       shape  elements  bytes\ntotal  (0 leaves)                0    0 B\n"
    );
}

#[test]
fn signatures_give_a_tree_of_the_same_structure() {
    let sigs = pytree_std::elements::signatures(&mlp()).unwrap();
    assert_eq!(
        sigs["norm"]["mean"],
        Tree::leaf(Signature::scalar(DType::F32))
    );
    assert_eq!(sigs["layers"][1]["b"].len(), 100);
    // The same paths as the model's own leaves.
    let paths: Vec<String> = pytree_std::paths::leaves_with_path(&sigs)
        .into_iter()
        .map(|(p, _)| p.to_string())
        .collect();
    let model_paths: Vec<String> = pytree_std::paths::leaves_with_path(&mlp())
        .into_iter()
        .map(|(p, _)| p.to_string())
        .collect();
    assert_eq!(paths.len(), model_paths.len());
}
