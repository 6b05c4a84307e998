//! [`Sizes`]: the bucket size and the in-place size that shape how a
//! tree travels, and their defaults.

/// The bucket size of [`Dist::new`](crate::Dist::new): 25 MiB, as PyTorch's DDP.
///
/// ```
/// assert_eq!(pytree_dist::DEFAULT_BUCKET_BYTES, 25 << 20);
/// ```
pub const DEFAULT_BUCKET_BYTES: usize = 25 << 20;

/// The in-place size of [`Dist::new`](crate::Dist::new): a float leaf of at least 1 MiB
/// whose elements are what the wire sends (`f32`, `f64`) is reduced in
/// its own memory, not packed ([`Sizes::in_place_bytes`]).
///
/// ```
/// assert_eq!(pytree_dist::DEFAULT_IN_PLACE_BYTES, 1 << 20);
/// ```
pub const DEFAULT_IN_PLACE_BYTES: usize = 1 << 20;

/// The sizes that shape how a tree travels: buckets of at most
/// `bucket_bytes` bytes, and float leaves of at least `in_place_bytes`
/// bytes reduced in their own memory. Set with [`Dist::with_sizes`](crate::Dist::with_sizes);
/// every rank must use the same (the ranks check it with the tree).
///
/// A leaf whose elements are what the wire sends (`f32`, `f64`; not
/// `f16` / `bf16`, which are summed in `f32`) and that is at least
/// `in_place_bytes` long is a bucket of its own, and the collective runs
/// where it lies, with nothing copied in or out (on MPI: `MPI_IN_PLACE`).
/// Smaller leaves are packed into buckets, where one collective serves
/// many. `in_place_bytes: usize::MAX`: every leaf packed. A leaf whose
/// memory is not contiguous in C order on some rank (an array in another
/// order, a candle tensor) goes through a copy there, with the same
/// collective.
///
/// ```
/// use pytree_dist::{Dist, Sizes};
/// assert_eq!(Sizes::default(), Sizes { bucket_bytes: 25 << 20, in_place_bytes: 1 << 20 });
/// let dist = Dist::local().with_sizes(Sizes { bucket_bytes: 1 << 20, ..Sizes::default() });
/// assert_eq!(dist.sizes().bucket_bytes, 1 << 20);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sizes {
    /// The largest bucket, in bytes (at least one element is sent per
    /// bucket): [`DEFAULT_BUCKET_BYTES`] (25 MiB, as PyTorch's DDP).
    pub bucket_bytes: usize,
    /// The smallest float leaf reduced in its own memory, in bytes:
    /// [`DEFAULT_IN_PLACE_BYTES`] (1 MiB).
    pub in_place_bytes: usize,
}

impl Default for Sizes {
    fn default() -> Sizes {
        Sizes {
            bucket_bytes: DEFAULT_BUCKET_BYTES,
            in_place_bytes: DEFAULT_IN_PLACE_BYTES,
        }
    }
}
