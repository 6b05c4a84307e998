//! The values of a map of leaves are lent as one run (`Visit::leaf_entries`):
//! `leaves` writes them into its buffer at once, every other visitor gets
//! each one under its key. Both must give what the entry-by-entry walk
//! gives: the same leaves in leaf order, the same key paths.

use std::collections::{BTreeMap, HashMap};

use pytree_std::indexmap::IndexMap;
use pytree_std::{Flatten, KeyRef, Std, Visit};

fn keys(n: usize) -> Vec<String> {
    // Not in sorted order, so an IndexMap's order differs from a BTreeMap's.
    (0..n).map(|i| format!("k{}", (i * 7919) % n)).collect()
}

#[test]
fn leaves_of_maps_of_leaves_are_the_values_in_leaf_order() {
    for n in [0, 1, 2, 1000, 5000] {
        let index: IndexMap<String, u64> = keys(n).into_iter().zip(0..).collect();
        let btree: BTreeMap<String, u64> = index.clone().into_iter().collect();
        let hash: HashMap<String, u64> = index.clone().into_iter().collect();
        let expected: Vec<&u64> = index.values().collect();
        assert_eq!(pytree_std::leaves(&index), expected, "IndexMap of {n}");
        let expected: Vec<&u64> = btree.values().collect();
        assert_eq!(pytree_std::leaves(&btree), expected, "BTreeMap of {n}");
        // A HashMap's leaf order is by key, as its BTreeMap twin's.
        let by_key: Vec<u64> = pytree_std::leaves(&hash).into_iter().copied().collect();
        assert_eq!(
            by_key,
            btree.values().copied().collect::<Vec<_>>(),
            "HashMap of {n}"
        );
    }
}

#[test]
fn maps_inside_a_tree_append_after_the_leaves_before_them() {
    // Each map's run lands after what the buffer holds: a leaf, then a
    // map, then a leaf, then a map of another size (the buffer grows).
    let a: IndexMap<String, u64> = keys(3).into_iter().zip(10..).collect();
    let b: BTreeMap<String, u64> = keys(700).into_iter().zip(100..).collect();
    let t = (1u64, a.clone(), 2u64, vec![b.clone(), BTreeMap::new()]);
    let mut expected: Vec<&u64> = vec![&t.0];
    expected.extend(t.1.values());
    expected.push(&t.2);
    expected.extend(t.3[0].values());
    assert_eq!(pytree_std::leaves(&t), expected);
    assert_eq!(pytree_std::leaves(&t).len(), 1 + 3 + 1 + 700);
}

#[test]
fn other_visitors_get_each_value_under_its_key() {
    let m: IndexMap<String, u64> = [("b".to_string(), 1u64), ("a".to_string(), 2)]
        .into_iter()
        .collect();
    let paths: Vec<String> = pytree_std::flatten_with_path(m.clone())
        .0
        .into_iter()
        .map(|(p, v)| format!("{p}={v}"))
        .collect();
    assert_eq!(paths, [r#"["b"]=1"#, r#"["a"]=2"#]);

    // A visitor that keeps the default `leaf_entries`: enter, leaf, exit.
    struct Trace(Vec<String>);
    impl Visit<&u64> for Trace {
        fn leaf(&mut self, x: &u64) {
            self.0.push(format!("leaf {x}"))
        }
        fn enter(&mut self, k: KeyRef<'_>) {
            self.0.push(format!("enter {}", k.to_owned_entry()))
        }
        fn exit(&mut self) {
            self.0.push("exit".into())
        }
    }
    let mut trace = Trace(vec![]);
    Flatten::<Std>::visit(&m, &mut trace);
    assert_eq!(
        trace.0,
        [
            r#"enter ["b"]"#,
            "leaf 1",
            "exit",
            r#"enter ["a"]"#,
            "leaf 2",
            "exit"
        ]
    );
}
