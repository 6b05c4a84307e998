//! [`FloatLeaf`]: the one trait a leaf type implements to be updated by
//! the optimizers, and its impls for scalars and ndarray arrays (candle's
//! are in module `candle`, nalgebra's in `nalgebra.rs`: the orphan rule
//! puts them in this crate, where the trait is).

use pytree_std::{Error, Flatten, Leaf, LeafMut, LeafRef, Std};

use crate::element::{Float, FloatElement};
use crate::gradient_transformation::{sum_squares, walk, NoOff, Scalar};
use crate::kernel::Exec;
use crate::mask::LeafMask;
use crate::op::ElementOp;

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
/// [`zip_op`](FloatLeaf::zip_op), which also names the update
/// ([`ElementOp`]), so that candle tensors off the CPU run it as tensor
/// operations on their device; the global-norm clip goes through
/// [`clip_by_global_norm`](FloatLeaf::clip_by_global_norm), which keeps
/// the norm on the device for them.
///
/// ```
/// use pytree_optim::{Exec, FloatLeaf};
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
    /// use pytree_optim::{Exec, FloatLeaf};
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
    /// use pytree_optim::{Exec, FloatLeaf};
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
    /// use pytree_optim::FloatLeaf;
    /// assert_eq!(f64::zeros_like(&7.0)?, 0.0);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn zeros_like(leaf: LeafRef<'_, Std, Self>) -> Result<Self, Error>;

    /// [`zip_elements`](FloatLeaf::zip_elements) with the same update also
    /// named by `op`, for leaf types that compute it another way (candle
    /// tensors off the CPU: as tensor operations on their device). The
    /// default runs the closure.
    ///
    /// ```
    /// use pytree_optim::{ElementOp, Exec, FloatLeaf};
    /// let mut u = 4.0f32;
    /// f32::zip_op([&mut u], [], Exec::Sequential, &|[u], []| *u *= 0.5, &ElementOp::Scale { factor: 0.5 })?;
    /// assert_eq!(u, 2.0);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[inline]
    fn zip_op<const N: usize, const M: usize, F>(
        muts: [LeafMut<'_, Std, Self>; N],
        refs: [LeafRef<'_, Std, Self>; M],
        exec: Exec,
        f: &F,
        op: &ElementOp,
    ) -> Result<(), Error>
    where
        F: Fn([&mut Self::Scalar; N], [Self::Scalar; M]) + Sync,
    {
        let _ = op;
        Self::zip_elements(muts, refs, exec, f)
    }

    /// Scales the leaves of `updates` where `mask` holds so that their
    /// global L2 norm is at most `max_norm` (each element `u` becomes
    /// `u / n * max_norm` when the norm `n` is `max_norm` or more), after
    /// checking `updates` against `params` (structure and leaf shapes: on
    /// a mismatch nothing changes). The default sums the squares in `f64`
    /// on the host; candle tensors keep the norm and the factor on their
    /// device.
    ///
    /// ```
    /// use pytree_optim::{Exec, FloatLeaf, Mask};
    /// let params = vec![0.0f32; 2];
    /// let mut u = vec![3.0f32, 4.0];
    /// f32::clip_by_global_norm(&params, &mut u, &Mask::all().on(&params), 1.0, Exec::Sequential)?;
    /// assert_eq!(u, [0.6, 0.8]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    fn clip_by_global_norm<P>(
        params: &P,
        updates: &mut P,
        mask: &LeafMask,
        max_norm: f64,
        exec: Exec,
    ) -> Result<(), Error>
    where
        P: Flatten<Std, Leaf = Self>,
        Self: Sized,
    {
        clip_on_host(params, updates, mask, max_norm, exec)
    }

    /// Whether two leaves of this type can share memory (see
    /// [`shares_memory`](FloatLeaf::shares_memory)); when false (the
    /// default) the optimizers never compare leaves.
    ///
    /// ```
    /// assert!(!<f64 as pytree_optim::FloatLeaf>::MAY_SHARE_MEMORY);
    /// ```
    const MAY_SHARE_MEMORY: bool = false;

    /// Whether two leaves are views of the same memory, so that writing
    /// one writes the other (a candle variable held by two fields). The
    /// optimizers update such leaves once, at their first position in leaf
    /// order. The default (values, arrays) is `false`.
    ///
    /// ```
    /// use pytree_optim::FloatLeaf;
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
    /// use pytree_optim::FloatLeaf;
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

/// A copy of `tree` whose leaves share no memory with it (`Clone`, then
/// [`FloatLeaf::unshare`] where leaves may share memory): writing the copy
/// in place leaves `tree` as it was.
pub(crate) fn copy_tree<P>(tree: &P) -> Result<P, Error>
where
    P: Flatten<Std> + Clone,
    P::Leaf: FloatLeaf,
{
    let mut copy = tree.clone();
    if <P::Leaf as FloatLeaf>::MAY_SHARE_MEMORY {
        pytree_std::walk::for_each_mut(&mut copy, |leaf| {
            P::Leaf::unshare(leaf).map_err(|e| e.kind().to_string())
        })?;
    }
    Ok(copy)
}

/// `Some` of every element if all are `Some`.
#[cfg(any(feature = "ndarray", feature = "nalgebra"))]
#[inline(always)]
pub(crate) fn all_some<T, const N: usize>(xs: [Option<T>; N]) -> Option<[T; N]> {
    pytree_std::__private::all_some(xs)
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
scalar_leaf!(pytree_std::half::f16, pytree_std::half::bf16);

#[cfg(feature = "ndarray")]
mod arrays {
    use pytree_std::ndarray::{ArrayD, ArrayViewD, ArrayViewMutD, ShapeBuilder};
    use pytree_std::Error;

    use super::{all_some, common_shape, zip_element_iters, FloatLeaf};
    use crate::element::FloatElement;
    use crate::kernel::{sum_slice, zip_slices, Exec};

    /// Arrays of any rank (`ArrayD<A>` is the leaf type of every
    /// `Array<A, D>`). Arrays in standard layout, or all with the same
    /// strides over contiguous memory, are one loop over slices; others
    /// are walked element by element in logical order.
    impl<A: FloatElement + Default> FloatLeaf for ArrayD<A> {
        type Scalar = A::Compute;

        #[inline]
        fn zip_elements<const N: usize, const M: usize, F>(
            muts: [ArrayViewMutD<'_, A>; N],
            refs: [ArrayViewD<'_, A>; M],
            exec: Exec,
            f: &F,
        ) -> Result<(), Error>
        where
            F: Fn([&mut A::Compute; N], [A::Compute; M]) + Sync,
        {
            let shapes = muts.iter().map(|m| m.shape());
            if common_shape(shapes.chain(refs.iter().map(|r| r.shape())), "array")?.is_none() {
                return Ok(());
            }
            let standard = muts.iter().all(|m| m.is_standard_layout())
                && refs.iter().all(|r| r.is_standard_layout());
            let strides = match (muts.first(), refs.first()) {
                (Some(m), _) => m.strides(),
                (None, Some(r)) => r.strides(),
                (None, None) => &[],
            };
            let same_contiguous = muts
                .iter()
                .all(|m| m.strides() == strides && m.as_slice_memory_order().is_some())
                && refs
                    .iter()
                    .all(|r| r.strides() == strides && r.as_slice_memory_order().is_some());
            if standard || same_contiguous {
                let ms = all_some(muts.map(|m| m.into_slice_memory_order()));
                let rs = all_some(refs.map(|r| r.to_slice_memory_order()));
                if let (Some(ms), Some(rs)) = (ms, rs) {
                    zip_slices(ms, rs, exec, f);
                    return Ok(());
                }
                return Err(Error::custom("array memory is not contiguous"));
            }
            // Mixed layouts: element by element in logical order.
            zip_element_iters(muts.map(|m| m.into_iter()), refs.map(|r| r.into_iter()), f);
            Ok(())
        }

        #[inline]
        fn sum_elements<F>(leaf: ArrayViewD<'_, A>, exec: Exec, f: &F) -> Result<f64, Error>
        where
            F: Fn(A::Compute) -> f64 + Sync,
        {
            Ok(match leaf.to_slice_memory_order() {
                Some(s) => sum_slice(s, exec, f),
                None => leaf.iter().map(|x| f(x.load())).sum(),
            })
        }

        /// Zeros in the leaf's memory order (column-major for a
        /// column-major leaf), so that state and parameters share strides
        /// and the update stays one loop over slices.
        fn zeros_like(leaf: ArrayViewD<'_, A>) -> Result<ArrayD<A>, Error> {
            let fortran =
                leaf.ndim() > 1 && !leaf.is_standard_layout() && leaf.t().is_standard_layout();
            Ok(if fortran {
                ArrayD::from_elem(leaf.raw_dim().f(), A::default())
            } else {
                ArrayD::from_elem(leaf.raw_dim(), A::default())
            })
        }
    }
}

/// [`AnyArray`](pytree_std::AnyArray): a model with several dtypes (f32
/// weights, an i64 `position_ids` buffer, a bool mask) in one tree. Its
/// float variants (f32, f64, f16, bf16) are updated, through the typed
/// arrays' kernels with the element math in f64 (`Scalar = f64`, as for
/// candle tensors); its integer and bool variants are left alone, as
/// candle's are: an update whose arrays to write are all integer or bool
/// does nothing, they add nothing to a norm, and their state is zeros of
/// their own dtype. Arrays of one update must share a dtype and shape.
#[cfg(feature = "ndarray")]
mod any_arrays {
    use pytree_std::half::{bf16, f16};
    use pytree_std::ndarray::{ArrayD, ArrayViewD};
    use pytree_std::{AnyArray, AnyArrayView, AnyArrayViewMut, AnyElement, DType, Error};

    use super::{all_some, FloatLeaf};
    use crate::element::{Float, FloatElement};
    use crate::kernel::Exec;

    fn is_float(d: DType) -> bool {
        matches!(d, DType::F32 | DType::F64 | DType::F16 | DType::BF16)
    }

    /// The update on the typed arrays of `A`s, the element math in f64.
    fn zip_typed<A, const N: usize, const M: usize, F>(
        muts: [AnyArrayViewMut<'_>; N],
        refs: [AnyArrayView<'_>; M],
        exec: Exec,
        f: &F,
    ) -> Result<(), Error>
    where
        A: AnyElement + FloatElement + Default,
        F: Fn([&mut f64; N], [f64; M]) + Sync,
    {
        let wrong = || Error::custom(format!("array dtype mismatch: expected {}", A::DTYPE));
        let ms = all_some(muts.map(A::view_mut_of)).ok_or_else(wrong)?;
        let rs = all_some(refs.map(A::view_of)).ok_or_else(wrong)?;
        <ArrayD<A> as FloatLeaf>::zip_elements(
            ms,
            rs,
            exec,
            &|x: [&mut A::Compute; N], y: [A::Compute; M]| {
                let mut xf = x.each_ref().map(|v| v.to_f64());
                f(xf.each_mut(), y.map(Float::to_f64));
                for (v, n) in x.into_iter().zip(xf) {
                    *v = <A::Compute as Float>::from_f64(n);
                }
            },
        )
    }

    /// The sum over the typed array of `A`s.
    fn sum_typed<A, F>(leaf: AnyArrayView<'_>, exec: Exec, f: &F) -> Result<f64, Error>
    where
        A: AnyElement + FloatElement + Default,
        F: Fn(f64) -> f64 + Sync,
    {
        match A::view_of(leaf) {
            Some(a) => {
                <ArrayD<A> as FloatLeaf>::sum_elements(a, exec, &|x: A::Compute| f(x.to_f64()))
            }
            None => Err(Error::custom(format!(
                "array dtype mismatch: expected {}",
                A::DTYPE
            ))),
        }
    }

    /// Zeros of the view's dtype and shape (the typed kernels' layout).
    fn zeros_typed<A: AnyElement + Default>(leaf: ArrayViewD<'_, A>) -> AnyArray {
        A::into_any(ArrayD::from_elem(leaf.raw_dim(), A::default()))
    }

    /// Integer and bool arrays are left alone; see the module docs.
    ///
    /// ```
    /// use pytree_optim::{adam, GradientTransformation};
    /// use pytree_std::ndarray::array;
    /// use pytree_std::{AnyArray, PyTree};
    /// #[derive(PyTree, Clone, Debug, PartialEq)]
    /// struct M { w: AnyArray, ids: AnyArray }
    /// let mut p = M { w: array![1.0f32, 2.0].into(), ids: array![0i64, 1].into() };
    /// let mut g = M { w: array![0.5f32, -0.5].into(), ids: array![0i64, 0].into() };
    /// let opt = adam(0.1);
    /// let mut state = opt.init(&p)?;
    /// opt.step(&mut p, &mut g, &mut state)?;
    /// assert_eq!(p.ids, AnyArray::from(array![0i64, 1]));
    /// assert_ne!(p.w, AnyArray::from(array![1.0f32, 2.0]));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    impl FloatLeaf for AnyArray {
        type Scalar = f64;

        fn zip_elements<const N: usize, const M: usize, F>(
            muts: [AnyArrayViewMut<'_>; N],
            refs: [AnyArrayView<'_>; M],
            exec: Exec,
            f: &F,
        ) -> Result<(), Error>
        where
            F: Fn([&mut f64; N], [f64; M]) + Sync,
        {
            let (dtype, shape) = match (muts.first(), refs.first()) {
                (Some(m), _) => (m.dtype(), m.shape().to_vec()),
                (None, Some(r)) => (r.dtype(), r.shape().to_vec()),
                (None, None) => return Ok(()),
            };
            if N > 0 && muts.iter().all(|m| !is_float(m.dtype())) {
                return Ok(());
            }
            let others = muts
                .iter()
                .map(|m| (m.dtype(), m.shape()))
                .chain(refs.iter().map(|r| (r.dtype(), r.shape())));
            for (d, s) in others {
                if d != dtype || s != shape.as_slice() {
                    return Err(Error::custom(format!(
                        "array mismatch: expected {dtype}{shape:?}, found {d}{s:?}"
                    )));
                }
            }
            match dtype {
                DType::F32 => zip_typed::<f32, N, M, F>(muts, refs, exec, f),
                DType::F64 => zip_typed::<f64, N, M, F>(muts, refs, exec, f),
                DType::F16 => zip_typed::<f16, N, M, F>(muts, refs, exec, f),
                DType::BF16 => zip_typed::<bf16, N, M, F>(muts, refs, exec, f),
                other => Err(Error::custom(format!(
                    "expected a float array, found dtype {other} with shape {shape:?}"
                ))),
            }
        }

        fn sum_elements<F>(leaf: AnyArrayView<'_>, exec: Exec, f: &F) -> Result<f64, Error>
        where
            F: Fn(f64) -> f64 + Sync,
        {
            match leaf.dtype() {
                DType::F32 => sum_typed::<f32, F>(leaf, exec, f),
                DType::F64 => sum_typed::<f64, F>(leaf, exec, f),
                DType::F16 => sum_typed::<f16, F>(leaf, exec, f),
                DType::BF16 => sum_typed::<bf16, F>(leaf, exec, f),
                _ => Ok(0.0),
            }
        }

        fn zeros_like(leaf: AnyArrayView<'_>) -> Result<AnyArray, Error> {
            Ok(match leaf {
                AnyArrayView::F32(a) => AnyArray::F32(<ArrayD<f32> as FloatLeaf>::zeros_like(a)?),
                AnyArrayView::F64(a) => AnyArray::F64(<ArrayD<f64> as FloatLeaf>::zeros_like(a)?),
                AnyArrayView::F16(a) => AnyArray::F16(<ArrayD<f16> as FloatLeaf>::zeros_like(a)?),
                AnyArrayView::BF16(a) => {
                    AnyArray::BF16(<ArrayD<bf16> as FloatLeaf>::zeros_like(a)?)
                }
                AnyArrayView::I64(a) => zeros_typed(a),
                AnyArrayView::I32(a) => zeros_typed(a),
                AnyArrayView::U8(a) => zeros_typed(a),
                AnyArrayView::Bool(a) => zeros_typed(a),
            })
        }
    }
}

/// [`FloatLeaf::clip_by_global_norm`]'s default: the norm summed in `f64`
/// by [`FloatLeaf::sum_elements`], then a scaling pass.
pub(crate) fn clip_on_host<P>(
    params: &P,
    updates: &mut P,
    mask: &LeafMask,
    max_norm: f64,
    exec: Exec,
) -> Result<(), Error>
where
    P: Flatten<Std>,
    P::Leaf: FloatLeaf,
{
    // The norm pass also checks the updates against the parameters,
    // before anything is written.
    let norm = sum_squares(params, updates, mask, exec)?.sqrt();
    if norm < max_norm {
        return Ok(());
    }
    let n = Scalar::<P>::from_f64(norm);
    let max = Scalar::<P>::from_f64(max_norm);
    let factor = max_norm / norm;
    walk(
        [updates],
        [],
        mask,
        exec,
        (&|[u], []| *u = *u / n * max, &ElementOp::Scale { factor }),
        None::<(&NoOff<P, 1, 0>, &ElementOp)>,
    )
}
