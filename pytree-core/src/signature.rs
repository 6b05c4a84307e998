//! What a leaf says about itself: its element type ([`DType`]), shape and
//! device, as JAX's `ShapeDtypeStruct`. Array and tensor leaves describe
//! themselves; scalars are 0-d; leaves with no numeric meaning (a `String`)
//! say nothing. Multi-tree operations compare signatures in their
//! structure check, so a shape mismatch is an error at its key path.

use alloc::borrow::Cow;
use alloc::vec::Vec;
use core::any::TypeId;
use core::fmt;

/// The element type of a leaf.
///
/// ```
/// use pytree_std::DType;
/// assert_eq!(DType::of::<f32>(), Some(DType::F32));
/// assert_eq!(DType::F32.to_string(), "f32");
/// assert_eq!(DType::BF16.size_in_bytes(), Some(2));
/// assert_eq!(DType::of::<String>(), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum DType {
    /// `bool`.
    Bool,
    /// `u8`.
    U8,
    /// `u16`.
    U16,
    /// `u32`.
    U32,
    /// `u64`.
    U64,
    /// `i8`.
    I8,
    /// `i16`.
    I16,
    /// `i32`.
    I32,
    /// `i64`.
    I64,
    /// IEEE half precision (`half::f16`).
    F16,
    /// bfloat16 (`half::bf16`).
    BF16,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// Any other element type, by name.
    Other(&'static str),
}

impl DType {
    /// The dtype of a Rust primitive element type (`bool`, the integers of 8
    /// to 64 bits, `f32`, `f64`); `None` for any other type. `pytree-std`'s
    /// `half` feature adds `f16` and `bf16` in its own lookup.
    ///
    /// ```
    /// assert_eq!(pytree_std::DType::of::<i64>(), Some(pytree_std::DType::I64));
    /// ```
    pub fn of<A: 'static>() -> Option<DType> {
        let id = TypeId::of::<A>();
        let table: [(TypeId, DType); 11] = [
            (TypeId::of::<f32>(), DType::F32),
            (TypeId::of::<f64>(), DType::F64),
            (TypeId::of::<bool>(), DType::Bool),
            (TypeId::of::<u8>(), DType::U8),
            (TypeId::of::<u16>(), DType::U16),
            (TypeId::of::<u32>(), DType::U32),
            (TypeId::of::<u64>(), DType::U64),
            (TypeId::of::<i8>(), DType::I8),
            (TypeId::of::<i16>(), DType::I16),
            (TypeId::of::<i32>(), DType::I32),
            (TypeId::of::<i64>(), DType::I64),
        ];
        table.iter().find(|(t, _)| *t == id).map(|(_, d)| *d)
    }

    /// The short name (`"f32"`, `"bf16"`, ...), as JAX and PyTorch print it.
    ///
    /// ```
    /// assert_eq!(pytree_std::DType::U8.name(), "u8");
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::U8 => "u8",
            DType::U16 => "u16",
            DType::U32 => "u32",
            DType::U64 => "u64",
            DType::I8 => "i8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::Other(name) => name,
        }
    }

    /// Bytes per element, for the dtypes with a fixed size.
    ///
    /// ```
    /// assert_eq!(pytree_std::DType::F64.size_in_bytes(), Some(8));
    /// ```
    pub fn size_in_bytes(&self) -> Option<usize> {
        Some(match self {
            DType::Bool | DType::U8 | DType::I8 => 1,
            DType::U16 | DType::I16 | DType::F16 | DType::BF16 => 2,
            DType::U32 | DType::I32 | DType::F32 => 4,
            DType::U64 | DType::I64 | DType::F64 => 8,
            DType::Other(_) => return None,
        })
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A leaf's element type, shape and (for tensors that live on a device)
/// device: JAX's `ShapeDtypeStruct`. Displays as JAX prints avals,
/// `f32[3,4]`, with `@device` after it when there is one.
///
/// ```
/// use pytree_std::{DType, Signature};
/// let s = Signature::new(DType::F32, vec![3, 4]);
/// assert_eq!(s.to_string(), "f32[3,4]");
/// assert_eq!(s.num_elements(), 12);
/// assert_eq!(s.size_in_bytes(), Some(48));
/// assert_eq!(Signature::scalar(DType::F64).to_string(), "f64[]");
/// assert_eq!(Signature::new(DType::F16, vec![2]).with_device("cuda:0").to_string(), "f16[2]@cuda:0");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Signature {
    dtype: DType,
    shape: Vec<usize>,
    device: Option<Cow<'static, str>>,
}

impl Signature {
    /// An array of this element type and shape (dimensions outermost first).
    ///
    /// ```
    /// let s = pytree_std::Signature::new(pytree_std::DType::U8, vec![2, 2]);
    /// assert_eq!(s.shape(), [2, 2]);
    /// ```
    pub fn new(dtype: DType, shape: Vec<usize>) -> Self {
        Signature {
            dtype,
            shape,
            device: None,
        }
    }

    /// A scalar: a 0-d array.
    ///
    /// ```
    /// let s = pytree_std::Signature::scalar(pytree_std::DType::F32);
    /// assert!(s.shape().is_empty());
    /// assert_eq!(s.num_elements(), 1);
    /// ```
    pub fn scalar(dtype: DType) -> Self {
        Signature::new(dtype, Vec::new())
    }

    /// The same signature, on this device (`"cpu"`, `"cuda:0"`, ...).
    ///
    /// ```
    /// let s = pytree_std::Signature::scalar(pytree_std::DType::F32).with_device("cpu");
    /// assert_eq!(s.device(), Some("cpu"));
    /// ```
    #[must_use]
    pub fn with_device(mut self, device: impl Into<Cow<'static, str>>) -> Self {
        self.device = Some(device.into());
        self
    }

    /// The element type.
    ///
    /// ```
    /// let s = pytree_std::Signature::scalar(pytree_std::DType::I32);
    /// assert_eq!(s.dtype(), pytree_std::DType::I32);
    /// ```
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The dimensions, outermost first (empty for a scalar).
    ///
    /// ```
    /// let s = pytree_std::Signature::new(pytree_std::DType::F32, vec![5]);
    /// assert_eq!(s.shape(), [5]);
    /// ```
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The device, if the leaf says.
    ///
    /// ```
    /// assert_eq!(pytree_std::Signature::scalar(pytree_std::DType::F32).device(), None);
    /// ```
    pub fn device(&self) -> Option<&str> {
        self.device.as_deref()
    }

    /// How many elements: the product of the dimensions (1 for a scalar),
    /// saturating at `usize::MAX`.
    ///
    /// ```
    /// let s = pytree_std::Signature::new(pytree_std::DType::F32, vec![2, 0]);
    /// assert_eq!(s.num_elements(), 0);
    /// ```
    pub fn num_elements(&self) -> usize {
        self.shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .unwrap_or(usize::MAX)
    }

    /// Bytes of data: elements times the dtype's size (`None` for dtypes
    /// of no fixed size or on overflow).
    ///
    /// ```
    /// let s = pytree_std::Signature::new(pytree_std::DType::BF16, vec![10]);
    /// assert_eq!(s.size_in_bytes(), Some(20));
    /// ```
    pub fn size_in_bytes(&self) -> Option<usize> {
        let n = self
            .shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))?;
        n.checked_mul(self.dtype.size_in_bytes()?)
    }
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[", self.dtype)?;
        for (i, d) in self.shape.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")?;
        if let Some(device) = &self.device {
            write!(f, "@{device}")?;
        }
        Ok(())
    }
}
