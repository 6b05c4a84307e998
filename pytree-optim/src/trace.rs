//! [`trace`] (optax's): momentum, a trace of the updates, one pass over
//! the updates and the trace, or, with a learning-rate [`Tail`] fused in
//! (what [`sgd`](crate::sgd) with momentum is), one pass over the
//! parameters, the gradients and the trace.

use pytree_std::{Error, PyTree};

use crate::context::{same_shape, selected, zeros, Context, Scalar};
use crate::gradient_transformation::{
    update_and_step_in_one_pass, update_through_fused, Fused, GradientTransformation,
};
use crate::rules::{Momentum, TraceUpdate};
use crate::rules::{Tail, Target};
use pytree_std::elements::Float;
use pytree_std::elements::FloatLeaf;

/// Momentum (optax's `trace`): a trace `t = g + decay * t` is kept and the
/// update is `t` (or, with `nesterov`, `g + decay * t`). Followed by
/// [`scale_by_learning_rate`](crate::scale_by_learning_rate) it is
/// [`sgd`](crate::sgd) with momentum.
///
/// ```
/// use pytree_optim::{trace, GradientTransformation};
/// let opt = trace(0.5, false);
/// let params = vec![0.0f64];
/// let mut state = opt.init(&params)?;
/// let (mut a, mut b) = (vec![1.0], vec![1.0]);
/// opt.update(&mut a, &mut state, &params)?;
/// opt.update(&mut b, &mut state, &params)?;
/// assert_eq!((a[0], b[0]), (1.0, 1.5));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn trace(decay: f64, nesterov: bool) -> Trace {
    Trace { decay, nesterov }
}

/// See [`trace`].
///
/// ```
/// let t = pytree_optim::trace(0.9, true);
/// assert_eq!((t.decay, t.nesterov), (0.9, true));
/// ```
#[derive(Clone, Debug)]
pub struct Trace {
    /// The decay of the trace (the momentum).
    pub decay: f64,
    /// Nesterov momentum.
    pub nesterov: bool,
}

/// The state of [`trace`] (optax's `TraceState`): the trace, a tree of the
/// parameters' structure (tensors `trace.<path>` in a checkpoint).
///
/// ```
/// use pytree_optim::GradientTransformation;
/// let s = pytree_optim::trace(0.9, false).init(&(1.0f32, 2.0f32))?;
/// assert_eq!(s.trace, (0.0, 0.0));
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct TraceState<P> {
    /// The trace.
    pub trace: P,
}

impl<P> GradientTransformation<P> for Trace
where
    P: PyTree,
    P::Leaf: FloatLeaf,
{
    type State = TraceState<P>;

    fn init(&self, params: &P) -> Result<TraceState<P>, Error> {
        Ok(TraceState {
            trace: zeros(params)?,
        })
    }

    update_through_fused!();
}

impl<P> Fused<P, TraceState<P>> for Trace
where
    P: PyTree,
    P::Leaf: FloatLeaf,
{
    fn validate(&self, updates: &P, state: &TraceState<P>, params: &P) -> Result<(), Error> {
        same_shape(params, updates)?;
        same_shape(params, &state.trace)
    }

    fn step_is_fused(&self) -> bool {
        true
    }

    update_and_step_in_one_pass!(TraceState<P>);

    /// One pass: `p += factor * d` reading the gradients, or
    /// `u = factor * d`, `d` the traced direction. A tail with weight decay
    /// is not fused (`Ok(false)`).
    fn run_fused(
        &self,
        cx: &Context<'_>,
        target: &mut Target<'_, P>,
        state: &mut TraceState<P>,
        tail: &Tail,
    ) -> Result<bool, Error> {
        if tail.weight_decay != 0.0 {
            return Ok(false);
        }
        let mask = selected(cx, target.params())?;
        let momentum = Momentum {
            mu: Scalar::<P>::from_f64(self.decay),
            nesterov: self.nesterov,
        };
        TraceUpdate::run(cx, momentum, tail, target, [&mut state.trace], &mask)?;
        Ok(true)
    }
}
