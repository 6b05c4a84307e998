//! Deep recursion without stack overflow. A walk of a typed recursive value
//! (`struct Chain { v: f64, next: Option<Box<Chain>> }`) recurses once per
//! level, and that recursion always passes through an indirection: a `Box`,
//! `Rc`, `Arc` or `Vec`. Their impls run the rest of the walk inside
//! [`ensure_stack`], which, with the `std` feature (turned on by
//! pytree-std), continues on a fresh heap-allocated stack segment
//! (`stacker::grow`) when less than [`RED_ZONE`] bytes of stack are left. A
//! 100 000-level chain then costs heap memory, not a crash. Without `std`
//! it calls straight through.
//!
//! The check runs once per level of every walk, so its common case is one
//! thread-local load and a compare: each thread caches the lowest address
//! its stack may reach (the "floor", from `stacker::remaining_stack` on
//! first use and after each switch of stack segment).

/// Stack that must be left before a walk goes one level deeper: room for
/// one level of the deepest walk (unoptimized builds included) and for
/// building an error.
#[cfg_attr(not(feature = "std"), allow(dead_code))]
pub const RED_ZONE: usize = 128 * 1024;

/// Size of each stack segment allocated when the stack runs low.
#[cfg_attr(not(feature = "std"), allow(dead_code))]
pub const SEGMENT: usize = 2 * 1024 * 1024;

/// Runs `f`, first moving to a new stack segment if less than `RED_ZONE`
/// (128 KiB) of the current one is left (with the `std` feature; otherwise it
/// just calls `f`).
///
/// ```
/// let two = pytree_core::__private::ensure_stack(|| 1 + 1);
/// assert_eq!(two, 2);
/// ```
#[inline(always)]
pub fn ensure_stack<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(feature = "std")]
    {
        if grow::above_floor() {
            f()
        } else {
            grow::slow(f)
        }
    }
    #[cfg(not(feature = "std"))]
    {
        f()
    }
}

#[cfg(feature = "std")]
mod grow {
    use std::cell::Cell;

    use super::{RED_ZONE, SEGMENT};

    /// Not yet known: every address is below it, so the next check takes
    /// the slow path and computes it.
    const UNKNOWN: usize = usize::MAX;

    std::thread_local! {
        /// The lowest stack address at which a walk may still go deeper
        /// without growing, for the stack segment the thread runs on.
        static FLOOR: Cell<usize> = const { Cell::new(UNKNOWN) };
    }

    /// An address in the caller's stack frame.
    #[inline(always)]
    fn here() -> usize {
        let marker = 0u8;
        core::ptr::addr_of!(marker) as usize
    }

    #[inline(always)]
    pub(super) fn above_floor() -> bool {
        here() > FLOOR.with(Cell::get)
    }

    /// Puts a saved floor back when dropped, even when unwinding.
    struct Restore(usize);

    impl Drop for Restore {
        fn drop(&mut self) {
            FLOOR.with(|floor| floor.set(self.0));
        }
    }

    /// Computes the floor if it is unknown; grows the stack if it is low.
    #[cold]
    #[inline(never)]
    pub(super) fn slow<R>(f: impl FnOnce() -> R) -> R {
        if let Some(left) = stacker::remaining_stack() {
            if left >= RED_ZONE {
                FLOOR.with(|floor| floor.set(here().saturating_sub(left).saturating_add(RED_ZONE)));
                return f();
            }
        }
        let _restore = Restore(FLOOR.with(Cell::get));
        stacker::grow(SEGMENT, || {
            // A new segment: its floor is computed on the next check.
            FLOOR.with(|floor| floor.set(UNKNOWN));
            f()
        })
    }
}
