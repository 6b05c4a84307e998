//! Optimizer arithmetic: [`Tensor`] and [`Var`] as [`FloatLeaf`]s,
//! updated in place on their own device (pytree-optim's module `candle`
//! says how, and where each update runs):
//! - tensors in CPU memory (contiguous, `f16`, `bf16`, `f32` or `f64`):
//!   one pass over the elements in place (`fused.rs`), the optimizer's
//!   [`ElementUpdate`] computing in `f32` for `f32` tensors, else in `f64`;
//! - elsewhere (CUDA, Metal, non-contiguous tensors, and every tensor
//!   under [`Exec::TensorOps`]): the same update run
//!   once on whole tensors, as candle operations on their device
//!   (`device.rs`), and
//!   `clip_by_global_norm`'s norm and factor kept there as tensors.
//!
//! Integer and bool tensors (a model's buffers) are left alone: their
//! state is zeros of their own dtype, an update that writes only such
//! tensors does nothing, and they add nothing to a norm.

use candle_core::{DType, Tensor, Var};

use super::fused::{self, same_storage};
use super::{candle_error as candle_err, device};
use crate::elements::{sum_slice, zip_host_vecs, Arith, ElementUpdate, Exec, FloatLeaf};
use crate::std_namespace::Std;
use pytree_core::{Error, Flatten, Leaf, LeafMut, LeafRef};

fn float_dtype(t: &Tensor) -> Result<DType, Error> {
    let d = t.dtype();
    if d.is_float() {
        Ok(d)
    } else {
        Err(Error::custom(format!(
            "expected a float tensor, found dtype {} with shape {:?}",
            d.as_str(),
            t.dims()
        )))
    }
}

/// Checks that the tensors have one shape and float dtypes.
fn ensure_one_float_shape<const N: usize, const M: usize>(
    muts: &[&Tensor; N],
    refs: &[&Tensor; M],
) -> Result<(), Error> {
    let Some(first) = muts.first().or(refs.first()) else {
        return Ok(());
    };
    for t in muts.iter().chain(refs.iter()) {
        if t.dims() != first.dims() {
            return Err(Error::custom(format!(
                "tensor shape mismatch: expected {:?}, found {:?}",
                first.dims(),
                t.dims()
            )));
        }
        float_dtype(t)?;
    }
    Ok(())
}

/// The tensor's elements as `f64`s on the host (C order): only for
/// `zip_elements` / `sum_elements` called directly on tensors the fused
/// path cannot reach (the optimizers name their update, and take the
/// device path instead).
fn host(t: &Tensor) -> Result<Vec<f64>, Error> {
    t.flatten_all()
        .and_then(|t| t.to_dtype(DType::F64))
        .and_then(|t| t.to_vec1::<f64>())
        .map_err(candle_err)
}

/// No [`ElementUpdate`]: what `zip_elements` (a closure only) passes.
struct Closure;

impl<const N: usize, const M: usize> ElementUpdate<f64, N, M> for Closure {
    fn apply<T: Arith<f64>>(&self, _: [&mut T; N], _: [T; M]) {}
}

/// The update of `N` written and `M` read tensors: in place on the CPU,
/// else as tensor operations (with `update`) or, without, through the
/// host. Checked first: on an error nothing has changed.
fn zip<const N: usize, const M: usize, F, U>(
    muts: [&Tensor; N],
    refs: [&Tensor; M],
    exec: Exec,
    f: &F,
    update: Option<&U>,
) -> Result<(), Error>
where
    F: Fn([&mut f64; N], [f64; M]) + Sync,
    U: ElementUpdate<f64, N, M>,
{
    // Integer and bool tensors (a model's buffers, such as Hugging Face's
    // I64 `position_ids`) are not optimized: an update that writes only
    // such tensors leaves them alone.
    if N > 0 && muts.iter().all(|m| !m.dtype().is_float()) {
        return Ok(());
    }
    ensure_one_float_shape(&muts, &refs)?;
    if exec != Exec::TensorOps {
        if let Some(r) = fused::try_zip(muts, refs, exec, f, update) {
            return r.map_err(candle_err);
        }
    }
    if let Some(t) = muts.iter().find(|t| !t.is_contiguous()) {
        return Err(Error::custom(format!(
            "a tensor of shape {:?} that is not contiguous cannot be updated in place",
            t.dims()
        )));
    }
    let new = match update {
        Some(u) => device::new_values(u, muts, refs).map_err(candle_err)?,
        None => {
            let mv = zip_host_vecs(muts, refs, host, exec, f)?;
            let mut new = Vec::with_capacity(N);
            for (i, (m, v)) in muts.iter().zip(mv).enumerate() {
                let t = Tensor::from_vec(v, m.dims(), m.device()).map_err(candle_err)?;
                new.push((i, t));
            }
            new
        }
    };
    for (i, value) in new {
        device::write(muts[i], &value).map_err(candle_err)?;
    }
    Ok(())
}

/// The sum of `f(element)`: read in place on the CPU, else through the host.
/// Integer and bool tensors add nothing.
fn sum<F: Fn(f64) -> f64 + Sync>(t: &Tensor, exec: Exec, f: &F) -> Result<f64, Error> {
    if !t.dtype().is_float() {
        return Ok(0.0);
    }
    match fused::try_sum(t, f) {
        Some(s) => Ok(s),
        None => Ok(sum_slice(&host(t)?, exec, f)),
    }
}

/// `clip_by_global_norm` with the norm and the factor as tensors on the
/// device (one `sum_all` per leaf, the sums added on the first leaf's
/// device, the factor `max / max(norm, max)` multiplied in place): the
/// clip never waits for a device-to-host copy. Trees whose masked leaves
/// all sit in contiguous CPU memory take the host path, which reads them
/// in place.
fn clip<P>(
    params: &P,
    updates: &mut P,
    selected: &dyn Fn(usize) -> bool,
    max_norm: f64,
    exec: Exec,
) -> Result<bool, Error>
where
    P: Flatten<Std>,
    P::Leaf: HoldsTensor,
{
    let on_cpu = crate::walk::leaves(&*updates)
        .into_iter()
        .enumerate()
        .all(|(i, u)| {
            let u = <P::Leaf as HoldsTensor>::tensor(u);
            !selected(i) || (u.device().is_cpu() && u.is_contiguous())
        });
    if on_cpu && exec != Exec::TensorOps {
        return Ok(false);
    }
    let mut total: Option<Tensor> = None;
    let mut i = 0;
    crate::walk::zip_mut::<P, 0, 2, Result<(), String>>([], [params, &*updates], |[], [_, x]| {
        let x = <P::Leaf as HoldsTensor>::tensor(x);
        // Integer and bool tensors (buffers) add nothing to the norm.
        if selected(i) && x.dtype().is_float() {
            let dt = if x.dtype() == DType::F64 {
                DType::F64
            } else {
                DType::F32
            };
            let s = x
                .to_dtype(dt)
                .and_then(|x| x.sqr())
                .and_then(|x| x.sum_all())
                .map_err(|e| format!("candle: {e}"))?;
            total = Some(match total.take() {
                None => s,
                Some(t) => s
                    .to_device(t.device())
                    .and_then(|s| s.to_dtype(t.dtype()))
                    .and_then(|s| t + s)
                    .map_err(|e| format!("candle: {e}"))?,
            });
        }
        i += 1;
        Ok(())
    })?;
    let Some(total) = total else { return Ok(true) };
    let factor = total
        .sqrt()
        .and_then(|n| n.maximum(max_norm))
        .and_then(|n| n.recip())
        .and_then(|r| r.affine(max_norm, 0.0))
        .map_err(candle_err)?;
    let mut i = 0;
    crate::walk::for_each_mut(updates, |u| {
        let u = <P::Leaf as HoldsTensor>::tensor_mut(u);
        let r = if selected(i) && u.dtype().is_float() {
            let cd = device::compute_dtype([u]);
            u.to_dtype(cd)
                .and_then(|x| {
                    let f = factor.to_device(x.device())?.to_dtype(cd)?;
                    x.broadcast_mul(&f)
                })
                .and_then(|v| device::write(u, &v))
                .map_err(|e| format!("candle: {e}"))
        } else {
            Ok(())
        };
        i += 1;
        r
    })?;
    Ok(true)
}

/// A leaf that is a candle tensor or holds one (`Var`): what the
/// [`FloatLeaf`] impls of both read the tensor through, and where they
/// differ.
trait HoldsTensor: Leaf<Std> + Sized {
    /// The tensor of a leaf lent by reference.
    fn tensor<'a>(leaf: LeafRef<'a, Std, Self>) -> &'a Tensor;
    /// The tensor of a leaf lent by mutable reference.
    fn tensor_mut<'a>(leaf: LeafMut<'a, Std, Self>) -> &'a Tensor;
    /// Zeros of the leaf's own dtype, integer and bool ones included
    /// (their state, never updated).
    fn zeros(leaf: LeafRef<'_, Std, Self>) -> Result<Self, Error>;
    /// A leaf of the same kind holding a copy of the values.
    fn copied(leaf: LeafRef<'_, Std, Self>) -> Result<Self, Error>;
}

/// Tensors: a tensor that is not a variable has no gradient from candle's
/// autograd; it is updated in place too (every clone of it sees the
/// update). Unsharing one is `Tensor::copy`.
impl HoldsTensor for Tensor {
    fn tensor<'a>(leaf: LeafRef<'a, Std, Tensor>) -> &'a Tensor {
        leaf
    }
    fn tensor_mut<'a>(leaf: LeafMut<'a, Std, Tensor>) -> &'a Tensor {
        leaf
    }
    fn zeros(leaf: &Tensor) -> Result<Tensor, Error> {
        leaf.zeros_like().map_err(candle_err)
    }
    fn copied(leaf: &Tensor) -> Result<Tensor, Error> {
        leaf.copy().map_err(candle_err)
    }
}

/// Variables, written with `Var::set`; unsharing one makes a new
/// variable holding a copy of its values.
impl HoldsTensor for Var {
    fn tensor<'a>(leaf: LeafRef<'a, Std, Var>) -> &'a Tensor {
        leaf.as_tensor()
    }
    fn tensor_mut<'a>(leaf: LeafMut<'a, Std, Var>) -> &'a Tensor {
        leaf.as_tensor()
    }
    fn zeros(leaf: &Var) -> Result<Var, Error> {
        Var::zeros(leaf.shape(), leaf.dtype(), leaf.device()).map_err(candle_err)
    }
    fn copied(leaf: &Var) -> Result<Var, Error> {
        Var::from_tensor(&leaf.as_tensor().detach()).map_err(candle_err)
    }
}

/// `Tensor` and `Var` of any float dtype on any device, updated in place
/// (see the module docs): variables keep being variables.
macro_rules! candle_float_leaf {
    ($($t:ty),*) => {$(
        impl FloatLeaf for $t {
            type Scalar = f64;
            const MAY_SHARE_MEMORY: bool = true;

            fn zip_elements<const N: usize, const M: usize, F>(
                muts: [&mut $t; N],
                refs: [&$t; M],
                exec: Exec,
                f: &F,
            ) -> Result<(), Error>
            where
                F: Fn([&mut f64; N], [f64; M]) + Sync,
            {
                zip(muts.map(<$t as HoldsTensor>::tensor_mut), refs.map(<$t as HoldsTensor>::tensor), exec, f, None::<&Closure>)
            }

            fn zip_update<const N: usize, const M: usize, U>(
                muts: [&mut $t; N],
                refs: [&$t; M],
                exec: Exec,
                update: &U,
            ) -> Result<(), Error>
            where
                U: ElementUpdate<f64, N, M>,
            {
                let f = move |ms: [&mut f64; N], rs: [f64; M]| update.apply(ms, rs);
                zip(muts.map(<$t as HoldsTensor>::tensor_mut), refs.map(<$t as HoldsTensor>::tensor), exec, &f, Some(update))
            }

            fn sum_elements<F>(leaf: &$t, exec: Exec, f: &F) -> Result<f64, Error>
            where
                F: Fn(f64) -> f64 + Sync,
            {
                sum(<$t as HoldsTensor>::tensor(leaf), exec, f)
            }

            /// Zeros of the leaf's own dtype, integer and bool ones
            /// included (their state, never updated).
            fn zeros_like(leaf: &$t) -> Result<$t, Error> {
                <$t as HoldsTensor>::zeros(leaf)
            }

            fn clip_on_device<P>(
                params: &P,
                updates: &mut P,
                selected: &dyn Fn(usize) -> bool,
                max_norm: f64,
                exec: Exec,
            ) -> Result<bool, Error>
            where
                P: Flatten<Std, Leaf = Self>,
            {
                clip(params, updates, selected, max_norm, exec)
            }

            fn shares_memory(a: &$t, b: &$t) -> bool {
                same_storage(<$t as HoldsTensor>::tensor(a), <$t as HoldsTensor>::tensor(b))
            }

            /// Replaces the leaf with one holding a copy of its values.
            fn unshare(leaf: &mut $t) -> Result<(), Error> {
                *leaf = <$t as HoldsTensor>::copied(leaf)?;
                Ok(())
            }
        }
    )*};
}
candle_float_leaf!(Tensor, Var);
