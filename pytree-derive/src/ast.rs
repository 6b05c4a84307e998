//! The typed model of the input that expansion works from: a container
//! (struct or enum) made of variants (a struct is one variant reached as
//! `Self`), each made of fields that are data or static. Every part keeps
//! the syn node it came from, so errors point at user code. Built with
//! every attribute error collected, not only the first (serde's `Ctxt`:
//! darling's `Accumulator`, which panics if dropped unchecked as `Ctxt`
//! does).

use darling::util::Override;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::spanned::Spanned;

use darling::error::Accumulator;
use darling::{FromDeriveInput, FromField, FromVariant};

use crate::attr::{ContainerAttrs, FieldAttrs, VariantAttrs};

pub struct Container<'a> {
    pub ident: &'a syn::Ident,
    /// The type's name in schemas and messages (`r#type` is `type`).
    pub name: String,
    pub generics: &'a syn::Generics,
    pub is_enum: bool,
    pub variants: Vec<Variant<'a>>,
    pub leaf: Option<Span>,
    /// `#[pytree(leaf_type = L)]`: the leaf type, which every data field's
    /// leaves convert to.
    pub leaf_type: Option<syn::Path>,
    pub namespaces: Vec<syn::Path>,
    pub krate: syn::Path,
    pub bound: Option<Vec<syn::WherePredicate>>,
}

pub struct Variant<'a> {
    /// `None` for a struct.
    pub ident: Option<&'a syn::Ident>,
    /// The variant's name in schemas, key paths and messages (`r#enum`
    /// is `enum`, as for fields).
    pub name: Option<String>,
    pub style: darling::ast::Style,
    pub fields: Vec<Field<'a>>,
}

pub struct Field<'a> {
    /// The name used in schemas and key paths: `#[pytree(rename)]`, else
    /// the ident (unraw), else the index.
    pub name: String,
    /// `#[pytree(rename = "...")]`, with its span.
    pub rename: Option<syn::LitStr>,
    /// `a` or `0`, for member access and patterns.
    pub member: syn::Member,
    /// The local binding in generated code.
    pub binding: syn::Ident,
    pub ty: &'a syn::Type,
    pub is_static: Option<Span>,
    pub skip: Option<Span>,
    /// `#[pytree(skip(recomputed))]`: rebuilding with `Default` loses
    /// nothing.
    pub recomputed: bool,
    /// `#[pytree(kind = "...")]`, with its span.
    pub kind: Option<syn::LitStr>,
}

impl Field<'_> {
    /// A data field: a subtree of the pytree.
    pub fn is_data(&self) -> bool {
        self.is_static.is_none() && self.skip.is_none()
    }
}

impl<'a> Container<'a> {
    /// The container's leaf type in generated code: `Self::Leaf` in a
    /// struct (in the `Unflatten` impl too, through its supertrait), which
    /// is shorter for the compiler to read and resolve than
    /// `<Self as Flatten<Ns>>::Leaf` (some 80 uses per struct; 6% of the
    /// build time of a crate of derived structs); the long form in an enum
    /// ([`self_leaf`]).
    pub fn self_leaf(&self, ns: &syn::Path) -> TokenStream {
        if self.is_enum {
            self_leaf(&self.krate, ns)
        } else {
            quote!(Self::Leaf)
        }
    }

    /// The model of `input`, its attributes parsed one by one: each error
    /// goes to `errors`, and the model holds what could be read (the
    /// container's defaults if its own attributes are in error, no field
    /// whose attributes are), so that `valid.rs` checks the rest in the
    /// same compile.
    pub fn from_input(input: &'a syn::DeriveInput, errors: &mut Accumulator) -> Self {
        let attrs = errors
            .handle(ContainerAttrs::from_derive_input(input))
            .unwrap_or_default();
        let (is_enum, variants) = match &input.data {
            syn::Data::Enum(data) => (
                true,
                data.variants
                    .iter()
                    .map(|v| {
                        errors.handle(VariantAttrs::from_variant(v));
                        Variant {
                            ident: Some(&v.ident),
                            name: Some(unraw(&v.ident)),
                            style: (&v.fields).into(),
                            fields: model_fields(&v.fields, errors),
                        }
                    })
                    .collect(),
            ),
            syn::Data::Struct(data) => (
                false,
                vec![Variant {
                    ident: None,
                    name: None,
                    style: (&data.fields).into(),
                    fields: model_fields(&data.fields, errors),
                }],
            ),
            // `valid::not_a_union` turned it away, and darling's
            // `supports` reported it above.
            syn::Data::Union(_) => (false, Vec::new()),
        };
        let bound = attrs.bound.as_ref().and_then(|lit| {
            errors.handle(
                lit.parse_with(
                    syn::punctuated::Punctuated::<syn::WherePredicate, syn::Token![,]>::parse_terminated,
                )
                .map(|p| p.into_iter().collect())
                .map_err(|e| {
                    darling::Error::custom(format!(
                        "`bound` must be where-clause predicates such as \"T: Clone, U: Default\": {e}"
                    ))
                    .with_span(lit)
                }),
            )
        });
        let (krate, namespaces) = Container::paths(&attrs);
        Container {
            ident: &input.ident,
            name: unraw(&input.ident),
            generics: &input.generics,
            is_enum,
            variants,
            leaf: attrs.leaf.is_present().then(|| attrs.leaf.span()),
            leaf_type: attrs.leaf_type,
            namespaces,
            krate,
            bound,
        }
    }

    /// The runtime crate (`#[pytree(crate = ..)]`, default `::pytree_std`)
    /// and the namespaces to implement for (default its `Std`).
    pub fn paths(attrs: &ContainerAttrs) -> (syn::Path, Vec<syn::Path>) {
        let krate = attrs
            .krate
            .clone()
            .unwrap_or_else(|| syn::parse_quote!(::pytree_std));
        let namespaces = if attrs.namespaces.is_empty() {
            vec![syn::parse_quote!(#krate::Std)]
        } else {
            attrs.namespaces.clone()
        };
        (krate, namespaces)
    }

    /// Every field of every variant.
    pub fn all_fields(&self) -> impl Iterator<Item = &Field<'a>> {
        self.variants.iter().flat_map(|v| v.fields.iter())
    }

    /// Every data field of every variant.
    pub fn data_fields(&self) -> impl Iterator<Item = &Field<'a>> {
        self.all_fields().filter(|f| f.is_data())
    }
}

/// An identifier as a name users read: without the `r#` of a raw
/// identifier.
fn unraw(ident: &syn::Ident) -> String {
    syn::ext::IdentExt::unraw(ident).to_string()
}

/// The fields whose attributes parse; the others' errors go to `errors`.
fn model_fields<'a>(fields: &'a syn::Fields, errors: &mut Accumulator) -> Vec<Field<'a>> {
    fields
        .iter()
        .enumerate()
        .filter_map(|(i, field)| {
            let f = errors.handle(FieldAttrs::from_field(field))?;
            let (ident_name, member) = match &field.ident {
                Some(ident) => (unraw(ident), syn::Member::Named(ident.clone())),
                None => (
                    i.to_string(),
                    syn::Member::Unnamed(syn::Index {
                        index: i as u32,
                        span: field.ty.span(),
                    }),
                ),
            };
            // The binding keeps the Rust name: a renamed name need not be
            // an identifier (`LayerNorm`, `self`).
            let binding = format_ident!("__field_{}", ident_name);
            let name = match &f.rename {
                Some(lit) => lit.value(),
                None => ident_name,
            };
            Some(Field {
                binding,
                name,
                member,
                ty: &field.ty,
                is_static: f.is_static.is_present().then(|| f.is_static.span()),
                skip: f.skip.as_ref().map(|s| s.span()),
                recomputed: matches!(
                    f.skip.as_deref(),
                    Some(Override::Explicit(o)) if o.recomputed.is_present()
                ),
                rename: f.rename,
                kind: f.kind,
            })
        })
        .collect()
}

impl Variant<'_> {
    /// `Self` or `Self::Variant`.
    pub fn path(&self) -> TokenStream {
        match self.ident {
            Some(v) => quote!(Self::#v),
            None => quote!(Self),
        }
    }

    /// A pattern binding every field to the given idents:
    /// `Self::V { a: x, b: y }`, `Self::V(x, y)` or `Self::V`.
    pub fn pattern_with(&self, bindings: &[syn::Ident]) -> TokenStream {
        let path = self.path();
        let members = self.fields.iter().map(|f| &f.member);
        match self.style {
            darling::ast::Style::Unit => path,
            _ => quote!(#path { #(#members: #bindings),* }),
        }
    }

    /// The pattern binding every field to its own binding.
    pub fn pattern(&self) -> TokenStream {
        let bindings: Vec<_> = self.fields.iter().map(|f| f.binding.clone()).collect();
        self.pattern_with(&bindings)
    }

    pub fn data_fields(&self) -> impl Iterator<Item = &Field<'_>> {
        self.fields.iter().filter(|f| f.is_data())
    }

    /// A pattern binding the data fields only (the rest is `..`).
    pub fn data_pattern(&self) -> TokenStream {
        let path = self.path();
        let members = self.data_fields().map(|f| &f.member);
        let bindings = self.data_fields().map(|f| &f.binding);
        match self.style {
            darling::ast::Style::Unit => path,
            _ => quote!(#path { #(#members: #bindings,)* .. }),
        }
    }

    /// Fields that are in the tree (data and static), in declaration order.
    pub fn tree_fields(&self) -> impl Iterator<Item = &Field<'_>> {
        self.fields.iter().filter(|f| f.skip.is_none())
    }

    pub fn static_fields(&self) -> impl Iterator<Item = &Field<'_>> {
        self.fields.iter().filter(|f| f.is_static.is_some())
    }
}

/// `<Self as Flatten<Ns>>::Leaf`, an enum's leaf type in generated code
/// (and the fallback's). Never `Self::Leaf` in an enum: with a variant
/// named `Leaf` that path is ambiguous (a hard error, rust#57644).
pub fn self_leaf(krate: &syn::Path, ns: &syn::Path) -> TokenStream {
    quote!(<Self as #krate::Flatten<#ns>>::Leaf)
}
