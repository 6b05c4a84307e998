//! What one fused pass of an optimizer works on: the [`Target`] it
//! writes (the updates, or the parameters in a fused `step`) and the
//! [`Tail`] it ends with (the per-leaf scaling and decay a [`chain`]
//! fuses into the previous stage's pass).
//!
//! [`chain`]: crate::chain

use crate::mask::LeafMask;

/// Where a fused pass
/// ([`Fused::run_fused`](crate::Fused::run_fused))
/// writes its result.
///
/// ```
/// use pytree_optim::Target;
/// let (mut u, p) = (vec![1.0f32], vec![0.0f32]);
/// let t = Target::Updates { updates: &mut u, params: &p };
/// assert!(matches!(t, Target::Updates { .. }));
/// ```
#[derive(Debug)]
pub enum Target<'a, P> {
    /// The updates (the gradients on entry), in place: an `update`.
    Updates {
        /// The gradients, then the updates.
        updates: &'a mut P,
        /// The parameters, read.
        params: &'a P,
    },
    /// The parameters, the update added to them: a fused `step`.
    Params {
        /// The parameters, updated.
        params: &'a mut P,
        /// The gradients, read.
        grads: &'a P,
    },
}

impl<P> Target<'_, P> {
    /// The parameters.
    ///
    /// ```
    /// let (mut u, p) = (vec![1.0f32], vec![0.0f32]);
    /// let t = pytree_optim::Target::Updates { updates: &mut u, params: &p };
    /// assert_eq!(t.params(), &[0.0]);
    /// ```
    pub fn params(&self) -> &P {
        match self {
            Target::Updates { params, .. } => params,
            Target::Params { params, .. } => params,
        }
    }

    /// The other tree: the updates, or the gradients.
    ///
    /// ```
    /// let (mut u, p) = (vec![1.0f32], vec![0.0f32]);
    /// let t = pytree_optim::Target::Updates { updates: &mut u, params: &p };
    /// assert_eq!(t.updates(), &[1.0]);
    /// ```
    pub fn updates(&self) -> &P {
        match self {
            Target::Updates { updates, .. } => updates,
            Target::Params { grads, .. } => grads,
        }
    }
}

/// A per-leaf map of the updates that a [`chain`](crate::chain) fuses into the previous
/// stage's pass: `u <- factor * (u + weight_decay * p)` on the leaves
/// where `decay_mask` holds (every leaf for `None`), `u <- factor * u`
/// elsewhere, in that order of operations (the bits of the stages run one
/// after the other). [`scale`](crate::scale) and
/// [`scale_by_learning_rate`](crate::scale_by_learning_rate) are tails
/// without decay, [`add_decayed_weights`](crate::add_decayed_weights) one
/// with factor 1, and their chain one with both.
///
/// ```
/// let t = pytree_optim::Tail::scale(-0.1);
/// assert_eq!((t.factor, t.weight_decay), (-0.1, 0.0));
/// assert!(!t.decays(0));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Tail {
    /// The factor of the updates.
    pub factor: f64,
    /// The weight decay added before the factor (0: none).
    pub weight_decay: f64,
    /// The leaves that decay (`None`: every leaf).
    pub decay_mask: Option<LeafMask>,
}

impl Tail {
    /// `u <- factor * u`.
    ///
    /// ```
    /// assert_eq!(pytree_optim::Tail::scale(2.0).factor, 2.0);
    /// ```
    pub fn scale(factor: f64) -> Tail {
        Tail {
            factor,
            weight_decay: 0.0,
            decay_mask: None,
        }
    }

    /// Whether leaf `i` decays.
    ///
    /// ```
    /// let t = pytree_optim::Tail { weight_decay: 0.1, ..pytree_optim::Tail::scale(1.0) };
    /// assert!(t.decays(3));
    /// ```
    #[inline]
    pub fn decays(&self, i: usize) -> bool {
        self.weight_decay != 0.0 && self.decay_mask.as_ref().is_none_or(|m| m.get(i))
    }

    /// `self` then `next` as one tail, if that keeps the order of
    /// operations (`self` a decay with factor 1, or `next` the identity).
    pub(crate) fn then(self, next: Tail) -> Option<Tail> {
        if next.weight_decay == 0.0 && self.factor == 1.0 {
            return Some(Tail {
                factor: next.factor,
                ..self
            });
        }
        (next == Tail::scale(1.0)).then_some(self)
    }
}
