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
//! Where the update runs:
//! - tensors in CPU memory (contiguous, `f16`, `bf16`, `f32` or `f64`):
//!   one pass over the elements in place, the optimizer's own element
//!   update computing in the tensors' type (`f32` or `f64`: the same bits
//!   as over arrays of that type; `f16` and `bf16` in `f64`); an Adam step reads and writes each
//!   element once and allocates nothing; `.parallel()` splits `f32` and `f64`
//!   tensors across rayon's threads as it splits arrays;
//! - elsewhere (CUDA, Metal, non-contiguous tensors): the same update
//!   ([`ElementUpdate`](crate::ElementUpdate), one function generic over
//!   [`Arith`](crate::Arith)) run once on whole tensors, each operation a
//!   candle tensor operation with `f64` scalars on the tensors' device,
//!   computed in `f32` (`f64` for `f64` tensors). `clip_by_global_norm` keeps the norm and the clip factor
//!   as tensors on the device. Nothing is copied to the host.
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

#[cfg(test)]
mod tests {
    //! The tensor-operation path (what runs on CUDA and Metal) against the
    //! fused CPU path, on the CPU: every optimizer and transformation over
    //! the same tree and gradients, both ways. The fused path computes in
    //! `f64`, the tensor path in `f32`: equal to `1e-5` relative.
    use super::*;
    use crate::adam::scale_by_adam;
    use crate::alias::{adam, adamw, sgd};
    use crate::ema::EmaOfParams;
    use crate::gradient_transformation::{apply_updates, chain, GradientTransformation};
    use crate::transform::{add_decayed_weights, clip_by_global_norm, scale, scale_by_schedule};
    use crate::wrappers::{masked, Wrap};
    use pytree_std::candle_core::{DType, Device};

    /// A variable's tensor, a plain tensor, a scalar tensor.
    type Tree = Vec<Tensor>;

    fn data(n: usize, k: f32) -> Vec<f32> {
        (0..n).map(|i| (1.7 * i as f32 + k).sin() * 3.0).collect()
    }

    fn tree(k: f32) -> Tree {
        let d = Device::Cpu;
        vec![
            Var::from_vec(data(6, k), (2, 3), &d).unwrap().into_inner(),
            Tensor::from_vec(data(4, k + 1.0), 4, &d).unwrap(),
            Tensor::new(2.5f32 + k, &d).unwrap(),
        ]
    }

    fn values(t: &Tree) -> Vec<f64> {
        let mut out = Vec::new();
        for x in t {
            out.extend(
                x.flatten_all()
                    .unwrap()
                    .to_dtype(DType::F64)
                    .unwrap()
                    .to_vec1::<f64>()
                    .unwrap(),
            );
        }
        out
    }

    /// Runs `run` on fresh trees with the fused path, then with the
    /// tensor path, and compares what `run` returns.
    fn both_ways(what: &str, run: impl Fn() -> Vec<f64>) {
        let fused = run();
        pytree_std::__force_tensor_ops(true);
        let ops = run();
        pytree_std::__force_tensor_ops(false);
        assert_eq!(fused.len(), ops.len());
        for (i, (a, b)) in fused.iter().zip(&ops).enumerate() {
            assert!(
                (a - b).abs() <= 1e-5 * (1.0 + a.abs()),
                "{what} [{i}]: fused {a}, tensor ops {b}"
            );
        }
        assert!(
            fused.iter().zip(&values(&tree(0.0))).any(|(a, b)| a != b),
            "{what}: nothing changed"
        );
    }

    fn steps<O: GradientTransformation<Tree>>(opt: O) -> Vec<f64> {
        let mut p = tree(0.0);
        let mut state = opt.init(&p).unwrap();
        for k in 0..3 {
            opt.step(&mut p, &mut tree(k as f32 + 0.5), &mut state)
                .unwrap();
        }
        values(&p)
    }

    fn updates<O: GradientTransformation<Tree>>(opt: O) -> Vec<f64> {
        let mut p = tree(0.0);
        let mut state = opt.init(&p).unwrap();
        for k in 0..3 {
            let mut u = tree(k as f32 + 0.5);
            opt.update(&mut u, &mut state, &p).unwrap();
            apply_updates(&mut p, &u).unwrap();
        }
        values(&p)
    }

    #[test]
    fn every_optimizer_runs_the_same_as_tensor_operations() {
        both_ways("sgd", || steps(sgd(0.1)));
        both_ways("sgd update", || updates(sgd(0.1)));
        both_ways("momentum", || steps(sgd(0.1).momentum(0.9)));
        both_ways("momentum update", || updates(sgd(0.1).momentum(0.9)));
        both_ways("nesterov", || steps(sgd(0.1).momentum(0.9).nesterov()));
        both_ways("nesterov update", || {
            updates(sgd(0.1).momentum(0.9).nesterov())
        });
        both_ways("adam", || steps(adam(0.1)));
        both_ways("adam update", || updates(adam(0.1).eps_root(1e-8)));
        both_ways("adamw", || steps(adamw(0.1, 0.5)));
        both_ways("adamw update", || updates(adamw(0.1, 0.5)));
        both_ways("masked adam", || {
            steps(
                adam(0.1).mask(crate::mask::Mask::new(|p: &pytree_std::KeyPath| {
                    p.to_string() != "[1]"
                })),
            )
        });
        both_ways("scale_by_adam update", || updates(scale_by_adam()));
        both_ways("scale_by_adam step", || steps(scale_by_adam()));
        both_ways("optax-masked adamw", || {
            updates(masked(
                adamw(0.1, 0.5),
                crate::mask::Mask::new(|p: &pytree_std::KeyPath| p.to_string() != "[1]"),
            ))
        });
        both_ways("masked adam update", || {
            updates(
                adam(0.1).mask(crate::mask::Mask::new(|p: &pytree_std::KeyPath| {
                    p.to_string() != "[1]"
                })),
            )
        });
    }

    /// `f32` tensors take Adam's `f32` loop: the same bits as the
    /// optimizer's element function over `f32` scalars.
    #[test]
    fn adam_over_f32_tensors_matches_f32_scalars_bit_for_bit() {
        same_bits(adam(0.1));
        same_bits(adamw(0.1, 0.5));
        same_bits(adam(0.1).eps_root(1e-8));
    }

    fn same_bits<O>(opt: O)
    where
        O: GradientTransformation<Vec<Tensor>> + GradientTransformation<Vec<f32>>,
    {
        {
            let mut t = vec![Tensor::from_vec(data(6, 0.0), 6, &Device::Cpu).unwrap()];
            let mut s = data(6, 0.0);
            let (mut st, mut ss) = (opt.init(&t).unwrap(), opt.init(&s).unwrap());
            for k in 0..3 {
                let g = data(6, k as f32 + 0.5);
                opt.step(
                    &mut t,
                    &mut vec![Tensor::from_vec(g.clone(), 6, &Device::Cpu).unwrap()],
                    &mut st,
                )
                .unwrap();
                opt.step(&mut s, &mut g.clone(), &mut ss).unwrap();
                let mut u = vec![Tensor::from_vec(g.clone(), 6, &Device::Cpu).unwrap()];
                let mut us = g;
                opt.update(&mut u, &mut st, &t).unwrap();
                opt.update(&mut us, &mut ss, &s).unwrap();
                assert_eq!(u[0].to_vec1::<f32>().unwrap(), us);
            }
            assert_eq!(t[0].to_vec1::<f32>().unwrap(), s);
        }
    }

    #[test]
    fn variables_run_the_same_as_tensor_operations() {
        let vars = |k: f32| vec![Var::from_vec(data(6, k), (3, 2), &Device::Cpu).unwrap()];
        let run = || {
            let opt = chain(clip_by_global_norm(1.0), adamw(0.1, 0.1));
            let mut p = vars(0.0);
            let mut state = opt.init(&p).unwrap();
            for k in 0..3 {
                opt.step(&mut p, &mut vars(k as f32 + 0.5), &mut state)
                    .unwrap();
            }
            values(&vec![p[0].as_tensor().clone()])
        };
        let fused = run();
        pytree_std::__force_tensor_ops(true);
        let ops = run();
        pytree_std::__force_tensor_ops(false);
        for (a, b) in fused.iter().zip(&ops) {
            assert!(
                (a - b).abs() <= 1e-5 * (1.0 + a.abs()),
                "fused {a}, tensor ops {b}"
            );
        }
        assert_ne!(
            fused,
            data(6, 0.0)
                .iter()
                .map(|&x| f64::from(x))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn every_transformation_runs_the_same_as_tensor_operations() {
        both_ways("clip", || {
            updates(chain(clip_by_global_norm(1.0), scale(-1.0)))
        });
        both_ways("clip below the norm", || {
            updates(chain(clip_by_global_norm(1e3), scale(-1.0)))
        });
        both_ways("clip then adamw", || {
            steps(chain(clip_by_global_norm(0.5), adamw(0.1, 0.1)))
        });
        both_ways("scale by schedule", || {
            updates(scale_by_schedule(|n: u64| -0.1 * (n + 1) as f64))
        });
        both_ways("add decayed weights", || updates(add_decayed_weights(0.3)));
        both_ways("ema", || {
            let mut p = tree(0.0);
            let mut ema = EmaOfParams::new(0.9, &p).unwrap();
            for k in 0..3 {
                p = tree(k as f32 + 1.0);
                ema.update(&p).unwrap();
            }
            values(ema.average())
        });
    }
}
