//! flatten writes the records of a `Vec` of uniform elements by copying the
//! first element's (`Sink::repeat_like`); the TreeDef must be the one the
//! record-by-record walk (`structure`) builds, leaf runs merged the same
//! way, and the leaves must come back in order.
#![allow(clippy::vec_box)] // boxes in a Vec are what is tested

use pytree_std::{PyTree, TreeDef};

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Linear {
    w: f64,
    b: f64,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Head {
    q: Linear,
    k: (f64, f64),
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Block {
    heads: [Head; 3],
    scale: f64,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Model {
    layers: Vec<Linear>,
    bias: f64,
    blocks: Vec<Block>,
    tail: Vec<(f64, [f64; 2])>,
    boxed: Vec<Box<Linear>>,
    leaves_in_boxes: Vec<Box<f64>>,
    last: f64,
}

fn counter() -> impl FnMut() -> f64 {
    let mut i = 0.0;
    move || {
        i += 1.0;
        i
    }
}

fn model(n: usize) -> Model {
    let mut c = counter();
    let lin = |c: &mut dyn FnMut() -> f64| Linear { w: c(), b: c() };
    Model {
        layers: (0..n).map(|_| lin(&mut c)).collect(),
        bias: c(),
        blocks: (0..n)
            .map(|_| Block {
                heads: [(); 3].map(|_| Head {
                    q: lin(&mut c),
                    k: (c(), c()),
                }),
                scale: c(),
            })
            .collect(),
        tail: (0..n).map(|_| (c(), [c(), c()])).collect(),
        boxed: (0..n).map(|_| Box::new(lin(&mut c))).collect(),
        leaves_in_boxes: (0..n).map(|_| Box::new(c())).collect(),
        last: c(),
    }
}

fn check<
    T: pytree_std::Flatten<pytree_std::Std, Leaf = f64>
        + pytree_std::Unflatten<pytree_std::Std>
        + Clone
        + PartialEq
        + std::fmt::Debug,
>(
    t: &T,
) {
    let walked: TreeDef = pytree_std::structure(t);
    let (leaves, def) = pytree_std::flatten(t.clone());
    assert_eq!(def, walked, "{def} vs {walked}");
    assert_eq!(def.to_string(), walked.to_string());
    assert_eq!(def.num_leaves(), leaves.len());
    assert_eq!(def.num_records(), walked.num_records());
    let expected: Vec<f64> = pytree_std::leaves(t).into_iter().copied().collect();
    assert_eq!(leaves, expected);
    let back: T = pytree_std::unflatten(&def, leaves).unwrap();
    assert_eq!(&back, t);
}

#[test]
fn repeated_records_equal_the_walked_ones_for_every_length() {
    // Up to 5 by one, and lengths whose copies double past a power of two.
    for n in (0..6).chain([8, 9, 17, 48, 100]) {
        check(&model(n));
    }
}

#[test]
fn leaf_runs_after_a_repeated_sequence_merge_as_without_it() {
    // The last element's trailing run and the leaf after the Vec are one run.
    #[derive(PyTree, Clone, Debug, PartialEq)]
    struct Then {
        layers: Vec<Linear>,
        after: f64,
    }
    let t = Then {
        layers: vec![Linear { w: 1.0, b: 2.0 }, Linear { w: 3.0, b: 4.0 }],
        after: 5.0,
    };
    check(&t);
    let def = pytree_std::structure(&t);
    // Then, Seq, Linear, Leaves(2), Linear, Leaves(3).
    assert_eq!(def.num_records(), 6);
    check(&vec![t.clone(), t.clone(), t]);
}

#[test]
fn a_repeated_treedef_reads_back_as_other_types() {
    // The copied records are as good as walked ones for every reader.
    let t = vec![Linear { w: 1.0, b: 2.0 }; 4];
    let (leaves, def) = pytree_std::flatten(t.clone());
    let as_tree: pytree_std::Tree<f64> = pytree_std::unflatten(&def, leaves.clone()).unwrap();
    assert_eq!(as_tree.num_leaves(), 8);
    let err = pytree_std::unflatten::<Vec<(f64, f64)>>(&def, leaves).unwrap_err();
    assert!(err.to_string().contains("node mismatch"), "{err}");
}

#[test]
fn recursive_types_with_repeated_sequences_inside() {
    // A recursive type instantiates the leaves-only sink once, not once per
    // level (this failed to compile when the sink's type nested).
    #[derive(PyTree, Clone, Debug, PartialEq)]
    struct Node {
        layers: Vec<Linear>,
        children: Vec<Node>,
    }
    let leaf = |x: f64| Node {
        layers: vec![Linear { w: x, b: x + 0.5 }; 3],
        children: vec![],
    };
    let t = Node {
        layers: vec![Linear { w: 1.0, b: 2.0 }; 2],
        children: vec![leaf(3.0), leaf(4.0)],
    };
    check(&t);
}
