//! The generated code uses absolute paths: it compiles in a module that
//! shadows the prelude names it could otherwise pick up by accident, and
//! under `deny(warnings)`.
#![deny(warnings)]
#![allow(dead_code, non_camel_case_types)]

mod shadowing {
    use pytree_std::PyTree;

    struct Option;
    struct Some;
    struct None;
    struct Result;
    struct Ok;
    struct Err;
    struct Vec;
    struct Box;
    struct Default;
    struct Clone;
    struct usize;
    trait FnMut {}
    trait Iterator {}

    #[derive(PyTree)]
    pub struct Model<T> {
        pub w: T,
        pub layers: std::vec::Vec<T>,
        #[pytree(static)]
        pub name: std::string::String,
        #[pytree(skip)]
        pub cache: std::option::Option<u8>,
    }

    #[derive(PyTree)]
    pub enum Either<T> {
        Left(T),
        Right {
            value: T,
            #[pytree(static)]
            tag: u8,
        },
        Neither,
    }
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
    ];
    assert_eq!(
        pytree_std::structure(&e).to_string(),
        "[Either::Left(*), Either::Right { value: *, tag: 7 }, Either::Neither]"
    );
    assert_eq!(def.num_leaves(), 2);
}
