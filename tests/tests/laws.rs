//! Property laws over generated trees: typed trees (nested `Vec`,
//! `Option`, `Box`, `BTreeMap`/`HashMap`, tuples, arrays, derived structs
//! and enums with static fields) and dynamic `Tree<i32>`s.
//!
//! - unflatten after flatten is the identity, on the checked path (first
//!   read of a TreeDef) and the remembered one (a second read);
//! - `structure(x) == flatten(x).1`;
//! - equal TreeDefs hash equal, also after a serde round trip;
//! - identity maps and zips give the tree back;
//! - partition then combine is the identity;
//! - serde round trips (`Serialized`, and a typed tree saved as a `Tree`);
//! - `get` finds every leaf by its path;
//! - typed to `Tree` and back is the identity.

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};

use proptest::prelude::*;
use pytree_std::serialized::Serialized;
use pytree_std::{PyTree, Tree, TreeDef};

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Cell<T> {
    v: T,
    opt: Option<Box<T>>,
    #[pytree(static)]
    label: String,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
enum Shape<T> {
    Point,
    Circle {
        r: T,
        #[pytree(static)]
        filled: bool,
    },
    Poly(Vec<T>, #[pytree(static)] u8),
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Big<T> {
    cells: Vec<Cell<T>>,
    shapes: Vec<Shape<T>>,
    map: BTreeMap<String, (T, Option<T>)>,
    nested: Vec<Vec<Option<T>>>,
    boxed: Box<(T, [T; 2])>,
    hmap: HashMap<u8, T>,
}

fn cell() -> impl Strategy<Value = Cell<i32>> {
    (any::<i32>(), prop::option::of(any::<i32>()), "[a-z]{0,3}").prop_map(|(v, o, label)| Cell {
        v,
        opt: o.map(Box::new),
        label,
    })
}

fn shape() -> impl Strategy<Value = Shape<i32>> {
    prop_oneof![
        Just(Shape::Point),
        (any::<i32>(), any::<bool>()).prop_map(|(r, filled)| Shape::Circle { r, filled }),
        (prop::collection::vec(any::<i32>(), 0..4), any::<u8>())
            .prop_map(|(v, n)| Shape::Poly(v, n)),
    ]
}

fn big() -> impl Strategy<Value = Big<i32>> {
    (
        prop::collection::vec(cell(), 0..4),
        prop::collection::vec(shape(), 0..4),
        prop::collection::btree_map(
            "[a-c]{0,2}",
            (any::<i32>(), prop::option::of(any::<i32>())),
            0..4,
        ),
        prop::collection::vec(
            prop::collection::vec(prop::option::of(any::<i32>()), 0..3),
            0..3,
        ),
        (any::<i32>(), any::<[i32; 2]>()),
        prop::collection::hash_map(any::<u8>(), any::<i32>(), 0..4),
    )
        .prop_map(|(cells, shapes, map, nested, boxed, hmap)| Big {
            cells,
            shapes,
            map,
            nested,
            boxed: Box::new(boxed),
            hmap,
        })
}

fn dynamic() -> impl Strategy<Value = Tree<i32>> {
    let leaf = prop_oneof![
        4 => any::<i32>().prop_map(Tree::leaf),
        1 => Just(Tree::none()),
    ];
    leaf.prop_recursive(5, 48, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Tree::seq),
            prop::collection::btree_map("[a-d]{1,2}", inner, 0..4).prop_map(Tree::dict),
        ]
    })
}

fn hash_of(def: &TreeDef) -> u64 {
    let mut h = DefaultHasher::new();
    def.hash(&mut h);
    h.finish()
}

/// The laws every pytree of leaf `i32` obeys.
fn laws<T>(x: &T) -> Result<(), TestCaseError>
where
    T: pytree_std::Unflatten<pytree_std::Std, Leaf = i32> + Clone + PartialEq + std::fmt::Debug,
{
    // unflatten(flatten(x)) == x, checked then remembered.
    let (leaves, def) = pytree_std::flatten(x.clone());
    prop_assert_eq!(
        &pytree_std::unflatten::<T>(&def, leaves.clone()).unwrap(),
        x
    );
    prop_assert_eq!(
        &pytree_std::unflatten::<T>(&def, leaves.clone()).unwrap(),
        x
    );
    // structure(x) == flatten(x).1, and equal TreeDefs hash equal.
    let s = pytree_std::structure(x);
    prop_assert!(s == def);
    prop_assert_eq!(hash_of(&s), hash_of(&def));
    // ... also after serde.
    let back: TreeDef = serde_json::from_str(&serde_json::to_string(&def).unwrap()).unwrap();
    prop_assert!(back == def);
    prop_assert_eq!(hash_of(&back), hash_of(&def));
    prop_assert_eq!(back.to_string(), def.to_string());
    prop_assert_eq!(
        &pytree_std::unflatten::<T>(&back, leaves.clone()).unwrap(),
        x
    );
    // Identity maps and zips.
    prop_assert_eq!(&pytree_std::map(x.clone(), |v| v), x);
    prop_assert_eq!(
        &pytree_std::walk::map_into::<T, T, _>(x.clone(), |v| v).unwrap(),
        x
    );
    prop_assert_eq!(&pytree_std::walk::map_n(x, [x], |a, [_]| *a).unwrap(), x);
    let mut y = pytree_std::map(x.clone(), |v| v.wrapping_add(1));
    pytree_std::zip_mut([&mut y], [x], |[a], [b]| *a = *b).unwrap();
    prop_assert_eq!(&y, x);
    // `get` finds every leaf by its path.
    for (path, leaf) in pytree_std::paths::leaves_with_path(x) {
        prop_assert_eq!(pytree_std::paths::get(x, &path).unwrap(), leaf);
    }
    // serde of the whole value.
    let json = serde_json::to_string(&Serialized(x.clone())).unwrap();
    let Serialized(read) = serde_json::from_str::<Serialized<T>>(&json).unwrap();
    prop_assert_eq!(&read, x);
    // Typed to Tree and back (through a document, as a checkpoint would).
    let t = Tree::from_pytree(x.clone()).unwrap();
    let t: Tree<i32> = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
    prop_assert_eq!(&t.to_pytree::<T>(&def).unwrap(), x);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn typed_trees_obey_the_laws(x in big(), cut in any::<i32>()) {
        laws(&x)?;
        // Partition then combine is the identity.
        let (a, b): (Big<Option<i32>>, Big<Option<i32>>) =
            pytree_std::split::partition(x.clone(), |_, v| *v < cut).unwrap();
        let whole: Big<i32> = pytree_std::split::combine([a, b]).unwrap();
        prop_assert_eq!(&whole, &x);
    }

    #[test]
    fn small_typed_trees_obey_the_laws(
        x in (prop::collection::vec(cell(), 0..3), shape(), prop::option::of(any::<i32>())),
    ) {
        laws(&x)?;
    }

    #[test]
    fn dynamic_trees_obey_the_laws(t in dynamic(), cut in any::<i32>()) {
        laws(&t)?;
        let (a, b): (Tree<i32>, Tree<i32>) =
            pytree_std::split::partition(t.clone(), |_, v| *v < cut).unwrap();
        let whole: Tree<i32> = pytree_std::split::combine([a, b]).unwrap();
        prop_assert_eq!(&whole, &t);
        // A Tree is its own document.
        let back: Tree<i32> = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        prop_assert_eq!(&back, &t);
    }

    #[test]
    fn equal_structures_hash_equal(x in big(), y in big()) {
        let (dx, dy) = (pytree_std::structure(&x), pytree_std::structure(&y));
        if dx == dy {
            prop_assert_eq!(hash_of(&dx), hash_of(&dy));
        }
        let zeroed = pytree_std::map(x.clone(), |_| 0);
        prop_assert!(pytree_std::structure(&zeroed) == dx);
        prop_assert_eq!(hash_of(&pytree_std::structure(&zeroed)), hash_of(&dx));
    }
}
