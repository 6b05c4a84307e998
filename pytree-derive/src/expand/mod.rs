//! Code generation, one module per thing generated: for each namespace,
//! an `impl Flatten<Ns>` (`flatten.rs`) and an `impl Unflatten<Ns>`
//! (`unflatten.rs`), whose zip methods share `zip.rs`, or for a
//! `#[pytree(leaf)]` type one `impl_leaf!` (`leaf.rs`); all inside one
//! `const _: () = { ... };` block that also holds the `static` schemas the
//! TreeDef nodes point at (`schema.rs`). `field.rs` is how each of them
//! reaches a field.
//!
//! Generated code names everything by absolute path (`::core::...`, the
//! runtime crate path), calls trait methods of std by path (no prelude
//! needed, no trait of the user's scope picked up), names its leaf type
//! `<Self as Flatten<Ns>>::Leaf` (a variant named `Leaf` makes
//! `Self::Leaf` ambiguous), and calls on a field are spanned at the
//! field's type so that a missing impl is reported on the field
//! (`tests/tests/hygiene.rs` holds it to any names and scope).

mod field;
mod flatten;
mod leaf;
mod schema;
mod unflatten;
mod zip;

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::Container;
use crate::bound::{self, Trait};

/// The impls of a model checked by `valid.rs`.
pub fn expand(c: &Container<'_>) -> TokenStream {
    let schemas = schema::schema_statics(c);
    let fields_fn = zip::fields_fn(c);
    let impls = c.namespaces.iter().map(|ns| {
        if c.leaf.is_some() {
            leaf::leaf_impls(c, ns)
        } else {
            let flatten = flatten::impl_flatten(c, ns);
            let unflatten = unflatten::impl_unflatten(c, ns);
            quote!(#flatten #unflatten)
        }
    });
    quote! {
        #[allow(non_upper_case_globals, unused_qualifications)]
        const _: () = {
            #schemas
            #fields_fn
            #(#impls)*
        };
    }
}

/// `impl<..> Trait for Name<..> where ..`.
fn impl_header(c: &Container<'_>, ns: &syn::Path, which: Trait) -> TokenStream {
    let ident = c.ident;
    let (impl_generics, ty_generics, where_clause) = c.generics.split_for_impl();
    let mut predicates: Vec<TokenStream> = where_clause
        .map(|w| w.predicates.iter().map(|p| quote!(#p)).collect())
        .unwrap_or_default();
    predicates.extend(bound::predicates(c, ns, which));
    let trait_path = which.path(&c.krate, ns);
    quote! {
        #[automatically_derived]
        impl #impl_generics #trait_path for #ident #ty_generics where #(#predicates,)*
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_leaf_type_names_the_leaf_and_reaches_fields_through_converted_field() {
        let input: syn::DeriveInput = syn::parse_quote! {
            #[pytree(leaf_type = AnyArray)]
            struct Embeddings { weight: Array2<f32>, ids: Array1<i64> }
        };
        let code = crate::try_derive(&input)
            .map(|ts| ts.to_string())
            .unwrap_or_default();
        assert!(code.contains("type Leaf = AnyArray ;"), "{code}");
        assert!(
            code.contains("ConvertedField < :: pytree_std :: Std , Self :: Leaf >"),
            "{code}"
        );
        assert!(
            code.contains("ConvertedFieldUnflatten < :: pytree_std :: Std , Self :: Leaf >"),
            "{code}"
        );
        assert!(!code.contains("DataField"), "{code}");
    }

    #[test]
    fn a_struct_zips_through_one_fields_function_unless_a_type_names_self() {
        let expand = |input: syn::DeriveInput| {
            crate::try_derive(&input)
                .map(|ts| ts.to_string())
                .unwrap_or_default()
        };
        let code = expand(syn::parse_quote! {
            struct Pair<'a> { a: f64, #[pytree(static)] n: &'a str, #[pytree(skip)] s: u8 }
        });
        assert!(
            code.contains("fn __pytree_fields < '__t , 'a > (__t : & '__t Pair < 'a >) -> (& '__t f64 , & '__t & 'a str ,)"),
            "{code}"
        );
        // The three zips, and no closure in any of them.
        assert_eq!(
            code.matches("__others . map (__pytree_fields)").count(),
            3,
            "{code}"
        );
        assert!(!code.contains("| __t |"), "{code}");

        let code = expand(syn::parse_quote! {
            struct Chain { v: f64, next: Option<Box<Self>> }
        });
        assert!(!code.contains("__pytree_fields"), "{code}");
        assert_eq!(
            code.matches("transpose2 (__others . map (| __t |").count(),
            3,
            "{code}"
        );
    }

    #[test]
    fn a_kind_is_emitted_into_the_field_schema() {
        let input: syn::DeriveInput = syn::parse_quote! {
            struct Counter { #[pytree(kind = "state")] count: f64, bias: f64 }
        };
        let code = crate::try_derive(&input)
            .map(|ts| ts.to_string())
            .unwrap_or_default();
        assert!(
            code.contains("FieldSchema :: data (\"count\") . with_kind (\"state\")"),
            "{code}"
        );
        assert!(code.contains("FieldSchema :: data (\"bias\")]"), "{code}");
    }
}
