//! The optimizers as compositions, as in optax's `alias.py`: [`adam`] is
//! `chain(scale_by_adam(), scale_by_learning_rate(lr))`, [`adamw`] puts
//! [`add_decayed_weights`] between the two, [`sgd`] is
//! `chain(trace(momentum) or identity, scale_by_learning_rate(lr))`. Each
//! runs one fused pass over the parameters, the gradients and the state in
//! `step` (the chain fuses the learning-rate scaling into the previous
//! stage's pass; see [`chain`]).

use crate::adam::{scale_by_adam, ScaleByAdam, ScaleByAdamState};
use crate::gradient_transformation::{chain, Chain};
use crate::mask::Mask;
use crate::schedule::Schedule;
use crate::trace::{trace, Trace, TraceState};
use crate::transform::{
    add_decayed_weights, scale_by_learning_rate, AddDecayedWeights, ScaleByLearningRate,
    ScheduleState,
};
use crate::wrappers::{masked, Masked, MaskedState};

/// The type of [`adam`]: `chain(scale_by_adam(), scale_by_learning_rate(lr))`.
pub type Adam<S> = Chain<ScaleByAdam, ScaleByLearningRate<S>>;

/// The type of [`adamw`]: Adam with the weight decay (masked, by default
/// everywhere) between the two stages.
pub type AdamW<S> = Chain<ScaleByAdam, Chain<Masked<AddDecayedWeights>, ScaleByLearningRate<S>>>;

/// The type of [`sgd`]: the momentum trace, if any, then the learning rate.
pub type Sgd<S> = Chain<Option<Trace>, ScaleByLearningRate<S>>;

/// The state of [`adam`]: Adam's moments (`0.mu.<path>`, `0.nu.<path>`
/// in a checkpoint) and the learning rate's step count.
pub type AdamState<P> = (ScaleByAdamState<P>, ScheduleState<P>);

/// The state of [`adamw`].
pub type AdamWState<P> = (
    ScaleByAdamState<P>,
    (
        MaskedState<crate::transform::EmptyState<P>>,
        ScheduleState<P>,
    ),
);

/// The state of [`sgd`]: the momentum trace (`Some` with momentum) and
/// the learning rate's step count.
pub type SgdState<P> = (Option<TraceState<P>>, ScheduleState<P>);

/// Adam (optax's `adam`): `chain(scale_by_adam(), scale_by_learning_rate(lr))`,
/// moments `m = b1 m + (1 - b1) g`, `v = b2 v + (1 - b2) g²`,
/// bias-corrected, and the update `-lr * m̂ / (sqrt(v̂ + eps_root) + eps)`;
/// defaults `b1 = 0.9`, `b2 = 0.999`, `eps = 1e-8`, `eps_root = 0`. One
/// pass over the parameters, both moments and the gradients (with
/// [`step`](crate::GradientTransformation::step): 28 bytes per `f32`
/// parameter). `learning_rate` is a number or a [`Schedule`].
///
/// ```
/// use pytree_optim::{adam, chain, scale_by_adam, scale_by_learning_rate, Adam, GradientTransformation};
/// use pytree_std::PyTree;
///
/// #[derive(PyTree, Clone, Debug, PartialEq)]
/// struct Model { w: Vec<f64>, b: f64 }
///
/// let opt: Adam<f64> = adam(0.01).b1(0.8);
/// let mut params = Model { w: vec![1.0, 2.0], b: 0.0 };
/// let mut state = opt.init(&params)?;
/// for _ in 0..3 {
///     let mut grads = Model { w: vec![1.0, -1.0], b: 0.0 };
///     opt.step(&mut params, &mut grads, &mut state)?;
/// }
/// // A constant gradient moves each parameter by lr per step, against its sign.
/// assert!((params.w[0] - 0.97).abs() < 1e-9 && (params.w[1] - 2.03).abs() < 1e-9);
/// assert_eq!(params.b, 0.0);
/// assert_eq!(state.0.count, 3);
/// // The same composition, written out.
/// let _: Adam<f64> = chain(scale_by_adam().b1(0.8), scale_by_learning_rate(0.01));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn adam<S: Schedule>(learning_rate: S) -> Adam<S> {
    chain(scale_by_adam(), scale_by_learning_rate(learning_rate))
}

/// AdamW (optax's `adamw`): `chain(scale_by_adam(),
/// masked(add_decayed_weights(weight_decay), mask), scale_by_learning_rate(lr))`,
/// the update `-lr * (m̂ / (sqrt(v̂ + eps_root) + eps) + weight_decay * p)`,
/// fused in one pass. The decay applies where
/// [`weight_decay_mask`](Chain::weight_decay_mask) holds (default: every
/// leaf); optax's default `weight_decay` is `1e-4`.
///
/// ```
/// use pytree_optim::{adamw, GradientTransformation, Mask};
/// use pytree_std::{KeyPath, PyTree};
///
/// #[derive(PyTree, Clone, Debug)]
/// struct Linear { w: Vec<f32>, b: Vec<f32> }
///
/// // No decay on biases.
/// let opt = adamw(1e-3, 0.1).weight_decay_mask(Mask::new(|p: &KeyPath| !p.to_string().starts_with(".b")));
/// let mut params = Linear { w: vec![10.0], b: vec![10.0] };
/// let mut state = opt.init(&params)?;
/// opt.step(&mut params, &mut Linear { w: vec![1.0], b: vec![1.0] }, &mut state)?;
/// assert!((params.w[0] - (10.0 - 1e-3 * (1.0 + 0.1 * 10.0))).abs() < 1e-6);
/// assert!((params.b[0] - (10.0 - 1e-3)).abs() < 1e-6);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn adamw<S: Schedule>(learning_rate: S, weight_decay: f64) -> AdamW<S> {
    chain(
        scale_by_adam(),
        chain(
            masked(add_decayed_weights(weight_decay), Mask::all()),
            scale_by_learning_rate(learning_rate),
        ),
    )
}

/// Stochastic gradient descent (optax's `sgd`): the update is `-lr * g`;
/// with [`momentum`](Chain::momentum) `mu`, a [`trace`] `t = g + mu * t`
/// is kept and the update is `-lr * t` (or, with
/// [`nesterov`](Chain::nesterov), `-lr * (g + mu * t)`). `learning_rate`
/// is a number or a [`Schedule`].
///
/// ```
/// use pytree_optim::{sgd, GradientTransformation};
/// let opt = sgd(0.1).momentum(0.9);
/// let mut p = vec![1.0f64];
/// let mut state = opt.init(&p)?;
/// opt.step(&mut p, &mut vec![1.0], &mut state)?;   // t = 1,   p = 1 - 0.1
/// opt.step(&mut p, &mut vec![1.0], &mut state)?;   // t = 1.9, p = 0.9 - 0.19
/// assert!((p[0] - 0.71).abs() < 1e-12);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn sgd<S: Schedule>(learning_rate: S) -> Sgd<S> {
    chain(None, scale_by_learning_rate(learning_rate))
}

impl<S> Sgd<S> {
    /// With momentum `decay` (a [`trace`] of the gradients).
    ///
    /// ```
    /// assert_eq!(pytree_optim::sgd(1.0).momentum(0.5).first.map(|t| t.decay), Some(0.5));
    /// ```
    #[must_use]
    pub fn momentum(self, decay: f64) -> Self {
        let nesterov = self.first.as_ref().is_some_and(|t| t.nesterov);
        chain(Some(trace(decay, nesterov)), self.second)
    }

    /// Nesterov momentum (with [`momentum`](Chain::momentum); alone it
    /// does nothing, as optax's).
    ///
    /// ```
    /// use pytree_optim::{sgd, GradientTransformation};
    /// let opt = sgd(1.0).momentum(0.5).nesterov();
    /// let mut p = vec![0.0f64];
    /// let mut state = opt.init(&p)?;
    /// opt.step(&mut p, &mut vec![1.0], &mut state)?;   // t = 1, update -(1 + 0.5 * 1)
    /// assert_eq!(p, [-1.5]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn nesterov(mut self) -> Self {
        if let Some(t) = &mut self.first {
            t.nesterov = true;
        }
        self
    }
}

/// The chain with its first stage's `field` set to `x`.
macro_rules! first_stage {
    ($this:ident, $field:ident, $x:ident) => {
        chain($this.first.$field($x), $this.second)
    };
}

/// The hyperparameters of [`adam`] and [`adamw`], set on their first
/// stage.
impl<T> Chain<ScaleByAdam, T> {
    crate::adam::adam_setters!("pytree_optim::adam(1e-3)", ".first", |self, x| first_stage);
}

impl<S> AdamW<S> {
    /// Applies the weight decay only where `mask` holds (optax's `mask`
    /// argument of `adamw`).
    ///
    /// ```
    /// use pytree_optim::{adamw, GradientTransformation, Mask};
    /// let opt = adamw(0.1, 0.5).weight_decay_mask(Mask::kind("decayed"));
    /// let mut p = vec![1.0f64];
    /// let mut s = opt.init(&p)?;
    /// opt.step(&mut p, &mut vec![1.0], &mut s)?;
    /// assert!((p[0] - 0.9).abs() < 1e-9); // no leaf of kind "decayed": plain Adam
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn weight_decay_mask(mut self, mask: Mask) -> Self {
        self.second.first.mask = mask;
        self
    }
}
