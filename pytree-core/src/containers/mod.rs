//! The std containers, for every namespace that implements
//! [`StdContainers`]: sequences (`Vec`, `VecDeque`, arrays), tuples of 1 to
//! 12, `Option`, `Rc` / `Arc`, and the keyed maps: `BTreeMap`, `HashMap`
//! (feature `std`) and `IndexMap` (feature `indexmap`). One module per
//! family; the three maps share one body (`maps.rs`, over the private
//! trait `KeyedMap`); `Box` is every namespace's already
//! (`traits/boxed.rs`).
//!
//! They are ordinary generic impls here, where `Flatten` is local, and not
//! macros expanded in the crate that owns a namespace: in pytree-std,
//! `impl<Ns: StdContainers, T: Flatten<Ns>> Flatten<Ns> for Vec<T>` is
//! refused (E0210: `Ns` must be used as the type parameter for some local
//! type), so a namespace of another crate got a copy of every impl. See
//! docs/design-notes.md, "The std containers live in pytree-core".

mod btree_map;
#[cfg(feature = "std")]
mod hash_map;
#[cfg(feature = "indexmap")]
mod indexmap;
mod maps;
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
