//! The typed model of the input that expansion works from: a container
//! (struct or enum) made of variants (a struct is one variant reached as
//! `Self`), each made of fields that are data or static. Every part keeps
//! the syn node it came from, so errors point at user code.

use darling::util::Override;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::spanned::Spanned;

use crate::attr::{ContainerAttrs, FieldAttrs};

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
    pub leaf_type: Option<&'a syn::Path>,
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
    pub rename: Option<&'a syn::LitStr>,
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
    pub kind: Option<&'a syn::LitStr>,
}

impl Field<'_> {
    /// A data field: a subtree of the pytree.
    pub fn is_data(&self) -> bool {
        self.is_static.is_none() && self.skip.is_none()
    }
}

impl<'a> Container<'a> {
    pub fn from_attrs(attrs: &'a ContainerAttrs) -> darling::Result<Self> {
        let mut errors = darling::Error::accumulator();
        let (is_enum, variants) = match &attrs.data {
            darling::ast::Data::Struct(fields) => (
                false,
                vec![Variant {
                    ident: None,
                    name: None,
                    style: fields.style,
                    fields: model_fields(&fields.fields),
                }],
            ),
            darling::ast::Data::Enum(variants) => (
                true,
                variants
                    .iter()
                    .map(|v| Variant {
                        ident: Some(&v.ident),
                        name: Some(unraw(&v.ident)),
                        style: v.fields.style,
                        fields: model_fields(&v.fields.fields),
                    })
                    .collect(),
            ),
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
        let (krate, namespaces) = Container::paths(attrs);
        let container = Container {
            ident: &attrs.ident,
            name: unraw(&attrs.ident),
            generics: &attrs.generics,
            is_enum,
            variants,
            leaf: attrs.leaf.is_present().then(|| attrs.leaf.span()),
            leaf_type: attrs.leaf_type.as_ref(),
            namespaces,
            krate,
            bound,
        };
        errors.finish_with(container)
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

fn model_fields(fields: &[FieldAttrs]) -> Vec<Field<'_>> {
    fields
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let (ident_name, member) = match &f.ident {
                Some(ident) => (unraw(ident), syn::Member::Named(ident.clone())),
                None => (
                    i.to_string(),
                    syn::Member::Unnamed(syn::Index {
                        index: i as u32,
                        span: f.ty.span(),
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
            Field {
                binding,
                name,
                rename: f.rename.as_ref(),
                member,
                ty: &f.ty,
                is_static: f.is_static.is_present().then(|| f.is_static.span()),
                skip: f.skip.as_ref().map(|s| s.span()),
                recomputed: matches!(
                    f.skip.as_deref(),
                    Some(Override::Explicit(o)) if o.recomputed.is_present()
                ),
                kind: f.kind.as_ref(),
            }
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

/// `<Self as Flatten<Ns>>::Leaf`, the container's leaf type in generated
/// code. Never `Self::Leaf`: in an enum with a variant named `Leaf` that
/// path is ambiguous (a hard error, rust#57644).
pub fn self_leaf(krate: &syn::Path, ns: &syn::Path) -> TokenStream {
    quote!(<Self as #krate::Flatten<#ns>>::Leaf)
}
