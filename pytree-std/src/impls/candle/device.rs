//! The tensor-operation path for candle tensors: an [`ElementUpdate`] run
//! once with whole tensors as its values ([`Expr`]: each `+ - * /`, constant
//! and square root a candle operation with `f64` scalars), on the tensors'
//! own device, computed in `f32` (`f64` when a tensor is `f64`), and the
//! results written into the tensors in place. Nothing is copied to the host.

use core::ops::{Add, Div, Mul, Sub};

use candle_core::{self as candle, DType, Tensor, Var};

use crate::elements::{Arith, ElementUpdate};

/// The dtype the tensor path computes in: `f64` if any tensor is `f64`,
/// else `f32` (16-bit floats are widened).
pub(super) fn compute_dtype<'a>(ts: impl IntoIterator<Item = &'a Tensor>) -> DType {
    if ts.into_iter().any(|t| t.dtype() == DType::F64) {
        DType::F64
    } else {
        DType::F32
    }
}

/// A whole tensor as a value of an [`ElementUpdate`], or the first error
/// of the operations that made it (carried on, so that the update's
/// arithmetic reads as on numbers).
#[derive(Clone)]
struct Expr(Result<Tensor, String>);

impl Expr {
    fn map(self, f: impl FnOnce(Tensor) -> candle::Result<Tensor>) -> Expr {
        Expr(self.0.and_then(|t| f(t).map_err(|e| e.to_string())))
    }
}

macro_rules! tensor_op {
    ($($tr:ident $m:ident),*) => {$(
        impl $tr for Expr {
            type Output = Expr;
            fn $m(self, rhs: Expr) -> Expr {
                match rhs.0 {
                    Ok(b) => self.map(|a| Tensor::$m(&a, &b)),
                    Err(e) => Expr(Err(e)),
                }
            }
        }
    )*};
}
tensor_op!(Add add, Sub sub, Mul mul, Div div);

impl Arith<f64> for Expr {
    fn scale(self, k: f64) -> Expr {
        self.map(|t| t.affine(k, 0.0))
    }
    fn shift(self, k: f64) -> Expr {
        self.map(|t| t.affine(1.0, k))
    }
    fn div_by(self, k: f64) -> Expr {
        self.map(|t| t.affine(1.0 / k, 0.0))
    }
    fn sqrt(self) -> Expr {
        self.map(|t| t.sqrt())
    }
    fn zero(&self) -> Expr {
        self.clone().map(|t| t.zeros_like())
    }
    fn affine(self, mul: f64, add: f64) -> Expr {
        self.map(|t| t.affine(mul, add))
    }
}

/// The new values of the written tensors, by position in `muts`: `update`
/// run once on the tensors (a tensor the update leaves as it was is not
/// in the list).
pub(super) fn new_values<const N: usize, const M: usize, U>(
    update: &U,
    muts: [&Tensor; N],
    refs: [&Tensor; M],
) -> candle::Result<Vec<(usize, Tensor)>>
where
    U: ElementUpdate<f64, N, M>,
{
    let cd = compute_dtype(muts.iter().copied().chain(refs.iter().copied()));
    let value = |t: &Tensor| Expr(t.to_dtype(cd).map_err(|e| e.to_string()));
    let mut xs = muts.map(value);
    update.apply(xs.each_mut(), refs.map(value));
    let mut new = Vec::with_capacity(N);
    for (i, (x, old)) in xs.into_iter().zip(muts).enumerate() {
        let x = x.0.map_err(candle::Error::Msg)?;
        if x.id() != old.id() {
            new.push((i, x));
        }
    }
    Ok(new)
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
