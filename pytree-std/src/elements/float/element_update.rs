//! [`ElementUpdate`]: an element update of the optimizers written once,
//! as one function generic over [`Arith`], the arithmetic it needs. Scalars
//! implement [`Arith`] per element (so a leaf type whose elements the host
//! can reach runs the function in its element loop, where it is inlined
//! and vectorized); a leaf type whose elements live elsewhere implements
//! it for whole tensors (candle's tensors off the CPU: each operation a
//! tensor operation on their device), and runs the same function once.

use core::ops::{Add, Div, Mul, Sub};

/// The arithmetic an [`ElementUpdate`] is written in: `+ - * /` between
/// values, and the operations with a constant `K` of the update. `f32`
/// and `f64` implement it for their own type of constants (and `f32` for
/// `f64` constants, rounded at each use); candle tensors for `f64`
/// constants, each operation a whole-tensor one.
///
/// ```
/// use pytree_std::elements::Arith;
/// fn average<T: Arith<f64>>(a: T, b: T) -> T { (a + b).scale(0.5) }
/// assert_eq!(average(1.0f64, 2.0), 1.5);
/// assert_eq!(average(1.0f32, 2.0), 1.5);
/// ```
pub trait Arith<K>:
    Clone + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self>
{
    /// `self * k`.
    fn scale(self, k: K) -> Self;
    /// `self + k`.
    fn shift(self, k: K) -> Self;
    /// `self / k`.
    fn div_by(self, k: K) -> Self;
    /// The square root.
    fn sqrt(self) -> Self;
    /// Zero (of `self`'s shape, for a tensor).
    fn zero(&self) -> Self;
    /// `self * mul + add`: [`scale`](Arith::scale) then
    /// [`shift`](Arith::shift), the same bits; a tensor does it in one
    /// operation (one pass over its memory on the device).
    ///
    /// ```
    /// use pytree_std::elements::Arith;
    /// assert_eq!(Arith::<f64>::affine(2.0f64, 3.0, 1.0), 7.0);
    /// ```
    #[inline(always)]
    fn affine(self, mul: K, add: K) -> Self
    where
        Self: Sized,
    {
        self.scale(mul).shift(add)
    }
}

macro_rules! arith {
    ($($t:ty: $k:ty),*) => {$(
        impl Arith<$k> for $t {
            #[inline(always)]
            fn scale(self, k: $k) -> $t {
                k as $t * self
            }
            #[inline(always)]
            fn shift(self, k: $k) -> $t {
                self + k as $t
            }
            #[inline(always)]
            fn div_by(self, k: $k) -> $t {
                self / k as $t
            }
            #[inline(always)]
            fn sqrt(self) -> $t {
                <$t>::sqrt(self)
            }
            #[inline(always)]
            fn zero(&self) -> $t {
                0.0
            }
        }
    )*};
}
arith!(f32: f32, f64: f64, f32: f64);

/// One element update of the optimizers, written once: `apply` writes the
/// `N` values `muts` from them and the `M` values `refs`, with constants
/// of type `K` (the leaf type's [`Scalar`](crate::elements::FloatLeaf::Scalar)).
/// [`FloatLeaf::zip_update`](crate::elements::FloatLeaf::zip_update) runs
/// it on leaves: per element, or (candle tensors off the CPU) once on
/// whole tensors.
///
/// ```
/// use pytree_std::elements::{Arith, ElementUpdate, Exec, FloatLeaf};
/// /// `y = a * y + x`
/// struct Axpy(f64);
/// impl ElementUpdate<f64, 1, 1> for Axpy {
///     fn apply<T: Arith<f64>>(&self, [y]: [&mut T; 1], [x]: [T; 1]) {
///         *y = y.clone().scale(self.0) + x;
///     }
/// }
/// let (mut y, x) = (1.0f64, 2.0f64);
/// f64::zip_update([&mut y], [&x], Exec::Sequential, &Axpy(0.5))?;
/// assert_eq!(y, 2.5);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub trait ElementUpdate<K, const N: usize, const M: usize>: Sync {
    /// Computes the new `muts` from `muts` and `refs`.
    fn apply<T: Arith<K>>(&self, muts: [&mut T; N], refs: [T; M]);
}
