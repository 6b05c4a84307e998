//! How generated code reaches one field: the hidden traits of pytree-core's
//! `__private` it calls through (spanned at the field's type, so that a
//! field that is no pytree is reported there), the guard that holds a
//! field while a value is taken apart or built, and error places.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::{Container, Field, Variant};

/// The hidden trait generated code reaches a data field through (its
/// tokens at `span`, the field's type): `DataField`, whose leaves are the
/// struct's, or with `#[pytree(leaf_type = L)]` `ConvertedField`, whose
/// leaves stand as `L`s.
pub(super) fn data_trait(c: &Container<'_>, ns: &syn::Path, span: Span) -> TokenStream {
    let krate = &c.krate;
    let self_leaf = c.self_leaf(ns);
    match &c.leaf_type {
        None => quote_spanned!(span=> #krate::__private::DataField<#ns, #self_leaf>),
        Some(_) => quote_spanned!(span=> #krate::__private::ConvertedField<#ns, #self_leaf>),
    }
}

/// The unflatten side of [`data_trait`].
pub(super) fn unflatten_trait(c: &Container<'_>, ns: &syn::Path, span: Span) -> TokenStream {
    let krate = &c.krate;
    let self_leaf = c.self_leaf(ns);
    match &c.leaf_type {
        None => quote_spanned!(span=> #krate::__private::DataFieldUnflatten<#ns, #self_leaf>),
        Some(_) => {
            quote_spanned!(span=> #krate::__private::ConvertedFieldUnflatten<#ns, #self_leaf>)
        }
    }
}

/// `expr?`, placing the error at `place` on the way out. A `match`, not
/// `.map_err(|e| ..)?`: a closure is one more body for the compiler to type
/// and borrow check, per field and per method, which showed in the build
/// time of crates with many derived types.
pub(super) fn try_at(expr: TokenStream, place: &TokenStream) -> TokenStream {
    quote! {
        match #expr {
            ::core::result::Result::Ok(__v) => __v,
            ::core::result::Result::Err(__e) => return ::core::result::Result::Err(__e #place),
        }
    }
}

/// `.at(KeyEntry::Field(..))` and, in an enum, `.at(KeyEntry::Variant(..))`.
pub(super) fn error_place(
    c: &Container<'_>,
    v: &Variant<'_>,
    f: Option<&Field<'_>>,
) -> TokenStream {
    let krate = &c.krate;
    let field = f.map(|f| {
        let name = &f.name;
        quote!(.at(#krate::KeyEntry::Field(#name)))
    });
    let variant = v
        .name
        .as_ref()
        .map(|name| quote!(.at(#krate::KeyEntry::Variant(#name))));
    quote!(#field #variant)
}

/// `value` (of data field `f`'s type) held in an `Unwinding` guard, which
/// drops it with a walk if it is dropped before it is taken back, so that
/// a panic or an error drops a deep field without overflowing the stack
/// (pytree-core's `unwind.rs`). Reached through `DataField`, spanned at
/// the field's type, like every other call on a field.
pub(super) fn hold(
    c: &Container<'_>,
    ns: &syn::Path,
    f: &Field<'_>,
    value: TokenStream,
) -> TokenStream {
    let ty = f.ty;
    let data_trait = data_trait(c, ns, ty.span());
    quote_spanned!(ty.span()=> <#ty as #data_trait>::hold(#value))
}

/// `value`, a data field `f` held by the unflatten side's trait, passed
/// through [`data_trait`]'s `keep` in a `leaf_type` struct: there both
/// traits fail on the same missing `LeafAs`, and with the flat side's
/// obligation first in the body rustc reports that one only, as in every
/// other body (one error at the field, not two). Other structs need no
/// such call: their two traits fail on different bounds (`Flatten`,
/// `Unflatten`), each its own error.
pub(super) fn kept(
    c: &Container<'_>,
    ns: &syn::Path,
    f: &Field<'_>,
    value: TokenStream,
) -> TokenStream {
    if c.leaf_type.is_none() {
        return value;
    }
    let ty = f.ty;
    let data_trait = data_trait(c, ns, ty.span());
    quote_spanned!(ty.span()=> <#ty as #data_trait>::keep(#value))
}

/// `Self::V { a: expr, b: expr }` (or `Self::V` for a unit variant).
pub(super) fn construct(v: &Variant<'_>, exprs: &[TokenStream]) -> TokenStream {
    let path = v.path();
    let members = v.fields.iter().map(|f| &f.member);
    match v.style {
        darling::ast::Style::Unit => path,
        _ => quote!(#path { #(#members: #exprs),* }),
    }
}
