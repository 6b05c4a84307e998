//! `tree_equal` (equinox's `tree_equal(x, y, rtol=, atol=)`): two trees are
//! equal when their structures are equal and their leaves are pairwise
//! close, under a [`Tolerance`] for float leaves ([`ApproxEq`]).

use pytree_core::{Flatten, LeafRef};

use crate::std_namespace::Std;

/// How close two float leaves must be: `|a - b| <= atol + rtol * |b|`
/// (NumPy's `allclose`). [`Tolerance::EXACT`] (both zero) asks for `a == b`.
///
/// ```
/// use pytree_std::elements::Tolerance;
/// let tol = Tolerance::new(1e-5, 1e-8);
/// assert_eq!(tol.rtol, 1e-5);
/// assert_eq!(Tolerance::EXACT, Tolerance::new(0.0, 0.0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// Relative tolerance, a fraction of `|b|`.
    pub rtol: f64,
    /// Absolute tolerance.
    pub atol: f64,
}

impl Tolerance {
    /// Exact equality.
    pub const EXACT: Tolerance = Tolerance {
        rtol: 0.0,
        atol: 0.0,
    };

    /// A tolerance of `rtol` (relative) and `atol` (absolute).
    ///
    /// ```
    /// let tol = pytree_std::elements::Tolerance::new(0.0, 0.5);
    /// assert_eq!(tol.atol, 0.5);
    /// ```
    pub const fn new(rtol: f64, atol: f64) -> Self {
        Tolerance { rtol, atol }
    }

    /// True if `a` and `b` are within the tolerance: equal, or both finite
    /// with `|a - b| <= atol + rtol * |b|`. As in NumPy's `isclose`, an
    /// infinity is close only to itself and NaN to nothing, not even NaN.
    ///
    /// ```
    /// use pytree_std::elements::Tolerance;
    /// assert!(Tolerance::new(0.0, 0.1).close(1.0, 1.05));
    /// assert!(!Tolerance::EXACT.close(1.0, 1.05));
    /// assert!(Tolerance::new(0.1, 0.0).close(100.0, 109.0));
    /// assert!(!Tolerance::new(1.0, 1.0).close(f64::NAN, f64::NAN));
    /// assert!(Tolerance::EXACT.close(f64::INFINITY, f64::INFINITY));
    /// assert!(!Tolerance::new(1.0, 1.0).close(f64::INFINITY, f64::NEG_INFINITY));
    /// assert!(!Tolerance::new(1.0, 1.0).close(1e300, f64::INFINITY));
    /// ```
    pub fn close(&self, a: f64, b: f64) -> bool {
        a == b || (a.is_finite() && b.is_finite() && abs(a - b) <= self.atol + self.rtol * abs(b))
    }
}

/// `|x|` without `std` (a NaN stays NaN, so it compares false).
fn abs(x: f64) -> f64 {
    if x < 0.0 {
        -x
    } else {
        x
    }
}

/// Leaf equality under a [`Tolerance`]: floats compare with it, other
/// leaves exactly; arrays and tensors (features `ndarray`, `candle`)
/// elementwise, after comparing shapes. Implement it for your own leaf
/// types to use them with `tree_equal` (a reference compares as what it
/// points to, so `&T` leaves lent by reference need nothing more).
///
/// ```
/// use pytree_std::{elements::ApproxEq, elements::Tolerance};
/// assert!(1.0f32.approx_eq(&1.01, Tolerance::new(0.0, 0.1)));
/// assert!(!3u8.approx_eq(&4, Tolerance::new(1.0, 1.0))); // integers are exact
/// ```
pub trait ApproxEq {
    /// True if `self` and `other` are equal within `tol`.
    fn approx_eq(&self, other: &Self, tol: Tolerance) -> bool;
}

impl<T: ApproxEq + ?Sized> ApproxEq for &T {
    #[inline]
    fn approx_eq(&self, other: &Self, tol: Tolerance) -> bool {
        (**self).approx_eq(*other, tol)
    }
}

impl ApproxEq for f64 {
    #[inline]
    fn approx_eq(&self, other: &Self, tol: Tolerance) -> bool {
        tol.close(*self, *other)
    }
}

impl ApproxEq for f32 {
    #[inline]
    fn approx_eq(&self, other: &Self, tol: Tolerance) -> bool {
        tol.close(f64::from(*self), f64::from(*other))
    }
}

/// Exact equality for leaves without a notion of closeness.
macro_rules! exact_approx_eq {
    ($($t:ty),* $(,)?) => {$(
        impl ApproxEq for $t {
            #[inline]
            fn approx_eq(&self, other: &Self, _tol: Tolerance) -> bool {
                self == other
            }
        }
    )*};
}

exact_approx_eq!(
    bool, char, u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, String,
);

/// True if `a` and `b` have equal structures (TreeDefs: nodes, lengths,
/// keys, static data) and pairwise close leaves (equinox's `tree_equal`
/// with `rtol` / `atol`). The trees may be of different types with the same
/// leaf type; their TreeDefs decide. Leaves are compared as they are lent
/// ([`LeafRef`]): `&f32` for scalars, views for arrays.
///
/// ```
/// use pytree_std::elements::Tolerance;
/// let a = (1.0f64, vec![2.0, 3.0]);
/// let b = (1.0f64, vec![2.0, 3.000001]);
/// assert!(!pytree_std::elements::tree_equal(&a, &b, Tolerance::EXACT));
/// assert!(pytree_std::elements::tree_equal(&a, &b, Tolerance::new(1e-5, 1e-8)));
/// assert!(!pytree_std::elements::tree_equal(&a, &(1.0, vec![2.0]), Tolerance::new(1.0, 1.0)));
/// ```
pub fn tree_equal<'a, A, B>(a: &'a A, b: &'a B, tol: Tolerance) -> bool
where
    A: Flatten<Std>,
    B: Flatten<Std, Leaf = A::Leaf>,
    LeafRef<'a, Std, A::Leaf>: ApproxEq,
{
    if pytree_core::ops::basic::structure::<Std, A>(a)
        != pytree_core::ops::basic::structure::<Std, B>(b)
    {
        return false;
    }
    let (xs, ys) = (
        pytree_core::ops::basic::leaves::<Std, A>(a),
        pytree_core::ops::basic::leaves::<Std, B>(b),
    );
    xs.len() == ys.len() && xs.iter().zip(&ys).all(|(x, y)| x.approx_eq(y, tol))
}
