//! Leaf types: the [`Leaf`] trait (how a leaf is lent out by the walks by
//! reference, and what it says about itself) and
//! [`impl_leaf!`](crate::impl_leaf), which declares types to be leaves of a
//! namespace. `pytree-std` uses it for the primitive types; a user
//! namespace uses it for whatever it treats as a leaf (say, `Vec<f32>` as
//! one tensor). [`LeafAs`](crate::LeafAs) (`leaf_as.rs`): a leaf type
//! that stands in a tree of another one (`#[pytree(leaf_type = L)]`).

pub(crate) mod leaf_as;

use core::convert::Infallible;

use crate::error::Error;
use crate::signature::Signature;

/// A type that is the leaf type of trees in namespace `Ns`
/// ([`Flatten::Leaf`](crate::Flatten::Leaf)): how the walks by reference
/// lend it, and what it says about itself.
///
/// For most leaves a borrow is a reference (`Ref<'a> = &'a Self`,
/// `Mut<'a> = &'a mut Self`; [`impl_leaf!`](crate::impl_leaf) writes that).
/// Arrays are lent as views (`ArrayViewD<'a, A>` / `ArrayViewMutD<'a, A>`
/// for the leaf type `ArrayD<A>`): then a struct with an `Array2<f32>` and
/// an `Array1<f32>` field has one leaf type, `ArrayD<f32>`, and every walk
/// by reference lends each field as a view, whatever its rank.
///
/// Leaves are `'static` (they own their data), which lets operations take
/// closures over borrows of any lifetime.
///
/// ```
/// use pytree_std::{Error, Leaf, Std};
/// /// A leaf lent as a slice.
/// pub struct Samples(Vec<f32>);
/// impl Leaf<Std> for Samples {
///     type Ref<'a> = &'a [f32];
///     type Mut<'a> = &'a mut [f32];
///     fn lend(&self) -> &[f32] { &self.0 }
///     fn lend_mut(&mut self) -> &mut [f32] { &mut self.0 }
///     fn assign(slot: &mut [f32], value: Self) -> Result<Self, Error> {
///         if slot.len() != value.0.len() {
///             return Err(Error::custom("length differs"));
///         }
///         let old = slot.to_vec();
///         slot.copy_from_slice(&value.0);
///         Ok(Samples(old))
///     }
/// }
/// let mut s = Samples(vec![1.0, 2.0]);
/// assert_eq!(s.lend(), [1.0, 2.0]);
/// let old = Samples::assign(s.lend_mut(), Samples(vec![3.0, 4.0]))?;
/// assert_eq!((old.0, s.0), (vec![1.0, 2.0], vec![3.0, 4.0]));
/// # Ok::<(), Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a leaf type of namespace `{Ns}`",
    label = "not a leaf type",
    note = "declare it with `impl_leaf!({Ns} => {Self})`, or mark the type `#[pytree(leaf)]`"
)]
pub trait Leaf<Ns>: Sized + 'static {
    /// A leaf lent by shared reference (`&'a Self`, or a view).
    type Ref<'a>: Clone;
    /// A leaf lent by mutable reference (`&'a mut Self`, or a mutable view).
    type Mut<'a>;

    /// True when two leaves of this type can differ in shape (arrays,
    /// tensors): multi-tree operations then compare their
    /// [`signature`](Leaf::signature)s. False (the default) for scalars,
    /// whose checks cost nothing.
    const HAS_SHAPE: bool = false;

    /// Lends the leaf by shared reference.
    ///
    /// ```
    /// use pytree_std::{Leaf, Std};
    /// assert_eq!(<f32 as Leaf<Std>>::lend(&1.5), &1.5);
    /// ```
    fn lend(&self) -> Self::Ref<'_>;

    /// Lends the leaf by mutable reference.
    ///
    /// ```
    /// use pytree_std::{Leaf, Std};
    /// let mut x = 1.5f32;
    /// *<f32 as Leaf<Std>>::lend_mut(&mut x) += 1.0;
    /// assert_eq!(x, 2.5);
    /// ```
    fn lend_mut(&mut self) -> Self::Mut<'_>;

    /// What a lent leaf says about itself (dtype, shape, device), if
    /// anything: arrays and tensors give their signature, numeric scalars
    /// a 0-d one, other leaves `None` (the default).
    ///
    /// ```
    /// use pytree_std::{DType, Leaf, Signature, Std};
    /// assert_eq!(<f32 as Leaf<Std>>::signature(&&1.0), Some(Signature::scalar(DType::F32)));
    /// assert_eq!(<String as Leaf<Std>>::signature(&&String::new()), None);
    /// ```
    fn signature(leaf: &Self::Ref<'_>) -> Option<Signature> {
        let _ = leaf;
        None
    }

    /// Writes `value` into a lent leaf and returns the leaf it replaces
    /// (for `set` and `set_subtree`). A leaf lent as a view keeps its
    /// shape: a value of another shape is an error, and nothing changes.
    ///
    /// ```
    /// use pytree_std::{Leaf, Std};
    /// let mut x = 1u8;
    /// assert_eq!(<u8 as Leaf<Std>>::assign(&mut x, 7)?, 1);
    /// assert_eq!(x, 7);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn assign(slot: Self::Mut<'_>, value: Self) -> Result<Self, Error>;
}

/// How a leaf of type `L` is lent by shared reference in namespace `Ns`:
/// `&'a L` for scalars, a view for arrays.
///
/// ```
/// let x: pytree_std::LeafRef<'_, pytree_std::Std, f32> = &1.0;
/// assert_eq!(*x, 1.0);
/// ```
pub type LeafRef<'a, Ns, L> = <L as Leaf<Ns>>::Ref<'a>;

/// How a leaf of type `L` is lent by mutable reference in namespace `Ns`:
/// `&'a mut L` for scalars, a mutable view for arrays.
///
/// ```
/// let mut y = 1.0f32;
/// let x: pytree_std::LeafMut<'_, pytree_std::Std, f32> = &mut y;
/// *x = 2.0;
/// assert_eq!(y, 2.0);
/// ```
pub type LeafMut<'a, Ns, L> = <L as Leaf<Ns>>::Mut<'a>;

/// A leaf type lent as a plain reference (`&L`, `&mut L`): every
/// [`impl_leaf!`](crate::impl_leaf) type and `#[pytree(leaf)]` type, not
/// arrays (lent as views). Name it in generic code that wants `&L` from
/// the walks by reference: `P::Leaf: PlainLeaf<Std>`.
///
/// ```
/// use pytree_std::{PlainLeaf, PyTree, Std};
/// fn largest<P: PyTree>(tree: &P) -> Option<&P::Leaf>
/// where
///     P::Leaf: PlainLeaf<Std> + PartialOrd,
/// {
///     let mut best: Option<&P::Leaf> = None;
///     pytree_std::leaves(tree).into_iter().for_each(|x| {
///         if best.is_none_or(|b| x > b) {
///             best = Some(x);
///         }
///     });
///     best
/// }
/// assert_eq!(largest(&(1, vec![5, 3])), Some(&5));
/// ```
pub trait PlainLeaf<Ns>: for<'a> Leaf<Ns, Ref<'a> = &'a Self, Mut<'a> = &'a mut Self> {}

impl<Ns, L> PlainLeaf<Ns> for L where L: for<'a> Leaf<Ns, Ref<'a> = &'a L, Mut<'a> = &'a mut L> {}

/// The leaf type of trees that hold no leaves (a struct with no data
/// fields): no value of it exists.
impl<Ns> Leaf<Ns> for Infallible {
    type Ref<'a> = &'a Infallible;
    type Mut<'a> = &'a mut Infallible;
    fn lend(&self) -> &Infallible {
        self
    }
    fn lend_mut(&mut self) -> &mut Infallible {
        self
    }
    fn assign(slot: &mut Infallible, _value: Self) -> Result<Self, Error> {
        match *slot {}
    }
}

/// Implements [`Leaf`], [`Flatten`](crate::Flatten) and
/// [`Unflatten`](crate::Unflatten) for each listed type as a leaf of the
/// namespace, lent by reference (`&T`, `&mut T`). Numeric primitives
/// describe themselves as 0-d [`Signature`]s.
///
/// ```
/// use pytree_core::{impl_leaf, Flatten};
/// /// A namespace where a `Vec<f32>` is one leaf (a tensor), not a sequence.
/// pub struct Coarse;
/// impl_leaf!(Coarse => Vec<f32>);
/// let (leaves, def) = pytree_core::ops::basic::flatten::<Coarse, _>(vec![1.0f32, 2.0]);
/// assert_eq!(leaves, [vec![1.0, 2.0]]);
/// assert!(def.is_leaf());
/// ```
///
/// A generic leaf type takes its generics in brackets, and a where-clause
/// in brackets after it (`#[pytree(leaf)]` expands to this):
///
/// ```
/// pub struct Coarse;
/// pub struct Tensor<T> { data: Vec<T> }
/// pytree_core::impl_leaf!(impl [T] Coarse => Tensor<T> where [T: Clone + 'static]);
/// let (leaves, _) = pytree_core::ops::basic::flatten::<Coarse, _>(Tensor { data: vec![1u8] });
/// assert_eq!(leaves[0].data, [1]);
/// ```
#[macro_export]
macro_rules! impl_leaf {
    (impl [$($gen:tt)*] $ns:ty => $leaf:ty $(where [$($pred:tt)*])?) => {
        impl<$($gen)*> $crate::Leaf<$ns> for $leaf where $($($pred)*)? {
            type Ref<'__a> = &'__a $leaf;
            type Mut<'__a> = &'__a mut $leaf;
            #[inline(always)]
            fn lend(&self) -> &Self {
                self
            }
            #[inline(always)]
            fn lend_mut(&mut self) -> &mut Self {
                self
            }
            #[inline]
            fn signature(_leaf: &&Self) -> ::core::option::Option<$crate::Signature> {
                $crate::__private::scalar_signature::<Self>()
            }
            #[inline]
            fn assign(slot: &mut Self, value: Self) -> ::core::result::Result<Self, $crate::Error> {
                ::core::result::Result::Ok(::core::mem::replace(slot, value))
            }
        }
        impl<$($gen)*> $crate::Flatten<$ns> for $leaf where $($($pred)*)? {
            type Leaf = $leaf;
            const UNIFORM_LEAVES: ::core::option::Option<::core::primitive::usize> = ::core::option::Option::Some(1);
            #[inline]
            fn flatten_into<__S: $crate::Sink<Self>>(self, sink: &mut __S) {
                sink.leaf(self)
            }
            #[inline]
            fn visit<'__a, __V: $crate::Visit<&'__a Self>>(&'__a self, visitor: &mut __V) {
                visitor.leaf(self)
            }
            #[inline]
            fn visit_mut<'__a, __V: $crate::VisitMut<&'__a mut Self>>(&'__a mut self, visitor: &mut __V) {
                visitor.leaf(self)
            }
            #[inline]
            fn zip_check<const __N: ::core::primitive::usize>(
                &self,
                _others: [&Self; __N],
            ) -> ::core::result::Result<(), $crate::Error> {
                ::core::result::Result::Ok(())
            }
            #[inline]
            fn zip_mut_prechecked<'__a, const __N: ::core::primitive::usize, __F>(
                &'__a mut self,
                others: [&'__a Self; __N],
                f: &mut __F,
            )
            where
                __F: ::core::ops::FnMut(&'__a mut Self, [&'__a Self; __N]),
            {
                f(self, others)
            }
            #[inline]
            fn flatten_vec<__S: $crate::Sink<Self>>(items: $crate::__private::Vec<Self>, sink: &mut __S) {
                sink.leaf_vec(items)
            }
            #[inline]
            fn visit_slice<'__a, __V: $crate::Visit<&'__a Self>>(items: &'__a [Self], visitor: &mut __V) {
                visitor.leaf_run(items.iter())
            }
            #[inline]
            fn visit_entries<'__a, __K, __I, __V>(entries: __I, visitor: &mut __V)
            where
                __K: $crate::ErasableKey + '__a,
                __I: ::core::iter::ExactSizeIterator<Item = (&'__a __K, &'__a Self)>,
                __V: $crate::Visit<&'__a Self>,
                Self: '__a,
            {
                visitor.leaf_entries(entries.map(|(k, v)| ($crate::KeyRef::Key(k), v)))
            }
            #[inline]
            fn visit_slice_mut<'__a, __V: $crate::VisitMut<&'__a mut Self>>(
                items: &'__a mut [Self],
                visitor: &mut __V,
            ) {
                visitor.leaf_run(items.iter_mut())
            }
        }
        impl<$($gen)*> $crate::Unflatten<$ns> for $leaf where $($($pred)*)? {
            #[inline]
            fn unflatten_from<__S: $crate::Source<Self>>(
                source: &mut __S,
            ) -> ::core::result::Result<Self, $crate::Error> {
                source.leaf()
            }
            #[inline]
            fn unflatten_vec<__S: $crate::Source<Self>>(
                len: ::core::primitive::usize,
                source: &mut __S,
            ) -> ::core::result::Result<$crate::__private::Vec<Self>, $crate::Error> {
                source.leaf_vec(len)
            }
            #[inline]
            fn map_leaves<__F: ::core::ops::FnMut(Self) -> Self>(self, f: &mut __F) -> Self {
                f(self)
            }
            #[inline]
            fn zip_with_prechecked<'__a, const __N: ::core::primitive::usize, __F>(
                &'__a self,
                others: [&'__a Self; __N],
                f: &mut __F,
            ) -> Self
            where
                __F: ::core::ops::FnMut(&'__a Self, [&'__a Self; __N]) -> Self,
            {
                f(self, others)
            }
        }
    };
    ($ns:ty => $($leaf:ty),+ $(,)?) => {
        $( $crate::impl_leaf!(impl [] $ns => $leaf); )+
    };
}
