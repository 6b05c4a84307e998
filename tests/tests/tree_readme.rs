//! The README's "Dynamic trees" example (docs/tree-readme-section.md), as a
//! test, so the text the README shows compiles and says what happens.

use pytree_std::{tree, PyTree, Tree};

#[derive(PyTree, Debug, PartialEq)]
struct Linear {
    w: f32,
    b: f32,
}

#[test]
fn the_readme_dynamic_tree_example_runs() -> Result<(), pytree_std::Error> {
    let t1: Tree<i64> = tree! { "a" => 2, "b" => 30, "x" => { "c" => 4, "d" => 9 } };
    let t2: Tree<i64> = tree! { "a" => 4, "b" => 48, "x" => { "c" => 6, "d" => 54 } };

    let sum = &t1 + &t2;
    assert_eq!(sum["x"]["d"], Tree::leaf(63));
    assert_eq!(sum.get("x/c").and_then(Tree::as_leaf), Some(&10));
    assert_eq!(
        (&t1 * 2).to_string(),
        "├── a --> 4\n├── b --> 60\n└── x\n    ├── c --> 8\n    └── d --> 18"
    );

    let def = pytree_std::structure(&Linear { w: 0.0, b: 0.0 });
    let loaded: Tree<f32> = tree! { "b" => 2.0, "w" => 1.0 };
    assert_eq!(loaded.to_pytree::<Linear>(&def)?, Linear { w: 1.0, b: 2.0 });
    let back = Tree::from_pytree(Linear { w: 1.0, b: 2.0 })?;
    assert_eq!(format!("{back:?}"), r#"{"w": 1.0, "b": 2.0}"#);
    Ok(())
}
