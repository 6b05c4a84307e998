//! What the leaves hold, element by element, for trees of numbers and
//! tensors:
//! - [`ravel`] / [`Unravel`] (JAX's `ravel_pytree`): the leaves laid end
//!   to end in one flat buffer of elements, and back; a leaf type joins by
//!   implementing [`Ravel`].
//! - [`tree_equal`] (equinox's `tree_equal(x, y, rtol=, atol=)`): equal
//!   structures and leaves pairwise close under a [`Tolerance`], for
//!   leaves that are [`ApproxEq`].
//! - [`signatures`] (a [`Tree`](crate::Tree) of each leaf's dtype and
//!   shape, JAX's `eval_shape` output) and [`summary`] (a [`Summary`]
//!   table of every leaf and subtree with element and byte counts, as
//!   flax's `tabulate` and torchinfo print).
//! - Optimizer arithmetic: [`FloatLeaf`] (what pytree-optim's optimizers
//!   update, re-exported there), its numbers [`Float`] and
//!   [`FloatElement`], its element loops [`zip_slices`] and [`sum_slice`]
//!   (run as [`Exec`] says), and [`ElementUpdate`], an update written once
//!   over [`Arith`]; [`codegen`]: an update recorded and printed as CUDA
//!   code for the device (one kernel for many tensors).
//!
//! ```
//! use pytree_std::elements::{ravel, tree_equal, Tolerance};
//! let t = (1.0f32, vec![2.0f32, 3.0]);
//! let (flat, plan) = ravel::<_, f32>(&t)?;
//! assert_eq!(flat, [1.0, 2.0, 3.0]);
//! let back = plan.unravel(&[1.0, 2.0, 3.000001])?;
//! assert!(tree_equal(&back, &t, Tolerance::new(1e-5, 0.0)));
//! assert_eq!(pytree_std::elements::summary(&t).num_elements(), 3);
//! # Ok::<(), pytree_std::Error>(())
//! ```

mod approx;
mod float;
mod ravel;
mod summary;

pub use approx::{tree_equal, ApproxEq, Tolerance};
pub use float::codegen;
#[cfg(any(feature = "ndarray", feature = "candle"))]
pub(crate) use float::widened;
#[cfg(any(feature = "candle", feature = "burn"))]
pub(crate) use float::zip_host_vecs;
#[cfg(any(feature = "ndarray", feature = "nalgebra"))]
pub(crate) use float::{all_some, common_shape, zip_element_iters};
pub use float::{
    avx2_dispatch, sum_slice, zip_slices, Arith, ElementUpdate, Exec, Float, FloatElement,
    FloatLeaf, DISPATCH_MIN, GRAIN,
};
#[cfg(feature = "half")]
pub(crate) use ravel::ravel_scalars;
pub use ravel::{ravel, Ravel, Unravel};
pub use summary::{signatures, summary, Summary, SummaryRow};
