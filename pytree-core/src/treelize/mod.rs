//! [`Treelize`]: turns a plain function of leaves into a function of trees
//! (treevalue's `func_treelize`). The trees are lined up on their TreeDefs
//! (the mode decides for map keys and options that differ; `inherit` lets a
//! plain leaf stand for a whole subtree), the function runs once per leaf
//! of the merged structure, and the results are rebuilt into the output
//! type. Trees of different types and leaf types mix, and so do plain
//! values: a plain value is a tree of one leaf.

pub mod mode;

use core::marker::PhantomData;

use alloc::vec::Vec;

use crate::error::signature_mismatch_error;
use crate::error::Error;
use crate::leaf::{Leaf, LeafRef};
use crate::ops::graft::graft;
use crate::ops::{leaves, structure, unflatten};
use crate::signature::Signature;
use crate::traits::flatten::{Flatten, Unflatten};
use crate::treedef::{align, Alignment, Arg, Inherit, Policy, TreeDef};
use crate::treelize::mode::{
    Accepts, MissingValue, MissingWith, NoMissing, Provide, Strict, TreelizeMode,
};

/// A function of leaves, applied to trees (treevalue's `func_treelize`).
///
/// Builder style: `Treelize::new(f)`, then optionally
/// [`mode`](Treelize::mode) (strict by default), [`missing`](Treelize::missing)
/// or [`missing_with`](Treelize::missing_with) (outer and left modes only:
/// anything else does not compile), [`inherit`](Treelize::inherit) (on by
/// default); then [`call1`](Treelize::call1), [`call2`](Treelize::call2) or
/// [`call3`](Treelize::call3) for trees of any types, or, for any number
/// of trees of one type, [`call_n`](Treelize::call_n) (an array; `f` gets
/// an array of leaves) or [`call_many`](Treelize::call_many) (a list; `f`
/// gets a slice). `f` takes the leaves by reference
/// ([`LeafRef`]: `&L`, or a view for arrays); what it returns becomes a
/// leaf of the result, or a subtree if it is one. Array leaves that one
/// call receives must have the same shape (a scalar goes with any): a
/// mismatch is an error at its path, before `f` sees it.
///
/// ```
/// use std::collections::BTreeMap;
/// use pytree_std::{treelize::{mode, Treelize}};
/// fn gcd(mut a: u64, mut b: u64) -> u64 { while b != 0 { (a, b) = (b, a % b) } a }
/// let t1 = BTreeMap::from([("a", 2u64), ("b", 30)]);
/// let t2 = BTreeMap::from([("a", 4u64), ("c", 48)]);
/// let mut tgcd = Treelize::new(|a: &u64, b: &u64| gcd(*a, *b)).mode(mode::Outer).missing(1);
/// let r: BTreeMap<&str, u64> = tgcd.call2(&t1, &t2)?;
/// assert_eq!(r, BTreeMap::from([("a", 2), ("b", 1), ("c", 1)]));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub struct Treelize<Ns, F, M = Strict, P = NoMissing> {
    f: F,
    mode: M,
    missing: P,
    inherit: bool,
    ns: PhantomData<fn() -> Ns>,
}

impl<Ns, F> Treelize<Ns, F> {
    /// `f` applied leaf by leaf, in strict mode, with `inherit` on.
    ///
    /// ```
    /// let mut double = pytree_std::treelize::Treelize::new(|x: &i32| x * 2);
    /// let t: Vec<i32> = double.call1(&vec![1, 2])?;
    /// assert_eq!(t, [2, 4]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn new(f: F) -> Self {
        Treelize {
            f,
            mode: Strict,
            missing: NoMissing,
            inherit: true,
            ns: PhantomData,
        }
    }
}

impl<Ns, F, M, P> Treelize<Ns, F, M, P> {
    /// Sets the mode: `mode::Strict`, `mode::Inner`, `mode::Outer` or
    /// `mode::Left`. A mode that cannot use the `missing` already given
    /// does not compile.
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use pytree_std::{treelize::{mode, Treelize}};
    /// let mut add = Treelize::new(|a: &i32, b: &i32| a + b).mode(mode::Inner);
    /// let r: BTreeMap<&str, i32> = add.call2(&BTreeMap::from([("a", 1), ("b", 2)]), &BTreeMap::from([("b", 10)]))?;
    /// assert_eq!(r, BTreeMap::from([("b", 12)]));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn mode<M2>(self, mode: M2) -> Treelize<Ns, F, M2, P>
    where
        M2: TreelizeMode + Accepts<P>,
    {
        Treelize {
            f: self.f,
            mode,
            missing: self.missing,
            inherit: self.inherit,
            ns: PhantomData,
        }
    }

    /// The same with `missing` for the slots no input holds (the bound on
    /// the mode is the caller's).
    fn with_missing<P2>(self, missing: P2) -> Treelize<Ns, F, M, P2> {
        Treelize {
            f: self.f,
            mode: self.mode,
            missing,
            inherit: self.inherit,
            ns: PhantomData,
        }
    }

    /// Turns inheritance on (the default) or off. On, a plain leaf where
    /// another tree has a subtree applies to every leaf of that subtree
    /// (treevalue's `gcd(100, t1)`); off, that is an error.
    ///
    /// ```
    /// let mut add = pytree_std::treelize::Treelize::new(|a: &i32, b: &i32| a + b);
    /// let r: Vec<i32> = add.call2(&100, &vec![1, 2])?;
    /// assert_eq!(r, [101, 102]);
    /// let mut strict = pytree_std::treelize::Treelize::new(|a: &i32, b: &i32| a + b).inherit(false);
    /// let err = strict.call2::<_, _, _, Vec<i32>>(&100, &vec![1, 2]).unwrap_err();
    /// assert_eq!(err.to_string(), "tree 1 at <root>: node mismatch: expected a leaf, found a sequence of length 2");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn inherit(mut self, on: bool) -> Self {
        self.inherit = on;
        self
    }

    /// The value for every slot a tree lacks (cloned per slot). Only in
    /// the outer and left modes: in strict or inner mode this does not
    /// compile. The value fills slots of every tree argument, so the
    /// arguments' leaf types must all be its type (for trees of different
    /// leaf types, leave `missing` out: a lacking slot is then an error).
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use pytree_std::{treelize::{mode, Treelize}};
    /// let mut add = Treelize::new(|a: &i32, b: &i32| a + b).mode(mode::Left).missing(0);
    /// let r: BTreeMap<&str, i32> = add.call2(&BTreeMap::from([("a", 1), ("b", 2)]), &BTreeMap::from([("b", 10), ("c", 5)]))?;
    /// assert_eq!(r, BTreeMap::from([("a", 1), ("b", 12)]));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    ///
    /// ```compile_fail
    /// // `missing` in strict mode is a compile error.
    /// let _ = pytree_std::treelize::Treelize::new(|a: &i32, b: &i32| a + b).missing(0);
    /// ```
    pub fn missing<L>(self, value: L) -> Treelize<Ns, F, M, MissingValue<L>>
    where
        M: Accepts<MissingValue<L>>,
    {
        self.with_missing(MissingValue(value))
    }

    /// A generator called once per slot a tree lacks, so each slot gets a
    /// fresh value. Only in the outer and left modes.
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use pytree_std::{treelize::{mode, Treelize}};
    /// let mut calls = 0;
    /// let mut join = Treelize::new(|a: &String, b: &String| format!("{a}{b}"))
    ///     .mode(mode::Outer)
    ///     .missing_with(|| { calls += 1; format!("<{calls}>") });
    /// let t1 = BTreeMap::from([("a", String::from("x"))]);
    /// let t2 = BTreeMap::from([("b", String::from("y"))]);
    /// let r: BTreeMap<&str, String> = join.call2(&t1, &t2)?;
    /// assert_eq!(r, BTreeMap::from([("a", "x<1>".to_string()), ("b", "<2>y".to_string())]));
    /// assert_eq!(calls, 2);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn missing_with<G>(self, generate: G) -> Treelize<Ns, F, M, MissingWith<G>>
    where
        M: Accepts<MissingWith<G>>,
    {
        self.with_missing(MissingWith(generate))
    }
}

/// The argument of one input for one leaf of the result: a leaf of the
/// tree, or the next of the values provided for the slots it lacks.
fn pick<R: Clone>(arg: Arg, leaves: &[R], missing: &[R], next: &mut usize) -> Result<R, Error> {
    match arg {
        Arg::Leaf(i) => leaves
            .get(i)
            .cloned()
            .ok_or_else(|| Error::custom("a leaf index past the end of the tree")),
        Arg::Missing => {
            let value = missing.get(*next).cloned();
            *next += 1;
            value.ok_or_else(|| Error::custom("a slot is missing and no `missing` value was given"))
        }
    }
}

/// Provides one value for an input's slot if the input lacks it.
fn provide<L, P: Provide<L>>(arg: Arg, missing: &mut P, out: &mut Vec<L>) {
    if let Arg::Missing = arg {
        if let Some(value) = missing.provide() {
            out.push(value);
        }
    }
}

/// The signature of a leaf taken from a tree, for leaf types with shapes
/// (a `missing` value is not checked).
#[inline]
fn shape_of<Ns, L: Leaf<Ns>>(arg: Arg, leaf: &L::Ref<'_>) -> Option<Signature> {
    match arg {
        Arg::Leaf(_) if L::HAS_SHAPE => L::signature(leaf),
        _ => None,
    }
}

/// Fails when the leaves of one call have different shapes (see
/// [`check_call_shapes`]), naming the result's leaf `row` and the input.
#[inline]
fn check_row(def: &TreeDef, row: usize, sigs: &[Option<Signature>]) -> Result<(), Error> {
    if sigs.iter().all(Option::is_none) {
        return Ok(());
    }
    check_call_shapes(sigs).map_err(|(tree, err)| shape_error(def, row, tree, err))
}

#[cold]
fn shape_error(def: &TreeDef, row: usize, tree: usize, mut err: Error) -> Error {
    if let Some(path) = def.leaf_path(row) {
        err = err.under(&path);
    }
    err.in_tree(tree)
}

impl<Ns, F, M: TreelizeMode, P> Treelize<Ns, F, M, P> {
    fn plan(&self, defs: &[&TreeDef], fill: bool) -> Result<Alignment, Error> {
        let policy = Policy {
            mode: M::MODE,
            inherit: if self.inherit {
                Inherit::Everybody
            } else {
                Inherit::Nobody
            },
            all_errors: true,
            fill,
            spans: false,
            args: true,
            def: true,
        };
        align(defs, policy).map_err(Error::from_mismatches)
    }

    /// Applies `f` to one tree (or a plain value).
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// let mut half = pytree_std::treelize::Treelize::new(|x: &i32| if x % 2 == 0 { Some(x / 2) } else { None });
    /// // `f` returns a subtree (an Option): it takes the place of the leaf.
    /// let r: BTreeMap<&str, Option<i32>> = half.call1(&BTreeMap::from([("a", 4), ("b", 3)]))?;
    /// assert_eq!(r, BTreeMap::from([("a", Some(2)), ("b", None)]));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn call1<A, V, U>(&mut self, a: &A) -> Result<U, Error>
    where
        A: Flatten<Ns>,
        F: for<'x> FnMut(LeafRef<'x, Ns, A::Leaf>) -> V,
        V: Flatten<Ns>,
        U: Unflatten<Ns, Leaf = V::Leaf>,
        P: Provide<A::Leaf>,
    {
        let da = structure::<Ns, A>(a);
        let plan = self.plan(&[&da], <P as Provide<A::Leaf>>::GIVEN)?;
        // Values for the slots a tree lacks, provided first (in the order
        // of the calls), so that they are lent like the trees' own leaves.
        let mut ma = Vec::<A::Leaf>::new();
        for row in plan.rows() {
            provide(row[0], &mut self.missing, &mut ma);
        }
        let la = leaves::<Ns, A>(a);
        let ma: Vec<_> = ma.iter().map(Leaf::lend).collect();
        let mut na = 0;
        let mut out = Vec::with_capacity(plan.def.num_leaves());
        for row in plan.rows() {
            let x = pick(row[0], &la, &ma, &mut na)?;
            out.push((self.f)(x));
        }
        let (leaves, def) = graft::<Ns, V>(&plan.def, out)?;
        unflatten::<Ns, U, _>(&def, leaves)
    }

    /// Applies `f` to two trees (or plain values), lined up per the mode.
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// let mut sub = pytree_std::treelize::Treelize::new(|a: &f32, b: &f32| a - b);
    /// let r: BTreeMap<&str, f32> = sub.call2(&BTreeMap::from([("w", 3.0f32)]), &BTreeMap::from([("w", 1.0f32)]))?;
    /// assert_eq!(r["w"], 2.0);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn call2<A, B, V, U>(&mut self, a: &A, b: &B) -> Result<U, Error>
    where
        A: Flatten<Ns>,
        B: Flatten<Ns>,
        F: for<'x> FnMut(LeafRef<'x, Ns, A::Leaf>, LeafRef<'x, Ns, B::Leaf>) -> V,
        V: Flatten<Ns>,
        U: Unflatten<Ns, Leaf = V::Leaf>,
        P: Provide<A::Leaf> + Provide<B::Leaf>,
    {
        let (da, db) = (structure::<Ns, A>(a), structure::<Ns, B>(b));
        let fill = <P as Provide<A::Leaf>>::GIVEN && <P as Provide<B::Leaf>>::GIVEN;
        let plan = self.plan(&[&da, &db], fill)?;
        let (mut ma, mut mb) = (Vec::<A::Leaf>::new(), Vec::<B::Leaf>::new());
        for row in plan.rows() {
            provide(row[0], &mut self.missing, &mut ma);
            provide(row[1], &mut self.missing, &mut mb);
        }
        let (la, lb) = (leaves::<Ns, A>(a), leaves::<Ns, B>(b));
        let ma: Vec<_> = ma.iter().map(Leaf::lend).collect();
        let mb: Vec<_> = mb.iter().map(Leaf::lend).collect();
        let (mut na, mut nb) = (0, 0);
        let mut out = Vec::with_capacity(plan.def.num_leaves());
        for (r, row) in plan.rows().enumerate() {
            let x = pick(row[0], &la, &ma, &mut na)?;
            let y = pick(row[1], &lb, &mb, &mut nb)?;
            if A::Leaf::HAS_SHAPE || B::Leaf::HAS_SHAPE {
                let sigs = [
                    shape_of::<Ns, A::Leaf>(row[0], &x),
                    shape_of::<Ns, B::Leaf>(row[1], &y),
                ];
                check_row(&plan.def, r, &sigs)?;
            }
            out.push((self.f)(x, y));
        }
        let (leaves, def) = graft::<Ns, V>(&plan.def, out)?;
        unflatten::<Ns, U, _>(&def, leaves)
    }

    /// The rows of a call over trees of one type: for each leaf of the
    /// merged structure, the leaf (or missing value) of each tree, shapes
    /// checked; `each` turns a row into the value of that leaf.
    fn rows_of_one_type<A, V, U>(
        &mut self,
        trees: &[&A],
        mut each: impl FnMut(&mut F, &[LeafRef<'_, Ns, A::Leaf>]) -> Result<V, Error>,
    ) -> Result<U, Error>
    where
        A: Flatten<Ns>,
        V: Flatten<Ns>,
        U: Unflatten<Ns, Leaf = V::Leaf>,
        P: Provide<A::Leaf>,
    {
        if trees.is_empty() {
            return Err(Error::custom(
                "a treelized function needs at least one tree: the result's structure is unknown",
            ));
        }
        let defs: Vec<TreeDef> = trees.iter().map(|t| structure::<Ns, A>(*t)).collect();
        let refs: Vec<&TreeDef> = defs.iter().collect();
        let plan = self.plan(&refs, <P as Provide<A::Leaf>>::GIVEN)?;
        let width = trees.len();
        // Values for the slots each tree lacks, provided first (in the
        // order of the calls), so that they are lent like the trees' own.
        let mut missing: Vec<Vec<A::Leaf>> = (0..width).map(|_| Vec::new()).collect();
        for row in plan.rows() {
            for (arg, out) in row.iter().zip(missing.iter_mut()) {
                provide(*arg, &mut self.missing, out);
            }
        }
        let lent: Vec<Vec<LeafRef<'_, Ns, A::Leaf>>> =
            trees.iter().map(|t| leaves::<Ns, A>(*t)).collect();
        let missing: Vec<Vec<LeafRef<'_, Ns, A::Leaf>>> = missing
            .iter()
            .map(|m| m.iter().map(Leaf::lend).collect())
            .collect();
        let mut next = alloc::vec![0usize; width];
        let mut args: Vec<LeafRef<'_, Ns, A::Leaf>> = Vec::with_capacity(width);
        let mut sigs: Vec<Option<Signature>> = Vec::new();
        let mut out = Vec::with_capacity(plan.def.num_leaves());
        for (r, row) in plan.rows().enumerate() {
            args.clear();
            for (k, arg) in row.iter().enumerate() {
                args.push(pick(*arg, &lent[k], &missing[k], &mut next[k])?);
            }
            if A::Leaf::HAS_SHAPE {
                sigs.clear();
                sigs.extend(
                    row.iter()
                        .zip(&args)
                        .map(|(arg, x)| shape_of::<Ns, A::Leaf>(*arg, x)),
                );
                check_row(&plan.def, r, &sigs)?;
            }
            out.push(each(&mut self.f, &args)?);
        }
        let (leaves, def) = graft::<Ns, V>(&plan.def, out)?;
        unflatten::<Ns, U, _>(&def, leaves)
    }

    /// Applies `f` to `N` trees of one type (or plain values) at once,
    /// lined up per the mode: `f` gets an array of `N` leaves (optree's
    /// `tree_broadcast_map(f, *trees)`, treevalue's functions of any
    /// number of trees). At least one tree is needed (its structure is
    /// the result's).
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use pytree_std::treelize::Treelize;
    /// let mut mean = Treelize::new(|xs: [&f64; 3]| xs.iter().copied().sum::<f64>() / 3.0);
    /// let r: BTreeMap<&str, f64> = mean.call_n([
    ///     &BTreeMap::from([("a", 1.0), ("b", 3.0)]),
    ///     &BTreeMap::from([("a", 2.0), ("b", 3.0)]),
    ///     &BTreeMap::from([("a", 6.0), ("b", 3.0)]),
    /// ])?;
    /// assert_eq!(r, BTreeMap::from([("a", 3.0), ("b", 3.0)]));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn call_n<A, V, U, const N: usize>(&mut self, trees: [&A; N]) -> Result<U, Error>
    where
        A: Flatten<Ns>,
        F: for<'x> FnMut([LeafRef<'x, Ns, A::Leaf>; N]) -> V,
        V: Flatten<Ns>,
        U: Unflatten<Ns, Leaf = V::Leaf>,
        P: Provide<A::Leaf>,
    {
        self.rows_of_one_type::<A, V, U>(&trees, |f, args| {
            let args = crate::traits::flatten::defaults::all_some(core::array::from_fn(|k| {
                args.get(k).cloned()
            }))
            .ok_or_else(|| Error::custom("a row of the plan has too few arguments"))?;
            Ok(f(args))
        })
    }

    /// Applies `f` to any number of trees of one type (or plain values),
    /// lined up per the mode: `f` gets a slice with one leaf per tree, in
    /// the trees' order (optree's `tree_broadcast_map(f, *trees)` for a
    /// list of trees known at run time). At least one tree is needed (its
    /// structure is the result's): none is an error.
    ///
    /// ```
    /// use pytree_std::{treelize::mode, tree, Tree, treelize::Treelize};
    /// let runs: Vec<Tree<f64>> = vec![
    ///     tree! { "loss" => 1.0, "acc" => 0.5 },
    ///     tree! { "acc" => 0.75, "loss" => 0.5 },
    ///     tree! { "loss" => 0.0, "lr" => 0.25 },
    /// ];
    /// // The mean of every metric over the runs that report it (NaN where
    /// // a run lacks it).
    /// let mut mean = Treelize::new(|xs: &[&f64]| {
    ///     let seen: Vec<f64> = xs.iter().map(|x| **x).filter(|x| !x.is_nan()).collect();
    ///     seen.iter().sum::<f64>() / seen.len() as f64
    /// })
    /// .mode(mode::Outer)
    /// .missing(f64::NAN);
    /// let r: Tree<f64> = mean.call_many(&runs)?;
    /// assert_eq!(format!("{r:?}"), r#"{"loss": 0.5, "acc": 0.625, "lr": 0.25}"#);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn call_many<'t, A, V, U>(
        &mut self,
        trees: impl IntoIterator<Item = &'t A>,
    ) -> Result<U, Error>
    where
        A: Flatten<Ns> + 't,
        F: for<'x> FnMut(&[LeafRef<'x, Ns, A::Leaf>]) -> V,
        V: Flatten<Ns>,
        U: Unflatten<Ns, Leaf = V::Leaf>,
        P: Provide<A::Leaf>,
    {
        let trees: Vec<&A> = trees.into_iter().collect();
        self.rows_of_one_type::<A, V, U>(&trees, |f, args| Ok(f(args)))
    }

    /// Applies `f` to three trees (or plain values), lined up per the mode.
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use pytree_std::{treelize::{mode, Treelize}};
    /// let mut total = Treelize::new(|a: &i32, b: &i32, c: &i32| a + b + c).mode(mode::Outer).missing(0);
    /// let r: BTreeMap<&str, i32> = total.call3(
    ///     &BTreeMap::from([("a", 1)]),
    ///     &BTreeMap::from([("a", 10), ("b", 20)]),
    ///     &BTreeMap::from([("c", 300)]),
    /// )?;
    /// assert_eq!(r, BTreeMap::from([("a", 11), ("b", 20), ("c", 300)]));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn call3<A, B, C, V, U>(&mut self, a: &A, b: &B, c: &C) -> Result<U, Error>
    where
        A: Flatten<Ns>,
        B: Flatten<Ns>,
        C: Flatten<Ns>,
        F: for<'x> FnMut(
            LeafRef<'x, Ns, A::Leaf>,
            LeafRef<'x, Ns, B::Leaf>,
            LeafRef<'x, Ns, C::Leaf>,
        ) -> V,
        V: Flatten<Ns>,
        U: Unflatten<Ns, Leaf = V::Leaf>,
        P: Provide<A::Leaf> + Provide<B::Leaf> + Provide<C::Leaf>,
    {
        let (da, db, dc) = (
            structure::<Ns, A>(a),
            structure::<Ns, B>(b),
            structure::<Ns, C>(c),
        );
        let fill = <P as Provide<A::Leaf>>::GIVEN
            && <P as Provide<B::Leaf>>::GIVEN
            && <P as Provide<C::Leaf>>::GIVEN;
        let plan = self.plan(&[&da, &db, &dc], fill)?;
        let (mut ma, mut mb, mut mc) = (
            Vec::<A::Leaf>::new(),
            Vec::<B::Leaf>::new(),
            Vec::<C::Leaf>::new(),
        );
        for row in plan.rows() {
            provide(row[0], &mut self.missing, &mut ma);
            provide(row[1], &mut self.missing, &mut mb);
            provide(row[2], &mut self.missing, &mut mc);
        }
        let (la, lb, lc) = (leaves::<Ns, A>(a), leaves::<Ns, B>(b), leaves::<Ns, C>(c));
        let ma: Vec<_> = ma.iter().map(Leaf::lend).collect();
        let mb: Vec<_> = mb.iter().map(Leaf::lend).collect();
        let mc: Vec<_> = mc.iter().map(Leaf::lend).collect();
        let (mut na, mut nb, mut nc) = (0, 0, 0);
        let mut out = Vec::with_capacity(plan.def.num_leaves());
        for (r, row) in plan.rows().enumerate() {
            let x = pick(row[0], &la, &ma, &mut na)?;
            let y = pick(row[1], &lb, &mb, &mut nb)?;
            let z = pick(row[2], &lc, &mc, &mut nc)?;
            if A::Leaf::HAS_SHAPE || B::Leaf::HAS_SHAPE || C::Leaf::HAS_SHAPE {
                let sigs = [
                    shape_of::<Ns, A::Leaf>(row[0], &x),
                    shape_of::<Ns, B::Leaf>(row[1], &y),
                    shape_of::<Ns, C::Leaf>(row[2], &z),
                ];
                check_row(&plan.def, r, &sigs)?;
            }
            out.push((self.f)(x, y, z));
        }
        let (leaves, def) = graft::<Ns, V>(&plan.def, out)?;
        unflatten::<Ns, U, _>(&def, leaves)
    }
}

/// For the leaves that one function call receives from several trees
/// (`Treelize`): every leaf with a shape (not a scalar, not a leaf that
/// says nothing) must have the same shape; element types may differ, and
/// a scalar goes with any shape (it is broadcast). On a mismatch, the
/// index of the offending input and the error.
pub(crate) fn check_call_shapes(sigs: &[Option<Signature>]) -> Result<(), (usize, Error)> {
    let mut first: Option<&Signature> = None;
    for (j, sig) in sigs.iter().enumerate() {
        let Some(sig) = sig.as_ref().filter(|s| !s.shape().is_empty()) else {
            continue;
        };
        match first {
            None => first = Some(sig),
            Some(f) if f.shape() != sig.shape() => {
                return Err((j, signature_mismatch_error(f, sig)))
            }
            Some(_) => {}
        }
    }
    Ok(())
}
