//! `unflatten` checks a TreeDef against a type once; after a checked read
//! succeeds, the TreeDef remembers the type and later reads of it as that
//! type (given exactly as many leaves) skip the per-record checks. These
//! tests read each TreeDef twice or more and require the same values and
//! the same errors on every read.

mod models;

use std::collections::BTreeMap;

use models::Shape;
use pytree_std::{tree, PyTree, Tree, TreeDef};

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Inner {
    #[pytree(static)]
    name: String,
    w: f64,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Model {
    #[pytree(static)]
    tag: &'static str,
    inner: Inner,
    shapes: Vec<Shape>,
    maybe: Option<Inner>,
    table: BTreeMap<String, (f64, Shape)>,
    last: f64,
}

fn model() -> Model {
    Model {
        tag: "m",
        inner: Inner {
            name: "a".into(),
            w: 1.0,
        },
        shapes: vec![
            Shape::Rect(2.0, 3.0),
            Shape::Empty,
            Shape::Circle { r: 4.0 },
        ],
        maybe: Some(Inner {
            name: "b".into(),
            w: 5.0,
        }),
        table: BTreeMap::from([
            ("x".to_string(), (6.0, Shape::Empty)),
            ("y".to_string(), (7.0, Shape::Circle { r: 8.0 })),
        ]),
        last: 9.0,
    }
}

/// Reads `def` as `T` three times from `leaves` (the later reads take the
/// remembered path) and returns the three results.
fn read_thrice<T: PyTree<Leaf = f64>>(def: &TreeDef, leaves: &[f64]) -> [Result<T, String>; 3] {
    std::array::from_fn(|_| {
        pytree_std::unflatten::<T>(def, leaves.iter().copied()).map_err(|e| e.to_string())
    })
}

/// Each of [`read_thrice`] fails with the error `want`.
fn fails_thrice<T: PyTree<Leaf = f64> + std::fmt::Debug>(
    def: &TreeDef,
    leaves: &[f64],
    want: &str,
) {
    for read in read_thrice::<T>(def, leaves) {
        assert_eq!(read.unwrap_err(), want);
    }
}

#[test]
fn every_read_of_a_remembered_treedef_rebuilds_the_same_value() {
    let t = model();
    let (leaves, def) = pytree_std::flatten(t.clone());
    for read in read_thrice::<Model>(&def, &leaves) {
        assert_eq!(read, Ok(t.clone()));
    }
    let mut other = model();
    other.maybe = None;
    other.shapes.truncate(1);
    let (leaves, def) = pytree_std::flatten(other.clone());
    for read in read_thrice::<Model>(&def, &leaves) {
        assert_eq!(read, Ok(other.clone()));
    }
}

#[test]
fn wrong_leaf_counts_give_the_same_located_error_on_every_read() {
    let (leaves, def) = pytree_std::flatten(model());
    assert!(pytree_std::unflatten::<Model>(&def, leaves.clone()).is_ok());
    let few = &leaves[..leaves.len() - 2];
    fails_thrice::<Model>(
        &def,
        few,
        "at .table[\"y\"][1]::Circle.r: too few leaves for TreeDef: expected 9, got 7",
    );
    let mut many = leaves.clone();
    many.push(0.0);
    fails_thrice::<Model>(
        &def,
        &many,
        "at <root>: too many leaves for TreeDef: expected 9, got 10",
    );
}

#[test]
fn an_iterator_without_an_exact_length_is_read_on_the_checked_path() {
    let t = model();
    let (leaves, def) = pytree_std::flatten(t.clone());
    assert!(pytree_std::unflatten::<Model>(&def, leaves.clone()).is_ok());
    // `filter` cannot say its length: every read checks every record.
    let read = pytree_std::unflatten::<Model>(&def, leaves.iter().copied().filter(|_| true));
    assert_eq!(read.unwrap(), t);
    let short = pytree_std::unflatten::<Model>(&def, leaves.iter().copied().filter(|x| *x < 9.0));
    assert_eq!(
        short.unwrap_err().to_string(),
        "at .last: too few leaves for TreeDef: expected 9, got 8"
    );
}

/// An iterator whose `size_hint` claims more leaves than it yields.
struct Liar(std::vec::IntoIter<f64>, usize);

impl Iterator for Liar {
    type Item = f64;
    fn next(&mut self) -> Option<f64> {
        self.0.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.1, Some(self.1))
    }
}

#[test]
fn an_iterator_that_lies_about_its_length_gets_an_error_not_a_panic() {
    let (leaves, def) = pytree_std::flatten(model());
    assert!(pytree_std::unflatten::<Model>(&def, leaves.clone()).is_ok());
    let n = leaves.len();
    let short = leaves[..n - 1].to_vec();
    let err = pytree_std::unflatten::<Model>(&def, Liar(short.into_iter(), n)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .last: the leaf iterator ended before the length it reported"
    );
}

#[test]
fn a_treedef_remembered_for_one_type_is_still_checked_for_another() {
    let (leaves, def) = pytree_std::flatten((1.0, vec![2.0, 3.0]));
    assert!(pytree_std::unflatten::<(f64, Vec<f64>)>(&def, leaves.clone()).is_ok());
    // Same leaf count, another type: the records are checked, and differ.
    for _ in 0..2 {
        let err = pytree_std::unflatten::<(f64, [f64; 2])>(&def, leaves.clone());
        assert!(err.is_ok(), "a [f64; 2] reads a sequence of 2: {err:?}");
        let err = pytree_std::unflatten::<(f64, (f64, f64))>(&def, leaves.clone()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "at [1]: node mismatch: expected a tuple of arity 2, found a sequence of length 2"
        );
    }
    // And the first type still reads it.
    assert_eq!(
        pytree_std::unflatten::<(f64, Vec<f64>)>(&def, leaves).unwrap(),
        (1.0, vec![2.0, 3.0])
    );
}

#[test]
fn a_dynamic_tree_reads_the_treedef_node_by_node_every_time() {
    let (leaves, def) = pytree_std::flatten(model());
    let first: Tree<f64> = pytree_std::unflatten(&def, leaves.clone()).unwrap();
    for _ in 0..2 {
        let again: Tree<f64> = pytree_std::unflatten(&def, leaves.clone()).unwrap();
        assert_eq!(again, first);
    }
    assert_eq!(
        first["shapes"][0],
        tree!({ "Rect" => { "0" => 2.0, "1" => 3.0 } })
    );
    assert_eq!(
        pytree_std::unflatten::<Model>(&def, leaves).unwrap(),
        model()
    );
}

#[test]
fn a_deserialized_treedef_is_remembered_and_read_the_same() {
    let (leaves, def) = pytree_std::flatten(model());
    let json = serde_json::to_string(&def).unwrap();
    let back: TreeDef = serde_json::from_str(&json).unwrap();
    for read in read_thrice::<Model>(&back, &leaves) {
        assert_eq!(read, Ok(model()));
    }
}

#[test]
fn threads_reading_one_treedef_as_different_types_agree() {
    let (leaves, def) = pytree_std::flatten((vec![1.0, 2.0], 3.0));
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..200 {
                    let a: (Vec<f64>, f64) = pytree_std::unflatten(&def, leaves.clone()).unwrap();
                    assert_eq!(a, (vec![1.0, 2.0], 3.0));
                    let b: ([f64; 2], f64) = pytree_std::unflatten(&def, leaves.clone()).unwrap();
                    assert_eq!(b, ([1.0, 2.0], 3.0));
                    assert!(
                        pytree_std::unflatten::<(f64, f64, f64)>(&def, leaves.clone()).is_err()
                    );
                }
            });
        }
    });
}

#[test]
fn a_deep_chain_is_read_again_without_recursing_into_trouble() {
    #[derive(PyTree, Clone, Debug, PartialEq)]
    enum Deep {
        Level(f64, Box<Deep>),
        End(f64),
    }
    let mut t = Deep::End(0.0);
    for i in 1..=2_000 {
        t = Deep::Level(f64::from(i), Box::new(t));
    }
    let (leaves, def) = pytree_std::flatten(t.clone());
    for read in read_thrice::<Deep>(&def, &leaves) {
        assert!(read.as_ref() == Ok(&t));
    }
}

#[derive(PyTree, Clone, Debug, PartialEq)]
enum Only {
    It { a: f64, b: f64 },
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Holder {
    one: Only,
    ones: Vec<Only>,
    rest: Vec<f64>,
    last: Option<f64>,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Wb {
    w: f64,
    b: f64,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Gb {
    g: f64,
    b: f64,
}

fn holder() -> Holder {
    Holder {
        one: Only::It { a: 1.0, b: 2.0 },
        ones: vec![Only::It { a: 3.0, b: 4.0 }, Only::It { a: 5.0, b: 6.0 }],
        rest: vec![7.0],
        last: Some(8.0),
    }
}

#[test]
fn a_one_variant_enum_among_structs_and_sequences_is_read_again_the_same() {
    // A lone candidate that is an enum variant keeps the TreeDef on the
    // checked path (the trusted path passes over plain structs' records
    // only): every read gives the value, and the records after it.
    let (leaves, def) = pytree_std::flatten(holder());
    for read in read_thrice::<Holder>(&def, &leaves) {
        assert_eq!(read, Ok(holder()));
    }
    fails_thrice::<Holder>(
        &def,
        &leaves[..5],
        "at .ones[1]::It.b: too few leaves for TreeDef: expected 8, got 5",
    );
}

#[test]
fn a_vec_of_structs_read_again_names_the_element_and_field_of_a_wrong_count() {
    let v = vec![
        Wb { w: 1.0, b: 2.0 },
        Wb { w: 3.0, b: 4.0 },
        Wb { w: 5.0, b: 6.0 },
    ];
    let (leaves, def) = pytree_std::flatten(v.clone());
    for read in read_thrice::<Vec<Wb>>(&def, &leaves) {
        assert_eq!(read, Ok(v.clone()));
    }
    fails_thrice::<Vec<Wb>>(
        &def,
        &leaves[..3],
        "at [1].b: too few leaves for TreeDef: expected 6, got 3",
    );
    let mut many = leaves.clone();
    many.push(7.0);
    fails_thrice::<Vec<Wb>>(
        &def,
        &many,
        "at <root>: too many leaves for TreeDef: expected 6, got 7",
    );
}

#[test]
fn a_vec_of_structs_read_as_another_type_names_the_element_every_time() {
    let v = vec![Wb { w: 1.0, b: 2.0 }, Wb { w: 3.0, b: 4.0 }];
    let (leaves, def) = pytree_std::flatten(v.clone());
    assert_eq!(
        pytree_std::unflatten::<Vec<Wb>>(&def, leaves.clone()),
        Ok(v)
    );
    // Remembered for `Vec<Wb>`; a struct of the same shape is checked.
    fails_thrice::<Vec<Gb>>(
        &def,
        &leaves,
        "at [0]: node mismatch: expected Gb, found Wb",
    );
    // Tuples where the type has structs.
    let (leaves, def) = pytree_std::flatten(vec![(1.0, 2.0), (3.0, 4.0)]);
    fails_thrice::<Vec<Wb>>(
        &def,
        &leaves,
        "at [0]: node mismatch: expected Wb, found a tuple of arity 2",
    );
}
