//! [`impl_leaf!`](crate::impl_leaf): declares types to be leaves of a
//! namespace. `pytree-std` uses it for the primitive types; a user namespace
//! uses it for whatever it treats as a leaf (say, `Vec<f32>` as one tensor).

/// Implements [`Flatten`](crate::Flatten) and [`Unflatten`](crate::Unflatten)
/// for each listed type as a leaf of the namespace.
///
/// ```
/// use pytree_core::{impl_leaf, Flatten};
/// /// A namespace where a `Vec<f32>` is one leaf (a tensor), not a sequence.
/// pub struct Coarse;
/// impl_leaf!(Coarse => Vec<f32>);
/// let (leaves, def) = pytree_core::flatten::<Coarse, _>(vec![1.0f32, 2.0]);
/// assert_eq!(leaves, [vec![1.0, 2.0]]);
/// assert!(def.is_leaf());
/// ```
#[macro_export]
macro_rules! impl_leaf {
    ($ns:ty => $($leaf:ty),+ $(,)?) => {
        $(
            impl $crate::Flatten<$ns> for $leaf {
                type Leaf = $leaf;
                const FIXED_SHAPE: bool = true;
                #[inline]
                fn flatten_into<S: $crate::Sink<Self>>(self, sink: &mut S) {
                    sink.leaf(self)
                }
                #[inline]
                fn visit<'a, V: $crate::Visit<'a, Self>>(&'a self, visitor: &mut V) {
                    visitor.leaf(self)
                }
                #[inline]
                fn visit_mut<V: $crate::VisitMut<Self>>(&mut self, visitor: &mut V) {
                    visitor.leaf(self)
                }
                #[inline]
                fn map_leaves<F: ::core::ops::FnMut(Self) -> Self>(self, f: &mut F) -> Self {
                    f(self)
                }
                #[inline]
                fn zip_check<const N: usize>(
                    &self,
                    _others: [&Self; N],
                ) -> ::core::result::Result<(), $crate::Error> {
                    ::core::result::Result::Ok(())
                }
                #[inline]
                fn zip_with_prechecked<const N: usize, F>(&self, others: [&Self; N], f: &mut F) -> Self
                where
                    F: ::core::ops::FnMut(&Self, [&Self; N]) -> Self,
                {
                    f(self, others)
                }
                #[inline]
                fn zip_mut_prechecked<const N: usize, F>(&mut self, others: [&Self; N], f: &mut F)
                where
                    F: ::core::ops::FnMut(&mut Self, [&Self; N]),
                {
                    f(self, others)
                }
                #[inline]
                fn flatten_vec<S: $crate::Sink<Self>>(items: $crate::__private::Vec<Self>, sink: &mut S) {
                    sink.leaf_vec(items)
                }
                #[inline]
                fn visit_slice<'a, V: $crate::Visit<'a, Self>>(items: &'a [Self], visitor: &mut V) {
                    visitor.leaf_slice(items)
                }
                #[inline]
                fn visit_slice_mut<V: $crate::VisitMut<Self>>(items: &mut [Self], visitor: &mut V) {
                    visitor.leaf_slice(items)
                }
            }
            impl $crate::Unflatten<$ns> for $leaf {
                #[inline]
                fn unflatten_from<S: $crate::Source<Self>>(
                    source: &mut S,
                ) -> ::core::result::Result<Self, $crate::Error> {
                    source.leaf()
                }
                #[inline]
                fn unflatten_vec<S: $crate::Source<Self>>(
                    len: usize,
                    source: &mut S,
                ) -> ::core::result::Result<$crate::__private::Vec<Self>, $crate::Error> {
                    source.leaf_vec(len)
                }
            }
        )+
    };
}
