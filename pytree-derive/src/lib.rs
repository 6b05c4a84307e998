//! # pytree-derive
//!
//! `#[derive(PyTree)]`: implements `Flatten` and `Unflatten` (of
//! `pytree-core`) for a struct or enum. Use it through `pytree-std`, which
//! re-exports it next to the `PyTree` trait.
//!
//! The macro runs in stages, one module each, as serde_derive and
//! thiserror do (`derive` below is the pipeline):
//! - `attr` + `ast`: parse the input into a typed model (darling
//!   receivers, parsed one field at a time);
//! - `valid`: cross-field rules, one function per rule;
//!   every error of these two stages lands in one collector (serde's
//!   `Ctxt`; here darling's `Accumulator`), so one compile reports every
//!   mistake of the input, not only the first;
//! - `bound`: infer the where-clauses;
//! - `expand`: generate the impls, one submodule per thing generated
//!   (`flatten`, `unflatten`, `zip`, `schema`, `leaf`; `field`: how they
//!   reach a field);
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

use darling::FromDeriveInput;
use proc_macro2::TokenStream;
use quote::quote;
use syn::{parse_macro_input, DeriveInput};

use crate::ast::Container;
use crate::attr::ContainerAttrs;

/// Derives `Flatten` and `Unflatten` for a struct or enum; see the crate
/// docs for the attributes.
#[proc_macro_derive(PyTree, attributes(pytree))]
pub fn derive_pytree(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    derive(&input).into()
}

/// Parse, validate, expand. On errors, the errors and impls that never
/// run (module `fallback`), so the type's uses raise no further errors.
fn derive(input: &DeriveInput) -> TokenStream {
    let err = match try_derive(input) {
        Ok(code) => return code,
        Err(err) => err.write_errors(),
    };
    if matches!(input.data, syn::Data::Union(_)) {
        // A union gets no impls: it cannot be a pytree at all.
        return err;
    }
    let (krate, namespaces) = match ContainerAttrs::from_derive_input(input) {
        Ok(attrs) => Container::paths(&attrs),
        Err(_) => (
            syn::parse_quote!(::pytree_std),
            vec![syn::parse_quote!(::pytree_std::Std)],
        ),
    };
    let fallback = fallback::expand(input, &krate, &namespaces);
    quote!(#err #fallback)
}

/// Parse, validate, expand; every error of the input, or the code.
fn try_derive(input: &DeriveInput) -> darling::Result<TokenStream> {
    valid::not_a_union(input)?;
    let mut errors = darling::Error::accumulator();
    let container = Container::from_input(input, &mut errors);
    valid::check(&container, &mut errors);
    errors.finish()?;
    Ok(expand::expand(&container))
}
