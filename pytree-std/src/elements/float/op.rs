//! [`ElementOp`]: each element loop of the optimizers named with its
//! constants, so that a leaf type that cannot run a Rust closure on its
//! elements where they live (a candle tensor on a GPU) runs the same
//! update as whole-tensor operations on its own device.

/// One element-wise update of the optimizers, by name and constants: the
/// same computation as the element closure it is passed with (see
/// [`FloatLeaf::zip_op`](crate::elements::FloatLeaf::zip_op)). `muts[i]` are the
/// leaves written, `refs[j]` the leaves read, in the order each variant
/// names. Leaf types whose elements the host can reach (scalars, ndarray
/// arrays, candle tensors in CPU memory) ignore it and run the closure.
///
/// ```
/// use pytree_std::elements::{ElementOp, Exec, FloatLeaf};
/// // `muts[0] = a * muts[0] + b * refs[0]`, as a closure and by name:
/// let (mut y, x) = (1.0f64, 2.0f64);
/// let op = ElementOp::Axpby { a: 0.5, b: 0.25 };
/// f64::zip_op([&mut y], [&x], Exec::Sequential, &|[y], [x]| *y = 0.5 * *y + 0.25 * x, &op)?;
/// assert_eq!(y, 1.0);
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum ElementOp {
    /// `muts[0] = 0` (the other leaves written are left as they are).
    Zero,
    /// `muts[0] = factor * muts[0]`.
    Scale {
        /// The factor.
        factor: f64,
    },
    /// `muts[0] = a * muts[0] + b * refs[0]`.
    Axpby {
        /// The factor of `muts[0]`.
        a: f64,
        /// The factor of `refs[0]`.
        b: f64,
    },
    /// `muts[0] = refs[0]`.
    Copy,
    /// SGD with momentum: the trace `t = muts[1]` becomes `g + mu * t`,
    /// and the direction `d` is `t` (or `g + mu * t` with Nesterov).
    /// Fused (`step`): `g = refs[0]`, `muts[0] += neg_lr * d` (the
    /// parameter). Not fused (`update`): `g = muts[0]`, `muts[0] = neg_lr * d`.
    SgdMomentum {
        /// Minus the learning rate.
        neg_lr: f64,
        /// The momentum decay.
        mu: f64,
        /// Nesterov momentum.
        nesterov: bool,
        /// Whether `muts[0]` is the parameter (`step`) or the gradient (`update`).
        fused: bool,
    },
    /// Adam: `m = muts[1]`, `v = muts[2]` become `b1 m + (1 - b1) g` and
    /// `b2 v + (1 - b2) g²`; the direction is
    /// `d = m * inv_c1 / (sqrt(v * inv_c2 + eps_root) + eps)`, plus
    /// `weight_decay * p` when `weight_decay` is not zero. Fused (`step`):
    /// `g = refs[0]`, `p = muts[0]`, `muts[0] = p + neg_lr * d`. Not fused
    /// (`update`): `g = muts[0]`, `p = refs[0]` (only with weight decay),
    /// `muts[0] = neg_lr * d`.
    Adam {
        /// The decay of the first moment.
        b1: f64,
        /// The decay of the second moment.
        b2: f64,
        /// `1 / (1 - b1^t)`.
        inv_c1: f64,
        /// `1 / (1 - b2^t)`.
        inv_c2: f64,
        /// Added to the root.
        eps: f64,
        /// Added under the root.
        eps_root: f64,
        /// Minus the learning rate.
        neg_lr: f64,
        /// The decoupled weight decay applied to this leaf (0: none).
        weight_decay: f64,
        /// Whether `muts[0]` is the parameter (`step`) or the gradient (`update`).
        fused: bool,
    },
    /// optax's `ema` of the updates: the average `e = muts[1]` becomes
    /// `(1 - decay) * u + decay * e` for the update `u = muts[0]`, and the
    /// update becomes `e / correction` (`correction` is 1 without bias
    /// correction).
    EmaOfUpdates {
        /// The decay.
        decay: f64,
        /// The bias correction `1 - decay^t` (1: none).
        correction: f64,
    },
}
