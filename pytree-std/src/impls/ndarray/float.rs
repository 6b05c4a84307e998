//! Optimizer arithmetic: `ArrayD<A>` and `AnyArray` as [`FloatLeaf`]s.
//!
//! [`AnyArray`](crate::AnyArray): a model with several dtypes (f32
//! weights, an i64 `position_ids` buffer, a bool mask) in one tree. Its
//! float variants (f32, f64, f16, bf16) are updated, through the typed
//! arrays' kernels with the element math in f64 (`Scalar = f64`, as for
//! candle tensors); its integer and bool variants are left alone, as
//! candle's are: an update whose arrays to write are all integer or bool
//! does nothing, they add nothing to a norm, and their state is zeros of
//! their own dtype. Arrays of one update must share a dtype and shape.

use half::{bf16, f16};
use ndarray::{ArrayD, ArrayViewD, ArrayViewMutD, ShapeBuilder};

use super::any_array::{AnyArray, AnyArrayView, AnyArrayViewMut, AnyElement};
use crate::elements::{
    all_some, common_shape, sum_slice, widened, zip_element_iters, zip_slices, Exec, Float,
    FloatElement, FloatLeaf,
};
use pytree_core::{DType, Error};

/// Arrays of any rank (`ArrayD<A>` is the leaf type of every
/// `Array<A, D>`). Arrays in standard layout, or all with the same
/// strides over contiguous memory, are one loop over slices; others
/// are walked element by element in logical order.
impl<A: FloatElement + Default> FloatLeaf for ArrayD<A> {
    type Scalar = A::Compute;

    #[inline]
    fn zip_elements<const N: usize, const M: usize, F>(
        muts: [ArrayViewMutD<'_, A>; N],
        refs: [ArrayViewD<'_, A>; M],
        exec: Exec,
        f: &F,
    ) -> Result<(), Error>
    where
        F: Fn([&mut A::Compute; N], [A::Compute; M]) + Sync,
    {
        let shapes = muts.iter().map(|m| m.shape());
        if common_shape(shapes.chain(refs.iter().map(|r| r.shape())), "array")?.is_none() {
            return Ok(());
        }
        let standard = muts.iter().all(|m| m.is_standard_layout())
            && refs.iter().all(|r| r.is_standard_layout());
        let strides = match (muts.first(), refs.first()) {
            (Some(m), _) => m.strides(),
            (None, Some(r)) => r.strides(),
            (None, None) => &[],
        };
        let same_contiguous = muts
            .iter()
            .all(|m| m.strides() == strides && m.as_slice_memory_order().is_some())
            && refs
                .iter()
                .all(|r| r.strides() == strides && r.as_slice_memory_order().is_some());
        if standard || same_contiguous {
            let ms = all_some(muts.map(|m| m.into_slice_memory_order()));
            let rs = all_some(refs.map(|r| r.to_slice_memory_order()));
            if let (Some(ms), Some(rs)) = (ms, rs) {
                zip_slices(ms, rs, exec, f);
                return Ok(());
            }
            return Err(Error::custom("array memory is not contiguous"));
        }
        // Mixed layouts: element by element in logical order.
        zip_element_iters(muts.map(|m| m.into_iter()), refs.map(|r| r.into_iter()), f);
        Ok(())
    }

    #[inline]
    fn sum_elements<F>(leaf: ArrayViewD<'_, A>, exec: Exec, f: &F) -> Result<f64, Error>
    where
        F: Fn(A::Compute) -> f64 + Sync,
    {
        Ok(match leaf.to_slice_memory_order() {
            Some(s) => sum_slice(s, exec, f),
            None => leaf.iter().map(|x| f(x.load())).sum(),
        })
    }

    /// Zeros in the leaf's memory order (column-major for a
    /// column-major leaf), so that state and parameters share strides
    /// and the update stays one loop over slices.
    fn zeros_like(leaf: ArrayViewD<'_, A>) -> Result<ArrayD<A>, Error> {
        let fortran =
            leaf.ndim() > 1 && !leaf.is_standard_layout() && leaf.t().is_standard_layout();
        Ok(if fortran {
            ArrayD::from_elem(leaf.raw_dim().f(), A::default())
        } else {
            ArrayD::from_elem(leaf.raw_dim(), A::default())
        })
    }
}

fn is_float(d: DType) -> bool {
    matches!(d, DType::F32 | DType::F64 | DType::F16 | DType::BF16)
}

/// The error for an array of another dtype than `A` in an update of `A`s.
#[cold]
fn dtype_mismatch<A: AnyElement>() -> Error {
    Error::custom(format!("array dtype mismatch: expected {}", A::DTYPE))
}

/// The update on the typed arrays of `A`s, the element math in f64.
fn zip_typed<A, const N: usize, const M: usize, F>(
    muts: [AnyArrayViewMut<'_>; N],
    refs: [AnyArrayView<'_>; M],
    exec: Exec,
    f: &F,
) -> Result<(), Error>
where
    A: AnyElement + FloatElement + Default,
    F: Fn([&mut f64; N], [f64; M]) + Sync,
{
    let ms = all_some(muts.map(A::view_mut_of)).ok_or_else(dtype_mismatch::<A>)?;
    let rs = all_some(refs.map(A::view_of)).ok_or_else(dtype_mismatch::<A>)?;
    <ArrayD<A> as FloatLeaf>::zip_elements(ms, rs, exec, &widened::<A::Compute, N, M, F>(f))
}

/// The sum over the typed array of `A`s.
fn sum_typed<A, F>(leaf: AnyArrayView<'_>, exec: Exec, f: &F) -> Result<f64, Error>
where
    A: AnyElement + FloatElement + Default,
    F: Fn(f64) -> f64 + Sync,
{
    let a = A::view_of(leaf).ok_or_else(dtype_mismatch::<A>)?;
    <ArrayD<A> as FloatLeaf>::sum_elements(a, exec, &|x: A::Compute| f(x.to_f64()))
}

/// Zeros of the view's dtype and shape (the typed kernels' layout).
fn zeros_typed<A: AnyElement + Default>(leaf: ArrayViewD<'_, A>) -> AnyArray {
    A::into_any(ArrayD::from_elem(leaf.raw_dim(), A::default()))
}

/// Integer and bool arrays are left alone; see the module docs.
///
/// ```
/// use pytree_std::elements::{Exec, FloatLeaf};
/// use pytree_std::ndarray::array;
/// use pytree_std::{leaves, leaves_mut, AnyArray};
/// let (mut w, g) = (AnyArray::from(array![1.0f32, 2.0]), AnyArray::from(array![0.5f32, -0.5]));
/// let (mut ids, d) = (AnyArray::from(array![0i64, 1]), AnyArray::from(array![1i64, 1]));
/// let step = |[x]: [&mut f64; 1], [g]: [f64; 1]| *x -= g;
/// AnyArray::zip_elements([leaves_mut(&mut w).remove(0)], [leaves(&g).remove(0)], Exec::Sequential, &step)?;
/// AnyArray::zip_elements([leaves_mut(&mut ids).remove(0)], [leaves(&d).remove(0)], Exec::Sequential, &step)?;
/// assert_eq!(w, AnyArray::from(array![0.5f32, 2.5]));
/// assert_eq!(ids, AnyArray::from(array![0i64, 1]));
/// # Ok::<(), pytree_std::Error>(())
/// ```
impl FloatLeaf for AnyArray {
    type Scalar = f64;

    fn zip_elements<const N: usize, const M: usize, F>(
        muts: [AnyArrayViewMut<'_>; N],
        refs: [AnyArrayView<'_>; M],
        exec: Exec,
        f: &F,
    ) -> Result<(), Error>
    where
        F: Fn([&mut f64; N], [f64; M]) + Sync,
    {
        let (dtype, shape) = match (muts.first(), refs.first()) {
            (Some(m), _) => (m.dtype(), m.shape().to_vec()),
            (None, Some(r)) => (r.dtype(), r.shape().to_vec()),
            (None, None) => return Ok(()),
        };
        if N > 0 && muts.iter().all(|m| !is_float(m.dtype())) {
            return Ok(());
        }
        let others = muts
            .iter()
            .map(|m| (m.dtype(), m.shape()))
            .chain(refs.iter().map(|r| (r.dtype(), r.shape())));
        for (d, s) in others {
            if d != dtype || s != shape.as_slice() {
                return Err(Error::custom(format!(
                    "array mismatch: expected {dtype}{shape:?}, found {d}{s:?}"
                )));
            }
        }
        match dtype {
            DType::F32 => zip_typed::<f32, N, M, F>(muts, refs, exec, f),
            DType::F64 => zip_typed::<f64, N, M, F>(muts, refs, exec, f),
            DType::F16 => zip_typed::<f16, N, M, F>(muts, refs, exec, f),
            DType::BF16 => zip_typed::<bf16, N, M, F>(muts, refs, exec, f),
            other => Err(Error::custom(format!(
                "expected a float array, found dtype {other} with shape {shape:?}"
            ))),
        }
    }

    fn sum_elements<F>(leaf: AnyArrayView<'_>, exec: Exec, f: &F) -> Result<f64, Error>
    where
        F: Fn(f64) -> f64 + Sync,
    {
        match leaf.dtype() {
            DType::F32 => sum_typed::<f32, F>(leaf, exec, f),
            DType::F64 => sum_typed::<f64, F>(leaf, exec, f),
            DType::F16 => sum_typed::<f16, F>(leaf, exec, f),
            DType::BF16 => sum_typed::<bf16, F>(leaf, exec, f),
            _ => Ok(0.0),
        }
    }

    fn zeros_like(leaf: AnyArrayView<'_>) -> Result<AnyArray, Error> {
        Ok(match leaf {
            AnyArrayView::F32(a) => AnyArray::F32(<ArrayD<f32> as FloatLeaf>::zeros_like(a)?),
            AnyArrayView::F64(a) => AnyArray::F64(<ArrayD<f64> as FloatLeaf>::zeros_like(a)?),
            AnyArrayView::F16(a) => AnyArray::F16(<ArrayD<f16> as FloatLeaf>::zeros_like(a)?),
            AnyArrayView::BF16(a) => AnyArray::BF16(<ArrayD<bf16> as FloatLeaf>::zeros_like(a)?),
            AnyArrayView::I64(a) => zeros_typed(a),
            AnyArrayView::I32(a) => zeros_typed(a),
            AnyArrayView::U8(a) => zeros_typed(a),
            AnyArrayView::Bool(a) => zeros_typed(a),
        })
    }
}
