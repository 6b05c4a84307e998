//! How one leaf becomes a tensor of a file and back: [`TensorLeaf`]
//! (implemented here, where `Std` is local, for the numeric scalars and,
//! with their features, ndarray arrays and candle tensors) and
//! [`Element`], the element types of arrays.

use std::borrow::Cow;
use std::mem::{size_of, MaybeUninit};

use pytree_core::{DType, Error, Leaf, Signature};

use super::storage::TensorData;
use crate::std_namespace::Std;

/// A tensor of a checkpoint: its name, dtype and shape (checked against
/// each other when the file was opened), and where its little-endian bytes
/// in C order are: in memory (a checkpoint read from bytes, or
/// memory-mapped with [`Load::open_mapped`](super::Load::open_mapped)), or
/// in a file, read when asked ([`data`](TensorView::data),
/// [`read_into`](TensorView::read_into)) with positioned reads straight
/// into the destination.
///
/// ```
/// use pytree_std::checkpoint::{self, Checkpoint, Load};
/// let bytes = checkpoint::Save::new().to_bytes(&std::collections::BTreeMap::from([("x", 1.5f32)]))?;
/// let file = Load::new().from_bytes(bytes)?;
/// let x = file.tensor("x").unwrap();
/// assert_eq!((x.name(), x.signature().to_string()), ("x", "f32[]".to_string()));
/// assert_eq!(&*x.data()?, 1.5f32.to_le_bytes());
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct TensorView<'a> {
    pub(crate) name: &'a str,
    pub(crate) dtype: DType,
    pub(crate) shape: &'a [usize],
    pub(crate) data: TensorData<'a>,
}

impl<'a> TensorView<'a> {
    /// A tensor of `dtype` and `shape` over `data` (little-endian elements
    /// in C order) that is not part of a file, for
    /// [`TensorLeaf::copy_from_tensor`] and [`TensorLeaf::from_tensor`]
    /// from a buffer of one's own (a tensor received from another process).
    /// An error unless `data` is exactly `shape`'s elements of `dtype` (a
    /// `bool` byte's value is checked where it is read).
    ///
    /// ```
    /// use pytree_std::checkpoint::{Load, TensorLeaf, TensorView};
    /// use pytree_std::DType;
    /// let bytes = 2.5f32.to_le_bytes();
    /// let t = TensorView::new("x", DType::F32, &[], &bytes)?;
    /// let mut x = 0.0f32;
    /// <f32 as TensorLeaf>::copy_from_tensor(&mut x, &t)?;
    /// assert_eq!(x, 2.5);
    /// assert_eq!(TensorView::new("x", DType::F32, &[2], &bytes).unwrap_err().to_string(),
    ///     "at <root>: tensor `x`: f32[2] is 8 bytes, found 4");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn new(
        name: &'a str,
        dtype: DType,
        shape: &'a [usize],
        data: &'a [u8],
    ) -> Result<Self, Error> {
        let expected = dtype
            .size_in_bytes()
            .and_then(|size| shape.iter().try_fold(size, |n, &d| n.checked_mul(d)));
        if expected != Some(data.len()) {
            let signature = Signature::new(dtype, shape.to_vec());
            return Err(Error::custom(match expected {
                Some(n) => format!(
                    "tensor `{name}`: {signature} is {n} bytes, found {}",
                    data.len()
                ),
                None => format!("tensor `{name}`: {signature} has no size in bytes"),
            }));
        }
        Ok(TensorView {
            name,
            dtype,
            shape,
            data: TensorData::Memory(data),
        })
    }

    /// The tensor's name in the file.
    ///
    /// ```
    /// # let file = pytree_std::checkpoint::Load::new().from_bytes(pytree_std::checkpoint::Save::new().to_bytes(&[1u8])?)?;
    /// assert_eq!(file.tensor("0").unwrap().name(), "0");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn name(&self) -> &'a str {
        self.name
    }
    /// The element type.
    ///
    /// ```
    /// # let file = pytree_std::checkpoint::Load::new().from_bytes(pytree_std::checkpoint::Save::new().to_bytes(&[1u8])?)?;
    /// assert_eq!(file.tensor("0").unwrap().dtype(), pytree_std::DType::U8);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn dtype(&self) -> DType {
        self.dtype
    }
    /// The dimensions, outermost first (empty for a scalar).
    ///
    /// ```
    /// # let file = pytree_std::checkpoint::Load::new().from_bytes(pytree_std::checkpoint::Save::new().to_bytes(&[1u8])?)?;
    /// assert!(file.tensor("0").unwrap().shape().is_empty());
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn shape(&self) -> &'a [usize] {
        self.shape
    }
    /// The number of bytes of its data.
    ///
    /// ```
    /// # let file = pytree_std::checkpoint::Load::new().from_bytes(pytree_std::checkpoint::Save::new().to_bytes(&[1.0f32])?)?;
    /// assert_eq!(file.tensor("0").unwrap().num_bytes(), 4);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn num_bytes(&self) -> usize {
        self.data.len()
    }
    /// The bytes, little-endian elements in C order: borrowed when the
    /// checkpoint is in memory or memory-mapped, else read from the file
    /// into a new buffer (an error naming the tensor if the file no
    /// longer holds them: truncated since it was opened).
    ///
    /// ```
    /// # let file = pytree_std::checkpoint::Load::new().from_bytes(pytree_std::checkpoint::Save::new().to_bytes(&[7u8])?)?;
    /// assert_eq!(&*file.tensor("0").unwrap().data()?, [7]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn data(&self) -> Result<Cow<'a, [u8]>, Error> {
        self.data.bytes().map_err(|e| self.read_failed(e))
    }
    /// The bytes without a copy, when they are in memory (a checkpoint
    /// read from bytes, or memory-mapped with
    /// [`Load::open_mapped`](super::Load::open_mapped)); `None` for a
    /// file read with positioned reads.
    ///
    /// ```
    /// # let file = pytree_std::checkpoint::Load::new().from_bytes(pytree_std::checkpoint::Save::new().to_bytes(&[7u8])?)?;
    /// assert_eq!(file.tensor("0").unwrap().data_in_memory(), Some(&[7u8][..]));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn data_in_memory(&self) -> Option<&'a [u8]> {
        match self.data {
            TensorData::Memory(bytes) => Some(bytes),
            TensorData::File { .. } => None,
        }
    }
    /// Copies the bytes into `dst`, which must be exactly
    /// [`num_bytes`](TensorView::num_bytes) long: from a file, one
    /// positioned read straight into it. A file that no longer holds them
    /// is an error naming the tensor.
    ///
    /// ```
    /// # let file = pytree_std::checkpoint::Load::new().from_bytes(pytree_std::checkpoint::Save::new().to_bytes(&[2.0f32])?)?;
    /// let mut dst = [0u8; 4];
    /// file.tensor("0").unwrap().read_into(&mut dst)?;
    /// assert_eq!(f32::from_le_bytes(dst), 2.0);
    /// assert!(file.tensor("0").unwrap().read_into(&mut [0u8; 3]).is_err());
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn read_into(&self, dst: &mut [u8]) -> Result<(), Error> {
        self.data.read_into(dst).map_err(|e| self.read_failed(e))
    }
    /// [`read_into`](TensorView::read_into) for memory not yet
    /// initialized: after `Ok`, every byte of `dst` is.
    pub(crate) fn read_into_uninit(&self, dst: &mut [MaybeUninit<u8>]) -> Result<(), Error> {
        self.data
            .read_into_uninit(dst)
            .map_err(|e| self.read_failed(e))
    }
    /// The error of a read of this tensor that failed.
    #[cold]
    fn read_failed(&self, why: String) -> Error {
        Error::custom(format!(
            "tensor `{}` ({}): {why}",
            self.name,
            self.signature()
        ))
    }
    /// Dtype and shape as a [`Signature`] (`f32[2,3]`).
    ///
    /// ```
    /// # let file = pytree_std::checkpoint::Load::new().from_bytes(pytree_std::checkpoint::Save::new().to_bytes(&[1u8])?)?;
    /// assert_eq!(file.tensor("0").unwrap().signature().to_string(), "u8[]");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn signature(&self) -> Signature {
        Signature::new(self.dtype, self.shape.to_vec())
    }
}

/// A leaf type that is stored as one tensor of a checkpoint: numeric
/// scalars (0-d tensors), and with their features ndarray arrays of any
/// rank and candle tensors. The trait lives here, beside the namespace
/// `Std`, so that it may be implemented for other crates' types (the
/// orphan rule); a leaf type of your own implements it too.
///
/// ```
/// use pytree_std::checkpoint::TensorLeaf;
/// use pytree_std::{DType, Signature};
/// assert_eq!(<f32 as TensorLeaf>::fixed_dtype(), Some(DType::F32));
/// assert_eq!(<f32 as TensorLeaf>::tensor_signature(&&2.0)?, Signature::scalar(DType::F32));
/// assert_eq!(&*<f32 as TensorLeaf>::tensor_bytes(&&2.0)?, 2.0f32.to_le_bytes());
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub trait TensorLeaf: Leaf<Std> {
    /// The dtype that every value of this type has (`f32`, `ArrayD<f32>`:
    /// `F32`), or `None` when each value says (a candle `Tensor`).
    ///
    /// ```
    /// use pytree_std::checkpoint::TensorLeaf;
    /// assert_eq!(<i64 as TensorLeaf>::fixed_dtype(), Some(pytree_std::DType::I64));
    /// ```
    fn fixed_dtype() -> Option<DType>;

    /// The dtype and shape the leaf is stored as (no device), or why it
    /// cannot be stored (a dtype the format has no name for).
    ///
    /// ```
    /// use pytree_std::checkpoint::TensorLeaf;
    /// assert_eq!(<u8 as TensorLeaf>::tensor_signature(&&3)?.to_string(), "u8[]");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn tensor_signature(leaf: &Self::Ref<'_>) -> Result<Signature, Error>;

    /// The leaf's data: little-endian elements in C order, exactly as many
    /// bytes as its signature says. Borrowed when the leaf's memory already
    /// is that (a contiguous array on a little-endian machine).
    ///
    /// ```
    /// use pytree_std::checkpoint::TensorLeaf;
    /// assert_eq!(&*<u16 as TensorLeaf>::tensor_bytes(&&0x0102)?, [0x02, 0x01]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn tensor_bytes<'a>(leaf: &'a Self::Ref<'_>) -> Result<Cow<'a, [u8]>, Error>;

    /// A leaf read from a tensor of the file. `like` is the template's leaf
    /// where there is one (a candle tensor is put on its device). The
    /// dtype was checked against [`fixed_dtype`](TensorLeaf::fixed_dtype)
    /// or the template; the shape against the template, if any, so a
    /// scalar checks that the tensor is 0-d. Read the data straight into
    /// the new leaf's memory with [`TensorView::read_into`] (one
    /// positioned read from a file), or take it with [`TensorView::data`];
    /// a failed read is an error to return.
    ///
    /// ```
    /// use pytree_std::checkpoint::{self, Checkpoint, Load, TensorLeaf};
    /// let file = Load::new().from_bytes(checkpoint::Save::new().to_bytes(&(2.5f64,))?)?;
    /// assert_eq!(<f64 as TensorLeaf>::from_tensor(&file.tensor("0").unwrap(), None)?, 2.5);
    /// assert!(<f32 as TensorLeaf>::from_tensor(&file.tensor("0").unwrap(), None).is_err());
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn from_tensor(tensor: &TensorView<'_>, like: Option<&Self::Ref<'_>>) -> Result<Self, Error>;

    /// Overwrites a lent leaf with the tensor, whose dtype and shape were
    /// checked equal to the leaf's (with [`TensorView::read_into`] where
    /// the leaf's memory is the tensor's bytes).
    ///
    /// ```
    /// use pytree_std::checkpoint::{self, Checkpoint, Load, TensorLeaf};
    /// let file = Load::new().from_bytes(checkpoint::Save::new().to_bytes(&(7i32,))?)?;
    /// let mut x = 0i32;
    /// <i32 as TensorLeaf>::copy_from_tensor(&mut x, &file.tensor("0").unwrap())?;
    /// assert_eq!(x, 7);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn copy_from_tensor(slot: Self::Mut<'_>, tensor: &TensorView<'_>) -> Result<(), Error>;

    /// The leaf `leaf` loaded from the tensor, as a value that replaces it
    /// in a tree rebuilt around its leaves (a
    /// [`load_into`](super::Checkpoint::load_into) that restores static fields): by
    /// default a new leaf read from the tensor with `leaf` as its template
    /// ([`from_tensor`](TensorLeaf::from_tensor)); a leaf that others hold
    /// (a candle `Var`) writes the tensor into itself and returns itself,
    /// so that its holders see the load.
    ///
    /// ```
    /// use pytree_std::checkpoint::{self, Checkpoint, Load, TensorLeaf};
    /// let file = Load::new().from_bytes(checkpoint::Save::new().to_bytes(&(7i32,))?)?;
    /// assert_eq!(<i32 as TensorLeaf>::reload(&&0, &file.tensor("0").unwrap())?, 7);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn reload(leaf: &Self::Ref<'_>, tensor: &TensorView<'_>) -> Result<Self, Error> {
        Self::from_tensor(tensor, Some(leaf))
    }

    /// The memory of a lent leaf as its little-endian bytes in C order,
    /// writable, when it is exactly that (a numeric scalar, an array
    /// contiguous in C order, on a little-endian machine), so that a part
    /// of a leaf can be written in place (a slice of a tensor received from
    /// another process). `None` when it is not (the default; a `bool`,
    /// whose bytes may not be any value; a candle tensor, behind its lock):
    /// then [`copy_from_tensor`](TensorLeaf::copy_from_tensor) writes a
    /// whole leaf.
    ///
    /// ```
    /// use pytree_std::checkpoint::TensorLeaf;
    /// let mut x = 1.0f32;
    /// if let Some(bytes) = <f32 as TensorLeaf>::tensor_bytes_mut(&mut &mut x) {
    ///     bytes.copy_from_slice(&2.0f32.to_le_bytes());
    /// }
    /// assert_eq!(x, 2.0);
    /// assert!(<bool as TensorLeaf>::tensor_bytes_mut(&mut &mut true).is_none());
    /// ```
    fn tensor_bytes_mut<'a>(slot: &'a mut Self::Mut<'_>) -> Option<&'a mut [u8]> {
        let _ = slot;
        None
    }

    /// An owned copy of a lent leaf (what a partial load keeps from the
    /// template for a tensor the file lacks).
    ///
    /// ```
    /// use pytree_std::checkpoint::TensorLeaf;
    /// assert_eq!(<f32 as TensorLeaf>::to_owned_leaf(&&1.5), 1.5);
    /// ```
    fn to_owned_leaf(leaf: &Self::Ref<'_>) -> Self;
}

mod sealed {
    pub trait Sealed {}
}

/// An element type of arrays that a checkpoint stores: `bool`, the
/// integers of 8 to 64 bits, `f32`, `f64` and, with the `half` feature,
/// `f16` and `bf16`. Sealed.
///
/// ```
/// use pytree_std::checkpoint::Element;
/// assert_eq!(<u16 as Element>::DTYPE, pytree_std::DType::U16);
/// ```
pub trait Element: Copy + 'static + sealed::Sealed {
    /// Its dtype.
    ///
    /// ```
    /// use pytree_std::checkpoint::Element;
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

/// The elements of `data` decoded one by one (a `bool`, which must be 0
/// or 1, or a big-endian machine).
fn decode_elements<A: Element>(data: &[u8]) -> Result<Vec<A>, Error> {
    if !data.len().is_multiple_of(size_of::<A>()) {
        return Err(bad_data::<A>(data.len()));
    }
    data.chunks_exact(size_of::<A>())
        .map(A::from_le)
        .collect::<Option<Vec<A>>>()
        .ok_or_else(|| bad_data::<A>(data.len()))
}

/// The elements of `tensor` in a new vector, read straight into it: one
/// positioned read from a file, or one copy from memory.
pub(crate) fn read_elements<A: Element>(tensor: &TensorView<'_>) -> Result<Vec<A>, Error> {
    let len = tensor.num_bytes();
    let size = size_of::<A>();
    if !len.is_multiple_of(size) {
        return Err(bad_data::<A>(len));
    }
    if !(cfg!(target_endian = "little") && A::ANY_BITS) {
        return decode_elements(&tensor.data()?);
    }
    let n = len / size;
    let mut out: Vec<A> = Vec::with_capacity(n);
    advise_huge_pages(out.as_mut_ptr().cast::<u8>(), len);
    let spare = out.spare_capacity_mut();
    // SAFETY: the spare capacity holds `n` elements, `n * size == len`
    // bytes of writable memory that `out` owns, viewed as bytes that may be
    // uninitialized (`MaybeUninit<u8>` has the layout of `u8`, and any
    // alignment suffices for it).
    let bytes = unsafe {
        std::slice::from_raw_parts_mut(spare.as_mut_ptr().cast::<MaybeUninit<u8>>(), len)
    };
    tensor.read_into_uninit(bytes)?;
    // SAFETY: `read_into_uninit` returned `Ok`, so all `len` bytes of the
    // first `n` elements are initialized; every bit pattern is a value of
    // `A` (`ANY_BITS`: integers, floats and half floats, which have no
    // padding and no invalid patterns) and the machine's byte order is the
    // file's.
    unsafe { out.set_len(n) };
    Ok(out)
}

/// Asks the kernel to back the fresh, untouched buffer at `ptr` (`len`
/// bytes, at least 4 MiB to bother) with transparent huge pages, so that
/// filling it takes one page fault per 2 MiB instead of one per 4 KiB (a
/// load of GPT-2 small's 498 MB spent most of its time in page faults);
/// NumPy advises its large arrays the same way. Only a hint: the kernel may
/// ignore it (`transparent_hugepage` set to `never`), and its result is
/// ignored. Linux only; elsewhere nothing.
#[allow(unused_variables)]
fn advise_huge_pages(ptr: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        if len < (4 << 20) {
            return;
        }
        let start = (ptr as usize).next_multiple_of(PAGE);
        let end = (ptr as usize + len) & !(PAGE - 1);
        if end > start {
            // SAFETY: `[start, end)` lies inside the allocation at `ptr`
            // of `len` bytes (rounded inwards to whole pages), which this
            // function's caller owns and has not handed out; MADV_HUGEPAGE
            // only changes how the kernel backs those pages (their
            // contents are kept), never what memory is mapped, so no
            // other object is affected. An error only means no advice.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
}

/// Writes the elements of `tensor` into `dst`, which holds exactly as
/// many elements (checked): one positioned read straight into it from a
/// file. Nothing is written if the bytes are not values (a `bool` other
/// than 0 or 1).
pub(crate) fn copy_elements<A: Element>(
    dst: &mut [A],
    tensor: &TensorView<'_>,
) -> Result<(), Error> {
    let len = tensor.num_bytes();
    if len != std::mem::size_of_val(dst) {
        return Err(bad_data::<A>(len));
    }
    if cfg!(target_endian = "little") && A::ANY_BITS {
        // SAFETY: `dst` is `len` bytes of initialized, writable memory
        // (checked just above), borrowed mutably for the slice's lifetime;
        // every bit pattern is a value of `A` (`ANY_BITS`) in the machine's
        // byte order, which is the file's, so any bytes written leave valid
        // values.
        let bytes = unsafe { std::slice::from_raw_parts_mut(dst.as_mut_ptr().cast::<u8>(), len) };
        return tensor.read_into(bytes);
    }
    let values = decode_elements::<A>(&tensor.data()?)?;
    dst.copy_from_slice(&values);
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
    if !(cfg!(target_endian = "little") && A::ANY_BITS) {
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

/// The error for a tensor of another rank than a scalar leaf's.
#[cold]
fn not_a_scalar(tensor: &TensorView<'_>) -> Error {
    Error::custom(format!(
        "tensor `{}`: expected a 0-d tensor (a scalar), found {}",
        tensor.name,
        tensor.signature()
    ))
}

/// The error for a tensor of another dtype than the leaf type's.
#[cold]
pub(crate) fn dtype_error(tensor: &TensorView<'_>, expected: DType) -> Error {
    Error::custom(format!(
        "tensor `{}`: expected dtype {expected}, found {}",
        tensor.name,
        tensor.signature()
    ))
}

macro_rules! scalar_leaves {
    ($($t:ty),* $(,)?) => {$(
        /// A scalar leaf is a 0-d tensor.
        impl TensorLeaf for $t {
            fn fixed_dtype() -> Option<DType> {
                Some(<$t as Element>::DTYPE)
            }
            fn tensor_signature(_leaf: &&$t) -> Result<Signature, Error> {
                Ok(Signature::scalar(<$t as Element>::DTYPE))
            }
            fn tensor_bytes<'a>(leaf: &'a &$t) -> Result<Cow<'a, [u8]>, Error> {
                Ok(element_bytes::<$t>(std::slice::from_ref(*leaf)))
            }
            fn from_tensor(tensor: &TensorView<'_>, _like: Option<&&$t>) -> Result<Self, Error> {
                if tensor.dtype != <$t as Element>::DTYPE {
                    return Err(dtype_error(tensor, <$t as Element>::DTYPE));
                }
                if !tensor.shape.is_empty() {
                    return Err(not_a_scalar(tensor));
                }
                let values = read_elements::<$t>(tensor)?;
                values.first().copied().ok_or_else(|| bad_data::<$t>(tensor.num_bytes()))
            }
            fn copy_from_tensor(slot: &mut $t, tensor: &TensorView<'_>) -> Result<(), Error> {
                if tensor.dtype != <$t as Element>::DTYPE {
                    return Err(dtype_error(tensor, <$t as Element>::DTYPE));
                }
                if !tensor.shape.is_empty() {
                    return Err(not_a_scalar(tensor));
                }
                copy_elements(std::slice::from_mut(slot), tensor)
            }
            fn to_owned_leaf(leaf: &&$t) -> Self {
                **leaf
            }
            fn tensor_bytes_mut<'a>(slot: &'a mut &mut $t) -> Option<&'a mut [u8]> {
                element_bytes_mut(std::slice::from_mut(&mut **slot))
            }
        }
    )*};
}

scalar_leaves!(bool, u8, u16, u32, u64, i8, i16, i32, i64, f32, f64);
#[cfg(feature = "half")]
scalar_leaves!(half::f16, half::bf16);
