//! The numbers the optimizers compute with: [`Float`] (the arithmetic type,
//! `f32` or `f64`) and [`FloatElement`] (how a stored element is read into
//! it and written back: `f32`, `f64`, and with the `half` feature `f16` and
//! `bf16`, which compute in `f32`).

use core::fmt::Debug;
use core::ops::{Add, AddAssign, Div, Mul, MulAssign, Neg, Sub, SubAssign};

/// The floating-point type an optimizer's element math runs in: `f32` or
/// `f64`. Hyperparameters are `f64` and converted once per step with
/// [`from_f64`](Float::from_f64).
///
/// ```
/// use pytree_optim::Float;
/// fn half_of<S: Float>(x: S) -> S { x * S::from_f64(0.5) }
/// assert_eq!(half_of(3.0f32), 1.5);
/// assert_eq!(half_of(3.0f64).sqrt(), 1.5f64.sqrt());
/// ```
pub trait Float:
    Copy
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
    /// The square root (`f32::sqrt`, `f64::sqrt`).
    fn sqrt(self) -> Self;
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
            #[inline(always)]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
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
/// use pytree_optim::FloatElement;
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
        }
    )*};
}
identity_element!(f32, f64);

#[cfg(feature = "half")]
mod half_elements {
    use super::FloatElement;
    use pytree_std::half::{bf16, f16};

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
