//! burn's ranks are const generics (`Tensor<D>`) and its handles are
//! rank-erased (`BridgeTensor`): these two functions cross between them,
//! for the ranks 1 to [`MAX_RANK`] (burn's modules hold at most 5: a
//! `Conv3d` weight), by a `match` on the rank at run time.

use burn::tensor::kind::BridgeTensor;
use burn::tensor::Tensor;
use pytree_core::Error;

/// The highest rank a leaf may have.
pub(crate) const MAX_RANK: usize = 8;

/// Calls `$f::<D>` with the const `D` equal to `$rank` (1 to 8), else
/// evaluates `$other`.
macro_rules! for_rank {
    ($rank:expr, $f:ident($($arg:expr),*), else $other:expr) => {
        match $rank {
            1 => $f::<1>($($arg),*),
            2 => $f::<2>($($arg),*),
            3 => $f::<3>($($arg),*),
            4 => $f::<4>($($arg),*),
            5 => $f::<5>($($arg),*),
            6 => $f::<6>($($arg),*),
            7 => $f::<7>($($arg),*),
            8 => $f::<8>($($arg),*),
            _ => $other,
        }
    };
}
pub(crate) use for_rank;

/// A float handle's elements as a rank-1 tensor (a reshape).
///
/// Leaves are made only from `Tensor<D>` with `1 <= D <= 8` or by
/// [`shaped`], so a handle of another rank cannot reach here; one would be
/// taken as rank 1 (burn's reshape reads the handle's own shape).
pub(crate) fn flat(t: BridgeTensor) -> Tensor<1> {
    fn at<const D: usize>(t: BridgeTensor) -> Tensor<1> {
        let n = t.shape().num_elements();
        Tensor::<D>::from_bridge(t).reshape([n])
    }
    let rank = t.rank();
    for_rank!(rank, at(t), else Tensor::<1>::from_bridge(t))
}

/// The elements of `flat` as a handle of `shape` (a reshape); more than
/// [`MAX_RANK`] dims, or none, is an error.
pub(crate) fn shaped(flat: Tensor<1>, shape: &[usize]) -> Result<BridgeTensor, Error> {
    fn at<const D: usize>(flat: Tensor<1>, shape: &[usize]) -> Result<BridgeTensor, Error> {
        let mut dims = [0usize; D];
        dims.copy_from_slice(shape);
        Ok(flat.reshape(dims).into_bridge())
    }
    for_rank!(shape.len(), at(flat, shape), else Err(Error::custom(format!(
        "a burn leaf has 1 to {MAX_RANK} dims, not {} ({shape:?})",
        shape.len()
    ))))
}
