//! Untrusted TreeDefs: documents and hand-built TreeDefs are checked where
//! they come in, limits bound what a small document may claim, and every
//! reader of a TreeDef works in proportion to what it is given or returns,
//! within an output budget (or says no), so a 90-byte document is not a
//! bomb. Costs are measured as work (bytes allocated, this thread's CPU
//! time), not the wall clock, so a loaded machine cannot fail these tests;
//! what must not exhaust memory runs in a child process under a limit.

use std::cell::Cell;
use std::collections::BTreeMap;

use pytree_std::{
    tree, NodeRef, NodeView, PyTree, StaticValue, Tree, TreeDef, TreeDefBuilder, TreeDefLimits,
};
use pytree_tests::child;

/// The document of the issue: a sequence of 10^18 leaves, two records.
const BOMB: &str =
    r#"{"schemas":[],"nodes":[{"seq":1000000000000000000},{"leaves":1000000000000000000}]}"#;

fn read(doc: &str) -> Result<TreeDef, serde_json::Error> {
    serde_json::from_str(doc)
}

/// Bytes allocated by this thread: in all, and the most held at once.
#[derive(Clone, Copy, Default)]
struct Tally {
    allocated: usize,
    held: isize,
    peak: isize,
}

thread_local! {
    // Const-initialized and without a destructor: using it allocates nothing.
    static TALLY: Cell<Tally> = const { Cell::new(Tally { allocated: 0, held: 0, peak: 0 }) };
}

fn record(grow: isize) {
    let _ = TALLY.try_with(|cell| {
        let mut t = cell.get();
        if grow > 0 {
            t.allocated += grow as usize;
        }
        t.held += grow;
        t.peak = t.peak.max(t.held);
        cell.set(t);
    });
}

#[global_allocator]
static ALLOCATOR: pytree_tests::counting::Counting = pytree_tests::counting::Counting::new(record);

/// What `f` allocated on this thread: `(bytes in all, most bytes held at
/// once above what was held before)`, and its result.
fn allocations<R>(f: impl FnOnce() -> R) -> (usize, usize, R) {
    let before = TALLY.with(Cell::get);
    TALLY.with(|c| {
        let mut t = c.get();
        t.peak = t.held;
        c.set(t);
    });
    let r = f();
    let after = TALLY.with(Cell::get);
    (
        after.allocated - before.allocated,
        (after.peak - before.held).max(0) as usize,
        r,
    )
}

/// Runs `f` and checks it allocated less than 4 MiB in all (each reader
/// below works on two or three records, and some reserve a bounded buffer;
/// one that made anything per leaf would need exabytes).
fn cheap<R>(what: &str, f: impl FnOnce() -> R) -> R {
    let (bytes, _, r) = allocations(f);
    assert!(bytes < 4 << 20, "{what} allocated {bytes} bytes");
    r
}

/// CPU time this thread has used (not the wall clock: other processes on
/// the machine do not add to it).
fn thread_cpu_time() -> std::time::Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant
    // Linux defines.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime");
    std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
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
    pytree_tests::assert_mentions(&err, "more nodes than a usize can count");
}

#[test]
fn every_reader_of_a_huge_treedef_is_cheap_or_says_no() {
    let def = TreeDefLimits::UNLIMITED.scope(|| read(BOMB)).unwrap();
    let n = 1_000_000_000_000_000_000usize;
    assert_eq!(def.num_leaves(), n);
    assert_eq!(cheap("num_nodes", || def.num_nodes()), n + 1);
    assert_eq!(def.root_node(), NodeView::Seq(n));
    // Display and Debug print the first leaves of a long run and a count.
    let text = cheap("Display", || def.to_string());
    assert_eq!(
        text,
        "[*, *, *, *, *, *, *, *, ... 999999999999999992 more leaves]"
    );
    assert_eq!(
        cheap("Debug", || format!("{def:?}")),
        format!("TreeDef({text})")
    );
    // Equality, hashing and the structural relations work on records.
    let other = TreeDefLimits::UNLIMITED.scope(|| read(BOMB)).unwrap();
    assert!(cheap("eq", || def == other));
    assert!(cheap("diff", || def.diff(&other)).is_empty());
    let shorter = pytree_std::structure(&vec![0u8; 3]);
    assert_eq!(cheap("diff", || def.diff(&shorter)).len(), 1);
    assert!(cheap("is_prefix_of", || def.is_prefix_of(&other)));
    assert!(cheap("is_prefix_of", || !def.is_prefix_of(&shorter)));
    // Results made of one value per leaf, against a real value: errors.
    assert!(cheap("compose", || def.compose(&def)).is_err());
    assert!(cheap("compose", || def.compose(&TreeDef::leaf())).is_ok());
    let pair = pytree_std::structure(&(0u8, 0u8));
    assert!(cheap("transpose", || {
        pytree_std::nested::transpose::<_, Vec<(u8, u8)>>(&def, &pair, vec![(1u8, 2u8)])
    })
    .is_err());
    assert!(cheap("unflatten", || pytree_std::unflatten::<Vec<u8>>(
        &def,
        [1u8]
    ))
    .is_err());
    assert!(cheap("unflatten", || {
        pytree_std::unflatten::<Vec<(u8,)>>(&def, [1u8])
    })
    .is_err());
    assert!(cheap("unflatten", || pytree_std::unflatten::<Tree<u8>>(
        &def,
        [1u8]
    ))
    .is_err());
    assert!(cheap("flatten_up_to", || pytree_std::nested::flatten_up_to(
        &def,
        vec![1u8, 2]
    ))
    .is_err());
    assert!(cheap("to_pytree", || tree!([1u8, 2]).to_pytree::<Vec<u8>>(&def)).is_err());
    assert!(
        cheap("rise", || {
            pytree_std::generic::transpose::unflatten_pairs::<
                pytree_std::Std,
                u8,
                u8,
                Vec<u8>,
                Vec<u8>,
            >(&def, [(1u8, 2u8)])
        })
        .is_err()
    );
    assert!(cheap("serialize", || serde_json::to_string(&def)).is_ok());
    // The node-by-node readers.
    assert_eq!(cheap("num_children", || def.num_children()), n);
    assert!(cheap("child", || def.child(n - 1)).is_some_and(|c| c.is_leaf()));
    assert!(cheap("child", || def.child(n)).is_none());
    assert_eq!(cheap("one_level", || def.one_level()), def);
    assert!(cheap("is_one_level", || def.is_one_level()));
    assert_eq!(
        cheap("leaf_path", || def.leaf_path(n - 1)).map(|p| p.to_string()),
        Some(format!("[{}]", n - 1))
    );
    assert!(cheap("leaf_path", || def.leaf_path(n)).is_none());
    let p = cheap("parse_key_path", || {
        def.parse_key_path("[999999999999999999]", pytree_std::paths::KeyStr::FULL)
    });
    assert_eq!(p.unwrap().to_string(), "[999999999999999999]");
    assert!(cheap("fold", || def.fold([1u8], |x| x, |_, _| 0)).is_err());
    assert!(cheap("is_strict_prefix_of", || !def.is_strict_prefix_of(&other)));
    assert!(cheap("broadcast_to_common_suffix", || def
        .broadcast_to_common_suffix(&shorter))
    .is_err());
    let mut wider = TreeDefLimits::UNLIMITED;
    wider.max_depth = 8;
    let doc = r#"{"schemas":[],"nodes":[{"seq":2},{"seq":1000000000000000000},{"leaves":1000000000000000000},"none"]}"#;
    let two = wider.scope(|| read(doc)).unwrap();
    assert!(cheap("broadcast_to_common_suffix", || two
        .broadcast_to_common_suffix(&two))
    .is_ok());
    assert!(cheap("is_strict_prefix_of", || !two.is_strict_prefix_of(&two)));
}

#[test]
fn children_are_copied_one_by_one_not_reserved_from_the_count() {
    // A pair whose first child is the bomb: two children, returned at once.
    let doc =
        r#"{"schemas":[],"nodes":[{"tuple":2},{"seq":1000000000000},{"leaves":1000000000001}]}"#;
    let def = TreeDefLimits::UNLIMITED.scope(|| read(doc)).unwrap();
    let kids = cheap("children", || def.children()).unwrap();
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
    // Work, not the wall clock: this thread's CPU time and the bytes the
    // read allocates.
    let cost = |n: usize, tag: &str| {
        let text = doc(n, tag);
        let start = thread_cpu_time();
        let (bytes, _, def) = allocations(|| read(&text).unwrap());
        assert_eq!(def.num_leaves(), n);
        (thread_cpu_time() - start, bytes)
    };
    let small: Vec<_> = (0..3).map(|k| cost(5_000, &format!("s{k}_"))).collect();
    let large: Vec<_> = (0..3).map(|k| cost(40_000, &format!("l{k}_"))).collect();
    let min_time = |c: &[(std::time::Duration, usize)]| c.iter().map(|c| c.0).min().unwrap();
    let (small_time, large_time) = (min_time(&small), min_time(&large));
    // 8 times the schemas: linear is about 8 times the work, quadratic 64.
    assert!(
        large_time < small_time * 24,
        "5 000 schemas: {small_time:?}, 40 000 schemas: {large_time:?} of CPU time"
    );
    let (small_bytes, large_bytes) = (small[0].1, large[0].1);
    assert!(
        large_bytes < small_bytes * 12,
        "5 000 schemas: {small_bytes} bytes, 40 000 schemas: {large_bytes} bytes"
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
                pytree_std::split::partition(t.clone(), |_, x| pred(x)).unwrap();
            let back: Tree<i32> = pytree_std::split::combine([a, b]).unwrap();
            assert_eq!(back, t);
        }
    }
    // Typed halves combine into a tree too; a leaf held twice is an error.
    let v: Tree<i32> =
        pytree_std::split::combine([vec![Some(1), None], vec![None, Some(2)]]).unwrap();
    assert_eq!(v, tree!([1, 2]));
    let err = pytree_std::split::combine::<_, Tree<i32>, 2>([tree!([1]), tree!([2])]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at [0]: trees 0 and 1 both hold a leaf here; combine needs exactly one"
    );
    let err = pytree_std::split::combine::<_, Tree<i32>, 2>([tree!([1]), tree!({ "k" => 2 })])
        .unwrap_err();
    assert!(err.to_string().contains("node mismatch"), "{err}");
    let m: Tree<i32> = pytree_std::split::combine([
        BTreeMap::from([("a", Some(1)), ("b", None)]),
        BTreeMap::from([("a", None), ("b", Some(2))]),
    ])
    .unwrap();
    assert_eq!(m, tree! { "a" => 1, "b" => 2 });
}

/// 84 bytes, accepted by the default limits: a sequence of exactly 2^32
/// leaves (the default leaf limit).
const AT_THE_LEAF_LIMIT: &str =
    r#"{"schemas":[],"nodes":[{"seq":4294967296},{"leaves":4294967296}]}"#;

/// 4096 nested one-child sequences over a run of 2^32 leaves (41 KB, the
/// default depth limit).
fn nested_at_the_limits() -> String {
    let mut nodes = vec![r#"{"seq":1}"#.to_string(); 4095];
    nodes.push(r#"{"seq":4294967296},{"leaves":4294967296}"#.to_string());
    format!(r#"{{"schemas":[],"nodes":[{}]}}"#, nodes.join(","))
}

/// Every reader whose result grows with the leaves a document claims: an
/// error naming the output budget, for a document the limits accept.
fn budgeted_readers_say_no(def: &TreeDef) {
    let says_no = |what: &str, r: Result<usize, pytree_std::Error>| match r {
        Ok(n) => panic!("{what} gave {n} items"),
        Err(e) => assert!(
            e.to_string().contains("more than the output budget")
                || e.to_string().contains("more than the work budget")
                || e.to_string().contains("more nodes than a usize counts"),
            "{what}: {e}"
        ),
    };
    if def.num_children() > 1 {
        says_no("children", def.children().map(|k| k.len()));
        says_no("entries", def.entries().map(|k| k.len()));
    } else {
        // One child: a copy of the records below the root.
        assert_eq!(def.children().unwrap().len(), 1);
    }
    says_no("leaf_paths", def.leaf_paths().map(|k| k.len()));
    says_no(
        "fold",
        def.fold(0..def.num_leaves(), |i| i, |_, kids| kids.len()),
    );
    let pair = pytree_std::structure(&(0u8, 0u8));
    says_no("compose", def.compose(&pair).map(|c| c.num_leaves()));
    says_no("compose", def.compose(def).map(|c| c.num_leaves()));
    // A transform calls a closure per leaf: refused before the first.
    let grown = def.transform(|_, node| Ok(node.clone()), |_| pair.clone());
    says_no("transform", grown.map(|t| t.num_leaves()));
}

#[test]
fn documents_the_default_limits_accept_do_not_make_any_reader_exhaust_memory() {
    if let Some(case) = child::case() {
        let doc = match case.as_str() {
            "leaf_limit" => AT_THE_LEAF_LIMIT.to_string(),
            "billion" => {
                r#"{"schemas":[],"nodes":[{"seq":1000000000},{"leaves":1000000000}]}"#.to_string()
            }
            "nested" => nested_at_the_limits(),
            other => panic!("no case {other}"),
        };
        let def = read(&doc).expect("within the default limits");
        let (_, peak, ()) = allocations(|| budgeted_readers_say_no(&def));
        assert!(peak < 64 << 20, "{case}: held {peak} bytes at once");
        println!("done");
        return;
    }
    // Before the budget each of these ran out of 4 GiB within seconds.
    for case in ["leaf_limit", "billion", "nested"] {
        let test = "documents_the_default_limits_accept_do_not_make_any_reader_exhaust_memory";
        child::run_case(test, case, 1 << 30).assert_done(case);
    }
}

#[test]
fn the_budget_is_what_the_caller_sets() {
    let def = read(r#"{"schemas":[],"nodes":[{"seq":100000},{"leaves":100000}]}"#).unwrap();
    // Within the default budget: 100 000 paths.
    assert_eq!(def.leaf_paths().unwrap().len(), 100_000);
    assert_eq!(def.children().unwrap().len(), 100_000);
    // Without the allowance, 32 bytes of records buy 64 bytes.
    let mut tight = TreeDefLimits::DEFAULT;
    tight.output_allowance = 0;
    let err = tight.scope(|| def.leaf_paths()).unwrap_err().to_string();
    assert!(
        err.starts_with("at <root>: the leaf paths of this TreeDef would take ")
            && err.contains("more than the output budget of 64 bytes")
            && err.contains("output_factor 2 times the TreeDef's 32 bytes"),
        "{err}"
    );
    let err = tight.scope(|| def.children()).unwrap_err().to_string();
    assert!(
        err.starts_with("at <root>: the children of this TreeDef would take "),
        "{err}"
    );
    // Raised for one scope, a trusted TreeDef of 2^32 leaves is folded
    // (its results are zero-sized, so the fold allocates nothing per leaf).
    let big = read(AT_THE_LEAF_LIMIT).unwrap();
    let (bytes, _, kids) = allocations(|| TreeDefLimits::UNLIMITED.scope(|| big.num_children()));
    assert_eq!((bytes, kids), (0, 1 << 32));
}

#[test]
fn an_identity_transform_of_a_long_run_holds_no_item_per_leaf() {
    // The template of `[*; 2^20]` used to be expanded to one item per leaf.
    let def = read(r#"{"schemas":[],"nodes":[{"seq":1048576},{"leaves":1048576}]}"#).unwrap();
    let (_, peak, same) = allocations(|| {
        def.transform(|_, node| Ok(node.clone()), |_| TreeDef::leaf())
            .unwrap()
    });
    assert!(same == def);
    assert!(peak < 64 << 10, "held {peak} bytes at once");
}

/// A safetensors file with no tensors whose header is `header` padded with
/// spaces to `len` bytes.
fn file_with_header(header: &str, len: usize) -> Vec<u8> {
    let mut bytes = (len as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.resize(8 + len, b' ');
    bytes
}

#[test]
fn a_header_exactly_at_max_header_bytes_is_accepted_and_one_byte_more_is_not() {
    use pytree_std::checkpoint::Load;
    let header = r#"{"__metadata__":{"a":"b"}}"#;
    let file = file_with_header(header, 64);
    // The limit is inclusive, as in the safetensors crate.
    let ckpt = Load::new()
        .max_header_bytes(64)
        .from_bytes(file.clone())
        .unwrap();
    assert_eq!(ckpt.len(), 0);
    assert_eq!(ckpt.metadata().get("a").map(String::as_str), Some("b"));
    let err = Load::new()
        .max_header_bytes(63)
        .from_bytes(file)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("the header length is 64 bytes, over the limit of 63"),
        "{err}"
    );
}

#[test]
fn a_metadata_entry_that_is_not_an_object_is_an_error() {
    use pytree_std::checkpoint::Load;
    for metadata in [r#""x""#, "[]", "1", "true", r#"{"k":1}"#] {
        let header = format!(r#"{{"__metadata__":{metadata}}}"#);
        let file = file_with_header(&header, header.len());
        let err = Load::new()
            .from_bytes(file)
            .err()
            .unwrap_or_else(|| panic!("{metadata} was accepted"))
            .to_string();
        assert!(err.contains("`__metadata__`"), "{metadata}: {err}");
    }
    // `null` is no metadata, as the safetensors crate reads it
    // (`Option<HashMap<String, String>>`).
    let header = r#"{"__metadata__":null}"#;
    let ckpt = Load::new()
        .from_bytes(file_with_header(header, header.len()))
        .unwrap();
    assert!(ckpt.metadata().is_empty());
}

/// A document of `n` + 1 records: a tuple of `n` `None`s (7 bytes each,
/// the smallest record there is).
fn tuple_of_nones(n: usize) -> String {
    let mut doc = format!(r#"{{"schemas":[],"nodes":[{{"tuple":{n}}}"#);
    for _ in 0..n {
        doc.push_str(r#","none""#);
    }
    doc.push_str("]}");
    doc
}

#[test]
fn reading_a_document_holds_a_small_multiple_of_its_size() {
    let doc = tuple_of_nones(1 << 20);
    let (_, peak, def) = allocations(|| read(&doc).unwrap());
    assert_eq!(def.num_records(), (1 << 20) + 1);
    // The TreeDef itself takes 16 bytes per record (2.3 times the
    // document); reading it holds at most twice that at once.
    let ratio = peak as f64 / doc.len() as f64;
    println!(
        "read {} bytes, held at most {peak} ({ratio:.2} times)",
        doc.len()
    );
    assert!(ratio <= 5.0, "reading held {ratio:.2} times the document");
}

#[test]
fn a_document_over_the_node_limit_is_refused_before_its_records_are_kept() {
    let doc = tuple_of_nones(1 << 16);
    let mut tight = TreeDefLimits::DEFAULT;
    tight.max_nodes = 1 << 10;
    let (_, peak, err) = allocations(|| tight.scope(|| read(&doc)).unwrap_err());
    assert!(
        err.to_string()
            .starts_with("TreeDef record 1024: more than 1024 internal nodes"),
        "{err}"
    );
    // Refused at record 1024, holding at most those records (16 bytes
    // each, twice over while the buffer grows), not the 65 537.
    assert!(peak < 64 << 10, "held {peak} bytes");
}

#[test]
fn records_before_schemas_are_checked_the_same_way_once_the_schemas_are_read() {
    let def = pytree_std::structure(&vec![Pair { a: 1u8, b: 2 }, Pair { a: 3, b: 4 }]);
    let json: serde_json::Value = serde_json::to_value(&def).unwrap();
    let swapped = format!(
        r#"{{"nodes":{},"schemas":{}}}"#,
        json["nodes"], json["schemas"]
    );
    assert!(read(&swapped).unwrap() == def);
    // Unknown fields are ignored, a repeated one is an error.
    let extra = format!(
        r#"{{"version":1,"schemas":{},"nodes":{}}}"#,
        json["schemas"], json["nodes"]
    );
    assert!(read(&extra).unwrap() == def);
    let twice = format!(
        r#"{{"schemas":{0},"nodes":{1},"nodes":{1}}}"#,
        json["schemas"], json["nodes"]
    );
    assert!(read(&twice)
        .unwrap_err()
        .to_string()
        .contains("duplicate field `nodes`"));
    // The same errors, whichever order: a record left over, a limit.
    for doc in [
        r#"{"schemas":[],"nodes":[{"seq":1},{"leaves":1},"none","none"]}"#,
        r#"{"nodes":[{"seq":1},{"leaves":1},"none","none"],"schemas":[]}"#,
    ] {
        assert_eq!(
            read(doc).unwrap_err().to_string(),
            "TreeDef record 2: the tree is complete, 2 record(s) left over"
        );
    }
    for doc in [
        r#"{"schemas":[],"nodes":[{"seq":2},{"leaves":1},{"struct":{"schema":0,"statics":[]}}]}"#,
        r#"{"nodes":[{"seq":2},{"leaves":1},{"struct":{"schema":0,"statics":[]}}],"schemas":[]}"#,
    ] {
        assert_eq!(
            read(doc).unwrap_err().to_string(),
            "TreeDef record 2: no schema number 0"
        );
    }
    let missing = r#"{"nodes":[{"leaves":1}]}"#;
    assert!(read(missing)
        .unwrap_err()
        .to_string()
        .contains("missing field `schemas`"));
}

#[test]
fn the_transposes_answer_to_the_tree_they_hold_not_to_the_output_budget() {
    // With no allowance, a budget of 512 bytes for a two-record TreeDef:
    // composing it with a pair is refused ...
    let mut tight = TreeDefLimits::DEFAULT;
    tight.output_allowance = 0;
    let n = 10_000;
    let def = pytree_std::structure(&vec![0u32; n]);
    let pair = pytree_std::structure(&(0u32, 0u32));
    assert!(tight.scope(|| def.compose(&pair)).is_err());
    // ... but the transposes build that structure for a tree whose leaves
    // they hold, so they are bounded by it.
    let zipped: Vec<(u32, u32)> = tight
        .scope(|| {
            pytree_std::generic::transpose::pair_leaves::<pytree_std::Std, _, _, _>(
                vec![1u32; n],
                vec![2u32; n],
            )
        })
        .unwrap();
    assert_eq!(zipped.len(), n);
    assert_eq!(zipped[n - 1], (1, 2));
    let back: (Vec<u32>, Vec<u32>) = tight
        .scope(|| pytree_std::nested::transpose(&def, &pair, zipped))
        .unwrap();
    assert_eq!((back.0.len(), back.1[0]), (n, 2));
    let stacked: Vec<Vec<u32>> = tight
        .scope(|| pytree_std::nested::subside((0..n as u32).map(|i| vec![i, i])))
        .unwrap();
    assert_eq!(stacked[1][n - 1], (n - 1) as u32);
}

/// The 66-byte document of issue 29: a sequence of 10^9 leaves.
const BILLION: &str = r#"{"schemas":[],"nodes":[{"seq":1000000000},{"leaves":1000000000}]}"#;

/// `def` transformed into itself, with the number of calls to `f_leaf`.
fn identity_transform(def: &TreeDef) -> (usize, Result<TreeDef, pytree_std::Error>) {
    let mut calls = 0usize;
    let leaf = |_: &_| {
        calls += 1;
        TreeDef::leaf()
    };
    let out = def.transform(|_, node| Ok(node.clone()), leaf);
    (calls, out)
}

#[test]
fn a_transform_takes_no_more_steps_than_the_work_budget() {
    // Each of these took minutes of CPU (217 s for the 66-byte one): one
    // call of `f_leaf` per leaf the document claims. Now each is refused
    // before the first call, in the time it takes to count.
    for doc in [
        BILLION.to_string(),
        AT_THE_LEAF_LIMIT.to_string(),
        nested_at_the_limits(),
    ] {
        let def = read(&doc).unwrap();
        let start = thread_cpu_time();
        let (calls, err) = identity_transform(&def);
        let err = err.unwrap_err().to_string();
        let took = thread_cpu_time() - start;
        assert!(
            err.contains("this transform would take") && err.contains("more than the work budget"),
            "{err}"
        );
        assert_eq!(calls, 0);
        assert!(took.as_secs_f64() < 1.0, "took {took:?} of CPU");
    }
    // Within the budget (16 Mi steps and more by default), a transform
    // calls `f_leaf` once per leaf, and the work budget is the output
    // budget's: raising one raises the other.
    let def = read(r#"{"schemas":[],"nodes":[{"seq":100000},{"leaves":100000}]}"#).unwrap();
    let (calls, same) = identity_transform(&def);
    assert!(same.unwrap() == def);
    assert_eq!(calls, 100_000);
    let mut tight = TreeDefLimits::DEFAULT;
    tight.output_allowance = 0;
    // 2 times 32 bytes: 64 bytes, 4 steps.
    assert_eq!(tight.work_budget(&def), 4);
    let err = tight
        .scope(|| def.transform(|_, node| Ok(node.clone()), |_| TreeDef::leaf()))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "at <root>: this transform would take 100001 steps, more than the work budget of 4 \
         (TreeDefLimits: one step per 16 bytes of the output budget, output_factor 2 times the \
         TreeDef's 32 bytes plus output_allowance 0)"
    );
    let mut wide = TreeDefLimits::DEFAULT;
    wide.output_allowance = usize::MAX;
    let def = read(BILLION).unwrap();
    assert_eq!(wide.work_budget(&def), usize::MAX / 16);
}

/// Documents of 300 to 700 KB (scaled down from the 470 MB one of
/// issue 29, whose run is recorded in docs/design-notes.md: the multiples
/// are the same), of the shapes whose readers hold the most per byte of
/// document: a tuple of `None`s (the shortest record), a sequence of
/// `(leaf, None)` pairs, a map of `u32` keys to `None`, structs with a
/// 500-byte name (printed at every node), and structs of 1 000 fields
/// one of which is static (so that child `j` is not field `j`).
fn large_documents() -> Vec<(&'static str, String)> {
    let n = 1 << 16;
    let mut pairs = format!(r#"{{"schemas":[],"nodes":[{{"seq":{}}}"#, n / 4);
    for _ in 0..n / 4 {
        pairs.push_str(r#",{"tuple":2},{"leaves":1},"none""#);
    }
    pairs.push_str("]}");
    let k = n / 4;
    let keys: Vec<String> = (0..k).map(|i| i.to_string()).collect();
    let mut map = format!(
        r#"{{"schemas":[],"nodes":[{{"map":{{"len":{k},"keys":{{"u32":[{}]}}}}}}"#,
        keys.join(",")
    );
    for _ in 0..k {
        map.push_str(r#","none""#);
    }
    map.push_str("]}");
    let schema = |name: &str, fields: &[String]| {
        format!(
            r#"{{"type":"{name}","module":"m","variant":null,"style":"named","fields":[{}]}}"#,
            fields.join(",")
        )
    };
    let data = |i: usize| format!(r#"{{"name":"f{i}","static":false}}"#);
    let meta = r#"{"name":"meta","static":true}"#.to_string();
    let mut named = format!(
        r#"{{"schemas":[{}],"nodes":[{{"seq":{}}}"#,
        schema(&"S".repeat(500), &[data(0), meta.clone()]),
        n / 16
    );
    for _ in 0..n / 16 {
        named.push_str(r#",{"struct":{"schema":0,"statics":[{"usize":1}]}},"none""#);
    }
    named.push_str("]}");
    let mut fields: Vec<String> = (0..999).map(data).collect();
    fields.insert(500, meta);
    let mut wide = format!(
        r#"{{"schemas":[{}],"nodes":[{{"seq":16}}"#,
        schema("W", &fields)
    );
    for _ in 0..16 {
        wide.push_str(r#",{"struct":{"schema":0,"statics":[{"usize":1}]}}"#);
        for _ in 0..999 {
            wide.push_str(r#","none""#);
        }
    }
    wide.push_str("]}");
    vec![
        ("nones", tuple_of_nones(n)),
        ("pairs", pairs),
        ("map", map),
        ("named", named),
        ("wide", wide),
    ]
}

/// Runs reader `what` of the `d`-byte document `shape`, which must take
/// work in proportion to the document (far less than a millisecond of CPU
/// per kilobyte, even unoptimized); prints and returns the bytes it held
/// at once, and its result.
fn measured<R>(shape: &str, what: &str, d: usize, f: impl FnOnce() -> R) -> (usize, R) {
    let start = thread_cpu_time();
    let (_, held, r) = allocations(f);
    let took = thread_cpu_time() - start;
    assert!(
        took.as_secs_f64() < d as f64 * 1e-6,
        "{shape}: {what} took {took:?}"
    );
    println!(
        "{shape:6} {what:26} held {:5.2} times the document, {:4.1} ms",
        held as f64 / d as f64,
        took.as_secs_f64() * 1e3
    );
    (held, r)
}

#[test]
fn every_reader_of_a_large_document_holds_a_small_multiple_of_it() {
    if child::case().as_deref() != Some("readers") {
        // In a child under a 1 GiB address-space cap (a reader that ran
        // away would fail there, not exhaust the machine).
        let test = "every_reader_of_a_large_document_holds_a_small_multiple_of_it";
        child::run_case(test, "readers", 1 << 30).assert_done("readers");
        return;
    }
    // Without the allowance, so that the budget is the multiple of the
    // encoding alone: 2 times the encoding, at most 4.6 times the document.
    let mut tight = TreeDefLimits::DEFAULT;
    tight.output_allowance = 0;
    for (shape, doc) in large_documents() {
        let d = doc.len();
        let (_, held, def) = allocations(|| read(&doc).unwrap());
        let e = def.encoded_bytes();
        assert!(held <= 5 * d, "{shape}: reading held {held} bytes of {d}");
        assert!(e * 10 <= 23 * d, "{shape}: encoding {e} bytes of {d}");
        let budget = tight.output_budget(&def);
        assert_eq!(budget, 2 * e);
        // One reader: what it held at once, within the budget, or an error
        // naming a budget.
        let within = |what: &str, f: &dyn Fn() -> Result<usize, pytree_std::Error>| match measured(
            shape,
            what,
            d,
            || tight.scope(f),
        ) {
            (held, Ok(_)) => assert!(
                held <= budget,
                "{shape}: {what} held {held} bytes, the budget is {budget} ({d}-byte document)"
            ),
            (_, Err(e)) => assert!(e.to_string().contains("budget"), "{shape}: {what}: {e}"),
        };
        within("children", &|| def.children().map(|c| c.len()));
        within("entries", &|| def.entries().map(|c| c.len()));
        within("leaf_paths", &|| def.leaf_paths().map(|c| c.len()));
        within("fold", &|| {
            def.fold(0..def.num_leaves(), |i| i, |_, kids| kids.len())
        });
        within("transform", &|| {
            def.transform(|_, node| Ok(node.clone()), |_| TreeDef::leaf())
                .map(|t| t.num_records())
        });
        let pair = pytree_std::structure(&(0u8, 0u8));
        within("compose", &|| def.compose(&pair).map(|t| t.num_records()));
        within("serialize", &|| Ok(serde_json::to_vec(&def).unwrap().len()));
        within("Display", &|| Ok(def.to_string().len()));
        within("clone", &|| Ok(def.clone().num_records()));
        // Readers of two TreeDefs: at most three times the two encodings
        // (the common structure, and a plan per map key and tree).
        let other_doc = {
            let i = doc.rfind(r#""none""#).unwrap();
            format!("{}{}{}", &doc[..i], r#""some",{"leaves":1}"#, &doc[i + 6..])
        };
        let other = read(&other_doc).unwrap();
        let two = 3 * (e + other.encoded_bytes());
        let pair_of = |what: &str, f: &dyn Fn() -> usize| {
            let (held, _) = measured(shape, what, d, f);
            assert!(
                held <= two,
                "{shape}: {what} held {held} bytes, more than {two}"
            );
        };
        pair_of("diff", &|| def.diff(&other).len());
        pair_of("is_prefix_of", &|| usize::from(def.is_prefix_of(&other)));
        pair_of("broadcast_to_common_suffix", &|| {
            def.broadcast_to_common_suffix(&other)
                .map_or(0, |t| t.num_records())
        });
    }
    println!("done");
}

#[test]
fn the_text_of_a_treedef_stops_at_half_its_output_budget() {
    let (_, doc) = large_documents().swap_remove(3);
    let def = read(&doc).unwrap();
    let full = def.to_string();
    // 4 096 structs printed with their 500-byte name: 9 times the
    // TreeDef's encoding.
    assert!(full.len() > 8 * def.encoded_bytes(), "{}", full.len());
    let mut tight = TreeDefLimits::DEFAULT;
    tight.output_allowance = 0;
    let budget = tight.output_budget(&def);
    let (_, held, cut) = allocations(|| tight.scope(|| def.to_string()));
    assert!(held <= budget, "held {held} bytes, the budget is {budget}");
    let note = format!(
        " ... (the text of this TreeDef stops at half its output budget of {budget} bytes)"
    );
    assert!(cut.ends_with(&note), "{}", &cut[cut.len() - 200..]);
    assert_eq!(cut.len(), budget / 2 + note.len());
    assert!(full.starts_with(&cut[..budget / 2]));
}

#[test]
fn a_prefix_that_differs_at_the_root_is_refused_without_walking_it() {
    // 2^18 children: the aligner used to walk every one of them alone
    // after the mismatch at the root (13 s for the 470 MB document).
    let def = read(&tuple_of_nones(1 << 18)).unwrap();
    let start = thread_cpu_time();
    let err = pytree_std::nested::flatten_up_to(&def, vec![1u8, 2]).unwrap_err();
    let diff = def.diff(&pytree_std::structure(&vec![1u8, 2]));
    let took = thread_cpu_time() - start;
    assert_eq!(
        err.to_string(),
        "at <root>: node mismatch: expected a tuple of arity 262144, found a sequence of length 2"
    );
    assert_eq!(diff.len(), 1);
    assert!(took.as_secs_f64() < 0.05, "took {took:?} of CPU");
}
