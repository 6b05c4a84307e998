//! The transformations that shape updates before or after an optimizer
//! (optax's `transform.py` and `clipping.py`): the scalings [`scale`],
//! [`scale_by_schedule`], [`scale_by_learning_rate`] and
//! [`add_decayed_weights`] (each a [`Tail`] a chain fuses into the
//! previous stage's pass), [`set_to_zero`] and [`clip_by_global_norm`].
//! They act on the selected leaves (every leaf, or a wrapper's mask: see
//! [`masked`](crate::masked)).

use pytree_std::{Error, PyTree};

use crate::context::{same_shape, selected, sum_squares, walk, Context, Scalar};
use crate::gradient_transformation::{update_through_fused, Fused, GradientTransformation};
use crate::rules::{Clip, Zero};
use crate::rules::{Tail, Target};
use crate::schedule::Schedule;
use pytree_std::elements::Float;
use pytree_std::elements::FloatLeaf;

/// The state of a transformation that keeps nothing (optax's
/// `EmptyState`).
///
/// It is a pytree without leaves, of the parameters' leaf type (`P`'s), so
/// that it can sit in a [`chain`](crate::chain)'s state beside the
/// optimizer's and be saved with it.
///
/// ```
/// use pytree_optim::GradientTransformation;
/// let s = pytree_optim::clip_by_global_norm(1.0).init(&vec![0.0f32; 3])?;
/// assert_eq!(pytree_std::leaves(&s).len(), 0);
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct EmptyState<P> {
    /// Always `None`: gives the state the parameters' leaf type.
    none: Option<P>,
}

impl<P> Default for EmptyState<P> {
    /// The state.
    fn default() -> Self {
        EmptyState { none: None }
    }
}

/// The state of [`scale_by_schedule`] and [`scale_by_learning_rate`]
/// (optax's `ScaleByScheduleState`): the step count, a static field (saved
/// with the TreeDef in a checkpoint's metadata) of a pytree without
/// leaves (see [`EmptyState`]).
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
    /// Always `None`: gives the state the parameters' leaf type.
    none: Option<P>,
}

impl<P> ScheduleState<P> {
    /// Count 0.
    fn new() -> Self {
        ScheduleState {
            count: 0,
            none: None,
        }
    }
}

/// A tail transformation's `update`, `step` and `run_fused`: its
/// [`Tail`] (then `incoming`) in one pass into `target`, then its state
/// advanced.
fn run_as_tail<P, S, T>(
    t: &T,
    cx: &Context<'_>,
    target: &mut Target<'_, P>,
    state: &mut S,
    incoming: &Tail,
) -> Result<bool, Error>
where
    P: PyTree,
    P::Leaf: FloatLeaf,
    T: Fused<P, S>,
{
    let tail = t.tail(state, target.params());
    let Some(tail) = tail.and_then(|own| own.then(incoming.clone())) else {
        return Ok(false);
    };
    tail.run(cx, target)?;
    t.advance(state, target.params());
    Ok(true)
}

/// The `GradientTransformation` and [`Fused`] impls of a transformation
/// whose state `$state<P>` has no leaves (it is `$init`): `validate`
/// checks the updates against the parameters, `update` is the fused one
/// under the default context; the other [`Fused`] methods are given.
macro_rules! leafless_state_transformation {
    ($ty:ty, $state:ident, [$($g:tt)*], $init:expr, { $($methods:tt)* }) => {
        impl<P, $($g)*> GradientTransformation<P> for $ty
        where
            P: PyTree,
            P::Leaf: FloatLeaf,
        {
            type State = $state<P>;

            fn init(&self, _params: &P) -> Result<$state<P>, Error> {
                Ok($init)
            }

            update_through_fused!();
        }

        impl<P, $($g)*> Fused<P, $state<P>> for $ty
        where
            P: PyTree,
            P::Leaf: FloatLeaf,
        {
            fn validate(&self, updates: &P, _: &$state<P>, params: &P) -> Result<(), Error> {
                same_shape(params, updates)
            }

            $($methods)*
        }
    };
}

/// The impls of a [`Tail`] transformation, from its initial state, its
/// `tail_at(&state)` and how a step advances the state.
macro_rules! tail_transformation {
    ($ty:ty, $state:ident, [$($g:tt)*], $init:expr, |$s:ident| $advance:block) => {
        leafless_state_transformation!($ty, $state, [$($g)*], $init, {
            fn step_is_fused(&self) -> bool {
                true
            }

            fn is_tail(&self) -> bool {
                true
            }

            fn tail(&self, state: &$state<P>, _params: &P) -> Option<Tail> {
                Some(self.tail_at(state))
            }

            fn advance(&self, $s: &mut $state<P>, _params: &P) $advance

            fn run_fused(
                &self,
                cx: &Context<'_>,
                target: &mut Target<'_, P>,
                state: &mut $state<P>,
                tail: &Tail,
            ) -> Result<bool, Error> {
                run_as_tail(self, cx, target, state, tail)
            }

            fn update_in(
                &self,
                cx: &Context<'_>,
                updates: &mut P,
                state: &mut $state<P>,
                params: &P,
            ) -> Result<(), Error> {
                let target = &mut Target::Updates { updates, params };
                run_as_tail(self, cx, target, state, &Tail::scale(1.0)).map(drop)
            }

            fn step_in(
                &self,
                cx: &Context<'_>,
                params: &mut P,
                grads: &mut P,
                state: &mut $state<P>,
            ) -> Result<(), Error> {
                let target = &mut Target::Params { params, grads: &*grads };
                run_as_tail(self, cx, target, state, &Tail::scale(1.0)).map(drop)
            }
        });
    };
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
    Scale { factor }
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
}

impl Scale {
    fn tail_at<P>(&self, _: &EmptyState<P>) -> Tail {
        Tail::scale(self.factor)
    }
}

tail_transformation!(Scale, EmptyState, [], EmptyState::default(), |_s| {});

/// Multiplies the updates by `schedule(count)`, `count` the number of
/// updates done before (optax's `scale_by_schedule`).
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
    ScaleBySchedule { schedule }
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
}

impl<S: Schedule> ScaleBySchedule<S> {
    fn tail_at<P>(&self, state: &ScheduleState<P>) -> Tail {
        Tail::scale(self.schedule.value(state.count))
    }
}

tail_transformation!(ScaleBySchedule<S>, ScheduleState, [S: Schedule], ScheduleState::new(), |s| { s.count += 1 });

/// Multiplies the updates by minus the learning rate (optax's
/// `scale_by_learning_rate`, whose `flip_sign` is always on here: the
/// updates are then added to the parameters). `learning_rate` is a number
/// or a [`Schedule`] of the step count; [`adam`](crate::adam) is
/// `chain(scale_by_adam(), scale_by_learning_rate(lr))`.
///
/// ```
/// use pytree_optim::{scale_by_learning_rate, GradientTransformation};
/// let opt = scale_by_learning_rate(0.1);
/// let mut p = vec![1.0f64];
/// let mut state = opt.init(&p)?;
/// opt.step(&mut p, &mut vec![2.0], &mut state)?; // plain SGD
/// assert!((p[0] - 0.8).abs() < 1e-12);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn scale_by_learning_rate<S: Schedule>(learning_rate: S) -> ScaleByLearningRate<S> {
    ScaleByLearningRate { learning_rate }
}

/// See [`scale_by_learning_rate`].
///
/// ```
/// assert_eq!(pytree_optim::scale_by_learning_rate(0.5).learning_rate, 0.5);
/// ```
#[derive(Clone, Debug)]
pub struct ScaleByLearningRate<S> {
    /// The learning rate, a number or a schedule of the step count.
    pub learning_rate: S,
}

impl<S: Schedule> ScaleByLearningRate<S> {
    fn tail_at<P>(&self, state: &ScheduleState<P>) -> Tail {
        Tail::scale(-self.learning_rate.value(state.count))
    }
}

tail_transformation!(ScaleByLearningRate<S>, ScheduleState, [S: Schedule], ScheduleState::new(), |s| { s.count += 1 });

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
    AddDecayedWeights { weight_decay }
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
}

impl AddDecayedWeights {
    fn tail_at<P>(&self, _: &EmptyState<P>) -> Tail {
        Tail {
            weight_decay: self.weight_decay,
            ..Tail::scale(1.0)
        }
    }
}

tail_transformation!(
    AddDecayedWeights,
    EmptyState,
    [],
    EmptyState::default(),
    |_s| {}
);

/// Sets the updates to zero (optax's `set_to_zero`): a frozen group in a
/// [`multi_transform`](crate::multi_transform). Its `step` changes
/// nothing.
///
/// ```
/// use pytree_optim::{set_to_zero, GradientTransformation};
/// let opt = set_to_zero();
/// let mut p = vec![1.0f32, 2.0];
/// let mut s = opt.init(&p)?;
/// let mut u = vec![5.0f32, 5.0];
/// opt.update(&mut u, &mut s, &p)?;
/// assert_eq!(u, [0.0, 0.0]);
/// opt.step(&mut p, &mut vec![5.0, 5.0], &mut s)?;
/// assert_eq!(p, [1.0, 2.0]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn set_to_zero() -> SetToZero {
    SetToZero
}

/// See [`set_to_zero`].
///
/// ```
/// let _frozen: pytree_optim::SetToZero = pytree_optim::set_to_zero();
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SetToZero;

leafless_state_transformation!(SetToZero, EmptyState, [], EmptyState::default(), {
    fn step_is_fused(&self) -> bool {
        true
    }

    fn update_in(
        &self,
        cx: &Context<'_>,
        updates: &mut P,
        _: &mut EmptyState<P>,
        params: &P,
    ) -> Result<(), Error> {
        same_shape(params, updates)?;
        walk(cx, [updates], [], &Zero)
    }

    /// Validates the trees, and changes nothing.
    fn step_in(
        &self,
        cx: &Context<'_>,
        params: &mut P,
        grads: &mut P,
        _: &mut EmptyState<P>,
    ) -> Result<(), Error> {
        same_shape(params, grads)?;
        selected(cx, &*params).map(drop)
    }
});

/// Scales the updates so that their global L2 norm is at most `max_norm`
/// (optax's `clip_by_global_norm`: when the norm `n` is `max_norm` or
/// more, each element `u` becomes `u / n * max_norm`). The norm is taken
/// over the selected leaves (every leaf, or a wrapper's mask), summed in
/// `f64`; two passes (the norm, then the scaling).
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
    ClipByGlobalNorm { max_norm }
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
}

leafless_state_transformation!(ClipByGlobalNorm, EmptyState, [], EmptyState::default(), {
    fn update_in(
        &self,
        cx: &Context<'_>,
        updates: &mut P,
        _: &mut EmptyState<P>,
        params: &P,
    ) -> Result<(), Error> {
        let mask = selected(cx, params)?;
        // A norm over leaves of several processes is summed per leaf on
        // the host.
        if !cx.reduces_leaf_sums()
            && P::Leaf::clip_on_device(
                params,
                updates,
                &|i| mask.get(i),
                self.max_norm,
                cx.exec_mode(),
            )?
        {
            return Ok(());
        }
        // The norm pass also checks the updates against the parameters,
        // before anything is written.
        let norm = sum_squares(cx, params, updates, &mask)?.sqrt();
        if norm < self.max_norm {
            return Ok(());
        }
        let clip = Clip {
            norm: Scalar::<P>::from_f64(norm),
            max: Scalar::<P>::from_f64(self.max_norm),
        };
        walk(cx, [updates], [], &clip)
    }
});
