//! burn 0.22 (feature `burn`): a burn module is a pytree of its float
//! parameters, and [`BurnTensor`] is their leaf type.
//!
//! - [`BurnTensor`]: a float tensor of any rank, moved and lent as burn's
//!   own rank-erased handle (`BridgeTensor`: a clone bumps a reference
//!   count, no element is copied), so the parameters of every rank sit in
//!   one tree, as `ArrayD` does for ndarray.
//! - [`BurnModule`]: any burn `Module` (a `#[derive(Module)]` struct of
//!   burn-nn layers, `Param<Tensor<D>>` of any rank, `Vec`s, tuples,
//!   `Option`s and enums of them) taken apart by burn's own visitor into a
//!   tree of its float parameters keyed by the names burn-store gives them,
//!   and put back together by burn's mapper: no impl per burn-nn type.
//! - `float.rs`: [`BurnTensor`] as pytree-optim's `FloatLeaf` (the element
//!   update run in one pass over an `f32` tensor's memory on burn-flex,
//!   `fused.rs`, else as whole-tensor operations on the tensor's device);
//!   `bytes.rs`: as a `ByteLeaf` (its dtype, shape and bytes);
//!   `checkpoint.rs`: as a checkpoint's `TensorLeaf`.

mod bytes;
#[cfg(feature = "safetensors")]
mod checkpoint;
mod float;
mod fused;
mod module;
mod rank;

pub use module::BurnModule;

use std::borrow::Cow;

use burn::tensor::kind::BridgeTensor;
use burn::tensor::{DType as BurnDType, Device, Shape, Tensor, TensorData};
use pytree_core::{DType, Error, Signature};

use crate::elements::{ApproxEq, Tolerance};

/// A float tensor of burn of any rank, on any device and backend: the leaf
/// type of [`BurnModule`] trees and of your own trees of burn tensors.
///
/// It holds burn's rank-erased handle, so `Tensor<1>` ... `Tensor<8>` all
/// become one leaf type; a clone is a new handle to the same storage (as
/// `Tensor::clone`). Make one with [`BurnTensor::new`] (or `From`), get the
/// tensor back with [`into_tensor`](BurnTensor::into_tensor) at its rank.
///
/// ```
/// use burn::tensor::{Device, Tensor};
/// use pytree_std::BurnTensor;
///
/// let device = Device::default();
/// let w = BurnTensor::new(Tensor::<2>::ones([2, 3], &device));
/// let b = BurnTensor::new(Tensor::<1>::zeros([3], &device));
/// let tree = vec![w, b]; // two ranks, one leaf type
/// assert_eq!(pytree_std::walk::leaves(&tree)[0].shape(), [2, 3]);
/// let w: Tensor<2> = tree[0].clone().into_tensor()?;
/// assert_eq!(w.dims(), [2, 3]);
/// assert!(tree[1].clone().into_tensor::<2>().is_err()); // rank 1, not 2
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(Clone)]
pub struct BurnTensor {
    inner: BridgeTensor,
    /// `inner`'s dims, read once (a handle's shape is fixed).
    shape: Shape,
}

impl BurnTensor {
    /// The leaf holding `tensor` (moved: no copy).
    ///
    /// ```
    /// use burn::tensor::{Device, Tensor};
    /// let t = pytree_std::BurnTensor::new(Tensor::<3>::zeros([1, 2, 3], &Device::default()));
    /// assert_eq!((t.rank(), t.num_elements()), (3, 6));
    /// ```
    pub fn new<const D: usize>(tensor: Tensor<D>) -> Self {
        let inner = tensor.into_bridge();
        BurnTensor {
            shape: inner.shape(),
            inner,
        }
    }

    /// The tensor at rank `D`; another rank is an error naming both.
    ///
    /// ```
    /// use burn::tensor::{Device, Tensor};
    /// let t = pytree_std::BurnTensor::new(Tensor::<2>::zeros([2, 2], &Device::default()));
    /// let err = t.into_tensor::<3>().unwrap_err();
    /// assert_eq!(err.to_string(), "at <root>: expected a burn tensor of rank 3, found f32[2,2]");
    /// ```
    pub fn into_tensor<const D: usize>(self) -> Result<Tensor<D>, Error> {
        if self.rank() != D {
            return Err(Error::custom(format!(
                "expected a burn tensor of rank {D}, found {}",
                self.signature_without_device()
            )));
        }
        Ok(Tensor::from_bridge(self.inner))
    }

    /// The dims.
    ///
    /// ```
    /// use burn::tensor::{Device, Tensor};
    /// let t = pytree_std::BurnTensor::new(Tensor::<2>::zeros([4, 5], &Device::default()));
    /// assert_eq!(t.shape(), [4, 5]);
    /// ```
    pub fn shape(&self) -> &[usize] {
        self.shape.as_slice()
    }

    /// The number of dims.
    ///
    /// ```
    /// use burn::tensor::{Device, Tensor};
    /// let t = pytree_std::BurnTensor::new(Tensor::<4>::zeros([1, 1, 2, 2], &Device::default()));
    /// assert_eq!(t.rank(), 4);
    /// ```
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The number of elements.
    ///
    /// ```
    /// use burn::tensor::{Device, Tensor};
    /// let t = pytree_std::BurnTensor::new(Tensor::<2>::zeros([4, 5], &Device::default()));
    /// assert_eq!(t.num_elements(), 20);
    /// ```
    pub fn num_elements(&self) -> usize {
        self.shape.num_elements()
    }

    /// burn's dtype of the elements (`F32`, `F16`, `BF16`, `F64`).
    ///
    /// ```
    /// use burn::tensor::{DType, Device, Tensor};
    /// let t = pytree_std::BurnTensor::new(Tensor::<1>::zeros([2], &Device::default()));
    /// assert_eq!(t.dtype(), DType::F32);
    /// ```
    pub fn dtype(&self) -> BurnDType {
        self.inner.dtype()
    }

    /// The device the tensor lives on.
    ///
    /// ```
    /// use burn::tensor::{Device, Tensor};
    /// let device = Device::default();
    /// let t = pytree_std::BurnTensor::new(Tensor::<1>::zeros([2], &device));
    /// assert_eq!(t.device(), device);
    /// ```
    pub fn device(&self) -> Device {
        self.flat().device()
    }

    /// The elements in C order, as burn's `TensorData` (read from the
    /// device).
    ///
    /// ```
    /// use burn::tensor::{Device, Tensor};
    /// let t = pytree_std::BurnTensor::new(Tensor::<2>::from_data([[1.0f32, 2.0], [3.0, 4.0]], &Device::default()));
    /// assert_eq!(t.to_data().try_to_vec::<f32>().unwrap(), [1.0, 2.0, 3.0, 4.0]);
    /// ```
    pub fn to_data(&self) -> TensorData {
        self.flat().into_data()
    }

    /// The same elements as a rank-1 tensor (a reshape: no copy of a
    /// contiguous tensor).
    ///
    /// ```
    /// use burn::tensor::{Device, Tensor};
    /// let t = pytree_std::BurnTensor::new(Tensor::<2>::ones([2, 3], &Device::default()));
    /// assert_eq!(t.flat().dims(), [6]);
    /// ```
    pub fn flat(&self) -> Tensor<1> {
        rank::flat(self.inner.clone())
    }

    /// A tensor of `shape` from the elements of `flat` (the inverse of
    /// [`flat`](BurnTensor::flat)); a shape with another number of
    /// elements, or of more than 8 dims, is an error.
    ///
    /// ```
    /// use burn::tensor::{Device, Tensor};
    /// use pytree_std::BurnTensor;
    /// let flat = Tensor::<1>::from_data([1.0f32, 2.0, 3.0, 4.0], &Device::default());
    /// let t = BurnTensor::from_flat(flat, &[2, 2])?;
    /// assert_eq!(t.shape(), [2, 2]);
    /// assert!(BurnTensor::from_flat(t.flat(), &[3]).is_err());
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn from_flat(flat: Tensor<1>, shape: &[usize]) -> Result<Self, Error> {
        let n: usize = shape.iter().product();
        if flat.dims()[0] != n {
            return Err(Error::custom(format!(
                "cannot shape {} elements as {shape:?}",
                flat.dims()[0]
            )));
        }
        let inner = rank::shaped(flat, shape)?;
        Ok(BurnTensor {
            shape: inner.shape(),
            inner,
        })
    }

    /// A new leaf of the same shape, dtype and device whose elements are
    /// `f` of this one's as a rank-1 tensor: how to write an elementwise
    /// function of a leaf of any rank.
    ///
    /// ```
    /// use burn::tensor::{Device, Tensor};
    /// let t = pytree_std::BurnTensor::new(Tensor::<2>::ones([2, 2], &Device::default()));
    /// let doubled = t.map_flat(|x| x * 2.0)?;
    /// assert_eq!(doubled.to_data().try_to_vec::<f32>().unwrap(), [2.0; 4]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn map_flat(&self, f: impl FnOnce(Tensor<1>) -> Tensor<1>) -> Result<Self, Error> {
        BurnTensor::from_flat(f(self.flat()), self.shape())
    }

    /// dtype and shape, as the error messages print them.
    fn signature_without_device(&self) -> Signature {
        Signature::new(dtype(self.dtype()), self.shape().to_vec())
    }
}

impl<const D: usize> From<Tensor<D>> for BurnTensor {
    /// [`BurnTensor::new`].
    fn from(tensor: Tensor<D>) -> Self {
        BurnTensor::new(tensor)
    }
}

impl std::fmt::Debug for BurnTensor {
    /// `BurnTensor(f32[2,3]@<device>)`: the signature, not the elements
    /// (reading them would synchronize the device).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BurnTensor({})", signature(self))
    }
}

/// burn's dtype as a [`DType`]; burn's `Flex32` (f32 storage, computed at
/// the backend's choice) and the quantized and integer kinds keep burn's
/// name.
pub(crate) fn dtype(d: BurnDType) -> DType {
    match d {
        BurnDType::F64 => DType::F64,
        BurnDType::F32 => DType::F32,
        BurnDType::F16 => DType::F16,
        BurnDType::BF16 => DType::BF16,
        BurnDType::I64 => DType::I64,
        BurnDType::I32 => DType::I32,
        BurnDType::I16 => DType::I16,
        BurnDType::I8 => DType::I8,
        BurnDType::U64 => DType::U64,
        BurnDType::U32 => DType::U32,
        BurnDType::U16 => DType::U16,
        BurnDType::U8 => DType::U8,
        BurnDType::Bool(_) => DType::Bool,
        BurnDType::Flex32 => DType::Other("flex32"),
        BurnDType::QFloat(_) => DType::Other("qfloat"),
    }
}

/// The burn dtype of a float [`DType`].
pub(crate) fn burn_dtype(d: DType) -> Option<BurnDType> {
    Some(match d {
        DType::F64 => BurnDType::F64,
        DType::F32 => BurnDType::F32,
        DType::F16 => BurnDType::F16,
        DType::BF16 => BurnDType::BF16,
        DType::Other("flex32") => BurnDType::Flex32,
        _ => return None,
    })
}

/// The device's name: burn's `Debug` of it.
fn device_name(device: &Device) -> Cow<'static, str> {
    Cow::Owned(format!("{device:?}"))
}

/// dtype, dims and device.
fn signature(t: &BurnTensor) -> Signature {
    t.signature_without_device()
        .with_device(device_name(&t.device()))
}

/// Same dims and dtype (the device is compared by [`signature`] only in
/// messages: reading it costs a handle).
fn same_signature(a: &BurnTensor, b: &BurnTensor) -> bool {
    a.shape == b.shape && a.dtype() == b.dtype()
}

leaf_by_reference!(shaped BurnTensor, signature = signature, same = same_signature);

/// Same dims and dtype, then the elements within the tolerance (read as
/// `f64`, NumPy's `isclose`).
///
/// ```
/// use burn::tensor::{Device, Tensor};
/// use pytree_std::{BurnTensor, elements::ApproxEq, elements::Tolerance};
/// let d = Device::default();
/// let a = BurnTensor::new(Tensor::<1>::from_data([1.0f32, 2.0], &d));
/// let b = BurnTensor::new(Tensor::<1>::from_data([1.0f32, 2.001], &d));
/// assert!(!a.approx_eq(&b, Tolerance::EXACT));
/// assert!(a.approx_eq(&b, Tolerance::new(0.0, 1e-2)));
/// ```
impl ApproxEq for BurnTensor {
    fn approx_eq(&self, other: &Self, tol: Tolerance) -> bool {
        if !same_signature(self, other) {
            return false;
        }
        match (host_f64(self), host_f64(other)) {
            (Ok(x), Ok(y)) => x.iter().zip(&y).all(|(x, y)| tol.close(*x, *y)),
            _ => false,
        }
    }
}

/// The elements as `f64`, read from the device.
pub(crate) fn host_f64(t: &BurnTensor) -> Result<Vec<f64>, Error> {
    t.to_data()
        .convert::<f64>()
        .try_to_vec::<f64>()
        .map_err(|e| Error::custom(format!("burn: {e:?}")))
}

/// A leaf's elements converted to `T` (JAX's `ravel_pytree` promotes
/// dtypes likewise), unraveled back to the leaf's own dtype, shape and
/// device (the default device when the signature names none).
///
/// ```
/// use burn::tensor::{Device, Tensor};
/// use pytree_std::BurnTensor;
/// let d = Device::default();
/// let t = vec![BurnTensor::new(Tensor::<2>::from_data([[1.0f32, 2.0]], &d)), BurnTensor::new(Tensor::<1>::from_data([3.0f32], &d))];
/// let (flat, plan) = pytree_std::elements::ravel::<_, f32>(&t)?;
/// assert_eq!(flat, [1.0, 2.0, 3.0]);
/// let back = plan.unravel(&[4.0, 5.0, 6.0])?;
/// assert_eq!(back[0].shape(), [1, 2]);
/// assert_eq!(back[1].to_data().try_to_vec::<f32>().unwrap(), [6.0]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
impl<T> crate::elements::Ravel<T> for BurnTensor
where
    T: burn::tensor::Element + Copy,
{
    fn ravel_into(leaf: &BurnTensor, out: &mut Vec<T>) -> Result<(), Error> {
        let values = leaf
            .to_data()
            .convert::<T>()
            .try_to_vec::<T>()
            .map_err(|e| Error::custom(format!("burn: {e:?}")))?;
        out.extend(values);
        Ok(())
    }
    fn unravel_from(like: &Signature, data: &[T]) -> Result<Self, Error> {
        let dt = burn_dtype(like.dtype())
            .ok_or_else(|| Error::custom(format!("no burn float dtype for {like}")))?;
        let device = Device::default();
        let flat =
            Tensor::<1>::from_data(TensorData::new(data.to_vec(), [data.len()]), (&device, dt));
        BurnTensor::from_flat(flat, like.shape())
    }
}

/// Stacked with `Tensor::stack` along a new dim 0 (members of one rank
/// and dtype, on the first member's device); a member back is
/// `narrow(0, i, 1)` of the stack, reshaped without its leading dim.
///
/// ```
/// use burn::tensor::{Device, Tensor};
/// use pytree_std::BurnTensor;
/// let d = Device::default();
/// let members = [vec![BurnTensor::new(Tensor::<1>::ones([2], &d))], vec![BurnTensor::new(Tensor::<1>::zeros([2], &d))]];
/// let stacked = pytree_std::ensemble::stack_leaves(&members)?;
/// assert_eq!(stacked[0].shape(), [2, 2]);
/// let back = pytree_std::ensemble::unstack_leaves(&stacked)?;
/// assert_eq!(back[1][0].to_data().try_to_vec::<f32>().unwrap(), [0.0, 0.0]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
impl crate::ensemble::Stackable for BurnTensor {
    fn stack(members: &[&BurnTensor]) -> Result<Self, Error> {
        let Some(first) = members.first() else {
            return Err(Error::custom("stack_leaves: no member"));
        };
        let shape = first.shape().to_vec();
        let mut flats = Vec::with_capacity(members.len());
        for m in members {
            if !same_signature(first, m) {
                return Err(crate::impls::shaped::signature_error(
                    signature(first),
                    signature(m),
                ));
            }
            flats.push(m.flat());
        }
        let stacked = Tensor::cat(flats, 0);
        let mut dims = Vec::with_capacity(shape.len() + 1);
        dims.push(members.len());
        dims.extend(&shape);
        BurnTensor::from_flat(stacked, &dims)
    }
    fn shape<'a>(leaf: &'a &BurnTensor) -> &'a [usize] {
        leaf.shape()
    }
    fn index(leaf: &&BurnTensor, i: usize) -> Result<Self, Error> {
        let shape = leaf.shape();
        if i >= shape[0] {
            return Err(Error::custom(format!(
                "unstack_leaves: member {i} of a stack of {}",
                shape[0]
            )));
        }
        let n = leaf.num_elements() / shape[0].max(1);
        let part = leaf.flat().narrow(0, i * n, n);
        BurnTensor::from_flat(part, &shape[1..])
    }
}
