//! # pytree-derive
//!
//! `#[derive(PyTree)]`: implements `Flatten` and `Unflatten` (of
//! `pytree-core`) for a struct or enum. Use it through `pytree-std`, which
//! re-exports it next to the `PyTree` trait.
//!
//! The macro runs in three stages, one module each, as serde_derive and
//! thiserror do:
//! - `attr` + `ast`: parse the input into a typed model (darling receivers;
//!   every bad attribute is reported, not only the first);
//! - `valid`: cross-field rules, one function per rule;
//! - `bound` + `expand`: infer where-clauses, then generate the impls;
//! - `fallback`: on errors, impls that never run beside them, so that one
//!   mistake is one error (thiserror's `fallback.rs`).
//!
//! Attributes:
//! - field `#[pytree(static)]`: a meta field, kept in the TreeDef (must be
//!   `Clone + Eq + Hash + Debug + Send + Sync + 'static`);
//! - field `#[pytree(skip)]`: not part of the tree at all (not a leaf, not
//!   in the TreeDef); rebuilt with `Default::default()` by unflatten and the
//!   zips (for caches, `PhantomData`, borrowed helpers); the schema lists
//!   it, so that a checkpoint load against a template refuses to lose its
//!   value, unless it is `#[pytree(skip(recomputed))]`: its `Default` is a
//!   value the type recomputes on use (an optimizer's mask), and nothing
//!   is lost;
//! - field `#[pytree(kind = "state")]`: the kind of the field's leaves
//!   (`KeyPath::kind`), so PAX's split of parameters and state is one
//!   `partition`; untagged fields inherit it (`"param"` at the top);
//! - field `#[pytree(rename = "self")]`: the field's name in key paths,
//!   `keystr`, schemas and checkpoint tensor names (serde's spelling), for
//!   a name Rust refuses (`self`) or lints (`LayerNorm`); an empty name,
//!   two fields under one name, and a rename on a skipped or tuple field
//!   are compile errors;
//! - container `#[pytree(leaf)]`: the type itself is a leaf (a tensor type);
//! - container `#[pytree(leaf_type = path::L)]`: the type's leaf type is
//!   `L`, and each data field's leaves stand as `L`s (`LeafAs<Ns, L>`):
//!   with `leaf_type = AnyArray`, typed arrays of several dtypes
//!   (`Array2<f32>` weights, an `Array2<i64>` buffer) in one tree, moved
//!   and lent without copies, dtype-checked when rebuilt (through the
//!   hidden `ConvertedField` instead of `DataField`; each type parameter
//!   used in data fields gets `<T as Flatten<Ns>>::Leaf: LeafAs<Ns, L>`);
//! - container `#[pytree(namespace = path::Ns)]` (repeatable): implement for
//!   these namespaces instead of `pytree_std::Std`;
//! - container `#[pytree(crate = "path")]`: where the runtime crate is
//!   (default `::pytree_std`);
//! - container `#[pytree(bound = "T: Trait, ...")]`: replaces the inferred
//!   where-clause (see `bound.rs`: bounds on the parameters, each tied to
//!   the leaf type of the first data field of a concrete type if there is
//!   one).

#![warn(missing_docs)]

mod ast;
mod attr;
mod bound;
mod expand;
mod fallback;
mod valid;

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

/// Derives `Flatten` and `Unflatten` for a struct or enum; see the crate
/// docs for the attributes.
#[proc_macro_derive(PyTree, attributes(pytree))]
pub fn derive_pytree(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive(&input).into()
}
