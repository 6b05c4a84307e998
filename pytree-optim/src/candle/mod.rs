//! candle (feature `candle`): [`Tensor`] and [`Var`] leaves updated in
//! place on their own device, the gradient tree from candle's autograd
//! ([`grads`], [`value_and_grad`]), and [`Optimizer`], which steps a
//! model from its loss as candle-nn's optimizers do.
//!
//! A model's parameters are candle variables: fields of type [`Var`], or
//! of type [`Tensor`] holding a variable's tensor (`var.as_tensor().clone()`).
//! Its forward pass reads a `Var` field wherever a `&Tensor` goes
//! (`x.matmul(&self.w)`, `candle_nn::ops::softmax(&h, 1)`; method calls:
//! `self.w.t()`): `Var` derefs to `Tensor`, as candle-nn's `VarMap`
//! variables do, so a model of variables needs no copy of itself as
//! tensors to run. Where an owned `Tensor` is asked for (candle-nn's
//! `Linear::new(weight, bias)`), `self.w.as_tensor().clone()` is the
//! variable's own tensor (a handle, no copy; autograd tracks it).
//!
//! Every tensor an optimizer writes (parameters, moments, updates) is
//! written **in place**: a variable with `Var::set`, another tensor with
//! `slice_set`. So a variable stays a variable (candle's autograd keeps
//! tracking it, step after step), and every holder of it (the `Var` a
//! layer was built from, a `VarMap`, a weight tied between two layers,
//! an [`Optimizer`]) sees the update. A clone of a tensor shares its
//! memory, as candle's tensors do: clone the state with `Tensor::copy`
//! for a snapshot.
//!
//! Where the update runs (each update is one
//! [`ElementUpdate`](crate::ElementUpdate), a function generic over
//! [`Arith`](crate::Arith), whichever way it runs):
//! - tensors in CPU memory (contiguous, `f16`, `bf16`, `f32` or `f64`):
//!   one pass over the elements in place, in the tensors' type (`f32` or
//!   `f64`: the bits of arrays of that type; `f16` and `bf16` in `f64`);
//!   an Adam step reads and writes each element once and allocates
//!   nothing; `.parallel()` splits `f32` and `f64` tensors across rayon's
//!   threads as it splits arrays;
//! - elsewhere (CUDA, Metal, non-contiguous tensors): once on whole
//!   tensors, each operation a candle tensor operation with `f64` scalars
//!   on the tensors' device, in `f32` (`f64` for `f64` tensors).
//!   `clip_by_global_norm` keeps the norm and the clip factor as tensors
//!   on the device. Nothing is copied to the host. `.exec(Exec::TensorOps)`
//!   runs CPU tensors this way too, to compare the two paths without a
//!   GPU.
//!
//! A tree holding the same variable twice (a tied weight) is updated
//! once per step, at the leaf that comes first; [`grads`] gives the later
//! leaves a zero gradient.
//!
//! Integer and bool tensors (a model's buffers, such as Hugging Face's
//! I64 `position_ids`) are left alone: their optimizer state is zeros of
//! their own dtype, an update that writes only such tensors does nothing,
//! and they add nothing to a norm. A float update that reads one (an
//! integer gradient for a float parameter) is an error.
//!
//! The loop, as candle-nn's (`opt.backward_step(&loss)`); the functional
//! form is [`value_and_grad`] and [`GradientTransformation::step`]:
//!
//! ```
//! use pytree_optim::{adam, candle};
//! use pytree_std::candle_core::{DType, Device, Result, Tensor, Var};
//! use pytree_std::PyTree;
//!
//! #[derive(PyTree, Clone, Debug)]
//! struct Linear { w: Var, b: Var }
//!
//! impl Linear {
//!     fn forward(&self, x: &Tensor) -> Result<Tensor> {
//!         x.matmul(&self.w)?.broadcast_add(&self.b)
//!     }
//! }
//!
//! let dev = Device::Cpu;
//! let (x, y) = (Tensor::new(&[[1.0f32], [2.0]], &dev)?, Tensor::new(&[[3.0f32], [5.0]], &dev)?);
//! let model = Linear { w: Var::zeros((1, 1), DType::F32, &dev)?, b: Var::zeros(1, DType::F32, &dev)? };
//! let mut opt = candle::Optimizer::new(&model, adam(0.1))?;
//! for _ in 0..300 {
//!     let loss = model.forward(&x)?.sub(&y)?.sqr()?.mean_all()?;
//!     opt.backward_step(&loss)?;
//! }
//! let w = model.w.flatten_all()?.to_vec1::<f32>()?[0];
//! assert!((w - 2.0).abs() < 0.05, "{w}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`GradientTransformation::step`]: crate::GradientTransformation::step

mod optimizer;

pub use optimizer::Optimizer;

use pytree_std::candle_core::{self as candle_core, backprop::GradStore, Tensor, Var};
use pytree_std::elements::FloatLeaf;
use pytree_std::{Error, LeafMut, LeafRef, PyTree, Std};

use crate::mask::{LeafMask, Mask};

#[cold]
fn candle_err(e: candle_core::Error) -> Error {
    Error::custom(format!("candle: {e}"))
}

/// A candle leaf, [`Tensor`] (a variable's tensor, or any tensor) or
/// [`Var`]: the leaf types candle's autograd gives gradients for. Sealed.
///
/// ```
/// use pytree_optim::candle::CandleLeaf;
/// use pytree_std::candle_core::{Device, Var};
/// let v = Var::new(&[1.0f32], &Device::Cpu)?;
/// assert!(<Var as CandleLeaf>::tensor(&v).is_variable());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait CandleLeaf: FloatLeaf + sealed::Sealed {
    /// The tensor of a leaf lent by reference (the one autograd knows it by).
    ///
    /// ```
    /// use pytree_optim::candle::CandleLeaf;
    /// use pytree_std::candle_core::{Device, Tensor};
    /// let t = Tensor::new(&[1.0f32], &Device::Cpu)?;
    /// assert_eq!(<Tensor as CandleLeaf>::tensor(&t).id(), t.id());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn tensor<'a>(leaf: LeafRef<'a, Std, Self>) -> &'a Tensor;

    /// The tensor of a leaf lent by mutable reference.
    ///
    /// ```
    /// use pytree_optim::candle::CandleLeaf;
    /// use pytree_std::candle_core::{Device, Var};
    /// let mut v = Var::new(&[1.0f32], &Device::Cpu)?;
    /// assert_eq!(<Var as CandleLeaf>::tensor_mut(&mut v).dims(), [1]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn tensor_mut<'a>(leaf: LeafMut<'a, Std, Self>) -> &'a Tensor;

    /// The leaf holding a gradient (a `Var` is a copy of it on its device:
    /// prefer `Tensor` fields to avoid it).
    ///
    /// ```
    /// use pytree_optim::candle::CandleLeaf;
    /// use pytree_std::candle_core::{Device, Tensor, Var};
    /// let g = Tensor::new(&[0.5f32], &Device::Cpu)?;
    /// assert_eq!(<Var as CandleLeaf>::from_gradient(g)?.to_vec1::<f32>()?, [0.5]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn from_gradient(grad: Tensor) -> Result<Self, Error>
    where
        Self: Sized;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for pytree_std::candle_core::Tensor {}
    impl Sealed for pytree_std::candle_core::Var {}

    pub trait SealedLoss {}
    impl SealedLoss for pytree_std::candle_core::Tensor {}
    impl SealedLoss for pytree_std::candle_core::Result<pytree_std::candle_core::Tensor> {}
}

impl CandleLeaf for Tensor {
    fn tensor<'a>(leaf: LeafRef<'a, Std, Tensor>) -> &'a Tensor {
        leaf
    }
    fn tensor_mut<'a>(leaf: LeafMut<'a, Std, Tensor>) -> &'a Tensor {
        leaf
    }
    fn from_gradient(grad: Tensor) -> Result<Self, Error> {
        Ok(grad)
    }
}

impl CandleLeaf for Var {
    fn tensor<'a>(leaf: LeafRef<'a, Std, Var>) -> &'a Tensor {
        leaf.as_tensor()
    }
    fn tensor_mut<'a>(leaf: LeafMut<'a, Std, Var>) -> &'a Tensor {
        leaf.as_tensor()
    }
    fn from_gradient(grad: Tensor) -> Result<Self, Error> {
        Var::from_tensor(&grad).map_err(candle_err)
    }
}

/// The gradient tree of `params` from candle's autograd (the `GradStore`
/// of `loss.backward()`): a tree of `params`' type whose every leaf is
/// the gradient of the parameter at the same path. A parameter without a
/// gradient (not a variable, or not part of the loss) is an error naming
/// its path; use [`grads_masked`] to leave parameters out. A leaf that
/// shares memory with an earlier one (a tied weight) gets a zero
/// gradient: the earlier leaf's gradient already holds the sum.
///
/// ```
/// use pytree_optim::candle;
/// use pytree_std::candle_core::{Device, Tensor, Var};
/// let (w, frozen) = (Var::new(&[3.0f32], &Device::Cpu)?, Var::new(&[1.0f32], &Device::Cpu)?);
/// let store = w.sqr()?.sum_all()?.backward()?;
/// let g = candle::grads(&vec![w.clone()], &store)?;
/// assert_eq!(g[0].to_vec1::<f32>()?, [6.0]);
/// let err = candle::grads(&vec![w, frozen], &store).unwrap_err();
/// assert_eq!(err.to_string(), "at [1]: the function failed: no gradient for this parameter (it is not a variable, or the loss does not depend on it)");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn grads<P>(params: &P, store: &GradStore) -> Result<P, Error>
where
    P: PyTree,
    P::Leaf: CandleLeaf,
{
    gradients(params, store, &Mask::all().on(params))
}

/// [`grads`] where `mask` holds, and zeros (of the parameter's shape,
/// dtype and device) elsewhere, so a frozen parameter needs no gradient.
///
/// ```
/// use pytree_optim::{candle, Mask};
/// use pytree_std::candle_core::{Device, Var};
/// use pytree_std::KeyPath;
/// let (w, frozen) = (Var::new(&[3.0f32], &Device::Cpu)?, Var::new(&[1.0f32], &Device::Cpu)?);
/// let store = w.sqr()?.sum_all()?.backward()?;
/// let trainable = Mask::new(|p: &KeyPath| p.to_string() != "[1]");
/// let g = candle::grads_masked(&vec![w, frozen], &store, &trainable)?;
/// assert_eq!((g[0].to_vec1::<f32>()?, g[1].to_vec1::<f32>()?), (vec![6.0], vec![0.0]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn grads_masked<P>(params: &P, store: &GradStore, mask: &Mask) -> Result<P, Error>
where
    P: PyTree,
    P::Leaf: CandleLeaf,
{
    gradients(params, store, &mask.on(params))
}

fn gradients<P>(params: &P, store: &GradStore, mask: &LeafMask) -> Result<P, Error>
where
    P: PyTree,
    P::Leaf: CandleLeaf,
{
    let tensors: Vec<&Tensor> = pytree_std::leaves(params)
        .into_iter()
        .map(<P::Leaf as CandleLeaf>::tensor)
        .collect();
    let mut i = 0;
    pytree_std::walk::map_n(params, [], |x, []| {
        let t = <P::Leaf as CandleLeaf>::tensor(x);
        let tied = tensors[..i].iter().any(|e| Tensor::shares_memory(e, t));
        let on = mask.get(i);
        i += 1;
        let g = match store.get(t) {
            Some(g) if on && !tied => g.clone(),
            None if on && !tied => {
                return Err("no gradient for this parameter (it is not a variable, or the loss does not depend on it)".to_string())
            }
            _ => t.zeros_like().map_err(|e| format!("candle: {e}"))?,
        };
        <P::Leaf as CandleLeaf>::from_gradient(g).map_err(|e| e.kind().to_string())
    })
}

/// The loss `loss(params)` and its gradient tree ([`grads`]): candle's
/// `backward` on the loss, no hand-written backward pass. The loss
/// function returns the loss tensor, or candle's `Result` of it
/// ([`IntoLoss`]).
///
/// ```
/// use pytree_optim::candle;
/// use pytree_std::candle_core::{Device, Var};
/// let params = (Var::new(&[2.0f32], &Device::Cpu)?,);
/// let (loss, g) = candle::value_and_grad(&params, |(w,)| w.sqr()?.sum_all())?;
/// assert_eq!((loss.to_scalar::<f32>()?, g.0.to_vec1::<f32>()?), (4.0, vec![4.0]));
/// // A loss that returns the tensor itself.
/// let (loss, _) = candle::value_and_grad(&params, |(w,)| (w.as_tensor() * 3.0).unwrap().sum_all().unwrap())?;
/// assert_eq!(loss.to_scalar::<f32>()?, 6.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn value_and_grad<P, F, L>(params: &P, loss: F) -> Result<(Tensor, P), Error>
where
    P: PyTree,
    P::Leaf: CandleLeaf,
    F: FnOnce(&P) -> L,
    L: IntoLoss,
{
    let value = loss(params).into_loss().map_err(candle_err)?;
    let store = value.backward().map_err(candle_err)?;
    let g = grads(params, &store)?;
    Ok((value, g))
}

/// What a loss function returns: the loss [`Tensor`], or candle's
/// `Result<Tensor>` (a loss written with `?`). Sealed; two impls, so a
/// closure that ends in `Ok(loss)` still infers candle's error type.
///
/// ```
/// use pytree_optim::candle::IntoLoss;
/// use pytree_std::candle_core::{Device, Tensor};
/// let t = Tensor::new(1.5f32, &Device::Cpu)?;
/// assert_eq!(t.clone().into_loss()?.to_scalar::<f32>()?, 1.5);
/// assert_eq!(Ok(t).into_loss()?.to_scalar::<f32>()?, 1.5);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait IntoLoss: sealed::SealedLoss {
    /// The loss tensor, or the error computing it.
    fn into_loss(self) -> candle_core::Result<Tensor>;
}

impl IntoLoss for Tensor {
    fn into_loss(self) -> candle_core::Result<Tensor> {
        Ok(self)
    }
}

impl IntoLoss for candle_core::Result<Tensor> {
    fn into_loss(self) -> candle_core::Result<Tensor> {
        self
    }
}
