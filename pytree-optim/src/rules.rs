//! Each element update of the optimizers, written once: an
//! [`ElementUpdate`], one function generic over [`Arith`], which runs per
//! element in the leaf types' loops (inlined and vectorized) and, for
//! candle tensors off the CPU, once on whole tensors as operations on
//! their device. The fused updates (Adam, the trace, the tail alone) are
//! a direction followed by a [`Tail`], into the parameters or the updates.
//!
//! What one fused pass works on is defined here too: the [`Target`] it
//! writes (the updates, or the parameters in a fused `step`) and the
//! [`Tail`] it ends with (the per-leaf scaling and decay a
//! [`chain`](crate::chain) fuses into the previous stage's pass).

use pytree_std::elements::{Arith, ElementUpdate, Float, FloatLeaf};
use pytree_std::{Error, Flatten, Std};

use crate::context::{walk_leaves, Context};
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

/// `u = 0`.
pub(crate) struct Zero;

impl<K> ElementUpdate<K, 1, 0> for Zero {
    #[inline(always)]
    fn apply<T: Arith<K>>(&self, [u]: [&mut T; 1], []: [T; 0]) {
        *u = u.zero();
    }
}

/// `x = y`.
pub(crate) struct Assign;

impl<K> ElementUpdate<K, 1, 1> for Assign {
    #[inline(always)]
    fn apply<T: Arith<K>>(&self, [x]: [&mut T; 1], [y]: [T; 1]) {
        *x = y;
    }
}

/// `p = p + u` (`apply_updates`).
pub(crate) struct AddTo;

impl<K> ElementUpdate<K, 1, 1> for AddTo {
    #[inline(always)]
    fn apply<T: Arith<K>>(&self, [p]: [&mut T; 1], [u]: [T; 1]) {
        *p = p.clone() + u;
    }
}

/// `u = u / norm * max` (`clip_by_global_norm`, optax's order).
pub(crate) struct Clip<K> {
    pub(crate) norm: K,
    pub(crate) max: K,
}

impl<K: Float> ElementUpdate<K, 1, 0> for Clip<K> {
    #[inline(always)]
    fn apply<T: Arith<K>>(&self, [u]: [&mut T; 1], []: [T; 0]) {
        *u = u.clone().div_by(self.norm).scale(self.max);
    }
}

/// A moving average: `a = decay * a + (1 - decay) * x` (the average of
/// the parameters); with `of_updates`, `a` is the second tree written and
/// the first, the update `x`, becomes `a / correction` (optax's `ema`;
/// `correction` `None`: no bias correction).
pub(crate) struct Average<K> {
    pub(crate) decay: K,
    pub(crate) one_minus_decay: K,
    pub(crate) correction: Option<K>,
}

impl<K: Float> Average<K> {
    pub(crate) fn new(decay: f64, correction: Option<f64>) -> Self {
        Average {
            decay: K::from_f64(decay),
            one_minus_decay: K::from_f64(1.0 - decay),
            correction: correction.map(K::from_f64),
        }
    }
}

impl<K: Float> ElementUpdate<K, 1, 1> for Average<K> {
    #[inline(always)]
    fn apply<T: Arith<K>>(&self, [a]: [&mut T; 1], [x]: [T; 1]) {
        *a = a.clone().scale(self.decay) + x.scale(self.one_minus_decay);
    }
}

impl<K: Float> ElementUpdate<K, 2, 0> for Average<K> {
    #[inline(always)]
    fn apply<T: Arith<K>>(&self, [u, e]: [&mut T; 2], []: [T; 0]) {
        *e = u.clone().scale(self.one_minus_decay) + e.clone().scale(self.decay);
        *u = match self.correction {
            Some(c) => e.clone().div_by(c),
            None => e.clone(),
        };
    }
}

/// A [`Tail`]'s constants in the element type.
#[derive(Clone, Copy)]
pub(crate) struct TailK<K> {
    factor: K,
    wd: K,
}

impl<K: Float> TailK<K> {
    pub(crate) fn new(tail: &Tail) -> Self {
        TailK {
            factor: K::from_f64(tail.factor),
            wd: K::from_f64(tail.weight_decay),
        }
    }

    /// `p += factor * (d + wd * p)` (`wd * p` where the leaf decays).
    #[inline(always)]
    fn onto_params<T: Arith<K>>(&self, decays: bool, p: &mut T, d: T) {
        let d = if decays {
            d + p.clone().scale(self.wd)
        } else {
            d
        };
        *p = p.clone() + d.scale(self.factor);
    }

    /// `u = factor * (d + wd * p)` (`wd * p` where `p` is given).
    #[inline(always)]
    fn onto_updates<T: Arith<K>>(&self, u: &mut T, d: T, p: Option<T>) {
        let d = match p {
            Some(p) => d + p.scale(self.wd),
            None => d,
        };
        *u = d.scale(self.factor);
    }
}

/// A fused update: the direction `$dir::direction(g, state..)` followed by
/// a tail, into the parameters (`INTO_PARAMS`, reading the gradients) or
/// into the updates (reading the parameters where the leaf `DECAYS`), and
/// `run`, which walks a [`Target`] with it.
macro_rules! fused_update {
    ($(#[$doc:meta])* $name:ident($dir:ident), [$($s:ident),*], $n:literal) => {
        $(#[$doc])*
        ///
        /// The constants are held by reference: read through a `&self`
        /// (a `noalias` argument once inlined) they would be hoisted out of
        /// the element loop as scalars and kept live across the vector
        /// loop for its scalar tail, crowding the vector constants out of
        /// registers (measured: 2 more instructions per 8 `f32` elements
        /// of Adam's loop).
        pub(crate) struct $name<'a, K, const INTO_PARAMS: bool, const DECAYS: bool>(
            pub(crate) &'a $dir<K>,
            pub(crate) &'a TailK<K>,
        );

        impl<K: Float, const I: bool, const D: bool> ElementUpdate<K, $n, 1> for $name<'_, K, I, D> {
            #[inline(always)]
            fn apply<T: Arith<K>>(&self, [x, $($s),*]: [&mut T; $n], [r]: [T; 1]) {
                if I {
                    self.1.onto_params(D, x, self.0.direction(r, $($s),*));
                } else {
                    let d = self.0.direction(x.clone(), $($s),*);
                    self.1.onto_updates(x, d, Some(r));
                }
            }
        }

        impl<K: Float> ElementUpdate<K, $n, 0> for $name<'_, K, false, false> {
            #[inline(always)]
            fn apply<T: Arith<K>>(&self, [x, $($s),*]: [&mut T; $n], []: [T; 0]) {
                let d = self.0.direction(x.clone(), $($s),*);
                self.1.onto_updates(x, d, None);
            }
        }

        impl<K: Float> $name<'_, K, false, false> {
            /// One pass over the target and `[$($s),*]`, on the leaves
            /// `mask` selects.
            pub(crate) fn run<P>(
                cx: &Context<'_>,
                dir: $dir<K>,
                tail: &Tail,
                target: &mut Target<'_, P>,
                [$($s),*]: [&mut P; $n - 1],
                mask: &LeafMask,
            ) -> Result<(), Error>
            where
                P: Flatten<Std>,
                P::Leaf: FloatLeaf<Scalar = K>,
            {
                let t = TailK::new(tail);
                match target {
                    Target::Params { params, grads } => {
                        walk_leaves(cx, [&mut **params, $($s),*], [*grads], |i, ms, rs, exec| {
                            if !mask.get(i) {
                                Ok(())
                            } else if tail.decays(i) {
                                P::Leaf::zip_update(ms, rs, exec, &$name::<K, true, true>(&dir, &t))
                            } else {
                                P::Leaf::zip_update(ms, rs, exec, &$name::<K, true, false>(&dir, &t))
                            }
                        })
                    }
                    Target::Updates { updates, params } => {
                        walk_leaves(cx, [&mut **updates, $($s),*], [*params], |i, ms, [p], exec| {
                            if !mask.get(i) {
                                Ok(())
                            } else if tail.decays(i) {
                                P::Leaf::zip_update(ms, [p], exec, &$name::<K, false, true>(&dir, &t))
                            } else {
                                P::Leaf::zip_update(ms, [], exec, &$name::<K, false, false>(&dir, &t))
                            }
                        })
                    }
                }
            }
        }
    };
}

/// No direction of its own: the tail alone applied to the gradient.
#[derive(Clone, Copy)]
pub(crate) struct Gradient<K>(core::marker::PhantomData<K>);

impl<K: Float> Gradient<K> {
    pub(crate) fn new() -> Self {
        Gradient(core::marker::PhantomData)
    }

    #[inline(always)]
    fn direction<T: Arith<K>>(&self, g: T) -> T {
        g
    }
}

fused_update!(
    /// The tail alone: `u = factor * (u + wd * p)`, `p += factor * (g + wd * p)`.
    TailUpdate(Gradient), [], 1
);

/// The momentum of [`trace`](crate::trace): `t = g + mu * t`, the
/// direction `t` (or `g + mu * t` with Nesterov).
#[derive(Clone, Copy)]
pub(crate) struct Momentum<K> {
    pub(crate) mu: K,
    pub(crate) nesterov: bool,
}

impl<K: Float> Momentum<K> {
    #[inline(always)]
    fn direction<T: Arith<K>>(&self, g: T, t: &mut T) -> T {
        *t = g.clone() + t.clone().scale(self.mu);
        if self.nesterov {
            g + t.clone().scale(self.mu)
        } else {
            t.clone()
        }
    }
}

fused_update!(
    /// [`trace`](crate::trace) with its tail.
    TraceUpdate(Momentum), [t], 2
);

/// The per-step constants of Adam, in the element type.
#[derive(Clone, Copy)]
pub(crate) struct AdamK<K> {
    pub(crate) b1: K,
    pub(crate) b2: K,
    pub(crate) one_minus_b1: K,
    pub(crate) one_minus_b2: K,
    pub(crate) inv_c1: K,
    pub(crate) inv_c2: K,
    pub(crate) eps: K,
    pub(crate) eps_root: K,
}

impl<K: Float> AdamK<K> {
    /// Advances the moments with `g` and returns the update direction
    /// `m̂ / (sqrt(v̂ + eps_root) + eps)`, in optax's order of operations
    /// but for the bias corrections, which multiply by `1 / (1 - b^t)`
    /// (computed once per step in `f64`) where optax divides: one division
    /// and one square root per element instead of three divisions and a
    /// root (the divider is the bottleneck of a loop that is otherwise
    /// memory-bound), at most an ulp or two from optax's numbers.
    #[inline(always)]
    fn direction<T: Arith<K>>(&self, g: T, m: &mut T, v: &mut T) -> T {
        *m = g.clone().scale(self.one_minus_b1) + m.clone().scale(self.b1);
        *v = (g.clone() * g).scale(self.one_minus_b2) + v.clone().scale(self.b2);
        let m_hat = m.clone().scale(self.inv_c1);
        let v_hat_eps_root = v.clone().affine(self.inv_c2, self.eps_root);
        m_hat / v_hat_eps_root.sqrt().shift(self.eps)
    }
}

fused_update!(
    /// [`scale_by_adam`](crate::scale_by_adam) with its tail.
    AdamUpdate(AdamK), [m, v], 3
);

impl Tail {
    /// The tail alone, in one pass into `target` (the selected leaves):
    /// `u <- factor * (u + wd * p)`, or `p += factor * (g + wd * p)`.
    pub(crate) fn run<P>(&self, cx: &Context<'_>, target: &mut Target<'_, P>) -> Result<(), Error>
    where
        P: Flatten<Std>,
        P::Leaf: FloatLeaf,
    {
        crate::context::same_shape(target.params(), target.updates())?;
        let mask = crate::context::selected(cx, target.params())?;
        let gradient = Gradient::new();
        TailUpdate::run(cx, gradient, self, target, [], &mask)
    }
}
