//! optax's model: a [`GradientTransformation`] turns gradients into
//! updates (in place) and keeps its own state; [`apply_updates`] adds them
//! to the parameters; [`chain`] runs several in order, fusing a
//! learning-rate scaling (a [`Tail`]) into the previous stage's pass.

use pytree_std::{Error, Flatten, PyTree, Std};

use crate::pass::{Tail, Target};
use crate::walk::walk;
use pytree_std::elements::FloatLeaf;

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
/// assert_eq!(state.0.count, 1);                        // nothing changed
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub trait GradientTransformation<P> {
    /// The transformation's state (optimizer moments, step count; a
    /// wrapper's mask evaluated on the tree).
    type State;

    /// The initial state for parameters `params`.
    ///
    /// ```
    /// use pytree_optim::{sgd, GradientTransformation};
    /// let state = sgd(0.1).momentum(0.9).init(&vec![1.0f64, 2.0])?;
    /// assert_eq!(state.0.map(|t| t.trace), Some(vec![0.0, 0.0]));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn init(&self, params: &P) -> Result<Self::State, Error>;

    /// Validates, changing nothing, what [`update`](GradientTransformation::update)
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
    /// assert!(opt.validate(&vec![0.0, 0.0], &state, &vec![1.0, 2.0]).is_ok());
    /// let err = opt.validate(&vec![0.0], &state, &vec![1.0]).unwrap_err();
    /// assert_eq!(err.to_string(), "tree 1 at <root>: sequence length mismatch: expected 1, found 2");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn validate(&self, updates: &P, state: &Self::State, params: &P) -> Result<(), Error> {
        let _ = (updates, state, params);
        Ok(())
    }

    /// Whether `update`, `step` and the fused pass
    /// ([`run_fused`](GradientTransformation::run_fused)) act only on the
    /// leaves that the enclosing wrappers select ([`masked`](crate::masked),
    /// [`Wrap::mask`](crate::Wrap::mask), the groups of
    /// [`multi_transform`](crate::multi_transform)): they change neither the
    /// updates nor the parameters at the other leaves, and their sums over
    /// the tree (a global norm) leave those leaves out. The selection
    /// reaches the loops of this crate only (it is kept on the thread by
    /// the wrappers and read by this crate's private walks), so every
    /// transformation of this crate says `true`, and the combinators and
    /// wrappers ([`chain`], `Option`, [`Masked`](crate::Masked),
    /// [`WithExec`](crate::WithExec), [`MultiTransform`](crate::MultiTransform),
    /// the aliases) say what all their inner ones say.
    ///
    /// The default is `false`, which is always correct: a wrapper whose
    /// inner transformation says `false` (one written elsewhere, with a loop
    /// of its own over the leaves) guards the leaves outside its mask
    /// itself. It hands the transformation zeros as the updates there (so
    /// that a sum over the tree covers the masked leaves only, as in optax,
    /// whose inner transformation sees those leaves only), then puts the
    /// original updates back there ([`masked`](crate::masked)) or zeros
    /// ([`Wrap::mask`](crate::Wrap::mask), whose `step` then adds the
    /// updates to the masked parameters only). That costs a tree of
    /// zeros, a copy of the updates outside the mask and a few passes over
    /// them, each step. A transformation that delegates all its work to
    /// this crate's (a newtype around [`adam`](crate::adam), say) forwards
    /// this method to keep the one-pass path.
    ///
    /// ```
    /// use pytree_optim::{adam, chain, masked, GradientTransformation, Mask};
    /// use pytree_std::{Error, KeyPath};
    ///
    /// // A transformation written by hand: its loop sees every leaf.
    /// struct Double;
    /// impl GradientTransformation<Vec<f32>> for Double {
    ///     type State = ();
    ///     fn init(&self, _: &Vec<f32>) -> Result<(), Error> { Ok(()) }
    ///     fn update(&self, u: &mut Vec<f32>, _: &mut (), _: &Vec<f32>) -> Result<(), Error> {
    ///         for x in u.iter_mut() { *x *= 2.0; }
    ///         Ok(())
    ///     }
    /// }
    /// assert!(!Double.acts_only_on_selection());
    /// assert!(GradientTransformation::<Vec<f32>>::acts_only_on_selection(&adam(0.1)));
    /// assert!(!chain(Double, adam(0.1)).acts_only_on_selection());
    ///
    /// // `masked` guards the leaf outside its mask: it passes through.
    /// let opt = masked(Double, Mask::new(|p: &KeyPath| p.to_string() == "[0]"));
    /// let params = vec![0.0f32; 2];
    /// let mut state = opt.init(&params)?;
    /// let mut u = vec![1.0f32, 1.0];
    /// opt.update(&mut u, &mut state, &params)?;
    /// assert_eq!(u, [2.0, 1.0]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn acts_only_on_selection(&self) -> bool {
        false
    }

    /// Whether [`step`](GradientTransformation::step) reads the gradients
    /// without changing them and changes the parameters only at the leaves
    /// selected (the fused optimizers, `sgd`, `adam`, `adamw`, the scalings
    /// and [`set_to_zero`](crate::set_to_zero) say so): then
    /// [`multi_transform`](crate::multi_transform) runs its groups' steps
    /// one after the other on the same trees, one pass over the elements in
    /// all, instead of updating a copy of the gradients per group (it does
    /// so only for groups that also
    /// [`act only on the selection`](GradientTransformation::acts_only_on_selection)).
    /// The default is `false`, which is always correct.
    ///
    /// ```
    /// use pytree_optim::{adam, clip_by_global_norm, GradientTransformation};
    /// assert!(GradientTransformation::<Vec<f32>>::step_is_fused(&adam(0.1)));
    /// assert!(!GradientTransformation::<Vec<f32>>::step_is_fused(&clip_by_global_norm(0.1)));
    /// ```
    fn step_is_fused(&self) -> bool {
        false
    }

    /// Whether this transformation is a [`Tail`] (a per-leaf scaling,
    /// after adding decayed weights: [`scale`](crate::scale),
    /// [`scale_by_learning_rate`](crate::scale_by_learning_rate),
    /// [`add_decayed_weights`](crate::add_decayed_weights) and their
    /// chains), which a [`chain`] fuses into the previous stage's pass.
    /// The default is `false`.
    ///
    /// ```
    /// use pytree_optim::{scale_by_adam, scale_by_learning_rate, GradientTransformation};
    /// assert!(GradientTransformation::<Vec<f32>>::is_tail(&scale_by_learning_rate(0.1)));
    /// assert!(!GradientTransformation::<Vec<f32>>::is_tail(&scale_by_adam()));
    /// ```
    fn is_tail(&self) -> bool {
        false
    }

    /// The [`Tail`] this transformation applies at the step `state` is at
    /// (`None` if it is not one, see [`is_tail`](GradientTransformation::is_tail)).
    ///
    /// ```
    /// use pytree_optim::{scale_by_learning_rate, GradientTransformation};
    /// let opt = scale_by_learning_rate(0.5);
    /// let state = opt.init(&vec![1.0f32])?;
    /// assert_eq!(opt.tail(&state, &vec![1.0]).map(|t| t.factor), Some(-0.5));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn tail(&self, state: &Self::State, params: &P) -> Option<Tail> {
        let _ = (state, params);
        None
    }

    /// Advances `state` as [`update`](GradientTransformation::update)
    /// would, without touching any tree: what a [`chain`] calls on a
    /// [`Tail`] that it fused into the previous stage's pass. The default
    /// does nothing.
    ///
    /// ```
    /// use pytree_optim::{scale_by_learning_rate, GradientTransformation};
    /// let opt = scale_by_learning_rate(0.5);
    /// let mut state = opt.init(&vec![1.0f32])?;
    /// opt.advance(&mut state, &vec![1.0]);
    /// assert_eq!(state.count, 1);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn advance(&self, state: &mut Self::State, params: &P) {
        let _ = (state, params);
    }

    /// This transformation's update followed by `tail`, in one pass, into
    /// `target` (the updates in place, or added to the parameters: a fused
    /// step), advancing `state`; `Ok(false)`, having changed nothing, if
    /// it has no such pass (the default). [`chain`] calls it with the
    /// next stage's [`Tail`]; validated by the caller.
    ///
    /// ```
    /// use pytree_optim::{scale_by_adam, GradientTransformation, Tail, Target};
    /// let opt = scale_by_adam();
    /// let mut p = vec![1.0f32];
    /// let mut state = opt.init(&p)?;
    /// let mut target = Target::Params { params: &mut p, grads: &vec![2.0] };
    /// assert!(opt.run_fused(&mut target, &mut state, &Tail::scale(-0.1))?);
    /// assert_eq!(p, [0.9]); // Adam's first step: -lr * sign(g)
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn run_fused(
        &self,
        target: &mut Target<'_, P>,
        state: &mut Self::State,
        tail: &Tail,
    ) -> Result<bool, Error> {
        let _ = (target, state, tail);
        Ok(false)
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
    let every = crate::mask::Mask::all().on(&*params);
    crate::walk::with_selection(&every, || walk([params], [updates], &crate::updates::AddTo))
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
    let mask = crate::mask::Mask::all().on(tree);
    Ok(crate::walk::sum_squares(tree, tree, &mask)?.sqrt())
}

/// `update` in one pass ([`GradientTransformation::run_fused`], no
/// tail), validated first: `Ok(false)`, having changed nothing, if `t` has
/// no such pass. All of `update` for `scale_by_adam` and `trace`.
pub(crate) fn update_in_one_pass<P, T: GradientTransformation<P>>(
    t: &T,
    updates: &mut P,
    state: &mut T::State,
    params: &P,
) -> Result<bool, Error> {
    t.validate(updates, state, params)?;
    let target = &mut Target::Updates { updates, params };
    t.run_fused(target, state, &Tail::scale(1.0))
}

/// `step` in one pass over the parameters, reading the gradients; see
/// [`update_in_one_pass`].
pub(crate) fn step_in_one_pass<P, T: GradientTransformation<P>>(
    t: &T,
    params: &mut P,
    grads: &mut P,
    state: &mut T::State,
) -> Result<bool, Error> {
    t.validate(grads, state, params)?;
    let target = &mut Target::Params {
        params,
        grads: &*grads,
    };
    t.run_fused(target, state, &Tail::scale(1.0))
}

/// `first` then `second` (optax's `chain`): the state is the pair of their
/// states; `update` runs both in order on the same updates, `step` runs
/// `second`'s fused step after `first`'s update. When `second` is a
/// [`Tail`] (a learning-rate scaling, say) and `first` has a fused pass
/// (`scale_by_adam`, `trace`), the chain runs `first`'s pass with the tail
/// fused into it: one pass over the parameters, the gradients and the
/// state, the bits of the two stages run one after the other. Longer
/// chains nest (`chain(a, chain(b, c))`) or grow with [`Chain::then`].
///
/// A failed call changes nothing: both stages are
/// [`validate`](GradientTransformation::validate)d before the first runs, so a
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
    /// assert_eq!(state.1.1.0.count, 0);
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

    fn validate(&self, updates: &P, state: &Self::State, params: &P) -> Result<(), Error> {
        self.first.validate(updates, &state.0, params)?;
        self.second.validate(updates, &state.1, params)
    }

    fn acts_only_on_selection(&self) -> bool {
        self.first.acts_only_on_selection() && self.second.acts_only_on_selection()
    }

    fn step_is_fused(&self) -> bool {
        self.first.step_is_fused() && self.second.is_tail()
    }

    fn is_tail(&self) -> bool {
        self.first.is_tail() && self.second.is_tail()
    }

    fn tail(&self, state: &Self::State, params: &P) -> Option<Tail> {
        let first = self.first.tail(&state.0, params)?;
        first.then(self.second.tail(&state.1, params)?)
    }

    fn advance(&self, state: &mut Self::State, params: &P) {
        self.first.advance(&mut state.0, params);
        self.second.advance(&mut state.1, params);
    }

    fn run_fused(
        &self,
        target: &mut Target<'_, P>,
        state: &mut Self::State,
        tail: &Tail,
    ) -> Result<bool, Error> {
        // `first`, with `second` (a tail) and then `tail` fused into it.
        let Some(mine) = self.second.tail(&state.1, target.params()) else {
            return Ok(false);
        };
        let Some(both) = mine.then(tail.clone()) else {
            return Ok(false);
        };
        if !self.first.run_fused(target, &mut state.0, &both)? {
            return Ok(false);
        }
        self.second.advance(&mut state.1, target.params());
        Ok(true)
    }

    fn update(&self, updates: &mut P, state: &mut Self::State, params: &P) -> Result<(), Error> {
        if update_in_one_pass(self, updates, state, params)? {
            return Ok(());
        }
        self.first.update(updates, &mut state.0, params)?;
        self.second.update(updates, &mut state.1, params)
    }

    fn step(&self, params: &mut P, grads: &mut P, state: &mut Self::State) -> Result<(), Error>
    where
        P: PyTree,
        P::Leaf: FloatLeaf,
    {
        if step_in_one_pass(self, params, grads, state)? {
            return Ok(());
        }
        self.first.update(grads, &mut state.0, params)?;
        self.second.step(params, grads, &mut state.1)
    }
}

/// `Some(t)` is `t`; `None` is optax's `identity()`: the updates pass
/// through, and a [`Tail`] after it runs alone (so [`sgd`](crate::sgd)
/// without momentum, `chain(None, scale_by_learning_rate(lr))`, is one
/// pass). The state is `Some` of `t`'s state, or `None`.
///
/// ```
/// use pytree_optim::{trace, GradientTransformation, Trace};
/// let none: Option<Trace> = None;
/// let mut g = vec![1.0f32];
/// let mut state = none.init(&g)?;
/// none.update(&mut g, &mut state, &vec![0.0])?;
/// assert_eq!((g, state), (vec![1.0], None));
/// assert!(Some(trace(0.9, false)).init(&vec![0.0f32])?.is_some());
/// # Ok::<(), pytree_std::Error>(())
/// ```
impl<P, T> GradientTransformation<P> for Option<T>
where
    P: PyTree,
    P::Leaf: FloatLeaf,
    T: GradientTransformation<P>,
{
    type State = Option<T::State>;

    fn init(&self, params: &P) -> Result<Self::State, Error> {
        self.as_ref().map(|t| t.init(params)).transpose()
    }

    fn validate(&self, updates: &P, state: &Self::State, params: &P) -> Result<(), Error> {
        match (self, state) {
            (Some(t), Some(s)) => t.validate(updates, s, params),
            (None, None) => crate::walk::same_shape(params, updates),
            _ => Err(Error::custom(
                "optimizer state mismatch: the state was built by init for another transformation (Some and None)",
            )),
        }
    }

    fn acts_only_on_selection(&self) -> bool {
        self.as_ref().is_none_or(T::acts_only_on_selection)
    }

    fn step_is_fused(&self) -> bool {
        self.as_ref().is_none_or(T::step_is_fused)
    }

    fn is_tail(&self) -> bool {
        self.as_ref().is_some_and(T::is_tail)
    }

    fn tail(&self, state: &Self::State, params: &P) -> Option<Tail> {
        match (self, state) {
            (Some(t), Some(s)) => t.tail(s, params),
            _ => None,
        }
    }

    fn advance(&self, state: &mut Self::State, params: &P) {
        if let (Some(t), Some(s)) = (self, state) {
            t.advance(s, params);
        }
    }

    fn run_fused(
        &self,
        target: &mut Target<'_, P>,
        state: &mut Self::State,
        tail: &Tail,
    ) -> Result<bool, Error> {
        match (self, state) {
            (Some(t), Some(s)) => t.run_fused(target, s, tail),
            (None, None) => tail.run(target).map(|()| true),
            _ => Ok(false),
        }
    }

    fn update(&self, updates: &mut P, state: &mut Self::State, params: &P) -> Result<(), Error> {
        self.validate(updates, state, params)?;
        match (self, state) {
            (Some(t), Some(s)) => t.update(updates, s, params),
            _ => Ok(()),
        }
    }

    fn step(&self, params: &mut P, grads: &mut P, state: &mut Self::State) -> Result<(), Error> {
        self.validate(grads, state, params)?;
        match (self, state) {
            (Some(t), Some(s)) => t.step(params, grads, s),
            _ => apply_updates(params, grads),
        }
    }
}
