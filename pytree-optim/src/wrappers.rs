//! Transformations that wrap another (optax's `wrappers.py`): [`masked`]
//! and [`Wrap::mask`] (where it acts), [`Wrap::exec`] (how its loops
//! run). The mask's life cycle is written here once: evaluated on the
//! parameters by `init`, kept in the state ([`MaskedState`]), evaluated
//! again by the first update of a state loaded from a checkpoint.

use pytree_std::{Error, PyTree};

use crate::context::{first_occurrences, walk, Context};
use crate::gradient_transformation::{
    step_in, update_in, update_through_fused, validate_of, Fused, GradientTransformation,
};
use crate::mask::{LeafMask, Mask};
use crate::rules::{AddTo, Zero};
use crate::rules::{Tail, Target};
use pytree_std::elements::Exec;
use pytree_std::elements::FloatLeaf;

/// `inner` where `mask` holds (optax's `masked`): elsewhere the updates
/// pass through unchanged (so `step` adds the gradients there), and the
/// state of `inner` is left alone. To leave the parameters unchanged
/// elsewhere instead, [`Wrap::mask`].
///
/// Any transformation can be wrapped, this crate's or one written
/// elsewhere with its own loop over the leaves, which cannot see the mask
/// (it has no fast path: its [`fused`](GradientTransformation::fused) is
/// `None`): the wrapper then hands it zeros as the updates outside the
/// mask and puts the original ones back after it, so the updates there
/// still pass through, and a sum it makes over the tree (a global norm
/// written by hand) covers the masked leaves only, as in optax. Its state
/// differs from optax's, though: optax's inner transformation sees a tree
/// of the masked leaves only, and its state holds those leaves only; here
/// the inner state is a tree of the parameters' structure, with entries
/// for every leaf, and those outside the mask are what the transformation
/// makes of zero updates (a momentum's trace stays zero there). This
/// crate's transformations leave their state outside the mask untouched
/// instead (zeros from `init`).
///
/// ```
/// use pytree_optim::{masked, scale, GradientTransformation, Mask};
/// use pytree_std::KeyPath;
/// let opt = masked(scale(10.0), Mask::new(|p: &KeyPath| p.to_string() == "[0]"));
/// let params = vec![0.0f32; 2];
/// let mut state = opt.init(&params)?;
/// let mut u = vec![1.0f32, 1.0];
/// opt.update(&mut u, &mut state, &params)?;
/// assert_eq!(u, [10.0, 1.0]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn masked<T>(inner: T, mask: Mask) -> Masked<T> {
    Masked {
        inner,
        mask,
        outside: Outside::PassThrough,
    }
}

/// What a [`Masked`] transformation does outside its mask.
///
/// ```
/// use pytree_optim::{masked, scale, Mask, Outside, Wrap};
/// assert_eq!(masked(scale(1.0), Mask::all()).outside, Outside::PassThrough);
/// assert_eq!(scale(1.0).mask(Mask::all()).outside, Outside::Frozen);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outside {
    /// The updates pass through unchanged (optax's `masked`).
    PassThrough,
    /// The updates are zero: the parameters do not change.
    Frozen,
}

/// A transformation acting where a [`Mask`] holds; see [`masked`] and
/// [`Wrap::mask`].
///
/// ```
/// use pytree_optim::{masked, sgd, Mask};
/// let opt = masked(sgd(0.1), Mask::params());
/// assert_eq!(opt.inner.second.learning_rate, 0.1);
/// ```
#[derive(Clone, Debug)]
pub struct Masked<T> {
    /// The transformation.
    pub inner: T,
    /// Where it acts.
    pub mask: Mask,
    /// What happens elsewhere.
    pub outside: Outside,
}

/// The state of a [`Masked`] transformation: the inner state and the mask
/// evaluated on the parameters, a [`LeafMask`] (configuration, not saved:
/// a state loaded from a checkpoint evaluates it again at its first
/// update). The inner state's leaves are its leaves, named `inner.<...>`
/// in a checkpoint.
///
/// ```
/// use pytree_optim::{masked, scale_by_adam, GradientTransformation, Mask};
/// let s = masked(scale_by_adam(), Mask::all()).init(&vec![1.0f32, 2.0])?;
/// assert_eq!((s.mask.len(), s.inner.count), (2, 0));
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct MaskedState<S> {
    /// The state of the inner transformation.
    pub inner: S,
    /// The mask, on the parameters (not saved).
    #[pytree(skip(recomputed))]
    pub mask: LeafMask,
}

impl<T> Masked<T> {
    /// The state's mask, or (a state loaded from a checkpoint) the mask
    /// evaluated on `params`, to be kept once the call has succeeded.
    fn leaf_mask<P>(&self, state: &LeafMask, params: &P) -> LeafMask
    where
        P: PyTree,
        P::Leaf: FloatLeaf,
    {
        if state.is_pending() {
            self.evaluate(params)
        } else {
            state.clone()
        }
    }

    /// The mask on the parameters (each tied leaf at its first position).
    fn evaluate<P>(&self, params: &P) -> LeafMask
    where
        P: PyTree,
        P::Leaf: FloatLeaf,
    {
        first_occurrences(self.mask.on(params), params)
    }
}

impl<P, T> GradientTransformation<P> for Masked<T>
where
    P: PyTree,
    P::Leaf: FloatLeaf,
    T: GradientTransformation<P>,
{
    type State = MaskedState<T::State>;

    fn init(&self, params: &P) -> Result<Self::State, Error> {
        let mask = self.evaluate(params);
        let inner = self.inner.init(params)?;
        Ok(MaskedState { inner, mask })
    }

    update_through_fused!();
}

impl<P, T> Fused<P, MaskedState<T::State>> for Masked<T>
where
    P: PyTree,
    P::Leaf: FloatLeaf,
    T: GradientTransformation<P>,
{
    fn validate(
        &self,
        updates: &P,
        state: &MaskedState<T::State>,
        params: &P,
    ) -> Result<(), Error> {
        if !state.mask.is_pending() {
            state.mask.ensure_fits(params)?;
        }
        validate_of(&self.inner, updates, &state.inner, params)
    }

    /// Frozen outside, around a fused step.
    fn step_is_fused(&self) -> bool {
        self.outside == Outside::Frozen && self.inner.fused().is_some_and(|f| f.step_is_fused())
    }

    /// A tail of factor 1 (a weight decay) whose decay is narrowed to the
    /// mask; other tails do not pass through a mask.
    fn is_tail(&self) -> bool {
        self.outside == Outside::PassThrough && self.inner.fused().is_some_and(|f| f.is_tail())
    }

    fn tail(&self, state: &MaskedState<T::State>, params: &P) -> Option<Tail> {
        if self.outside != Outside::PassThrough {
            return None;
        }
        let mask = self.leaf_mask(&state.mask, params);
        let tail = self.inner.fused()?.tail(&state.inner, params)?;
        if tail.factor != 1.0 {
            return None;
        }
        let decay_mask = match &tail.decay_mask {
            None => mask,
            Some(m) => mask.and(m),
        };
        Some(Tail {
            decay_mask: Some(decay_mask),
            ..tail
        })
    }

    fn advance(&self, state: &mut MaskedState<T::State>, params: &P) {
        let mask = self.leaf_mask(&state.mask, params);
        if let Some(f) = self.inner.fused() {
            f.advance(&mut state.inner, params);
        }
        state.mask = mask;
    }

    fn update_in(
        &self,
        cx: &Context<'_>,
        updates: &mut P,
        state: &mut MaskedState<T::State>,
        params: &P,
    ) -> Result<(), Error> {
        Fused::validate(self, updates, state, params)?;
        let mask = self.leaf_mask(&state.mask, params);
        update_in(
            &self.inner,
            &cx.select(&mask),
            &mut *updates,
            &mut state.inner,
            params,
        )?;
        if self.outside == Outside::Frozen {
            walk(&cx.select(&mask.not()), [updates], [], &Zero)?;
        }
        state.mask = mask;
        Ok(())
    }

    fn step_in(
        &self,
        cx: &Context<'_>,
        params: &mut P,
        grads: &mut P,
        state: &mut MaskedState<T::State>,
    ) -> Result<(), Error> {
        if self.outside == Outside::PassThrough {
            Fused::update_in(self, cx, grads, state, params)?;
            return walk(cx, [params], [&*grads], &AddTo);
        }
        // Frozen: the inner step at the masked leaves only (a
        // transformation without a fast path: its guarded update, added
        // to the masked parameters only).
        Fused::validate(self, grads, state, params)?;
        let mask = self.leaf_mask(&state.mask, &*params);
        step_in(
            &self.inner,
            &cx.select(&mask),
            params,
            grads,
            &mut state.inner,
        )?;
        state.mask = mask;
        Ok(())
    }
}

/// The wrappers every transformation has, as methods: `t.mask(m)`,
/// `t.exec(e)`, `t.parallel()` (implemented for every type; import the
/// trait to call them).
///
/// ```
/// use pytree_optim::{adam, GradientTransformation, Mask, Wrap};
/// use pytree_std::KeyPath;
/// let opt = adam(0.1).mask(Mask::new(|p: &KeyPath| p.to_string() == "[0]"));
/// let mut p = vec![1.0f32, 1.0];
/// let mut state = opt.init(&p)?;
/// opt.step(&mut p, &mut vec![1.0, 1.0], &mut state)?;
/// assert_eq!(p, [0.9, 1.0]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub trait Wrap: Sized {
    /// Acts only on the leaves where `mask` holds; elsewhere the updates
    /// are zero, so the parameters stay as they are, and the state is left
    /// alone (`masked(t, mask)` lets the updates pass through there
    /// instead, as optax's). `Mask::params()` keeps running statistics (leaves
    /// of kind `"state"`) out of an optimizer. A transformation written
    /// elsewhere, which cannot see the mask, gets zeros as the updates
    /// outside it, and its `step` becomes its `update` followed by adding
    /// the updates to the masked parameters only (see [`masked`] for its
    /// state outside the mask).
    ///
    /// ```
    /// use pytree_optim::{sgd, GradientTransformation, Mask, Wrap};
    /// use pytree_std::KeyPath;
    /// let opt = sgd(0.5).mask(Mask::new(|p: &KeyPath| p.to_string() != "[1]"));
    /// let mut params = vec![1.0f32, 1.0];
    /// let mut state = opt.init(&params)?;
    /// assert!(state.mask.get(0) && !state.mask.get(1));
    /// opt.step(&mut params, &mut vec![1.0, 1.0], &mut state)?;
    /// assert_eq!(params, [0.5, 1.0]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn mask(self, mask: Mask) -> Masked<Self> {
        Masked {
            inner: self,
            mask,
            outside: Outside::Frozen,
        }
    }

    /// Runs the element loops as `exec` says (default
    /// [`Exec::Sequential`]).
    ///
    /// ```
    /// use pytree_optim::{adam, Exec, GradientTransformation, Wrap};
    /// let opt = adam(0.1).exec(Exec::Sequential);
    /// let mut params = vec![1.0f64; 4];
    /// let mut state = opt.init(&params)?;
    /// opt.step(&mut params, &mut vec![1.0; 4], &mut state)?;
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn exec(self, exec: Exec) -> WithExec<Self> {
        WithExec { inner: self, exec }
    }

    /// Splits leaves longer than [`GRAIN`](crate::GRAIN) elements across
    /// rayon's threads (`.exec(Exec::Parallel)`); the results are the
    /// sequential ones, bit for bit. Scalar leaves and short arrays run on
    /// the calling thread.
    ///
    /// ```
    /// use pytree_optim::{adam, GradientTransformation, Wrap};
    /// let (seq, par) = (adam(0.1), adam(0.1).parallel());
    /// let (mut a, mut b) = (vec![1.0f32; 8], vec![1.0f32; 8]);
    /// let (mut sa, mut sb) = (seq.init(&a)?, par.init(&b)?);
    /// seq.step(&mut a, &mut vec![0.5; 8], &mut sa)?;
    /// par.step(&mut b, &mut vec![0.5; 8], &mut sb)?;
    /// assert_eq!(a, b);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[cfg(feature = "rayon")]
    fn parallel(self) -> WithExec<Self> {
        self.exec(Exec::Parallel)
    }
}

impl<T> Wrap for T {}

/// A transformation whose element loops run as [`Exec`] says; see
/// [`Wrap::exec`]. Its state is the inner one. `Exec` reaches the loops
/// through the [`Context`] (this crate's, and those of a
/// [`Fused`] transformation written elsewhere that reads
/// [`Context::exec_mode`]); a transformation without a fast path runs its
/// own loops as it does. Either way only the speed changes, never the
/// results.
///
/// ```
/// use pytree_optim::{scale, Exec, Wrap};
/// assert_eq!(scale(2.0).exec(Exec::Sequential).exec, Exec::Sequential);
/// ```
#[derive(Clone, Debug)]
pub struct WithExec<T> {
    /// The transformation.
    pub inner: T,
    /// How its loops run.
    pub exec: Exec,
}

impl<T> WithExec<T> {
    /// `cx` with this wrapper's [`Exec`], for the inner transformation.
    fn inner_cx<'a>(&self, cx: &Context<'a>) -> Context<'a> {
        cx.clone().exec(self.exec)
    }
}

impl<P, T> GradientTransformation<P> for WithExec<T>
where
    P: PyTree,
    P::Leaf: FloatLeaf,
    T: GradientTransformation<P>,
{
    type State = T::State;

    fn init(&self, params: &P) -> Result<T::State, Error> {
        self.inner.init(params)
    }

    update_through_fused!();
}

impl<P, T> Fused<P, T::State> for WithExec<T>
where
    P: PyTree,
    P::Leaf: FloatLeaf,
    T: GradientTransformation<P>,
{
    fn validate(&self, updates: &P, state: &T::State, params: &P) -> Result<(), Error> {
        validate_of(&self.inner, updates, state, params)
    }

    fn step_is_fused(&self) -> bool {
        self.inner.fused().is_some_and(|f| f.step_is_fused())
    }

    fn is_tail(&self) -> bool {
        self.inner.fused().is_some_and(|f| f.is_tail())
    }

    fn tail(&self, state: &T::State, params: &P) -> Option<Tail> {
        self.inner.fused()?.tail(state, params)
    }

    fn advance(&self, state: &mut T::State, params: &P) {
        if let Some(f) = self.inner.fused() {
            f.advance(state, params);
        }
    }

    fn run_fused(
        &self,
        cx: &Context<'_>,
        target: &mut Target<'_, P>,
        state: &mut T::State,
        tail: &Tail,
    ) -> Result<bool, Error> {
        match self.inner.fused() {
            Some(f) => f.run_fused(&self.inner_cx(cx), target, state, tail),
            None => Ok(false),
        }
    }

    fn update_in(
        &self,
        cx: &Context<'_>,
        updates: &mut P,
        state: &mut T::State,
        params: &P,
    ) -> Result<(), Error> {
        update_in(&self.inner, &self.inner_cx(cx), updates, state, params)
    }

    fn step_in(
        &self,
        cx: &Context<'_>,
        params: &mut P,
        grads: &mut P,
        state: &mut T::State,
    ) -> Result<(), Error> {
        step_in(&self.inner, &self.inner_cx(cx), params, grads, state)
    }
}
