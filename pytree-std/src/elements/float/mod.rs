//! Optimizer arithmetic: [`FloatLeaf`], the one trait a leaf type
//! implements to be updated by pytree-optim's optimizers (and re-exported
//! there), the numbers it computes with ([`Float`], [`FloatElement`]), the
//! element loops every leaf type ends in ([`zip_slices`], [`sum_slice`],
//! run as [`Exec`] says) and [`ElementUpdate`], an update written once
//! over [`Arith`], for every device. The impls for scalars are below; each foreign crate's (ndarray's
//! `ArrayD<A>` and `AnyArray`, nalgebra's `DMatrix<T>`, candle's `Tensor`
//! and `Var`) are in its file under `impls/`, with everything else that
//! crate's types provide.

pub mod codegen;
mod element;
mod kernel;

#[cfg(any(feature = "ndarray", feature = "candle"))]
pub(crate) use element::widened;
pub use element::{Arith, ElementUpdate};
pub use element::{Float, FloatElement};
#[cfg(any(feature = "candle", feature = "burn"))]
pub(crate) use kernel::zip_host_vecs;
pub use kernel::{avx2_dispatch, sum_slice, zip_slices, Exec, DISPATCH_MIN, GRAIN};

use crate::std_namespace::Std;
use pytree_core::{Error, Flatten, Leaf, LeafMut, LeafRef};

/// The shape every one of `shapes` has (`None` for no shapes), or an
/// error naming the first that differs from the first: the check every
/// `zip_elements` makes before it touches an element.
#[cfg(any(feature = "ndarray", feature = "nalgebra"))]
pub(crate) fn common_shape<S: PartialEq + core::fmt::Debug>(
    mut shapes: impl Iterator<Item = S>,
    what: &str,
) -> Result<Option<S>, Error> {
    let Some(shape) = shapes.next() else {
        return Ok(None);
    };
    match shapes.find(|s| *s != shape) {
        Some(odd) => Err(Error::custom(format!(
            "{what} shape mismatch: expected {shape:?}, found {odd:?}"
        ))),
        None => Ok(Some(shape)),
    }
}

/// A leaf whose elements are floats an optimizer can read and write: the
/// one trait between the optimizers and the leaf types. Every
/// transformation is written with these three functions, so it is written
/// once for every leaf type.
///
/// Implemented for `f32` and `f64` (and with feature `half`, `f16` and
/// `bf16`) scalar leaves, for ndarray's `ArrayD<A>` (feature `ndarray`; the
/// leaf type of every `Array<A, D>`) with those elements, and for candle's
/// `Tensor` and `Var` (feature `candle`, module `candle`).
///
/// [`zip_elements`](FloatLeaf::zip_elements) is the hot path: one fused
/// pass over `N` leaves written and `M` leaves read, the closure called
/// once per element. For arrays in standard layout it is a loop over
/// slices (the loop a human writes); arrays of other layouts are walked in
/// logical order. The optimizers call it through
/// [`zip_update`](FloatLeaf::zip_update) with an [`ElementUpdate`], which
/// candle tensors off the CPU run as tensor operations on their device; the global-norm clip goes through
/// [`clip_on_device`](FloatLeaf::clip_on_device), which keeps
/// the norm on the device for them.
///
/// ```
/// use pytree_std::elements::{Exec, FloatLeaf};
/// let (mut p, g) = (1.0f32, 0.5f32);
/// f32::zip_elements([&mut p], [&g], Exec::Sequential, &|[p], [g]| *p -= 0.1 * g)?;
/// assert_eq!(p, 0.95);
/// assert_eq!(f32::sum_elements(&3.0, Exec::Sequential, &|x| f64::from(x * x))?, 9.0);
/// assert_eq!(f32::zeros_like(&p)?, 0.0);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub trait FloatLeaf: Leaf<Std> {
    /// The type the element math runs in (`f32` for `f32`, `f16` and `bf16`
    /// data, `f64` for `f64` data and for candle tensors).
    type Scalar: Float;

    /// Calls `f([element of each mutable leaf], [element of each shared
    /// leaf])` for every element position, writing the mutable elements
    /// back. The leaves must have the same shape: otherwise an error, and
    /// nothing changes.
    ///
    /// ```
    /// use pytree_std::elements::{Exec, FloatLeaf};
    /// let (mut m, g) = (0.0f64, 2.0f64);
    /// f64::zip_elements([&mut m], [&g], Exec::Sequential, &|[m], [g]| *m = 0.9 * *m + 0.1 * g)?;
    /// assert_eq!(m, 0.2);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn zip_elements<const N: usize, const M: usize, F>(
        muts: [LeafMut<'_, Std, Self>; N],
        refs: [LeafRef<'_, Std, Self>; M],
        exec: Exec,
        f: &F,
    ) -> Result<(), Error>
    where
        F: Fn([&mut Self::Scalar; N], [Self::Scalar; M]) + Sync;

    /// The sum of `f(element)` over the leaf's elements, in `f64`.
    ///
    /// ```
    /// use pytree_std::elements::{Exec, FloatLeaf};
    /// assert_eq!(f64::sum_elements(&-2.0, Exec::Sequential, &|x: f64| x.abs())?, 2.0);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn sum_elements<F>(leaf: LeafRef<'_, Std, Self>, exec: Exec, f: &F) -> Result<f64, Error>
    where
        F: Fn(Self::Scalar) -> f64 + Sync;

    /// A leaf of the same shape (and dtype, and device) filled with zeros,
    /// for optimizer state; an error for a leaf that is not float.
    ///
    /// ```
    /// use pytree_std::elements::FloatLeaf;
    /// assert_eq!(f64::zeros_like(&7.0)?, 0.0);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn zeros_like(leaf: LeafRef<'_, Std, Self>) -> Result<Self, Error>;

    /// Runs `update` on every element position of the leaves (see
    /// [`zip_elements`](FloatLeaf::zip_elements)). The default runs it per
    /// element; candle tensors off the CPU run it once, on whole tensors,
    /// as tensor operations on their device.
    ///
    /// ```
    /// use pytree_std::elements::{Arith, ElementUpdate, Exec, FloatLeaf};
    /// struct Halve;
    /// impl ElementUpdate<f32, 1, 0> for Halve {
    ///     fn apply<T: Arith<f32>>(&self, [u]: [&mut T; 1], []: [T; 0]) {
    ///         *u = u.clone().scale(0.5);
    ///     }
    /// }
    /// let mut u = 4.0f32;
    /// f32::zip_update([&mut u], [], Exec::Sequential, &Halve)?;
    /// assert_eq!(u, 2.0);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[inline]
    fn zip_update<const N: usize, const M: usize, U>(
        muts: [LeafMut<'_, Std, Self>; N],
        refs: [LeafRef<'_, Std, Self>; M],
        exec: Exec,
        update: &U,
    ) -> Result<(), Error>
    where
        U: ElementUpdate<Self::Scalar, N, M>,
    {
        Self::zip_elements(muts, refs, exec, &move |ms, rs| update.apply(ms, rs))
    }

    /// Scales the leaves of `updates` where `selected(i)` holds (`i` the
    /// leaf's index, leaf order) so that their
    /// global L2 norm is at most `max_norm` (each element `u` becomes
    /// `u / n * max_norm` when the norm `n` is `max_norm` or more) on the
    /// leaves' own device, and returns `true`; or returns `false`, having
    /// changed nothing, where the host path applies (the norm summed in
    /// `f64` with [`sum_elements`](FloatLeaf::sum_elements), then a scaling
    /// pass: what pytree-optim's `clip_by_global_norm` does then, and what
    /// it does, without asking, when a norm is summed over processes). The
    /// default is `false`; candle tensors off the CPU keep the norm and the
    /// factor on their device, and so do those in CPU memory under
    /// [`Exec::TensorOps`]. `params` and `updates` have the same
    /// structure (the caller checks it).
    ///
    /// ```
    /// use pytree_std::elements::{Exec, FloatLeaf};
    /// let params = vec![0.0f32; 2];
    /// let mut u = vec![3.0f32, 4.0];
    /// assert!(!f32::clip_on_device(&params, &mut u, &|_| true, 1.0, Exec::Sequential)?);
    /// assert_eq!(u, [3.0, 4.0]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn clip_on_device<P>(
        params: &P,
        updates: &mut P,
        selected: &dyn Fn(usize) -> bool,
        max_norm: f64,
        exec: Exec,
    ) -> Result<bool, Error>
    where
        P: Flatten<Std, Leaf = Self>,
        Self: Sized,
    {
        let _ = (params, updates, selected, max_norm, exec);
        Ok(false)
    }

    /// Whether two leaves of this type can share memory (see
    /// [`shares_memory`](FloatLeaf::shares_memory)); when false (the
    /// default) the optimizers never compare leaves.
    ///
    /// ```
    /// assert!(!<f64 as pytree_std::elements::FloatLeaf>::MAY_SHARE_MEMORY);
    /// ```
    const MAY_SHARE_MEMORY: bool = false;

    /// Whether two leaves are views of the same memory, so that writing
    /// one writes the other (a candle variable held by two fields). The
    /// optimizers update such leaves once, at their first position in leaf
    /// order. The default (values, arrays) is `false`.
    ///
    /// ```
    /// use pytree_std::elements::FloatLeaf;
    /// assert!(!f32::shares_memory(&1.0, &1.0));
    /// ```
    #[inline]
    fn shares_memory(a: LeafRef<'_, Std, Self>, b: LeafRef<'_, Std, Self>) -> bool {
        let _ = (a, b);
        false
    }

    /// Makes `leaf` hold memory of its own, so that writing it changes no
    /// other value: what a copy of a tree needs after `Clone` when the
    /// leaves [may share memory](FloatLeaf::MAY_SHARE_MEMORY) (a candle
    /// tensor's clone shares its storage, and the optimizers write in
    /// place: it becomes `Tensor::copy()`). The default (values, arrays,
    /// whose clones own their elements) does nothing.
    ///
    /// ```
    /// use pytree_std::elements::FloatLeaf;
    /// let mut x = 2.0f32;
    /// f32::unshare(&mut x)?;
    /// assert_eq!(x, 2.0);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[inline]
    fn unshare(leaf: LeafMut<'_, Std, Self>) -> Result<(), Error> {
        let _ = leaf;
        Ok(())
    }
}

/// `Some` of every element if all are `Some`.
#[cfg(any(feature = "ndarray", feature = "nalgebra"))]
#[inline(always)]
pub(crate) fn all_some<T, const N: usize>(xs: [Option<T>; N]) -> Option<[T; N]> {
    pytree_core::__private::all_some(xs)
}

/// The element loop over leaves whose memory is not one slice each (an
/// array of mixed layouts, a strided matrix view): `f` on the elements at
/// each step of `N` iterators of written and `M` of read elements, all in
/// one order (their logical order), until the first ends.
#[cfg(any(feature = "ndarray", feature = "nalgebra"))]
#[inline]
pub(crate) fn zip_element_iters<'e, A, I, J, const N: usize, const M: usize, F>(
    muts: [I; N],
    refs: [J; M],
    f: &F,
) where
    A: FloatElement + 'e,
    I: Iterator<Item = &'e mut A>,
    J: Iterator<Item = &'e A>,
    F: Fn([&mut A::Compute; N], [A::Compute; M]),
{
    let mut mi = muts;
    let mut ri = refs;
    while let (Some(ms), Some(rs)) = (
        all_some(mi.each_mut().map(Iterator::next)),
        all_some(ri.each_mut().map(Iterator::next)),
    ) {
        let mut x = ms.each_ref().map(|m| m.load());
        f(x.each_mut(), rs.map(|r| r.load()));
        for (m, x) in ms.into_iter().zip(x) {
            *m = A::store(x);
        }
    }
}

macro_rules! scalar_leaf {
    ($($t:ty),*) => {$(
        impl FloatLeaf for $t {
            type Scalar = <$t as FloatElement>::Compute;

            #[inline(always)]
            fn zip_elements<const N: usize, const M: usize, F>(
                muts: [&mut $t; N],
                refs: [&$t; M],
                _exec: Exec,
                f: &F,
            ) -> Result<(), Error>
            where
                F: Fn([&mut Self::Scalar; N], [Self::Scalar; M]) + Sync,
            {
                let mut x = muts.each_ref().map(|m| m.load());
                f(x.each_mut(), refs.map(|r| r.load()));
                for (m, x) in muts.into_iter().zip(x) {
                    *m = <$t as FloatElement>::store(x);
                }
                Ok(())
            }

            #[inline(always)]
            fn sum_elements<F>(leaf: &$t, _exec: Exec, f: &F) -> Result<f64, Error>
            where
                F: Fn(Self::Scalar) -> f64 + Sync,
            {
                Ok(f(leaf.load()))
            }

            #[inline]
            fn zeros_like(_leaf: &$t) -> Result<$t, Error> {
                Ok(<$t as FloatElement>::store(<Self::Scalar as Float>::ZERO))
            }
        }
    )*};
}
scalar_leaf!(f32, f64);
#[cfg(feature = "half")]
scalar_leaf!(half::f16, half::bf16);
