//! [`scale_by_adam`] (optax's): the updates scaled by Adam's
//! bias-corrected moments, one pass over the updates and both moments, or,
//! with a learning-rate [`Tail`] fused in (what [`adam`](crate::adam) is),
//! one pass over the parameters, the gradients and the moments.

use pytree_std::{Error, PyTree};

use crate::context::{same_shape, selected, zeros, Context};
use crate::gradient_transformation::{
    update_and_step_in_one_pass, update_through_fused, Fused, GradientTransformation,
};
use crate::rules::{AdamK, AdamUpdate};
use crate::rules::{Tail, Target};
use pytree_std::elements::Float;
use pytree_std::elements::FloatLeaf;

/// Rescales the updates by Adam's moments (optax's `scale_by_adam`):
/// `m = b1 m + (1 - b1) g`, `v = b2 v + (1 - b2) g²`, bias-corrected, and
/// the update `m̂ / (sqrt(v̂ + eps_root) + eps)`; defaults `b1 = 0.9`,
/// `b2 = 0.999`, `eps = 1e-8`, `eps_root = 0`. Followed by
/// [`scale_by_learning_rate`](crate::scale_by_learning_rate) it is
/// [`adam`](crate::adam).
///
/// ```
/// use pytree_optim::{scale_by_adam, GradientTransformation};
/// let opt = scale_by_adam().b1(0.8);
/// let params = vec![0.0f64; 2];
/// let mut state = opt.init(&params)?;
/// let mut g = vec![3.0, -0.5];
/// opt.update(&mut g, &mut state, &params)?;
/// // The first step's update is the sign of the gradient (up to eps).
/// assert!((g[0] - 1.0).abs() < 1e-7 && (g[1] + 1.0).abs() < 1e-7);
/// assert_eq!(state.count, 1);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn scale_by_adam() -> ScaleByAdam {
    ScaleByAdam {
        b1: 0.9,
        b2: 0.999,
        eps: 1e-8,
        eps_root: 0.0,
    }
}

/// See [`scale_by_adam`]; the builder methods set the hyperparameters.
///
/// ```
/// let opt = pytree_optim::scale_by_adam().b1(0.8).b2(0.99).eps(1e-6).eps_root(1e-12);
/// assert_eq!((opt.b1, opt.b2, opt.eps, opt.eps_root), (0.8, 0.99, 1e-6, 1e-12));
/// ```
#[derive(Clone, Debug)]
pub struct ScaleByAdam {
    /// The decay of the first moment.
    pub b1: f64,
    /// The decay of the second moment.
    pub b2: f64,
    /// Added to the root of the second moment.
    pub eps: f64,
    /// Added to the second moment under the root.
    pub eps_root: f64,
}

/// A setter of each of Adam's hyperparameters, with its doc and a
/// runnable example (`$on` builds a value, `$get` reaches the
/// [`ScaleByAdam`] in it; `$set!(self, field, x)` is the value with `field`
/// set to `x`).
macro_rules! adam_setters {
    ($on:literal, $get:literal, |$this:ident, $x:ident| $set:ident) => {
        $crate::adam::adam_setters!(@each $on, $get, $this, $x, $set,
            b1: "the decay of the first moment (default 0.9)", "0.8";
            b2: "the decay of the second moment (default 0.999)", "0.99";
            eps: "`eps`, added to the root (default 1e-8)", "1e-6";
            eps_root: "`eps_root`, added under the root (default 0)", "1e-12";
        );
    };
    (@each $on:literal, $get:literal, $this:ident, $x:ident, $set:ident,
     $($name:ident: $what:literal, $value:literal;)*) => {$(
        #[doc = concat!("Sets ", $what, ".")]
        ///
        /// ```
        #[doc = concat!("let opt = ", $on, ".", stringify!($name), "(", $value, ");")]
        #[doc = concat!("assert_eq!(opt", $get, ".", stringify!($name), ", ", $value, ");")]
        /// ```
        #[must_use]
        pub fn $name($this, $x: f64) -> Self {
            $set!($this, $name, $x)
        }
    )*};
}
pub(crate) use adam_setters;

/// `ScaleByAdam` with `field` set to `x`.
macro_rules! with_field {
    ($this:ident, $field:ident, $x:ident) => {
        ScaleByAdam {
            $field: $x,
            ..$this
        }
    };
}

impl ScaleByAdam {
    adam_setters!("pytree_optim::scale_by_adam()", "", |self, x| with_field);
}

/// The state of [`scale_by_adam`] (optax's `ScaleByAdamState`): the step
/// count and the moments as trees of the parameters' structure.
///
/// The state is a pytree whose leaves are the moments' (the parameters'
/// leaf type), so it is saved and loaded as a checkpoint like the model:
/// its tensors are named `mu.<path>` and `nu.<path>` (`0.mu.<path>` in
/// [`adam`](crate::adam)'s state, the chain's pair), and the step count is
/// a static field written with the TreeDef into the file's metadata. Load
/// it by its type, `checkpoint::load::<AdamState<_>>`, which takes the
/// count from the file (`load_like` and `load_into` keep their template's
/// static fields, so its count). Training stopped after step k, saved,
/// loaded and continued gives the parameters of an uninterrupted run, bit
/// for bit.
///
/// ```
/// use pytree_optim::GradientTransformation;
/// let s = pytree_optim::scale_by_adam().init(&vec![1.0f32, 2.0])?;
/// assert_eq!((s.count, &s.mu, &s.nu), (0, &vec![0.0, 0.0], &vec![0.0, 0.0]));
/// let names: Vec<String> = pytree_std::paths::leaves_with_path(&s)
///     .into_iter().map(|(p, _)| p.to_string()).collect();
/// assert_eq!(names, [".mu[0]", ".mu[1]", ".nu[0]", ".nu[1]"]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct ScaleByAdamState<P> {
    /// Updates done so far (a static field: kept in the TreeDef, so in a
    /// checkpoint's metadata).
    #[pytree(static)]
    pub count: u64,
    /// The first moment (leaves named `mu.<path>` in a checkpoint).
    pub mu: P,
    /// The second moment (`nu.<path>`).
    pub nu: P,
}

impl ScaleByAdam {
    /// The bias corrections `1 / (1 - b1^t)`, `1 / (1 - b2^t)` after
    /// `count` updates.
    fn corrections(&self, count: u64) -> (f64, f64) {
        let t = (count + 1) as f64;
        (1.0 / (1.0 - self.b1.powf(t)), 1.0 / (1.0 - self.b2.powf(t)))
    }

    /// The constants of the update after `count` updates.
    fn constants<K: Float>(&self, count: u64) -> AdamK<K> {
        let (inv_c1, inv_c2) = self.corrections(count);
        AdamK {
            b1: K::from_f64(self.b1),
            b2: K::from_f64(self.b2),
            one_minus_b1: K::from_f64(1.0 - self.b1),
            one_minus_b2: K::from_f64(1.0 - self.b2),
            inv_c1: K::from_f64(inv_c1),
            inv_c2: K::from_f64(inv_c2),
            eps: K::from_f64(self.eps),
            eps_root: K::from_f64(self.eps_root),
        }
    }
}

impl<P> GradientTransformation<P> for ScaleByAdam
where
    P: PyTree,
    P::Leaf: FloatLeaf,
{
    type State = ScaleByAdamState<P>;

    fn init(&self, params: &P) -> Result<ScaleByAdamState<P>, Error> {
        Ok(ScaleByAdamState {
            count: 0,
            mu: zeros(params)?,
            nu: zeros(params)?,
        })
    }

    update_through_fused!();
}

impl<P> Fused<P, ScaleByAdamState<P>> for ScaleByAdam
where
    P: PyTree,
    P::Leaf: FloatLeaf,
{
    fn validate(&self, updates: &P, state: &ScaleByAdamState<P>, params: &P) -> Result<(), Error> {
        same_shape(params, updates)?;
        same_shape(params, &state.mu)?;
        same_shape(params, &state.nu)
    }

    fn step_is_fused(&self) -> bool {
        true
    }

    update_and_step_in_one_pass!(ScaleByAdamState<P>);

    /// One pass over the target, both moments and the other tree: with
    /// the parameters as target, `p += factor * (d + wd * p)` reading the
    /// gradients (28 bytes per `f32` parameter); with the updates,
    /// `u = factor * (d + wd * p)`, reading the parameters only where a
    /// leaf decays. `d` is Adam's direction; `wd * p` only on decaying
    /// leaves.
    fn run_fused(
        &self,
        cx: &Context<'_>,
        target: &mut Target<'_, P>,
        state: &mut ScaleByAdamState<P>,
        tail: &Tail,
    ) -> Result<bool, Error> {
        let mask = selected(cx, target.params())?;
        if let Some(m) = &tail.decay_mask {
            m.ensure_fits(target.params())?;
        }
        let k = self.constants(state.count);
        AdamUpdate::run(cx, k, tail, target, [&mut state.mu, &mut state.nu], &mask)?;
        state.count += 1;
        Ok(true)
    }
}
