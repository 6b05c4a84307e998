//! Every leaf type the guide lists, against every capability the guide
//! claims for it: the table "What each leaf type supports" (docs/guide/leaves.md) is
//! read here: its rows must be [`ROWS`], and each row's test runs exactly
//! the capabilities its cells say "yes" to ([`Row::done`]). A leaf type
//! that lacks a capability its row claims does not compile here (the
//! capability's trait is the bound of its function); a row of the guide
//! this test does not run fails `the_guide_table_is_the_table_this_test_runs`,
//! a row it runs otherwise fails that row's test.
//!
//! Each row runs on two values `a`, `b` of one model type with leaves of
//! that type (same structure, other values).

use std::fmt::Debug;
use std::sync::atomic::{AtomicUsize, Ordering};

use pytree_optim::{adam, FloatLeaf, GradientTransformation};
use pytree_std::checkpoint::{self, Load, TensorLeaf};
use pytree_std::elements::Ravel;
use pytree_std::elements::{tree_equal, ApproxEq, Tolerance};
use pytree_std::ensemble::{stack_leaves, unstack_leaves, Stackable};
use pytree_std::{LeafMut, LeafRef, PyTree, Std};

mod models;

/// The capabilities, in the guide's column order.
const CAPABILITIES: [&str; 8] = [
    "flatten, map, zip",
    "summary",
    "tree_equal",
    "ravel",
    "parallel",
    "checkpoint",
    "optimizers",
    "ensembles",
];

/// The guide's rows (leaf type, feature), each run by one test below,
/// which checks the row's cells against what it ran ([`Row::done`]).
const ROWS: [(&str, &str); 11] = [
    ("`f32`, `f64`", ""),
    ("`i8` .. `i64`, `u8` .. `u64`, `bool`", ""),
    ("`i128`, `u128`, `isize`, `usize`, `char`, `String`", ""),
    ("`half::f16`, `half::bf16`", "`half`"),
    (FLOAT_ARRAYS, "`ndarray` (`f16`, `bf16`: with `half`)"),
    (
        "`ArrayD<A>`, `A` = integers of 8 to 64 bits, `bool`",
        "`ndarray`",
    ),
    (ANY_ARRAYS, "`ndarray`"),
    (MATRICES, "`nalgebra`"),
    ("`candle_core::Tensor`", "`candle`"),
    ("`candle_core::Var`", "`candle`"),
    (BURN, "`burn`"),
];
const FLOAT_ARRAYS: &str =
    "`ArrayD<A>` (every `Array<A, D>`, `ArcArray<A, D>`), `A` = `f32`, `f64`, `f16`, `bf16`";
const ANY_ARRAYS: &str = "`AnyArray` (and typed arrays in a `leaf_type = AnyArray` struct)";
const MATRICES: &str = "`DMatrix<T>` (every `DMatrix<T>`, `DVector<T>`), `T` = `f32`, `f64`";
const BURN: &str =
    "`BurnTensor` (burn's float tensors of every rank; a burn module's through `BurnModule<M>`)";

/// The guide's table as (leaf type, feature, whether it claims each
/// capability: a cell is "yes" or "— (why)").
fn guide_table() -> Vec<(String, String, Vec<bool>)> {
    let guide = include_str!("../../docs/guide/leaves.md");
    let start = guide
        .find("## What each leaf type supports")
        .expect("docs/guide/leaves.md has the table's section");
    let mut lines = guide[start..]
        .lines()
        .skip_while(|l| !l.starts_with("| leaf type |"));
    let header: Vec<String> = cells(lines.next().expect("the table's header"));
    assert_eq!(header[..2], ["leaf type", "feature"]);
    assert_eq!(header[2..], CAPABILITIES, "the guide's capability columns");
    let claimed = |leaf: &str, (cell, capability): (&String, &str)| match cell.as_str() {
        "yes" => true,
        c if c.starts_with('—') => false,
        c => panic!("{leaf}, {capability}: a cell is `yes` or `— (why)`, not `{c}`"),
    };
    lines
        .skip(1) // | --- |
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let c = cells(l);
            let flags = c[2..].iter().zip(CAPABILITIES);
            let flags = flags.map(|cell| claimed(&c[0], cell)).collect();
            (c[0].clone(), c[1].clone(), flags)
        })
        .collect()
}

fn cells(line: &str) -> Vec<String> {
    line.trim()
        .trim_start_matches('|')
        .trim_end_matches('|')
        .split('|')
        .map(|c| c.trim().to_string())
        .collect()
}

#[test]
fn the_guide_table_is_the_table_this_test_runs() {
    let guide = guide_table();
    let rows: Vec<(&str, &str)> = guide
        .iter()
        .map(|(t, f, _)| (t.as_str(), f.as_str()))
        .collect();
    assert_eq!(rows, ROWS, "the guide's leaf types");
}

/// The capabilities run for one row of [`ROWS`]; [`Row::done`] checks
/// them against the guide's row (so a row that runs more, or less, than
/// the guide says fails).
struct Row {
    leaf: &'static str,
    ran: [bool; 8],
}

impl Row {
    fn new(leaf: &'static str) -> Row {
        assert!(
            ROWS.iter().any(|(t, _)| *t == leaf),
            "no row {leaf} in ROWS"
        );
        Row {
            leaf,
            ran: [false; 8],
        }
    }

    fn ran(&mut self, capability: usize) {
        self.ran[capability] = true;
    }

    fn done(self) {
        let (_, _, claimed) = guide_table()
            .into_iter()
            .find(|(t, _, _)| *t == self.leaf)
            .unwrap_or_else(|| panic!("no row {} in the guide", self.leaf));
        for ((ran, claimed), capability) in self.ran.iter().zip(claimed).zip(CAPABILITIES) {
            assert_eq!(
                *ran,
                claimed,
                "{}, {capability}: the guide says {}, this test runs {}",
                self.leaf,
                if claimed { "yes" } else { "—" },
                if *ran { "it" } else { "nothing" }
            );
        }
    }

    /// The capabilities every leaf type has: [`Row::pytree_ops`],
    /// [`Row::summary`] (`described`: the leaves give their signature),
    /// [`Row::tree_equal`] and [`Row::parallel`].
    fn common<T: PyTree + Clone>(&mut self, a: &T, b: &T, eq: Eq<T>, described: bool)
    where
        for<'x> LeafRef<'x, Std, T::Leaf>: ApproxEq + Send,
        for<'x> LeafMut<'x, Std, T::Leaf>: Send,
    {
        self.pytree_ops(a, b, eq);
        self.summary(a, described);
        self.tree_equal(a, b);
        self.parallel(a);
    }

    /// flatten / unflatten, map, zip_mut (structure and signatures
    /// checked), paths.
    fn pytree_ops<T: PyTree + Clone>(&mut self, a: &T, b: &T, eq: Eq<T>) {
        let (leaves, def) = pytree_std::flatten(a.clone());
        let n = leaves.len();
        assert!(n > 0);
        assert!(eq(&pytree_std::unflatten::<T>(&def, leaves).unwrap(), a));
        assert!(eq(&pytree_std::map(a.clone(), |l| l), a));
        assert_eq!(pytree_std::structure(b), def);
        let mut c = b.clone();
        let mut seen = 0;
        pytree_std::zip_mut([&mut c], [a], |[_], _| seen += 1).unwrap();
        assert_eq!(seen, n);
        assert_eq!(pytree_std::paths::leaves_with_path(a).len(), n);
        self.ran(0);
    }

    /// One summary row per leaf.
    fn summary<T: PyTree>(&mut self, a: &T, described: bool) {
        let s = pytree_std::elements::summary(a);
        let leaves: Vec<_> = s.rows().iter().filter(|r| r.is_leaf).collect();
        assert_eq!(leaves.len(), pytree_std::leaves(a).len());
        assert!(leaves.iter().all(|r| r.signature.is_some() == described));
        self.ran(1);
    }

    fn tree_equal<T: PyTree + Clone>(&mut self, a: &T, b: &T)
    where
        for<'x> LeafRef<'x, Std, T::Leaf>: ApproxEq,
    {
        assert!(tree_equal(a, &a.clone(), Tolerance::EXACT));
        assert!(!tree_equal(a, b, Tolerance::EXACT));
        self.ran(2);
    }

    fn ravel<T: PyTree, A>(&mut self, a: &T, eq: Eq<T>)
    where
        T::Leaf: Ravel<A>,
    {
        let (flat, plan) = pytree_std::elements::ravel::<T, A>(a).unwrap();
        assert_eq!(flat.len(), plan.len());
        assert!(eq(&plan.unravel(&flat).unwrap(), a));
        self.ran(3);
    }

    fn parallel<T: PyTree + Clone>(&mut self, a: &T)
    where
        for<'x> LeafMut<'x, Std, T::Leaf>: Send,
        for<'x> LeafRef<'x, Std, T::Leaf>: Send,
    {
        let count = AtomicUsize::new(0);
        pytree_std::parallel::par_zip_mut([&mut a.clone()], [], |[_], []| {
            count.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
        assert_eq!(count.into_inner(), pytree_std::leaves(a).len());
        self.ran(4);
    }

    /// Saved, loaded by type, against a template, and in place into `b`.
    fn checkpoint<T: PyTree + Clone>(&mut self, a: &T, b: &T, eq: Eq<T>)
    where
        T::Leaf: TensorLeaf,
    {
        let file = Load::new()
            .from_bytes(checkpoint::Save::new().to_bytes(a).unwrap())
            .unwrap();
        assert!(eq(&file.load::<T>().unwrap().0, a));
        assert!(eq(&file.load_like(b).unwrap().0, a));
        let mut into = b.clone();
        assert!(file.load_into(&mut into).unwrap().is_complete());
        assert!(eq(&into, a));
        self.ran(5);
    }

    /// Two Adam steps from `fresh()` with the gradients `b`: the
    /// parameters move (compared with another `fresh()`: a candle tensor's
    /// clone shares its memory, and is updated with it).
    fn optimizers<T: PyTree + Clone>(&mut self, fresh: impl Fn() -> T, b: &T, eq: Eq<T>)
    where
        T::Leaf: FloatLeaf,
    {
        let opt = adam(0.1);
        let mut p = fresh();
        let mut state = opt.init(&p).unwrap();
        for _ in 0..2 {
            opt.step(&mut p, &mut b.clone(), &mut state).unwrap();
        }
        assert!(!eq(&p, &fresh()));
        self.ran(6);
    }

    fn ensembles<T: PyTree + Clone>(&mut self, a: &T, b: &T, eq: Eq<T>)
    where
        T::Leaf: Stackable,
    {
        let stacked = stack_leaves(&[a.clone(), b.clone()]).unwrap();
        let back = unstack_leaves(&stacked).unwrap();
        assert_eq!(back.len(), 2);
        assert!(eq(&back[0], a) && eq(&back[1], b));
        self.ran(7);
    }
}

type Eq<T> = fn(&T, &T) -> bool;

fn partial_eq<T: PartialEq>(a: &T, b: &T) -> bool {
    a == b
}

// ---------------------------------------------------------------------
// The rows.

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Model<W, B> {
    w: W,
    b: Vec<B>,
}

fn model<W, B>(w: W, b: B, c: B) -> Model<W, B> {
    Model { w, b: vec![b, c] }
}

/// A row of scalars `S` (from six values): every capability but the
/// optimizers and ensembles; returns the models run.
fn scalars<S>(row: &mut Row, x: [S; 6]) -> (Model<S, S>, Model<S, S>)
where
    S: Copy + Debug + PartialEq + TensorLeaf + Ravel<S>,
    Model<S, S>: PyTree<Leaf = S>,
    for<'x> LeafRef<'x, Std, S>: ApproxEq + Send,
    for<'x> LeafMut<'x, Std, S>: Send,
{
    let (a, b) = (model(x[0], x[1], x[2]), model(x[3], x[4], x[5]));
    row.common(&a, &b, partial_eq, true);
    row.ravel::<_, S>(&a, partial_eq);
    row.checkpoint(&a, &b, partial_eq);
    (a, b)
}

/// [`scalars`] and the optimizers.
fn floats<F>(row: &mut Row, x: [F; 6])
where
    F: Copy + Debug + PartialEq + TensorLeaf + FloatLeaf + Ravel<F>,
    Model<F, F>: PyTree<Leaf = F>,
    for<'x> LeafRef<'x, Std, F>: ApproxEq + Send,
    for<'x> LeafMut<'x, Std, F>: Send,
{
    let (a, b) = scalars(row, x);
    row.optimizers(|| a.clone(), &b, partial_eq);
}

#[test]
fn float_scalars() {
    let mut row = Row::new("`f32`, `f64`");
    floats::<f32>(&mut row, [1.5, -2.0, 0.25, 0.5, 3.0, -1.0]);
    floats::<f64>(&mut row, [1.5, -2.0, 0.25, 0.5, 3.0, -1.0]);
    row.done();
}

#[test]
fn integer_and_bool_scalars() {
    let mut row = Row::new("`i8` .. `i64`, `u8` .. `u64`, `bool`");
    scalars::<i8>(&mut row, [1, -2, 3, 4, 5, -6]);
    scalars::<i16>(&mut row, [1, -2, 3, 4, 5, -6]);
    scalars::<i32>(&mut row, [1, -2, 3, 4, 5, -6]);
    scalars::<i64>(&mut row, [1, -2, 3, i64::MAX, 5, -6]);
    scalars::<u8>(&mut row, [1, 2, 3, 4, 5, 6]);
    scalars::<u16>(&mut row, [1, 2, 3, 4, 5, 6]);
    scalars::<u32>(&mut row, [1, 2, 3, 4, 5, 6]);
    scalars::<u64>(&mut row, [1, 2, 3, u64::MAX, 5, 6]);
    scalars::<bool>(&mut row, [true, false, true, false, true, false]);
    row.done();
}

#[test]
fn other_primitives() {
    fn run<P>(row: &mut Row, [a0, a1, a2, b0, b1, b2]: [P; 6])
    where
        P: Clone + Debug + PartialEq + pytree_std::Leaf<Std>,
        Model<P, P>: PyTree<Leaf = P>,
        for<'x> LeafRef<'x, Std, P>: ApproxEq + Send,
        for<'x> LeafMut<'x, Std, P>: Send,
    {
        // Listed in the summary, without a dtype (the format has none).
        row.common(&model(a0, a1, a2), &model(b0, b1, b2), partial_eq, false);
    }
    let mut row = Row::new("`i128`, `u128`, `isize`, `usize`, `char`, `String`");
    run::<i128>(&mut row, [1, -2, 3, i128::MAX, 5, 6]);
    run::<u128>(&mut row, [1, 2, 3, u128::MAX, 5, 6]);
    run::<isize>(&mut row, [1, -2, 3, 4, 5, 6]);
    run::<usize>(&mut row, [1, 2, 3, 4, 5, 6]);
    run::<char>(&mut row, ['a', 'b', 'c', 'd', 'e', 'f']);
    let s = |x: &str| x.to_string();
    run::<String>(&mut row, [s("a"), s("b"), s("c"), s("d"), s("e"), s("f")]);
    row.done();
}

#[test]
fn half_floats() {
    use pytree_std::half::{bf16, f16};
    let mut row = Row::new("`half::f16`, `half::bf16`");
    let x = [1.5, -2.0, 0.25, 0.5, 3.0, -1.0];
    floats(&mut row, x.map(f16::from_f32));
    floats(&mut row, x.map(bf16::from_f32));
    row.done();
}

mod arrays {
    use pytree_std::half::{bf16, f16};
    use pytree_std::ndarray::{Array1, Array2, ArrayD, IxDyn};

    use super::*;

    /// Fixed-rank fields for everything but ensembles, whose stacked
    /// leaves gain an axis (`ArrayD` fields take it).
    /// A model of typed fields and one of `ArrayD` fields.
    type Pair<A> = (Model<Array2<A>, Array1<A>>, Model<ArrayD<A>, ArrayD<A>>);

    fn samples<A: Clone>(x: [A; 6]) -> [Pair<A>; 2] {
        let one = |o: usize| {
            let w = Array2::from_shape_vec((1, 2), vec![x[o].clone(), x[o + 1].clone()]).unwrap();
            let b = Array1::from_vec(vec![x[o + 2].clone()]);
            let typed = model(w.clone(), b.clone(), b.clone());
            let dynamic = model(w.into_dyn(), b.clone().into_dyn(), b.into_dyn());
            (typed, dynamic)
        };
        [one(0), one(3)]
    }

    /// Every capability but the optimizers, for arrays of `$a` (a macro:
    /// the bounds of a generic function over the views' projections do
    /// not normalize).
    macro_rules! arrays {
        ($row:expr, $a:ty, $x:expr) => {{
            let [(a, ea), (b, eb)] = samples::<$a>($x);
            $row.common(&a, &b, partial_eq, true);
            $row.ravel::<_, $a>(&a, partial_eq);
            $row.checkpoint(&a, &b, partial_eq);
            $row.ensembles(&ea, &eb, partial_eq);
            (a, b)
        }};
    }

    #[test]
    fn float_arrays() {
        let mut row = Row::new(FLOAT_ARRAYS);
        let x = [1.5, -2.0, 0.25, 0.5, 3.0, -1.0];
        let (a, b) = arrays!(row, f32, x);
        row.optimizers(|| a.clone(), &b, partial_eq);
        let (a, b) = arrays!(row, f64, x.map(f64::from));
        row.optimizers(|| a.clone(), &b, partial_eq);
        let (a, b) = arrays!(row, f16, x.map(f16::from_f32));
        row.optimizers(|| a.clone(), &b, partial_eq);
        let (a, b) = arrays!(row, bf16, x.map(bf16::from_f32));
        row.optimizers(|| a.clone(), &b, partial_eq);
        // An ArcArray field has the same leaf type.
        let arc = |v: f32| {
            model(
                Array1::from_elem(2, v).into_shared(),
                Array1::from_elem(1, v),
                Array1::from_elem(1, v),
            )
        };
        row.checkpoint(&arc(1.0), &arc(2.0), partial_eq);
        row.optimizers(|| arc(1.0), &arc(2.0), partial_eq);
        row.done();
    }

    #[test]
    fn integer_and_bool_arrays() {
        let mut row = Row::new("`ArrayD<A>`, `A` = integers of 8 to 64 bits, `bool`");
        arrays!(row, i8, [1, -2, 3, 4, 5, -6]);
        arrays!(row, i16, [1, -2, 3, 4, 5, -6]);
        arrays!(row, i32, [1, -2, 3, 4, 5, -6]);
        arrays!(row, i64, [1, -2, 3, i64::MIN, 5, -6]);
        arrays!(row, u8, [1, 2, 3, 4, 5, 6]);
        arrays!(row, u16, [1, 2, 3, 4, 5, 6]);
        arrays!(row, u32, [1, 2, 3, 4, 5, 6]);
        arrays!(row, u64, [1, 2, 3, u64::MAX, 5, 6]);
        arrays!(row, bool, [true, false, true, false, true, false]);
        row.done();
    }

    /// A typed model with an i64 buffer (its leaves are `AnyArray`s), and
    /// `AnyArray` fields; `ArrayD` fields for the ensemble.
    #[derive(PyTree, Clone, Debug, PartialEq)]
    #[pytree(leaf_type = pytree_std::AnyArray)]
    struct Typed<W, I> {
        w: W,
        ids: I,
        any: pytree_std::AnyArray,
    }

    #[test]
    fn any_arrays() {
        use pytree_std::AnyArray;
        let typed = |s: f32| Typed {
            w: Array2::from_elem((2, 3), s),
            ids: Array1::from_vec(vec![0i64, 7]),
            any: AnyArray::from(Array1::from_elem(2, f16::from_f32(s))),
        };
        let dynamic = |s: f32| Typed {
            w: ArrayD::from_elem(IxDyn(&[2, 3]), s),
            ids: ArrayD::from_elem(IxDyn(&[2]), 7i64),
            any: AnyArray::from(Array1::from_elem(2, s > 1.0)),
        };
        let (a, b) = (typed(1.5), typed(-0.5));
        let mut row = Row::new(ANY_ARRAYS);
        row.common(&a, &b, partial_eq, true);
        row.ravel::<_, f64>(&a, partial_eq);
        row.ravel::<_, f32>(&a, partial_eq);
        row.checkpoint(&a, &b, partial_eq);
        row.optimizers(|| a.clone(), &b, partial_eq);
        row.ensembles(&dynamic(1.5), &dynamic(0.5), partial_eq);
        row.done();
    }
}

mod matrices {
    use pytree_std::nalgebra::{DMatrix, DVector};

    use super::*;

    macro_rules! matrices {
        ($row:expr, $t:ty, $x:expr) => {{
            let x: [$t; 6] = $x;
            let one = |o: usize| {
                model(
                    DMatrix::from_row_slice(1, 2, &x[o..o + 2]),
                    DVector::from_element(2, x[o + 2]),
                    DVector::from_element(1, x[o]),
                )
            };
            let (a, b) = (one(0), one(3));
            $row.common(&a, &b, partial_eq, true);
            $row.ravel::<_, $t>(&a, partial_eq);
            $row.checkpoint(&a, &b, partial_eq);
            $row.optimizers(|| a.clone(), &b, partial_eq);
        }};
    }

    #[test]
    fn float_matrices() {
        let mut row = Row::new(MATRICES);
        let x = [1.5, -2.0, 0.25, 0.5, 3.0, -1.0];
        matrices!(row, f32, x);
        matrices!(row, f64, x.map(f64::from));
        row.done();
    }
}

mod tensors {
    use pytree_std::candle_core::{DType, Device, Tensor, Var};

    use super::*;
    use crate::models::tensor_values as values;

    fn same_tensors(a: &Model<Tensor, Tensor>, b: &Model<Tensor, Tensor>) -> bool {
        let (x, y) = (pytree_std::leaves(a), pytree_std::leaves(b));
        x.len() == y.len()
            && x.iter().zip(&y).all(|(p, q)| {
                p.dims() == q.dims() && p.dtype() == q.dtype() && values(p) == values(q)
            })
    }

    fn tensor(v: &[f32], dtype: DType) -> Tensor {
        Tensor::new(v, &Device::Cpu)
            .unwrap()
            .to_dtype(dtype)
            .unwrap()
    }

    fn tensor_model(s: f32, dtype: DType) -> Model<Tensor, Tensor> {
        model(
            tensor(&[s, 2.0 * s], dtype),
            tensor(&[s], dtype),
            tensor(&[-s], dtype),
        )
    }

    #[test]
    fn candle_tensors() {
        let mut row = Row::new("`candle_core::Tensor`");
        for dtype in [DType::F32, DType::F64, DType::F16, DType::BF16] {
            let (a, b) = (tensor_model(1.5, dtype), tensor_model(-0.5, dtype));
            row.common(&a, &b, same_tensors, true);
            if dtype == DType::F32 {
                row.ravel::<_, f32>(&a, same_tensors);
            }
            row.checkpoint(&a, &b, same_tensors);
            row.optimizers(|| tensor_model(1.5, dtype), &b, same_tensors);
            row.ensembles(&a, &b, same_tensors);
        }
        row.done();
    }

    fn var_model(s: f32) -> Model<Var, Var> {
        let var = |v: &[f32]| Var::new(v, &Device::Cpu).unwrap();
        model(var(&[s, 2.0 * s]), var(&[s]), var(&[-s]))
    }

    fn same_vars(a: &Model<Var, Var>, b: &Model<Var, Var>) -> bool {
        let (x, y) = (pytree_std::leaves(a), pytree_std::leaves(b));
        x.len() == y.len()
            && x.iter()
                .zip(&y)
                .all(|(p, q)| values(p.as_tensor()) == values(q.as_tensor()))
    }

    #[test]
    fn candle_vars() {
        let mut row = Row::new("`candle_core::Var`");
        let (a, b) = (var_model(1.5), var_model(-0.5));
        row.common(&a, &b, same_vars, true);
        row.ravel::<_, f32>(&a, same_vars);
        // Loads into fresh variables: `a` is written in place by none of them.
        row.checkpoint(&a, &var_model(-0.5), same_vars);
        row.optimizers(|| var_model(1.5), &b, same_vars);
        row.ensembles(&a, &b, same_vars);
        row.done();
    }
}

mod burn_tensors {
    use burn::tensor::{DType, Device, Tensor, TensorData};
    use pytree_std::BurnTensor;

    use super::*;

    fn tensor(v: &[f32], dtype: DType) -> BurnTensor {
        let data = TensorData::new(v.to_vec(), [v.len()]);
        BurnTensor::new(Tensor::<1>::from_data(data, (&Device::default(), dtype)))
    }

    fn burn_model(s: f32, dtype: DType) -> Model<BurnTensor, BurnTensor> {
        model(
            tensor(&[s, 2.0 * s], dtype),
            tensor(&[s], dtype),
            tensor(&[-s], dtype),
        )
    }

    fn same(a: &Model<BurnTensor, BurnTensor>, b: &Model<BurnTensor, BurnTensor>) -> bool {
        tree_equal(a, b, Tolerance::EXACT)
            && pytree_std::leaves(a)
                .iter()
                .zip(pytree_std::leaves(b))
                .all(|(x, y)| x.dtype() == y.dtype())
    }

    /// The dtypes burn-flex holds (a burn module's parameters of any rank
    /// are the same leaves: tests/burn_modules.rs).
    #[test]
    fn burn_float_tensors() {
        let mut row = Row::new(BURN);
        for dtype in [DType::F32, DType::F16, DType::BF16] {
            let (a, b) = (burn_model(1.5, dtype), burn_model(-0.5, dtype));
            row.common(&a, &b, same, true);
            row.ravel::<_, f32>(&a, same);
            row.checkpoint(&a, &b, same);
            row.optimizers(|| burn_model(1.5, dtype), &b, same);
            row.ensembles(&a, &b, same);
        }
        row.done();
    }
}
