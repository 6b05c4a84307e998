//! burn (feature `burn`): any [`GradientTransformation`] steps a burn
//! module from burn's gradients, the whole tree at once ([`init`],
//! [`step`]); and a transformation of one tensor is burn's per-parameter
//! optimizer ([`PerParameter`]), which burn's own `ModuleOptimizer`, its
//! parameter groups and record, and burn-train's `Learner` run.
//!
//! burn's `ModuleOptimizer` steps one parameter at a time (its `Optimizer`
//! trait sees one tensor and its gradient), so what needs the whole tree
//! cannot be written for it: clipping by the global norm of all gradients
//! (torch's `clip_grad_norm_`, optax's `clip_by_global_norm`), masks and
//! groups by key path, EMA of the parameters. Here the module is a pytree ([`BurnModule`]: its float
//! parameters keyed by burn-store's names) and the step is optax's:
//!
//! ```
//! use burn::module::Module;
//! use burn::nn::{Initializer, Linear, LinearConfig};
//! use burn::optim::GradientsParams;
//! use burn::tensor::{Device, Tensor};
//! use pytree_optim::{adamw, chain, clip_by_global_norm};
//!
//! #[derive(Module, Debug)]
//! struct Net { fc: Linear }
//!
//! let device = Device::default().autodiff();
//! let (x, y) = (Tensor::<2>::from_data([[1.0f32], [2.0]], &device), Tensor::<2>::from_data([[3.0f32], [5.0]], &device));
//! let mut model = Net { fc: LinearConfig::new(1, 1).with_initializer(Initializer::Zeros).init(&device) };
//! let tx = chain(clip_by_global_norm(1.0), adamw(0.1, 0.0));
//! let mut state = pytree_optim::burn::init(&tx, &model)?;
//! for _ in 0..300 {
//!     let loss = (model.fc.forward(x.clone()) - y.clone()).powi_scalar(2).mean();
//!     let grads = GradientsParams::from_grads(loss.backward(), &model);
//!     model = pytree_optim::burn::step(&tx, model, &grads, &mut state)?;
//! }
//! let w = model.fc.weight.val().into_data().try_to_vec::<f32>().unwrap()[0];
//! assert!((w - 2.0).abs() < 0.05, "{w}");
//! # Ok::<(), pytree_std::Error>(())
//! ```
//!
//! The element updates run as whole-tensor operations on each tensor's
//! device and backend (pytree-std's `BurnTensor` as a `FloatLeaf`). A
//! parameter without a gradient gets a zero gradient (see
//! [`BurnModule::gradients`]); freeze parameters with a mask by key path
//! (`.mask(...)`), which leaves them and their state alone, as burn's
//! optimizers leave a parameter without a gradient.
//!
//! The transformations that act element by element (`sgd`, `adam`,
//! `adamw`, `scale`, their chains) also plug into burn's loop as its
//! optimizer: [`PerParameter`] (on each tensor, the bits of [`step`] on the
//! whole module). The whole-tree ones (`clip_by_global_norm`, masks and
//! groups by key path) need the loop above, written by the user:
//! [`PerParameter`] refuses those that sum over the leaves.

mod optimizer;
mod record;

pub use optimizer::PerParameter;
pub use record::PerParameterState;

use std::fmt;

use pytree_std::burn::module::Module;
use pytree_std::burn::optim::GradientsParams;
use pytree_std::{BurnModule, Error};

use crate::gradient_transformation::GradientTransformation;

/// `transformation`'s initial state for `model` (the model is cloned:
/// handles, no element is copied).
///
/// ```
/// use burn::nn::LinearConfig;
/// use burn::tensor::Device;
/// let linear = LinearConfig::new(3, 2).init(&Device::default());
/// let state = pytree_optim::burn::init(&pytree_optim::adam(1e-3), &linear)?;
/// assert_eq!(state.0.count, 0);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn init<M, T>(transformation: &T, model: &M) -> Result<T::State, Error>
where
    M: Module,
    T: GradientTransformation<BurnModule<M>>,
{
    transformation.init(&BurnModule::new(model.clone()))
}

/// One step of `transformation` on `model` from burn's gradients: the
/// module with its float parameters updated (each put back as it was
/// taken: autodiff, `require_grad`, checkpointing), as burn's
/// `ModuleOptimizer::step` returns it. On an error the model comes back
/// in the error ([`StepError::params`]); `?` turns the error into this
/// crate's [`Error`].
///
/// ```
/// use burn::nn::LinearConfig;
/// use burn::optim::GradientsParams;
/// use burn::tensor::{Device, Tensor};
/// let device = Device::default().autodiff();
/// let linear = LinearConfig::new(2, 1).init(&device);
/// let loss = linear.forward(Tensor::<2>::ones([1, 2], &device)).sum();
/// let grads = GradientsParams::from_grads(loss.backward(), &linear);
/// let tx = pytree_optim::sgd(0.5);
/// let mut state = pytree_optim::burn::init(&tx, &linear)?;
/// let before = linear.weight.val().into_data().try_to_vec::<f32>().unwrap();
/// let linear = pytree_optim::burn::step(&tx, linear, &grads, &mut state)?;
/// let after = linear.weight.val().into_data().try_to_vec::<f32>().unwrap();
/// assert_eq!(after[0], before[0] - 0.5); // the gradient of sum(x.w + b) by w is x = 1
/// assert!(linear.weight.is_require_grad());
/// # Ok::<(), pytree_std::Error>(())
/// ```
// The error holds the model taken apart (as `Ok` holds the model), so
// that nothing is lost; boxing it would allocate on every failed step
// for no gain on the successful ones.
#[allow(clippy::result_large_err)]
pub fn step<M, T>(
    transformation: &T,
    model: M,
    grads: &GradientsParams,
    state: &mut T::State,
) -> Result<M, StepError<M>>
where
    M: Module,
    T: GradientTransformation<BurnModule<M>>,
{
    let mut params = BurnModule::new(model);
    let stepped = params
        .gradients(grads)
        .and_then(|(mut g, _missing)| transformation.step(&mut params, &mut g, state));
    match stepped {
        Ok(()) => params
            .into_module_or_self()
            .map_err(|(error, params)| StepError { error, params }),
        Err(error) => Err(StepError { error, params }),
    }
}

/// A failed [`step`]: the error, and the model taken apart (nothing is
/// lost): as it was before the step, unless a transformation wrote a leaf
/// of another shape than its parameter's (which `into_module` refuses,
/// naming the path).
///
/// ```
/// use burn::nn::{Linear, LinearConfig};
/// use burn::optim::GradientsParams;
/// use burn::tensor::Device;
/// let small = LinearConfig::new(2, 1).init(&Device::default());
/// let big: Linear = LinearConfig::new(3, 1).init(&Device::default());
/// let tx = pytree_optim::adam(0.1);
/// let mut state = pytree_optim::burn::init(&tx, &big)?; // the state of another model
/// let err = pytree_optim::burn::step(&tx, small, &GradientsParams::new(), &mut state).unwrap_err();
/// assert!(err.error.to_string().contains("signature mismatch"), "{}", err.error);
/// let small: Linear = err.params.into_module()?;
/// assert_eq!(small.weight.dims(), [2, 1]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub struct StepError<M> {
    /// What went wrong.
    pub error: Error,
    /// The model's parameters (`into_module` gives the model back).
    pub params: BurnModule<M>,
}

impl<M> fmt::Debug for StepError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StepError")
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

impl<M> fmt::Display for StepError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

impl<M> std::error::Error for StepError<M> {}

impl<M> From<StepError<M>> for Error {
    /// The error, the model dropped.
    fn from(e: StepError<M>) -> Error {
        e.error
    }
}
