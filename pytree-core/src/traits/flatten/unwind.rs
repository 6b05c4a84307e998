//! What a consuming walk leaves behind when it stops halfway: a user
//! closure that panics in `map`, a sink that panics in `flatten_into`, or
//! an `unflatten` that fails. The walk of a typed value recurses once per
//! level (see `deep_recursion.rs`); when it stops at level 50 000 of a
//! 100 000-level chain, the level that stopped still owns the 50 000
//! levels it has not mapped yet (or, building bottom-up, those it has
//! already built), and drops them as it unwinds or returns the error.
//! That drop would be the compiler's (`Drop` of `Vec`, `Box`, `Option`,
//! the user's struct): it recurses once per level too, with no check of
//! the stack, and a stack overflow is not a panic: the process dies.
//!
//! So every part of a value that a walk holds and has not handed on yet
//! (derived fields, a sequence's elements, a tuple's, a map's entries, a
//! value built by `unflatten` whose leaves turned out too many) is held in
//! an [`Unwinding`] guard. On the normal path each guard is taken back
//! ([`Unwinding::take`]) and costs nothing. A guard dropped with its value
//! (while unwinding, or on an early `?` return) takes the value apart with
//! [`drop_deep`]: a walk, `flatten_into` a sink that drops every leaf, so
//! the drop recurses through the same impls as every other walk and grows
//! the stack the same way (`ensure_stack`): no depth limit short of the
//! heap, and no cost beyond the walk (no stack segment is allocated unless
//! the value is deep). A shared pointer (`Rc`, `Arc`) with other handles
//! is not walked: its handle is given up, as its own drop would.
//!
//! Dropping a deep value anywhere else (a plain `drop`, the end of a
//! scope in the user's code) is std's recursive drop glue, not a walk:
//! the library cannot reach it (see ARCHITECTURE.md, "Limits").

use alloc::vec::Vec;
use core::mem::ManuallyDrop;

use super::Flatten;
use crate::paths::key_path::KeyRef;
use crate::traits::visit::Sink;

/// A value that a walk owns but has not handed on: dropped by the function
/// it was held with (a walk, [`drop_deep`]) unless taken back with
/// [`take`](Unwinding::take).
///
/// ```
/// use pytree_core::__private::Unwinding;
/// use pytree_std::Std;
/// let kept = Unwinding::tree::<Std>(vec![1, 2]);
/// assert_eq!(kept.take(), [1, 2]);
/// let dropped = Unwinding::elements::<Std>(vec![vec![3]]);
/// drop(dropped); // taken apart by a walk
/// ```
pub struct Unwinding<T> {
    value: ManuallyDrop<T>,
    dispose: fn(T),
}

impl<T> Unwinding<T> {
    /// Holds `value`, a pytree of namespace `Ns`.
    ///
    /// ```
    /// let held = pytree_core::__private::Unwinding::tree::<pytree_std::Std>(1u8);
    /// assert_eq!(held.take(), 1);
    /// ```
    #[inline(always)]
    pub fn tree<Ns>(value: T) -> Self
    where
        T: Flatten<Ns>,
    {
        Unwinding {
            value: ManuallyDrop::new(value),
            dispose: drop_deep::<Ns, T>,
        }
    }

    /// Holds elements (a collection or an iterator) each a pytree of
    /// namespace `Ns`.
    ///
    /// ```
    /// let mut held = pytree_core::__private::Unwinding::elements::<pytree_std::Std>(vec![1]);
    /// held.get_mut().push(2);
    /// assert_eq!(held.take(), [1, 2]);
    /// ```
    #[inline(always)]
    pub fn elements<Ns>(value: T) -> Self
    where
        T: IntoIterator,
        T::Item: Flatten<Ns>,
    {
        Unwinding {
            value: ManuallyDrop::new(value),
            dispose: drop_elements::<Ns, T>,
        }
    }

    /// Holds entries `(key, value)` (a map, or a collection or iterator
    /// of pairs) whose values are pytrees of namespace `Ns`.
    ///
    /// ```
    /// let held = pytree_core::__private::Unwinding::entries::<pytree_std::Std, _, _>(vec![("a", 1)]);
    /// assert_eq!(held.take(), [("a", 1)]);
    /// ```
    #[inline(always)]
    pub fn entries<Ns, K, V>(value: T) -> Self
    where
        T: IntoIterator<Item = (K, V)>,
        V: Flatten<Ns>,
    {
        Unwinding {
            value: ManuallyDrop::new(value),
            dispose: drop_entries::<Ns, T, K, V>,
        }
    }

    /// The value, to work on while it is held.
    ///
    /// ```
    /// let mut held = pytree_core::__private::Unwinding::tree::<pytree_std::Std>(vec![1]);
    /// held.get_mut().push(2);
    /// assert_eq!(held.take(), [1, 2]);
    /// ```
    #[inline(always)]
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.value
    }

    /// The value back; the guard is gone without dropping anything.
    ///
    /// ```
    /// let held = pytree_core::__private::Unwinding::tree::<pytree_std::Std>(String::from("x"));
    /// assert_eq!(held.take(), "x");
    /// ```
    #[inline(always)]
    pub fn take(self) -> T {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped (it is a `ManuallyDrop`), so the
        // value is read out exactly once, here, and `Unwinding::drop` does
        // not run for it.
        unsafe { ManuallyDrop::take(&mut this.value) }
    }
}

impl<T> Drop for Unwinding<T> {
    fn drop(&mut self) {
        // SAFETY: `drop` runs at most once, and never after `take` (which
        // keeps the guard from being dropped), so the value is still there
        // and is read out once; the field is not used again.
        let value = unsafe { ManuallyDrop::take(&mut self.value) };
        (self.dispose)(value);
    }
}

/// Flattens the elements the guarded iterator `rest` has not yielded
/// yet into `sink`, each entered at its index (from `first` on), and
/// takes the guard back: a sink that panics leaves the elements not yet
/// handed on to the guard (the iterator is held, not the collection).
#[inline(always)]
pub(crate) fn flatten_elements<Ns, I, S>(mut rest: Unwinding<I>, first: usize, sink: &mut S)
where
    I: Iterator,
    I::Item: Flatten<Ns>,
    S: Sink<<I::Item as Flatten<Ns>>::Leaf>,
{
    let mut i = first;
    while let Some(x) = rest.get_mut().next() {
        sink.enter(KeyRef::Index(i));
        x.flatten_into(sink);
        sink.exit();
        i += 1;
    }
    drop(rest.take());
}

/// Drops `value`, a pytree of namespace `Ns`, by walking it
/// (`flatten_into` a sink that drops every leaf it is given): the drop
/// recurses through the same impls as every walk, which grow the stack
/// when it runs low, so a value of any depth is dropped without
/// overflowing it. A type without drop glue is not walked at all.
///
/// ```
/// // A chain of boxes: std's drop would recurse once per level.
/// #[derive(pytree_std::PyTree)]
/// struct Node { v: f64, next: Option<Box<Node>> }
/// let mut node = Node { v: 0.0, next: None };
/// for _ in 0..10_000 {
///     node = Node { v: 0.0, next: Some(Box::new(node)) };
/// }
/// pytree_core::__private::drop_deep::<pytree_std::Std, _>(node);
/// ```
#[inline]
pub fn drop_deep<Ns, T: Flatten<Ns>>(value: T) {
    if core::mem::needs_drop::<T>() {
        value.flatten_into(&mut Discard);
    }
}

/// Drops each element with [`drop_deep`], then what is left of the
/// collection (its buffer).
fn drop_elements<Ns, C>(items: C)
where
    C: IntoIterator,
    C::Item: Flatten<Ns>,
{
    if core::mem::needs_drop::<C::Item>() {
        for item in items {
            drop_deep::<Ns, C::Item>(item);
        }
    }
}

/// Drops each entry's value with [`drop_deep`] (keys are static data,
/// dropped as they are).
fn drop_entries<Ns, C, K, V>(entries: C)
where
    C: IntoIterator<Item = (K, V)>,
    V: Flatten<Ns>,
{
    for (_, value) in entries {
        drop_deep::<Ns, V>(value);
    }
}

/// The sink of [`drop_deep`]: it drops every leaf and ignores the rest.
struct Discard;

impl<L> Sink<L> for Discard {
    const DISCARDS: bool = true;

    #[inline]
    fn leaf(&mut self, _leaf: L) {}
    #[inline]
    fn leaf_vec(&mut self, _leaves: Vec<L>) {}
}
