//! `impl Flatten<Ns>` of a tree type (`serde_derive`'s `ser.rs`): its
//! leaf type, `UNIFORM_LEAVES` and `leaf_count_hint`, and the walks that
//! hand each data field's leaves on (`flatten_into`, `visit`,
//! `visit_mut`); the zips' methods are in `zip.rs`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::field::{data_trait, hold};
use super::schema::schema_ident;
use super::{impl_header, zip};
use crate::ast::{Container, Field};
use crate::bound::{self, Trait};

/// `impl Flatten<Ns>`: the leaf type, the leaf count, the three walks
/// (by value, by reference, by mutable reference), and the zips' check and
/// in-place update.
pub(super) fn impl_flatten(c: &Container<'_>, ns: &syn::Path) -> TokenStream {
    let krate = &c.krate;
    let self_leaf = c.self_leaf(ns);
    let flatten_header = impl_header(c, ns, Trait::Flatten);
    let leaf = match (&c.leaf_type, leaf_source(c)) {
        (Some(leaf_type), _) => quote!(#leaf_type),
        (None, Some(ty)) => quote_spanned!(ty.span()=> <#ty as #krate::Flatten<#ns>>::Leaf),
        (None, None) => quote!(::core::convert::Infallible),
    };
    let uniform = uniform_leaves(c, ns);
    let hint = leaf_count_hint(c, ns);
    let flatten_into = walk_method(c, ns, Walk::Owned);
    let visit = walk_method(c, ns, Walk::Ref);
    let visit_mut = walk_method(c, ns, Walk::Mut);
    let zip_check = zip::zip_check_method(c, ns);
    let zip_mut = zip::zip_method(c, ns, true);
    quote! {
    #flatten_header {
        type Leaf = #leaf;

        const UNIFORM_LEAVES: ::core::option::Option<::core::primitive::usize> = #uniform;

        #[inline]
        fn leaf_count_hint(&self) -> ::core::primitive::usize {
            #hint
        }

        #[inline]
        fn flatten_into<__S: #krate::Sink<#self_leaf>>(self, __sink: &mut __S) {
            #flatten_into
        }

        #[inline]
        fn visit<'__a, __V: #krate::Visit<#krate::LeafRef<'__a, #ns, #self_leaf>>>(
            &'__a self,
            __sink: &mut __V,
        ) {
            #visit
        }

        #[inline]
        fn visit_mut<'__a, __V: #krate::VisitMut<#krate::LeafMut<'__a, #ns, #self_leaf>>>(
            &'__a mut self,
            __sink: &mut __V,
        ) {
            #visit_mut
        }

        #[inline]
        fn zip_check<const __N: ::core::primitive::usize>(
            &self,
            __others: [&Self; __N],
        ) -> ::core::result::Result<(), #krate::Error> {
            #zip_check
        }

        #[inline]
        fn zip_mut_prechecked<'__a, const __N: ::core::primitive::usize, __F>(
            &'__a mut self,
            __others: [&'__a Self; __N],
            __f: &mut __F,
        )
        where
            __F: ::core::ops::FnMut(
                #krate::LeafMut<'__a, #ns, #self_leaf>,
                [#krate::LeafRef<'__a, #ns, #self_leaf>; __N],
            ),
        {
            #zip_mut
        }
    }
    }
}

/// The type whose leaf type is the container's: the data field `bound`
/// ties the parameters to, if it does (`bound::leaf_anchor`; not with
/// `#[pytree(bound = "...")]` or a user's bound, where the user ties them
/// and the order below breaks the cycles the anchor could make), else a
/// bare type parameter if a data field is one, else the first data field
/// that does not mention the type itself (so recursive types resolve), else
/// the first data field.
fn leaf_source<'c>(c: &'c Container<'_>) -> Option<&'c syn::Type> {
    let data: Vec<&Field<'_>> = c.data_fields().collect();
    let first = data.first()?;
    if let Some(ty) = bound::leaf_anchor(c) {
        return Some(ty);
    }
    data.iter()
        .find(|f| bound::is_bare_param(f.ty, c))
        .or_else(|| data.iter().find(|f| !bound::mentions(f.ty, c.ident)))
        .unwrap_or(first)
        .ty
        .into()
}

/// `UNIFORM_LEAVES` of a struct: the sum of its data fields' (a struct
/// of uniform fields has the same structure and leaf count in every
/// value); `None` for an enum, whose variant can differ, and for a struct
/// with static fields, whose values can differ.
fn uniform_leaves(c: &Container<'_>, ns: &syn::Path) -> TokenStream {
    let krate = &c.krate;
    if never_uniform(c) {
        return quote!(::core::option::Option::None);
    }
    let parts = c.data_fields().map(|f| {
        let ty = f.ty;
        let data_trait = data_trait(c, ns, ty.span());
        quote_spanned!(ty.span()=> <#ty as #data_trait>::UNIFORM_LEAVES)
    });
    quote!(#krate::__private::uniform_sum(&[#(#parts),*]))
}

/// Whether `UNIFORM_LEAVES` is `None` whatever the fields' types (see
/// [`uniform_leaves`]).
fn never_uniform(c: &Container<'_>) -> bool {
    c.is_enum || c.all_fields().any(|f| f.is_static.is_some())
}

/// The body of `leaf_count_hint`: the uniform count, else the sum of the
/// data fields' hints (of the variant at hand). Where the count is never
/// uniform, the sum alone: no test of a `None` for the compiler to check.
fn leaf_count_hint(c: &Container<'_>, ns: &syn::Path) -> TokenStream {
    let krate = &c.krate;
    let arms = c.variants.iter().map(|v| {
        let pattern = v.data_pattern();
        let hints = v.data_fields().map(|f| {
            let (b, ty) = (&f.binding, f.ty);
            let data_trait = data_trait(c, ns, ty.span());
            quote_spanned!(ty.span()=> <#ty as #data_trait>::field_leaf_count_hint(#b))
        });
        quote!(#pattern => 0 #(+ #hints)*,)
    });
    let uniform = (!never_uniform(c)).then(|| {
        quote! {
            if let ::core::option::Option::Some(__n) = <Self as #krate::Flatten<#ns>>::UNIFORM_LEAVES {
                return __n;
            }
        }
    });
    quote! {
        #uniform
        match self {
            #(#arms)*
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Walk {
    Owned,
    Ref,
    Mut,
}

/// The body of `flatten_into`, `visit` or `visit_mut`: report the node, then
/// each data field between `enter` and `exit`.
fn walk_method(c: &Container<'_>, ns: &syn::Path, walk: Walk) -> TokenStream {
    let krate = &c.krate;
    let arms = c.variants.iter().enumerate().map(|(i, v)| {
        let pattern = v.pattern();
        let schema = schema_ident(i);
        let statics = v.static_fields().map(|f| {
            let (b, ty) = (&f.binding, f.ty);
            let arg = match walk {
                Walk::Owned => quote!(&#b),
                Walk::Ref => quote!(#b),
                Walk::Mut => quote!(&*#b),
            };
            quote_spanned!(ty.span()=> <#ty as #krate::__private::StaticField>::erase_field(#arg))
        });
        let method = match walk {
            Walk::Owned => quote!(flatten_field),
            Walk::Ref => quote!(visit_field),
            Walk::Mut => quote!(visit_field_mut),
        };
        // By value, each data field is held in an `Unwinding` guard until
        // it is handed on, so that a sink that panics drops the fields not
        // walked yet on a fresh stack (pytree-core's `unwind.rs`).
        let held = v.data_fields().filter(|_| walk == Walk::Owned).map(|f| {
            let b = &f.binding;
            let held = hold(c, ns, f, quote!(#b));
            quote!(let #b = #held;)
        });
        // `DataField`'s method enters the field's key and exits it: two
        // calls fewer per field for the compiler to resolve.
        let children = v.data_fields().map(|f| {
            let (b, ty, name) = (&f.binding, f.ty, &f.name);
            let data_trait = data_trait(c, ns, ty.span());
            quote_spanned!(ty.span()=> <#ty as #data_trait>::#method(#b, #name, __sink);)
        });
        let has_data = v.data_fields().next().is_some();
        let (enter_variant, exit_variant) = match &v.name {
            Some(name) if has_data => {
                (
                    quote!(__sink.enter(#krate::KeyRef::Variant(#name));),
                    quote!(__sink.exit();),
                )
            }
            _ => (quote!(), quote!()),
        };
        quote! {
            #pattern => {
                #(#held)*
                __sink.node(#krate::NodeRef::Struct { schema: &#schema, statics: &[#(#statics),*] });
                #enter_variant
                #(#children)*
                #exit_variant
            }
        }
    });
    quote! {
        match self {
            #(#arms)*
        }
    }
}
