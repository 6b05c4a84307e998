//! The examples of the JAX and PAX seeds the project was founded on (seeds
//! 000, 002 and 003, outside this repository; each example is quoted here),
//! translated to typed Rust. Python lists that mix leaves and subtrees become
//! tuples; dicts become `BTreeMap`s; registered classes become derived
//! structs.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use pytree_std::{PyTree, TreeDef};

/// Seed 000: `[1., (2., 3.)]` flattened, transformed leaf-wise, unflattened.
#[test]
fn flatten_transform_unflatten_walk_through() {
    let value_structured = (1.0f64, (2.0f64, 3.0f64));
    let (value_flat, value_tree) = pytree_std::flatten(value_structured);
    assert_eq!(value_flat, [1.0, 2.0, 3.0]);
    assert_eq!(value_tree.to_string(), "(*, (*, *))");
    let transformed_flat: Vec<f64> = value_flat.iter().map(|v| v * 2.0).collect();
    assert_eq!(transformed_flat, [2.0, 4.0, 6.0]);
    let transformed: (f64, (f64, f64)) =
        pytree_std::unflatten(&value_tree, transformed_flat).unwrap();
    assert_eq!(transformed, (2.0, (4.0, 6.0)));
}

/// Flattens, prints the TreeDef, and checks the round trip.
fn show_example<T: PyTree + PartialEq + std::fmt::Debug + Clone>(
    structured: T,
) -> (Vec<T::Leaf>, String)
where
    T::Leaf: Clone,
{
    let (flat, tree) = pytree_std::flatten(structured.clone());
    let unflattened: T = pytree_std::unflatten(&tree, flat.clone()).unwrap();
    assert_eq!(unflattened, structured);
    (flat, tree.to_string())
}

/// A tensor type: one leaf, whatever its size (seed 000's `jnp.zeros(2)`).
#[derive(PyTree, Clone, Debug, PartialEq)]
#[pytree(leaf)]
struct Array(Vec<f32>);

/// Seed 000's `Point = namedtuple('Point', ['x', 'y'])`.
#[derive(PyTree, Clone, Debug, PartialEq)]
struct Point(f64, f64);

#[test]
fn default_containers_of_the_seed() {
    assert_eq!(
        show_example((1.0, vec![2.0, 3.0])),
        (vec![1.0, 2.0, 3.0], "(*, [*, *])".into())
    );
    let dict = BTreeMap::from([("b", 2.0), ("a", 3.0)]);
    assert_eq!(
        show_example((1.0, dict)),
        (vec![1.0, 3.0, 2.0], "(*, {\"a\": *, \"b\": *})".into())
    );
    assert_eq!(show_example(1.0), (vec![1.0], "*".into()));
    assert_eq!(show_example(None::<f64>), (vec![], "None".into()));
    assert_eq!(
        show_example(Array(vec![0.0, 0.0])),
        (vec![Array(vec![0.0, 0.0])], "*".into())
    );
    assert_eq!(
        show_example(Point(1.0, 2.0)),
        (vec![1.0, 2.0], "Point(*, *)".into())
    );
}

/// Seed 002: an unregistered class is a leaf.
#[derive(PyTree, Clone, Debug, PartialEq)]
#[pytree(leaf)]
struct Special {
    x: f64,
    y: f64,
}

/// Seed 002: the registered class is a node with children `x`, `y`.
#[derive(PyTree, Clone, Debug, PartialEq)]
struct RegisteredSpecial {
    x: f64,
    y: f64,
}

#[test]
fn an_unregistered_class_is_one_leaf() {
    let trees = vec![Special { x: 0.0, y: 1.0 }, Special { x: 2.0, y: 4.0 }];
    assert_eq!(pytree_std::leaves(&trees), [&trees[0], &trees[1]]);
    assert_eq!(
        show_example(Special { x: 1.0, y: 2.0 }),
        (vec![Special { x: 1.0, y: 2.0 }], "*".into())
    );
}

#[test]
fn a_registered_class_is_traversed() {
    let trees = vec![
        RegisteredSpecial { x: 0.0, y: 1.0 },
        RegisteredSpecial { x: 2.0, y: 4.0 },
    ];
    let plus_one = pytree_std::map(trees, |v| v + 1.0);
    assert_eq!(
        plus_one,
        [
            RegisteredSpecial { x: 1.0, y: 2.0 },
            RegisteredSpecial { x: 3.0, y: 5.0 }
        ]
    );
    assert_eq!(
        show_example(RegisteredSpecial { x: 1.0, y: 2.0 }),
        (vec![1.0, 2.0], "RegisteredSpecial { x: *, y: * }".into())
    );
}

/// Seed 002: `register_dataclass(data_fields=['a', 'b', 'c'], meta_fields=['name'])`.
#[derive(PyTree, Clone, Debug, PartialEq)]
struct MyDataclassContainer {
    #[pytree(static)]
    name: String,
    a: f64,
    b: f64,
    c: f64,
}

#[test]
fn dataclass_meta_fields_stay_in_the_treedef() {
    let trees = vec![
        MyDataclassContainer {
            name: "apple".into(),
            a: 5.0,
            b: 3.0,
            c: 7.0,
        },
        MyDataclassContainer {
            name: "banana".into(),
            a: 1.0,
            b: 2.0,
            c: 3.0,
        },
    ];
    let leaves: Vec<f64> = pytree_std::leaves(&trees).into_iter().copied().collect();
    assert_eq!(leaves, [5.0, 3.0, 7.0, 1.0, 2.0, 3.0]);
    let def = pytree_std::structure(&trees);
    assert_eq!(
        def.to_string(),
        "[MyDataclassContainer { name: \"apple\", a: *, b: *, c: * }, \
          MyDataclassContainer { name: \"banana\", a: *, b: *, c: * }]"
    );
    // Meta fields take part in TreeDef equality, as JAX's aux data does.
    let renamed = vec![trees[1].clone(), trees[0].clone()];
    assert_ne!(pytree_std::structure(&renamed), def);
}

static CONSTRUCTOR_CALLS: AtomicUsize = AtomicUsize::new(0);

/// Seed 002's initialization gotcha: a constructor that validates its input.
#[derive(PyTree, Clone, Debug, PartialEq)]
struct Positive<T> {
    value: T,
}

impl Positive<f64> {
    fn new(value: f64) -> Self {
        CONSTRUCTOR_CALLS.fetch_add(1, Ordering::SeqCst);
        assert!(value > 0.0, "Positive::new needs a positive value");
        Positive { value }
    }
}

#[test]
fn unflatten_never_runs_user_constructors() {
    let tree = vec![Positive::new(1.0), Positive::new(2.0)];
    let calls = CONSTRUCTOR_CALLS.load(Ordering::SeqCst);
    // Placeholder leaves (zeros, negative numbers) that the constructor would reject.
    let placeholders: Vec<Positive<u8>> =
        pytree_std::walk::map_into(tree.clone(), |_| 0u8).unwrap();
    assert_eq!(placeholders.len(), 2);
    let negated: Vec<Positive<f64>> = pytree_std::walk::map_into(tree, |v| -v).unwrap();
    assert_eq!(negated[1].value, -2.0);
    assert_eq!(CONSTRUCTOR_CALLS.load(Ordering::SeqCst), calls);
}

/// Seed 003 (PAX): a module with a state leaf, a parameter leaf and a static flag.
#[derive(PyTree, Clone, Debug, PartialEq)]
struct Counter {
    count: f64,
    bias: f64,
    #[pytree(static)]
    is_training: bool,
}

impl Counter {
    fn step(&mut self) {
        self.count += 1.0;
    }
}

#[test]
fn pax_counter_round_trips_with_its_static_flag() {
    let mut counter = Counter {
        count: 0.0,
        bias: 0.0,
        is_training: true,
    };
    counter.step();
    let (leaves, treedef) = pytree_std::flatten(counter.clone());
    assert_eq!(leaves, [1.0, 0.0]);
    assert_eq!(
        treedef.to_string(),
        "Counter { count: *, bias: *, is_training: true }"
    );
    let new_counter: Counter = pytree_std::unflatten(&treedef, leaves).unwrap();
    assert_eq!(new_counter, counter);
    let eval = Counter {
        is_training: false,
        ..counter
    };
    assert_ne!(pytree_std::structure(&eval), treedef);
}

#[test]
fn treedefs_print_like_jax_with_rust_types() {
    let def: TreeDef = pytree_std::structure(&(1.0, Some((2.0, 3.0)), None::<f64>, [4.0]));
    assert_eq!(def.to_string(), "(*, Some((*, *)), None, [*])");
    assert_eq!(format!("{def:?}"), "TreeDef((*, Some((*, *)), None, [*]))");
}
