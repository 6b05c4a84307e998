//! # pytree-optim
//!
//! Optimizers written once over any pytree: optax for Rust. A model is a
//! `#[derive(PyTree)]` struct whose leaves are `f32`/`f64` scalars, ndarray
//! arrays (feature `ndarray`) or candle tensors (feature `candle`); the
//! gradient is a tree of the same type; an optimizer's state holds trees of
//! the same type too (Adam's `mu` and `nu`), and one step is one fused pass
//! over them all.
//!
//! ```
//! use pytree_optim::{adamw, chain, clip_by_global_norm, GradientTransformation};
//! use pytree_std::PyTree;
//!
//! #[derive(PyTree, Clone, Debug)]
//! struct Linear { w: Vec<f32>, b: f32 }
//!
//! // Fit y = 2x + 1 on three points.
//! let (xs, ys) = ([0.0f32, 1.0, 2.0], [1.0f32, 3.0, 5.0]);
//! let mut model = Linear { w: vec![0.0], b: 0.0 };
//! let opt = chain(clip_by_global_norm(1.0), adamw(0.05, 1e-4));
//! let mut state = opt.init(&model)?;
//! for _ in 0..1000 {
//!     let mut grads = Linear { w: vec![0.0], b: 0.0 };
//!     for (x, y) in xs.iter().zip(ys) {
//!         let err = model.w[0] * x + model.b - y;
//!         grads.w[0] += 2.0 * err * x / 3.0;
//!         grads.b += 2.0 * err / 3.0;
//!     }
//!     opt.step(&mut model, &mut grads, &mut state)?;
//! }
//! assert!((model.w[0] - 2.0).abs() < 0.02 && (model.b - 1.0).abs() < 0.02);
//! # Ok::<(), pytree_std::Error>(())
//! ```
//!
//! ## Contents
//! - [`GradientTransformation`] (optax's): `init(&params)`,
//!   `update(&mut updates, &mut state, &params)` in place, `step` (update
//!   and apply, one fused pass where a chain allows it); [`apply_updates`];
//!   [`chain`], which fuses a learning-rate stage (a [`Tail`]) into the
//!   previous stage's pass.
//! - Optimizers, as optax's compositions: [`adam`] is
//!   `chain(scale_by_adam(), scale_by_learning_rate(lr))`, [`adamw`] adds
//!   the weight decay between, [`sgd`] is `chain(trace or identity,
//!   scale_by_learning_rate(lr))`.
//! - Transformations: [`scale_by_adam`], [`trace`],
//!   [`scale_by_learning_rate`], [`clip_by_global_norm`], [`scale`],
//!   [`scale_by_schedule`], [`add_decayed_weights`], [`set_to_zero`];
//!   [`global_norm`].
//! - Wrappers: [`masked`] (optax's: where a [`Mask`] holds, the updates
//!   elsewhere passing through) and the trait [`Wrap`]: `t.mask(m)`
//!   (elsewhere the parameters are frozen; `Mask::params()` leaves out the
//!   leaves of kind `"state"`, PAX's parameter/state split), `t.exec(e)`
//!   and `t.parallel()` (feature `rayon`: long leaves split across
//!   threads, the same bits). Unwrapped, a transformation acts on every
//!   leaf.
//! - Parameter groups: [`multi_transform`] (a label per leaf from its key
//!   path and kind, a transformation per label, a state per group).
//! - Schedules: [`Schedule`] (numbers and closures are schedules),
//!   [`constant_schedule`], [`linear_schedule`] (warm-up),
//!   [`cosine_decay_schedule`], [`warmup_cosine_decay_schedule`].
//! - [`EmaOfParams`]: an exponential moving average of the parameters (it starts
//!   as a copy of them); [`ema`]: optax's `ema(decay, debias)`, an average
//!   of the updates that starts at zero, with optional bias correction.
//! - Optimizer states are pytrees of the parameters' leaf type
//!   ([`AdamState`]: `0.mu.<path>`, `0.nu.<path>`, the step counts static
//!   fields), so `pytree_std::checkpoint` saves and loads them and training
//!   resumes bit for bit.
//! - [`device_updates`]: every element update of the transformations
//!   recorded as a device program ([`DeviceUpdate`]), from which its CUDA
//!   kernel is printed (pytree-std's `elements::codegen`).
//! - [`Context`]: what a transformation runs under, passed down as a value
//!   (the selected leaves, the [`Exec`] mode, the reduction of per-leaf
//!   sums that makes the global norm of a tree whose leaves are spread over
//!   processes bit for bit the unsharded one); [`update_in`] and
//!   [`step_in`] run any transformation under one, and [`Fused`] is the
//!   optional fast path that receives it.
//! - [`FloatLeaf`]: the one trait a leaf type implements, for `f32`,
//!   `f64`, `half`'s `f16`/`bf16` (feature `half`), ndarray's `ArrayD<A>`
//!   and `AnyArray` (feature `ndarray`), nalgebra's `DMatrix<T>` (feature
//!   `nalgebra`) and candle's `Tensor` and `Var` (feature `candle`); its
//!   element loops ([`zip_slices`], [`sum_slice`]) run on one thread or,
//!   with feature `rayon` and `Exec::Parallel`, split across threads.
//!   Defined in pytree-std (`pytree_std::elements`), beside each foreign
//!   leaf type's other impls, and re-exported here.
//! - `burn` (feature `burn`): burn modules stepped whole from burn's
//!   gradients (`burn::step`), and `burn::PerParameter`, a transformation
//!   of one tensor as burn's per-parameter `Optimizer`, run by burn's
//!   `ModuleOptimizer` and `Learner` (whole-tree transformations refused).
//! - `candle` (feature `candle`): candle tensors and variables updated in
//!   place, gradient trees from candle's autograd (`value_and_grad`), and
//!   `candle::Optimizer`, stepped by `backward_step(&loss)` as candle-nn's
//!   optimizers are.
//!
//! Errors are values: gradients of another structure or leaf shape than the
//! parameters' are an [`Error`](pytree_std::Error) naming the key path, and
//! then neither the parameters nor the state have changed.

#![warn(missing_docs)]

mod adam;
mod alias;
#[cfg(feature = "burn")]
pub mod burn;
#[cfg(feature = "candle")]
pub mod candle;
mod context;
mod device;
mod ema;
mod gradient_transformation;
mod groups;
mod mask;
mod rules;
mod schedule;
mod trace;
mod transform;
mod wrappers;

pub use adam::{scale_by_adam, ScaleByAdam, ScaleByAdamState};
pub use alias::{adam, adamw, sgd, Adam, AdamState, AdamW, AdamWState, Sgd, SgdState};
pub use context::{Context, LeafSums};
pub use device::{device_updates, DeviceUpdate};
pub use ema::{ema, EmaOfParams, EmaOfUpdates, EmaState};
pub use gradient_transformation::{
    apply_updates, chain, global_norm, global_norm_in, step_in, update_in, Chain, Fused,
    GradientTransformation,
};
pub use groups::{multi_transform, Group, GroupList, GroupState, Groups, MultiTransform};
pub use mask::{LeafMask, Mask};
pub use rules::{Tail, Target};
pub use schedule::{
    constant_schedule, cosine_decay_schedule, linear_schedule, warmup_cosine_decay_schedule,
    ConstantSchedule, CosineDecaySchedule, LinearSchedule, Schedule, WarmupCosineDecaySchedule,
};
pub use trace::{trace, Trace, TraceState};
pub use transform::{
    add_decayed_weights, clip_by_global_norm, scale, scale_by_learning_rate, scale_by_schedule,
    set_to_zero, AddDecayedWeights, ClipByGlobalNorm, EmptyState, Scale, ScaleByLearningRate,
    ScaleBySchedule, ScheduleState, SetToZero,
};
pub use wrappers::{masked, Masked, MaskedState, Outside, WithExec, Wrap};

// The optimizer arithmetic: pytree-std's (`elements`), where the orphan
// rule lets every foreign leaf type implement it in one file per crate.
pub use pytree_std::elements::{
    avx2_dispatch, sum_slice, zip_slices, Arith, ElementUpdate, Exec, Float, FloatElement,
    FloatLeaf, DISPATCH_MIN, GRAIN,
};
