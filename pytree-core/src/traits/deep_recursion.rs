//! Deep recursion without stack overflow. A walk of a typed recursive value
//! (`struct Chain { v: f64, next: Option<Box<Chain>> }`, `enum D { V(f64),
//! S(VecDeque<D>) }`) recurses once per level, and every level of such a
//! value is a derived type reaching its fields through one trait,
//! `__private::DataField` (and its `DataFieldUnflatten`). Each walk into a
//! field there runs inside [`ensure_stack`] (through [`ensure_stack_for`],
//! which skips fields of uniform types: a fixed, finite structure, which
//! cannot recurse). So the check sits at the one place every level of
//! every derived recursion passes, whatever container it passes through:
//! `Vec`, `VecDeque`, the maps, boxes, or a container written by hand.
//! `Box`, `Rc`, `Arc` and `Vec` check as well (once per pointer or
//! sequence), for a recursive node written by hand through them. With the
//! `std` feature (turned on by pytree-std), `ensure_stack` continues on a
//! fresh heap-allocated stack segment (`stacker::grow`) when less than
//! [`RED_ZONE`] bytes of stack are left. A 100 000-level chain then costs
//! heap memory, not a crash. Without `std` it calls straight through.
//!
//! The check runs once per level of every walk, so its common case is one
//! thread-local load and a compare: each thread caches the lowest address
//! its stack may reach (the "floor", from `stacker::remaining_stack` on
//! first use and after each switch of stack segment).
//!
//! A panic in the closure of a consuming walk (`map`, `try_map`, ...), or
//! an error of `unflatten`, halfway down a chain leaves parts of the value
//! to drop on the way out; they are held in guards that take them apart
//! with a walk, which grows the stack the same way (see `unwind.rs`).
//! Dropping a deep value anywhere else (a plain `drop`, at the end of a
//! scope) is std's code and has std's limit: a program that builds chains
//! that deep takes them apart level by level (see `tests/deep_trees.rs`),
//! or with a walk (`pytree_std::walk::drop_deep`).
//!
//! The position compared is the stack pointer register itself, read with
//! one instruction (`psm::stack_pointer`, a call, on targets without the
//! inline form), not the address of a local: under AddressSanitizer a
//! local may live on a "fake stack" on the heap, and a guard that measured
//! it would never fire.

use crate::traits::flatten::Flatten;

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

/// [`ensure_stack`] for a walk of a value of type `T`, unless `T` is
/// uniform ([`Flatten::UNIFORM_LEAVES`]: every value has the same fixed,
/// finite structure, with no sequence, option, map or enum in it, so it
/// cannot recurse): a field of such a type costs no check.
///
/// ```
/// use pytree_core::__private::ensure_stack_for;
/// use pytree_std::Std;
/// assert_eq!(ensure_stack_for::<Std, Vec<f64>, _>(|| 1 + 1), 2);
/// ```
#[inline(always)]
pub fn ensure_stack_for<Ns, T: Flatten<Ns>, R>(f: impl FnOnce() -> R) -> R {
    if T::UNIFORM_LEAVES.is_some() {
        f()
    } else {
        ensure_stack(f)
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

    /// The current stack pointer: the real one, also under
    /// AddressSanitizer, whose fake stacks put locals on the heap.
    #[cfg(all(
        not(miri),
        any(
            target_arch = "x86_64",
            target_arch = "x86",
            target_arch = "aarch64",
            target_arch = "riscv64"
        )
    ))]
    #[inline(always)]
    fn here() -> usize {
        let sp: usize;
        // SAFETY: copies the stack pointer register into a general
        // register; touches no memory, no stack and no flags (as declared).
        unsafe {
            #[cfg(target_arch = "x86_64")]
            core::arch::asm!("mov {}, rsp", out(reg) sp, options(nomem, nostack, preserves_flags));
            #[cfg(target_arch = "x86")]
            core::arch::asm!("mov {}, esp", out(reg) sp, options(nomem, nostack, preserves_flags));
            #[cfg(target_arch = "aarch64")]
            core::arch::asm!("mov {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags));
            #[cfg(target_arch = "riscv64")]
            core::arch::asm!("mv {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags));
        }
        sp
    }

    /// The current stack pointer, through `psm` (an out-of-line call) on
    /// other targets, and an address in the caller's frame under Miri
    /// (which runs no assembly and has no fake stacks).
    #[cfg(any(
        miri,
        not(any(
            target_arch = "x86_64",
            target_arch = "x86",
            target_arch = "aarch64",
            target_arch = "riscv64"
        ))
    ))]
    #[inline(always)]
    fn here() -> usize {
        #[cfg(miri)]
        {
            let marker = 0u8;
            core::ptr::addr_of!(marker) as usize
        }
        #[cfg(not(miri))]
        {
            psm::stack_pointer() as usize
        }
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
