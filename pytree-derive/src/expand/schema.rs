//! The `static` schemas a tree type's TreeDef nodes point at: one per
//! variant (a struct is one), naming its fields, their kinds and the
//! skipped fields whose values a load would lose.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::ast::Container;

/// The name of variant `i`'s schema static.
pub(super) fn schema_ident(i: usize) -> syn::Ident {
    format_ident!("__PYTREE_SCHEMA_{}", i)
}

pub(super) fn schema_statics(c: &Container<'_>) -> TokenStream {
    if c.leaf.is_some() {
        return TokenStream::new();
    }
    let krate = &c.krate;
    let type_name = &c.name;
    let statics = c.variants.iter().enumerate().map(|(i, v)| {
        let ident = schema_ident(i);
        let variant = match &v.name {
            Some(name) => quote!(::core::option::Option::Some(#name)),
            None => quote!(::core::option::Option::None),
        };
        let style = match v.style {
            darling::ast::Style::Struct => quote!(#krate::FieldStyle::Named),
            darling::ast::Style::Tuple => quote!(#krate::FieldStyle::Tuple),
            darling::ast::Style::Unit => quote!(#krate::FieldStyle::Unit),
        };
        let fields = v.tree_fields().map(|f| {
            let name = &f.name;
            if f.is_static.is_some() {
                quote!(#krate::FieldSchema::meta(#name))
            } else if let Some(kind) = &f.kind {
                quote!(#krate::FieldSchema::data(#name).with_kind(#kind))
            } else {
                quote!(#krate::FieldSchema::data(#name))
            }
        });
        // Skipped fields that hold a value (not `PhantomData`, not
        // `skip(recomputed)`): a load that would rebuild them with
        // `Default` refuses the type.
        let skipped: Vec<&String> = v
            .fields
            .iter()
            .filter(|f| f.skip.is_some() && !f.recomputed && !is_phantom(f.ty))
            .map(|f| &f.name)
            .collect();
        let with_skipped = if skipped.is_empty() {
            TokenStream::new()
        } else {
            quote!(.with_skipped(&[#(#skipped),*]))
        };
        quote! {
            static #ident: #krate::Schema = #krate::Schema::new(
                #type_name,
                ::core::module_path!(),
                #variant,
                #style,
                &[#(#fields),*],
            )#with_skipped;
        }
    });
    quote!(#(#statics)*)
}

/// Whether a field's type is `PhantomData<..>` (one value: `Default`
/// gives it back exactly).
fn is_phantom(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Path(p) => p
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "PhantomData"),
        _ => false,
    }
}
