//! `impl Unflatten<Ns>` of a tree type (`serde_derive`'s `de.rs`):
//! `unflatten_from`, which reads the type back from a TreeDef and leaves,
//! and `map_leaves`; `zip_with` is in `zip.rs`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::field::{construct, error_place, hold, kept, try_at, unflatten_trait};
use super::schema::schema_ident;
use super::{impl_header, zip};
use crate::ast::Container;
use crate::bound::Trait;

/// `impl Unflatten<Ns>`: rebuilding from a TreeDef and leaves, and the
/// two walks that build a new value (`map_leaves`, `zip_with`).
pub(super) fn impl_unflatten(c: &Container<'_>, ns: &syn::Path) -> TokenStream {
    let krate = &c.krate;
    let self_leaf = c.self_leaf(ns);
    let unflatten_header = impl_header(c, ns, Trait::Unflatten);
    let unflatten = unflatten_method(c, ns);
    let map_leaves = map_leaves(c, ns);
    let zip_with = zip::zip_method(c, ns, false);
    quote! {
    #unflatten_header {
        // Inlined whole into the caller in optimized builds: a struct's
        // reads then keep the source in registers (unflatten of T1 runs
        // 3x faster); a plain `#[inline]` in debug builds, where it
        // would only cost compile time.
        #[cfg_attr(debug_assertions, inline)]
        #[cfg_attr(not(debug_assertions), inline(always))]
        fn unflatten_from<__S: #krate::Source<#self_leaf>>(
            __source: &mut __S,
        ) -> ::core::result::Result<Self, #krate::Error> {
            #unflatten
        }

        #[inline]
        fn map_leaves<__F: ::core::ops::FnMut(#self_leaf) -> #self_leaf>(self, __f: &mut __F) -> Self {
            #map_leaves
        }

        #[inline]
        fn zip_with_prechecked<'__a, const __N: ::core::primitive::usize, __F>(
            &'__a self,
            __others: [&'__a Self; __N],
            __f: &mut __F,
        ) -> Self
        where
            __F: ::core::ops::FnMut(
                #krate::LeafRef<'__a, #ns, #self_leaf>,
                [#krate::LeafRef<'__a, #ns, #self_leaf>; __N],
            ) -> #self_leaf,
        {
            #zip_with
        }
    }
    }
}

fn unflatten_method(c: &Container<'_>, ns: &syn::Path) -> TokenStream {
    let krate = &c.krate;
    let self_leaf = c.self_leaf(ns);
    let schemas = (0..c.variants.len()).map(schema_ident);
    let arms = c.variants.iter().enumerate().map(|(i, v)| {
        let statics = v.static_fields().map(|f| {
            let (b, ty) = (&f.binding, f.ty);
            let place = error_place(c, v, Some(f));
            let call = quote_spanned!(ty.span()=> <#ty as #krate::__private::StaticField>::read_field(__source));
            let checked = try_at(call, &place);
            quote!(let #b: #ty = #checked;)
        });
        let data = v.data_fields().map(|f| {
            let (b, ty) = (&f.binding, f.ty);
            let place = error_place(c, v, Some(f));
            let unflatten_trait = unflatten_trait(c, ns, ty.span());
            let call = quote_spanned!(ty.span()=> <#ty as #unflatten_trait>::unflatten_field(__source));
            // Comes held until the value is built, so that a later field's
            // error or panic drops a deep one on a fresh stack (see
            // `map_leaves`).
            let checked = kept(c, ns, f, try_at(call, &place));
            quote!(let #b = #checked;)
        });
        let exprs: Vec<TokenStream> = v.fields.iter().map(|f| {
            let (b, ty) = (&f.binding, f.ty);
            if f.skip.is_some() {
                quote_spanned!(ty.span()=> <#ty as ::core::default::Default>::default())
            } else if f.is_data() {
                quote!(#b.take())
            } else {
                quote!(#b)
            }
        }).collect();
        let value = construct(v, &exprs);
        quote! {
            #i => {
                #(#statics)*
                #(#data)*
                ::core::result::Result::Ok(#value)
            }
        }
    });
    // A `match`, not `?`: see `try_at`.
    let node = try_at(
        quote!(#krate::Source::<#self_leaf>::struct_node(__source, &[#(&#schemas),*])),
        &TokenStream::new(),
    );
    quote! {
        match #node {
            #(#arms)*
            _ => ::core::result::Result::Err(#krate::Error::custom("the TreeDef names a variant this type does not have")),
        }
    }
}

/// The body of `map_leaves`. Each data field is held in an `Unwinding`
/// guard until it is mapped, and its result until the value is built, so
/// that a panic in the closure drops what is left of a deep tree on a fresh
/// stack (see pytree-core's `unwind.rs`), not by recursing on this one.
fn map_leaves(c: &Container<'_>, ns: &syn::Path) -> TokenStream {
    let arms = c.variants.iter().map(|v| {
        let pattern = v.pattern();
        let held = v.data_fields().map(|f| {
            let b = &f.binding;
            let held = hold(c, ns, f, quote!(#b));
            quote!(let #b = #held;)
        });
        let mapped = v.data_fields().map(|f| {
            let (b, ty) = (&f.binding, f.ty);
            let unflatten_trait = unflatten_trait(c, ns, ty.span());
            // Takes the held field, gives the mapped one held.
            let call = quote_spanned!(ty.span()=> <#ty as #unflatten_trait>::map_field(#b, __f));
            quote!(let #b = #call;)
        });
        let exprs: Vec<TokenStream> = v
            .fields
            .iter()
            .map(|f| {
                let b = &f.binding;
                if f.is_data() {
                    quote!(#b.take())
                } else {
                    quote!(#b)
                }
            })
            .collect();
        let value = construct(v, &exprs);
        quote! {
            #pattern => {
                #(#held)*
                #(#mapped)*
                #value
            }
        }
    });
    quote! {
        match self {
            #(#arms)*
        }
    }
}
