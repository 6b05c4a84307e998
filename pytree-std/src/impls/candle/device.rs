//! The tensor-operation path for candle tensors: each [`ElementOp`] as
//! candle operations with `f64` scalars (affine maps, `sqr`, `sqrt`,
//! elementwise `+` and `/`), on the tensors' own device, computed in `f32`
//! (`f64` when a tensor is `f64`), and the results written into the
//! tensors in place. Nothing is copied to the host.

use candle_core::{self as candle, DType, Tensor, Var};

use crate::elements::ElementOp;

/// The dtype the tensor path computes in: `f64` if any tensor is `f64`,
/// else `f32` (16-bit floats are widened).
pub(super) fn compute_dtype<'a>(ts: impl IntoIterator<Item = &'a Tensor>) -> DType {
    if ts.into_iter().any(|t| t.dtype() == DType::F64) {
        DType::F64
    } else {
        DType::F32
    }
}

/// The new values of the written tensors, by position in `muts`, for `op`
/// (see [`ElementOp`] for what each variant reads and writes).
pub(super) fn new_values<const N: usize, const M: usize>(
    op: &ElementOp,
    muts: [&Tensor; N],
    refs: [&Tensor; M],
) -> candle::Result<Vec<(usize, Tensor)>> {
    let cd = compute_dtype(muts.iter().copied().chain(refs.iter().copied()));
    let m = |i: usize| -> candle::Result<Tensor> {
        match muts.get(i) {
            Some(t) => t.to_dtype(cd),
            None => candle::bail!(
                "pytree-optim: {op:?} needs {} tensors written, got {N}",
                i + 1
            ),
        }
    };
    let r = |i: usize| -> candle::Result<Tensor> {
        match refs.get(i) {
            Some(t) => t.to_dtype(cd),
            None => candle::bail!("pytree-optim: {op:?} needs {} tensors read, got {M}", i + 1),
        }
    };
    Ok(match *op {
        ElementOp::Zero => vec![(0, m(0)?.zeros_like()?)],
        ElementOp::Scale { factor } => vec![(0, m(0)?.affine(factor, 0.0)?)],
        ElementOp::Axpby { a, b } => vec![(0, (m(0)?.affine(a, 0.0)? + r(0)?.affine(b, 0.0)?)?)],
        ElementOp::Copy => vec![(0, r(0)?)],
        ElementOp::SgdMomentum {
            neg_lr,
            mu,
            nesterov,
            fused,
        } => {
            let g = if fused { r(0)? } else { m(0)? };
            let t = (&g + m(1)?.affine(mu, 0.0)?)?;
            let d = if nesterov {
                (&g + t.affine(mu, 0.0)?)?
            } else {
                t.clone()
            };
            let out = if fused {
                (m(0)? + d.affine(neg_lr, 0.0)?)?
            } else {
                d.affine(neg_lr, 0.0)?
            };
            vec![(1, t), (0, out)]
        }
        ElementOp::Adam {
            b1,
            b2,
            inv_c1,
            inv_c2,
            eps,
            eps_root,
            neg_lr,
            weight_decay,
            fused,
        } => {
            let g = if fused { r(0)? } else { m(0)? };
            let mom = (m(1)?.affine(b1, 0.0)? + g.affine(1.0 - b1, 0.0)?)?;
            let vel = (m(2)?.affine(b2, 0.0)? + g.sqr()?.affine(1.0 - b2, 0.0)?)?;
            let denom = vel.affine(inv_c2, eps_root)?.sqrt()?.affine(1.0, eps)?;
            let mut d = (mom.affine(inv_c1, 0.0)? / denom)?;
            if weight_decay != 0.0 {
                let p = if fused { m(0)? } else { r(0)? };
                d = (d + p.affine(weight_decay, 0.0)?)?;
            }
            let out = if fused {
                (m(0)? + d.affine(neg_lr, 0.0)?)?
            } else {
                d.affine(neg_lr, 0.0)?
            };
            vec![(1, mom), (2, vel), (0, out)]
        }
        ElementOp::EmaOfUpdates { decay, correction } => {
            let e = (m(0)?.affine(1.0 - decay, 0.0)? + m(1)?.affine(decay, 0.0)?)?;
            let u = e.affine(1.0 / correction, 0.0)?;
            vec![(1, e), (0, u)]
        }
    })
}

/// Writes `value` into `dst` in place, in `dst`'s dtype: a variable with
/// `Var::set`, another tensor with `slice_set`; either way every holder
/// of the tensor sees the new value, and autograd keeps tracking a
/// variable.
pub(super) fn write(dst: &Tensor, value: &Tensor) -> candle::Result<()> {
    let value = value.to_dtype(dst.dtype())?;
    if dst.is_variable() {
        return Var::from_tensor(dst)?.set(&value);
    }
    if !dst.is_contiguous() {
        candle::bail!("a tensor that is not contiguous cannot be updated in place");
    }
    dst.flatten_all()?
        .slice_set(&value.contiguous()?.flatten_all()?, 0, 0)
}
