//! The impls for std types: the containers (sequences, maps, `Option`,
//! tuples, `Rc`/`Arc`, `IndexMap`) are pytree-core's, generic over every
//! namespace that implements [`StdContainers`](pytree_core::StdContainers)
//! (`Std` does, below, and [`std_containers!`](crate::std_containers)
//! makes a user namespace do); leaf types (primitives, and the foreign
//! types behind features) are `Std`'s, one module per family.
//!
//! Types of other crates (the orphan rule allows their impls only here,
//! where `Std` is local): `ndarray`, `candle`, `half`, `nalgebra` and
//! `burn` behind features of the same names.

// Before the modules that use the macro.
#[cfg(any(feature = "candle", feature = "half", feature = "burn"))]
#[macro_use]
mod by_reference;

#[cfg(feature = "burn")]
mod burn;
#[cfg(feature = "burn")]
pub use self::burn::{BurnModule, BurnTensor};
#[cfg(feature = "candle")]
mod candle;
#[cfg(feature = "half")]
mod half;
mod indexmap;
mod leaves;
#[cfg(feature = "nalgebra")]
mod nalgebra;
#[cfg(feature = "ndarray")]
mod ndarray;
#[cfg(feature = "ndarray")]
pub use ndarray::any_array;

#[cfg(any(
    feature = "ndarray",
    feature = "candle",
    feature = "nalgebra",
    feature = "half",
    feature = "burn"
))]
mod shaped;

/// The dtype of an element type: a Rust primitive ([`DType::of`]), with
/// the `half` feature `f16` / `bf16`, else [`DType::Other`] with the
/// type's name.
///
/// [`DType::of`]: pytree_core::DType::of
/// [`DType::Other`]: pytree_core::DType::Other
#[cfg(any(feature = "ndarray", feature = "nalgebra"))]
pub(crate) fn dtype_of<A: 'static>() -> pytree_core::DType {
    if let Some(dtype) = pytree_core::DType::of::<A>() {
        return dtype;
    }
    #[cfg(feature = "half")]
    {
        use std::any::TypeId;
        if TypeId::of::<A>() == TypeId::of::<::half::f16>() {
            return pytree_core::DType::F16;
        }
        if TypeId::of::<A>() == TypeId::of::<::half::bf16>() {
            return pytree_core::DType::BF16;
        }
    }
    pytree_core::DType::Other(std::any::type_name::<A>())
}

/// Gives namespace `$ns` every std container: `Vec`, `VecDeque`, arrays,
/// tuples of 1 to 12, `BTreeMap`, `HashMap`, `Option`, `Rc`, `Arc` (`Box`
/// is every namespace's already), and `IndexMap` (an insertion-ordered
/// map). It expands to one line, `impl StdContainers for $ns {}`: the impls
/// are pytree-core's, generic over the namespace, so no code is copied into
/// your crate (see [`StdContainers`](pytree_core::StdContainers)). With
/// [`impl_leaf!`](crate::impl_leaf) for its leaf types, a user namespace
/// is complete: see [`namespace!`](crate::namespace).
///
/// ```
/// use pytree_std::{Flatten, Visit};
/// pub struct Coarse;
/// pytree_std::std_containers!(Coarse);
/// pytree_std::impl_leaf!(Coarse => f64);
/// struct Sum(f64);
/// impl Visit<&f64> for Sum { fn leaf(&mut self, x: &f64) { self.0 += x } }
/// let mut sum = Sum(0.0);
/// Flatten::<Coarse>::visit(&vec![(Some(1.0f64), 2.0f64)], &mut sum);
/// assert_eq!(sum.0, 3.0);
/// ```
#[macro_export]
macro_rules! std_containers {
    ($ns:ty) => {
        impl $crate::__core::StdContainers for $ns {}
    };
}

std_containers!(crate::std_namespace::Std);

/// Declares a namespace of your own: the marker type, every std container
/// ([`std_containers!`](crate::std_containers)) and your leaf types
/// ([`impl_leaf!`](crate::impl_leaf), lent by reference). A leaf type from
/// a crate this one does not ship (a `tch::Tensor`) needs no newtype: the
/// orphan rule allows `impl Flatten<YourNs> for tch::Tensor` because the
/// namespace is yours. Derive for it with `#[pytree(namespace = YourNs)]`.
/// Every operation works for it through [`generic`](crate::generic) (the
/// engine in `pytree-core`, generic over the namespace), with the
/// namespace named: `generic::basic::flatten::<YourNs, _>(x)`.
///
/// ```
/// use std::num::Wrapping; // stands for a tensor type of another crate
/// use pytree_std::generic::{basic, multi};
/// use pytree_std::PyTree;
///
/// pytree_std::namespace!(pub struct Ring; leaves = [Wrapping<u8>]);
///
/// #[derive(PyTree, Debug, PartialEq)]
/// #[pytree(namespace = Ring)]
/// struct Layer { w: Vec<Wrapping<u8>>, b: Option<Wrapping<u8>> }
///
/// fn main() -> Result<(), pytree_std::Error> {
///     let layer = Layer { w: vec![Wrapping(250), Wrapping(3)], b: Some(Wrapping(7)) };
///     let (leaves, def) = basic::flatten::<Ring, _>(layer);
///     assert_eq!(leaves.len(), 3);
///     assert_eq!(def.to_string(), "Layer { w: [*, *], b: Some(*) }");
///     let back: Layer = basic::unflatten::<Ring, _, _>(&def, leaves)?;
///     let doubled = basic::map::<Ring, _, _>(back, |x| x + x); // wraps around: it is the leaf's own `+`
///     assert_eq!(doubled.w, [Wrapping(244), Wrapping(6)]);
///     let sum = multi::map_n::<Ring, _, 1, _>(&doubled, [&doubled], |a, [b]| a + b)?;
///     assert_eq!(sum.b, Some(Wrapping(28)));
///     Ok(())
/// }
/// ```
#[macro_export]
macro_rules! namespace {
    ($(#[$meta:meta])* $vis:vis struct $name:ident
        $(; leaves = [$($leaf:ty),+ $(,)?])? $(;)?) => {
        $(#[$meta])*
        $vis struct $name;
        $crate::std_containers!($name);
        $( $crate::impl_leaf!($name => $($leaf),+); )?
    };
}
