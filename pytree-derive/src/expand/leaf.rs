//! `#[pytree(leaf)]`: the whole value is one leaf.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::Container;

/// `#[pytree(leaf)]`: the whole value is one leaf, lent by reference:
/// `impl_leaf!` with the type's generics and where-clause, so that leaf
/// semantics are written in one place.
pub(super) fn leaf_impls(c: &Container<'_>, ns: &syn::Path) -> TokenStream {
    let krate = &c.krate;
    let ident = c.ident;
    let params = &c.generics.params;
    let (_, ty_generics, where_clause) = c.generics.split_for_impl();
    // A leaf owns its data (`Leaf: 'static`); say so for generic types.
    let predicates = where_clause.into_iter().flat_map(|w| w.predicates.iter());
    quote! {
        #krate::impl_leaf!(impl [#params] #ns => #ident #ty_generics where [#(#predicates,)* Self: 'static]);
    }
}
