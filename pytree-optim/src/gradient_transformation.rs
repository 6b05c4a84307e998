//! optax's model: a [`GradientTransformation`] turns gradients into
//! updates (in place) and keeps its own state; [`apply_updates`] adds them
//! to the parameters; [`chain`] runs several in order. Also the walks the
//! transformations are written with.

use pytree_std::{Error, Flatten, PyTree, Std};

use crate::kernel::Exec;
use crate::leaf::FloatLeaf;
use crate::mask::LeafMask;
use crate::op::ElementOp;

/// The element type a tree of leaves `P::Leaf` computes in.
pub(crate) type Scalar<P> = <<P as Flatten<Std>>::Leaf as FloatLeaf>::Scalar;

/// A gradient transformation (optax's `GradientTransformation`): `init`
/// builds the state for a tree of parameters, `update` turns gradients
/// into updates in place (the Rust way: no new tree per step) and advances
/// the state; [`apply_updates`] then adds the updates to the parameters.
/// [`step`](GradientTransformation::step) does both, fused into one pass
/// where the transformation can (`sgd`, `adam`, `adamw`).
///
/// Errors, not panics: gradients of another structure or leaf shape than
/// the parameters' are an [`Error`] naming the path (the gradients are
/// "tree 1" in it, the parameters "tree 0"), and then nothing has changed:
/// not the updates, not the state, not the parameters (the trees are
/// compared before the first write). A failure inside the element loop
/// (only candle's operations can fail there, say on a device error) stops
/// the pass at that leaf, named by its path: the leaves before it are
/// updated, the rest are not, and the step count is not advanced.
///
/// ```
/// use pytree_optim::{adam, apply_updates, GradientTransformation};
/// use pytree_std::PyTree;
///
/// #[derive(PyTree, Clone, Debug, PartialEq)]
/// struct Linear { w: Vec<f32>, b: f32 }
///
/// let mut params = Linear { w: vec![1.0, -1.0], b: 0.0 };
/// let opt = adam(0.1);
/// let mut state = opt.init(&params)?;
/// let mut grads = Linear { w: vec![0.5, -0.5], b: 2.0 };
/// opt.update(&mut grads, &mut state, &params)?;   // grads now hold the updates
/// apply_updates(&mut params, &grads)?;
/// assert_eq!(params, Linear { w: vec![0.9, -0.9], b: -0.1 }); // Adam's first step: -lr * sign(g)
///
/// let mut odd = Linear { w: vec![0.5], b: 2.0 };
/// let err = opt.update(&mut odd, &mut state, &params).unwrap_err();
/// assert_eq!(err.to_string(), "tree 1 at .w: sequence length mismatch: expected 2, found 1");
/// assert_eq!(state.count, 1);                          // nothing changed
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub trait GradientTransformation<P> {
    /// The transformation's state (optimizer moments, step count, the mask
    /// evaluated on the tree).
    type State;

    /// The initial state for parameters `params`.
    ///
    /// ```
    /// use pytree_optim::{sgd, GradientTransformation};
    /// let state = sgd(0.1).momentum(0.9).init(&vec![1.0f64, 2.0])?;
    /// assert_eq!(state.trace, Some(vec![0.0, 0.0]));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn init(&self, params: &P) -> Result<Self::State, Error>;

    /// Checks, changing nothing, what [`update`](GradientTransformation::update)
    /// and [`step`](GradientTransformation::step) check before their first
    /// write: that `updates` and the trees in `state` have the structure and
    /// leaf shapes of `params`, and that the state's masks were evaluated
    /// for a tree of as many leaves. [`chain`] calls it on every stage
    /// before running the first, so that a stage that would refuse (a stale
    /// state, say) refuses before an earlier one has changed anything.
    ///
    /// Every transformation of this crate implements it; the default
    /// accepts everything (a transformation of another crate that does not
    /// implement it is checked by its own `update` only, so a chain is
    /// atomic up to it).
    ///
    /// ```
    /// use pytree_optim::{adam, GradientTransformation};
    /// let opt = adam(0.1);
    /// let state = opt.init(&vec![1.0f32, 2.0])?;
    /// assert!(opt.check(&vec![0.0, 0.0], &state, &vec![1.0, 2.0]).is_ok());
    /// let err = opt.check(&vec![0.0], &state, &vec![1.0]).unwrap_err();
    /// assert_eq!(err.to_string(), "at <root>: optimizer state mismatch: the state was built by init for a tree of 2 leaves, this tree has 1");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn check(&self, updates: &P, state: &Self::State, params: &P) -> Result<(), Error> {
        let _ = (updates, state, params);
        Ok(())
    }

    /// Whether [`step`](GradientTransformation::step) reads the gradients
    /// without changing them and changes the parameters only at the leaves
    /// inside its mask (the fused optimizers, `sgd`, `adam`, `adamw`, and
    /// [`set_to_zero`](crate::set_to_zero) say so): then
    /// [`multi_transform`](crate::multi_transform) runs its groups' steps
    /// one after the other on the same trees, one pass over the elements in
    /// all, instead of updating a copy of the gradients per group. The
    /// default is `false`, which is always correct.
    ///
    /// ```
    /// use pytree_optim::{adam, scale, GradientTransformation};
    /// assert!(GradientTransformation::<Vec<f32>>::step_is_fused(&adam(0.1)));
    /// assert!(!GradientTransformation::<Vec<f32>>::step_is_fused(&scale(0.1)));
    /// ```
    fn step_is_fused(&self) -> bool {
        false
    }

    /// Turns `updates` (the gradients, on entry) into the updates to add
    /// to `params`, in place, and advances `state`.
    ///
    /// ```
    /// use pytree_optim::{sgd, GradientTransformation};
    /// let params = vec![1.0f32, 2.0];
    /// let opt = sgd(0.5);
    /// let mut state = opt.init(&params)?;
    /// let mut g = vec![1.0f32, -2.0];
    /// opt.update(&mut g, &mut state, &params)?;
    /// assert_eq!(g, [-0.5, 1.0]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn update(&self, updates: &mut P, state: &mut Self::State, params: &P) -> Result<(), Error>;

    /// One optimizer step: `update`, then [`apply_updates`], fused into one
    /// pass by the optimizers that can (`sgd`, `adam`, `adamw`: they read
    /// the gradients and write the parameters and moments, 28 bytes per
    /// `f32` parameter for Adam). `grads` is scratch space: afterwards it
    /// holds the updates (the default) or is unchanged (fused).
    ///
    /// ```
    /// use pytree_optim::{adam, GradientTransformation};
    /// let mut params = vec![1.0f32, 2.0];
    /// let opt = adam(0.1);
    /// let mut state = opt.init(&params)?;
    /// opt.step(&mut params, &mut vec![3.0, -3.0], &mut state)?;
    /// assert_eq!(params, [0.9, 2.1]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn step(&self, params: &mut P, grads: &mut P, state: &mut Self::State) -> Result<(), Error>
    where
        P: PyTree,
        P::Leaf: FloatLeaf,
    {
        self.update(grads, state, params)?;
        apply_updates(params, grads)
    }
}

/// Adds `updates` to `params` leaf by leaf (optax's `apply_updates`), in
/// one pass; trees of different structures or leaf shapes are an error
/// naming the path, and then nothing changes.
///
/// ```
/// let mut p = (1.0f32, vec![2.0f32]);
/// pytree_optim::apply_updates(&mut p, &(0.5, vec![-1.0]))?;
/// assert_eq!(p, (1.5, vec![1.0]));
/// assert!(pytree_optim::apply_updates(&mut p, &(0.5, vec![])).is_err());
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn apply_updates<P>(params: &mut P, updates: &P) -> Result<(), Error>
where
    P: Flatten<Std>,
    P::Leaf: FloatLeaf,
{
    let mask = crate::Mask::all().on(&*params).first_occurrences(&*params);
    walk(
        [params],
        [updates],
        &mask,
        Exec::Sequential,
        (&|[p], [u]| *p += u, &ElementOp::Axpby { a: 1.0, b: 1.0 }),
        None::<(&NoOff<P, 1, 1>, &ElementOp)>,
    )
}

/// The global L2 norm of a tree: the square root of the sum of squares of
/// every element of every leaf (optax's `global_norm`), summed in `f64`.
///
/// ```
/// let n = pytree_optim::global_norm(&(3.0f32, vec![4.0f32]))?;
/// assert_eq!(n, 5.0);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn global_norm<P>(tree: &P) -> Result<f64, Error>
where
    P: Flatten<Std>,
    P::Leaf: FloatLeaf,
{
    let mask = crate::Mask::all().on(tree);
    Ok(sum_squares(tree, tree, &mask, Exec::Sequential)?.sqrt())
}

/// `first` then `second` (optax's `chain`): the state is the pair of their
/// states; `update` runs both in order on the same updates, `step` runs
/// `second`'s fused step after `first`'s update. Longer chains nest
/// (`chain(a, chain(b, c))`) or grow with [`Chain::then`].
///
/// A failed call changes nothing: both stages are
/// [`check`](GradientTransformation::check)ed before the first runs, so a
/// later stage whose state no longer matches the parameters refuses
/// before the first stage has advanced its count or touched the updates.
/// The state is the tuple of the stages' states, a pytree when they are
/// (its tensors named `0.<...>`, `1.<...>` in a checkpoint).
///
/// ```
/// use pytree_optim::{adamw, chain, clip_by_global_norm, GradientTransformation};
/// let opt = chain(clip_by_global_norm(1.0), adamw(1e-2, 1e-4));
/// let mut params = vec![1.0f32, -1.0];
/// let mut state = opt.init(&params)?;
/// opt.step(&mut params, &mut vec![30.0, -40.0], &mut state)?;
/// assert!((params[0] - 0.98999).abs() < 1e-5 && (params[1] + 0.98999).abs() < 1e-5);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn chain<A, B>(first: A, second: B) -> Chain<A, B> {
    Chain { first, second }
}

/// Two transformations run in order; see [`chain`].
///
/// ```
/// use pytree_optim::{chain, scale, sgd, Chain};
/// let c: Chain<_, _> = chain(scale(0.5), sgd(1.0)).then(scale(2.0));
/// assert_eq!(c.second.second.factor, 2.0);
/// ```
#[derive(Clone, Debug)]
pub struct Chain<A, B> {
    /// Runs first.
    pub first: A,
    /// Runs second.
    pub second: B,
}

impl<A, B> Chain<A, B> {
    /// This chain followed by `next`: `chain(self.first, chain(self.second, next))`.
    ///
    /// ```
    /// use pytree_optim::{adam, chain, clip_by_global_norm, scale, GradientTransformation};
    /// let opt = chain(clip_by_global_norm(1.0), scale(2.0)).then(adam(1e-3));
    /// let state = opt.init(&vec![0.0f32])?;
    /// assert_eq!(state.1.1.count, 0);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn then<C>(self, next: C) -> Chain<A, Chain<B, C>> {
        Chain {
            first: self.first,
            second: Chain {
                first: self.second,
                second: next,
            },
        }
    }
}

impl<P, A, B> GradientTransformation<P> for Chain<A, B>
where
    A: GradientTransformation<P>,
    B: GradientTransformation<P>,
{
    type State = (A::State, B::State);

    fn init(&self, params: &P) -> Result<Self::State, Error> {
        Ok((self.first.init(params)?, self.second.init(params)?))
    }

    fn check(&self, updates: &P, state: &Self::State, params: &P) -> Result<(), Error> {
        self.first.check(updates, &state.0, params)?;
        self.second.check(updates, &state.1, params)
    }

    fn update(&self, updates: &mut P, state: &mut Self::State, params: &P) -> Result<(), Error> {
        self.check(updates, state, params)?;
        self.first.update(updates, &mut state.0, params)?;
        self.second.update(updates, &mut state.1, params)
    }

    fn step(&self, params: &mut P, grads: &mut P, state: &mut Self::State) -> Result<(), Error>
    where
        P: PyTree,
        P::Leaf: FloatLeaf,
    {
        self.check(grads, state, params)?;
        self.first.update(grads, &mut state.0, params)?;
        self.second.step(params, grads, &mut state.1)
    }
}

/// The type of "no function" for [`walk`]'s `off` (`None::<(&NoOff<P, N, M>, &ElementOp)>`):
/// leaves outside the mask are left alone.
pub(crate) type NoOff<P, const N: usize, const M: usize> = fn([&mut Scalar<P>; N], [Scalar<P>; M]);

/// Walks `N` mutable and `M` shared trees in one pass (structures and leaf
/// shapes checked first: on a mismatch nothing changes), running `on` (an
/// element closure and the same update by name, see
/// [`FloatLeaf::zip_op`]) on leaves where `mask` holds and `off` (if any)
/// elsewhere.
pub(crate) fn walk<P, const N: usize, const M: usize, F, G>(
    muts: [&mut P; N],
    refs: [&P; M],
    mask: &LeafMask,
    exec: Exec,
    on: (&F, &ElementOp),
    off: Option<(&G, &ElementOp)>,
) -> Result<(), Error>
where
    P: Flatten<Std>,
    P::Leaf: FloatLeaf,
    F: Fn([&mut Scalar<P>; N], [Scalar<P>; M]) + Sync,
    G: Fn([&mut Scalar<P>; N], [Scalar<P>; M]) + Sync,
{
    if let Some(first) = muts.first().map(|t| &**t).or(refs.first().copied()) {
        mask.check(first)?;
    } else {
        return Ok(());
    }
    let mut i = 0;
    pytree_std::walk::zip_mut(muts, refs, |ms, rs| {
        let r = if mask.get(i) {
            P::Leaf::zip_op(ms, rs, exec, on.0, on.1)
        } else if let Some((off, op)) = off {
            P::Leaf::zip_op(ms, rs, exec, off, op)
        } else {
            Ok(())
        };
        i += 1;
        r.map_err(|e| e.kind().to_string())
    })
}

/// `mask.check(tree)`, but a mask not yet evaluated (a loaded state's)
/// passes: it is evaluated on the tree itself.
pub(crate) fn check_mask<P>(mask: &LeafMask, tree: &P) -> Result<(), Error>
where
    P: Flatten<Std>,
{
    if mask.is_pending() {
        Ok(())
    } else {
        mask.check(tree)
    }
}

/// The `check` of a transformation whose state holds a mask: `updates`
/// like `params` ([`check_updates`]), and the mask on `params`
/// ([`check_mask`]).
pub(crate) fn check_masked<P>(params: &P, updates: &P, mask: &LeafMask) -> Result<(), Error>
where
    P: Flatten<Std>,
{
    check_updates(params, updates)?;
    check_mask(mask, params)
}

/// Checks that `updates` have the structure and leaf shapes of `params`
/// (the error names the updates as tree 1, the parameters being tree 0).
pub(crate) fn check_updates<P>(params: &P, updates: &P) -> Result<(), Error>
where
    P: Flatten<Std>,
{
    pytree_std::walk::zip_mut::<P, 0, 2, Result<(), core::convert::Infallible>>(
        [],
        [params, updates],
        |_, _| Ok(()),
    )
}

/// The sum of squares of the elements of `tree`'s leaves where `mask`
/// holds, in `f64`; `tree` is checked against `params` (structure and leaf
/// shapes) first, and named as tree 1 in the error.
pub(crate) fn sum_squares<P>(
    params: &P,
    tree: &P,
    mask: &LeafMask,
    exec: Exec,
) -> Result<f64, Error>
where
    P: Flatten<Std>,
    P::Leaf: FloatLeaf,
{
    mask.check(params)?;
    let sq = |v: Scalar<P>| {
        let v = crate::Float::to_f64(v);
        v * v
    };
    if crate::leaf_sums::active() {
        // Leaves held by other processes too: each leaf's sum, completed
        // by the reduction, then added up in leaf order as below.
        let mut sums = Vec::with_capacity(mask.len());
        let mut i = 0;
        pytree_std::walk::zip_mut::<P, 0, 2, Result<(), String>>(
            [],
            [params, tree],
            |[], [_, x]| {
                sums.push(if mask.get(i) {
                    P::Leaf::sum_elements(x, exec, &sq).map_err(|e| e.kind().to_string())?
                } else {
                    0.0
                });
                i += 1;
                Ok(())
            },
        )?;
        crate::leaf_sums::reduce_leaf_sums(&mut sums)?;
        return Ok(sums.iter().fold(0.0f64, |total, s| total + s));
    }
    let mut total = 0.0f64;
    let mut i = 0;
    pytree_std::walk::zip_mut::<P, 0, 2, Result<(), String>>([], [params, tree], |[], [_, x]| {
        if mask.get(i) {
            total += P::Leaf::sum_elements(x, exec, &sq).map_err(|e| e.kind().to_string())?;
        }
        i += 1;
        Ok(())
    })?;
    Ok(total)
}
