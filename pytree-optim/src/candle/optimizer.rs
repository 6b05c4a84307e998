//! [`Optimizer`]: a transformation with its state, holding the model's
//! variables, stepped by the loss as candle-nn's optimizers are
//! (`backward_step(&loss)`; flax's `nnx.Optimizer(model, tx)` holds a
//! model and an optax transformation the same way).

use pytree_std::candle_core::{backprop::GradStore, Tensor};
use pytree_std::{Error, PyTree};

use super::{candle_err, gradients, CandleLeaf};
use crate::gradient_transformation::GradientTransformation;
use crate::mask::{LeafMask, Mask};

/// A [`GradientTransformation`] and its state, holding a copy of the
/// model's tree (the same variables: a `Var` or a `Tensor` clone is a
/// handle to the same memory) and updating it in place, so the model the
/// caller keeps, runs and checkpoints sees every step. The training loop
/// then reads as candle-nn's:
///
/// ```
/// use pytree_optim::{adamw, candle};
/// use pytree_std::candle_core::{DType, Device, Result, Tensor, Var};
/// use pytree_std::PyTree;
///
/// #[derive(PyTree, Clone, Debug)]
/// struct Linear { w: Var, b: Var }
///
/// impl Linear {
///     // A `&Var` goes wherever a `&Tensor` does: `Var` derefs to `Tensor`.
///     fn forward(&self, x: &Tensor) -> Result<Tensor> {
///         x.matmul(&self.w)?.broadcast_add(&self.b)
///     }
/// }
///
/// let dev = Device::Cpu;
/// let (x, y) = (Tensor::new(&[[1.0f32], [2.0]], &dev)?, Tensor::new(&[[3.0f32], [5.0]], &dev)?);
/// let model = Linear { w: Var::zeros((1, 1), DType::F32, &dev)?, b: Var::zeros(1, DType::F32, &dev)? };
/// let mut opt = candle::Optimizer::new(&model, adamw(0.1, 0.0))?;
/// for _ in 0..300 {
///     let loss = model.forward(&x)?.sub(&y)?.sqr()?.mean_all()?;
///     opt.backward_step(&loss)?;
/// }
/// let w = model.w.flatten_all()?.to_vec1::<f32>()?[0];
/// assert!((w - 2.0).abs() < 0.05, "{w}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// Each step takes the gradient of every parameter from the loss's
/// `backward()` ([`grads_masked`](super::grads_masked)): a parameter
/// without one is an error naming its path, except where the gradient
/// mask says the parameter needs none (by default [`Mask::params`]:
/// leaves of kind `"state"` get zeros; wrap the transformation in
/// `.mask(Mask::params())` so that it leaves them alone, weight decay
/// included). The tree is the one given to
/// [`new`](Optimizer::new): a variable the model replaces afterwards
/// (`load_like`, or a new `Var` in a field) is not this optimizer's; load
/// checkpoints into the model in place (`Checkpoint::load_into`, which
/// writes each variable with `Var::set`), or build a new optimizer, as with
/// candle-nn's `AdamW::new(varmap.all_vars(), ..)`.
pub struct Optimizer<P, T: GradientTransformation<P>> {
    params: P,
    transformation: T,
    state: T::State,
    needs_grad: LeafMask,
}

impl<P, T> Optimizer<P, T>
where
    P: PyTree + Clone,
    P::Leaf: CandleLeaf,
    T: GradientTransformation<P>,
{
    /// An optimizer for `params` (kept as a clone: the same variables),
    /// with `transformation`'s initial state.
    ///
    /// ```
    /// use pytree_optim::{candle, sgd};
    /// use pytree_std::candle_core::{Device, Var};
    /// let w = Var::new(&[1.0f32, 2.0], &Device::Cpu)?;
    /// let opt = candle::Optimizer::new(&vec![w], sgd(0.1).momentum(0.9))?;
    /// assert!(opt.state().0.is_some());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(params: &P, transformation: T) -> Result<Self, Error> {
        let state = transformation.init(params)?;
        Ok(Optimizer {
            needs_grad: Mask::params().on(params),
            params: params.clone(),
            transformation,
            state,
        })
    }

    /// The leaves that must have a gradient at each step (default
    /// [`Mask::params`]); the others get zeros. A frozen layer that is no
    /// variable at all needs this (and a transformation masked the same
    /// way, so that it is not changed either).
    ///
    /// ```
    /// use pytree_optim::{candle, sgd, Mask, Wrap};
    /// use pytree_std::candle_core::{Device, Tensor, Var};
    /// use pytree_std::KeyPath;
    /// let dev = Device::Cpu;
    /// let params = vec![Var::new(&[3.0f32], &dev)?, Var::new(&[1.0f32], &dev)?];
    /// let trainable = Mask::new(|p: &KeyPath| p.to_string() == "[0]");
    /// let mut opt = candle::Optimizer::new(&params, sgd(0.5).mask(trainable.clone()))?
    ///     .grad_mask(trainable);
    /// opt.backward_step(&params[0].sqr()?.sum_all()?)?; // no gradient for [1]
    /// assert_eq!(params[0].to_vec1::<f32>()?, [0.0]);
    /// assert_eq!(params[1].to_vec1::<f32>()?, [1.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn grad_mask(mut self, mask: Mask) -> Self {
        self.needs_grad = mask.on(&self.params);
        self
    }

    /// `loss.backward()`, then [`step`](Optimizer::step) (candle-nn's
    /// `Optimizer::backward_step`).
    ///
    /// ```
    /// use pytree_optim::{candle, sgd};
    /// use pytree_std::candle_core::{Device, Var};
    /// let w = Var::new(&[3.0f32], &Device::Cpu)?;
    /// let mut opt = candle::Optimizer::new(&(w.clone(),), sgd(0.25))?;
    /// opt.backward_step(&w.sqr()?.sum_all()?)?; // gradient 6
    /// assert_eq!(w.to_vec1::<f32>()?, [1.5]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn backward_step(&mut self, loss: &Tensor) -> Result<(), Error> {
        let store = loss.backward().map_err(candle_err)?;
        self.step(&store)
    }

    /// One step of the transformation with the gradients in `store` (from
    /// a `backward()` of the caller's), written into the variables in
    /// place. A missing gradient, or a failing update, is an error naming
    /// the path, and then nothing has changed.
    ///
    /// ```
    /// use pytree_optim::{candle, sgd};
    /// use pytree_std::candle_core::{Device, Var};
    /// let (w, other) = (Var::new(&[3.0f32], &Device::Cpu)?, Var::new(&[1.0f32], &Device::Cpu)?);
    /// let mut opt = candle::Optimizer::new(&vec![w.clone(), other], sgd(0.25))?;
    /// let store = w.sqr()?.sum_all()?.backward()?;
    /// let err = opt.step(&store).unwrap_err();
    /// assert!(err.to_string().starts_with("at [1]: "), "{err}");
    /// assert_eq!(w.to_vec1::<f32>()?, [3.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn step(&mut self, store: &GradStore) -> Result<(), Error> {
        let mut grads = gradients(&self.params, store, &self.needs_grad)?;
        self.transformation
            .step(&mut self.params, &mut grads, &mut self.state)
    }

    /// The tree this optimizer updates (the model's variables).
    ///
    /// ```
    /// use pytree_optim::{candle, sgd};
    /// use pytree_std::candle_core::{Device, Var};
    /// let w = Var::new(&[3.0f32], &Device::Cpu)?;
    /// let opt = candle::Optimizer::new(&vec![w.clone()], sgd(0.1))?;
    /// assert_eq!(opt.params()[0].id(), w.id());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn params(&self) -> &P {
        &self.params
    }

    /// The transformation's state (a pytree: `checkpoint::save(path,
    /// opt.state())` saves it).
    ///
    /// ```
    /// use pytree_optim::{adam, candle};
    /// use pytree_std::candle_core::{Device, Var};
    /// let w = Var::new(&[3.0f32], &Device::Cpu)?;
    /// let mut opt = candle::Optimizer::new(&vec![w.clone()], adam(0.1))?;
    /// opt.backward_step(&w.sqr()?.sum_all()?)?;
    /// assert_eq!(opt.state().0.count, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn state(&self) -> &T::State {
        &self.state
    }

    /// The state, to load a checkpoint into
    /// (`Load::new().open(path)?.load_into(opt.state_mut())`) or replace.
    ///
    /// ```
    /// use pytree_optim::{adam, candle, GradientTransformation};
    /// use pytree_std::candle_core::{Device, Var};
    /// let w = Var::new(&[3.0f32], &Device::Cpu)?;
    /// let mut opt = candle::Optimizer::new(&vec![w.clone()], adam(0.1))?;
    /// opt.backward_step(&w.sqr()?.sum_all()?)?;
    /// *opt.state_mut() = adam(0.1).init(&vec![w])?;
    /// assert_eq!(opt.state().0.count, 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn state_mut(&mut self) -> &mut T::State {
        &mut self.state
    }

    /// The transformation.
    ///
    /// ```
    /// use pytree_optim::{candle, sgd};
    /// use pytree_std::candle_core::{Device, Var};
    /// let opt = candle::Optimizer::new(&vec![Var::new(&[3.0f32], &Device::Cpu)?], sgd(0.1))?;
    /// assert_eq!(opt.transformation().second.learning_rate, 0.1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn transformation(&self) -> &T {
        &self.transformation
    }
}

impl<P, T> std::fmt::Debug for Optimizer<P, T>
where
    P: std::fmt::Debug,
    T: GradientTransformation<P> + std::fmt::Debug,
    T::State: std::fmt::Debug,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Optimizer")
            .field("params", &self.params)
            .field("transformation", &self.transformation)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}
