//! Untrusted TreeDefs: documents and hand-built TreeDefs are checked where
//! they come in, limits bound what a small document may claim, and every
//! reader of a TreeDef works in proportion to what it is given or returns
//! (or says no), so a 90-byte document is not a bomb.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use pytree_std::{
    tree, NodeRef, NodeView, PyTree, StaticValue, Tree, TreeDef, TreeDefBuilder, TreeDefLimits,
};

/// The document of the issue: a sequence of 10^18 leaves, two records.
const BOMB: &str =
    r#"{"schemas":[],"nodes":[{"seq":1000000000000000000},{"leaves":1000000000000000000}]}"#;

fn read(doc: &str) -> Result<TreeDef, serde_json::Error> {
    serde_json::from_str(doc)
}

/// Runs `f` and checks it took less than a second (each reader below works
/// on two or three records; one that walked the leaves would take years).
fn quick<R>(what: &str, f: impl FnOnce() -> R) -> R {
    let start = Instant::now();
    let r = f();
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{what} took {:?}",
        start.elapsed()
    );
    r
}

#[test]
fn a_document_claiming_more_leaves_than_the_limits_is_refused() {
    let err = read(BOMB).unwrap_err().to_string();
    assert!(
        err.starts_with("TreeDef record 1: more than 4294967296 leaves"),
        "{err}"
    );
    let max =
        r#"{"schemas":[],"nodes":[{"seq":18446744073709551615},{"leaves":18446744073709551615}]}"#;
    assert!(read(max).is_err());
    // Even without limits, a count that overflows a usize is an error.
    let err = TreeDefLimits::UNLIMITED.scope(|| read(max)).unwrap_err();
    assert!(
        err.to_string()
            .contains("more nodes than a usize can count"),
        "{err}"
    );
}

#[test]
fn every_reader_of_a_huge_treedef_is_quick_or_says_no() {
    let def = TreeDefLimits::UNLIMITED.scope(|| read(BOMB)).unwrap();
    let n = 1_000_000_000_000_000_000usize;
    assert_eq!(def.num_leaves(), n);
    assert_eq!(quick("num_nodes", || def.num_nodes()), n + 1);
    assert_eq!(def.root_node(), NodeView::Seq(n));
    // Display and Debug print the first leaves of a long run and a count.
    let text = quick("Display", || def.to_string());
    assert_eq!(
        text,
        "[*, *, *, *, *, *, *, *, ... 999999999999999992 more leaves]"
    );
    assert_eq!(
        quick("Debug", || format!("{def:?}")),
        format!("TreeDef({text})")
    );
    // Equality, hashing and the structural relations work on records.
    let other = TreeDefLimits::UNLIMITED.scope(|| read(BOMB)).unwrap();
    assert!(quick("eq", || def == other));
    assert!(quick("diff", || def.diff(&other)).is_empty());
    let shorter = pytree_std::structure(&vec![0u8; 3]);
    assert_eq!(quick("diff", || def.diff(&shorter)).len(), 1);
    assert!(quick("is_prefix_of", || def.is_prefix_of(&other)));
    assert!(quick("is_prefix_of", || !def.is_prefix_of(&shorter)));
    // Results made of one value per leaf, against a real value: errors.
    assert!(quick("compose", || def.compose(&def)).is_err());
    assert!(quick("compose", || def.compose(&TreeDef::leaf())).is_ok());
    let pair = pytree_std::structure(&(0u8, 0u8));
    assert!(quick("transpose", || {
        pytree_std::transpose::<_, Vec<(u8, u8)>>(&def, &pair, vec![(1u8, 2u8)])
    })
    .is_err());
    assert!(quick("unflatten", || pytree_std::unflatten::<Vec<u8>>(
        &def,
        [1u8]
    ))
    .is_err());
    assert!(quick("unflatten", || {
        pytree_std::unflatten::<Vec<(u8,)>>(&def, [1u8])
    })
    .is_err());
    assert!(quick("unflatten", || pytree_std::unflatten::<Tree<u8>>(
        &def,
        [1u8]
    ))
    .is_err());
    assert!(quick("flatten_up_to", || pytree_std::flatten_up_to(
        &def,
        vec![1u8, 2]
    ))
    .is_err());
    assert!(quick("to_pytree", || tree!([1u8, 2]).to_pytree::<Vec<u8>>(&def)).is_err());
    assert!(quick("rise", || {
        pytree_std::rise::<u8, u8, Vec<u8>, Vec<u8>>(&def, [(1u8, 2u8)])
    })
    .is_err());
    assert!(quick("serialize", || serde_json::to_string(&def)).is_ok());
    // The node-by-node readers.
    assert_eq!(quick("num_children", || def.num_children()), n);
    assert!(quick("child", || def.child(n - 1)).is_some_and(|c| c.is_leaf()));
    assert!(quick("child", || def.child(n)).is_none());
    assert_eq!(quick("one_level", || def.one_level()), def);
    assert!(quick("is_one_level", || def.is_one_level()));
    assert_eq!(
        quick("leaf_path", || def.leaf_path(n - 1)).map(|p| p.to_string()),
        Some(format!("[{}]", n - 1))
    );
    assert!(quick("leaf_path", || def.leaf_path(n)).is_none());
    let p = quick("parse_key_path", || {
        def.parse_key_path("[999999999999999999]", pytree_std::KeyStr::FULL)
    });
    assert_eq!(p.unwrap().to_string(), "[999999999999999999]");
    assert!(quick("walk", || def.walk([1u8], |x| x, |_, _| 0)).is_err());
    assert!(quick("is_strict_prefix_of", || !def.is_strict_prefix_of(&other)));
    assert!(quick("broadcast_to_common_suffix", || def
        .broadcast_to_common_suffix(&shorter))
    .is_err());
    let mut wider = TreeDefLimits::UNLIMITED;
    wider.max_depth = 8;
    let doc = r#"{"schemas":[],"nodes":[{"seq":2},{"seq":1000000000000000000},{"leaves":1000000000000000000},"none"]}"#;
    let two = wider.scope(|| read(doc)).unwrap();
    assert!(quick("broadcast_to_common_suffix", || two
        .broadcast_to_common_suffix(&two))
    .is_ok());
    assert!(quick("is_strict_prefix_of", || !two.is_strict_prefix_of(&two)));
}

#[test]
fn children_are_copied_one_by_one_not_reserved_from_the_count() {
    // A pair whose first child is the bomb: two children, returned at once.
    let doc =
        r#"{"schemas":[],"nodes":[{"tuple":2},{"seq":1000000000000},{"leaves":1000000000001}]}"#;
    let def = TreeDefLimits::UNLIMITED.scope(|| read(doc)).unwrap();
    let kids = quick("children", || def.children());
    assert_eq!(kids.len(), 2);
    assert_eq!(kids[0].num_leaves(), 1_000_000_000_000);
    assert!(kids[1].is_leaf());
}

#[test]
fn each_limit_is_enforced_with_a_message_naming_it() {
    let json = serde_json::to_string(&pytree_std::structure(&vec![Some(vec![1u8, 2])])).unwrap();
    let check = |limits: TreeDefLimits, message: &str| {
        let err = limits.scope(|| read(&json)).unwrap_err().to_string();
        assert!(err.contains(message), "{err}");
    };
    let mut l = TreeDefLimits::DEFAULT;
    l.max_leaves = 1;
    check(l, "more than 1 leaves");
    let mut l = TreeDefLimits::DEFAULT;
    l.max_nodes = 2;
    check(l, "more than 2 internal nodes");
    let mut l = TreeDefLimits::DEFAULT;
    l.max_depth = 2;
    check(l, "nodes nested more than 2 deep");
    let json = serde_json::to_string(&pytree_std::structure(&Pair { a: 1u8, b: 2 })).unwrap();
    let mut l = TreeDefLimits::DEFAULT;
    l.max_schemas = 0;
    let err = l.scope(|| read(&json)).unwrap_err().to_string();
    assert!(
        err.contains("the TreeDef lists 1 schemas, more than 0"),
        "{err}"
    );
    // Within the defaults, all of them read.
    assert!(read(&json).is_ok());
}

#[test]
fn a_scope_restores_the_limits_even_when_it_panics() {
    let caught = std::panic::catch_unwind(|| {
        TreeDefLimits::UNLIMITED.scope(|| panic!("inside"));
    });
    assert!(caught.is_err());
    assert_eq!(TreeDefLimits::current(), TreeDefLimits::DEFAULT);
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Pair<T> {
    a: T,
    b: T,
}

#[test]
fn the_builder_refuses_what_is_not_one_tree() {
    let finish = |steps: &dyn Fn(&mut TreeDefBuilder)| {
        let mut b = TreeDefBuilder::new();
        steps(&mut b);
        b.finish().map_err(|e| e.to_string())
    };
    let err = finish(&|b| {
        b.leaves(usize::MAX);
        b.leaf();
    })
    .unwrap_err();
    assert!(err.contains("more leaves than a usize can count"), "{err}");
    let err = finish(&|b| {
        b.node(NodeRef::Map(2));
        b.leaves(2);
        b.map_keys(StaticValue::keys(vec!["only one"]));
    })
    .unwrap_err();
    assert!(err.contains("a map of 2 entries with 1 key(s)"), "{err}");
    let err = finish(&|b| {
        b.node(NodeRef::Map(1));
        b.leaf();
    })
    .unwrap_err();
    assert!(err.contains("a map node was given no keys"), "{err}");
    let err = finish(&|b| {
        b.node(NodeRef::Map(1));
        b.leaf();
        b.map_keys(StaticValue::new("k"));
    })
    .unwrap_err();
    assert!(err.contains("whose keys are not map keys"), "{err}");
    let err = finish(&|b| b.map_keys(StaticValue::keys(vec!["k"]))).unwrap_err();
    assert!(err.contains("no map waiting"), "{err}");
    let err = finish(&|b| {
        b.node(NodeRef::Seq(2));
        b.leaves(3);
    })
    .unwrap_err();
    assert!(
        err.contains("3 leaves where only 2 place(s) are left"),
        "{err}"
    );
    let schema = match pytree_std::structure(&Pair { a: 0u8, b: 0 }).root_node() {
        NodeView::Struct { schema, .. } => schema,
        other => panic!("{other:?}"),
    };
    let err = finish(&|b| {
        b.node(NodeRef::Struct {
            schema,
            statics: &[&1u8],
        });
        b.leaves(2);
    })
    .unwrap_err();
    assert!(err.contains("Pair has 0 static field(s), given 1"), "{err}");
}

#[test]
fn what_the_builder_accepts_serializes_and_reads_back() {
    let mut b = TreeDefBuilder::new();
    b.node(NodeRef::Tuple(3));
    b.node(NodeRef::Map(2));
    b.leaf();
    b.node(NodeRef::None);
    b.map_keys(StaticValue::keys(vec![
        String::from("a"),
        String::from("b"),
    ]));
    b.node(NodeRef::Some);
    b.leaves(2);
    let def = b.finish().unwrap();
    assert_eq!(def.to_string(), r#"({"a": *, "b": None}, Some(*), *)"#);
    let back = read(&serde_json::to_string(&def).unwrap()).unwrap();
    assert_eq!(back, def);
    let t: Tree<u8> = pytree_std::unflatten(&def, [1, 2, 3]).unwrap();
    assert_eq!(t, tree!([{ "a" => 1, "b" => None }, 2, 3]));
}

#[test]
fn reading_many_distinct_schemas_takes_linear_time() {
    // One document listing `n` distinct schemas, each used once. Interning
    // used to search every known schema for each new one (quadratic).
    let doc = |n: usize, tag: &str| {
        let schemas: Vec<String> = (0..n)
            .map(|i| format!(r#"{{"type":"T{tag}{i}","module":"m","variant":null,"style":"named","fields":[{{"name":"x","static":false}}]}}"#))
            .collect();
        let mut nodes = vec![format!(r#"{{"tuple":{n}}}"#)];
        nodes.extend(
            (0..n).map(|i| format!(r#"{{"struct":{{"schema":{i},"statics":[]}}}},{{"leaves":1}}"#)),
        );
        format!(
            r#"{{"schemas":[{}],"nodes":[{}]}}"#,
            schemas.join(","),
            nodes.join(",")
        )
    };
    let time = |n: usize, tag: &str| {
        let text = doc(n, tag);
        let start = Instant::now();
        let def = read(&text).unwrap();
        assert_eq!(def.num_leaves(), n);
        start.elapsed()
    };
    let small = (0..3)
        .map(|k| time(5_000, &format!("s{k}_")))
        .min()
        .unwrap();
    let large = (0..3)
        .map(|k| time(40_000, &format!("l{k}_")))
        .min()
        .unwrap();
    // 8 times the schemas: linear is about 8 times the time, quadratic 64.
    assert!(
        large < small * 24,
        "5 000 schemas: {small:?}, 40 000 schemas: {large:?}"
    );
}

#[test]
fn non_finite_leaves_are_an_error_at_their_path_in_json() {
    let t: Tree<f64> = tree! { "a" => 1.0, "x" => [2.0, f64::NAN], "y" => f64::INFINITY };
    let err = serde_json::to_string(&t).unwrap_err().to_string();
    assert!(
        err.starts_with(r#"at ["x"][1]: the leaf NaN cannot be written"#),
        "{err}"
    );
    let t: Tree<f32> = tree! { "y" => f32::NEG_INFINITY };
    let err = serde_json::to_string(&t).unwrap_err().to_string();
    assert!(err.starts_with(r#"at ["y"]: the leaf -inf"#), "{err}");
    // Finite floats round trip exactly; None stays None.
    let t: Tree<f64> = tree! { "a" => 1.0e-300, "x" => [f64::MAX, None] };
    let back: Tree<f64> = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
    assert_eq!(back, t);

    use pytree_std::serialized::Serialized;
    let err = serde_json::to_string(&Serialized(vec![f64::NAN]))
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("at [0]: the leaf NaN cannot be written"),
        "{err}"
    );
    let err = serde_json::to_string(&Serialized(Pair {
        a: 1.0,
        b: f64::INFINITY,
    }))
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("at .b: the leaf inf cannot be written"),
        "{err}"
    );
    let err = serde_json::to_string(&Serialized(f32::NAN))
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("at <root>: the leaf NaN"), "{err}");
}

#[test]
fn partition_then_combine_is_the_identity_for_dynamic_trees() {
    let trees: Vec<Tree<i32>> = vec![
        Tree::leaf(0),
        Tree::none(),
        tree!([]),
        tree! { "a" => 1, "b" => [2, None, 3], "c" => None, "d" => { "e" => 4 } },
        tree!([[1, 2], { "k" => [None, 5] }]),
    ];
    for t in trees {
        for pred in [|_: &i32| true, |_: &i32| false, |x: &i32| x % 2 == 1] {
            let (a, b): (Tree<i32>, Tree<i32>) =
                pytree_std::partition(t.clone(), |_, x| pred(x)).unwrap();
            let back: Tree<i32> = pytree_std::combine(a, b).unwrap();
            assert_eq!(back, t);
        }
    }
    // Typed halves combine into a tree too; a leaf held twice is an error.
    let v: Tree<i32> = pytree_std::combine(vec![Some(1), None], vec![None, Some(2)]).unwrap();
    assert_eq!(v, tree!([1, 2]));
    let err = pytree_std::combine::<_, Tree<i32>>(tree!([1]), tree!([2])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at [0]: trees 0 and 1 both hold a leaf here; combine needs exactly one"
    );
    let err = pytree_std::combine::<_, Tree<i32>>(tree!([1]), tree!({ "k" => 2 })).unwrap_err();
    assert!(err.to_string().contains("node mismatch"), "{err}");
    let m: Tree<i32> = pytree_std::combine(
        BTreeMap::from([("a", Some(1)), ("b", None)]),
        BTreeMap::from([("a", None), ("b", Some(2))]),
    )
    .unwrap();
    assert_eq!(m, tree! { "a" => 1, "b" => 2 });
}
