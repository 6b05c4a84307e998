//! What the derive accepts: named, tuple and unit structs, enums of every
//! variant kind, generics (types, lifetimes, const), where-clauses,
//! recursive types, skipped fields, user namespaces and re-exported crates.

mod models;

use std::collections::BTreeMap;
use std::marker::PhantomData;

use models::Shape;
use pytree_std::{paths::KeyEntry, ErrorKind, PyTree};

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Node {
    v: f32,
    next: Option<Box<Node>>,
}

fn chain(values: &[f32]) -> Option<Box<Node>> {
    values
        .iter()
        .rev()
        .fold(None, |next, &v| Some(Box::new(Node { v, next })))
}

/// `t` flattens to `leaves` and a TreeDef shown as `def`, and unflattens
/// back to itself.
fn round_trip<T>(t: T, leaves: &[T::Leaf], def: &str)
where
    T: PyTree + Clone + PartialEq + std::fmt::Debug,
    T::Leaf: PartialEq + std::fmt::Debug,
{
    let (flat, treedef) = pytree_std::flatten(t.clone());
    assert_eq!(flat, leaves);
    assert_eq!(treedef.to_string(), def);
    assert_eq!(pytree_std::unflatten::<T>(&treedef, flat).unwrap(), t);
}

#[test]
fn a_recursive_type_flattens_and_unflattens() {
    round_trip(
        chain(&[1.0, 2.0, 3.0]).unwrap(),
        &[1.0, 2.0, 3.0],
        "Node { v: *, next: Some(Node { v: *, next: Some(Node { v: *, next: None }) }) }",
    );
}

#[test]
fn an_enum_records_its_variant_in_the_treedef() {
    round_trip(
        models::shapes(),
        &[1.0, 2.0, 3.0],
        "[Shape::Circle { r: * }, Shape::Rect(*, *), Shape::Empty]",
    );
}

#[test]
fn zipping_different_variants_is_an_error_naming_both() {
    let a = vec![Shape::Circle { r: 1.0 }];
    let b = vec![Shape::Rect(1.0, 2.0)];
    let err = pytree_std::walk::map_n(&a, [&b], |x, [y]| x + y).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at [0]: node mismatch: expected variant Shape::Circle, found variant Shape::Rect"
    );
}

#[test]
fn unflattening_another_variant_names_the_place() {
    let def = pytree_std::structure(&vec![Shape::Empty]);
    let err = pytree_std::unflatten::<Vec<Point>>(&def, Vec::<f64>::new()).unwrap_err();
    assert_eq!(err.path().entries(), [KeyEntry::Index(0)]);
    assert_eq!(
        err.kind(),
        &ErrorKind::NodeMismatch {
            expected: "Point".into(),
            found: "Shape::Empty".into()
        }
    );
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Point(f64, f64);

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Unit;

#[test]
fn a_unit_struct_is_a_node_without_leaves() {
    let (leaves, def) = pytree_std::flatten(Unit);
    assert!(leaves.is_empty());
    assert_eq!(def.to_string(), "Unit");
    let _: Unit = pytree_std::unflatten(&def, leaves).unwrap();
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Stack<T, const N: usize>
where
    T: Copy,
{
    layers: [T; N],
    #[pytree(static)]
    label: &'static str,
}

#[test]
fn const_generics_and_where_clauses() {
    let s = Stack {
        layers: [1u8, 2, 3],
        label: "s",
    };
    let doubled = pytree_std::map(s.clone(), |x| x * 2);
    assert_eq!(doubled.layers, [2, 4, 6]);
    let def = pytree_std::structure(&s);
    assert_eq!(def.to_string(), "Stack { layers: [*, *, *], label: \"s\" }");
    let err = pytree_std::unflatten::<Stack<u8, 2>>(&def, [1, 2, 3]).unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::LengthMismatch {
            expected: 2,
            found: 3
        }
    );
    assert_eq!(err.path().to_string(), ".layers");
}

/// A lifetime parameter, carried by a field that is not part of the tree.
#[derive(PyTree, Clone, Debug, PartialEq)]
struct Scratch<'a, T> {
    w: T,
    #[pytree(skip)]
    cache: Option<PhantomData<&'a T>>,
}

#[test]
fn lifetimes_and_skipped_fields() {
    let s = Scratch {
        w: 1.5f32,
        cache: Some(PhantomData),
    };
    let (leaves, def) = pytree_std::flatten(s);
    assert_eq!(leaves, [1.5]);
    assert_eq!(def.to_string(), "Scratch { w: * }");
    let back: Scratch<'_, f32> = pytree_std::unflatten(&def, leaves).unwrap();
    assert_eq!(back.cache, None, "a skipped field is rebuilt with Default");
}

/// Two type parameters in data fields must share the leaf type.
#[derive(PyTree, Clone, Debug, PartialEq)]
struct Pair<A, B> {
    a: A,
    b: B,
}

#[test]
fn several_type_parameters_share_one_leaf_type() {
    let p = Pair {
        a: 1.0f32,
        b: vec![2.0f32, 3.0],
    };
    assert_eq!(pytree_std::flatten(p).0, [1.0, 2.0, 3.0]);
}

/// A struct generic over a parameter used only in a static field.
#[derive(PyTree, Clone, Debug, PartialEq)]
struct Tagged<C> {
    x: f64,
    #[pytree(static)]
    config: C,
}

#[test]
fn a_parameter_in_a_static_field_only_needs_static_bounds() {
    let t = Tagged {
        x: 1.0,
        config: (3u8, "cfg".to_string()),
    };
    let (leaves, def) = pytree_std::flatten(t.clone());
    assert_eq!(def.to_string(), "Tagged { x: *, config: (3, \"cfg\") }");
    assert_eq!(
        pytree_std::unflatten::<Tagged<(u8, String)>>(&def, leaves).unwrap(),
        t
    );
}

/// A user namespace where a `Vec<f32>` is one leaf (a tensor), as optree's
/// namespaces allow.
pub struct Coarse;
pytree_std::impl_leaf!(Coarse => Vec<f32>);

#[derive(PyTree, Clone, Debug, PartialEq)]
#[pytree(namespace = Coarse, namespace = pytree_std::Std)]
struct Layer {
    w: Vec<f32>,
    b: Vec<f32>,
}

#[test]
fn a_user_namespace_treats_vec_as_a_leaf() {
    let layer = Layer {
        w: vec![1.0, 2.0],
        b: vec![3.0],
    };
    let (coarse, coarse_def) = pytree_core::ops::basic::flatten::<Coarse, _>(layer.clone());
    assert_eq!(coarse, [vec![1.0, 2.0], vec![3.0]]);
    assert_eq!(coarse_def.to_string(), "Layer { w: *, b: * }");
    let (fine, fine_def) = pytree_std::flatten(layer);
    assert_eq!(fine, [1.0, 2.0, 3.0]);
    assert_eq!(fine_def.to_string(), "Layer { w: [*, *], b: [*] }");
}

mod reexport {
    pub use pytree_std as pt;
}

#[derive(reexport::pt::PyTree, Clone, Debug, PartialEq)]
#[pytree(crate = "reexport::pt")]
struct ThroughReexport {
    x: BTreeMap<String, f32>,
}

#[test]
fn the_crate_attribute_names_a_reexported_runtime() {
    let t = ThroughReexport {
        x: BTreeMap::from([("k".to_string(), 1.0)]),
    };
    assert_eq!(
        reexport::pt::structure(&t).to_string(),
        "ThroughReexport { x: {\"k\": *} }"
    );
}

/// A backend trait whose associated type is the tensor: the inferred bound
/// (`B: Flatten<Std>`) would be wrong, so `bound` replaces it.
trait Backend {
    type Tensor;
}

#[derive(Clone, Debug, PartialEq)]
struct Cpu;

impl Backend for Cpu {
    type Tensor = Vec<f32>;
}

#[derive(PyTree)]
#[pytree(bound = "B::Tensor: pytree_std::PyTree")]
struct OnBackend<B: Backend> {
    w: B::Tensor,
    b: B::Tensor,
}

#[test]
fn the_bound_attribute_replaces_inferred_bounds() {
    let m: OnBackend<Cpu> = OnBackend {
        w: vec![1.0, 2.0],
        b: vec![3.0],
    };
    let (leaves, def) = pytree_std::flatten(m);
    assert_eq!(leaves, [1.0, 2.0, 3.0]);
    let back: OnBackend<Cpu> = pytree_std::unflatten(&def, leaves).unwrap();
    assert_eq!(back.b, [3.0]);
}

/// Thirteen data fields, a static and a skipped one: more than one
/// `transpose<k>` of pytree-core pairs the other trees' fields (twelve at
/// most each), through closures rather than one fields function.
#[derive(PyTree, Clone, Debug, PartialEq)]
struct Wide {
    f0: f64,
    f1: f64,
    f2: f64,
    f3: f64,
    f4: f64,
    f5: f64,
    f6: f64,
    f7: f64,
    f8: f64,
    f9: f64,
    f10: f64,
    f11: f64,
    #[pytree(skip)]
    cache: u8,
    f12: Vec<f64>,
    #[pytree(static)]
    tag: u32,
}

/// An enum variant of thirteen fields (chunked), one of two (transposed
/// as it is).
#[derive(PyTree, Clone, Debug, PartialEq)]
enum WideEnum {
    Many(
        f64,
        f64,
        f64,
        f64,
        f64,
        f64,
        f64,
        f64,
        f64,
        f64,
        f64,
        f64,
        Vec<f64>,
    ),
    Two {
        x: f64,
        #[pytree(static)]
        k: u8,
    },
}

/// A field type that names `Self`: the zips read the other trees' fields
/// through a closure, not a free function.
#[derive(PyTree, Clone, Debug, PartialEq)]
struct SelfNamed {
    v: f64,
    next: Option<Box<Self>>,
}

fn wide(x: f64, tag: u32) -> Wide {
    Wide {
        f0: x,
        f1: x,
        f2: x,
        f3: x,
        f4: x,
        f5: x,
        f6: x,
        f7: x,
        f8: x,
        f9: x,
        f10: x,
        f11: x + 1.0,
        cache: 7,
        f12: vec![x, x],
        tag,
    }
}

#[test]
fn zips_pair_every_field_of_wide_structs_and_variants() {
    let sum = pytree_std::walk::map_n(&wide(1.0, 3), [&wide(2.0, 3)], |a, [b]| a + b).unwrap();
    let expected = Wide {
        cache: 0,
        ..wide(3.0, 3)
    };
    assert_eq!(
        sum,
        Wide {
            f11: 5.0,
            ..expected
        }
    );

    let err = pytree_std::walk::map_n(&wide(1.0, 3), [&wide(1.0, 4)], |a, [b]| a + b).unwrap_err();
    let message = err.to_string();
    assert!(message.contains(".tag: static data mismatch"), "{message}");
    let mut longer = wide(1.0, 3);
    longer.f12.push(0.0);
    let err = pytree_std::walk::map_n(&wide(1.0, 3), [&longer], |a, [b]| a + b).unwrap_err();
    assert!(err.to_string().contains(".f12"), "{err}");

    let mut params = wide(1.0, 3);
    pytree_std::zip_mut([&mut params], [&wide(0.5, 3)], |[p], [g]| *p -= g).unwrap();
    assert_eq!(
        params,
        Wide {
            f11: 0.5,
            ..wide(0.5, 3)
        }
    );

    let many = |x: f64| WideEnum::Many(x, x, x, x, x, x, x, x, x, x, x, x, vec![x]);
    let sum = pytree_std::walk::map_n(&many(1.0), [&many(2.0)], |a, [b]| a + b).unwrap();
    assert_eq!(sum, many(3.0));
    let two = |x: f64| WideEnum::Two { x, k: 1 };
    let mut left = two(1.0);
    pytree_std::zip_mut([&mut left], [&two(0.25)], |[p], [g]| *p -= g).unwrap();
    assert_eq!(left, two(0.75));

    let chain = |v: f64| SelfNamed {
        v,
        next: Some(Box::new(SelfNamed { v, next: None })),
    };
    let sum = pytree_std::walk::map_n(&chain(1.0), [&chain(2.0)], |a, [b]| a + b).unwrap();
    assert_eq!(sum, chain(3.0));
}
