//! Where-clauses the derive infers beyond plain type parameters: fields
//! whose types are associated types of a parameter (a backend's tensor, as
//! burn and candle models are written), and generic leaf types.

mod models;

use pytree_std::{Flatten, PyTree, Std};

/// A backend names its tensor type, as burn's `Backend` does.
trait Backend {
    type Tensor;
}

struct Cpu;
impl Backend for Cpu {
    type Tensor = f32;
}

struct Wide;
impl Backend for Wide {
    type Tensor = Vec<f64>;
}

/// The bound goes on `B::Tensor`, not on `B` (which is no pytree). (std's
/// `Debug` and `PartialEq` derives would bound `B`, so they are not used.)
#[derive(PyTree)]
struct Linear<B: Backend> {
    w: B::Tensor,
    b: Vec<B::Tensor>,
}

#[derive(PyTree)]
struct Qualified<B: Backend> {
    w: <B as Backend>::Tensor,
    #[pytree(static)]
    name: &'static str,
}

#[test]
fn a_field_of_an_associated_type_bounds_that_type() {
    let cpu: Linear<Cpu> = Linear {
        w: 1.0,
        b: vec![2.0, 3.0],
    };
    let (leaves, def) = pytree_std::flatten(cpu);
    assert_eq!(leaves, [1.0, 2.0, 3.0]);
    assert_eq!(def.to_string(), "Linear { w: *, b: [*, *] }");
    let back: Linear<Cpu> = pytree_std::unflatten(&def, leaves).unwrap();
    assert_eq!((back.w, back.b), (1.0, vec![2.0, 3.0]));

    // Another backend, another leaf type: the leaves of a Vec<f64> tensor.
    let wide: Linear<Wide> = Linear {
        w: vec![1.0],
        b: vec![vec![2.0, 3.0]],
    };
    assert_eq!(pytree_std::leaves(&wide), [&1.0, &2.0, &3.0]);

    let q: Qualified<Cpu> = Qualified { w: 4.0, name: "q" };
    assert_eq!(
        pytree_std::structure(&q).to_string(),
        r#"Qualified { w: *, name: "q" }"#
    );
}

fn leaf_of<T: Flatten<Std, Leaf = f32>>(_: &T) {}

#[test]
fn the_leaf_type_follows_the_backend() {
    leaf_of(&Linear::<Cpu> { w: 0.0, b: vec![] });
}

/// A generic leaf type: `#[pytree(leaf)]` goes through `impl_leaf!`.
#[derive(PyTree, Clone, Debug, PartialEq)]
#[pytree(leaf)]
struct Tensor<T> {
    data: Vec<T>,
}

#[derive(PyTree, Debug, PartialEq)]
struct Model<T: Clone + 'static> {
    layers: Vec<Tensor<T>>,
}

#[test]
fn a_generic_leaf_type_is_one_leaf_lent_by_reference() {
    let m = Model {
        layers: vec![Tensor { data: vec![1u8, 2] }, Tensor { data: vec![3] }],
    };
    let leaves = pytree_std::leaves(&m);
    assert_eq!(leaves.len(), 2);
    assert_eq!(leaves[1].data, [3]);
    let doubled = pytree_std::map(m, |t| Tensor {
        data: t.data.iter().map(|x| x * 2).collect(),
    });
    assert_eq!(doubled.layers[0].data, [2, 4]);
}

/// Issue 27: a generic struct whose other fields are of concrete types (a
/// checkpoint of a model and an optimizer state). The concrete field fixes
/// the leaf type, and the derive ties each parameter to it, so no
/// `#[pytree(bound = "...")]` is needed.
mod generic_beside_concrete {
    use pytree_optim::{adam, AdamState, GradientTransformation};
    use pytree_std::checkpoint::{self, Load};
    use pytree_std::ndarray::{Array1, Array2, ArrayD};
    use pytree_std::{Flatten, PyTree, Std};

    use super::models::arrays::Linear;

    #[derive(PyTree, Clone, Debug, PartialEq)]
    pub struct Mlp {
        pub layers: Vec<Linear>,
    }

    /// The struct of the issue, with no bound written (was E0271).
    #[derive(PyTree, Clone, Debug, PartialEq)]
    pub struct TrainCkpt<S> {
        pub params: Mlp,
        pub opt: S,
        #[pytree(static)]
        pub epoch: u32,
    }

    /// The parameter first.
    #[derive(PyTree, Clone, Debug, PartialEq)]
    pub struct OptFirst<S> {
        pub opt: S,
        pub params: Mlp,
    }

    /// Parameters inside containers, two of them, and a static one.
    #[derive(PyTree, Clone, Debug, PartialEq)]
    pub struct Wrapped<S, E, C> {
        pub params: Mlp,
        pub opt: Option<S>,
        pub history: Vec<E>,
        #[pytree(static)]
        pub config: C,
    }

    /// An associated type: the state of the optimizer `O`.
    #[derive(PyTree)]
    pub struct ByOptimizer<O: GradientTransformation<Mlp>> {
        pub params: Mlp,
        pub state: O::State,
    }

    /// An enum: one variant concrete, one generic.
    #[derive(PyTree, Clone, Debug, PartialEq)]
    pub enum Slot<S> {
        Params(Mlp),
        Opt(S),
        Empty,
    }

    /// Recursive through itself, beside a concrete field (a recursive
    /// field is never the one that fixes the leaf type).
    #[derive(PyTree, Clone, Debug, PartialEq)]
    pub enum Expr<S> {
        Var(S),
        Add(Box<Expr<S>>, Box<Expr<S>>),
        Const(f64),
    }

    /// Recursive through another generic type that is tied the same way.
    #[derive(PyTree, Clone, Debug, PartialEq)]
    pub struct Block<S> {
        pub params: Mlp,
        pub inner: Vec<Inner<S>>,
    }

    #[derive(PyTree, Clone, Debug, PartialEq)]
    pub struct Inner<S> {
        pub norm: Linear,
        pub opt: Option<S>,
        pub outer: Option<Box<Block<S>>>,
    }

    /// Generic code needs to say no more than the leaf type of `S`.
    fn count_leaves<S: PyTree<Leaf = ArrayD<f32>>>(ckpt: &TrainCkpt<S>) -> usize {
        pytree_std::leaves(ckpt).len()
    }

    fn leaf_is_f32_arrays<T: Flatten<Std, Leaf = ArrayD<f32>>>(_: &T) {}

    pub fn mlp(scale: f32) -> Mlp {
        let lin = |i: usize, o: usize| Linear {
            w: Array2::from_shape_fn((i, o), |(r, c)| scale * ((r * o + c) as f32 * 0.37).sin()),
            b: Array1::from_shape_fn(o, |c| scale * (c as f32 * 0.11 - 0.2)),
        };
        Mlp {
            layers: vec![lin(4, 3), lin(3, 2)],
        }
    }

    fn grads(p: &Mlp, t: usize) -> Mlp {
        let f = (t + 1) as f32;
        pytree_std::map(p.clone(), |x| x.mapv(|v| (v * f).sin() + 0.1 * v))
    }

    fn bits(p: &Mlp) -> Vec<u32> {
        pytree_std::leaves(p)
            .into_iter()
            .flat_map(|l| l.iter().map(|x| x.to_bits()).collect::<Vec<_>>())
            .collect()
    }

    #[test]
    fn a_generic_checkpoint_struct_needs_no_bound() {
        let opt = adam(1e-2);
        let params = mlp(1.0);
        let state: AdamState<Mlp> = opt.init(&params).unwrap();
        let ckpt = TrainCkpt {
            params,
            opt: state,
            epoch: 3,
        };
        leaf_is_f32_arrays(&ckpt);
        assert_eq!(count_leaves(&ckpt), 4 + 8);
        let def = pytree_std::structure(&ckpt);
        assert!(
            def.to_string()
                .starts_with("TrainCkpt { params: Mlp { layers: [Linear { w: *, b: * }"),
            "{def}"
        );
        let (leaves, def) = pytree_std::flatten(ckpt.clone());
        let back: TrainCkpt<AdamState<Mlp>> = pytree_std::unflatten(&def, leaves).unwrap();
        // (Adam's masks are skipped fields: compared here field by field.)
        assert_eq!((&back.params, back.epoch), (&ckpt.params, ckpt.epoch));
        assert_eq!(
            (&back.opt.0.mu, &back.opt.0.nu, back.opt.0.count),
            (&ckpt.opt.0.mu, &ckpt.opt.0.nu, 0)
        );

        let first = OptFirst {
            opt: mlp(2.0),
            params: mlp(1.0),
        };
        let doubled = pytree_std::map(first.clone(), |a| a * 2.0);
        assert_eq!(doubled.opt, pytree_std::map(mlp(2.0), |a| a * 2.0));
        leaf_is_f32_arrays(&first);
    }

    #[test]
    fn parameters_in_containers_enums_and_associated_types_are_tied_too() {
        let w: Wrapped<Mlp, Linear, &str> = Wrapped {
            params: mlp(1.0),
            opt: Some(mlp(2.0)),
            history: vec![mlp(3.0).layers[0].clone()],
            config: "c",
        };
        assert_eq!(pytree_std::leaves(&w).len(), 4 + 4 + 2);
        let (leaves, def) = pytree_std::flatten(w.clone());
        assert_eq!(
            pytree_std::unflatten::<Wrapped<Mlp, Linear, &str>>(&def, leaves).unwrap(),
            w
        );

        let opt = adam(1e-3);
        let by: ByOptimizer<_> = ByOptimizer::<pytree_optim::Adam<f64>> {
            params: mlp(1.0),
            state: opt.init(&mlp(1.0)).unwrap(),
        };
        leaf_is_f32_arrays(&by);
        assert_eq!(pytree_std::leaves(&by).len(), 12);

        let slots = vec![
            Slot::Params(mlp(1.0)),
            Slot::Opt(mlp(0.5).layers[1].clone()),
            Slot::Empty,
        ];
        assert_eq!(
            pytree_std::structure(&slots).to_string(),
            "[Slot::Params(Mlp { layers: [Linear { w: *, b: * }, Linear { w: *, b: * }] }), \
             Slot::Opt(Linear { w: *, b: * }), Slot::Empty]"
        );
    }

    #[test]
    fn recursive_generic_types_beside_a_concrete_field_compile_and_walk() {
        let e = Expr::Add(
            Box::new(Expr::Var(1.0f64)),
            Box::new(Expr::Add(
                Box::new(Expr::Const(2.0)),
                Box::new(Expr::Var(3.0)),
            )),
        );
        assert_eq!(pytree_std::leaves(&e), [&1.0, &2.0, &3.0]);
        let e2 = pytree_std::map(e, |x| x * 10.0);
        assert_eq!(pytree_std::leaves(&e2), [&10.0, &20.0, &30.0]);

        let block = Block {
            params: mlp(1.0),
            inner: vec![Inner {
                norm: mlp(2.0).layers[1].clone(),
                opt: Some(mlp(3.0)),
                outer: Some(Box::new(Block {
                    params: mlp(4.0),
                    inner: vec![],
                })),
            }],
        };
        leaf_is_f32_arrays(&block);
        let (leaves, def) = pytree_std::flatten(block.clone());
        assert_eq!(leaves.len(), 4 + 2 + 4 + 4);
        assert_eq!(
            pytree_std::unflatten::<Block<Mlp>>(&def, leaves).unwrap(),
            block
        );
    }

    /// The model and Adam's state in one file, saved halfway through a run
    /// and loaded by type from the file alone: the run goes on with the
    /// bits of an uninterrupted one (the step count comes back with the
    /// TreeDef, as a static field of the state).
    #[test]
    fn a_generic_checkpoint_saves_loads_and_resumes_bit_for_bit() {
        let opt = adam(1e-2);
        let (k, steps) = (5, 12);
        let mut whole = mlp(1.0);
        let mut state = opt.init(&whole).unwrap();
        for t in 0..steps {
            let mut g = grads(&whole, t);
            opt.step(&mut whole, &mut g, &mut state).unwrap();
        }

        let dir = pytree_tests::scratch_dir("train-ckpt");
        let path = dir.join("ckpt.safetensors");
        {
            let mut params = mlp(1.0);
            let mut state = opt.init(&params).unwrap();
            for t in 0..k {
                let mut g = grads(&params, t);
                opt.step(&mut params, &mut g, &mut state).unwrap();
            }
            let ckpt = TrainCkpt {
                params,
                opt: state,
                epoch: k as u32,
            };
            checkpoint::save(&path, &ckpt).unwrap();
        }
        let names: Vec<String> = Load::new()
            .open(&path)
            .unwrap()
            .names()
            .map(String::from)
            .collect();
        assert_eq!(names[0], "params.layers.0.w");
        assert!(
            names.contains(&"opt.0.mu.layers.1.b".to_string()),
            "{names:?}"
        );
        assert!(
            names.contains(&"opt.0.nu.layers.0.w".to_string()),
            "{names:?}"
        );

        let TrainCkpt {
            mut params,
            opt: mut state,
            epoch,
        }: TrainCkpt<AdamState<Mlp>> = checkpoint::load(&path).unwrap();
        assert_eq!((epoch, state.0.count), (k as u32, k as u64));
        for t in k..steps {
            let mut g = grads(&params, t);
            opt.step(&mut params, &mut g, &mut state).unwrap();
        }
        assert_eq!(bits(&params), bits(&whole));
        assert_ne!(bits(&params), bits(&mlp(1.0)));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// What the derive cannot infer: a concrete field whose type leads back,
/// through another type, to this one with the parameter fixed (the tie's
/// projection is then a cycle, E0275). The user names the leaf type, as the
/// derive's documentation says, and the parameter's own leaf is then the
/// type's, as before issue 27.
mod mutual_recursion_with_a_bound {
    use pytree_std::PyTree;

    #[derive(PyTree, Debug, PartialEq)]
    #[pytree(bound = "S: pytree_std::PyTree<Leaf = f32>")]
    pub struct Outer<S> {
        pub s: S,
        pub inner: Option<Box<Inner>>,
    }

    #[derive(PyTree, Debug, PartialEq)]
    pub struct Inner {
        pub outers: Vec<Outer<f32>>,
        pub x: f32,
    }

    #[test]
    fn the_bound_names_the_leaf_type() {
        let o = Outer {
            s: 1.0f32,
            inner: Some(Box::new(Inner {
                outers: vec![Outer {
                    s: 2.0,
                    inner: None,
                }],
                x: 3.0,
            })),
        };
        assert_eq!(pytree_std::leaves(&o), [&1.0, &2.0, &3.0]);
    }
}

/// Generic types that compiled before issue 27 because their own bounds
/// fix the leaf type (a where-clause, a trait of the user's, an
/// associated type declared with its leaf type): the derive leaves a
/// parameter the user bounded alone (a second `Leaf = ..` would make the
/// projection ambiguous, E0284), and they still compile and walk.
mod a_where_clause_of_the_users {
    use pytree_std::PyTree;

    #[derive(PyTree, Debug, PartialEq)]
    pub struct Scaled<S>
    where
        S: PyTree<Leaf = f32>,
    {
        pub scale: f32,
        pub inner: S,
    }

    /// A trait of the user's whose supertrait fixes the leaf type.
    pub trait F32Tree: PyTree<Leaf = f32> {}
    impl<T: PyTree<Leaf = f32>> F32Tree for T {}

    #[derive(PyTree, Debug, PartialEq)]
    pub struct Inline<S: F32Tree> {
        pub scale: f32,
        pub inner: S,
    }

    /// A backend whose tensor type's leaf is fixed by the trait itself.
    pub trait Backend {
        type Tensor: PyTree<Leaf = f32>;
    }

    pub struct Cpu;
    impl Backend for Cpu {
        type Tensor = Vec<f32>;
    }

    #[derive(PyTree)]
    pub struct Layer<B: Backend> {
        pub scale: f32,
        pub w: B::Tensor,
    }

    #[test]
    fn still_compiles_and_walks() {
        let i = Inline {
            scale: 1.0,
            inner: (2.0f32,),
        };
        assert_eq!(pytree_std::leaves(&i), [&1.0, &2.0]);
        let l: Layer<Cpu> = Layer {
            scale: 1.0,
            w: vec![2.0, 3.0],
        };
        assert_eq!(pytree_std::leaves(&l), [&1.0, &2.0, &3.0]);

        let s = Scaled {
            scale: 2.0,
            inner: vec![1.0f32, 3.0],
        };
        assert_eq!(pytree_std::leaves(&s), [&2.0, &1.0, &3.0]);
        assert_eq!(
            pytree_std::map(s, |x| x + 1.0),
            Scaled {
                scale: 3.0,
                inner: vec![2.0, 4.0]
            }
        );
    }
}

/// A parameter used bare and inside another generic type (transformers'
/// `cls.predictions`: a `bias` beside a `transform` layer) needs no
/// hand-written `T: 'static` (E0310 before).
#[test]
fn a_parameter_used_bare_and_nested_needs_no_static_bound() {
    #[derive(PyTree, Clone, Debug, PartialEq)]
    struct Linear<T> {
        weight: T,
        bias: T,
    }
    #[derive(PyTree, Clone, Debug, PartialEq)]
    struct DenseNorm<T> {
        dense: Linear<T>,
        norm: Linear<T>,
    }
    #[derive(PyTree, Clone, Debug, PartialEq)]
    struct Predictions<T> {
        bias: T,
        transform: DenseNorm<T>,
    }
    let l = Linear {
        weight: 1.0f32,
        bias: 2.0,
    };
    let p = Predictions {
        bias: 0.5f32,
        transform: DenseNorm {
            dense: l.clone(),
            norm: l,
        },
    };
    assert_eq!(pytree_std::leaves(&p), [&0.5, &1.0, &2.0, &1.0, &2.0]);
    let doubled = pytree_std::map(p.clone(), |x| x * 2.0);
    assert_eq!(doubled.bias, 1.0);
}
