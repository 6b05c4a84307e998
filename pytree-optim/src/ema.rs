//! Exponential moving averages, in the two conventions, each named by what
//! it averages: [`EmaOfParams`], the average *of the parameters* (Polyak
//! averaging for evaluation, kept beside the training parameters; it
//! starts as a copy of them: torch's `AveragedModel` with
//! `get_ema_multi_avg_fn(decay)`, timm's `ModelEma`), and [`ema`], optax's
//! `ema(decay, debias)` under optax's name, a transformation of the
//! *updates* ([`EmaOfUpdates`]) whose average starts at zero, with optional
//! bias correction.

use pytree_std::{Error, Leaf, PyTree};

use crate::context::{
    first_occurrences, same_shape, selected, walk, walk_leaves, zeros, Context, Scalar,
};
use crate::gradient_transformation::{update_through_fused, Fused, GradientTransformation};
use crate::mask::{LeafMask, Mask};
use crate::rules::{Assign, Average};
use pytree_std::elements::Exec;
use pytree_std::elements::FloatLeaf;

/// An exponential moving average of a tree of parameters: after each
/// training step, `average = decay * average + (1 - decay) * params`
/// (optax's `incremental_update` with step size `1 - decay`), in one pass.
/// It starts as a copy of the parameters (the parameter-average
/// convention of torch's `AveragedModel(model,
/// multi_avg_fn=get_ema_multi_avg_fn(decay))`; optax's `ema`, which
/// starts from zeros and corrects the bias, is [`ema`]). Leaves outside
/// the mask (by
/// default those of kind `"state"`, such as running statistics) are copied
/// from the parameters instead of averaged.
///
/// ```
/// use pytree_optim::EmaOfParams;
/// let mut params = vec![0.0f64, 10.0];
/// let mut ema = EmaOfParams::new(0.9, &params)?;
/// params[0] = 1.0;
/// ema.update(&params)?;
/// assert!((ema.average()[0] - 0.1).abs() < 1e-12);
/// assert_eq!(ema.average()[1], 10.0);
/// assert_eq!(ema.count(), 1);
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct EmaOfParams<P> {
    decay: f64,
    average: P,
    count: u64,
    mask: LeafMask,
    exec: Exec,
}

impl<P> EmaOfParams<P>
where
    P: PyTree,
    P::Leaf: FloatLeaf,
{
    /// An average with decay `decay` (in `[0, 1]`: 0.999 keeps about the
    /// last thousand steps) starting at `params`, averaging the leaves
    /// where [`Mask::params`] holds.
    ///
    /// ```
    /// let ema = pytree_optim::EmaOfParams::new(0.99, &(1.0f32, 2.0f32))?;
    /// assert_eq!(ema.average(), &(1.0, 2.0));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn new(decay: f64, params: &P) -> Result<Self, Error> {
        Self::with_mask(decay, params, Mask::params())
    }

    /// [`new`](EmaOfParams::new) averaging where `mask` holds (copying elsewhere).
    ///
    /// ```
    /// use pytree_optim::{EmaOfParams, Mask};
    /// let mut ema = EmaOfParams::with_mask(0.5, &vec![0.0f32, 0.0], Mask::all())?;
    /// ema.update(&vec![2.0, 4.0])?;
    /// assert_eq!(ema.average(), &vec![1.0, 2.0]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn with_mask(decay: f64, params: &P, mask: Mask) -> Result<Self, Error> {
        let average = pytree_std::walk::map_n(params, [], |x, []| {
            let mut z = P::Leaf::zeros_like(x.clone()).map_err(|e| e.kind().to_string())?;
            P::Leaf::zip_update([z.lend_mut()], [x], Exec::Sequential, &Assign)
                .map_err(|e| e.kind().to_string())?;
            Ok::<_, String>(z)
        })?;
        Ok(EmaOfParams {
            decay,
            average,
            count: 0,
            mask: first_occurrences(mask.on(params), params),
            exec: Exec::Sequential,
        })
    }

    /// Runs the element loops as `exec` says.
    ///
    /// ```
    /// use pytree_optim::{EmaOfParams, Exec};
    /// let ema = EmaOfParams::new(0.9, &vec![1.0f64])?.exec(Exec::Sequential);
    /// assert_eq!(ema.average(), &vec![1.0]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn exec(mut self, exec: Exec) -> Self {
        self.exec = exec;
        self
    }

    /// Moves the average towards `params`; `params` of another structure
    /// or leaf shape are an error naming the path, and nothing changes.
    ///
    /// ```
    /// let mut ema = pytree_optim::EmaOfParams::new(0.5, &vec![0.0f32])?;
    /// ema.update(&vec![1.0])?;
    /// ema.update(&vec![1.0])?;
    /// assert_eq!(ema.average(), &vec![0.75]);
    /// assert!(ema.update(&vec![1.0, 2.0]).is_err());
    /// assert_eq!(ema.count(), 2);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn update(&mut self, params: &P) -> Result<(), Error> {
        let average = Average::<Scalar<P>>::new(self.decay, None);
        let cx = Context::default().exec(self.exec).select(&self.mask);
        let mask = selected(&cx, params)?;
        walk_leaves(&cx, [&mut self.average], [params], |i, ms, rs, exec| {
            if mask.get(i) {
                P::Leaf::zip_update(ms, rs, exec, &average)
            } else {
                P::Leaf::zip_update(ms, rs, exec, &Assign)
            }
        })?;
        self.count += 1;
        Ok(())
    }

    /// The average.
    ///
    /// ```
    /// assert_eq!(pytree_optim::EmaOfParams::new(0.9, &vec![3.0f32])?.average(), &vec![3.0]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn average(&self) -> &P {
        &self.average
    }

    /// The average, by value.
    ///
    /// ```
    /// assert_eq!(pytree_optim::EmaOfParams::new(0.9, &vec![3.0f32])?.into_average(), vec![3.0]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn into_average(self) -> P {
        self.average
    }

    /// The number of updates so far.
    ///
    /// ```
    /// assert_eq!(pytree_optim::EmaOfParams::new(0.9, &vec![3.0f32])?.count(), 0);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The decay.
    ///
    /// ```
    /// assert_eq!(pytree_optim::EmaOfParams::new(0.9, &vec![3.0f32])?.decay(), 0.9);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn decay(&self) -> f64 {
        self.decay
    }
}

/// optax's `ema(decay, debias)`: a transformation that replaces the
/// updates by their exponential moving average `e = (1 - decay) * u +
/// decay * e`, which starts at **zero** (not at the parameters, as [`EmaOfParams`]
/// does), divided by `1 - decay^t` after `t` updates when `debias` is true
/// (the bias correction that undoes the start at zero: with a constant
/// input the corrected average is that input from the first step). In a
/// [`chain`](crate::chain) before a learning-rate [`scale`](crate::scale)
/// it is momentum in the "EMA" form.
///
/// ```
/// use pytree_optim::{ema, GradientTransformation};
/// let params = vec![0.0f64];
/// let (biased, debiased) = (ema(0.5, false), ema(0.5, true));
/// let (mut sb, mut sd) = (biased.init(&params)?, debiased.init(&params)?);
/// for _ in 0..2 {
///     let (mut a, mut b) = (vec![4.0], vec![4.0]);
///     biased.update(&mut a, &mut sb, &params)?;
///     debiased.update(&mut b, &mut sd, &params)?;
///     assert_eq!(b, [4.0]);              // corrected: the constant input itself
/// }
/// assert_eq!(sb.ema, [3.0]);                 // 0 -> 2 -> 3, from zero
/// assert_eq!(sd.count, 2);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn ema(decay: f64, debias: bool) -> EmaOfUpdates {
    EmaOfUpdates { decay, debias }
}

/// See [`ema`].
///
/// ```
/// let t = pytree_optim::ema(0.9, true);
/// assert_eq!((t.decay, t.debias), (0.9, true));
/// ```
#[derive(Clone, Debug)]
pub struct EmaOfUpdates {
    /// The decay of the average (in `[0, 1)`).
    pub decay: f64,
    /// Whether the output is bias-corrected (divided by `1 - decay^t`).
    pub debias: bool,
}

/// The state of [`ema`] (optax's `EmaState`): the step count (a static
/// field, saved in a checkpoint's TreeDef) and the average as a tree of
/// the parameters' structure (tensors `ema.<path>`).
///
/// ```
/// use pytree_optim::GradientTransformation;
/// let s = pytree_optim::ema(0.9, true).init(&vec![1.0f32, 2.0])?;
/// assert_eq!((s.count, &s.ema), (0, &vec![0.0, 0.0]));
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct EmaState<P> {
    /// Updates done so far.
    #[pytree(static)]
    pub count: u64,
    /// The average of the updates.
    pub ema: P,
}

impl<P> GradientTransformation<P> for EmaOfUpdates
where
    P: PyTree,
    P::Leaf: FloatLeaf,
{
    type State = EmaState<P>;

    fn init(&self, params: &P) -> Result<EmaState<P>, Error> {
        Ok(EmaState {
            count: 0,
            ema: zeros(params)?,
        })
    }

    update_through_fused!();
}

impl<P> Fused<P, EmaState<P>> for EmaOfUpdates
where
    P: PyTree,
    P::Leaf: FloatLeaf,
{
    fn validate(&self, updates: &P, state: &EmaState<P>, params: &P) -> Result<(), Error> {
        same_shape(params, updates)?;
        same_shape(params, &state.ema)
    }

    fn update_in(
        &self,
        cx: &Context<'_>,
        updates: &mut P,
        state: &mut EmaState<P>,
        params: &P,
    ) -> Result<(), Error> {
        Fused::validate(self, updates, state, params)?;
        let t = state.count.saturating_add(1);
        let correction = self.debias.then(|| 1.0 - self.decay.powf(t as f64));
        let average = Average::<Scalar<P>>::new(self.decay, correction);
        walk(cx, [updates, &mut state.ema], [], &average)?;
        state.count = t;
        Ok(())
    }
}
