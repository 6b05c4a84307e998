//! [`unflatten_elements`]: the elements of a sequence of derived values,
//! written into their `Vec` without a copy through the stack.

use alloc::vec::Vec;

use super::unwind::Unwinding;
use super::Unflatten;
use crate::error::Error;
use crate::paths::key_path::KeyEntry;
use crate::sources::source::Source;

/// At most this many elements are reserved before any is read (a TreeDef
/// read from a file can claim any length); more is reserved as elements
/// arrive.
const FIRST_RESERVATION: usize = 1024;

/// The `len` elements of a sequence, read one after another, the error of
/// element `i` placed at index `i`: the provided `Unflatten::unflatten_vec`
/// (every type but the leaves, which take theirs at once). Room for an
/// element is made before it is read, and the element is written straight
/// into it: no call (to grow the `Vec`) sits between reading an element's
/// leaves and storing them, so a struct of leaves goes from the leaf
/// iterator to the `Vec` in registers rather than through the stack
/// (unflatten of T1's 48 layers: `BENCHMARKS.md`, issue 20). The
/// elements read are held in a guard: an error (or a panic) at a later
/// element drops them with a walk (`unwind.rs`), so a deep element already
/// built does not overflow the stack.
///
/// ```
/// use pytree_std::{PyTree, Std};
/// #[derive(PyTree, Debug, PartialEq)]
/// struct Wb { w: f64, b: f64 }
/// let v = vec![Wb { w: 1.0, b: 2.0 }, Wb { w: 3.0, b: 4.0 }];
/// let (leaves, def) = pytree_std::flatten(v);
/// let back: Vec<Wb> = pytree_std::unflatten(&def, leaves.clone())?;
/// assert_eq!(back[1], Wb { w: 3.0, b: 4.0 });
/// let err = pytree_std::unflatten::<Vec<Wb>>(&def, leaves[..3].to_vec()).unwrap_err();
/// assert_eq!(err.to_string(), "at [1].b: too few leaves for TreeDef: expected 4, got 3");
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[inline(always)]
pub(crate) fn unflatten_elements<Ns, T, S>(len: usize, source: &mut S) -> Result<Vec<T>, Error>
where
    T: Unflatten<Ns>,
    S: Source<T::Leaf>,
{
    let mut held = Unwinding::elements::<Ns>(Vec::with_capacity(len.min(FIRST_RESERVATION)));
    let out: &mut Vec<T> = held.get_mut();
    for i in 0..len {
        if out.len() == out.capacity() {
            grow(out, len - i);
        }
        let value = match T::unflatten_from(source) {
            Ok(value) => value,
            Err(e) => return Err(e.at(KeyEntry::Index(i))),
        };
        // SAFETY: `out.len() < out.capacity()` (made so above, and the
        // read of `value` cannot touch `out`, which only this function
        // reaches), so the slot at `out.len()` is allocated and unused;
        // writing it and counting it in the length leaves `out` valid.
        unsafe {
            out.as_mut_ptr().add(out.len()).write(value);
            out.set_len(out.len() + 1);
        }
    }
    Ok(held.take())
}

/// Room for `more` elements (or `FIRST_RESERVATION`, if fewer), out of the
/// element loop.
#[cold]
#[inline(never)]
fn grow<T>(out: &mut Vec<T>, more: usize) {
    out.reserve(more.min(FIRST_RESERVATION));
}
