//! Transformations that shape updates before or after an optimizer:
//! [`clip_by_global_norm`], [`scale`], [`scale_by_schedule`],
//! [`add_decayed_weights`]. Outside their mask the updates pass through
//! unchanged (optax's `masked`).

use pytree_std::{Error, PyTree};

use crate::element::Float;
use crate::gradient_transformation::{
    check_masked, check_updates, walk, GradientTransformation, NoOff, Scalar,
};
use crate::kernel::Exec;
use crate::leaf::FloatLeaf;
use crate::mask::{keep, LeafMask, Mask};
use crate::op::ElementOp;
use crate::options::options;
use crate::schedule::Schedule;

/// The state of a transformation that keeps nothing but its mask on the
/// parameters (optax's `EmptyState`).
///
/// It is a pytree without leaves, of the parameters' leaf type (`P`'s), so
/// that it can sit in a [`chain`](crate::chain)'s state beside the
/// optimizer's and be saved with it; the mask is not saved (see
/// [`LeafMask`]).
///
/// ```
/// use pytree_optim::GradientTransformation;
/// let s = pytree_optim::clip_by_global_norm(1.0).init(&vec![0.0f32; 3])?;
/// assert_eq!(s.mask.len(), 3);
/// assert_eq!(pytree_std::reductions::num_leaves(&s), 0);
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct MaskState<P> {
    /// The mask, on the parameters.
    #[pytree(skip(recomputed))]
    pub mask: LeafMask,
    /// Always `None`: gives the state the parameters' leaf type.
    none: Option<P>,
}

impl<P> MaskState<P> {
    /// The state holding `mask`.
    pub(crate) fn new(mask: LeafMask) -> Self {
        MaskState { mask, none: None }
    }
}

/// Scales the updates so that their global L2 norm is at most `max_norm`
/// (optax's `clip_by_global_norm`: when the norm `n` is `max_norm` or
/// more, each element `u` becomes `u / n * max_norm`). The norm is taken
/// over the leaves in the mask (by default not those of kind `"state"`),
/// summed in `f64`; two passes (the norm, then the scaling).
///
/// ```
/// use pytree_optim::{clip_by_global_norm, GradientTransformation};
/// let params = (0.0f32, 0.0f32);
/// let opt = clip_by_global_norm(1.0);
/// let mut state = opt.init(&params)?;
/// let mut g = (3.0f32, 4.0f32);
/// opt.update(&mut g, &mut state, &params)?;
/// assert_eq!(g, (0.6, 0.8));
/// let mut small = (0.3f32, 0.4f32);
/// opt.update(&mut small, &mut state, &params)?;
/// assert_eq!(small, (0.3, 0.4));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn clip_by_global_norm(max_norm: f64) -> ClipByGlobalNorm {
    ClipByGlobalNorm {
        max_norm,
        mask: Mask::params(),
        exec: Exec::Sequential,
    }
}

/// See [`clip_by_global_norm`].
///
/// ```
/// assert_eq!(pytree_optim::clip_by_global_norm(2.5).max_norm, 2.5);
/// ```
#[derive(Clone, Debug)]
pub struct ClipByGlobalNorm {
    /// The largest global norm let through.
    pub max_norm: f64,
    /// Where it acts (default [`Mask::params`]).
    pub mask: Mask,
    /// How the loops run.
    pub exec: Exec,
}

options!(
    ClipByGlobalNorm,
    "pytree_optim::clip_by_global_norm(1.0)",
    "elsewhere the updates pass through unchanged and do not count in the norm"
);

impl<P> GradientTransformation<P> for ClipByGlobalNorm
where
    P: PyTree,
    P::Leaf: FloatLeaf,
{
    type State = MaskState<P>;

    fn init(&self, params: &P) -> Result<MaskState<P>, Error> {
        Ok(MaskState::new(self.mask.on_params(params)))
    }

    fn check(&self, updates: &P, state: &MaskState<P>, params: &P) -> Result<(), Error> {
        check_masked(params, updates, &state.mask)
    }

    fn update(&self, updates: &mut P, state: &mut MaskState<P>, params: &P) -> Result<(), Error> {
        let fresh = state.mask.fresh(&self.mask, params);
        let mask = fresh.as_ref().unwrap_or(&state.mask);
        P::Leaf::clip_by_global_norm(params, updates, mask, self.max_norm, self.exec)?;
        keep(&mut state.mask, fresh);
        Ok(())
    }
}

/// Multiplies the updates by `factor` (optax's `scale`).
///
/// ```
/// use pytree_optim::{scale, GradientTransformation};
/// let mut g = vec![1.0f32, -2.0];
/// let opt = scale(-0.5);
/// let mut s = opt.init(&g)?;
/// opt.update(&mut g, &mut s, &vec![0.0, 0.0])?;
/// assert_eq!(g, [-0.5, 1.0]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn scale(factor: f64) -> Scale {
    Scale {
        factor,
        mask: Mask::params(),
        exec: Exec::Sequential,
    }
}

/// See [`scale`].
///
/// ```
/// assert_eq!(pytree_optim::scale(3.0).factor, 3.0);
/// ```
#[derive(Clone, Debug)]
pub struct Scale {
    /// The factor.
    pub factor: f64,
    /// Where it acts (default [`Mask::params`]).
    pub mask: Mask,
    /// How the loops run.
    pub exec: Exec,
}

options!(
    Scale,
    "pytree_optim::scale(0.5)",
    "elsewhere the updates pass through unchanged"
);

impl<P> GradientTransformation<P> for Scale
where
    P: PyTree,
    P::Leaf: FloatLeaf,
{
    type State = MaskState<P>;

    fn init(&self, params: &P) -> Result<MaskState<P>, Error> {
        Ok(MaskState::new(self.mask.on_params(params)))
    }

    fn check(&self, updates: &P, state: &MaskState<P>, params: &P) -> Result<(), Error> {
        check_masked(params, updates, &state.mask)
    }

    fn update(&self, updates: &mut P, state: &mut MaskState<P>, params: &P) -> Result<(), Error> {
        let factor = self.factor;
        let f = Scalar::<P>::from_f64(factor);
        check_updates(params, updates)?;
        let fresh = state.mask.fresh(&self.mask, params);
        walk(
            [updates],
            [params],
            fresh.as_ref().unwrap_or(&state.mask),
            self.exec,
            (&|[u], [_]| *u = f * *u, &ElementOp::Scale { factor }),
            None::<(&NoOff<P, 1, 1>, &ElementOp)>,
        )?;
        keep(&mut state.mask, fresh);
        Ok(())
    }
}

/// Multiplies the updates by `schedule(count)`, `count` the number of
/// updates done before (optax's `scale_by_schedule`). With a negated
/// learning-rate schedule it is optax's `scale_by_learning_rate`.
///
/// ```
/// use pytree_optim::{scale_by_schedule, GradientTransformation};
/// let opt = scale_by_schedule(|step: u64| -(step as f64 + 1.0));
/// let params = vec![0.0f32];
/// let mut s = opt.init(&params)?;
/// let (mut a, mut b) = (vec![1.0f32], vec![1.0f32]);
/// opt.update(&mut a, &mut s, &params)?;
/// opt.update(&mut b, &mut s, &params)?;
/// assert_eq!((a[0], b[0], s.count), (-1.0, -2.0, 2));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn scale_by_schedule<S: Schedule>(schedule: S) -> ScaleBySchedule<S> {
    ScaleBySchedule {
        schedule,
        mask: Mask::params(),
        exec: Exec::Sequential,
    }
}

/// See [`scale_by_schedule`].
///
/// ```
/// use pytree_optim::Schedule;
/// assert_eq!(pytree_optim::scale_by_schedule(0.5).schedule.value(7), 0.5);
/// ```
#[derive(Clone, Debug)]
pub struct ScaleBySchedule<S> {
    /// The factor at each step.
    pub schedule: S,
    /// Where it acts (default [`Mask::params`]).
    pub mask: Mask,
    /// How the loops run.
    pub exec: Exec,
}

options!(
    ScaleBySchedule<S>,
    "pytree_optim::scale_by_schedule(0.5)",
    "elsewhere the updates pass through unchanged"
);

/// The state of [`scale_by_schedule`]: the step count and the mask. A
/// pytree without leaves, of the parameters' leaf type, whose count is a
/// static field (saved with the TreeDef in a checkpoint's metadata; see
/// [`MaskState`]).
///
/// ```
/// use pytree_optim::GradientTransformation;
/// assert_eq!(pytree_optim::scale_by_schedule(1.0).init(&vec![0.0f64])?.count, 0);
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct ScheduleState<P> {
    /// Updates done so far.
    #[pytree(static)]
    pub count: u64,
    /// The mask, on the parameters.
    #[pytree(skip(recomputed))]
    pub mask: LeafMask,
    /// Always `None`: gives the state the parameters' leaf type.
    none: Option<P>,
}

impl<P, S> GradientTransformation<P> for ScaleBySchedule<S>
where
    P: PyTree,
    P::Leaf: FloatLeaf,
    S: Schedule,
{
    type State = ScheduleState<P>;

    fn init(&self, params: &P) -> Result<ScheduleState<P>, Error> {
        Ok(ScheduleState {
            count: 0,
            mask: self.mask.on_params(params),
            none: None,
        })
    }

    fn check(&self, updates: &P, state: &ScheduleState<P>, params: &P) -> Result<(), Error> {
        check_masked(params, updates, &state.mask)
    }

    fn update(
        &self,
        updates: &mut P,
        state: &mut ScheduleState<P>,
        params: &P,
    ) -> Result<(), Error> {
        let factor = self.schedule.value(state.count);
        let f = Scalar::<P>::from_f64(factor);
        check_updates(params, updates)?;
        let fresh = state.mask.fresh(&self.mask, params);
        walk(
            [updates],
            [params],
            fresh.as_ref().unwrap_or(&state.mask),
            self.exec,
            (&|[u], [_]| *u = f * *u, &ElementOp::Scale { factor }),
            None::<(&NoOff<P, 1, 1>, &ElementOp)>,
        )?;
        keep(&mut state.mask, fresh);
        state.count += 1;
        Ok(())
    }
}

/// Adds `weight_decay * p` to each update (optax's `add_decayed_weights`;
/// before a learning-rate scaling this is decoupled weight decay, which
/// [`adamw`](crate::adamw) fuses into its pass).
///
/// ```
/// use pytree_optim::{add_decayed_weights, GradientTransformation};
/// let params = vec![2.0f32, -4.0];
/// let opt = add_decayed_weights(0.5);
/// let mut s = opt.init(&params)?;
/// let mut u = vec![1.0f32, 1.0];
/// opt.update(&mut u, &mut s, &params)?;
/// assert_eq!(u, [2.0, -1.0]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn add_decayed_weights(weight_decay: f64) -> AddDecayedWeights {
    AddDecayedWeights {
        weight_decay,
        mask: Mask::params(),
        exec: Exec::Sequential,
    }
}

/// See [`add_decayed_weights`].
///
/// ```
/// assert_eq!(pytree_optim::add_decayed_weights(1e-4).weight_decay, 1e-4);
/// ```
#[derive(Clone, Debug)]
pub struct AddDecayedWeights {
    /// The decay rate.
    pub weight_decay: f64,
    /// Where it acts (default [`Mask::params`]).
    pub mask: Mask,
    /// How the loops run.
    pub exec: Exec,
}

options!(
    AddDecayedWeights,
    "pytree_optim::add_decayed_weights(0.1)",
    "elsewhere the updates pass through unchanged"
);

impl<P> GradientTransformation<P> for AddDecayedWeights
where
    P: PyTree,
    P::Leaf: FloatLeaf,
{
    type State = MaskState<P>;

    fn init(&self, params: &P) -> Result<MaskState<P>, Error> {
        Ok(MaskState::new(self.mask.on_params(params)))
    }

    fn check(&self, updates: &P, state: &MaskState<P>, params: &P) -> Result<(), Error> {
        check_masked(params, updates, &state.mask)
    }

    fn update(&self, updates: &mut P, state: &mut MaskState<P>, params: &P) -> Result<(), Error> {
        let wd = Scalar::<P>::from_f64(self.weight_decay);
        check_updates(params, updates)?;
        let fresh = state.mask.fresh(&self.mask, params);
        walk(
            [updates],
            [params],
            fresh.as_ref().unwrap_or(&state.mask),
            self.exec,
            (
                &|[u], [p]| *u += wd * p,
                &ElementOp::Axpby {
                    a: 1.0,
                    b: self.weight_decay,
                },
            ),
            None::<(&NoOff<P, 1, 1>, &ElementOp)>,
        )?;
        keep(&mut state.mask, fresh);
        Ok(())
    }
}
