//! `candle_core::Tensor` and `candle_core::Var` as leaves (feature
//! `candle`), lent by reference (`&Tensor`, `&mut Tensor`: a tensor is a
//! cheap handle, and candle's operations take `&Tensor`). They have a
//! shape ([`Leaf::HAS_SHAPE`]): the [`Signature`] is the dtype, dims and
//! device (`"cpu"`, `"cuda:0"`, `"metal:0"`), so `map_n` /
//! `zip_mut` report two tensors of different shapes as an error at their
//! path before anything runs, and `set` / `set_subtree` refuse a tensor of
//! another signature. A `Var` (a trainable variable: candle's autograd
//! computes gradients for it, and `Var::set` writes it in place, seen by
//! every holder) is a leaf of its own type, with the signature of its
//! tensor.
//!
//! [`Leaf::HAS_SHAPE`]: pytree_core::Leaf::HAS_SHAPE

use std::borrow::Cow;

use candle_core::{DType as CandleDType, Device, DeviceLocation, Tensor, Var, WithDType};
use pytree_core::{DType, Error, Signature};

use crate::{elements::ApproxEq, elements::Ravel, elements::Tolerance};

mod bytes;
#[cfg(feature = "safetensors")]
mod checkpoint;
mod device;
mod float;
mod fused;

leaf_by_reference!(shaped Tensor, signature = tensor_signature, same = same_signature);
leaf_by_reference!(shaped Var, signature = var_signature, same = same_var_signature);

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

/// The candle dtype of a [`DType`] that [`dtype`] gives (the inverse map).
fn candle_dtype(d: DType) -> Option<CandleDType> {
    Some(match d {
        DType::U8 => CandleDType::U8,
        DType::U32 => CandleDType::U32,
        DType::I16 => CandleDType::I16,
        DType::I32 => CandleDType::I32,
        DType::I64 => CandleDType::I64,
        DType::BF16 => CandleDType::BF16,
        DType::F16 => CandleDType::F16,
        DType::F32 => CandleDType::F32,
        DType::F64 => CandleDType::F64,
        DType::Other(name) => [
            CandleDType::F8E4M3,
            CandleDType::F6E2M3,
            CandleDType::F6E3M2,
            CandleDType::F4,
            CandleDType::F8E8M0,
        ]
        .into_iter()
        .find(|c| c.as_str() == name)?,
        _ => return None,
    })
}

/// The device a signature names (the inverse of [`device_name`]; no
/// device means the CPU).
fn device_of(name: Option<&str>) -> Result<Device, Error> {
    let ordinal = |rest: &str| {
        rest.parse::<usize>()
            .map_err(|_| Error::custom(format!("not a device: {name:?}")))
    };
    match name {
        None | Some("cpu") => Ok(Device::Cpu),
        Some(n) if n.starts_with("cuda:") => {
            Device::new_cuda(ordinal(&n[5..])?).map_err(candle_error)
        }
        Some(n) if n.starts_with("metal:") => {
            Device::new_metal(ordinal(&n[6..])?).map_err(candle_error)
        }
        Some(n) => Err(Error::custom(format!("not a candle device: {n}"))),
    }
}

/// A candle error as this crate's (`"candle: ..."`).
#[cold]
pub(crate) fn candle_error(e: candle_core::Error) -> Error {
    Error::custom(format!("candle: {e}"))
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

/// A variable's signature: its tensor's.
fn var_signature(v: &Var) -> Signature {
    tensor_signature(v.as_tensor())
}

/// Same dims, dtype and device.
fn same_var_signature(a: &Var, b: &Var) -> bool {
    same_signature(a.as_tensor(), b.as_tensor())
}

/// A tensor's elements in C order, converted to the buffer's element type
/// `T` (JAX's `ravel_pytree` promotes dtypes likewise); unraveled back to
/// the tensor's own dtype, shape and device.
///
/// ```
/// use pytree_std::candle_core::{DType, Device, Tensor};
/// let t = (Tensor::new(&[[1.0f32, 2.0]], &Device::Cpu)?, Tensor::new(&[3.0f64], &Device::Cpu)?.to_dtype(DType::BF16)?);
/// let (flat, plan) = pytree_std::elements::ravel::<_, f32>(&t)?;
/// assert_eq!(flat, [1.0, 2.0, 3.0]);
/// let (w, b) = plan.unravel(&[4.0, 5.0, 6.0])?;
/// assert_eq!((w.dims(), b.dtype()), (&[1usize, 2][..], DType::BF16));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl<T: WithDType> Ravel<T> for Tensor {
    fn ravel_into(leaf: &Tensor, out: &mut Vec<T>) -> Result<(), Error> {
        let values = leaf
            .flatten_all()
            .and_then(|t| t.to_dtype(T::DTYPE))
            .and_then(|t| t.to_vec1::<T>())
            .map_err(candle_error)?;
        out.extend(values);
        Ok(())
    }
    fn unravel_from(like: &Signature, data: &[T]) -> Result<Self, Error> {
        let dtype = candle_dtype(like.dtype())
            .ok_or_else(|| Error::custom(format!("no candle dtype for {like}")))?;
        let device = device_of(like.device())?;
        Tensor::from_slice(data, like.shape(), &device)
            .and_then(|t| t.to_dtype(dtype))
            .map_err(candle_error)
    }
}

/// A variable ravels as its tensor; unraveled into a new variable (of the
/// signature's dtype, shape and device).
///
/// ```
/// use pytree_std::candle_core::{Device, Var};
/// let v = vec![Var::new(&[1.0f32, 2.0], &Device::Cpu)?];
/// let (flat, plan) = pytree_std::elements::ravel::<_, f64>(&v)?;
/// assert_eq!(flat, [1.0, 2.0]);
/// let back = plan.unravel(&[3.0, 4.0])?;
/// assert!(back[0].is_variable());
/// assert_eq!(back[0].to_vec1::<f32>()?, [3.0, 4.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl<T: WithDType> Ravel<T> for Var {
    fn ravel_into(leaf: &Var, out: &mut Vec<T>) -> Result<(), Error> {
        <Tensor as Ravel<T>>::ravel_into(leaf.as_tensor(), out)
    }
    fn unravel_from(like: &Signature, data: &[T]) -> Result<Self, Error> {
        let t = <Tensor as Ravel<T>>::unravel_from(like, data)?;
        Var::from_tensor(&t).map_err(candle_error)
    }
}

/// Variables compare as their tensors.
///
/// ```
/// use pytree_std::candle_core::{Device, Var};
/// use pytree_std::{elements::ApproxEq, elements::Tolerance};
/// let a = Var::new(&[1.0f32, 2.0], &Device::Cpu)?;
/// assert!(a.approx_eq(&Var::new(&[1.0f32, 2.0001], &Device::Cpu)?, Tolerance::new(0.0, 1e-3)));
/// # Ok::<(), pytree_std::candle_core::Error>(())
/// ```
impl ApproxEq for Var {
    fn approx_eq(&self, other: &Self, tol: Tolerance) -> bool {
        self.as_tensor().approx_eq(other.as_tensor(), tol)
    }
}

/// Same dims and dtype, then elementwise: integers exactly, floats within
/// the tolerance (compared as `f64`, NumPy's `isclose`). Tensors on
/// different devices are compared by value. A candle operation that fails
/// (a dtype with no conversion to `f64`) counts as not equal.
///
/// ```
/// use pytree_std::candle_core::{Device, Tensor};
/// use pytree_std::{elements::ApproxEq, elements::Tolerance};
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

// Ensembles: stacking along a new leading axis.

/// A candle error of an ensemble operation (`"stack_leaves: candle: ..."`).
#[cold]
fn ensemble_error(op: &str, e: candle_core::Error) -> Error {
    Error::custom(format!("{op}: {}", candle_error(e)))
}

/// `Tensor::stack(members, 0)`, in storage of its own even for one
/// member (where candle would return a view of it), so that writing
/// the stacked tensor in place (an optimizer step) leaves the members
/// as they were.
fn stack_tensors(members: &[&Tensor]) -> Result<Tensor, Error> {
    let stacked = Tensor::stack(members, 0).map_err(|e| ensemble_error("stack_leaves", e))?;
    if members.len() == 1 {
        return stacked
            .force_contiguous()
            .map_err(|e| ensemble_error("stack_leaves", e));
    }
    Ok(stacked)
}

/// `narrow(0, i, 1)` and `squeeze(0)`: slice `i`, a view.
fn slice(leaf: &Tensor, i: usize) -> Result<Tensor, Error> {
    leaf.narrow(0, i, 1)
        .and_then(|t| t.squeeze(0))
        .map_err(|e| ensemble_error("unstack_leaves", e))
}

/// Stacked with `Tensor::stack` along dim 0, on the members' device
/// and in their dtype; the operations are recorded, so gradients flow
/// from the stacked tensor back to the members (and from a member to
/// the stacked tensor). A member is `narrow(0, i, 1)` + `squeeze(0)`,
/// copied into storage of its own (`force_contiguous`).
impl crate::ensemble::Stackable for Tensor {
    fn stack(members: &[&Tensor]) -> Result<Self, Error> {
        stack_tensors(members)
    }
    fn shape<'a>(leaf: &'a &Tensor) -> &'a [usize] {
        leaf.dims()
    }
    fn index(leaf: &&Tensor, i: usize) -> Result<Self, Error> {
        slice(leaf, i)?
            .force_contiguous()
            .map_err(|e| ensemble_error("unstack_leaves", e))
    }
}

/// Variables stack into a new variable (`Var::from_tensor` of the
/// stacked tensor) and unstack into new variables, each in storage of
/// its own: `Var::set` on one leaves the others as they were.
impl crate::ensemble::Stackable for Var {
    fn stack(members: &[&Var]) -> Result<Self, Error> {
        let tensors: Vec<&Tensor> = members.iter().map(|v| v.as_tensor()).collect();
        // `Tensor::stack` of variables is not a variable, so
        // `from_tensor` copies it into one (even for one member).
        let stacked = Tensor::stack(&tensors, 0).map_err(|e| ensemble_error("stack_leaves", e))?;
        Var::from_tensor(&stacked).map_err(|e| ensemble_error("stack_leaves", e))
    }
    fn shape<'a>(leaf: &'a &Var) -> &'a [usize] {
        leaf.as_tensor().dims()
    }
    fn index(leaf: &&Var, i: usize) -> Result<Self, Error> {
        Var::from_tensor(&slice(leaf.as_tensor(), i)?)
            .map_err(|e| ensemble_error("unstack_leaves", e))
    }
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
    fn dtypes_map_back() {
        for d in [
            CandleDType::U8,
            CandleDType::I16,
            CandleDType::BF16,
            CandleDType::F64,
            CandleDType::F8E4M3,
            CandleDType::F4,
        ] {
            assert_eq!(candle_dtype(dtype(d)), Some(d));
        }
        assert_eq!(candle_dtype(DType::Bool), None);
    }

    #[test]
    fn devices_are_read_back_from_their_names() {
        assert!(matches!(device_of(Some("cpu")), Ok(Device::Cpu)));
        assert!(matches!(device_of(None), Ok(Device::Cpu)));
        assert!(device_of(Some("tpu:0")).is_err());
        assert!(device_of(Some("cuda:x")).is_err());
    }

    #[test]
    fn a_var_has_its_tensors_signature() {
        let v = Var::zeros((2, 3), CandleDType::BF16, &Device::Cpu).unwrap();
        assert_eq!(var_signature(&v).to_string(), "bf16[2,3]@cpu");
        let w = Var::zeros((2, 3), CandleDType::F32, &Device::Cpu).unwrap();
        assert!(!same_var_signature(&v, &w));
        assert!(same_var_signature(&v, &v.clone()));
    }

    #[test]
    fn devices_are_named_by_location() {
        assert_eq!(device_name(DeviceLocation::Cpu), "cpu");
        assert_eq!(device_name(DeviceLocation::Cuda { gpu_id: 1 }), "cuda:1");
        assert_eq!(device_name(DeviceLocation::Metal { gpu_id: 0 }), "metal:0");
    }
}
