//! The generated code compiles whatever the user's names and scope: field
//! and variant names that are also names the generated code uses (`Leaf`,
//! `Ns`, `Error`, `Result`, `Ok`, `Some`, `None`, raw identifiers such as
//! `r#type`), generic parameters named `Ns`, `Leaf` or `T`, a module that
//! shadows the prelude's names, one with no prelude at all
//! (`#![no_implicit_prelude]`), and one with a trait in scope whose methods
//! share their names with the ones generated code calls. Everything under
//! `deny(warnings)`, as serde's `test_gen.rs` does for serde's derives.
#![deny(warnings)]
#![allow(dead_code, non_camel_case_types, non_snake_case)]

/// Types whose fields and variants have the names generated code uses.
mod names {
    use pytree_std::PyTree;

    /// An enum with a variant named `Leaf` (the derive's `Self::Leaf` was
    /// ambiguous here: "ambiguous associated item", rust#57644), and
    /// variants named like the prelude's and the derive's items.
    #[derive(PyTree, Clone, Debug, PartialEq)]
    pub enum Node {
        Leaf(f32),
        Ns(Vec<Node>),
        Error {
            r#type: f32,
            r#match: f32,
        },
        Result {
            Ok: f32,
            #[pytree(static)]
            Err: u8,
        },
        Ok,
        Some(f32),
        None,
        Flatten(Box<Node>),
        Std {
            Leaf: f32,
        },
        r#enum(f32),
    }

    /// A struct whose fields are named like the derive's items and its
    /// local variables.
    #[derive(PyTree, Clone, Debug, PartialEq)]
    pub struct Fields {
        pub Leaf: f32,
        pub Ns: f32,
        pub Error: f32,
        pub Result: f32,
        pub Ok: f32,
        pub Some: Option<f32>,
        pub None: Vec<f32>,
        pub r#type: f32,
        pub r#match: f32,
        pub r#fn: f32,
        pub __sink: f32,
        pub __source: f32,
        pub __f: f32,
        pub __others: f32,
        pub __o: f32,
        pub __field_Leaf: f32,
        #[pytree(static)]
        pub Self_: u8,
        #[pytree(static)]
        pub r#static: &'static str,
        #[pytree(skip)]
        pub r#skip: u8,
    }

    /// Generic parameters named `Ns` and `Leaf` (the trait's parameter and
    /// associated type) and `T`, with a static field of a generic type.
    #[derive(PyTree, Clone, Debug, PartialEq)]
    pub struct Generic<Ns, Leaf, T> {
        pub a: Ns,
        pub Leaf: Vec<Leaf>,
        #[pytree(static)]
        pub Ns_: T,
    }

    /// The same beside a field of a concrete type, which fixes the leaf
    /// type the parameters are tied to (issue 27).
    #[derive(PyTree, Clone, Debug, PartialEq)]
    pub struct Tied<Ns, Leaf> {
        pub fixed: f32,
        pub a: Ns,
        pub Leaf: Vec<Leaf>,
    }

    /// A tuple struct of the same.
    #[derive(PyTree, Clone, Debug, PartialEq)]
    pub struct Tuple<Leaf>(
        pub Leaf,
        pub Option<Leaf>,
        #[pytree(static)] pub &'static str,
    );

    /// A unit struct.
    #[derive(PyTree, Clone, Debug, PartialEq)]
    pub struct Unit;

    /// An enum generic over a parameter named `Leaf`, with a variant of the
    /// same name.
    #[derive(PyTree, Clone, Debug, PartialEq)]
    pub enum Tree<Leaf> {
        Leaf(Leaf),
        Node(Vec<Tree<Leaf>>),
    }

    /// A const parameter beside them.
    #[derive(PyTree, Clone, Debug, PartialEq)]
    pub struct Fixed<Ns, const N: usize> {
        pub Leaf: [Ns; N],
    }
}

/// A module that shadows every prelude name the generated code could pick
/// up by accident, and the derive's own names.
mod shadowing {

    struct Option;
    struct Some;
    struct None;
    struct Result;
    struct Ok;
    struct Err;
    struct Vec;
    struct Box;
    struct String;
    struct Default;
    struct Clone;
    struct Infallible;
    struct usize;
    struct str;
    struct u8;
    struct Error;
    struct Flatten;
    struct Unflatten;
    struct Sink;
    struct Source;
    struct Visit;
    struct KeyRef;
    struct Leaf;
    struct Std;
    trait FnMut {}
    trait Iterator {}
    trait IntoIterator {}
    trait Sized {}
    mod core {}
    mod std {}
    mod pytree_std {}
    use ::pytree_std::PyTree;

    #[derive(PyTree)]
    pub struct Model<T> {
        pub w: T,
        pub layers: ::std::vec::Vec<T>,
        #[pytree(static)]
        pub name: ::std::string::String,
        #[pytree(skip)]
        pub cache: ::std::option::Option<::core::primitive::u8>,
    }

    #[derive(PyTree)]
    pub enum Either<T> {
        Left(T),
        Right {
            value: T,
            #[pytree(static)]
            tag: ::core::primitive::u8,
        },
        Neither,
        Leaf(T),
    }

    /// A leaf type, with a variant named `Leaf` (`impl_leaf!`'s code).
    #[derive(PyTree, ::core::clone::Clone, ::core::fmt::Debug, ::core::cmp::PartialEq)]
    #[pytree(leaf)]
    pub enum Axis {
        Leaf,
        Mapped(::core::primitive::usize),
    }

    #[derive(PyTree)]
    pub struct Axes {
        pub in_axes: ::std::vec::Vec<Axis>,
        pub out_axis: Axis,
    }

    // A namespace of one's own, named `Ns`, whose leaf is a `Vec`.
    ::pytree_std::namespace!(pub struct Ns; leaves = [::std::vec::Vec<::core::primitive::f32>]);

    #[derive(PyTree)]
    #[pytree(namespace = Ns, namespace = ::pytree_std::Std)]
    pub struct InNs {
        pub w: ::std::vec::Vec<::core::primitive::f32>,
        pub b: ::std::option::Option<::std::vec::Vec<::core::primitive::f32>>,
    }
}

/// A module with no prelude at all: every name generated code uses must be
/// a path from the crate root.
#[no_implicit_prelude]
mod no_prelude {
    use ::pytree_std::PyTree;

    #[derive(PyTree)]
    pub struct Model<T> {
        pub w: T,
        pub layers: ::std::vec::Vec<T>,
        #[pytree(static)]
        pub name: &'static ::core::primitive::str,
    }

    #[derive(PyTree)]
    pub enum Either<T> {
        Leaf(T),
        Right {
            value: ::std::boxed::Box<T>,
            #[pytree(static)]
            tag: ::core::primitive::u8,
        },
        Neither,
    }

    #[derive(PyTree)]
    #[pytree(leaf)]
    pub struct Tensor(pub ::std::vec::Vec<::core::primitive::f32>);

    #[derive(PyTree)]
    pub struct Model2 {
        pub w: Tensor,
        pub layers: ::std::vec::Vec<Tensor>,
    }
}

/// A trait in scope for every type whose methods are named like the ones
/// generated code calls (on iterators, arrays, options, sinks, errors, its
/// own guards): a generated method call that is not fully qualified would
/// pick these up or be ambiguous.
mod methods_in_scope {
    use pytree_std::PyTree;

    pub trait Everything {
        fn iter(&self) {}
        fn into_iter(self)
        where
            Self: Sized,
        {
        }
        fn enumerate(&self) {}
        fn position(&self) {}
        fn map<F>(self, _f: F)
        where
            Self: Sized,
        {
        }
        fn unwrap_or<U>(self, _u: U)
        where
            Self: Sized,
        {
        }
        fn take(self)
        where
            Self: Sized,
        {
        }
        fn at(&self) {}
        fn enter(self)
        where
            Self: Sized,
        {
        }
        fn exit(self)
        where
            Self: Sized,
        {
        }
        fn node(self)
        where
            Self: Sized,
        {
        }
        fn leaf(self)
        where
            Self: Sized,
        {
        }
        fn struct_node(self)
        where
            Self: Sized,
        {
        }
        fn is_none(&self) {}
        fn clone(&self) {}
    }
    impl<T: ?Sized> Everything for T {}

    #[derive(PyTree, Clone)]
    pub struct Model<T> {
        pub w: T,
        pub layers: Vec<T>,
        #[pytree(static)]
        pub name: &'static str,
    }

    #[derive(PyTree, Clone)]
    pub enum Either<T> {
        Leaf(T),
        Right {
            value: T,
            #[pytree(static)]
            tag: u8,
        },
        Neither,
    }
}

use names::{Fields, Fixed, Generic, Node, Tied, Tree, Tuple, Unit};

#[test]
fn a_variant_named_leaf_and_names_like_the_derives_walk_and_rebuild() {
    let tree = vec![
        Node::Leaf(1.0),
        Node::Ns(vec![Node::Leaf(2.0), Node::None]),
        Node::Error {
            r#type: 3.0,
            r#match: 4.0,
        },
        Node::Result { Ok: 5.0, Err: 9 },
        Node::Ok,
        Node::Some(6.0),
        Node::Flatten(Box::new(Node::Std { Leaf: 7.0 })),
        Node::r#enum(8.0),
    ];
    let (leaves, def) = pytree_std::flatten(tree.clone());
    assert_eq!(leaves, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
    assert_eq!(
        def.to_string(),
        "[Node::Leaf(*), Node::Ns([Node::Leaf(*), Node::None]), \
         Node::Error { type: *, match: * }, Node::Result { Ok: *, Err: 9 }, Node::Ok, \
         Node::Some(*), Node::Flatten(Node::Std { Leaf: * }), Node::enum(*)]"
    );
    let back: Vec<Node> = pytree_std::unflatten(&def, leaves).unwrap();
    assert_eq!(back, tree);
    let doubled = pytree_std::map(tree.clone(), |x| 2.0 * x);
    assert_eq!(
        doubled[6],
        Node::Flatten(Box::new(Node::Std { Leaf: 14.0 }))
    );
    let sum = pytree_std::walk::map_n(&tree, [&doubled], |a, [b]| a + b).unwrap();
    assert_eq!(sum[0], Node::Leaf(3.0));
    let mut params = tree.clone();
    pytree_std::zip_mut([&mut params], [&doubled], |[p], [d]| *p -= d).unwrap();
    assert_eq!(params[5], Node::Some(-6.0));
    // Another variant at the same place is an error naming both.
    let err =
        pytree_std::walk::map_n(&tree[..1].to_vec(), [&vec![Node::Ok]], |a, [_]| *a).unwrap_err();
    assert!(err.to_string().contains("Node::Leaf"), "{err}");
    // The raw identifiers are unraw'd in key paths.
    let paths: Vec<String> = pytree_std::paths::leaves_with_path(&tree)
        .into_iter()
        .map(|(p, _)| p.to_string())
        .collect();
    assert_eq!(paths[2], "[2]::Error.type");
    assert_eq!(paths[7], "[7]::enum.0");
}

#[test]
fn fields_named_like_the_derives_items_and_locals() {
    let f = Fields {
        Leaf: 1.0,
        Ns: 2.0,
        Error: 3.0,
        Result: 4.0,
        Ok: 5.0,
        Some: Some(6.0),
        None: vec![7.0],
        r#type: 8.0,
        r#match: 9.0,
        r#fn: 10.0,
        __sink: 11.0,
        __source: 12.0,
        __f: 13.0,
        __others: 14.0,
        __o: 15.0,
        __field_Leaf: 16.0,
        Self_: 1,
        r#static: "s",
        r#skip: 0,
    };
    let (leaves, def) = pytree_std::flatten(f.clone());
    assert_eq!(leaves, (1..=16).map(|i| i as f32).collect::<Vec<_>>());
    let back: Fields = pytree_std::unflatten(&def, leaves).unwrap();
    assert_eq!(back, f);
    let keys: Vec<String> = def
        .leaf_paths()
        .unwrap()
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert_eq!(keys[..3], [".Leaf", ".Ns", ".Error"]);
    assert_eq!(keys[7..10], [".type", ".match", ".fn"]);
    assert_eq!(keys[15], ".__field_Leaf");
    let doubled = pytree_std::walk::map_n(&f, [&f], |a, [b]| a + b).unwrap();
    assert_eq!((doubled.__sink, doubled.r#fn), (22.0, 20.0));
}

#[test]
fn generic_parameters_named_ns_leaf_and_t() {
    let g: Generic<f64, f64, &'static str> = Generic {
        a: 1.0,
        Leaf: vec![2.0, 3.0],
        Ns_: "t",
    };
    let (leaves, def) = pytree_std::flatten(g.clone());
    assert_eq!(leaves, [1.0, 2.0, 3.0]);
    assert_eq!(
        def.to_string(),
        r#"Generic { a: *, Leaf: [*, *], Ns_: "t" }"#
    );
    assert_eq!(
        pytree_std::unflatten::<Generic<f64, f64, &str>>(&def, leaves).unwrap(),
        g
    );

    let tied = Tied {
        fixed: 1.0,
        a: (2.0f32, 3.0f32),
        Leaf: vec![Some(4.0f32)],
    };
    assert_eq!(pytree_std::map(tied, |x| x + 1.0).Leaf, [Some(5.0)]);

    let t = Tuple(1u8, Some(2), "x");
    assert_eq!(pytree_std::leaves(&t), [&1, &2]);
    assert_eq!(pytree_std::structure(&Unit).to_string(), "Unit");
    let tree = Tree::Node(vec![Tree::Leaf(1i32), Tree::Node(vec![Tree::Leaf(2)])]);
    assert_eq!(
        pytree_std::map(tree, |x| x * 10),
        Tree::Node(vec![Tree::Leaf(10), Tree::Node(vec![Tree::Leaf(20)])])
    );
    let fixed = Fixed {
        Leaf: [1.0f32, 2.0],
    };
    assert_eq!(pytree_std::leaves(&fixed), [&1.0, &2.0]);
}

#[test]
fn derived_code_compiles_with_the_prelude_shadowed() {
    let m = shadowing::Model {
        w: 1.0f32,
        layers: vec![2.0],
        name: "m".into(),
        cache: None,
    };
    let (leaves, def) = pytree_std::flatten(m);
    assert_eq!(leaves, [1.0, 2.0]);
    let e: Vec<shadowing::Either<f32>> = vec![
        shadowing::Either::Left(1.0),
        shadowing::Either::Right { value: 2.0, tag: 7 },
        shadowing::Either::Neither,
        shadowing::Either::Leaf(3.0),
    ];
    assert_eq!(
        pytree_std::structure(&e).to_string(),
        "[Either::Left(*), Either::Right { value: *, tag: 7 }, Either::Neither, Either::Leaf(*)]"
    );
    assert_eq!(def.num_leaves(), 2);
    let (leaves, def) = pytree_std::flatten(e);
    let back: Vec<shadowing::Either<f32>> = pytree_std::unflatten(&def, leaves).unwrap();
    assert_eq!(pytree_std::leaves(&back), [&1.0, &2.0, &3.0]);

    let axes = shadowing::Axes {
        in_axes: vec![shadowing::Axis::Leaf, shadowing::Axis::Mapped(1)],
        out_axis: shadowing::Axis::Mapped(0),
    };
    assert_eq!(
        pytree_std::leaves(&axes),
        [
            &shadowing::Axis::Leaf,
            &shadowing::Axis::Mapped(1),
            &shadowing::Axis::Mapped(0)
        ]
    );
    let in_ns = shadowing::InNs {
        w: vec![1.0, 2.0],
        b: Some(vec![3.0]),
    };
    let (tensors, _) = pytree_std::generic::basic::flatten::<shadowing::Ns, _>(in_ns);
    assert_eq!(tensors, [vec![1.0, 2.0], vec![3.0]]);
}

#[test]
fn derived_code_compiles_with_no_prelude() {
    let m = no_prelude::Model {
        w: 1.0f32,
        layers: vec![2.0],
        name: "m",
    };
    let (leaves, def) = pytree_std::flatten(m);
    let back: no_prelude::Model<f32> = pytree_std::unflatten(&def, leaves).unwrap();
    assert_eq!(back.layers, [2.0]);
    let e = vec![
        no_prelude::Either::Leaf(1.0f32),
        no_prelude::Either::Right {
            value: Box::new(2.0),
            tag: 3,
        },
        no_prelude::Either::Neither,
    ];
    let e2 = pytree_std::map(e, |x| x + 1.0);
    let sum = pytree_std::walk::map_n(&e2, [&e2], |a, [b]| a + b).unwrap();
    assert_eq!(pytree_std::leaves(&sum), [&4.0, &6.0]);
}

#[test]
fn derived_code_calls_no_method_a_trait_in_scope_could_take() {
    let m = methods_in_scope::Model {
        w: 1.0f32,
        layers: vec![2.0],
        name: "m",
    };
    let mut params = m.clone();
    pytree_std::zip_mut([&mut params], [&m], |[p], [g]| *p += g).unwrap();
    let (leaves, def) = pytree_std::flatten(params);
    assert_eq!(leaves, [2.0, 4.0]);
    let back: methods_in_scope::Model<f32> = pytree_std::unflatten(&def, leaves).unwrap();
    assert_eq!(back.w, 2.0);
    let e = vec![
        methods_in_scope::Either::Leaf(1.0f32),
        methods_in_scope::Either::Right { value: 2.0, tag: 3 },
    ];
    let sum = pytree_std::walk::map_n(&e, [&e], |a, [b]| a + b).unwrap();
    assert_eq!(pytree_std::leaves(&sum), [&2.0, &4.0]);
    let other = vec![
        methods_in_scope::Either::Neither,
        methods_in_scope::Either::Right { value: 2.0, tag: 3 },
    ];
    assert!(pytree_std::walk::map_n(&e, [&other], |a, [_]| *a).is_err());
}
