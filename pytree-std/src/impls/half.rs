//! `half::f16` and `half::bf16` as scalar leaves (feature `half`), lent by
//! reference like the primitive floats, with the 0-d signatures `f16[]`
//! and `bf16[]`; `ApproxEq` compares them as `f32`; each ravels as one
//! element of its own type:
//!
//! ```
//! use pytree_std::half::{bf16, f16};
//! let t = (f16::from_f32(1.5), vec![f16::from_f32(2.0)]);
//! let (flat, plan) = pytree_std::elements::ravel(&t)?;
//! assert_eq!(flat, [f16::from_f32(1.5), f16::from_f32(2.0)]);
//! assert_eq!(plan.unravel(&flat)?, t);
//! let (flat, _) = pytree_std::elements::ravel(&[bf16::ONE])?;
//! assert_eq!(flat, [bf16::ONE]);
//! # Ok::<(), pytree_std::Error>(())
//! ```

use half::{bf16, f16};

use crate::{elements::ApproxEq, elements::Tolerance};

leaf_by_reference!(scalar f16 => pytree_core::DType::F16);
leaf_by_reference!(scalar bf16 => pytree_core::DType::BF16);

/// Within the tolerance, compared as `f32` (exactly representable).
///
/// ```
/// use pytree_std::half::f16;
/// use pytree_std::{elements::ApproxEq, elements::Tolerance};
/// let (a, b) = (f16::from_f32(1.0), f16::from_f32(1.001));
/// assert!(!a.approx_eq(&b, Tolerance::EXACT));
/// assert!(a.approx_eq(&b, Tolerance::new(0.0, 1e-2)));
/// ```
impl ApproxEq for f16 {
    #[inline]
    fn approx_eq(&self, other: &Self, tol: Tolerance) -> bool {
        tol.close(f64::from(self.to_f32()), f64::from(other.to_f32()))
    }
}

/// Within the tolerance, compared as `f32` (exactly representable).
///
/// ```
/// use pytree_std::half::bf16;
/// use pytree_std::{elements::ApproxEq, elements::Tolerance};
/// let (a, b) = (bf16::from_f32(1.0), bf16::from_f32(1.01));
/// assert!(!a.approx_eq(&b, Tolerance::EXACT));
/// assert!(a.approx_eq(&b, Tolerance::new(0.0, 0.1)));
/// ```
impl ApproxEq for bf16 {
    #[inline]
    fn approx_eq(&self, other: &Self, tol: Tolerance) -> bool {
        tol.close(f64::from(self.to_f32()), f64::from(other.to_f32()))
    }
}

// One element of its own type, as the primitive floats ravel.
crate::elements::ravel_scalars!(f16, bf16);
