//! Attribute parsing with darling: plain receiver structs for the container,
//! its variants and its fields, each parsed on its own (`ast.rs` walks the
//! input), so that a bad attribute on one field leaves the others' to be
//! read and checked: darling reports unknown and malformed attributes
//! (with "did you mean" suggestions), and `ast.rs` collects them with the
//! cross-field errors of `valid.rs`, all in one compile.

use darling::util::{Flag, Override, SpannedValue};
use darling::{FromDeriveInput, FromField, FromMeta, FromVariant};

/// `#[pytree(...)]` on a field.
#[derive(FromField)]
#[darling(attributes(pytree))]
pub struct FieldAttrs {
    /// `#[pytree(static)]`: a meta field.
    #[darling(rename = "static")]
    pub is_static: Flag,
    /// `#[pytree(skip)]`: not part of the tree; rebuilt with `Default`.
    /// `#[pytree(skip(recomputed))]`: and that `Default` is what a
    /// rebuilt value should hold (the type recomputes the field on use).
    pub skip: Option<SpannedValue<Override<SkipOptions>>>,
    /// `#[pytree(kind = "state")]`: the kind of the field's leaves, which
    /// key paths expose (default: inherited, `"param"` at the top).
    pub kind: Option<syn::LitStr>,
    /// `#[pytree(rename = "self")]`: the field's name in key paths,
    /// schemas and checkpoints (serde's spelling), for names Rust refuses
    /// or frowns on (`self`, `LayerNorm`).
    pub rename: Option<syn::LitStr>,
}

/// The options of `#[pytree(skip(...))]`.
#[derive(Default, FromMeta)]
pub struct SkipOptions {
    /// `recomputed`: the field's `Default` is a value the type recomputes
    /// on use (a cache, a mask evaluated again), so a value rebuilt
    /// without it loses nothing, and loads against a template do not
    /// refuse the type.
    pub recomputed: Flag,
}

/// `#[pytree(...)]` on an enum variant: none are defined yet, so darling
/// rejects any given (the variant's fields are parsed one by one).
#[derive(FromVariant)]
#[darling(attributes(pytree))]
pub struct VariantAttrs {}

/// `#[pytree(...)]` on the struct or enum (its fields are parsed one by
/// one). `Default` is what the fields are checked against when these
/// attributes are in error.
#[derive(Default, FromDeriveInput)]
#[darling(attributes(pytree), supports(struct_any, enum_any))]
pub struct ContainerAttrs {
    /// `#[pytree(leaf)]`: the type is a leaf.
    pub leaf: Flag,
    /// `#[pytree(leaf_type = path::L)]`: the type's leaf type is `L`; each
    /// data field's leaves stand as `L`s (`LeafAs`), so fields of several
    /// leaf types (`Array2<f32>`, `Array1<i64>`) share one tree.
    pub leaf_type: Option<syn::Path>,
    /// `#[pytree(namespace = path::Ns)]`, repeatable.
    #[darling(multiple, rename = "namespace")]
    pub namespaces: Vec<syn::Path>,
    /// `#[pytree(crate = "path")]`.
    #[darling(rename = "crate")]
    pub krate: Option<syn::Path>,
    /// `#[pytree(bound = "T: Trait")]`.
    pub bound: Option<syn::LitStr>,
}
