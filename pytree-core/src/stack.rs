//! Deep recursion without stack overflow. A walk of a typed recursive value
//! (`struct Chain { v: f64, next: Option<Box<Chain>> }`) recurses once per
//! level, and that recursion always passes through an indirection: a `Box`,
//! `Rc`, `Arc` or `Vec`. Their impls run the rest of the walk inside
//! [`ensure_stack`], which, with the `std` feature (turned on by
//! pytree-std), continues on a fresh heap-allocated stack segment when less
//! than [`RED_ZONE`] bytes of stack are left (`stacker::maybe_grow`). A
//! 100 000-level chain then costs heap memory, not a crash. Without `std`
//! it calls straight through.

/// Stack that must be left before a walk goes one level deeper: room for
/// one level of the deepest walk (unoptimized builds included) and for
/// building an error.
pub const RED_ZONE: usize = 128 * 1024;

/// Size of each stack segment allocated when the stack runs low.
pub const SEGMENT: usize = 2 * 1024 * 1024;

/// Runs `f`, first moving to a new stack segment if less than [`RED_ZONE`]
/// bytes of the current one are left (with the `std` feature; otherwise it
/// just calls `f`).
///
/// ```
/// let depth = pytree_core::__private::ensure_stack(|| 1 + 1);
/// assert_eq!(depth, 2);
/// ```
#[inline(always)]
pub fn ensure_stack<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(feature = "std")]
    {
        stacker::maybe_grow(RED_ZONE, SEGMENT, f)
    }
    #[cfg(not(feature = "std"))]
    {
        f()
    }
}
