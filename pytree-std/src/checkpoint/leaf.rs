//! How one leaf becomes a tensor of a file and back: [`TensorLeaf`],
//! what reading a checkpoint needs beyond a leaf's bytes
//! ([`ByteLeaf`]), implemented here for the numeric scalars and beside
//! their [`ByteLeaf`] impls (the file's fast paths) for ndarray arrays,
//! candle tensors, burn tensors and nalgebra matrices; and
//! [`TensorView`], a tensor of a file.

use std::borrow::Cow;
use std::mem::MaybeUninit;

use pytree_core::{DType, Error, ErrorKind, Signature};

use super::storage::TensorData;
use crate::leaf_bytes::{
    bad_data, check_scalar, check_size, copies_as_bytes, decode_elements, element_bytes_mut,
    new_elements, ByteLeaf, ByteTensor, Element,
};

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
    /// from a buffer of one's own (code that needs no name and no file
    /// takes a [`ByteTensor`] to [`ByteLeaf`] instead). An error unless
    /// `data` is exactly `shape`'s elements of `dtype` (a `bool` byte's
    /// value is checked where it is read).
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
        check_size(dtype, shape, data.len())
            .map_err(|why| Error::custom(format!("tensor `{name}`: {why}")))?;
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

/// A leaf type that is stored as one tensor of a checkpoint: what reading
/// a file needs beyond [`ByteLeaf`] (whose signature and bytes are what a
/// save writes). Every method has a default built on [`ByteLeaf`], so a
/// leaf type of your own implements [`ByteLeaf`] and then
/// `impl TensorLeaf for X {}`; the built-in impls (numeric scalars, and
/// with their features ndarray arrays, candle tensors, burn tensors and
/// nalgebra matrices) override them to read a file straight into a new
/// leaf's memory.
///
/// ```
/// use std::borrow::Cow;
/// use pytree_std::checkpoint::{self, Checkpoint, Load, TensorLeaf};
/// use pytree_std::{ByteLeaf, ByteTensor, DType, Error, Signature};
///
/// /// A leaf type of one's own: a 3-vector of `f32`.
/// #[derive(Clone, Copy, Debug, PartialEq)]
/// struct Vec3([f32; 3]);
/// pytree_std::impl_leaf!(pytree_std::Std => Vec3);
///
/// impl ByteLeaf for Vec3 {
///     fn fixed_dtype() -> Option<DType> { Some(DType::F32) }
///     fn signature(_: &&Vec3) -> Result<Signature, Error> { Ok(Signature::new(DType::F32, vec![3])) }
///     fn bytes<'a>(v: &'a &Vec3) -> Result<Cow<'a, [u8]>, Error> {
///         Ok(Cow::Owned(v.0.iter().flat_map(|x| x.to_le_bytes()).collect()))
///     }
///     fn write_bytes(slot: &mut Vec3, t: &ByteTensor<'_>) -> Result<(), Error> {
///         *slot = Self::from_bytes(t, None)?;
///         Ok(())
///     }
///     fn from_bytes(t: &ByteTensor<'_>, _: Option<&&Vec3>) -> Result<Vec3, Error> {
///         if t.signature() != Signature::new(DType::F32, vec![3]) {
///             return Err(Error::custom(format!("expected f32[3], found {}", t.signature())));
///         }
///         let x = |i: usize| f32::from_le_bytes(t.data()[4 * i..4 * i + 4].try_into().unwrap());
///         Ok(Vec3([x(0), x(1), x(2)]))
///     }
///     fn to_owned_leaf(v: &&Vec3) -> Vec3 { **v }
/// }
/// impl TensorLeaf for Vec3 {}
///
/// let file = Load::new().from_bytes(checkpoint::Save::new().to_bytes(&vec![Vec3([1.0, 2.0, 3.0])])?)?;
/// assert_eq!(file.load::<Vec<Vec3>>()?.0, [Vec3([1.0, 2.0, 3.0])]);
/// let mut into = vec![Vec3([0.0; 3])];
/// file.load_into(&mut into)?;
/// assert_eq!(into[0], Vec3([1.0, 2.0, 3.0]));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub trait TensorLeaf: ByteLeaf {
    /// A leaf read from a tensor of the file. `like` is the template's leaf
    /// where there is one (a candle tensor is put on its device). The
    /// dtype was checked against [`fixed_dtype`](ByteLeaf::fixed_dtype)
    /// or the template; the shape against the template, if any, so a
    /// scalar checks that the tensor is 0-d. By default the tensor's bytes
    /// ([`TensorView::data`]) to [`ByteLeaf::from_bytes`], its error
    /// naming the tensor; an impl may read the data straight into the new
    /// leaf's memory with [`TensorView::read_into`] (one positioned read
    /// from a file). A failed read is an error to return.
    ///
    /// ```
    /// use pytree_std::checkpoint::{self, Checkpoint, Load, TensorLeaf};
    /// let file = Load::new().from_bytes(checkpoint::Save::new().to_bytes(&(2.5f64,))?)?;
    /// assert_eq!(<f64 as TensorLeaf>::from_tensor(&file.tensor("0").unwrap(), None)?, 2.5);
    /// assert!(<f32 as TensorLeaf>::from_tensor(&file.tensor("0").unwrap(), None).is_err());
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn from_tensor(tensor: &TensorView<'_>, like: Option<&Self::Ref<'_>>) -> Result<Self, Error> {
        let data = tensor.data()?;
        let bytes = ByteTensor::new(tensor.dtype, tensor.shape, &data)?;
        Self::from_bytes(&bytes, like).map_err(|e| tensor.named(e))
    }

    /// Overwrites a lent leaf with the tensor, whose dtype and shape the
    /// caller checked equal to the leaf's (a checkpoint load does). By
    /// default one read straight into the leaf's memory where
    /// [`ByteLeaf::bytes_mut`] lends it (the dtype and the byte count
    /// checked, the shape trusted), else the tensor's bytes to
    /// [`ByteLeaf::write_bytes`] (which checks both), its error naming the
    /// tensor.
    ///
    /// ```
    /// use pytree_std::checkpoint::{self, Checkpoint, Load, TensorLeaf};
    /// let file = Load::new().from_bytes(checkpoint::Save::new().to_bytes(&(7i32,))?)?;
    /// let mut x = 0i32;
    /// <i32 as TensorLeaf>::copy_from_tensor(&mut x, &file.tensor("0").unwrap())?;
    /// assert_eq!(x, 7);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn copy_from_tensor(mut slot: Self::Mut<'_>, tensor: &TensorView<'_>) -> Result<(), Error> {
        if Self::fixed_dtype() == Some(tensor.dtype) {
            if let Some(mem) = Self::bytes_mut(&mut slot) {
                if mem.len() == tensor.num_bytes() {
                    return tensor.read_into(mem);
                }
            }
        }
        let data = tensor.data()?;
        let bytes = ByteTensor::new(tensor.dtype, tensor.shape, &data)?;
        Self::write_bytes(slot, &bytes).map_err(|e| tensor.named(e))
    }

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
}

impl TensorView<'_> {
    /// `e` (an error of [`ByteLeaf`], which knows no names) naming this
    /// tensor: ``tensor `x`: expected f32[2], found f32[3]``.
    pub(crate) fn named(&self, e: Error) -> Error {
        match e.kind() {
            ErrorKind::Custom(message) if e.path().is_empty() => {
                Error::custom(format!("tensor `{}`: {message}", self.name))
            }
            _ => e,
        }
    }
}

/// The elements of `tensor` in a new vector, read straight into it: one
/// positioned read from a file, or one copy from memory.
pub(crate) fn read_elements<A: Element>(tensor: &TensorView<'_>) -> Result<Vec<A>, Error> {
    if !copies_as_bytes::<A>() {
        return decode_elements(&tensor.data()?);
    }
    new_elements(tensor.num_bytes(), |dst| {
        advise_huge_pages(dst.as_mut_ptr().cast::<u8>(), dst.len());
        tensor.read_into_uninit(dst)
    })
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
    match element_bytes_mut(dst) {
        Some(bytes) => tensor.read_into(bytes),
        None => {
            dst.copy_from_slice(&decode_elements::<A>(&tensor.data()?)?);
            Ok(())
        }
    }
}

macro_rules! scalar_leaves {
    ($($t:ty),* $(,)?) => {$(
        /// A scalar leaf is a 0-d tensor (checked: the shape is not
        /// trusted), read straight into the new leaf or the leaf in place.
        impl TensorLeaf for $t {
            fn from_tensor(tensor: &TensorView<'_>, _like: Option<&&$t>) -> Result<Self, Error> {
                check_scalar::<$t>(tensor.dtype, tensor.shape).map_err(|e| tensor.named(e))?;
                let values = read_elements::<$t>(tensor)?;
                values.first().copied().ok_or_else(|| bad_data::<$t>(tensor.num_bytes()))
            }
            fn copy_from_tensor(slot: &mut $t, tensor: &TensorView<'_>) -> Result<(), Error> {
                check_scalar::<$t>(tensor.dtype, tensor.shape).map_err(|e| tensor.named(e))?;
                copy_elements(std::slice::from_mut(slot), tensor)
            }
        }
    )*};
}

scalar_leaves!(bool, u8, u16, u32, u64, i8, i16, i32, i64, f32, f64);
#[cfg(feature = "half")]
scalar_leaves!(half::f16, half::bf16);
