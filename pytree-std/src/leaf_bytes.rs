//! Leaves as bytes: [`ByteLeaf`], what a leaf offers to code that moves it
//! as little-endian bytes in C order (collectives between processes,
//! checkpoints), [`ByteTensor`], such bytes in memory with their dtype and
//! shape, and [`Element`], the element types of arrays.
//!
//! Compiled with every feature set: the impls are the numeric scalars
//! (here) and, each with its own feature only, ndarray arrays and
//! `AnyArray`, candle tensors and variables, burn tensors, nalgebra
//! matrices and the `half` floats. The checkpoint's
//! [`TensorLeaf`](crate::checkpoint::TensorLeaf) (feature `safetensors`)
//! builds on this trait.
//!
//! ```
//! use pytree_std::{ByteLeaf, ByteTensor, DType};
//! let x = &1.5f32; // a leaf as lent (`Leaf::Ref`)
//! let bytes = <f32 as ByteLeaf>::bytes(&x)?; // what travels
//! let sig = <f32 as ByteLeaf>::signature(&x)?;
//! let received = ByteTensor::new(sig.dtype(), sig.shape(), &bytes)?;
//! let mut y = 0.0f32;
//! <f32 as ByteLeaf>::write_bytes(&mut y, &received)?;
//! assert_eq!(y, 1.5);
//! # Ok::<(), pytree_std::Error>(())
//! ```

use std::borrow::Cow;
use std::mem::size_of;

use pytree_core::{DType, Error, Leaf, Signature};

use crate::std_namespace::Std;

/// A tensor in memory: dtype, shape (outermost first) and its little-endian
/// C-order bytes, checked to agree.
///
/// ```
/// use pytree_std::{ByteTensor, DType};
/// let bytes = [1.0f32.to_le_bytes(), 2.0f32.to_le_bytes()].concat();
/// let t = ByteTensor::new(DType::F32, &[2], &bytes)?;
/// assert_eq!((t.dtype(), t.shape(), t.data().len()), (DType::F32, &[2][..], 8));
/// assert_eq!(t.signature().to_string(), "f32[2]");
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct ByteTensor<'a> {
    dtype: DType,
    shape: &'a [usize],
    data: &'a [u8],
}

impl<'a> ByteTensor<'a> {
    /// The tensor of `dtype` and `shape` over `data` (little-endian
    /// elements in C order: a buffer received from another process, say).
    /// An error unless `data` is exactly `shape`'s elements of `dtype` (a
    /// `bool` byte's value is checked where it is read).
    ///
    /// ```
    /// use pytree_std::{ByteTensor, DType};
    /// let bytes = 2.5f32.to_le_bytes();
    /// assert!(ByteTensor::new(DType::F32, &[], &bytes).is_ok());
    /// assert_eq!(ByteTensor::new(DType::F32, &[2], &bytes).unwrap_err().to_string(),
    ///     "at <root>: f32[2] is 8 bytes, found 4");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn new(dtype: DType, shape: &'a [usize], data: &'a [u8]) -> Result<Self, Error> {
        check_size(dtype, shape, data.len()).map_err(Error::custom)?;
        Ok(ByteTensor { dtype, shape, data })
    }

    /// The element type.
    ///
    /// ```
    /// let t = pytree_std::ByteTensor::new(pytree_std::DType::U8, &[1], &[7])?;
    /// assert_eq!(t.dtype(), pytree_std::DType::U8);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The dimensions, outermost first (empty for a scalar).
    ///
    /// ```
    /// let t = pytree_std::ByteTensor::new(pytree_std::DType::U8, &[1, 2], &[7, 8])?;
    /// assert_eq!(t.shape(), [1, 2]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn shape(&self) -> &'a [usize] {
        self.shape
    }

    /// The bytes: little-endian elements in C order, exactly as many as
    /// the dtype and shape say.
    ///
    /// ```
    /// let t = pytree_std::ByteTensor::new(pytree_std::DType::U16, &[], &[1, 2])?;
    /// assert_eq!(t.data(), [1, 2]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// Dtype and shape as a [`Signature`] (`f32[2,3]`).
    ///
    /// ```
    /// let t = pytree_std::ByteTensor::new(pytree_std::DType::U8, &[2], &[7, 8])?;
    /// assert_eq!(t.signature().to_string(), "u8[2]");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn signature(&self) -> Signature {
        Signature::new(self.dtype, self.shape.to_vec())
    }
}

/// Why `len` bytes are not exactly `shape`'s elements of `dtype`, if they
/// are not (the message of [`ByteTensor::new`]'s error, without a name).
pub(crate) fn check_size(dtype: DType, shape: &[usize], len: usize) -> Result<(), String> {
    let expected = dtype
        .size_in_bytes()
        .and_then(|size| shape.iter().try_fold(size, |n, &d| n.checked_mul(d)));
    if expected == Some(len) {
        return Ok(());
    }
    let signature = Signature::new(dtype, shape.to_vec());
    Err(match expected {
        Some(n) => format!("{signature} is {n} bytes, found {len}"),
        None => format!("{signature} has no size in bytes"),
    })
}

/// What a leaf offers to code that moves it as bytes (collectives between
/// processes, checkpoints): its dtype and shape, its little-endian bytes
/// in C order, and the way back, into a lent leaf or a new one. The
/// numeric scalars (0-d tensors) implement it and, with their features,
/// ndarray arrays (`ArrayD<A>`, `AnyArray`), candle `Tensor` and `Var`,
/// `BurnTensor`, nalgebra's `DMatrix<T>` and `half`'s `f16` / `bf16`. The
/// trait lives here, beside the namespace `Std`, so that it may be
/// implemented for other crates' types (the orphan rule); a leaf type of
/// your own implements it too (and, for checkpoints, an empty
/// `impl TensorLeaf for X {}`).
///
/// ```
/// use pytree_std::{ByteLeaf, DType, Signature};
/// assert_eq!(<f32 as ByteLeaf>::fixed_dtype(), Some(DType::F32));
/// assert_eq!(<f32 as ByteLeaf>::signature(&&2.0)?, Signature::scalar(DType::F32));
/// assert_eq!(&*<f32 as ByteLeaf>::bytes(&&2.0)?, 2.0f32.to_le_bytes());
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub trait ByteLeaf: Leaf<Std> {
    /// The dtype that every value of this type has (`f32`, `ArrayD<f32>`:
    /// `F32`), or `None` when each value says (a candle `Tensor`).
    ///
    /// ```
    /// use pytree_std::ByteLeaf;
    /// assert_eq!(<i64 as ByteLeaf>::fixed_dtype(), Some(pytree_std::DType::I64));
    /// ```
    fn fixed_dtype() -> Option<DType>;

    /// The dtype and shape of the leaf's bytes (no device), or why it has
    /// none (a dtype without a name in [`DType`]'s list of sized types).
    ///
    /// ```
    /// use pytree_std::ByteLeaf;
    /// assert_eq!(<u8 as ByteLeaf>::signature(&&3)?.to_string(), "u8[]");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn signature(leaf: &Self::Ref<'_>) -> Result<Signature, Error>;

    /// The leaf's data: little-endian elements in C order, exactly as many
    /// bytes as its signature says. Borrowed when the leaf's memory already
    /// is that (a contiguous array on a little-endian machine).
    ///
    /// ```
    /// use pytree_std::ByteLeaf;
    /// assert_eq!(&*<u16 as ByteLeaf>::bytes(&&0x0102)?, [0x02, 0x01]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn bytes<'a>(leaf: &'a Self::Ref<'_>) -> Result<Cow<'a, [u8]>, Error>;

    /// The memory of a lent leaf as its little-endian bytes in C order,
    /// writable, when it is exactly that (a numeric scalar, an array
    /// contiguous in C order, on a little-endian machine), so that a part
    /// of a leaf can be written in place (a slice of a tensor received from
    /// another process). `None` when it is not (the default; a `bool`,
    /// whose bytes may not be any value; a candle tensor, behind its lock):
    /// then [`write_bytes`](ByteLeaf::write_bytes) writes a whole leaf.
    ///
    /// ```
    /// use pytree_std::ByteLeaf;
    /// let mut x = 1.0f32;
    /// if let Some(bytes) = <f32 as ByteLeaf>::bytes_mut(&mut &mut x) {
    ///     bytes.copy_from_slice(&2.0f32.to_le_bytes());
    /// }
    /// assert_eq!(x, 2.0);
    /// assert!(<bool as ByteLeaf>::bytes_mut(&mut &mut true).is_none());
    /// ```
    fn bytes_mut<'a>(slot: &'a mut Self::Mut<'_>) -> Option<&'a mut [u8]> {
        let _ = slot;
        None
    }

    /// Overwrites a lent leaf with `tensor` (an error naming both
    /// signatures if dtype or shape differ from the leaf's; a `bool` byte
    /// other than 0 or 1 is an error too). Nothing is written on an error.
    ///
    /// ```
    /// use pytree_std::{ByteLeaf, ByteTensor, DType};
    /// let mut x = 0i32;
    /// <i32 as ByteLeaf>::write_bytes(&mut x, &ByteTensor::new(DType::I32, &[], &7i32.to_le_bytes())?)?;
    /// assert_eq!(x, 7);
    /// let wrong = ByteTensor::new(DType::F32, &[], &[0; 4])?;
    /// assert_eq!(<i32 as ByteLeaf>::write_bytes(&mut x, &wrong).unwrap_err().to_string(),
    ///     "at <root>: expected i32[], found f32[]");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn write_bytes(slot: Self::Mut<'_>, tensor: &ByteTensor<'_>) -> Result<(), Error>;

    /// A new leaf from `tensor`; `like`: a leaf to take what bytes do not
    /// say from (a candle tensor's device, a burn tensor's device). An
    /// error if the leaf type cannot hold the tensor's dtype or rank (a
    /// scalar is a 0-d tensor).
    ///
    /// ```
    /// use pytree_std::{ByteLeaf, ByteTensor, DType};
    /// let bytes = 2.5f64.to_le_bytes();
    /// let t = ByteTensor::new(DType::F64, &[], &bytes)?;
    /// assert_eq!(<f64 as ByteLeaf>::from_bytes(&t, None)?, 2.5);
    /// assert!(<f32 as ByteLeaf>::from_bytes(&t, None).is_err());
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn from_bytes(tensor: &ByteTensor<'_>, like: Option<&Self::Ref<'_>>) -> Result<Self, Error>;

    /// An owned copy of a lent leaf (what a partial load keeps from the
    /// template for a tensor the file lacks).
    ///
    /// ```
    /// use pytree_std::ByteLeaf;
    /// assert_eq!(<f32 as ByteLeaf>::to_owned_leaf(&&1.5), 1.5);
    /// ```
    fn to_owned_leaf(leaf: &Self::Ref<'_>) -> Self;
}

mod sealed {
    pub trait Sealed {}
}

/// An element type of arrays that move as bytes (and that a checkpoint
/// stores): `bool`, the integers of 8 to 64 bits, `f32`, `f64` and `half`'s
/// `f16` and `bf16` (with a feature that brings the `half` crate: `half`,
/// `ndarray` or `safetensors`). Sealed.
///
/// ```
/// use pytree_std::Element;
/// assert_eq!(<u16 as Element>::DTYPE, pytree_std::DType::U16);
/// ```
pub trait Element: Copy + 'static + sealed::Sealed {
    /// Its dtype.
    ///
    /// ```
    /// use pytree_std::Element;
    /// assert_eq!(<bool as Element>::DTYPE, pytree_std::DType::Bool);
    /// ```
    const DTYPE: DType;
    /// True when every bit pattern of its size is a value (not `bool`),
    /// so that bytes can be copied into it as they are.
    #[doc(hidden)]
    const ANY_BITS: bool;
    /// The value of exactly `size_of::<Self>()` little-endian bytes, or
    /// `None` if they are not one (a `bool` byte other than 0 or 1).
    #[doc(hidden)]
    fn from_le(bytes: &[u8]) -> Option<Self>;
    /// Appends the value's little-endian bytes.
    #[doc(hidden)]
    fn put_le(self, out: &mut Vec<u8>);
}

macro_rules! numeric_elements {
    ($($t:ty => $d:expr),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = $d;
            const ANY_BITS: bool = true;
            #[inline]
            fn from_le(bytes: &[u8]) -> Option<Self> {
                let mut a = [0u8; size_of::<$t>()];
                if bytes.len() != a.len() {
                    return None;
                }
                a.copy_from_slice(bytes);
                Some(<$t>::from_le_bytes(a))
            }
            #[inline]
            fn put_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}

numeric_elements!(
    u8 => DType::U8, u16 => DType::U16, u32 => DType::U32, u64 => DType::U64,
    i8 => DType::I8, i16 => DType::I16, i32 => DType::I32, i64 => DType::I64,
    f32 => DType::F32, f64 => DType::F64,
);
// The features that bring the `half` crate (`dep:half`) and use its types
// as array elements.
#[cfg(any(feature = "half", feature = "ndarray", feature = "safetensors"))]
numeric_elements!(half::f16 => DType::F16, half::bf16 => DType::BF16);

impl sealed::Sealed for bool {}
impl Element for bool {
    const DTYPE: DType = DType::Bool;
    const ANY_BITS: bool = false;
    #[inline]
    fn from_le(bytes: &[u8]) -> Option<Self> {
        match bytes {
            [0] => Some(false),
            [1] => Some(true),
            _ => None,
        }
    }
    #[inline]
    fn put_le(self, out: &mut Vec<u8>) {
        out.push(u8::from(self));
    }
}

/// The error for bytes that are not values of `A` (a `bool` byte other
/// than 0 or 1) or a data length that is not a whole number of elements.
#[cold]
pub(crate) fn bad_data<A: Element>(len: usize) -> Error {
    Error::custom(format!(
        "the tensor's {len} bytes are not a whole number of {} values (a bool must be 0 or 1)",
        A::DTYPE
    ))
}

/// That a tensor of `dtype` and `shape` has the dtype `expected` (the
/// leaf type's, or a template's); else the error naming both.
#[inline]
pub(crate) fn check_dtype(dtype: DType, shape: &[usize], expected: DType) -> Result<(), Error> {
    if dtype == expected {
        return Ok(());
    }
    let found = Signature::new(dtype, shape.to_vec());
    Err(Error::custom(format!(
        "expected dtype {expected}, found {found}"
    )))
}

/// The error for a tensor of another dtype or shape than a lent leaf's.
#[cold]
pub(crate) fn signature_error(expected: &Signature, found: &Signature) -> Error {
    Error::custom(format!("expected {expected}, found {found}"))
}

/// Whether the bytes of `A`s are their memory as it is: every bit pattern
/// a value (not `bool`), on a little-endian machine.
#[inline]
pub(crate) fn copies_as_bytes<A: Element>() -> bool {
    cfg!(target_endian = "little") && A::ANY_BITS
}

// The helpers of arrays (`ArrayD`, `AnyArray`, nalgebra's matrices) and
// of the checkpoint's reads, compiled with the features that use them.

/// The elements of `data` decoded one by one (a `bool`, which must be 0
/// or 1, or a big-endian machine).
#[cfg(any(feature = "ndarray", feature = "nalgebra", feature = "safetensors"))]
pub(crate) fn decode_elements<A: Element>(data: &[u8]) -> Result<Vec<A>, Error> {
    if !data.len().is_multiple_of(size_of::<A>()) {
        return Err(bad_data::<A>(data.len()));
    }
    data.chunks_exact(size_of::<A>())
        .map(A::from_le)
        .collect::<Option<Vec<A>>>()
        .ok_or_else(|| bad_data::<A>(data.len()))
}

/// A new vector of the `len / size_of::<A>()` elements whose bytes `fill`
/// writes straight into its memory (all `len` of them when it returns
/// `Ok`: one copy, or one positioned read from a file). Only for element
/// types that [`copies_as_bytes`], and `len` a whole number of elements
/// (an error otherwise).
#[cfg(any(feature = "ndarray", feature = "nalgebra", feature = "safetensors"))]
pub(crate) fn new_elements<A: Element>(
    len: usize,
    fill: impl FnOnce(&mut [std::mem::MaybeUninit<u8>]) -> Result<(), Error>,
) -> Result<Vec<A>, Error> {
    assert!(copies_as_bytes::<A>(), "bytes copied into a {}", A::DTYPE);
    if !len.is_multiple_of(size_of::<A>()) {
        return Err(bad_data::<A>(len));
    }
    let n = len / size_of::<A>();
    let mut out: Vec<A> = Vec::with_capacity(n);
    let spare = out.spare_capacity_mut();
    // SAFETY: the spare capacity holds `n` elements, `n * size == len`
    // bytes of writable memory that `out` owns, viewed as bytes that may be
    // uninitialized (`MaybeUninit<u8>` has the layout of `u8`, and any
    // alignment suffices for it).
    let bytes = unsafe {
        std::slice::from_raw_parts_mut(spare.as_mut_ptr().cast::<std::mem::MaybeUninit<u8>>(), len)
    };
    fill(bytes)?;
    // SAFETY: `fill` returned `Ok`, so all `len` bytes of the first `n`
    // elements are initialized; every bit pattern is a value of `A`
    // (`copies_as_bytes`: integers, floats and half floats, which have no
    // padding and no invalid patterns, asserted above) and the machine's
    // byte order is the data's.
    unsafe { out.set_len(n) };
    Ok(out)
}

/// The elements of `data` (little-endian) in a new vector: one copy where
/// the bytes are the memory, else decoded one by one.
#[cfg(any(feature = "ndarray", feature = "nalgebra"))]
pub(crate) fn elements_from_bytes<A: Element>(data: &[u8]) -> Result<Vec<A>, Error> {
    if !copies_as_bytes::<A>() {
        return decode_elements(data);
    }
    new_elements(data.len(), |dst| {
        // SAFETY: `dst` is exactly `data.len()` bytes (`new_elements` made
        // it `len` long), writable and distinct from `data` (a `&mut`
        // borrow of a new allocation); `MaybeUninit<u8>` has the layout of
        // `u8`.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), dst.as_mut_ptr().cast::<u8>(), data.len());
        }
        Ok(())
    })
}

/// Writes the elements of `data` (little-endian) into `dst`, which holds
/// exactly as many (checked). Nothing is written if the bytes are not
/// values (a `bool` other than 0 or 1).
#[cfg(feature = "ndarray")]
pub(crate) fn write_elements<A: Element>(dst: &mut [A], data: &[u8]) -> Result<(), Error> {
    if data.len() != std::mem::size_of_val(dst) {
        return Err(bad_data::<A>(data.len()));
    }
    match element_bytes_mut(dst) {
        Some(bytes) => bytes.copy_from_slice(data),
        None => dst.copy_from_slice(&decode_elements::<A>(data)?),
    }
    Ok(())
}

/// The bytes of `values` as stored: borrowed on a little-endian machine.
pub(crate) fn element_bytes<A: Element>(values: &[A]) -> Cow<'_, [u8]> {
    if cfg!(target_endian = "little") {
        // SAFETY: `A` is a primitive integer, float, half float or `bool`
        // (sealed): no padding, every byte initialized (a `bool` is one
        // byte, 0 or 1), so its memory may be read as `size_of_val`
        // bytes; the slice borrows `values` for its own lifetime; and the
        // machine's byte order is the format's.
        Cow::Borrowed(unsafe {
            std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values))
        })
    } else {
        let mut out = Vec::with_capacity(std::mem::size_of_val(values));
        for v in values {
            v.put_le(&mut out);
        }
        Cow::Owned(out)
    }
}

/// The memory of `values` as writable little-endian bytes, for element
/// types of which every bit pattern is a value, on a little-endian machine;
/// else `None`.
pub(crate) fn element_bytes_mut<A: Element>(values: &mut [A]) -> Option<&mut [u8]> {
    if !copies_as_bytes::<A>() {
        return None;
    }
    // SAFETY: `A` is a primitive integer, float or half float (`ANY_BITS`
    // excludes `bool`): no padding, and every bit pattern of its size is a
    // value, so its memory may be read and written as `size_of_val` bytes;
    // the byte slice reborrows `values` mutably for its own lifetime, so
    // nothing else reads or writes them meanwhile; and the machine's byte
    // order is the format's.
    Some(unsafe {
        std::slice::from_raw_parts_mut(
            values.as_mut_ptr().cast::<u8>(),
            std::mem::size_of_val(values),
        )
    })
}

/// That a tensor of `dtype` and `shape` is a scalar leaf of `A`'s: `A`'s
/// dtype, 0-d.
pub(crate) fn check_scalar<A: Element>(dtype: DType, shape: &[usize]) -> Result<(), Error> {
    check_dtype(dtype, shape, A::DTYPE)?;
    if !shape.is_empty() {
        return Err(Error::custom(format!(
            "expected a 0-d tensor (a scalar), found {}",
            Signature::new(dtype, shape.to_vec())
        )));
    }
    Ok(())
}

/// The one value of a scalar tensor of `A`'s, checked.
fn scalar_from_bytes<A: Element>(tensor: &ByteTensor<'_>) -> Result<A, Error> {
    check_scalar::<A>(tensor.dtype, tensor.shape)?;
    A::from_le(tensor.data).ok_or_else(|| bad_data::<A>(tensor.data.len()))
}

macro_rules! scalar_leaves {
    ($($t:ty),* $(,)?) => {$(
        /// A scalar leaf is a 0-d tensor.
        impl ByteLeaf for $t {
            fn fixed_dtype() -> Option<DType> {
                Some(<$t as Element>::DTYPE)
            }
            fn signature(_leaf: &&$t) -> Result<Signature, Error> {
                Ok(Signature::scalar(<$t as Element>::DTYPE))
            }
            fn bytes<'a>(leaf: &'a &$t) -> Result<Cow<'a, [u8]>, Error> {
                Ok(element_bytes::<$t>(std::slice::from_ref(*leaf)))
            }
            fn bytes_mut<'a>(slot: &'a mut &mut $t) -> Option<&'a mut [u8]> {
                element_bytes_mut(std::slice::from_mut(&mut **slot))
            }
            fn write_bytes(slot: &mut $t, tensor: &ByteTensor<'_>) -> Result<(), Error> {
                if tensor.dtype != <$t as Element>::DTYPE || !tensor.shape.is_empty() {
                    return Err(signature_error(
                        &Signature::scalar(<$t as Element>::DTYPE),
                        &tensor.signature(),
                    ));
                }
                *slot = scalar_from_bytes::<$t>(tensor)?;
                Ok(())
            }
            fn from_bytes(tensor: &ByteTensor<'_>, _like: Option<&&$t>) -> Result<Self, Error> {
                scalar_from_bytes::<$t>(tensor)
            }
            fn to_owned_leaf(leaf: &&$t) -> Self {
                **leaf
            }
        }
    )*};
}

scalar_leaves!(bool, u8, u16, u32, u64, i8, i16, i32, i64, f32, f64);
#[cfg(feature = "half")]
scalar_leaves!(half::f16, half::bf16);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bool_byte_other_than_0_or_1_is_refused_and_nothing_is_written() {
        let mut x = true;
        let t = ByteTensor::new(DType::Bool, &[], &[2]).unwrap();
        assert!(<bool as ByteLeaf>::write_bytes(&mut x, &t).is_err());
        assert!(x);
        assert!(<bool as ByteLeaf>::from_bytes(&t, None).is_err());
    }

    #[test]
    #[cfg(feature = "ndarray")]
    fn elements_round_trip_through_their_bytes() {
        let values = [1.5f32, -2.0, 3.25];
        let bytes = element_bytes(&values).into_owned();
        assert_eq!(elements_from_bytes::<f32>(&bytes).unwrap(), values);
        let mut dst = [0.0f32; 3];
        write_elements(&mut dst, &bytes).unwrap();
        assert_eq!(dst, values);
        assert!(write_elements(&mut dst[..2], &bytes).is_err());
        assert!(elements_from_bytes::<f32>(&bytes[..5]).is_err());
        assert_eq!(elements_from_bytes::<bool>(&[0, 1]).unwrap(), [false, true]);
    }

    #[test]
    fn a_scalar_is_a_0_d_tensor() {
        let bytes = [0u8; 8];
        let t = ByteTensor::new(DType::F32, &[2], &bytes).unwrap();
        assert_eq!(
            <f32 as ByteLeaf>::from_bytes(&t, None)
                .unwrap_err()
                .to_string(),
            "at <root>: expected a 0-d tensor (a scalar), found f32[2]"
        );
        let mut x = 1.0f32;
        assert_eq!(
            <f32 as ByteLeaf>::write_bytes(&mut x, &t)
                .unwrap_err()
                .to_string(),
            "at <root>: expected f32[], found f32[2]"
        );
        assert_eq!(x, 1.0);
    }
}
