//! [`PerParameter`]: a [`GradientTransformation`] of one tensor as burn's
//! per-parameter `Optimizer`, which burn's `ModuleOptimizer` (its groups,
//! its gradient clipping, its record) and burn-train's `Learner` run
//! over a module one parameter at a time.

use pytree_std::burn::optim::{LearningRate, Optimizer};
use pytree_std::burn::tensor::{Device, Tensor};
use pytree_std::{BurnTensor, Error, PyTree};

use super::record::PerParameterState;
use crate::context::Context;
use crate::gradient_transformation::step_in;
use crate::gradient_transformation::{chain, GradientTransformation};
use crate::transform::scale;

/// What a transformation that sums over the leaves meets under
/// [`PerParameter`].
const WHOLE_TREE: &str = "pytree_optim::burn::PerParameter runs the transformation on one \
    tensor at a time, and this one sums over the leaves of the tree (a global norm: \
    clip_by_global_norm, global_norm), which would be each tensor's alone: step the whole \
    module with pytree_optim::burn::step instead";

/// A [`GradientTransformation`] of one tensor ([`BurnTensor`], a tree of
/// one leaf) as burn's per-parameter
/// [`Optimizer`](pytree_std::burn::optim::Optimizer): `ModuleOptimizer::from(it)` (or
/// `with_group` for a group of parameters) steps a module with it, and so
/// does burn-train's `Learner`, which takes a `ModuleOptimizer`. The
/// transformation's state of each parameter is burn's per-parameter
/// state, saved and loaded with the optimizer's record
/// ([`PerParameterState`]).
///
/// The transformations that act element by element fit: [`sgd`](crate::sgd)
/// (with momentum, Nesterov), [`adam`](crate::adam), [`adamw`](crate::adamw),
/// [`scale_by_adam`](crate::scale_by_adam), [`trace`](crate::trace),
/// [`scale`](crate::scale), [`add_decayed_weights`](crate::add_decayed_weights),
/// [`scale_by_schedule`](crate::scale_by_schedule), [`ema`](crate::ema),
/// their chains. On one tensor they give the bits they give on the whole
/// module (`tests/burn_peers.rs` checks `adamw` for 60 steps against
/// [`step`](super::step)).
///
/// **The whole-tree ones do not**: [`clip_by_global_norm`](crate::clip_by_global_norm)
/// (and any [`Fused`](crate::Fused) transformation that takes a
/// [`global_norm_in`](crate::global_norm_in) of the context it is given)
/// would clip each tensor by its own norm. They are refused: the
/// constructors run the transformation once on a tensor of one element,
/// under a [`Context`] whose [`leaf_sums`](Context::leaf_sums) refuses,
/// and return an error if it sums over the leaves, and a step that does so
/// later panics (burn's `Optimizer::step` returns no error). A
/// transformation written elsewhere without the fast path, or with a loop
/// of its own over the leaves, cannot be seen doing so: it runs, per
/// tensor. Masks and groups by
/// key path ([`Wrap::mask`](crate::Wrap::mask), [`multi_transform`](crate::multi_transform))
/// see one tensor at the root, with no path: use burn's
/// `ModuleOptimizer::with_group` instead. For the whole-tree ones, write
/// the training loop with [`step`](super::step), as the module's
/// documentation shows; burn's own per-tensor clipping
/// (`ModuleOptimizer::with_grad_clipping`) runs before the transformation
/// under `PerParameter` as under burn's optimizers.
///
/// **burn's learning rate** (the `lr` of `ModuleOptimizer::step`, the
/// `Learner`'s scheduler's): [`PerParameter::new`] ignores it (the
/// transformation holds its learning rate, and its schedule,
/// [`scale_by_schedule`](crate::scale_by_schedule)), and
/// [`PerParameter::scaled_by_lr`] multiplies the transformation's updates
/// by it (build the transformation with a learning rate of 1:
/// `adamw(1.0, wd)`, `sgd(1.0)`).
///
/// ```
/// use burn::module::Module;
/// use burn::nn::{Initializer, Linear, LinearConfig};
/// use burn::optim::{GradientsParams, ModuleOptimizer};
/// use burn::tensor::{Device, Tensor};
/// use pytree_optim::burn::PerParameter;
///
/// #[derive(Module, Debug)]
/// struct Net { fc: Linear }
///
/// let device = Device::default().autodiff();
/// let (x, y) = (Tensor::<2>::from_data([[1.0f32], [2.0]], &device), Tensor::<2>::from_data([[3.0f32], [5.0]], &device));
/// let fc = LinearConfig::new(1, 1).with_initializer(Initializer::Zeros).init(&device);
/// let mut model = Net { fc };
/// let mut optim = ModuleOptimizer::from(PerParameter::new(pytree_optim::adamw(0.1, 0.0))?);
/// for _ in 0..300 {
///     let loss = (model.fc.forward(x.clone()) - y.clone()).powi_scalar(2).mean();
///     let grads = GradientsParams::from_grads(loss.backward(), &model);
///     model = optim.step(1.0, model, grads); // `new`: burn's lr is not used
/// }
/// let w = model.fc.weight.val().into_data().try_to_vec::<f32>().unwrap()[0];
/// assert!((w - 2.0).abs() < 0.05, "{w}");
///
/// // A whole-tree transformation is refused.
/// let err = PerParameter::new(pytree_optim::clip_by_global_norm(1.0)).unwrap_err();
/// assert!(err.to_string().contains("sums over the leaves"), "{err}");
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct PerParameter<T> {
    transformation: T,
    scaled_by_lr: bool,
}

impl<T> PerParameter<T>
where
    T: GradientTransformation<BurnTensor> + Clone,
    T::State: PyTree<Leaf = BurnTensor>,
{
    /// `transformation` as burn's optimizer, its updates applied as they
    /// are: burn's `lr` is not used (the transformation has its own
    /// learning rate). An error if the transformation sums over the leaves
    /// (see [`PerParameter`]), or fails on a tensor of one element on
    /// burn's default device.
    ///
    /// ```
    /// use burn::nn::LinearConfig;
    /// use burn::optim::{GradientsParams, ModuleOptimizer};
    /// use burn::tensor::{Device, Tensor};
    /// use pytree_optim::burn::PerParameter;
    ///
    /// let device = Device::default().autodiff();
    /// let linear = LinearConfig::new(2, 1).init(&device);
    /// let grads = || GradientsParams::from_grads(linear.forward(Tensor::<2>::ones([1, 2], &device)).sum().backward(), &linear);
    /// let mut optim = ModuleOptimizer::from(PerParameter::new(pytree_optim::sgd(0.5))?);
    /// let before = linear.weight.val().into_data().try_to_vec::<f32>().unwrap();
    /// let stepped = optim.step(1e-9, linear.clone(), grads()); // burn's lr: not used
    /// let after = stepped.weight.val().into_data().try_to_vec::<f32>().unwrap();
    /// assert_eq!(after[0], before[0] - 0.5);
    /// assert!(stepped.weight.is_require_grad());
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn new(transformation: T) -> Result<Self, Error> {
        PerParameter {
            transformation,
            scaled_by_lr: false,
        }
        .probed()
    }

    /// `transformation` as burn's optimizer, its updates multiplied by
    /// burn's `lr` (the parameters move by `lr * updates`): for burn's
    /// learning-rate schedulers and the `Learner`'s. Build the
    /// transformation with a learning rate of 1 (`adamw(1.0, wd)`,
    /// `sgd(1.0).momentum(0.9)`), which makes this `adamw(lr, wd)` at
    /// each step's `lr` (a transformation without a learning-rate stage,
    /// `scale_by_adam()`, gives updates uphill: optax's
    /// `scale_by_learning_rate` is what turns them). The multiplication
    /// is fused into the transformation's pass where it has one. Errors as
    /// [`PerParameter::new`]'s.
    ///
    /// ```
    /// use burn::nn::LinearConfig;
    /// use burn::optim::{GradientsParams, ModuleOptimizer};
    /// use burn::tensor::{Device, Tensor};
    /// use pytree_optim::burn::PerParameter;
    ///
    /// let device = Device::default().autodiff();
    /// let linear = LinearConfig::new(2, 1).init(&device);
    /// let grads = || GradientsParams::from_grads(linear.forward(Tensor::<2>::ones([1, 2], &device)).sum().backward(), &linear);
    /// let mut optim = ModuleOptimizer::from(PerParameter::scaled_by_lr(pytree_optim::sgd(1.0))?);
    /// let before = linear.weight.val().into_data().try_to_vec::<f32>().unwrap();
    /// let stepped = optim.step(0.25, linear.clone(), grads());
    /// let after = stepped.weight.val().into_data().try_to_vec::<f32>().unwrap();
    /// assert_eq!(after[0], before[0] - 0.25); // lr times the gradient, 1
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn scaled_by_lr(transformation: T) -> Result<Self, Error> {
        PerParameter {
            transformation,
            scaled_by_lr: true,
        }
        .probed()
    }

    /// The transformation.
    ///
    /// ```
    /// use pytree_optim::burn::PerParameter;
    /// let opt = PerParameter::new(pytree_optim::scale(0.5))?;
    /// assert_eq!(opt.transformation().factor, 0.5);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn transformation(&self) -> &T {
        &self.transformation
    }

    /// Whether burn's `lr` multiplies the updates
    /// ([`PerParameter::scaled_by_lr`]) or is not used
    /// ([`PerParameter::new`]).
    ///
    /// ```
    /// use pytree_optim::burn::PerParameter;
    /// assert!(!PerParameter::new(pytree_optim::adam(1e-3))?.is_scaled_by_lr());
    /// assert!(PerParameter::scaled_by_lr(pytree_optim::adam(1.0))?.is_scaled_by_lr());
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn is_scaled_by_lr(&self) -> bool {
        self.scaled_by_lr
    }

    /// `self` once a step on a tensor of one element has run without
    /// summing over the leaves.
    fn probed(self) -> Result<Self, Error> {
        let device = Device::default();
        let mut params = BurnTensor::new(Tensor::<1>::zeros([1], &device));
        let mut grads = BurnTensor::new(Tensor::<1>::ones([1], &device));
        let state = self.transformation.init(&params)?;
        self.run(1.0, &mut params, &mut grads, state)?;
        Ok(self)
    }

    /// One step of the transformation on one tensor, burn's `lr`
    /// multiplying the updates if `scaled_by_lr`: the state after it; an
    /// error (the state dropped) if it fails or sums over the leaves.
    fn run(
        &self,
        lr: LearningRate,
        params: &mut BurnTensor,
        grads: &mut BurnTensor,
        mut state: T::State,
    ) -> Result<T::State, Error> {
        let refuse = |_: &mut [f64]| Err(Error::custom(WHOLE_TREE));
        let cx = Context::default().leaf_sums(&refuse);
        if !self.scaled_by_lr {
            step_in(&self.transformation, &cx, params, grads, &mut state)?;
            return Ok(state);
        }
        // The chain's state is the pair of the stages' (moved in and
        // out: no element is copied); `scale`'s holds no tensor.
        let scaled = chain(self.transformation.clone(), scale(lr));
        let mut pair = (state, scale(lr).init(params)?);
        step_in(&scaled, &cx, params, grads, &mut pair)?;
        Ok(pair.0)
    }
}

impl<T> Optimizer for PerParameter<T>
where
    T: GradientTransformation<BurnTensor> + Clone + Send + Sync + 'static,
    T::State: PyTree<Leaf = BurnTensor> + Clone + Send + Sync + 'static,
{
    type State<const D: usize> = PerParameterState<T::State>;

    /// One step of the transformation on `tensor`: its state is `state`
    /// (a record's, rebuilt against the transformation's initial state
    /// for `tensor`), or the initial one.
    ///
    /// # Panics
    ///
    /// If the transformation fails (it sums over the leaves, see
    /// [`PerParameter`]; a device error of burn's), or a loaded state does
    /// not fit the transformation's (another optimizer's record): burn's
    /// `Optimizer::step` returns no error.
    fn step<const D: usize>(
        &self,
        lr: LearningRate,
        tensor: Tensor<D>,
        grad: Tensor<D>,
        state: Option<Self::State<D>>,
    ) -> (Tensor<D>, Option<Self::State<D>>) {
        let mut params = BurnTensor::new(tensor);
        let mut grads = BurnTensor::new(grad);
        let stepped = (|| {
            let state = match state {
                Some(state) => state.into_state(&self.transformation, &params)?,
                None => self.transformation.init(&params)?,
            };
            self.run(lr, &mut params, &mut grads, state)
        })();
        let state = stepped.unwrap_or_else(|e| panic!("pytree_optim::burn::PerParameter: {e}"));
        let tensor = params
            .into_tensor::<D>()
            .unwrap_or_else(|e| panic!("pytree_optim::burn::PerParameter: {e}"));
        (tensor, Some(PerParameterState::ready(state)))
    }

    fn to_device<const D: usize>(state: Self::State<D>, device: &Device) -> Self::State<D> {
        state.moved_to(device)
    }
}
