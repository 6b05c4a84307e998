//! [`AnyArray`]: an ndarray array whose element type is a value, not a
//! type parameter (feature `ndarray`), so that one tree holds arrays of
//! several dtypes: f32 weights beside an i64 `position_ids` buffer and a
//! bool mask, as a Hugging Face model does.
//!
//! A tree has one leaf type. With typed arrays (`Array2<f32>`) that type
//! is `ArrayD<f32>`, and a field `Array2<i64>` beside it is a type error
//! (E0271: its leaf is `ArrayD<i64>`). `#[pytree(leaf_type = AnyArray)]`
//! makes `AnyArray` the struct's leaf type instead, and its fields stay
//! typed: each typed array stands as an `AnyArray` leaf ([`LeafAs`]),
//! moved in without a copy, lent as a view of its own data, and
//! converted back (its dtype and rank checked, an error at its path
//! otherwise) when the struct is rebuilt. Structs of one dtype inside it
//! need no attribute; a struct that holds a `leaf_type = AnyArray`
//! struct and other arrays takes the attribute too. `AnyArray` fields
//! are accepted as well.
//!
//! As a leaf, `AnyArray` is lent as views ([`AnyArrayView`],
//! [`AnyArrayViewMut`]): the walks by mutable reference can change the
//! elements, never the dtype or the shape. Its signature is its dtype and
//! shape, so multi-tree operations refuse arrays that differ in either.
//! Checkpoints save and load it with its own dtype; pytree-optim's
//! optimizers update its float variants and leave integer and bool ones
//! alone; [`AnyArray::map_floats`] maps the floats and passes the rest
//! through; `as_f32()`, `as_i64_mut()`, ... and [`AnyArray::view`] reach
//! the typed data without a copy; `tree_equal` compares floats within
//! the tolerance and the rest exactly; ensembles stack each dtype.
//!
//! ```
//! use pytree_std::ndarray::{array, Array1, Array2};
//! use pytree_std::{AnyArray, PyTree};
//!
//! #[derive(PyTree, Clone, Debug, PartialEq)]
//! struct LayerNorm { weight: Array1<f32>, bias: Array1<f32> }
//!
//! #[derive(PyTree, Clone, Debug, PartialEq)]
//! #[pytree(leaf_type = AnyArray)]
//! struct Embeddings {
//!     word: Array2<f32>,
//!     position_ids: Array2<i64>,
//!     norm: LayerNorm,
//! }
//! let e = Embeddings {
//!     word: array![[0.5, 1.0], [2.0, 3.0]],
//!     position_ids: array![[0, 1]],
//!     norm: LayerNorm { weight: array![1.0, 1.0], bias: array![0.0, 0.0] },
//! };
//! let sigs: Vec<String> = pytree_std::leaves(&e).iter()
//!     .map(|v| v.signature().to_string()).collect();
//! assert_eq!(sigs, ["f32[2,2]", "i64[1,2]", "f32[2]", "f32[2]"]);
//! // The floats scaled, the buffer untouched.
//! let half = pytree_std::map(e.clone(), |a| a.map_floats(|x| x / 2.0));
//! assert_eq!((half.word[[1, 1]], &half.position_ids), (1.5, &e.position_ids));
//! // Typed views of the leaves, no copies.
//! let total: i64 = pytree_std::leaves(&e).iter().filter_map(|v| v.as_i64()).map(|a| a.sum()).sum();
//! assert_eq!(total, 1);
//! let (leaves, def) = pytree_std::flatten(e.clone());
//! assert_eq!(pytree_std::unflatten::<Embeddings>(&def, leaves)?, e);
//! # Ok::<(), pytree_std::Error>(())
//! ```
//!
//! A tree of `AnyArray` fields works the same, its dtypes then values:
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
//! let ids: Array2<i64> = e.position_ids.clone().try_into()?;
//! assert_eq!(ids, array![[0, 1]]);
//! assert!(e.word.view::<f32>().is_some() && e.word.as_i64().is_none());
//! # Ok::<(), pytree_std::Error>(())
//! ```

use half::{bf16, f16};
use ndarray::{ArrayD, ArrayViewD, ArrayViewMutD, Dimension, IxDyn, Zip};
use pytree_core::{DType, Error, Leaf, LeafAs, Signature};

use crate::elements::Ravel;
use crate::elements::{ApproxEq, Tolerance};
use crate::std_namespace::Std;

mod sealed {
    pub trait Sealed {}
}

macro_rules! any_array {
    ($($variant:ident($t:ty) => $dtype:expr, $as_t:ident, $as_t_mut:ident);* $(;)?) => {
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

            $(
                #[doc = concat!("The data as `", stringify!($t), "`s, if it holds `", stringify!($t), "`s: a view, no copy.")]
                #[doc = ""]
                #[doc = "```"]
                #[doc = "# use pytree_std::{half::{bf16, f16}, AnyArray, ndarray::{ArrayD, IxDyn}};"]
                #[doc = concat!("let a = AnyArray::from(ArrayD::<", stringify!($t), ">::default(IxDyn(&[2, 3])));")]
                #[doc = concat!("assert_eq!(a.", stringify!($as_t), "().unwrap().shape(), [2, 3]);")]
                #[doc = "```"]
                #[inline]
                pub fn $as_t(&self) -> Option<ArrayViewD<'_, $t>> {
                    match self {
                        AnyArray::$variant(a) => Some(a.view()),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }

                #[doc = concat!("The data as `", stringify!($t), "`s, mutably, if it holds `", stringify!($t), "`s: a view, no copy.")]
                #[doc = ""]
                #[doc = "```"]
                #[doc = "# use pytree_std::{half::{bf16, f16}, AnyArray, ndarray::{ArrayD, IxDyn}};"]
                #[doc = concat!("let mut a = AnyArray::from(ArrayD::<", stringify!($t), ">::default(IxDyn(&[2])));")]
                #[doc = concat!("let mut v = a.", stringify!($as_t_mut), "().unwrap();")]
                #[doc = "v[[1]] = v[[0]];"]
                #[doc = concat!("assert_eq!(a.", stringify!($as_t), "().unwrap().len(), 2);")]
                #[doc = "```"]
                #[inline]
                pub fn $as_t_mut(&mut self) -> Option<ArrayViewMutD<'_, $t>> {
                    match self {
                        AnyArray::$variant(a) => Some(a.view_mut()),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }
            )*
        }

        impl<'a> AnyArrayView<'a> {
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

            $(
                #[doc = concat!("The view as `", stringify!($t), "`s, if it holds `", stringify!($t), "`s (no copy), for as long as the array is lent.")]
                #[doc = ""]
                #[doc = "```"]
                #[doc = "# use pytree_std::{half::{bf16, f16}, AnyArray, ndarray::{ArrayD, IxDyn}};"]
                #[doc = concat!("let a = AnyArray::from(ArrayD::<", stringify!($t), ">::default(IxDyn(&[4])));")]
                #[doc = concat!("let typed = a.lend().", stringify!($as_t), "().unwrap();")]
                #[doc = "assert_eq!(typed.shape(), [4]);"]
                #[doc = "```"]
                #[inline]
                pub fn $as_t(&self) -> Option<ArrayViewD<'a, $t>> {
                    match self {
                        AnyArrayView::$variant(a) => Some(a.clone()),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }
            )*
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

            $(
                #[doc = concat!("The view as `", stringify!($t), "`s, mutably, if it holds `", stringify!($t), "`s (no copy).")]
                #[doc = ""]
                #[doc = "```"]
                #[doc = "# use pytree_std::{half::{bf16, f16}, AnyArray, ndarray::{ArrayD, IxDyn}};"]
                #[doc = concat!("let mut a = AnyArray::from(ArrayD::<", stringify!($t), ">::default(IxDyn(&[2])));")]
                #[doc = "let mut lent = a.lend_mut();"]
                #[doc = concat!("let mut typed = lent.", stringify!($as_t_mut), "().unwrap();")]
                #[doc = "typed[[0]] = typed[[1]];"]
                #[doc = "assert_eq!(typed.shape(), [2]);"]
                #[doc = "```"]
                #[inline]
                pub fn $as_t_mut(&mut self) -> Option<ArrayViewMutD<'_, $t>> {
                    match self {
                        AnyArrayViewMut::$variant(a) => Some(a.view_mut()),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }
            )*
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
                fn lend_any(v: ArrayViewD<'_, $t>) -> AnyArrayView<'_> {
                    AnyArrayView::$variant(v)
                }
                #[inline]
                fn lend_any_mut(v: ArrayViewMutD<'_, $t>) -> AnyArrayViewMut<'_> {
                    AnyArrayViewMut::$variant(v)
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
    F32(f32) => DType::F32, as_f32, as_f32_mut;
    F64(f64) => DType::F64, as_f64, as_f64_mut;
    F16(f16) => DType::F16, as_f16, as_f16_mut;
    BF16(bf16) => DType::BF16, as_bf16, as_bf16_mut;
    I64(i64) => DType::I64, as_i64, as_i64_mut;
    I32(i32) => DType::I32, as_i32, as_i32_mut;
    U8(u8) => DType::U8, as_u8, as_u8_mut;
    Bool(bool) => DType::Bool, as_bool, as_bool_mut;
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
    /// A typed view as an [`AnyArrayView`] (no copy).
    fn lend_any(v: ArrayViewD<'_, Self>) -> AnyArrayView<'_>;
    /// A typed mutable view as an [`AnyArrayViewMut`] (no copy).
    fn lend_any_mut(v: ArrayViewMutD<'_, Self>) -> AnyArrayViewMut<'_>;
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

impl AnyArrayViewMut<'_> {
    /// Applies `f` to every element of a float array (f32, f64, f16,
    /// bf16), in place: the math in `f64`, each result rounded once to the
    /// array's dtype (for one `+`, `-`, `*`, `/` or `sqrt` of `f32`s, the
    /// `f32` operation's own result). An integer or bool array is left as
    /// it is, so over a model's leaves this scales the weights and leaves
    /// `position_ids` and masks alone.
    ///
    /// ```
    /// use pytree_std::ndarray::array;
    /// use pytree_std::AnyArray;
    /// let mut t = (AnyArray::from(array![1.0f32, 2.0]), AnyArray::from(array![3i64]));
    /// pytree_std::for_each_mut(&mut t, |mut a| a.map_floats(|x| x * 0.5));
    /// assert_eq!(t, (AnyArray::from(array![0.5f32, 1.0]), AnyArray::from(array![3i64])));
    /// ```
    pub fn map_floats(&mut self, mut f: impl FnMut(f64) -> f64) {
        match self {
            AnyArrayViewMut::F32(a) => a.mapv_inplace(|x| f(f64::from(x)) as f32),
            AnyArrayViewMut::F64(a) => a.mapv_inplace(f),
            AnyArrayViewMut::F16(a) => a.mapv_inplace(|x| f16::from_f64(f(x.to_f64()))),
            AnyArrayViewMut::BF16(a) => a.mapv_inplace(|x| bf16::from_f64(f(x.to_f64()))),
            AnyArrayViewMut::I64(_)
            | AnyArrayViewMut::I32(_)
            | AnyArrayViewMut::U8(_)
            | AnyArrayViewMut::Bool(_) => {}
        }
    }
}

impl AnyArray {
    /// The array with `f` applied to every element if it is a float array
    /// (f32, f64, f16, bf16), in place (no new allocation), as
    /// [`AnyArrayViewMut::map_floats`]; an integer or bool array comes back
    /// unchanged. With [`map`](crate::map), the float-only map of a
    /// model's leaves.
    ///
    /// ```
    /// use pytree_std::ndarray::{array, Array1};
    /// use pytree_std::{AnyArray, PyTree};
    ///
    /// #[derive(PyTree, Debug, PartialEq)]
    /// #[pytree(leaf_type = AnyArray)]
    /// struct Embeddings { weight: Array1<f32>, position_ids: Array1<i64> }
    ///
    /// let e = Embeddings { weight: array![1.0, 2.0], position_ids: array![0, 1] };
    /// let doubled = pytree_std::map(e, |a| a.map_floats(|x| 2.0 * x));
    /// assert_eq!(doubled, Embeddings { weight: array![2.0, 4.0], position_ids: array![0, 1] });
    /// ```
    pub fn map_floats(mut self, f: impl FnMut(f64) -> f64) -> AnyArray {
        self.lend_mut().map_floats(f);
        self
    }
}

/// A typed array stands as an [`AnyArray`] leaf: the leaf type of a
/// struct derived with `#[pytree(leaf_type = AnyArray)]`, whose fields are
/// typed arrays of several dtypes (`Array2<f32>` weights, an
/// `Array2<i64>` buffer), structs of them, or `AnyArray`s. Moved in
/// without a copy, lent as [`AnyArrayView`] / [`AnyArrayViewMut`] of the
/// field's own data, and converted back when the struct is rebuilt, where
/// another dtype is an error at the field's path (the field's rank is
/// checked there too, as for every typed array).
///
/// ```
/// use pytree_std::ndarray::{array, Array1, Array2};
/// use pytree_std::{AnyArray, PyTree};
///
/// #[derive(PyTree, Clone, Debug, PartialEq)]
/// #[pytree(leaf_type = AnyArray)]
/// struct Embeddings { weight: Array2<f32>, position_ids: Array1<i64> }
///
/// let e = Embeddings { weight: array![[0.5, 1.0]], position_ids: array![0, 1] };
/// let sigs: Vec<String> = pytree_std::leaves(&e).iter().map(|v| v.signature().to_string()).collect();
/// assert_eq!(sigs, ["f32[1,2]", "i64[2]"]);
/// let (leaves, def) = pytree_std::flatten(e.clone()); // moved, not copied
/// assert_eq!(pytree_std::unflatten::<Embeddings>(&def, leaves.clone())?, e);
/// let err = pytree_std::unflatten::<Embeddings>(&def, [leaves[0].clone(), leaves[0].clone()]);
/// assert_eq!(
///     err.unwrap_err().to_string(),
///     "at .position_ids: array type mismatch: expected an array of i64, found f32[1,2]"
/// );
/// # Ok::<(), pytree_std::Error>(())
/// ```
impl<A: AnyElement> LeafAs<Std, AnyArray> for ArrayD<A> {
    #[inline]
    fn into_leaf(self) -> AnyArray {
        A::into_any(self)
    }
    #[inline]
    fn lend_as<'a>(leaf: ArrayViewD<'a, A>) -> AnyArrayView<'a>
    where
        Self: 'a,
    {
        A::lend_any(leaf)
    }
    #[inline]
    fn lend_mut_as<'a>(leaf: ArrayViewMutD<'a, A>) -> AnyArrayViewMut<'a>
    where
        Self: 'a,
    {
        A::lend_any_mut(leaf)
    }
    #[inline]
    fn from_leaf(leaf: AnyArray) -> Result<Self, Error> {
        leaf.into_typed::<A, IxDyn>()
    }
}

/// Equal dtypes and shapes, then elementwise: floats within the tolerance
/// (compared as `f64`), integers and bools exactly. How `tree_equal`
/// compares trees of [`AnyArray`] leaves.
///
/// ```
/// use pytree_std::ndarray::array;
/// use pytree_std::{elements::ApproxEq, elements::Tolerance, AnyArray};
/// let a = AnyArray::from(array![1.0f32, 2.0]);
/// let b = AnyArray::from(array![1.0f32, 2.0 + 1e-6]);
/// assert!(a.lend().approx_eq(&b.lend(), Tolerance::new(0.0, 1e-5)));
/// assert!(!a.lend().approx_eq(&b.lend(), Tolerance::EXACT));
/// let ids = AnyArray::from(array![1i64, 2]);
/// assert!(!a.lend().approx_eq(&ids.lend(), Tolerance::new(1.0, 1.0))); // another dtype
/// ```
impl ApproxEq for AnyArrayView<'_> {
    fn approx_eq(&self, other: &Self, tol: Tolerance) -> bool {
        use AnyArrayView as V;
        fn all<A, B>(
            a: &ArrayViewD<'_, A>,
            b: &ArrayViewD<'_, B>,
            f: impl Fn(&A, &B) -> bool,
        ) -> bool {
            a.shape() == b.shape() && Zip::from(a).and(b).all(f)
        }
        match (self, other) {
            (V::F32(a), V::F32(b)) => all(a, b, |x, y| tol.close(f64::from(*x), f64::from(*y))),
            (V::F64(a), V::F64(b)) => all(a, b, |x, y| tol.close(*x, *y)),
            (V::F16(a), V::F16(b)) => all(a, b, |x, y| tol.close(x.to_f64(), y.to_f64())),
            (V::BF16(a), V::BF16(b)) => all(a, b, |x, y| tol.close(x.to_f64(), y.to_f64())),
            (V::I64(a), V::I64(b)) => a == b,
            (V::I32(a), V::I32(b)) => a == b,
            (V::U8(a), V::U8(b)) => a == b,
            (V::Bool(a), V::Bool(b)) => a == b,
            _ => false,
        }
    }
}

/// As its view ([`ApproxEq for AnyArrayView`](AnyArrayView)).
///
/// ```
/// use pytree_std::ndarray::array;
/// use pytree_std::{elements::ApproxEq, elements::Tolerance, AnyArray};
/// assert!(AnyArray::from(array![1u8]).approx_eq(&AnyArray::from(array![1u8]), Tolerance::EXACT));
/// ```
impl ApproxEq for AnyArray {
    fn approx_eq(&self, other: &Self, tol: Tolerance) -> bool {
        self.lend().approx_eq(&other.lend(), tol)
    }
}

/// Ensembles of models with buffers: each member's arrays stacked along a
/// new leading axis in their own dtype (an `i64` buffer too), and cut
/// back.
///
/// ```
/// use pytree_std::ensemble::{stack_leaves, unstack_leaves};
/// use pytree_std::ndarray::array;
/// use pytree_std::AnyArray;
/// let member = |s: f32| (AnyArray::from(array![s, 2.0 * s]), AnyArray::from(array![7i64]));
/// let members = vec![member(1.0), member(2.0)];
/// let stacked = stack_leaves(&members)?;
/// assert_eq!(stacked.0, AnyArray::from(array![[1.0f32, 2.0], [2.0, 4.0]]));
/// assert_eq!(stacked.1, AnyArray::from(array![[7i64], [7]]));
/// assert_eq!(unstack_leaves(&stacked)?, members);
/// # Ok::<(), pytree_std::Error>(())
/// ```
impl crate::ensemble::Stackable for AnyArray {
    fn stack(members: &[AnyArrayView<'_>]) -> Result<Self, Error> {
        fn typed<A: AnyElement>(members: &[AnyArrayView<'_>]) -> Result<AnyArray, Error> {
            let views = members
                .iter()
                .map(|m| A::view_of(m.clone()))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| {
                    Error::custom("stack_leaves: the members' arrays differ in dtype")
                })?;
            ndarray::stack(ndarray::Axis(0), &views)
                .map(A::into_any)
                .map_err(|e| Error::custom(format!("stack_leaves: {e}")))
        }
        match members.first().map(AnyArrayView::dtype) {
            Some(DType::F32) => typed::<f32>(members),
            Some(DType::F64) => typed::<f64>(members),
            Some(DType::F16) => typed::<f16>(members),
            Some(DType::BF16) => typed::<bf16>(members),
            Some(DType::I64) => typed::<i64>(members),
            Some(DType::I32) => typed::<i32>(members),
            Some(DType::U8) => typed::<u8>(members),
            Some(DType::Bool) => typed::<bool>(members),
            _ => Err(Error::custom("stack_leaves: no members to stack")),
        }
    }
    fn shape<'a>(leaf: &'a AnyArrayView<'_>) -> &'a [usize] {
        leaf.shape()
    }
    fn index(leaf: &AnyArrayView<'_>, i: usize) -> Result<Self, Error> {
        fn typed<A: AnyElement>(a: &ArrayViewD<'_, A>, i: usize) -> AnyArray {
            A::into_any(a.index_axis(ndarray::Axis(0), i).to_owned())
        }
        Ok(match leaf {
            AnyArrayView::F32(a) => typed(a, i),
            AnyArrayView::F64(a) => typed(a, i),
            AnyArrayView::F16(a) => typed(a, i),
            AnyArrayView::BF16(a) => typed(a, i),
            AnyArrayView::I64(a) => typed(a, i),
            AnyArrayView::I32(a) => typed(a, i),
            AnyArrayView::U8(a) => typed(a, i),
            AnyArrayView::Bool(a) => typed(a, i),
        })
    }
}

/// The elements of an array as `f64`s, in C order: floats exactly,
/// integers exactly up to 2^53, bools as 0 and 1.
fn elements_f64(leaf: &AnyArrayView<'_>) -> Vec<f64> {
    match leaf {
        AnyArrayView::F32(a) => a.iter().map(|&x| f64::from(x)).collect(),
        AnyArrayView::F64(a) => a.iter().copied().collect(),
        AnyArrayView::F16(a) => a.iter().map(|x| x.to_f64()).collect(),
        AnyArrayView::BF16(a) => a.iter().map(|x| x.to_f64()).collect(),
        AnyArrayView::I64(a) => a.iter().map(|&x| x as f64).collect(),
        AnyArrayView::I32(a) => a.iter().map(|&x| f64::from(x)).collect(),
        AnyArrayView::U8(a) => a.iter().map(|&x| f64::from(x)).collect(),
        AnyArrayView::Bool(a) => a.iter().map(|&x| f64::from(u8::from(x))).collect(),
    }
}

/// An array of `like`'s dtype and shape from `f64`s in C order: floats
/// rounded to their dtype, integers truncated toward zero and saturated
/// (Rust's `as`, NumPy's `astype` for values in range), bools true where
/// not zero.
fn from_elements_f64(like: &Signature, data: impl Iterator<Item = f64>) -> Result<AnyArray, Error> {
    fn typed<A: AnyElement>(
        like: &Signature,
        data: impl Iterator<Item = f64>,
        f: impl Fn(f64) -> A,
    ) -> Result<AnyArray, Error> {
        ArrayD::from_shape_vec(IxDyn(like.shape()), data.map(f).collect())
            .map(A::into_any)
            .map_err(|e| Error::custom(format!("cannot shape the elements as {like}: {e}")))
    }
    match like.dtype() {
        DType::F32 => typed(like, data, |x| x as f32),
        DType::F64 => typed(like, data, |x| x),
        DType::F16 => typed(like, data, f16::from_f64),
        DType::BF16 => typed(like, data, bf16::from_f64),
        DType::I64 => typed(like, data, |x| x as i64),
        DType::I32 => typed(like, data, |x| x as i32),
        DType::U8 => typed(like, data, |x| x as u8),
        DType::Bool => typed(like, data, |x| x != 0.0),
        other => Err(Error::custom(format!(
            "an AnyArray holds no dtype {other} (f32, f64, f16, bf16, i64, i32, u8, bool)"
        ))),
    }
}

/// A tree of several dtypes ravels into one float buffer, as JAX's
/// `ravel_pytree` promotes its leaves to one dtype: `f64` (every element
/// exact but integers beyond 2^53) or `f32` (ask for it with the buffer's
/// type). The plan rebuilds each array in its own dtype: floats rounded,
/// integers truncated toward zero, bools true where not zero.
///
/// ```
/// use pytree_std::ndarray::{array, Array1, Array2};
/// use pytree_std::{AnyArray, PyTree};
///
/// #[derive(PyTree, Clone, Debug, PartialEq)]
/// #[pytree(leaf_type = AnyArray)]
/// struct Embeddings { weight: Array2<f32>, position_ids: Array1<i64> }
///
/// let e = Embeddings { weight: array![[0.5, 1.5]], position_ids: array![0, 7] };
/// let (flat, plan) = pytree_std::elements::ravel::<_, f64>(&e)?;
/// assert_eq!(flat, [0.5, 1.5, 0.0, 7.0]);
/// assert_eq!(plan.unravel(&flat)?, e);
/// let (flat32, plan32) = pytree_std::elements::ravel::<_, f32>(&e)?;
/// assert_eq!(plan32.unravel(&flat32)?, e);
/// # Ok::<(), pytree_std::Error>(())
/// ```
impl Ravel<f64> for AnyArray {
    fn ravel_into(leaf: AnyArrayView<'_>, out: &mut Vec<f64>) -> Result<(), Error> {
        out.extend(elements_f64(&leaf));
        Ok(())
    }
    fn unravel_from(like: &Signature, data: &[f64]) -> Result<Self, Error> {
        from_elements_f64(like, data.iter().copied())
    }
}

/// As `Ravel<f64>`, into `f32`s (integers exact up to 2^24).
///
/// ```
/// use pytree_std::ndarray::array;
/// use pytree_std::AnyArray;
/// let t = (AnyArray::from(array![1.5f64]), AnyArray::from(array![true, false]));
/// let (flat, plan) = pytree_std::elements::ravel::<_, f32>(&t)?;
/// assert_eq!(flat, [1.5, 1.0, 0.0]);
/// assert_eq!(plan.unravel(&flat)?, t);
/// # Ok::<(), pytree_std::Error>(())
/// ```
impl Ravel<f32> for AnyArray {
    fn ravel_into(leaf: AnyArrayView<'_>, out: &mut Vec<f32>) -> Result<(), Error> {
        out.extend(elements_f64(&leaf).into_iter().map(|x| x as f32));
        Ok(())
    }
    fn unravel_from(like: &Signature, data: &[f32]) -> Result<Self, Error> {
        from_elements_f64(like, data.iter().map(|&x| f64::from(x)))
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
            None => Err(crate::impls::shaped::signature_error(
                expected,
                value.signature(),
            )),
        }
    }
}

/// Two arrays with the same dtype and shape.
fn same(a: &AnyArray, b: &AnyArray) -> bool {
    a.dtype() == b.dtype() && a.shape() == b.shape()
}

crate::impls::shaped::one_leaf_pytree!(
    /// An `AnyArray` is one leaf, read back of any dtype and shape.
    ///
    /// ```
    /// use pytree_std::ndarray::array;
    /// use pytree_std::AnyArray;
    /// let t = (AnyArray::from(array![1.0f32]), AnyArray::from(array![1i64]));
    /// assert_eq!(pytree_std::structure(&t).num_leaves(), 2);
    /// // Trees whose arrays differ in dtype do not zip.
    /// let u = (AnyArray::from(array![1.0f32]), AnyArray::from(array![1i32]));
    /// let err = pytree_std::walk::map_n(&t, [&u], |a, [_]| a.to_owned()).unwrap_err();
    /// assert_eq!(err.to_string(), "tree 1 at [1]: leaf signature mismatch: expected i64[1], found i32[1]");
    /// let (leaves, def) = pytree_std::flatten(AnyArray::from(array![true]));
    /// assert_eq!(pytree_std::unflatten::<AnyArray>(&def, leaves)?, AnyArray::from(array![true]));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    [] AnyArray => AnyArray,
    lend = |a| a.lend(), lend_mut = |a| a.lend_mut(),
    same = same, signature = AnyArray::signature,
    into_leaf = |a| a, from_leaf = Ok, from_leaf_or_panic = |a| a,
    leaf_is_self = true,
);

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
