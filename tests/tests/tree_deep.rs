//! Deep and wide trees: a tree 100 000 levels deep builds, flattens,
//! unflattens, prints, compares, clones, iterates and drops without
//! overflowing the stack (every walk is iterative, `Drop` too), and wide
//! trees work at 10^5 entries. Speed is measured in `benches/benches/tree.rs`.

use pytree_std::{tree, Tree, TreeDef};

const DEPTH: usize = 100_000;

/// `{"k": {"k": ... {"k": 1} ...}}`, `levels` maps deep.
fn deep_maps(levels: usize) -> Tree<u32> {
    let mut t = Tree::leaf(1);
    for _ in 0..levels {
        t = Tree::dict([("k", t)]);
    }
    t
}

/// `[[...[1, 2]...], 0]`, mixing sequences in.
fn deep_seqs(levels: usize) -> Tree<u32> {
    let mut t = tree!([1, 2]);
    for _ in 0..levels {
        t = Tree::seq([t, Tree::leaf(0)]);
    }
    t
}

#[test]
fn a_deep_tree_builds_measures_and_drops() {
    let t = deep_maps(DEPTH);
    assert_eq!(t.depth(), DEPTH);
    assert_eq!(t.num_leaves(), 1);
    drop(t);
    let s = deep_seqs(DEPTH);
    assert_eq!(s.num_leaves(), DEPTH + 2);
}

#[test]
fn a_deep_tree_flattens_and_unflattens() {
    let t = deep_seqs(DEPTH);
    let (leaves, def): (Vec<u32>, TreeDef) = pytree_std::flatten(t.clone());
    assert_eq!(leaves.len(), DEPTH + 2);
    assert_eq!(def.num_leaves(), DEPTH + 2);
    let back: Tree<u32> = pytree_std::unflatten(&def, leaves).unwrap();
    assert_eq!(back, t);
    assert_eq!(pytree_std::structure(&t), def);
    let doubled = pytree_std::map(t.clone(), |x| x * 2);
    assert_eq!(
        pytree_std::leaves(&doubled).iter().copied().sum::<u32>(),
        2 * 3
    );
}

#[test]
fn a_deep_tree_compares_clones_and_zips() {
    let a = deep_maps(DEPTH);
    let b = deep_maps(DEPTH);
    assert_eq!(a, b);
    let c = a.clone();
    assert!(c.shares_storage_with(&a));
    let sum = &a + &b;
    assert_eq!(
        sum.subtree(&vec!["k"; DEPTH][..]).and_then(Tree::as_leaf),
        Some(&2)
    );
    let mut other = deep_maps(DEPTH);
    other.insert(&vec!["k"; DEPTH][..], 5).unwrap();
    assert_ne!(a, other);
    let err = pytree_std::walk::map_n(&a, [&deep_maps(DEPTH - 1)], |x, [y]| x + y).unwrap_err();
    assert_eq!(err.path().len(), DEPTH - 1);
}

#[test]
fn a_deep_tree_prints_truncated_and_debugs_in_full() {
    let t = deep_maps(DEPTH);
    let shown = t.to_string();
    assert_eq!(shown.lines().count(), 64);
    assert!(shown.ends_with("└── k --> …"));
    let literal = format!("{:?}", t);
    assert_eq!(literal.len(), DEPTH * "{\"k\": }".len() + 1);
}

#[test]
fn a_deep_tree_iterates_with_its_full_path() {
    let t = deep_maps(DEPTH);
    let (path, leaf) = t.iter().next().unwrap();
    assert_eq!((path.len(), *leaf), (DEPTH, 1));
    let back: Tree<u32> = t.clone().into_iter().collect();
    assert_eq!(back, t);
}

#[test]
fn a_deep_typed_treedef_becomes_a_deep_tree() {
    // A TreeDef 100 000 levels deep (nested one-element Vecs), built
    // record by record, is read into a Tree without recursion.
    let mut b = pytree_std::TreeDefBuilder::new();
    for _ in 0..DEPTH {
        b.node(pytree_std::NodeRef::Seq(1));
    }
    b.leaf();
    // Deeper than the default limits let a builder go.
    let mut limits = pytree_std::TreeDefLimits::DEFAULT;
    limits.max_depth = DEPTH;
    let def = limits.scope(|| b.finish()).unwrap();
    let t: Tree<u8> = pytree_std::unflatten(&def, [9u8]).unwrap();
    assert_eq!(t.depth(), DEPTH);
}

#[test]
fn a_wide_map_round_trips() {
    let n = 100_000;
    let t = Tree::dict((0..n).map(|i| (format!("k{i:06}"), Tree::leaf(i as f64))));
    assert_eq!(t.len(), n);
    let (leaves, def) = pytree_std::flatten(t.clone());
    assert_eq!(leaves[n - 1], (n - 1) as f64);
    let back: Tree<f64> = pytree_std::unflatten(&def, leaves).unwrap();
    assert_eq!(back, t);
    assert_eq!(t["k099999"].as_leaf(), Some(&99_999.0));
}
