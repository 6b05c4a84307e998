//! The one-pass CPU path for burn-flex, burn's CPU backend: an
//! optimizer's [`ElementUpdate`] over `f32` leaves runs on the tensors'
//! own memory, in `f32` (the element loop of an ndarray `f32` array, the
//! same bits), so an Adam step reads and writes each element once with no
//! tensor allocated, where the tensor operations of `float.rs` make about
//! ten passes, each allocating its result.
//!
//! burn-flex's storage is shared by reference count and written in place
//! only when one handle holds it (`FlexTensor::try_storage_mut`): each
//! written leaf's handle is moved out of the leaf for the pass (an empty
//! tensor holds its place) and put back after. Any leaf that is not an
//! `f32` tensor of burn-flex, not contiguous, or held by another handle
//! too (the caller kept a clone) sends the update to the tensor
//! operations instead: the result is the same, only slower.

use burn::backend::flex::FlexTensor;
use burn::backend::Flex;
use burn::tensor::{DType, Tensor};

use super::BurnTensor;
use crate::elements::{zip_slices, ElementUpdate, Exec};

/// A written leaf's storage, moved out of it.
struct Taken {
    flex: FlexTensor,
    shape: Vec<usize>,
}

/// The burn-flex primitive of an `f32` leaf (rank 1, sharing its storage),
/// or `None` for another dtype or backend.
fn flex_of(leaf: &BurnTensor) -> Option<FlexTensor> {
    if leaf.dtype() != DType::F32 {
        return None;
    }
    leaf.flat().try_into_primitive::<Flex>().ok()
}

/// Moves `slot`'s storage out (an empty tensor on its device takes its
/// place), so that the primitive returned holds it alone unless another
/// handle does; `None`, and `slot` untouched, for a leaf that is not an
/// `f32` tensor of burn-flex.
fn take(slot: &mut BurnTensor) -> Option<Taken> {
    let flex = flex_of(slot)?;
    let shape = slot.shape().to_vec();
    let device = slot.device();
    *slot = BurnTensor::new(Tensor::<1>::empty([0], &device));
    Some(Taken { flex, shape })
}

/// Puts a taken storage back into its leaf.
fn put_back(slot: &mut BurnTensor, taken: Taken) {
    let flat = Tensor::<1>::from_primitive::<Flex>(taken.flex);
    if let Ok(leaf) = BurnTensor::from_flat(flat, &taken.shape) {
        *slot = leaf;
    }
}

/// Runs `update` over the leaves' memory in place when every leaf is an
/// `f32` tensor of burn-flex, contiguous, of `n` elements, and every
/// written one is held by its leaf alone; `false` (nothing changed) else.
pub(super) fn try_zip<const N: usize, const M: usize, U>(
    muts: &mut [&mut BurnTensor; N],
    refs: &[&BurnTensor; M],
    exec: Exec,
    update: &U,
) -> bool
where
    U: ElementUpdate<f64, N, M>,
{
    let Some(n) = muts.first().map(|m| m.num_elements()) else {
        return false;
    };
    let ref_flex: Vec<FlexTensor> = match refs.iter().map(|r| flex_of(r)).collect() {
        Some(v) => v,
        None => return false,
    };
    let mut taken: Vec<Taken> = Vec::with_capacity(N);
    for m in muts.iter_mut() {
        match take(m) {
            Some(t) => taken.push(t),
            None => break,
        }
    }
    let ready = taken.len() == N
        && ref_flex
            .iter()
            .all(|r| r.as_slice::<f32>().is_some_and(|s| s.len() == n))
        && taken.iter_mut().all(|t| {
            t.flex.is_unique()
                && t.flex.as_slice::<f32>().is_some_and(|s| s.len() == n)
                && t.flex
                    .try_storage_mut::<f32>()
                    .is_some_and(|s| s.len() == n)
        });
    if ready {
        let mut it = taken.iter_mut();
        let ms: [&mut [f32]; N] = core::array::from_fn(|_| {
            it.next()
                .and_then(|t| t.flex.try_storage_mut::<f32>())
                .unwrap_or(&mut [])
        });
        let mut ri = ref_flex.iter();
        let rs: [&[f32]; M] =
            core::array::from_fn(|_| ri.next().and_then(|r| r.as_slice::<f32>()).unwrap_or(&[]));
        zip_slices(ms, rs, exec, &|ms: [&mut f32; N], rs: [f32; M]| {
            update.apply(ms, rs)
        });
    }
    for (m, t) in muts.iter_mut().zip(taken) {
        put_back(m, t);
    }
    ready
}
