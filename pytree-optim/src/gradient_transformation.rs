//! optax's model: a [`GradientTransformation`] turns gradients into
//! updates (in place) and keeps its own state; [`apply_updates`] adds them
//! to the parameters; [`chain`] runs several in order, fusing a
//! learning-rate scaling (a [`Tail`]) into the previous stage's pass.

use pytree_std::{Error, Flatten, PyTree, Std};

use crate::context::{first_occurrences, same_shape, walk, zeros, Context};
use crate::rules::{Tail, Target};
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

    /// The optional fast path: `Some` of this transformation as a
    /// [`Fused`] transformation, which is given the [`Context`] it runs
    /// under (the leaves it may act on, how its loops run, the reduction
    /// of per-leaf sums across processes) and may fuse its step into one
    /// pass. The default, `None`, is always correct: every wrapper runs
    /// such a transformation through its `update`, guarding the leaves
    /// outside its selection itself (the transformation gets zeros as the
    /// updates there, so that a sum it makes over the tree covers the
    /// selected leaves only, as in optax, and the original updates are
    /// put back afterwards), at the cost of a tree of zeros and a few
    /// passes over the leaves outside the selection each step. Every
    /// transformation and wrapper of this crate returns `Some(self)`; a
    /// newtype around one of them ([`adam`](crate::adam), say) returns the
    /// inner one's to keep its one-pass path.
    ///
    /// ```
    /// use pytree_optim::{adam, masked, Fused, GradientTransformation, Mask};
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
    /// assert!(Double.fused().is_none());
    /// assert!(GradientTransformation::<Vec<f32>>::fused(&adam(0.1)).is_some());
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
    fn fused(&self) -> Option<&dyn Fused<P, Self::State>>
    where
        P: PyTree,
        P::Leaf: FloatLeaf,
    {
        None
    }

    /// One optimizer step: `update`, then [`apply_updates`], fused into one
    /// pass by the optimizers that can (`sgd`, `adam`, `adamw`: they read
    /// the gradients and write the parameters and moments, 28 bytes per
    /// `f32` parameter for Adam). `grads` is scratch space: afterwards it
    /// holds the updates or is unchanged (fused). It is
    /// [`step_in`] under `Context::default()`.
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
        step_in(self, &Context::default(), params, grads, state)
    }
}

/// The fast path of a [`GradientTransformation`] (what its
/// [`fused`](GradientTransformation::fused) returns): its update and step
/// under a [`Context`], which it honours (it acts on the selected leaves
/// only, runs its loops as the context's [`Exec`](crate::Exec) says and
/// completes its sums over the leaves with the context's reduction), and
/// the pieces a [`chain`] fuses into one pass. Every transformation of
/// this crate implements it; a transformation written elsewhere may (for
/// speed, or to take its global norm across processes with
/// [`global_norm_in`]), and need not: the wrappers compose it correctly
/// either way.
///
/// Only [`update_in`](Fused::update_in) is required; the other methods'
/// defaults are always correct (no validation beyond `update`'s own, a
/// step that is an update and then an addition, no fused pass).
///
/// ```
/// use pytree_optim::{global_norm_in, masked, Context, Fused, GradientTransformation, Mask};
/// use pytree_std::{Error, KeyPath};
///
/// // Divides the updates by their global norm, over the selected leaves
/// // (and across processes, under a sharded optimizer).
/// struct Normalize;
/// impl GradientTransformation<Vec<f32>> for Normalize {
///     type State = ();
///     fn init(&self, _: &Vec<f32>) -> Result<(), Error> { Ok(()) }
///     fn update(&self, u: &mut Vec<f32>, s: &mut (), p: &Vec<f32>) -> Result<(), Error> {
///         Fused::update_in(self, &Context::default(), u, s, p)
///     }
///     fn fused(&self) -> Option<&dyn Fused<Vec<f32>, ()>> { Some(self) }
/// }
/// impl Fused<Vec<f32>, ()> for Normalize {
///     fn update_in(&self, cx: &Context<'_>, u: &mut Vec<f32>, _: &mut (), _: &Vec<f32>) -> Result<(), Error> {
///         let n = global_norm_in(cx, &*u)? as f32;
///         let sel = |i: usize| cx.selection().is_none_or(|m| m.get(i));
///         u.iter_mut().enumerate().filter(|(i, _)| sel(*i)).for_each(|(_, x)| *x /= n);
///         Ok(())
///     }
/// }
/// let opt = masked(Normalize, Mask::new(|p: &KeyPath| p.to_string() != "[2]"));
/// let params = vec![0.0f32; 3];
/// let mut state = opt.init(&params)?;
/// let mut u = vec![3.0f32, 4.0, 7.0];
/// opt.update(&mut u, &mut state, &params)?;
/// assert_eq!(u, [0.6, 0.8, 7.0]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub trait Fused<P, S>
where
    P: PyTree,
    P::Leaf: FloatLeaf,
{
    /// Validates, changing nothing, what [`update_in`](Fused::update_in) and
    /// [`step_in`](Fused::step_in) check before their first write: that
    /// `updates` and the trees in `state` have the structure and leaf
    /// shapes of `params`, and that the state's masks were evaluated for a
    /// tree of as many leaves. [`chain`] calls it on every stage before
    /// running the first, so that a stage that would refuse (a stale
    /// state, say) refuses before an earlier one has changed anything.
    /// The default accepts everything.
    ///
    /// ```
    /// use pytree_optim::{adam, GradientTransformation};
    /// let opt = adam(0.1);
    /// let state = opt.init(&vec![1.0f32, 2.0])?;
    /// let fast = opt.fused().unwrap();
    /// assert!(fast.validate(&vec![0.0, 0.0], &state, &vec![1.0, 2.0]).is_ok());
    /// let err = fast.validate(&vec![0.0], &state, &vec![1.0]).unwrap_err();
    /// assert_eq!(err.to_string(), "tree 1 at <root>: sequence length mismatch: expected 1, found 2");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn validate(&self, updates: &P, state: &S, params: &P) -> Result<(), Error> {
        let _ = (updates, state, params);
        Ok(())
    }

    /// [`GradientTransformation::update`] under `cx`: at the leaves `cx`
    /// selects only, its loops run as `cx` says, its sums over the leaves
    /// completed by `cx`'s reduction.
    ///
    /// ```
    /// use pytree_optim::{scale, Context, GradientTransformation, Mask};
    /// use pytree_std::KeyPath;
    /// let (params, mut u) = (vec![0.0f32; 2], vec![1.0f32, 1.0]);
    /// let second = Mask::new(|p: &KeyPath| p.to_string() == "[1]").on(&params);
    /// let opt = scale(3.0);
    /// let mut s = opt.init(&params)?;
    /// opt.fused().unwrap().update_in(&Context::default().select(&second), &mut u, &mut s, &params)?;
    /// assert_eq!(u, [1.0, 3.0]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn update_in(
        &self,
        cx: &Context<'_>,
        updates: &mut P,
        state: &mut S,
        params: &P,
    ) -> Result<(), Error>;

    /// [`GradientTransformation::step`] under `cx`: the default is
    /// [`update_in`](Fused::update_in), then the updates added to the parameters
    /// at the selected leaves.
    ///
    /// ```
    /// use pytree_optim::{adam, Context, GradientTransformation};
    /// let mut params = vec![1.0f32];
    /// let opt = adam(0.1);
    /// let mut state = opt.init(&params)?;
    /// opt.fused().unwrap().step_in(&Context::default(), &mut params, &mut vec![2.0], &mut state)?;
    /// assert_eq!(params, [0.9]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn step_in(
        &self,
        cx: &Context<'_>,
        params: &mut P,
        grads: &mut P,
        state: &mut S,
    ) -> Result<(), Error> {
        self.update_in(cx, grads, state, params)?;
        walk(cx, [params], [&*grads], &crate::rules::AddTo)
    }

    /// Whether [`step_in`](Fused::step_in) reads the gradients without changing
    /// them and changes the parameters only at the leaves selected (the
    /// fused optimizers, `sgd`, `adam`, `adamw`, the scalings and
    /// [`set_to_zero`](crate::set_to_zero) say so): then
    /// [`multi_transform`](crate::multi_transform) runs its groups' steps
    /// one after the other on the same trees, one pass over the elements in
    /// all, instead of updating a copy of the gradients per group. The
    /// default is `false`, which is always correct.
    ///
    /// ```
    /// use pytree_optim::{adam, clip_by_global_norm, GradientTransformation};
    /// assert!(GradientTransformation::<Vec<f32>>::fused(&adam(0.1)).is_some_and(|f| f.step_is_fused()));
    /// assert!(!GradientTransformation::<Vec<f32>>::fused(&clip_by_global_norm(0.1)).unwrap().step_is_fused());
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
    /// assert!(GradientTransformation::<Vec<f32>>::fused(&scale_by_learning_rate(0.1)).unwrap().is_tail());
    /// assert!(!GradientTransformation::<Vec<f32>>::fused(&scale_by_adam()).unwrap().is_tail());
    /// ```
    fn is_tail(&self) -> bool {
        false
    }

    /// The [`Tail`] this transformation applies at the step `state` is at
    /// (`None` if it is not one, see [`is_tail`](Fused::is_tail)).
    ///
    /// ```
    /// use pytree_optim::{scale_by_learning_rate, GradientTransformation};
    /// let opt = scale_by_learning_rate(0.5);
    /// let state = opt.init(&vec![1.0f32])?;
    /// assert_eq!(opt.fused().unwrap().tail(&state, &vec![1.0]).map(|t| t.factor), Some(-0.5));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn tail(&self, state: &S, params: &P) -> Option<Tail> {
        let _ = (state, params);
        None
    }

    /// Advances `state` as [`update_in`](Fused::update_in) would, without
    /// touching any tree: what a [`chain`] calls on a [`Tail`] that it
    /// fused into the previous stage's pass. The default does nothing.
    ///
    /// ```
    /// use pytree_optim::{scale_by_learning_rate, GradientTransformation};
    /// let opt = scale_by_learning_rate(0.5);
    /// let mut state = opt.init(&vec![1.0f32])?;
    /// opt.fused().unwrap().advance(&mut state, &vec![1.0]);
    /// assert_eq!(state.count, 1);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn advance(&self, state: &mut S, params: &P) {
        let _ = (state, params);
    }

    /// This transformation's update followed by `tail`, in one pass, into
    /// `target` (the updates in place, or added to the parameters: a fused
    /// step), under `cx`, advancing `state`; `Ok(false)`, having changed
    /// nothing, if it has no such pass (the default). [`chain`] calls it
    /// with the next stage's [`Tail`]; validated by the caller.
    ///
    /// ```
    /// use pytree_optim::{scale_by_adam, Context, GradientTransformation, Tail, Target};
    /// let opt = scale_by_adam();
    /// let mut p = vec![1.0f32];
    /// let mut state = opt.init(&p)?;
    /// let mut target = Target::Params { params: &mut p, grads: &vec![2.0] };
    /// let fast = opt.fused().unwrap();
    /// assert!(fast.run_fused(&Context::default(), &mut target, &mut state, &Tail::scale(-0.1))?);
    /// assert_eq!(p, [0.9]); // Adam's first step: -lr * sign(g)
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn run_fused(
        &self,
        cx: &Context<'_>,
        target: &mut Target<'_, P>,
        state: &mut S,
        tail: &Tail,
    ) -> Result<bool, Error> {
        let _ = (cx, target, state, tail);
        Ok(false)
    }
}

/// Runs `t`'s update under `cx`: its [`Fused::update_in`] if it has the fast
/// path ([`GradientTransformation::fused`]), else its plain
/// [`update`](GradientTransformation::update) with the leaves outside
/// `cx`'s selection guarded (given zeros as the updates, then put back as
/// they were), so that a transformation written elsewhere composes with
/// every wrapper.
///
/// ```
/// use pytree_optim::{scale, update_in, Context, GradientTransformation, Mask};
/// use pytree_std::KeyPath;
/// let params = vec![0.0f32; 2];
/// let first = Mask::new(|p: &KeyPath| p.to_string() == "[0]").on(&params);
/// let opt = scale(2.0);
/// let mut s = opt.init(&params)?;
/// let mut u = vec![1.0f32, 1.0];
/// update_in(&opt, &Context::default().select(&first), &mut u, &mut s, &params)?;
/// assert_eq!(u, [2.0, 1.0]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn update_in<P, T>(
    t: &T,
    cx: &Context<'_>,
    updates: &mut P,
    state: &mut T::State,
    params: &P,
) -> Result<(), Error>
where
    P: PyTree,
    P::Leaf: FloatLeaf,
    T: GradientTransformation<P> + ?Sized,
{
    if let Some(fast) = t.fused() {
        return fast.update_in(cx, updates, state, params);
    }
    let Some(mask) = cx.selection() else {
        return t.update(updates, state, params);
    };
    let mask = first_occurrences(mask.clone(), params);
    same_shape(params, updates)?;
    let outside = cx.only(mask.not());
    let mut kept = zeros(&*updates)?;
    walk(&outside, [&mut kept], [&*updates], &crate::rules::Assign)?;
    walk(&outside, [&mut *updates], [], &crate::rules::Zero)?;
    let result = t.update(&mut *updates, state, params);
    walk(&outside, [updates], [&kept], &crate::rules::Assign)?;
    result
}

/// Runs `t`'s step under `cx`: its [`Fused::step_in`] if it has the fast
/// path, else [`update_in`] followed by adding the updates to the
/// parameters at the leaves `cx` selects. A sharded optimizer (pytree-dist's
/// ZeRO-1) steps its shard with a context whose
/// [`leaf_sums`](Context::leaf_sums) completes the global norms.
///
/// ```
/// use pytree_optim::{chain, clip_by_global_norm, sgd, step_in, Context, GradientTransformation};
/// // Another process holds a leaf with a sum of squares of 9 at index 1.
/// let other = |sums: &mut [f64]| { sums[1] += 9.0; Ok(()) };
/// let opt = chain(clip_by_global_norm(1.0), sgd(1.0));
/// let mut params = vec![0.0f32, 0.0];
/// let mut state = opt.init(&params)?;
/// step_in(&opt, &Context::default().leaf_sums(&other), &mut params, &mut vec![4.0, 0.0], &mut state)?;
/// assert_eq!(params, [-0.8, 0.0]); // the norm is 5, not 4
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn step_in<P, T>(
    t: &T,
    cx: &Context<'_>,
    params: &mut P,
    grads: &mut P,
    state: &mut T::State,
) -> Result<(), Error>
where
    P: PyTree,
    P::Leaf: FloatLeaf,
    T: GradientTransformation<P> + ?Sized,
{
    if let Some(fast) = t.fused() {
        return fast.step_in(cx, params, grads, state);
    }
    update_in(t, cx, grads, state, params)?;
    walk(cx, [params], [&*grads], &crate::rules::AddTo)
}

/// `t`'s [`Fused::validate`], or (no fast path) nothing to check before
/// its own `update`.
pub(crate) fn validate_of<P, T>(
    t: &T,
    updates: &P,
    state: &T::State,
    params: &P,
) -> Result<(), Error>
where
    P: PyTree,
    P::Leaf: FloatLeaf,
    T: GradientTransformation<P> + ?Sized,
{
    t.fused()
        .map_or(Ok(()), |f| f.validate(updates, state, params))
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
    walk(
        &Context::default(),
        [params],
        [updates],
        &crate::rules::AddTo,
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
    global_norm_in(&Context::default(), tree)
}

/// The global L2 norm of a tree under `cx`: over the leaves `cx` selects,
/// each leaf's sum of squares completed by `cx`'s reduction
/// ([`Context::leaf_sums`]: the leaves other processes hold, under a
/// sharded optimizer), added up in leaf order, then the square root. A
/// transformation written elsewhere that needs the norm of the whole
/// tree takes it from here, in its [`Fused::update_in`].
///
/// ```
/// use pytree_optim::{global_norm_in, Context, Mask};
/// use pytree_std::KeyPath;
/// let tree = vec![3.0f32, 4.0, 12.0];
/// let two = Mask::new(|p: &KeyPath| p.to_string() != "[2]").on(&tree);
/// assert_eq!(global_norm_in(&Context::default().select(&two), &tree)?, 5.0);
/// assert_eq!(global_norm_in(&Context::default(), &tree)?, 13.0);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn global_norm_in<P>(cx: &Context<'_>, tree: &P) -> Result<f64, Error>
where
    P: Flatten<Std>,
    P::Leaf: FloatLeaf,
{
    let mask = crate::context::selected(cx, tree)?;
    Ok(crate::context::sum_squares(cx, tree, tree, &mask)?.sqrt())
}

/// The [`Fused::update_in`] and [`Fused::step_in`] of a transformation
/// whose whole work is its fused pass (`scale_by_adam`, `trace`): one pass
/// each ([`update_in_one_pass`], [`step_in_one_pass`]), for the leaf tree
/// `P` of the enclosing impl and the state type given.
macro_rules! update_and_step_in_one_pass {
    ($state:ty) => {
        fn update_in(
            &self,
            cx: &Context<'_>,
            updates: &mut P,
            state: &mut $state,
            params: &P,
        ) -> Result<(), Error> {
            crate::gradient_transformation::update_in_one_pass(self, cx, updates, state, params)
                .map(drop)
        }

        fn step_in(
            &self,
            cx: &Context<'_>,
            params: &mut P,
            grads: &mut P,
            state: &mut $state,
        ) -> Result<(), Error> {
            crate::gradient_transformation::step_in_one_pass(self, cx, params, grads, state)
                .map(drop)
        }
    };
}
pub(crate) use update_and_step_in_one_pass;

/// The `update` and `fused` of a [`GradientTransformation`] that is its
/// own [`Fused`] form: `update` is [`Fused::update_in`] under the default
/// context, for the leaf tree `P` of the enclosing impl.
macro_rules! update_through_fused {
    () => {
        fn update(
            &self,
            updates: &mut P,
            state: &mut Self::State,
            params: &P,
        ) -> Result<(), Error> {
            Fused::update_in(self, &Context::default(), updates, state, params)
        }

        fn fused(&self) -> Option<&dyn Fused<P, Self::State>> {
            Some(self)
        }
    };
}
pub(crate) use update_through_fused;

/// `update` in one pass ([`Fused::run_fused`], no tail), validated first:
/// `Ok(false)`, having changed nothing, if `t` has no such pass. All of
/// `update` for `scale_by_adam` and `trace`.
pub(crate) fn update_in_one_pass<P, S, T: Fused<P, S> + ?Sized>(
    t: &T,
    cx: &Context<'_>,
    updates: &mut P,
    state: &mut S,
    params: &P,
) -> Result<bool, Error>
where
    P: PyTree,
    P::Leaf: FloatLeaf,
{
    t.validate(updates, state, params)?;
    let target = &mut Target::Updates { updates, params };
    t.run_fused(cx, target, state, &Tail::scale(1.0))
}

/// `step` in one pass over the parameters, reading the gradients; see
/// [`update_in_one_pass`].
pub(crate) fn step_in_one_pass<P, S, T: Fused<P, S> + ?Sized>(
    t: &T,
    cx: &Context<'_>,
    params: &mut P,
    grads: &mut P,
    state: &mut S,
) -> Result<bool, Error>
where
    P: PyTree,
    P::Leaf: FloatLeaf,
{
    t.validate(grads, state, params)?;
    let target = &mut Target::Params {
        params,
        grads: &*grads,
    };
    t.run_fused(cx, target, state, &Tail::scale(1.0))
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
/// [`validate`](Fused::validate)d before the first runs, so a
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
    P: PyTree,
    P::Leaf: FloatLeaf,
    A: GradientTransformation<P>,
    B: GradientTransformation<P>,
{
    type State = (A::State, B::State);

    fn init(&self, params: &P) -> Result<Self::State, Error> {
        Ok((self.first.init(params)?, self.second.init(params)?))
    }

    update_through_fused!();
}

impl<P, A, B> Fused<P, (A::State, B::State)> for Chain<A, B>
where
    P: PyTree,
    P::Leaf: FloatLeaf,
    A: GradientTransformation<P>,
    B: GradientTransformation<P>,
{
    fn validate(&self, updates: &P, state: &(A::State, B::State), params: &P) -> Result<(), Error> {
        validate_of(&self.first, updates, &state.0, params)?;
        validate_of(&self.second, updates, &state.1, params)
    }

    fn step_is_fused(&self) -> bool {
        self.first.fused().is_some_and(|f| f.step_is_fused())
            && self.second.fused().is_some_and(|f| f.is_tail())
    }

    fn is_tail(&self) -> bool {
        self.first.fused().is_some_and(|f| f.is_tail())
            && self.second.fused().is_some_and(|f| f.is_tail())
    }

    fn tail(&self, state: &(A::State, B::State), params: &P) -> Option<Tail> {
        let first = self.first.fused()?.tail(&state.0, params)?;
        first.then(self.second.fused()?.tail(&state.1, params)?)
    }

    fn advance(&self, state: &mut (A::State, B::State), params: &P) {
        if let Some(f) = self.first.fused() {
            f.advance(&mut state.0, params);
        }
        if let Some(f) = self.second.fused() {
            f.advance(&mut state.1, params);
        }
    }

    fn run_fused(
        &self,
        cx: &Context<'_>,
        target: &mut Target<'_, P>,
        state: &mut (A::State, B::State),
        tail: &Tail,
    ) -> Result<bool, Error> {
        // `first`, with `second` (a tail) and then `tail` fused into it.
        let (Some(first), Some(second)) = (self.first.fused(), self.second.fused()) else {
            return Ok(false);
        };
        let Some(mine) = second.tail(&state.1, target.params()) else {
            return Ok(false);
        };
        let Some(both) = mine.then(tail.clone()) else {
            return Ok(false);
        };
        if !first.run_fused(cx, target, &mut state.0, &both)? {
            return Ok(false);
        }
        second.advance(&mut state.1, target.params());
        Ok(true)
    }

    fn update_in(
        &self,
        cx: &Context<'_>,
        updates: &mut P,
        state: &mut (A::State, B::State),
        params: &P,
    ) -> Result<(), Error> {
        if update_in_one_pass(self, cx, updates, state, params)? {
            return Ok(());
        }
        update_in(&self.first, cx, updates, &mut state.0, params)?;
        update_in(&self.second, cx, updates, &mut state.1, params)
    }

    fn step_in(
        &self,
        cx: &Context<'_>,
        params: &mut P,
        grads: &mut P,
        state: &mut (A::State, B::State),
    ) -> Result<(), Error> {
        if step_in_one_pass(self, cx, params, grads, state)? {
            return Ok(());
        }
        update_in(&self.first, cx, grads, &mut state.0, params)?;
        step_in(&self.second, cx, params, grads, &mut state.1)
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

    update_through_fused!();
}

impl<P, T> Fused<P, Option<T::State>> for Option<T>
where
    P: PyTree,
    P::Leaf: FloatLeaf,
    T: GradientTransformation<P>,
{
    fn validate(&self, updates: &P, state: &Option<T::State>, params: &P) -> Result<(), Error> {
        match (self, state) {
            (Some(t), Some(s)) => validate_of(t, updates, s, params),
            (None, None) => crate::context::same_shape(params, updates),
            _ => Err(Error::custom(
                "optimizer state mismatch: the state was built by init for another transformation (Some and None)",
            )),
        }
    }

    fn step_is_fused(&self) -> bool {
        self.as_ref()
            .is_none_or(|t| t.fused().is_some_and(|f| f.step_is_fused()))
    }

    fn is_tail(&self) -> bool {
        self.as_ref()
            .is_some_and(|t| t.fused().is_some_and(|f| f.is_tail()))
    }

    fn tail(&self, state: &Option<T::State>, params: &P) -> Option<Tail> {
        match (self, state) {
            (Some(t), Some(s)) => t.fused()?.tail(s, params),
            _ => None,
        }
    }

    fn advance(&self, state: &mut Option<T::State>, params: &P) {
        if let (Some(t), Some(s)) = (self, state) {
            if let Some(f) = t.fused() {
                f.advance(s, params);
            }
        }
    }

    fn run_fused(
        &self,
        cx: &Context<'_>,
        target: &mut Target<'_, P>,
        state: &mut Option<T::State>,
        tail: &Tail,
    ) -> Result<bool, Error> {
        match (self, state) {
            (Some(t), Some(s)) => match t.fused() {
                Some(f) => f.run_fused(cx, target, s, tail),
                None => Ok(false),
            },
            (None, None) => tail.run(cx, target).map(|()| true),
            _ => Ok(false),
        }
    }

    fn update_in(
        &self,
        cx: &Context<'_>,
        updates: &mut P,
        state: &mut Option<T::State>,
        params: &P,
    ) -> Result<(), Error> {
        Fused::validate(self, updates, state, params)?;
        match (self, state) {
            (Some(t), Some(s)) => update_in(t, cx, updates, s, params),
            _ => Ok(()),
        }
    }

    fn step_in(
        &self,
        cx: &Context<'_>,
        params: &mut P,
        grads: &mut P,
        state: &mut Option<T::State>,
    ) -> Result<(), Error> {
        Fused::validate(self, grads, state, params)?;
        match (self, state) {
            (Some(t), Some(s)) => step_in(t, cx, params, grads, s),
            _ => walk(cx, [params], [&*grads], &crate::rules::AddTo),
        }
    }
}
