//! Learning-rate schedules (optax's `schedules`): a [`Schedule`] maps the
//! number of updates done so far (0 for the first) to a value. A plain
//! `f64` or `f32` is a constant schedule, and so is any
//! `Fn(u64) -> f64`.

use std::f64::consts::PI;

/// A value that depends on the step: the number of updates done before
/// this one (optax's `count`, 0 for the first update).
///
/// ```
/// use pytree_optim::{cosine_decay_schedule, Schedule};
/// assert_eq!(1e-3.value(10), 1e-3);
/// assert_eq!((|step: u64| 1.0 / (step + 1) as f64).value(3), 0.25);
/// let s = cosine_decay_schedule(1.0, 100, 0.0);
/// assert_eq!((s.value(0), s.value(50), s.value(100)), (1.0, 0.5, 0.0));
/// ```
pub trait Schedule: Send + Sync {
    /// The value at `step`.
    fn value(&self, step: u64) -> f64;
}

impl Schedule for f64 {
    /// The constant.
    #[inline]
    fn value(&self, _step: u64) -> f64 {
        *self
    }
}

impl Schedule for f32 {
    /// The constant, as `f64`.
    #[inline]
    fn value(&self, _step: u64) -> f64 {
        f64::from(*self)
    }
}

impl<F: Fn(u64) -> f64 + Send + Sync> Schedule for F {
    #[inline]
    fn value(&self, step: u64) -> f64 {
        self(step)
    }
}

/// A constant value (optax's `constant_schedule`; a bare `f64` does the same).
///
/// ```
/// use pytree_optim::Schedule;
/// assert_eq!(pytree_optim::constant_schedule(0.1).value(1_000), 0.1);
/// ```
pub fn constant_schedule(value: f64) -> ConstantSchedule {
    ConstantSchedule(value)
}

/// See [`constant_schedule`].
///
/// ```
/// use pytree_optim::{ConstantSchedule, Schedule};
/// assert_eq!(ConstantSchedule(2.0).value(0), 2.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConstantSchedule(pub f64);

impl Schedule for ConstantSchedule {
    fn value(&self, _step: u64) -> f64 {
        self.0
    }
}

/// From `init` to `end` in a straight line over `transition_steps` steps,
/// then `end` (optax's `linear_schedule` with `transition_begin = 0`); a
/// linear warm-up is `linear_schedule(0.0, peak, warmup_steps)`. With no
/// transition steps it is `init` throughout, as optax's.
///
/// ```
/// use pytree_optim::Schedule;
/// let warmup = pytree_optim::linear_schedule(0.0, 1e-3, 10);
/// assert_eq!((warmup.value(0), warmup.value(5), warmup.value(10), warmup.value(99)), (0.0, 5e-4, 1e-3, 1e-3));
/// ```
pub fn linear_schedule(init: f64, end: f64, transition_steps: u64) -> LinearSchedule {
    LinearSchedule {
        init,
        end,
        transition_steps,
    }
}

/// See [`linear_schedule`].
///
/// ```
/// use pytree_optim::{LinearSchedule, Schedule};
/// assert_eq!(LinearSchedule { init: 1.0, end: 0.0, transition_steps: 4 }.value(1), 0.75);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinearSchedule {
    /// The value at step 0.
    pub init: f64,
    /// The value from `transition_steps` on.
    pub end: f64,
    /// How many steps the line takes.
    pub transition_steps: u64,
}

/// How far `step` is into a stretch of `steps` steps, from 0 to 1 (1 from
/// `steps` on); `None` when there are no steps.
fn fraction(step: u64, steps: u64) -> Option<f64> {
    (steps != 0).then(|| step.min(steps) as f64 / steps as f64)
}

impl Schedule for LinearSchedule {
    fn value(&self, step: u64) -> f64 {
        match fraction(step, self.transition_steps) {
            None => self.init,
            Some(frac) => self.init + (self.end - self.init) * frac,
        }
    }
}

/// Cosine decay from `init` to `init * alpha` over `decay_steps` steps,
/// then `init * alpha` (optax's `cosine_decay_schedule` with exponent 1):
/// `init * ((1 - alpha) * (1 + cos(pi * t / decay_steps)) / 2 + alpha)`,
/// `t = min(step, decay_steps)`.
///
/// ```
/// use pytree_optim::Schedule;
/// let s = pytree_optim::cosine_decay_schedule(1.0, 10, 0.1);
/// assert_eq!((s.value(0), s.value(10), s.value(20)), (1.0, 0.1, 0.1));
/// ```
pub fn cosine_decay_schedule(init: f64, decay_steps: u64, alpha: f64) -> CosineDecaySchedule {
    CosineDecaySchedule {
        init,
        decay_steps,
        alpha,
    }
}

/// See [`cosine_decay_schedule`].
///
/// ```
/// use pytree_optim::{CosineDecaySchedule, Schedule};
/// assert_eq!(CosineDecaySchedule { init: 2.0, decay_steps: 4, alpha: 0.0 }.value(4), 0.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CosineDecaySchedule {
    /// The value at step 0.
    pub init: f64,
    /// How many steps the decay takes.
    pub decay_steps: u64,
    /// The final value as a fraction of `init`.
    pub alpha: f64,
}

impl Schedule for CosineDecaySchedule {
    fn value(&self, step: u64) -> f64 {
        let Some(t) = fraction(step, self.decay_steps) else {
            return self.init * self.alpha;
        };
        let cosine = 0.5 * (1.0 + (PI * t).cos());
        self.init * ((1.0 - self.alpha) * cosine + self.alpha)
    }
}

/// A linear warm-up from `init` to `peak` over `warmup_steps`, then a
/// cosine decay from `peak` to `end` that ends at step `decay_steps`
/// (counted from 0, warm-up included), then `end` (optax's
/// `warmup_cosine_decay_schedule` with exponent 1).
///
/// ```
/// use pytree_optim::Schedule;
/// let s = pytree_optim::warmup_cosine_decay_schedule(0.0, 1e-3, 10, 110, 1e-5);
/// assert_eq!(s.value(0), 0.0);
/// assert_eq!(s.value(10), 1e-3);           // the peak
/// assert!((s.value(60) - (1e-3 + 1e-5) / 2.0).abs() < 1e-12);
/// assert_eq!(s.value(110), 1e-5);          // the end
/// assert_eq!(s.value(1_000), 1e-5);
/// ```
pub fn warmup_cosine_decay_schedule(
    init: f64,
    peak: f64,
    warmup_steps: u64,
    decay_steps: u64,
    end: f64,
) -> WarmupCosineDecaySchedule {
    WarmupCosineDecaySchedule {
        init,
        peak,
        warmup_steps,
        decay_steps,
        end,
    }
}

/// See [`warmup_cosine_decay_schedule`].
///
/// ```
/// use pytree_optim::{Schedule, WarmupCosineDecaySchedule};
/// let s = WarmupCosineDecaySchedule { init: 0.0, peak: 1.0, warmup_steps: 2, decay_steps: 4, end: 0.0 };
/// assert_eq!((s.value(1), s.value(2), s.value(4)), (0.5, 1.0, 0.0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WarmupCosineDecaySchedule {
    /// The value at step 0.
    pub init: f64,
    /// The value at the end of the warm-up.
    pub peak: f64,
    /// How many steps the warm-up takes.
    pub warmup_steps: u64,
    /// The step at which the decay ends (warm-up included).
    pub decay_steps: u64,
    /// The value from `decay_steps` on.
    pub end: f64,
}

impl Schedule for WarmupCosineDecaySchedule {
    fn value(&self, step: u64) -> f64 {
        if step < self.warmup_steps {
            return linear_schedule(self.init, self.peak, self.warmup_steps).value(step);
        }
        // optax: alpha = end / peak (0 when the peak is 0), the cosine part
        // counted from the end of the warm-up.
        let alpha = if self.peak == 0.0 {
            0.0
        } else {
            self.end / self.peak
        };
        let decay = self.decay_steps.saturating_sub(self.warmup_steps);
        cosine_decay_schedule(self.peak, decay, alpha).value(step - self.warmup_steps)
    }
}
