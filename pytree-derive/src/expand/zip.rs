//! The zips over several trees of one type: `zip_check` (same variants,
//! equal static fields, each data field checked) and the methods that run
//! after it, `zip_mut_prechecked` (of `Flatten`) and `zip_with_prechecked`
//! (of `Unflatten`), with the pairing of the other trees' fields that all
//! three share.

use proc_macro2::{TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;

use super::field::{construct, data_trait, error_place, kept, try_at, unflatten_trait};
use crate::ast::{Container, Field, Variant};

/// The other trees' fields that a zip method uses (`used`: indices into
/// `v.fields`): `let` statements binding each as `[&FieldType; N]` to
/// `__o_<i>` (see [`others_ident`]), read from `__o` (the others' fields
/// paired by variant) in an enum, from `__others` in a struct. One closure
/// (`|t| (&t.a, &t.b, ..)`) and one `transpose<k>` of pytree-core per twelve
/// fields, not one closure per field: each closure is one more body for the
/// compiler to check, and they were half the build time of a crate of
/// derived types. An enum variant of twelve fields or fewer needs no
/// closure: `__o` is transposed as it is.
fn others_fields(c: &Container<'_>, v: &Variant<'_>, used: &[usize]) -> TokenStream {
    if used.is_empty() {
        return TokenStream::new();
    }
    let krate = &c.krate;
    let transpose = |k: usize| format_ident!("transpose{}", k);
    // `(__o_<i>, _, ..)`: the fields at `indices`, bound where used.
    let pattern = |indices: &[usize]| {
        let names = indices.iter().map(|&i| {
            if used.contains(&i) {
                let ident = others_ident(i);
                quote!(#ident)
            } else {
                quote!(_)
            }
        });
        quote!((#(#names,)*))
    };
    if has_fields_fn(c) {
        let tree: Vec<usize> = (0..v.fields.len())
            .filter(|&i| v.fields[i].skip.is_none())
            .collect();
        let (pattern, transpose) = (pattern(&tree), transpose(tree.len()));
        return quote!(let #pattern = #krate::__private::#transpose(__others.map(__pytree_fields)););
    }
    if c.is_enum && v.fields.len() <= MAX {
        let all: Vec<usize> = (0..v.fields.len()).collect();
        let (pattern, transpose) = (pattern(&all), transpose(all.len()));
        return quote!(let #pattern = #krate::__private::#transpose(__o););
    }
    let chunks = used.chunks(MAX).map(|chunk| {
        let names = chunk.iter().map(|&i| others_ident(i));
        let parts = chunk.iter().map(|&i| {
            if c.is_enum {
                let idx = syn::Index::from(i);
                quote!(__t.#idx)
            } else {
                let member = &v.fields[i].member;
                quote!(&__t.#member)
            }
        });
        let source = if c.is_enum {
            quote!(__o)
        } else {
            quote!(__others)
        };
        let transpose = transpose(chunk.len());
        quote! {
            let (#(#names,)*) = #krate::__private::#transpose(#source.map(|__t| (#(#parts,)*)));
        }
    });
    quote!(#(#chunks)*)
}

/// The most fields one `transpose<k>` of pytree-core takes.
const MAX: usize = 12;

/// Whether a struct's zips read the other trees' fields with
/// [`fields_fn`]: twelve tree fields or fewer (one `transpose<k>`), none of
/// whose types names `Self`, nor the where-clause (the function is no
/// method).
fn has_fields_fn(c: &Container<'_>) -> bool {
    let where_clause = c.generics.where_clause.to_token_stream();
    match c.variants.first() {
        Some(v) if !c.is_enum && !names_self(where_clause) => {
            let fields: Vec<&Field<'_>> = v.tree_fields().collect();
            !fields.is_empty()
                && fields.len() <= MAX
                && !fields.iter().any(|f| names_self(f.ty.to_token_stream()))
        }
        _ => false,
    }
}

/// Whether `tokens` hold the identifier `Self`.
fn names_self(tokens: TokenStream) -> bool {
    tokens.into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == "Self",
        TokenTree::Group(g) => names_self(g.stream()),
        _ => false,
    })
}

/// `fn __pytree_fields(&Struct) -> (&A, &B, ..)`: a struct's tree fields
/// (data and static) by reference, one function in the derive's `const`
/// block that the three zips map the other trees through, instead of a
/// closure in each of them (one body for the compiler to check, not
/// three). Nothing for an enum or where [`has_fields_fn`] says no.
pub(super) fn fields_fn(c: &Container<'_>) -> TokenStream {
    if c.leaf.is_some() || !has_fields_fn(c) {
        return TokenStream::new();
    }
    let ident = c.ident;
    // The borrow's lifetime is named: with lifetimes of the struct's own,
    // elision would not know which one the fields are borrowed for.
    let mut generics = c.generics.clone();
    generics.params.insert(0, syn::parse_quote!('__t));
    let (impl_generics, _, where_clause) = generics.split_for_impl();
    let (_, ty_generics, _) = c.generics.split_for_impl();
    let fields: Vec<&Field<'_>> = c.variants[0].tree_fields().collect();
    let types = fields.iter().map(|f| f.ty);
    let members = fields.iter().map(|f| &f.member);
    quote! {
        #[inline(always)]
        fn __pytree_fields #impl_generics (__t: &'__t #ident #ty_generics) -> (#(&'__t #types,)*) #where_clause {
            (#(&__t.#members,)*)
        }
    }
}

/// The binding of field `i` of every other tree (see [`others_fields`]).
fn others_ident(i: usize) -> syn::Ident {
    format_ident!("__o_{}", i)
}

/// `match __o { <variant v with other_bindings> => Some((..)), _ => None }`
/// for each other tree: the others' fields paired with `self`'s variant.
fn pair_variant(v: &Variant<'_>) -> (TokenStream, Vec<syn::Ident>) {
    let other_bindings: Vec<syn::Ident> = (0..v.fields.len())
        .map(|i| format_ident!("__other_{}", i))
        .collect();
    let other_pattern = v.pattern_with(&other_bindings);
    let paired = quote! {
        __others.map(|__o| {
            #[allow(unreachable_patterns)]
            match __o {
                #other_pattern => ::core::option::Option::Some((#(#other_bindings,)*)),
                _ => ::core::option::Option::None,
            }
        })
    };
    (paired, other_bindings)
}

/// The body of `zip_check`: each variant's fields paired across trees
/// (another variant is an error), static fields compared, then each data
/// field checked.
pub(super) fn zip_check_method(c: &Container<'_>, ns: &syn::Path) -> TokenStream {
    let krate = &c.krate;
    let variant_name = {
        let arms = c.variants.iter().map(|v| {
            let path = v.path();
            let name = match &v.name {
                Some(variant) => format!("{}::{}", c.name, variant),
                None => c.name.clone(),
            };
            quote!(#path { .. } => #name,)
        });
        quote!(|__t: &Self| -> &'static ::core::primitive::str { match __t { #(#arms)* } })
    };
    let arms = c.variants.iter().map(|v| {
        let pattern = v.pattern();
        let pair = if c.is_enum {
            let (paired, _) = pair_variant(v);
            let bindings = v.fields.iter().map(|f| &f.binding);
            quote! {
                let __paired = #paired;
                if let ::core::option::Option::Some(__j) = ::core::iter::Iterator::position(&mut <[_]>::iter(&__paired), ::core::option::Option::is_none) {
                    let __name = #variant_name;
                    return ::core::result::Result::Err(
                        #krate::__private::variant_mismatch(__name(self), __name(__others[__j]), __j + 1),
                    );
                }
                let __o = __paired.map(|__p| __p.unwrap_or((#(#bindings,)*)));
            }
        } else {
            TokenStream::new()
        };
        let used: Vec<usize> = (0..v.fields.len()).filter(|&i| v.fields[i].skip.is_none()).collect();
        let others_fields = others_fields(c, v, &used);
        let checks = v.fields.iter().enumerate().filter(|(_, f)| f.skip.is_none()).map(|(i, f)| {
            let (b, ty) = (&f.binding, f.ty);
            let others = others_ident(i);
            let place = error_place(c, v, Some(f));
            if f.is_static.is_some() {
                // The loop over the other trees is `StaticField`'s, type
                // checked once in pytree-core, not once per derived type.
                let call = quote_spanned!(ty.span()=> <#ty as #krate::__private::StaticField>::check_field(#b, #others));
                let checked = try_at(call, &place);
                quote!(#checked;)
            } else {
                let data_trait = data_trait(c, ns, ty.span());
                let call = quote_spanned!(ty.span()=> <#ty as #data_trait>::check_field(#b, #others));
                let checked = try_at(call, &place);
                quote!(#checked;)
            }
        });
        quote! {
            #pattern => {
                #pair
                #others_fields
                #(#checks)*
                ::core::result::Result::Ok(())
            }
        }
    });
    quote! {
        match self {
            #(#arms)*
        }
    }
}

/// The body of `zip_with_prechecked` (`mutate == false`) or
/// `zip_mut_prechecked`: no checks and no `Result`, so a struct is built in
/// place. Where another tree has another variant anyway (the check was
/// skipped), `self`'s fields stand in for its fields (`zip_with`) or
/// nothing is updated (`zip_mut`).
pub(super) fn zip_method(c: &Container<'_>, ns: &syn::Path, mutate: bool) -> TokenStream {
    let krate = &c.krate;
    let arms = c.variants.iter().map(|v| {
        let pattern = v.pattern();
        let pair = if !c.is_enum {
            TokenStream::new()
        } else if mutate {
            let (paired, _) = pair_variant(v);
            quote! {
                let ::core::option::Option::Some(__o) = #krate::__private::all_some(#paired) else {
                    return;
                };
            }
        } else {
            let (paired, _) = pair_variant(v);
            let bindings = v.fields.iter().map(|f| &f.binding);
            quote! {
                let __o = #paired.map(|__p| __p.unwrap_or((#(#bindings,)*)));
            }
        };
        let used: Vec<usize> = (0..v.fields.len()).filter(|&i| v.fields[i].is_data()).collect();
        let others_fields = others_fields(c, v, &used);
        let body = if mutate {
            let updates = v.fields.iter().enumerate().filter(|(_, f)| f.is_data()).map(|(i, f)| {
                let (b, ty) = (&f.binding, f.ty);
                let others = others_ident(i);
                let data_trait = data_trait(c, ns, ty.span());
                quote_spanned!(ty.span()=> <#ty as #data_trait>::zip_field_mut(#b, #others, __f);)
            });
            quote!(#(#updates)*)
        } else {
            // Each built data field is held in an `Unwinding` guard until
            // the value is built (see `map_leaves`).
            let built = v.fields.iter().enumerate().filter(|(_, f)| f.is_data()).map(|(i, f)| {
                let (b, ty) = (&f.binding, f.ty);
                let others = others_ident(i);
                let unflatten_trait = unflatten_trait(c, ns, ty.span());
                // Comes held.
                let call = quote_spanned!(ty.span()=> <#ty as #unflatten_trait>::zip_field(#b, #others, __f));
                let call = kept(c, ns, f, call);
                quote!(let #b = #call;)
            });
            let exprs: Vec<TokenStream> = v.fields.iter().map(|f| {
                let (b, ty) = (&f.binding, f.ty);
                if f.skip.is_some() {
                    quote_spanned!(ty.span()=> <#ty as ::core::default::Default>::default())
                } else if f.is_static.is_some() {
                    quote_spanned!(ty.span()=> <#ty as #krate::__private::StaticField>::clone_field(#b))
                } else {
                    quote!(#b.take())
                }
            }).collect();
            let value = construct(v, &exprs);
            quote! {
                #(#built)*
                #value
            }
        };
        quote! {
            #pattern => {
                #pair
                #others_fields
                #body
            }
        }
    });
    quote! {
        match self {
            #(#arms)*
        }
    }
}
