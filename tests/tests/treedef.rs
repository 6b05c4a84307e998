//! TreeDef as a value: equality, hashing, cloning across threads, counts,
//! children, memory per node, and its printed form (pinned with insta).

mod models;

use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use models::Linear;
use pytree_std::{NodeView, PyTree, TreeDef};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Activation {
    Relu,
    Gelu { approximate: bool },
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Mlp<T> {
    layers: Vec<Linear<T>>,
    #[pytree(static)]
    activation: Activation,
    head: Option<Linear<T>>,
    extras: BTreeMap<String, T>,
}

fn mlp(n: usize, activation: Activation) -> Mlp<f32> {
    Mlp {
        layers: (0..n)
            .map(|i| Linear {
                w: i as f32,
                b: 0.0,
            })
            .collect(),
        activation,
        head: None,
        extras: BTreeMap::from([("scale".to_string(), 1.0)]),
    }
}

fn hash_of(def: &TreeDef) -> u64 {
    let mut h = DefaultHasher::new();
    def.hash(&mut h);
    h.finish()
}

#[test]
fn separately_built_equal_structures_are_equal_and_hash_alike() {
    let a = pytree_std::structure(&mlp(3, Activation::Relu));
    let b = pytree_std::flatten(mlp(3, Activation::Relu)).1;
    assert_eq!(a, b);
    assert_eq!(hash_of(&a), hash_of(&b));
}

#[test]
fn structure_static_data_and_leaf_types_decide_equality() {
    let base = pytree_std::structure(&mlp(2, Activation::Relu));
    assert_ne!(base, pytree_std::structure(&mlp(3, Activation::Relu)));
    assert_ne!(
        base,
        pytree_std::structure(&mlp(2, Activation::Gelu { approximate: true }))
    );
    // Leaf values and leaf types are not structure.
    let as_f64: Mlp<f64> = pytree_std::walk::map_into(mlp(2, Activation::Relu), f64::from).unwrap();
    assert_eq!(base, pytree_std::structure(&as_f64));
}

#[test]
fn treedef_is_send_sync_and_crosses_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<TreeDef>();
    let def = pytree_std::structure(&mlp(2, Activation::Relu));
    let copy = def.clone();
    let back = std::thread::spawn(move || copy.to_string()).join().unwrap();
    assert_eq!(back, def.to_string());
}

#[test]
fn counts_and_children() {
    let def = pytree_std::structure(&mlp(2, Activation::Relu));
    assert_eq!(def.num_leaves(), 5);
    // Mlp, Vec, 2 x (Linear + 2 leaves), None, map + 1 leaf
    assert_eq!(def.num_nodes(), 11);
    assert!(!def.is_leaf());
    let kids: Vec<String> = def
        .children()
        .unwrap()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        kids,
        [
            "[Linear { w: *, b: * }, Linear { w: *, b: * }]",
            "None",
            "{\"scale\": *}"
        ]
    );
    assert!(
        matches!(def.root_node(), NodeView::Struct { schema, .. } if schema.type_name() == "Mlp")
    );
}

#[test]
fn a_sequence_of_leaves_costs_two_records() {
    let def = pytree_std::structure(&vec![0.0f64; 100_000]);
    assert_eq!(def.num_records(), 2);
    assert_eq!(def.num_nodes(), 100_001);
}

#[test]
fn records_are_at_most_sixteen_bytes_per_node() {
    let def = pytree_std::structure(&mlp(48, Activation::Relu));
    let per_node = def.heap_bytes() as f64 / def.num_nodes() as f64;
    assert!(per_node <= 16.0, "{per_node} bytes per node");
}

#[test]
fn printed_treedefs() {
    let defs = [
        pytree_std::structure(&mlp(2, Activation::Gelu { approximate: false })).to_string(),
        pytree_std::structure(&(1, [2, 3], Some((4,)), None::<i32>)).to_string(),
        pytree_std::structure(&vec![BTreeMap::from([(1u8, vec![1.0f32]), (2, vec![])])])
            .to_string(),
        TreeDef::leaf().to_string(),
    ];
    insta::assert_snapshot!(defs.join("\n"));
}

#[test]
fn a_deep_treedef_prints_compares_and_drops_without_recursion() {
    // 100 000 nested Options: the TreeDef is flat, and printing, comparing,
    // hashing and dropping it never recurse.
    let mut b = pytree_std::TreeDefBuilder::new();
    for _ in 0..100_000 {
        b.node(pytree_std::NodeRef::Some);
    }
    b.leaf();
    let def = pytree_std::TreeDefLimits::UNLIMITED
        .scope(|| b.finish())
        .unwrap();
    let text = def.to_string();
    assert!(text.starts_with("Some(Some(") && text.contains("Some(*))") && text.ends_with(")))"));
    assert_eq!(text.len(), 100_000 * "Some()".len() + 1);
    assert_eq!(def.clone(), def);
    assert_eq!(hash_of(&def), hash_of(&def.clone()));
    assert_eq!(def.children().unwrap()[0].num_nodes(), 100_000);
}
