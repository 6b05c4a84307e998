//! `candle_core::Tensor` as a leaf (feature `candle`), lent by reference
//! (`&Tensor`, `&mut Tensor`: a tensor is a cheap handle, and candle's
//! operations take `&Tensor`). It has a shape ([`Leaf::HAS_SHAPE`]): its
//! [`Signature`] is its dtype, dims and device (`"cpu"`, `"cuda:0"`,
//! `"metal:0"`), so `map2` / `map_n` / `zip_mut` report two tensors of
//! different shapes as an error at their path before anything runs, and
//! `set` / `set_subtree` refuse a tensor of another signature.
//!
//! [`Leaf::HAS_SHAPE`]: pytree_core::Leaf::HAS_SHAPE

use std::borrow::Cow;

use candle_core::{DType as CandleDType, DeviceLocation, Tensor};
use pytree_core::{DType, Signature};

use crate::{ApproxEq, Tolerance};

leaf_by_reference!(shaped Tensor, signature = tensor_signature, same = same_signature);

/// candle's dtype as a [`DType`]; the 8-, 6- and 4-bit float formats have
/// no variant of their own and keep candle's name (`DType::Other("f8e4m3")`).
fn dtype(dtype: CandleDType) -> DType {
    match dtype {
        CandleDType::U8 => DType::U8,
        CandleDType::U32 => DType::U32,
        CandleDType::I16 => DType::I16,
        CandleDType::I32 => DType::I32,
        CandleDType::I64 => DType::I64,
        CandleDType::BF16 => DType::BF16,
        CandleDType::F16 => DType::F16,
        CandleDType::F32 => DType::F32,
        CandleDType::F64 => DType::F64,
        other => DType::Other(other.as_str()),
    }
}

/// `"cpu"`, `"cuda:N"`, `"metal:N"`.
fn device_name(location: DeviceLocation) -> Cow<'static, str> {
    match location {
        DeviceLocation::Cpu => Cow::Borrowed("cpu"),
        DeviceLocation::Cuda { gpu_id } => Cow::Owned(format!("cuda:{gpu_id}")),
        DeviceLocation::Metal { gpu_id } => Cow::Owned(format!("metal:{gpu_id}")),
    }
}

/// A tensor's dtype, dims and device.
fn tensor_signature(t: &Tensor) -> Signature {
    Signature::new(dtype(t.dtype()), t.dims().to_vec())
        .with_device(device_name(t.device().location()))
}

/// Same dims, dtype and device, compared without allocating.
fn same_signature(a: &Tensor, b: &Tensor) -> bool {
    a.dims() == b.dims() && a.dtype() == b.dtype() && a.device().location() == b.device().location()
}

/// Same dims and dtype, then elementwise: integers exactly, floats within
/// the tolerance (compared as `f64`, NumPy's `isclose`). Tensors on
/// different devices are compared by value. A candle operation that fails
/// (a dtype with no conversion to `f64`) counts as not equal.
///
/// ```
/// use pytree_std::candle_core::{Device, Tensor};
/// use pytree_std::{ApproxEq, Tolerance};
/// let a = Tensor::new(&[1.0f32, 2.0], &Device::Cpu)?;
/// let b = Tensor::new(&[1.0f32, 2.001], &Device::Cpu)?;
/// assert!(!a.approx_eq(&b, Tolerance::EXACT));
/// assert!(a.approx_eq(&b, Tolerance::new(0.0, 1e-2)));
/// assert!(!a.approx_eq(&Tensor::new(&[1.0f32], &Device::Cpu)?, Tolerance::new(1.0, 1.0)));
/// # Ok::<(), pytree_std::candle_core::Error>(())
/// ```
impl ApproxEq for Tensor {
    fn approx_eq(&self, other: &Self, tol: Tolerance) -> bool {
        self.dims() == other.dims()
            && self.dtype() == other.dtype()
            && tensors_close(self, other, tol).unwrap_or(false)
    }
}

/// The elementwise comparison of [`ApproxEq`] for tensors of equal dims and
/// dtype.
fn tensors_close(a: &Tensor, b: &Tensor, tol: Tolerance) -> candle_core::Result<bool> {
    let (a, b) = (a.flatten_all()?, b.flatten_all()?);
    Ok(match a.dtype() {
        CandleDType::U8 => a.to_vec1::<u8>()? == b.to_vec1::<u8>()?,
        CandleDType::U32 => a.to_vec1::<u32>()? == b.to_vec1::<u32>()?,
        CandleDType::I16 => a.to_vec1::<i16>()? == b.to_vec1::<i16>()?,
        CandleDType::I32 => a.to_vec1::<i32>()? == b.to_vec1::<i32>()?,
        CandleDType::I64 => a.to_vec1::<i64>()? == b.to_vec1::<i64>()?,
        _ => {
            let x = a.to_dtype(CandleDType::F64)?.to_vec1::<f64>()?;
            let y = b.to_dtype(CandleDType::F64)?.to_vec1::<f64>()?;
            x.iter().zip(&y).all(|(x, y)| tol.close(*x, *y))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtypes_map_to_their_names() {
        for d in [
            CandleDType::U8,
            CandleDType::U32,
            CandleDType::I16,
            CandleDType::I32,
            CandleDType::I64,
            CandleDType::BF16,
            CandleDType::F16,
            CandleDType::F32,
            CandleDType::F64,
            CandleDType::F8E4M3,
        ] {
            assert_eq!(dtype(d).name(), d.as_str());
        }
        assert_eq!(dtype(CandleDType::F8E4M3), DType::Other("f8e4m3"));
    }

    #[test]
    fn devices_are_named_by_location() {
        assert_eq!(device_name(DeviceLocation::Cpu), "cpu");
        assert_eq!(device_name(DeviceLocation::Cuda { gpu_id: 1 }), "cuda:1");
        assert_eq!(device_name(DeviceLocation::Metal { gpu_id: 0 }), "metal:0");
    }
}
