//! [`with_leaf_sums`]: the global reductions over a tree's leaves (the
//! squared norm of [`clip_by_global_norm`](crate::clip_by_global_norm),
//! [`global_norm`](crate::global_norm)) made over leaves that live in
//! several processes: a sharded optimizer (pytree-dist's ZeRO-1) runs the
//! transformation on its shard with a reduction that completes each
//! leaf's partial sum from the other processes.

use std::cell::Cell;

use pytree_std::Error;

/// A reduction of per-leaf partial sums, in place.
type Reduce<'a> = dyn Fn(&mut [f64]) -> Result<(), Error> + 'a;

thread_local! {
    /// The reduction of the innermost `with_leaf_sums` on this thread.
    static CURRENT: Cell<Option<*const Reduce<'static>>> = const { Cell::new(None) };
}

/// Runs `f` with `reduce` completing the per-leaf sums of every global
/// reduction over leaves that `f` makes on this thread: such a reduction
/// computes each leaf's sum (of squares, for a norm) as usual, then calls
/// `reduce` with the sums in leaf order (0 for leaves outside its mask),
/// then adds them up in leaf order. A sharded optimizer makes `reduce` an
/// all-reduce in which each leaf's owner contributes its sum and the
/// others 0, so that every process gets exactly the sums, and the norm,
/// of the unsharded tree: the same bits, the additions being in the same
/// order. Nested calls: the innermost reduction applies; while `reduce`
/// runs, none does.
///
/// Only this crate's reductions call `reduce`:
/// [`clip_by_global_norm`](crate::clip_by_global_norm) and
/// [`global_norm`](crate::global_norm) (also when a transformation
/// written elsewhere calls it). A transformation that sums over the leaves
/// with a loop of its own (a global norm by hand) sums the leaves this
/// process holds only: under a sharded optimizer its norm is its shard's,
/// not the tree's. Such a transformation should take its norm from
/// [`global_norm`](crate::global_norm).
///
/// ```
/// use pytree_optim::{global_norm, with_leaf_sums};
/// // Another process holds a leaf with a sum of squares of 9 at index 1.
/// let other = |sums: &mut [f64]| { sums[1] += 9.0; Ok(()) };
/// let n = with_leaf_sums(&other, || global_norm(&vec![4.0f32, 0.0]))?;
/// assert_eq!(n, 5.0);
/// assert_eq!(global_norm(&vec![4.0f32, 0.0])?, 4.0);
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn with_leaf_sums<R>(
    reduce: &dyn Fn(&mut [f64]) -> Result<(), Error>,
    f: impl FnOnce() -> R,
) -> R {
    // SAFETY: only the lifetime bound of the trait object changes (same
    // layout); the pointer is read only by `reduce_leaf_sums` on this
    // thread, before `Restore` puts the previous value back, which it does
    // when this function returns or unwinds, while `reduce` is borrowed.
    let erased: *const Reduce<'static> =
        unsafe { std::mem::transmute::<*const Reduce<'_>, *const Reduce<'static>>(reduce) };
    let _restore = Restore(CURRENT.with(|c| c.replace(Some(erased))));
    f()
}

/// Puts the previous reduction back when dropped.
struct Restore(Option<*const Reduce<'static>>);

impl Drop for Restore {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.0));
    }
}

/// Whether a reduction is set on this thread.
pub(crate) fn active() -> bool {
    CURRENT.with(|c| c.get().is_some())
}

/// Applies the current reduction (if any) to `sums`; none applies while
/// it runs.
pub(crate) fn reduce_leaf_sums(sums: &mut [f64]) -> Result<(), Error> {
    let Some(ptr) = CURRENT.with(|c| c.get()) else {
        return Ok(());
    };
    let _restore = Restore(CURRENT.with(|c| c.replace(None)));
    // SAFETY: `ptr` was set by `with_leaf_sums` on this thread from a
    // reference that stays borrowed until that call returns, and it is
    // put back (or cleared) before then; so it points to a live closure.
    let reduce = unsafe { &*ptr };
    reduce(sums)
}
