//! The numbers the optimizers compute with: [`Float`] (the arithmetic type,
//! `f32` or `f64`) and [`FloatElement`] (how a stored element is read into
//! it and written back: `f32`, `f64`, and with the `half` feature `f16` and
//! `bf16`, which compute in `f32`).
//!
//! [`ElementUpdate`]: each element update of the optimizers written once,
//! as one function generic over [`Arith`], the arithmetic it needs. Scalars
//! implement [`Arith`] per element (so a leaf type whose elements the host
//! can reach runs the function in its element loop, where it is inlined
//! and vectorized); a leaf type whose elements live elsewhere implements
//! it for whole tensors (candle's tensors off the CPU: each operation a
//! tensor operation on their device), and runs the same function once.

use core::fmt::Debug;
use core::ops::{Add, AddAssign, Div, Mul, MulAssign, Neg, Sub, SubAssign};

/// The floating-point type an optimizer's element math runs in: `f32` or
/// `f64`. Hyperparameters are `f64` and converted once per step with
/// [`from_f64`](Float::from_f64). Its square root is [`Arith`]'s.
///
/// ```
/// use pytree_std::elements::Float;
/// fn half_of<S: Float>(x: S) -> S { x * S::from_f64(0.5) }
/// assert_eq!(half_of(3.0f32), 1.5);
/// assert_eq!(half_of(3.0f64).sqrt(), 1.5f64.sqrt());
/// ```
pub trait Float:
    Arith<Self>
    + Copy
    + Debug
    + PartialOrd
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
{
    /// Zero.
    const ZERO: Self;
    /// The value nearest to `x` (`x as f32` for `f32`).
    fn from_f64(x: f64) -> Self;
    /// The value as an `f64` (exact).
    fn to_f64(self) -> f64;
}

/// `f`, written over `f64`, as a function over elements of `T`: each
/// widened, computed and rounded back (`from_f64`) in one pass, so the
/// element loops run it in place (split across threads as asked) for a
/// leaf whose elements are not `f64` (`AnyArray`'s, an `f32` candle
/// tensor's).
#[cfg(any(feature = "ndarray", feature = "candle"))]
#[inline]
pub(crate) fn widened<T: Float, const N: usize, const M: usize, F>(
    f: &F,
) -> impl Fn([&mut T; N], [T; M]) + Sync + '_
where
    F: Fn([&mut f64; N], [f64; M]) + Sync,
{
    move |x, y| {
        let mut wide = x.each_ref().map(|v| v.to_f64());
        f(wide.each_mut(), y.map(Float::to_f64));
        for (v, w) in x.into_iter().zip(wide) {
            *v = T::from_f64(w);
        }
    }
}

macro_rules! float {
    ($($t:ty),*) => {$(
        impl Float for $t {
            const ZERO: Self = 0.0;
            #[inline(always)]
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
        }
    )*};
}
float!(f32, f64);

/// A stored float element (of a scalar leaf or an array): read into its
/// [`Compute`](FloatElement::Compute) type, computed with, written back.
/// For `f32` and `f64` both conversions are the identity and vanish; `f16`
/// and `bf16` (feature `half`) compute in `f32` and round on the way back.
///
/// ```
/// use pytree_std::elements::FloatElement;
/// assert_eq!(<f32 as FloatElement>::load(1.5), 1.5f32);
/// assert_eq!(<f64 as FloatElement>::store(2.0), 2.0f64);
/// ```
pub trait FloatElement: Copy + Send + Sync + 'static {
    /// The type the element math runs in.
    type Compute: Float;
    /// Reads an element into the compute type.
    fn load(self) -> Self::Compute;
    /// Writes a computed value back as an element (rounding if narrower).
    fn store(x: Self::Compute) -> Self;

    /// The element loop of [`zip_slices`](crate::elements::zip_slices): `f` on the
    /// elements at each index of slices of one length (the shortest
    /// decides). The default loads each element into a temporary and
    /// stores it back after `f`; `f32` and `f64` lend `f` the elements
    /// themselves, so each store happens where `f` writes, as in a loop
    /// written by hand.
    ///
    /// ```
    /// use pytree_std::elements::FloatElement;
    /// let (mut a, b) = ([1.0f32, 2.0], [10.0f32, 20.0]);
    /// f32::zip_run([&mut a[..]], [&b[..]], &|[a], [b]| *a += b);
    /// assert_eq!(a, [11.0, 22.0]);
    /// ```
    #[inline(always)]
    fn zip_run<const N: usize, const M: usize, F>(muts: [&mut [Self]; N], refs: [&[Self]; M], f: &F)
    where
        F: Fn([&mut Self::Compute; N], [Self::Compute; M]),
    {
        let len = shortest(&muts, &refs);
        let mut muts = muts.map(|s| &mut s[..len]);
        let refs = refs.map(|s| &s[..len]);
        for i in 0..len {
            let mut x: [Self::Compute; N] = core::array::from_fn(|k| muts[k][i].load());
            let y: [Self::Compute; M] = core::array::from_fn(|k| refs[k][i].load());
            f(x.each_mut(), y);
            for (s, x) in muts.iter_mut().zip(x) {
                s[i] = Self::store(x);
            }
        }
    }
}

/// The length of the shortest slice (0 for none).
#[inline(always)]
pub(super) fn shortest<E, const N: usize, const M: usize>(
    muts: &[&mut [E]; N],
    refs: &[&[E]; M],
) -> usize {
    let a = muts.iter().map(|s| s.len()).min();
    let b = refs.iter().map(|s| s.len()).min();
    match (a, b) {
        (Some(a), Some(b)) => a.min(b),
        (Some(x), None) | (None, Some(x)) => x,
        (None, None) => 0,
    }
}

macro_rules! identity_element {
    ($($t:ty),*) => {$(
        impl FloatElement for $t {
            type Compute = $t;
            #[inline(always)]
            fn load(self) -> $t {
                self
            }
            #[inline(always)]
            fn store(x: $t) -> $t {
                x
            }
            /// `f` gets the elements themselves.
            #[inline(always)]
            fn zip_run<const N: usize, const M: usize, F>(muts: [&mut [$t]; N], refs: [&[$t]; M], f: &F)
            where
                F: Fn([&mut $t; N], [$t; M]),
            {
                let len = shortest(&muts, &refs);
                let mut muts = muts.map(|s| &mut s[..len]);
                let refs = refs.map(|s| &s[..len]);
                for i in 0..len {
                    f(muts.each_mut().map(|s| &mut s[i]), refs.map(|s| s[i]));
                }
            }
        }
    )*};
}
identity_element!(f32, f64);

#[cfg(any(feature = "half", feature = "ndarray"))]
mod half_elements {
    use super::FloatElement;
    use half::{bf16, f16};

    macro_rules! half_element {
        ($($t:ty),*) => {$(
            /// Computes in `f32`; rounds to nearest on the way back.
            impl FloatElement for $t {
                type Compute = f32;
                #[inline(always)]
                fn load(self) -> f32 {
                    self.to_f32()
                }
                #[inline(always)]
                fn store(x: f32) -> $t {
                    <$t>::from_f32(x)
                }
            }
        )*};
    }
    half_element!(f16, bf16);
}

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
