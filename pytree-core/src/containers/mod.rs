//! The std containers, for every namespace that implements
//! [`StdContainers`]: sequences (`Vec`, `VecDeque`, arrays), tuples of 1 to
//! 12, `Option`, `Rc` / `Arc`, and the keyed maps: `BTreeMap`, `HashMap`
//! (feature `std`) and `IndexMap` (feature `indexmap`). One module per
//! family; `Box` is every namespace's already (`traits/boxed.rs`).
//!
//! They are ordinary generic impls here, where `Flatten` is local, and not
//! macros expanded in the crate that owns a namespace: in pytree-std,
//! `impl<Ns: StdContainers, T: Flatten<Ns>> Flatten<Ns> for Vec<T>` is
//! refused (E0210: `Ns` must be used as the type parameter for some local
//! type), so a namespace of another crate got a copy of every impl. See
//! docs/design-notes.md, "The std containers live in pytree-core".

use alloc::format;

use crate::{Error, ErrorKind, Flatten, Static};

mod btree_map;
#[cfg(feature = "std")]
mod hash_map;
#[cfg(feature = "indexmap")]
mod indexmap;
mod option;
mod sequences;
mod shared;
mod tuples;

/// A namespace that has the std containers: `Vec<T>`, `VecDeque<T>`,
/// `[T; N]`, tuples of 1 to 12, `Option<T>`, `Rc<T>`, `Arc<T>`,
/// `BTreeMap<K, V>`, `HashMap<K, V, S>` (feature `std`) and
/// `IndexMap<K, V, S>` (feature `indexmap`; pytree-std turns both on) are
/// pytrees of namespace `Ns` whenever their elements are. The impls are
/// generic over `Ns` and live in this crate, so implementing this marker
/// trait copies no code into the namespace's crate.
///
/// A namespace picks its leaf types with [`impl_leaf!`](crate::impl_leaf);
/// a container type can be a leaf too, as long as its elements are not
/// pytrees of that namespace (here `f32` is not a leaf of `Coarse`, so the
/// generic `Vec<T>` impl does not apply to `Vec<f32>`, and `Vec<f32>` may be
/// one leaf). pytree-std's `namespace!` declares both at once.
///
/// ```
/// use pytree_core::{impl_leaf, ops::basic, StdContainers};
///
/// pub struct Coarse;
/// impl StdContainers for Coarse {}
/// impl_leaf!(Coarse => f64, Vec<f32>);
///
/// let (leaves, def) = basic::flatten::<Coarse, _>(vec![(Some(1.0f64), 2.0f64)]);
/// assert_eq!(leaves, [1.0, 2.0]);
/// assert_eq!(def.to_string(), "[(Some(*), *)]");
/// // A `Vec<f32>` is one leaf of `Coarse`; the tuple around it is a node.
/// let (leaves, _) = basic::flatten::<Coarse, _>((vec![1.0f32, 2.0], vec![3.0f32]));
/// assert_eq!(leaves, [vec![1.0, 2.0], vec![3.0]]);
/// ```
pub trait StdContainers {}

/// The error for maps whose key sets differ; lists both key sets.
#[cold]
pub(super) fn key_mismatch<'k, K: Static + 'k>(
    expected: impl IntoIterator<Item = &'k K>,
    found: impl IntoIterator<Item = &'k K>,
    tree: usize,
) -> Error {
    let show = |keys: &mut dyn Iterator<Item = &'k K>| keys.map(|k| format!("{k:?}")).collect();
    Error::new(ErrorKind::KeyMismatch {
        expected: show(&mut expected.into_iter()),
        found: show(&mut found.into_iter()),
    })
    .in_tree(tree)
}

/// Replaces the value in `slot` by `value.map_leaves(f)`, moving it out of
/// the slot and back: the way a map's values are mapped without rebuilding
/// the map (`map_leaves` takes its leaves by value, so `values_mut` alone
/// cannot do it).
///
/// # Safety
///
/// While `f` runs, the slot's value has been moved out. If `f` panics, the
/// slot is left holding a value that has been (or is being) dropped
/// elsewhere, so the caller must never drop or read it after an unwind:
/// the map that owns the slot must be held in [`ManuallyDrop`](core::mem::ManuallyDrop) while its
/// values are mapped, so that a panic leaks the map (sound) instead of
/// dropping that value a second time (unsound).
#[inline(always)]
pub(super) unsafe fn map_value_in_place<Ns, V: Flatten<Ns>, F: FnMut(V::Leaf) -> V::Leaf>(
    slot: &mut V,
    f: &mut F,
) {
    // SAFETY: `slot` is valid for reads and writes (a `&mut`); the value is
    // read out once and a value is written back before the slot is used
    // again. On unwind the caller leaks the slot's owner (see above).
    unsafe {
        let value = core::ptr::read(slot);
        core::ptr::write(slot, value.map_leaves(f));
    }
}

/// Checks that unflattened keys are strictly increasing, so that no value is
/// dropped by a repeated key.
pub(super) fn check_sorted<K: Static + Ord>(keys: &[K]) -> Result<(), Error> {
    match keys.windows(2).position(|w| w[0] >= w[1]) {
        None => Ok(()),
        Some(i) => Err(Error::custom(format!(
            "map keys in the TreeDef are not sorted and unique: {:?} then {:?}",
            keys[i],
            keys[i + 1]
        ))),
    }
}
