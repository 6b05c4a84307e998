//! What a consuming walk leaves behind when it stops halfway: a user
//! closure that panics in `map`, or an `unflatten` that fails. The walk of
//! a typed value recurses once per level (see `deep_recursion.rs`); when it stops at
//! level 50 000 of a 100 000-level chain, the level that stopped still owns
//! the 50 000 levels it has not mapped yet, and drops them as it unwinds.
//! That drop is the compiler's (`Drop` of `Box`, `Option`, the user's
//! struct): it recurses once per level too, on whatever stack the walk was
//! using, with no check, and a stack overflow is not a panic: the process
//! dies.
//!
//! So derived code holds every data field it has not handed on yet, and
//! every field it has already built, in an [`Unwinding`] guard. On the
//! normal path each guard is taken back ([`Unwinding::take`]) and costs
//! nothing. A guard dropped with its value (while unwinding, or on an early
//! `?` return) drops it with [`drop_deep`]: on a fresh stack segment of
//! [`DROP_SEGMENT`] bytes, reserved (not touched) with `mmap`, when the
//! type has any drop glue at all. The drop then has room for millions of
//! levels (about 32 bytes of stack per level of a two-field chain in
//! release builds, 97 in debug builds), far more than the thread's own
//! stack gives any other drop of the same value.

use core::mem::ManuallyDrop;

/// Stack reserved for dropping what a stopped walk leaves behind: 256 MiB
/// of address space, of which only what the drop uses is ever touched.
#[cfg_attr(not(feature = "std"), allow(dead_code))]
pub const DROP_SEGMENT: usize = 256 * 1024 * 1024;

/// A value that generated code owns but has not handed on: dropped with
/// [`drop_deep`] unless taken back with [`take`](Unwinding::take).
///
/// ```
/// use pytree_core::__private::Unwinding;
/// let kept = Unwinding::new(vec![1, 2]);
/// assert_eq!(kept.take(), [1, 2]);
/// let dropped = Unwinding::new(vec![3]);
/// drop(dropped); // on a fresh stack segment
/// ```
pub struct Unwinding<T>(ManuallyDrop<T>);

impl<T> Unwinding<T> {
    /// Holds `value`.
    ///
    /// ```
    /// let held = pytree_core::__private::Unwinding::new(1u8);
    /// assert_eq!(held.take(), 1);
    /// ```
    #[inline(always)]
    pub fn new(value: T) -> Self {
        Unwinding(ManuallyDrop::new(value))
    }

    /// The value, to work on while it is held.
    ///
    /// ```
    /// let mut held = pytree_core::__private::Unwinding::new(vec![1]);
    /// held.get_mut().push(2);
    /// assert_eq!(held.take(), [1, 2]);
    /// ```
    #[inline(always)]
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.0
    }

    /// The value back; the guard is gone without dropping anything.
    ///
    /// ```
    /// let held = pytree_core::__private::Unwinding::new(String::from("x"));
    /// assert_eq!(held.take(), "x");
    /// ```
    #[inline(always)]
    pub fn take(self) -> T {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped (it is a `ManuallyDrop`), so the
        // value is read out exactly once, here, and `Unwinding::drop` does
        // not run for it.
        unsafe { ManuallyDrop::take(&mut this.0) }
    }
}

impl<T> Drop for Unwinding<T> {
    fn drop(&mut self) {
        // SAFETY: `drop` runs at most once, and never after `take` (which
        // keeps the guard from being dropped), so the value is still there
        // and is read out once; the field is not used again.
        let value = unsafe { ManuallyDrop::take(&mut self.0) };
        drop_deep(value);
    }
}

/// Drops `value` on a fresh stack segment of 256 MiB (with
/// the `std` feature, and only if `T` has drop glue), so that a deeply
/// recursive value is dropped without overflowing the stack in use.
///
/// ```
/// // A chain of boxes: its drop recurses once per level.
/// #[derive(Default)]
/// struct Node(Option<Box<Node>>);
/// let mut node = Node::default();
/// for _ in 0..10_000 {
///     node = Node(Some(Box::new(node)));
/// }
/// pytree_core::__private::drop_deep(node);
/// ```
#[inline]
pub fn drop_deep<T>(value: T) {
    if !core::mem::needs_drop::<T>() {
        return;
    }
    #[cfg(feature = "std")]
    stacker::grow(DROP_SEGMENT, move || drop(value));
    #[cfg(not(feature = "std"))]
    drop(value);
}
