//! What the derive emits beside its errors (thiserror's `fallback.rs`):
//! impls of `Flatten` and `Unflatten` whose bodies never run, so that one
//! mistake in the input is one error, not one more "is not a pytree" at
//! every use of the type.

use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;

/// The impls for `input`, in the namespaces and crate its attributes name
/// when they could be read, else in `::pytree_std::Std`.
pub fn expand(input: &DeriveInput, krate: &syn::Path, namespaces: &[syn::Path]) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let impls = namespaces.iter().map(|ns| {
        let self_leaf = crate::ast::self_leaf(krate, ns);
        quote! {
            #[automatically_derived]
            impl #impl_generics #krate::Flatten<#ns> for #ident #ty_generics #where_clause {
                type Leaf = ::core::convert::Infallible;
                fn flatten_into<__S: #krate::Sink<#self_leaf>>(self, _: &mut __S) {
                    ::core::unreachable!()
                }
                fn visit<'__a, __V: #krate::Visit<#krate::LeafRef<'__a, #ns, #self_leaf>>>(
                    &'__a self,
                    _: &mut __V,
                ) {
                    ::core::unreachable!()
                }
                fn visit_mut<'__a, __V: #krate::VisitMut<#krate::LeafMut<'__a, #ns, #self_leaf>>>(
                    &'__a mut self,
                    _: &mut __V,
                ) {
                    ::core::unreachable!()
                }
                fn zip_check<const __N: ::core::primitive::usize>(
                    &self,
                    _: [&Self; __N],
                ) -> ::core::result::Result<(), #krate::Error> {
                    ::core::unreachable!()
                }
                fn zip_mut_prechecked<'__a, const __N: ::core::primitive::usize, __F>(
                    &'__a mut self,
                    _: [&'__a Self; __N],
                    _: &mut __F,
                )
                where
                    __F: ::core::ops::FnMut(
                        #krate::LeafMut<'__a, #ns, #self_leaf>,
                        [#krate::LeafRef<'__a, #ns, #self_leaf>; __N],
                    ),
                {
                    ::core::unreachable!()
                }
            }
            #[automatically_derived]
            impl #impl_generics #krate::Unflatten<#ns> for #ident #ty_generics #where_clause {
                fn unflatten_from<__S: #krate::Source<#self_leaf>>(
                    _: &mut __S,
                ) -> ::core::result::Result<Self, #krate::Error> {
                    ::core::unreachable!()
                }
            }
        }
    });
    quote! {
        #[allow(unreachable_code, clippy::unimplemented)]
        const _: () = {
            #(#impls)*
        };
    }
}
