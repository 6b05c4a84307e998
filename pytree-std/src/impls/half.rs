//! `half::f16` and `half::bf16` as scalar leaves (feature `half`), lent by
//! reference like the primitive floats, with the 0-d signatures `f16[]`
//! and `bf16[]`; `ApproxEq` compares them as `f32`.

use half::{bf16, f16};

use crate::{tree_equal::ApproxEq, tree_equal::Tolerance};

leaf_by_reference!(scalar f16 => pytree_core::DType::F16);
leaf_by_reference!(scalar bf16 => pytree_core::DType::BF16);

/// Within the tolerance, compared as `f32` (exactly representable).
///
/// ```
/// use pytree_std::half::f16;
/// use pytree_std::{tree_equal::ApproxEq, tree_equal::Tolerance};
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
/// use pytree_std::{tree_equal::ApproxEq, tree_equal::Tolerance};
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
