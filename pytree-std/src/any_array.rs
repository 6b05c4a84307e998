//! [`AnyArray`]: an ndarray array whose element type is a value, not a
//! type parameter (feature `ndarray`), so that one tree holds arrays of
//! several dtypes: f32 weights beside an i64 `position_ids` buffer and a
//! bool mask, as a Hugging Face model does.
//!
//! A tree has one leaf type. With typed arrays (`Array2<f32>`) that type
//! is `ArrayD<f32>`, and a field `Array2<i64>` beside it is a type error
//! (its leaf is `ArrayD<i64>`). Every field of a mixed-dtype model is
//! therefore an `AnyArray`; its data is still reached typed, through
//! [`AnyArray::view`] / [`AnyArray::view_mut`] /
//! [`AnyArray::into_typed`] and the `TryFrom` / `From` conversions.
//!
//! As a leaf, `AnyArray` is lent as views ([`AnyArrayView`],
//! [`AnyArrayViewMut`]): the walks by mutable reference can change the
//! elements, never the dtype or the shape. Its signature is its dtype and
//! shape, so multi-tree operations refuse arrays that differ in either.
//! Checkpoints save and load it with its own dtype; pytree-optim's
//! optimizers update its float variants and leave integer and bool ones
//! alone.
//!
//! ```
//! use pytree_std::ndarray::{array, Array2};
//! use pytree_std::{AnyArray, PyTree};
//!
//! #[derive(PyTree, Clone, Debug, PartialEq)]
//! struct Embeddings {
//!     word: AnyArray,          // f32
//!     position_ids: AnyArray,  // i64
//! }
//! let e = Embeddings {
//!     word: array![[0.5f32, 1.0], [2.0, 3.0]].into(),
//!     position_ids: array![[0i64, 1]].into(),
//! };
//! let (leaves, def) = pytree_std::flatten(e.clone());
//! assert_eq!(leaves.len(), 2);
//! let sigs: Vec<String> = pytree_std::leaves(&e).iter()
//!     .map(|v| v.signature().to_string()).collect();
//! assert_eq!(sigs, ["f32[2,2]", "i64[1,2]"]);
//! // Typed access.
//! let ids: Array2<i64> = e.position_ids.clone().try_into()?;
//! assert_eq!(ids, array![[0, 1]]);
//! assert!(e.word.view::<f32>().is_some() && e.word.view::<i64>().is_none());
//! assert_eq!(pytree_std::unflatten::<Embeddings>(&def, leaves)?, e);
//! # Ok::<(), pytree_std::Error>(())
//! ```

use half::{bf16, f16};
use ndarray::{ArrayD, ArrayViewD, ArrayViewMutD, Dimension, Zip};
use pytree_core::{
    DType, Error, Flatten, Leaf, Signature, Sink, Source, Unflatten, Visit, VisitMut,
};

use crate::Std;

mod sealed {
    pub trait Sealed {}
}

macro_rules! any_array {
    ($($variant:ident($t:ty) => $dtype:expr),* $(,)?) => {
        /// An ndarray array of any rank whose element type is one of
        /// f32, f64, f16, bf16, i64, i32, u8, bool; see the
        /// [module docs](self).
        ///
        /// ```
        /// use pytree_std::ndarray::array;
        /// use pytree_std::AnyArray;
        /// let a = AnyArray::from(array![true, false]);
        /// assert_eq!(a.signature().to_string(), "bool[2]");
        /// assert!(!a.is_float());
        /// ```
        #[derive(Clone, Debug, PartialEq)]
        pub enum AnyArray {
            $(
                #[doc = concat!("An array of `", stringify!($t), "`.")]
                $variant(ArrayD<$t>),
            )*
        }

        /// A shared view of an [`AnyArray`] (how the walks by reference
        /// lend it).
        ///
        /// ```
        /// use pytree_std::ndarray::array;
        /// use pytree_std::{AnyArray, AnyArrayView};
        /// let a = AnyArray::from(array![1i32, 2]);
        /// let v: AnyArrayView<'_> = a.lend();
        /// assert_eq!(v.shape(), [2]);
        /// assert_eq!(v.to_owned(), a);
        /// ```
        #[derive(Clone, Debug, PartialEq)]
        pub enum AnyArrayView<'a> {
            $(
                #[doc = concat!("A view of `", stringify!($t), "`s.")]
                $variant(ArrayViewD<'a, $t>),
            )*
        }

        /// A mutable view of an [`AnyArray`] (how the walks by mutable
        /// reference lend it): elements can change, dtype and shape
        /// cannot.
        ///
        /// ```
        /// use pytree_std::ndarray::array;
        /// use pytree_std::{AnyArray, AnyArrayViewMut};
        /// let mut a = AnyArray::from(array![1.0f32, 2.0]);
        /// if let AnyArrayViewMut::F32(mut v) = a.lend_mut() { v *= 2.0; }
        /// assert_eq!(a, AnyArray::from(array![2.0f32, 4.0]));
        /// ```
        #[derive(Debug)]
        pub enum AnyArrayViewMut<'a> {
            $(
                #[doc = concat!("A mutable view of `", stringify!($t), "`s.")]
                $variant(ArrayViewMutD<'a, $t>),
            )*
        }

        impl AnyArray {
            /// The element type.
            ///
            /// ```
            /// # use pytree_std::{AnyArray, DType, ndarray::array};
            /// assert_eq!(AnyArray::from(array![1u8]).dtype(), DType::U8);
            /// ```
            pub fn dtype(&self) -> DType {
                match self { $(AnyArray::$variant(_) => $dtype,)* }
            }

            /// The shape.
            ///
            /// ```
            /// # use pytree_std::{AnyArray, ndarray::array};
            /// assert_eq!(AnyArray::from(array![[1u8, 2]]).shape(), [1, 2]);
            /// ```
            pub fn shape(&self) -> &[usize] {
                match self { $(AnyArray::$variant(a) => a.shape(),)* }
            }

            /// A shared view (the leaf's [`Leaf::lend`]).
            ///
            /// ```
            /// # use pytree_std::{AnyArray, ndarray::array};
            /// assert_eq!(AnyArray::from(array![1u8]).lend().dtype(), pytree_std::DType::U8);
            /// ```
            pub fn lend(&self) -> AnyArrayView<'_> {
                match self { $(AnyArray::$variant(a) => AnyArrayView::$variant(a.view()),)* }
            }

            /// A mutable view (the leaf's [`Leaf::lend_mut`]).
            ///
            /// ```
            /// # use pytree_std::{AnyArray, ndarray::array};
            /// let mut a = AnyArray::from(array![1u8]);
            /// assert_eq!(a.lend_mut().shape(), [1]);
            /// ```
            pub fn lend_mut(&mut self) -> AnyArrayViewMut<'_> {
                match self { $(AnyArray::$variant(a) => AnyArrayViewMut::$variant(a.view_mut()),)* }
            }
        }

        impl AnyArrayView<'_> {
            /// The element type.
            ///
            /// ```
            /// # use pytree_std::{AnyArray, DType, ndarray::array};
            /// assert_eq!(AnyArray::from(array![1i64]).lend().dtype(), DType::I64);
            /// ```
            pub fn dtype(&self) -> DType {
                match self { $(AnyArrayView::$variant(_) => $dtype,)* }
            }

            /// The shape.
            ///
            /// ```
            /// # use pytree_std::{AnyArray, ndarray::array};
            /// assert_eq!(AnyArray::from(array![1i64, 2]).lend().shape(), [2]);
            /// ```
            pub fn shape(&self) -> &[usize] {
                match self { $(AnyArrayView::$variant(a) => a.shape(),)* }
            }

            /// The data copied into an owned array.
            ///
            /// ```
            /// # use pytree_std::{AnyArray, ndarray::array};
            /// let a = AnyArray::from(array![1i64, 2]);
            /// assert_eq!(a.lend().to_owned(), a);
            /// ```
            pub fn to_owned(&self) -> AnyArray {
                match self { $(AnyArrayView::$variant(a) => AnyArray::$variant(a.to_owned()),)* }
            }
        }

        impl AnyArrayViewMut<'_> {
            /// The element type.
            ///
            /// ```
            /// # use pytree_std::{AnyArray, DType, ndarray::array};
            /// assert_eq!(AnyArray::from(array![true]).lend_mut().dtype(), DType::Bool);
            /// ```
            pub fn dtype(&self) -> DType {
                match self { $(AnyArrayViewMut::$variant(_) => $dtype,)* }
            }

            /// The shape.
            ///
            /// ```
            /// # use pytree_std::{AnyArray, ndarray::array};
            /// assert_eq!(AnyArray::from(array![true]).lend_mut().shape(), [1]);
            /// ```
            pub fn shape(&self) -> &[usize] {
                match self { $(AnyArrayViewMut::$variant(a) => a.shape(),)* }
            }
        }

        $(
            impl sealed::Sealed for $t {}
            impl AnyElement for $t {
                const DTYPE: DType = $dtype;
                #[inline]
                fn into_any(a: ArrayD<$t>) -> AnyArray {
                    AnyArray::$variant(a)
                }
                #[inline]
                fn from_any(a: AnyArray) -> Result<ArrayD<$t>, AnyArray> {
                    match a {
                        AnyArray::$variant(a) => Ok(a),
                        other => Err(other),
                    }
                }
                #[inline]
                fn view_of<'a>(v: AnyArrayView<'a>) -> Option<ArrayViewD<'a, $t>> {
                    match v {
                        AnyArrayView::$variant(a) => Some(a),
                        _ => None,
                    }
                }
                #[inline]
                fn view_mut_of<'a>(v: AnyArrayViewMut<'a>) -> Option<ArrayViewMutD<'a, $t>> {
                    match v {
                        AnyArrayViewMut::$variant(a) => Some(a),
                        _ => None,
                    }
                }
            }
        )*

        /// Swaps the elements of `value` into `slot` when both have the
        /// same dtype and shape (no copy); `None` otherwise.
        fn swap_into(slot: AnyArrayViewMut<'_>, value: &mut AnyArray) -> Option<()> {
            match (slot, value) {
                $(
                    (AnyArrayViewMut::$variant(mut s), AnyArray::$variant(v)) if s.shape() == v.shape() => {
                        Zip::from(&mut s).and(v).for_each(std::mem::swap);
                        Some(())
                    }
                )*
                _ => None,
            }
        }
    };
}

any_array!(
    F32(f32) => DType::F32,
    F64(f64) => DType::F64,
    F16(f16) => DType::F16,
    BF16(bf16) => DType::BF16,
    I64(i64) => DType::I64,
    I32(i32) => DType::I32,
    U8(u8) => DType::U8,
    Bool(bool) => DType::Bool,
);

/// The element types an [`AnyArray`] can hold (sealed): f32, f64, f16,
/// bf16, i64, i32, u8, bool.
///
/// ```
/// use pytree_std::{AnyElement, DType};
/// assert_eq!(<i64 as AnyElement>::DTYPE, DType::I64);
/// ```
pub trait AnyElement: Copy + 'static + sealed::Sealed {
    /// The dtype.
    const DTYPE: DType;
    /// Wraps an array of this type.
    fn into_any(a: ArrayD<Self>) -> AnyArray;
    /// The array, if it holds this type; else itself back.
    fn from_any(a: AnyArray) -> Result<ArrayD<Self>, AnyArray>;
    /// The typed view, if the view holds this type.
    fn view_of(v: AnyArrayView<'_>) -> Option<ArrayViewD<'_, Self>>;
    /// The typed mutable view, if the view holds this type.
    fn view_mut_of(v: AnyArrayViewMut<'_>) -> Option<ArrayViewMutD<'_, Self>>;
}

impl AnyArray {
    /// Dtype and shape (`f32[2,3]`), as the leaf's signature.
    ///
    /// ```
    /// # use pytree_std::{AnyArray, ndarray::array};
    /// assert_eq!(AnyArray::from(array![[1.0f64]]).signature().to_string(), "f64[1,1]");
    /// ```
    pub fn signature(&self) -> Signature {
        Signature::new(self.dtype(), self.shape().to_vec())
    }

    /// True for the float dtypes (f32, f64, f16, bf16).
    ///
    /// ```
    /// # use pytree_std::{AnyArray, ndarray::array};
    /// assert!(AnyArray::from(array![1.0f32]).is_float());
    /// assert!(!AnyArray::from(array![1i64]).is_float());
    /// ```
    pub fn is_float(&self) -> bool {
        is_float(self.dtype())
    }

    /// The data as `A`s, if it holds `A`s.
    ///
    /// ```
    /// # use pytree_std::{AnyArray, ndarray::array};
    /// let a = AnyArray::from(array![1i64, 2]);
    /// assert_eq!(a.view::<i64>().unwrap().sum(), 3);
    /// assert!(a.view::<f32>().is_none());
    /// ```
    pub fn view<A: AnyElement>(&self) -> Option<ArrayViewD<'_, A>> {
        A::view_of(self.lend())
    }

    /// The data as `A`s, mutably, if it holds `A`s.
    ///
    /// ```
    /// # use pytree_std::{AnyArray, ndarray::array};
    /// let mut a = AnyArray::from(array![1i64, 2]);
    /// a.view_mut::<i64>().unwrap()[[0]] = 5;
    /// assert_eq!(a, AnyArray::from(array![5i64, 2]));
    /// ```
    pub fn view_mut<A: AnyElement>(&mut self) -> Option<ArrayViewMutD<'_, A>> {
        A::view_mut_of(self.lend_mut())
    }

    /// The array of `A`s, of rank `D`; an error naming both signatures
    /// if it holds another dtype or rank.
    ///
    /// ```
    /// use pytree_std::ndarray::{array, Array1, Array2};
    /// use pytree_std::AnyArray;
    /// let a = AnyArray::from(array![1i64, 2]);
    /// let ids: Array1<i64> = a.clone().into_typed()?;
    /// assert_eq!(ids, array![1, 2]);
    /// let err = a.into_typed::<f32, pytree_std::ndarray::Ix2>().unwrap_err();
    /// assert_eq!(err.to_string(), "at <root>: array type mismatch: expected a 2-d array of f32, found i64[2]");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn into_typed<A: AnyElement, D: Dimension>(self) -> Result<ndarray::Array<A, D>, Error> {
        let rank_ok = D::NDIM.is_none_or(|n| n == self.shape().len());
        let expected = match D::NDIM {
            Some(n) => format!("a {n}-d array of {}", A::DTYPE),
            None => format!("an array of {}", A::DTYPE),
        };
        let found = self.signature();
        let mismatch = || {
            Error::custom(format!(
                "array type mismatch: expected {expected}, found {found}"
            ))
        };
        if !rank_ok {
            return Err(mismatch());
        }
        let a = A::from_any(self).map_err(|_| mismatch())?;
        a.into_dimensionality::<D>().map_err(|_| mismatch())
    }
}

impl AnyArrayView<'_> {
    /// Dtype and shape, as [`AnyArray::signature`].
    ///
    /// ```
    /// # use pytree_std::{AnyArray, ndarray::array};
    /// assert_eq!(AnyArray::from(array![1u8]).lend().signature().to_string(), "u8[1]");
    /// ```
    pub fn signature(&self) -> Signature {
        Signature::new(self.dtype(), self.shape().to_vec())
    }
}

/// Whether a dtype is one of the floats.
fn is_float(d: DType) -> bool {
    matches!(d, DType::F32 | DType::F64 | DType::F16 | DType::BF16)
}

/// Any typed array converts into an `AnyArray` (no copy).
///
/// ```
/// use pytree_std::ndarray::{array, ArcArray1};
/// use pytree_std::AnyArray;
/// assert_eq!(AnyArray::from(array![[1u8]]).shape(), [1, 1]);
/// ```
impl<A: AnyElement, D: Dimension> From<ndarray::Array<A, D>> for AnyArray {
    fn from(a: ndarray::Array<A, D>) -> Self {
        A::into_any(a.into_dyn())
    }
}

/// An `AnyArray` converts back into the typed array it holds; another
/// dtype or rank is an error (see [`AnyArray::into_typed`]).
///
/// ```
/// use pytree_std::ndarray::{array, Array2};
/// use pytree_std::AnyArray;
/// let a: Array2<f32> = AnyArray::from(array![[1.0f32]]).try_into()?;
/// assert_eq!(a, array![[1.0]]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
impl<A: AnyElement, D: Dimension> TryFrom<AnyArray> for ndarray::Array<A, D> {
    type Error = Error;
    fn try_from(a: AnyArray) -> Result<Self, Error> {
        a.into_typed()
    }
}

/// `AnyArray` is a leaf lent as views; its signature is its dtype and
/// shape; `assign` refuses another dtype or shape, and nothing changes.
///
/// ```
/// use pytree_std::ndarray::array;
/// use pytree_std::{AnyArray, Leaf, Std};
/// let mut a = AnyArray::from(array![1.0f32, 2.0]);
/// let old = <AnyArray as Leaf<Std>>::assign(a.lend_mut(), array![3.0f32, 4.0].into())?;
/// assert_eq!(old, AnyArray::from(array![1.0f32, 2.0]));
/// let err = <AnyArray as Leaf<Std>>::assign(a.lend_mut(), array![3i64, 4].into()).unwrap_err();
/// assert_eq!(err.to_string(), "at <root>: leaf signature mismatch: expected f32[2], found i64[2]");
/// assert_eq!(a, AnyArray::from(array![3.0f32, 4.0]));
/// # Ok::<(), pytree_std::Error>(())
/// ```
impl Leaf<Std> for AnyArray {
    type Ref<'a> = AnyArrayView<'a>;
    type Mut<'a> = AnyArrayViewMut<'a>;
    const HAS_SHAPE: bool = true;

    #[inline]
    fn lend(&self) -> AnyArrayView<'_> {
        AnyArray::lend(self)
    }
    #[inline]
    fn lend_mut(&mut self) -> AnyArrayViewMut<'_> {
        AnyArray::lend_mut(self)
    }
    fn signature(leaf: &AnyArrayView<'_>) -> Option<Signature> {
        Some(leaf.signature())
    }
    fn assign(slot: AnyArrayViewMut<'_>, mut value: Self) -> Result<Self, Error> {
        let expected = Signature::new(slot.dtype(), slot.shape().to_vec());
        match swap_into(slot, &mut value) {
            Some(()) => Ok(value),
            None => Err(crate::impls::signature_error(expected, value.signature())),
        }
    }
}

/// Two arrays with the same dtype and shape.
fn same(a: &AnyArray, b: &AnyArray) -> bool {
    a.dtype() == b.dtype() && a.shape() == b.shape()
}

/// An `AnyArray` is one leaf.
///
/// ```
/// use pytree_std::ndarray::array;
/// use pytree_std::AnyArray;
/// let t = (AnyArray::from(array![1.0f32]), AnyArray::from(array![1i64]));
/// assert_eq!(pytree_std::structure(&t).num_leaves(), 2);
/// // Trees whose arrays differ in dtype do not zip.
/// let u = (AnyArray::from(array![1.0f32]), AnyArray::from(array![1i32]));
/// let err = pytree_std::multi::map2(&t, &u, |a, _| a.to_owned()).unwrap_err();
/// assert_eq!(err.to_string(), "tree 1 at [1]: leaf signature mismatch: expected i64[1], found i32[1]");
/// ```
impl Flatten<Std> for AnyArray {
    type Leaf = AnyArray;

    #[inline]
    fn leaf_count_hint(&self) -> usize {
        1
    }
    #[inline]
    fn flatten_into<S: Sink<Self>>(self, sink: &mut S) {
        sink.leaf(self)
    }
    #[inline]
    fn visit<'a, V: Visit<AnyArrayView<'a>>>(&'a self, visitor: &mut V) {
        visitor.leaf(self.lend())
    }
    #[inline]
    fn visit_mut<'a, V: VisitMut<AnyArrayViewMut<'a>>>(&'a mut self, visitor: &mut V) {
        visitor.leaf(self.lend_mut())
    }
    #[inline]
    fn zip_check<const N: usize>(&self, others: [&Self; N]) -> Result<(), Error> {
        crate::impls::check_same_signature(self, others, same, AnyArray::signature)
    }
    #[inline]
    fn zip_mut_prechecked<'a, const N: usize, F>(&'a mut self, others: [&'a Self; N], f: &mut F)
    where
        F: FnMut(AnyArrayViewMut<'a>, [AnyArrayView<'a>; N]),
    {
        if others.iter().all(|o| same(self, o)) {
            f(self.lend_mut(), others.map(AnyArray::lend))
        }
    }
    #[inline]
    fn flatten_vec<S: Sink<Self>>(items: Vec<Self>, sink: &mut S) {
        sink.leaf_vec(items)
    }
    #[inline]
    fn visit_slice<'a, V: Visit<AnyArrayView<'a>>>(items: &'a [Self], visitor: &mut V) {
        visitor.leaf_run(items.iter().map(AnyArray::lend))
    }
    #[inline]
    fn visit_slice_mut<'a, V: VisitMut<AnyArrayViewMut<'a>>>(
        items: &'a mut [Self],
        visitor: &mut V,
    ) {
        visitor.leaf_run(items.iter_mut().map(AnyArray::lend_mut))
    }
}

/// An `AnyArray` is read back as one leaf, of any dtype and shape.
///
/// ```
/// use pytree_std::ndarray::array;
/// use pytree_std::AnyArray;
/// let (leaves, def) = pytree_std::flatten(AnyArray::from(array![true]));
/// assert_eq!(pytree_std::unflatten::<AnyArray>(&def, leaves)?, AnyArray::from(array![true]));
/// # Ok::<(), pytree_std::Error>(())
/// ```
impl Unflatten<Std> for AnyArray {
    #[inline]
    fn unflatten_from<S: Source<Self>>(source: &mut S) -> Result<Self, Error> {
        source.leaf()
    }
    #[inline]
    fn unflatten_vec<S: Source<Self>>(len: usize, source: &mut S) -> Result<Vec<Self>, Error> {
        source.leaf_vec(len)
    }
    #[inline]
    fn map_leaves<F: FnMut(Self) -> Self>(self, f: &mut F) -> Self {
        f(self)
    }
    #[inline]
    fn zip_with_prechecked<'a, const N: usize, F>(
        &'a self,
        others: [&'a Self; N],
        f: &mut F,
    ) -> Self
    where
        F: FnMut(AnyArrayView<'a>, [AnyArrayView<'a>; N]) -> Self,
    {
        // An array of another dtype or shape (the check was skipped) is
        // replaced by `self`'s: `f` never sees signatures that differ.
        let others = others.map(|o| if same(self, o) { o } else { self });
        f(self.lend(), others.map(AnyArray::lend))
    }
}

#[cfg(test)]
mod tests {
    use ndarray::IxDyn;

    use super::*;

    #[test]
    fn a_zero_d_array_keeps_its_rank() {
        let a = AnyArray::from(ArrayD::<f16>::from_elem(IxDyn(&[]), f16::ONE));
        assert_eq!(a.signature().to_string(), "f16[]");
        assert!(a.into_typed::<f16, ndarray::Ix1>().is_err());
    }
}
