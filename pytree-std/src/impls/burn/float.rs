//! Optimizer arithmetic: [`BurnTensor`] as a [`FloatLeaf`]. On burn-flex
//! (burn's CPU backend), `f32` leaves are updated in one pass over their
//! memory in place (`fused.rs`); elsewhere the one
//! [`ElementUpdate`] of each transformation runs once on whole tensors
//! ([`Expr`]: each `+ - * /`, constant and square root a burn operation
//! on the tensor's own device and backend), computed in `f32` (`f64` for
//! `f64` tensors) and cast back to the leaf's dtype. A burn tensor is an
//! immutable handle: the new values replace the leaf's handle (burn's
//! backends reuse a buffer that no other handle holds).
//!
//! A closure over elements (`zip_elements`, `sum_elements`) reads the
//! elements to the host as `f64` and writes them back.

use core::ops::{Add, Div, Mul, Sub};

use burn::tensor::{DType as BurnDType, Tensor, TensorData};
use pytree_core::Error;

use super::{host_f64, BurnTensor};
use crate::elements::{sum_slice, zip_host_vecs, Arith, ElementUpdate, Exec, FloatLeaf};

/// A whole tensor (rank 1, in the compute dtype) as an [`Arith`] value.
#[derive(Clone)]
struct Expr(Tensor<1>);

macro_rules! tensor_op {
    ($($tr:ident $m:ident),*) => {$(
        impl $tr for Expr {
            type Output = Expr;
            fn $m(self, rhs: Expr) -> Expr {
                Expr(self.0.$m(rhs.0))
            }
        }
    )*};
}
tensor_op!(Add add, Sub sub, Mul mul, Div div);

impl Arith<f64> for Expr {
    fn scale(self, k: f64) -> Expr {
        Expr(self.0.mul_scalar(k))
    }
    fn shift(self, k: f64) -> Expr {
        Expr(self.0.add_scalar(k))
    }
    fn div_by(self, k: f64) -> Expr {
        Expr(self.0.div_scalar(k))
    }
    fn sqrt(self) -> Expr {
        Expr(self.0.sqrt())
    }
    fn zero(&self) -> Expr {
        Expr(self.0.zeros_like())
    }
}

/// `f64` when any tensor is, else `f32`.
fn compute_dtype<'a>(ts: impl IntoIterator<Item = &'a BurnTensor>) -> BurnDType {
    if ts.into_iter().any(|t| t.dtype() == BurnDType::F64) {
        BurnDType::F64
    } else {
        BurnDType::F32
    }
}

/// `values` (rank 1, any float dtype) as a leaf shaped and typed like
/// `like`.
fn like(values: Tensor<1>, like: &BurnTensor) -> Result<BurnTensor, Error> {
    let values = if values.dtype() == like.dtype() {
        values
    } else {
        values.cast(like.dtype())
    };
    BurnTensor::from_flat(values, like.shape())
}

/// Every tensor (written, then read) a float tensor of the first one's
/// shape; no allocation (it runs once per leaf of every step).
fn check<const N: usize, const M: usize>(
    muts: &[&mut BurnTensor; N],
    refs: &[&BurnTensor; M],
) -> Result<(), Error> {
    let mut all = muts.iter().map(|m| &**m).chain(refs.iter().copied());
    let Some(first) = all.next() else {
        return Ok(());
    };
    for t in core::iter::once(first).chain(all) {
        if t.shape() != first.shape() || !t.dtype().is_float() {
            return Err(Error::custom(format!(
                "burn tensor mismatch: expected a float tensor of shape {:?}, found {}",
                first.shape(),
                t.signature_without_device()
            )));
        }
    }
    Ok(())
}

impl FloatLeaf for BurnTensor {
    type Scalar = f64;

    fn zip_elements<const N: usize, const M: usize, F>(
        muts: [&mut BurnTensor; N],
        refs: [&BurnTensor; M],
        exec: Exec,
        f: &F,
    ) -> Result<(), Error>
    where
        F: Fn([&mut f64; N], [f64; M]) + Sync,
    {
        check(&muts, &refs)?;
        let mv = zip_host_vecs(muts.each_ref().map(|m| &**m), refs, host_f64, exec, f)?;
        for (m, v) in muts.into_iter().zip(mv) {
            let n = v.len();
            let device = m.device();
            let values = Tensor::<1>::from_data(TensorData::new(v, [n]), (&device, m.dtype()));
            *m = like(values, m)?;
        }
        Ok(())
    }

    fn zip_update<const N: usize, const M: usize, U>(
        mut muts: [&mut BurnTensor; N],
        refs: [&BurnTensor; M],
        exec: Exec,
        update: &U,
    ) -> Result<(), Error>
    where
        U: ElementUpdate<f64, N, M>,
    {
        check(&muts, &refs)?;
        if super::fused::try_zip(&mut muts, &refs, exec, update) {
            return Ok(());
        }
        let cd = compute_dtype(muts.iter().map(|m| &**m).chain(refs.iter().copied()));
        let value = |t: &BurnTensor| {
            let flat = t.flat();
            Expr(if flat.dtype() == cd {
                flat
            } else {
                flat.cast(cd)
            })
        };
        let mut xs: [Expr; N] = core::array::from_fn(|i| value(muts[i]));
        update.apply(xs.each_mut(), refs.map(value));
        for (m, x) in muts.into_iter().zip(xs) {
            *m = like(x.0, m)?;
        }
        Ok(())
    }

    fn sum_elements<F>(leaf: &BurnTensor, exec: Exec, f: &F) -> Result<f64, Error>
    where
        F: Fn(f64) -> f64 + Sync,
    {
        if !leaf.dtype().is_float() {
            return Ok(0.0);
        }
        Ok(sum_slice(&host_f64(leaf)?, exec, f))
    }

    fn zeros_like(leaf: &BurnTensor) -> Result<BurnTensor, Error> {
        BurnTensor::from_flat(leaf.flat().zeros_like(), leaf.shape())
    }
}
