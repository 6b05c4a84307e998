//! `Tensor` and `Var` as [`ByteLeaf`]s (feature `candle` alone): a tensor
//! is its own dtype and shape, its elements copied to the CPU as
//! little-endian bytes in C order; a new one goes on the template's
//! device (the CPU without one). The checkpoint's file paths are in
//! `checkpoint.rs`.

use std::borrow::Cow;

use candle_core::{DType as CandleDType, Device, Tensor, Var};
use pytree_core::{DType, Error, Leaf, Signature};

use super::candle_error;
use crate::leaf_bytes::{signature_error, ByteLeaf, ByteTensor};
use crate::std_namespace::Std;

/// The candle dtype stored as `d`, for the dtypes both candle and
/// [`DType`] name with a size in bytes.
pub(super) fn candle_dtype(d: DType) -> Option<CandleDType> {
    match d {
        DType::Other(_) => None,
        d => super::candle_dtype(d),
    }
}

/// The elements of `t` (C order) as little-endian bytes.
fn le_bytes<T: candle_core::WithDType>(
    t: &Tensor,
    put: impl Fn(T, &mut Vec<u8>),
) -> Result<Vec<u8>, Error> {
    let values = t
        .flatten_all()
        .and_then(|f| f.to_vec1::<T>())
        .map_err(candle_error)?;
    let mut out = Vec::with_capacity(values.len() * std::mem::size_of::<T>());
    for v in values {
        put(v, &mut out);
    }
    Ok(out)
}

/// The device of a new tensor: the template's, else the CPU.
pub(super) fn device_like(like: Option<&&Tensor>) -> Device {
    like.map_or(Device::Cpu, |t| t.device().clone())
}

/// A candle tensor is its own dtype and shape (copied to the CPU to be
/// read as bytes); a new one is put on the template's device, or the
/// CPU without a template. The dtypes are the nine that both candle and
/// [`DType`] name with a size (`u8`, `u32`, `i16`, `i32`, `i64`, `bf16`,
/// `f16`, `f32`, `f64`); another is an error.
///
/// ```
/// use pytree_std::candle_core::{Device, Tensor};
/// use pytree_std::{ByteLeaf, ByteTensor};
/// let t = Tensor::new(&[[1.0f32, 2.0]], &Device::Cpu)?;
/// let lent = &t;
/// let sig = <Tensor as ByteLeaf>::signature(&lent)?;
/// assert_eq!(sig.to_string(), "f32[1,2]");
/// let bytes = <Tensor as ByteLeaf>::bytes(&lent)?;
/// let received = ByteTensor::new(sig.dtype(), sig.shape(), &bytes)?;
/// let back = <Tensor as ByteLeaf>::from_bytes(&received, Some(&lent))?;
/// assert_eq!(back.to_vec2::<f32>()?, [[1.0, 2.0]]);
/// let mut zero = t.zeros_like()?;
/// <Tensor as ByteLeaf>::write_bytes(&mut zero, &received)?;
/// assert_eq!(zero.to_vec2::<f32>()?, [[1.0, 2.0]]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl ByteLeaf for Tensor {
    fn fixed_dtype() -> Option<DType> {
        None
    }
    fn signature(leaf: &&Tensor) -> Result<Signature, Error> {
        let dtype = <Tensor as Leaf<Std>>::signature(leaf)
            .map(|s| s.dtype())
            .unwrap_or(DType::Other("unknown"));
        if candle_dtype(dtype).is_none() {
            return Err(Error::custom(format!(
                "a candle tensor of dtype {} cannot be stored (supported: u8, u32, i16, i32, i64, bf16, f16, f32, f64)",
                leaf.dtype().as_str()
            )));
        }
        Ok(Signature::new(dtype, leaf.dims().to_vec()))
    }
    fn bytes<'a>(leaf: &'a &Tensor) -> Result<Cow<'a, [u8]>, Error> {
        let t: &Tensor = leaf;
        let bytes = match t.dtype() {
            CandleDType::U8 => le_bytes::<u8>(t, |v, o| o.push(v))?,
            CandleDType::U32 => le_bytes::<u32>(t, |v, o| o.extend_from_slice(&v.to_le_bytes()))?,
            CandleDType::I16 => le_bytes::<i16>(t, |v, o| o.extend_from_slice(&v.to_le_bytes()))?,
            CandleDType::I32 => le_bytes::<i32>(t, |v, o| o.extend_from_slice(&v.to_le_bytes()))?,
            CandleDType::I64 => le_bytes::<i64>(t, |v, o| o.extend_from_slice(&v.to_le_bytes()))?,
            CandleDType::BF16 => {
                le_bytes::<half::bf16>(t, |v, o| o.extend_from_slice(&v.to_le_bytes()))?
            }
            CandleDType::F16 => {
                le_bytes::<half::f16>(t, |v, o| o.extend_from_slice(&v.to_le_bytes()))?
            }
            CandleDType::F32 => le_bytes::<f32>(t, |v, o| o.extend_from_slice(&v.to_le_bytes()))?,
            CandleDType::F64 => le_bytes::<f64>(t, |v, o| o.extend_from_slice(&v.to_le_bytes()))?,
            other => {
                return Err(Error::custom(format!(
                    "a candle tensor of dtype {} cannot be stored",
                    other.as_str()
                )))
            }
        };
        Ok(Cow::Owned(bytes))
    }
    /// A new tensor (candle's tensors are immutable) on the slot's
    /// device, in its place.
    fn write_bytes(slot: &mut Tensor, tensor: &ByteTensor<'_>) -> Result<(), Error> {
        let mine = <Tensor as ByteLeaf>::signature(&&*slot)?;
        if mine.dtype() != tensor.dtype() || mine.shape() != tensor.shape() {
            return Err(signature_error(&mine, &tensor.signature()));
        }
        *slot = Self::from_bytes(tensor, Some(&&*slot))?;
        Ok(())
    }
    fn from_bytes(tensor: &ByteTensor<'_>, like: Option<&&Tensor>) -> Result<Self, Error> {
        let dtype = candle_dtype(tensor.dtype()).ok_or_else(|| {
            Error::custom(format!(
                "candle has no dtype {} ({})",
                tensor.dtype(),
                tensor.signature()
            ))
        })?;
        if cfg!(target_endian = "big") {
            return Err(Error::custom(
                "loading candle tensors needs a little-endian machine",
            ));
        }
        Tensor::from_raw_buffer(tensor.data(), dtype, tensor.shape(), &device_like(like))
            .map_err(candle_error)
    }
    fn to_owned_leaf(leaf: &&Tensor) -> Self {
        (*leaf).clone()
    }
}

/// A candle variable is its tensor. A new one is a new variable (on the
/// template's device); written in place it is set with `Var::set`, so
/// every holder of the variable (a model built from it, a `VarMap`) sees
/// the bytes.
///
/// ```
/// use pytree_std::candle_core::{Device, Var};
/// use pytree_std::{ByteLeaf, ByteTensor, DType};
/// let v = Var::zeros(2, pytree_std::candle_core::DType::F32, &Device::Cpu)?;
/// let held = v.as_tensor().clone();
/// let bytes = [1.0f32.to_le_bytes(), 2.0f32.to_le_bytes()].concat();
/// <Var as ByteLeaf>::write_bytes(&mut v.clone(), &ByteTensor::new(DType::F32, &[2], &bytes)?)?;
/// assert_eq!(held.to_vec1::<f32>()?, [1.0, 2.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl ByteLeaf for Var {
    fn fixed_dtype() -> Option<DType> {
        None
    }
    fn signature(leaf: &&Var) -> Result<Signature, Error> {
        <Tensor as ByteLeaf>::signature(&leaf.as_tensor())
    }
    fn bytes<'a>(leaf: &'a &Var) -> Result<Cow<'a, [u8]>, Error> {
        <Tensor as ByteLeaf>::bytes(&leaf.as_tensor()).map(|b| Cow::Owned(b.into_owned()))
    }
    fn write_bytes(slot: &mut Var, tensor: &ByteTensor<'_>) -> Result<(), Error> {
        let mut new = slot.as_tensor().clone();
        <Tensor as ByteLeaf>::write_bytes(&mut new, tensor)?;
        slot.set(&new).map_err(candle_error)
    }
    fn from_bytes(tensor: &ByteTensor<'_>, like: Option<&&Var>) -> Result<Self, Error> {
        let t = <Tensor as ByteLeaf>::from_bytes(tensor, like.map(|v| v.as_tensor()).as_ref())?;
        Var::from_tensor(&t).map_err(candle_error)
    }
    fn to_owned_leaf(leaf: &&Var) -> Self {
        (*leaf).clone()
    }
}
