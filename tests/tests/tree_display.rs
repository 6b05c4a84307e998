//! How a `Tree` prints: `Display` as treevalue's ascii tree, `Debug` as a
//! compact literal. Pinned with insta snapshots.

use pytree_std::{tree, Tree};

/// The seed's `gcd(t1, t2)` result.
fn gcd_result() -> Tree<i64> {
    tree! { "a" => 2, "b" => 6, "x" => { "c" => 2, "d" => 9 } }
}

#[test]
fn display_is_treevalues_ascii_tree() {
    insta::assert_snapshot!("seed_gcd_result", gcd_result().to_string());
}

#[test]
fn display_of_mixed_nodes() {
    let t: Tree<f64> = tree! {
        "model" => {
            "layers" => [{ "w" => 0.5, "b" => 0.0 }, { "w" => -1.25, "b" => 1.0 }],
            "head" => None,
        },
        "empty" => {},
        "none" => [],
        "lr" => 0.001,
    };
    insta::assert_snapshot!("mixed_nodes", t.to_string());
}

#[test]
fn display_passes_a_precision_on_to_the_leaves() {
    let t: Tree<f64> = tree! { "third" => 1.0 / 3.0, "x" => [2.0 / 3.0] };
    insta::assert_snapshot!("precision", format!("{t:.2}"));
}

#[test]
fn display_indents_the_lines_of_multi_line_leaves() {
    let t: Tree<String> = tree! {
        "matrix" => (String::from("[1 2]\n[3 4]")),
        "x" => { "note" => (String::from("line one\nline two")), "z" => (String::from("z")) },
    };
    insta::assert_snapshot!("multi_line_leaves", t.to_string());
}

#[test]
fn display_of_a_root_that_is_not_a_container() {
    assert_eq!(Tree::leaf(7).to_string(), "7");
    assert_eq!(Tree::<i32>::none().to_string(), "None");
    assert_eq!(Tree::<i32>::default().to_string(), "{}");
    assert_eq!(Tree::<i32>::seq([]).to_string(), "[]");
}

#[test]
fn display_depth_cuts_deeper_subtrees() {
    let t: Tree<i32> = tree! { "a" => { "b" => { "c" => { "d" => 1 } } }, "e" => 2 };
    insta::assert_snapshot!("depth_two", t.display_depth(2).to_string());
}

#[test]
fn debug_is_a_compact_literal() {
    let t: Tree<f64> = tree!([1.0, { "k1" => 2.0, "k2" => [3.0, 4.0] }, None, 5.0]);
    insta::assert_snapshot!("debug_literal", format!("{t:?}"));
    assert_eq!(
        format!("{:?}", gcd_result()),
        r#"{"a": 2, "b": 6, "x": {"c": 2, "d": 9}}"#
    );
    assert_eq!(format!("{:?}", tree! { "s" => "text" }), r#"{"s": "text"}"#);
}
