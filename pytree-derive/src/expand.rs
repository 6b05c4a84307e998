//! Code generation: for each namespace, an `impl Flatten<Ns>` and an
//! `impl Unflatten<Ns>`, inside one `const _: () = { ... };` block that also
//! holds the `static` schemas the TreeDef nodes point at. Generated code
//! names everything by absolute path (`::core::...`, the runtime crate
//! path), calls trait methods of std by path (no prelude needed, no trait
//! of the user's scope picked up), names its leaf type
//! `<Self as Flatten<Ns>>::Leaf` (a variant named `Leaf` makes
//! `Self::Leaf` ambiguous), and calls on a field are spanned at the
//! field's type so that a missing impl is reported on the field
//! (`tests/tests/hygiene.rs` holds it to any names and scope).

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::DeriveInput;

use crate::ast::{self_leaf, Container, Field, Variant};
use crate::attr::ContainerAttrs;
use crate::bound::{self, Trait};
use crate::fallback;
use crate::valid;
use darling::FromDeriveInput;

/// Parse, validate, expand. On errors, the errors and impls that never
/// run (module `fallback`), so the type's uses raise no further errors.
pub fn derive(input: &DeriveInput) -> TokenStream {
    let err = match try_derive(input) {
        Ok(code) => return code,
        Err(err) => err.write_errors(),
    };
    if matches!(input.data, syn::Data::Union(_)) {
        // A union gets no impls: it cannot be a pytree at all.
        return err;
    }
    let (krate, namespaces) = match ContainerAttrs::from_derive_input(input) {
        Ok(attrs) => Container::paths(&attrs),
        Err(_) => (
            syn::parse_quote!(::pytree_std),
            vec![syn::parse_quote!(::pytree_std::Std)],
        ),
    };
    let fallback = fallback::expand(input, &krate, &namespaces);
    quote!(#err #fallback)
}

/// Parse, validate, expand; every error of the input, or the code.
pub fn try_derive(input: &DeriveInput) -> darling::Result<TokenStream> {
    valid::not_a_union(input)?;
    let mut errors = darling::Error::accumulator();
    let container = Container::from_input(input, &mut errors);
    valid::check(&container, &mut errors);
    errors.finish()?;
    Ok(expand(&container))
}

fn expand(c: &Container<'_>) -> TokenStream {
    let schemas = schema_statics(c);
    let impls = c.namespaces.iter().map(|ns| {
        if c.leaf.is_some() {
            leaf_impls(c, ns)
        } else {
            tree_impls(c, ns)
        }
    });
    quote! {
        #[allow(non_upper_case_globals, unused_qualifications)]
        const _: () = {
            #schemas
            #(#impls)*
        };
    }
}

/// The name of variant `i`'s schema static.
fn schema_ident(i: usize) -> syn::Ident {
    format_ident!("__PYTREE_SCHEMA_{}", i)
}

fn schema_statics(c: &Container<'_>) -> TokenStream {
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

fn tree_impls(c: &Container<'_>, ns: &syn::Path) -> TokenStream {
    let krate = &c.krate;
    let self_leaf = self_leaf(krate, ns);
    let flatten_header = impl_header(c, ns, Trait::Flatten);
    let unflatten_header = impl_header(c, ns, Trait::Unflatten);
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
    let map_leaves = map_leaves(c, ns);
    let zip_check = zip_check_method(c, ns);
    let zip_with = zip_method(c, ns, false);
    let zip_mut = zip_method(c, ns, true);
    let unflatten = unflatten_method(c, ns);
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

/// The hidden trait generated code reaches a data field through (its
/// tokens at `span`, the field's type): `DataField`, whose leaves are the
/// struct's, or with `#[pytree(leaf_type = L)]` `ConvertedField`, whose
/// leaves stand as `L`s.
fn data_trait(c: &Container<'_>, ns: &syn::Path, span: Span) -> TokenStream {
    let krate = &c.krate;
    let self_leaf = self_leaf(krate, ns);
    match &c.leaf_type {
        None => quote_spanned!(span=> #krate::__private::DataField<#ns, #self_leaf>),
        Some(_) => quote_spanned!(span=> #krate::__private::ConvertedField<#ns, #self_leaf>),
    }
}

/// The unflatten side of [`data_trait`].
fn unflatten_trait(c: &Container<'_>, ns: &syn::Path, span: Span) -> TokenStream {
    let krate = &c.krate;
    let self_leaf = self_leaf(krate, ns);
    match &c.leaf_type {
        None => quote_spanned!(span=> #krate::__private::DataFieldUnflatten<#ns, #self_leaf>),
        Some(_) => {
            quote_spanned!(span=> #krate::__private::ConvertedFieldUnflatten<#ns, #self_leaf>)
        }
    }
}

/// `UNIFORM_LEAVES` of a struct: the sum of its data fields' (a struct
/// of uniform fields has the same structure and leaf count in every
/// value); `None` for an enum, whose variant can differ, and for a struct
/// with static fields, whose values can differ.
fn uniform_leaves(c: &Container<'_>, ns: &syn::Path) -> TokenStream {
    let krate = &c.krate;
    if c.is_enum || c.all_fields().any(|f| f.is_static.is_some()) {
        return quote!(::core::option::Option::None);
    }
    let parts = c.data_fields().map(|f| {
        let ty = f.ty;
        let data_trait = data_trait(c, ns, ty.span());
        quote_spanned!(ty.span()=> <#ty as #data_trait>::UNIFORM_LEAVES)
    });
    quote!(#krate::__private::uniform_sum(&[#(#parts),*]))
}

/// The body of `leaf_count_hint`: the uniform count, else the sum of the
/// data fields' hints (of the variant at hand).
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
    quote! {
        if let ::core::option::Option::Some(__n) = <Self as #krate::Flatten<#ns>>::UNIFORM_LEAVES {
            return __n;
        }
        match self {
            #(#arms)*
        }
    }
}

/// `expr?`, placing the error at `place` on the way out. A `match`, not
/// `.map_err(|e| ..)?`: a closure is one more body for the compiler to type
/// and borrow check, per field and per method, which showed in the build
/// time of crates with many derived types.
fn try_at(expr: TokenStream, place: &TokenStream) -> TokenStream {
    quote! {
        match #expr {
            ::core::result::Result::Ok(__v) => __v,
            ::core::result::Result::Err(__e) => return ::core::result::Result::Err(__e #place),
        }
    }
}

/// `.at(KeyEntry::Field(..))` and, in an enum, `.at(KeyEntry::Variant(..))`.
fn error_place(c: &Container<'_>, v: &Variant<'_>, f: Option<&Field<'_>>) -> TokenStream {
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
fn hold(c: &Container<'_>, ns: &syn::Path, f: &Field<'_>, value: TokenStream) -> TokenStream {
    let ty = f.ty;
    let data_trait = data_trait(c, ns, ty.span());
    quote_spanned!(ty.span()=> <#ty as #data_trait>::hold(#value))
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
        let children = v.data_fields().map(|f| {
            let (b, ty, name) = (&f.binding, f.ty, &f.name);
            let field = match walk {
                Walk::Owned => quote!(#b.take()),
                Walk::Ref | Walk::Mut => quote!(#b),
            };
            let data_trait = data_trait(c, ns, ty.span());
            let call = quote_spanned!(ty.span()=> <#ty as #data_trait>::#method(#field, __sink));
            quote! {
                __sink.enter(#krate::KeyRef::Field(#name));
                #call;
                __sink.exit();
            }
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

/// `Self::V { a: expr, b: expr }` (or `Self::V` for a unit variant).
fn construct(v: &Variant<'_>, exprs: &[TokenStream]) -> TokenStream {
    let path = v.path();
    let members = v.fields.iter().map(|f| &f.member);
    match v.style {
        darling::ast::Style::Unit => path,
        _ => quote!(#path { #(#members: #exprs),* }),
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
            let call =
                quote_spanned!(ty.span()=> <#ty as #unflatten_trait>::map_field(#b.take(), __f));
            let held = hold(c, ns, f, call);
            quote!(let #b = #held;)
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

/// Field `i` of every other tree, as `[&FieldType; N]`: read from `__o`
/// (the others' fields paired by variant) in an enum, straight from
/// `__others` in a struct.
fn others_field(c: &Container<'_>, i: usize, f: &Field<'_>) -> TokenStream {
    if c.is_enum {
        let idx = syn::Index::from(i);
        quote!(__o.map(|__t| __t.#idx))
    } else {
        let member = &f.member;
        quote!(__others.map(|__t| &__t.#member))
    }
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
fn zip_check_method(c: &Container<'_>, ns: &syn::Path) -> TokenStream {
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
        let checks = v.fields.iter().enumerate().filter(|(_, f)| f.skip.is_none()).map(|(i, f)| {
            let (b, ty) = (&f.binding, f.ty);
            let others = others_field(c, i, f);
            let place = error_place(c, v, Some(f));
            if f.is_static.is_some() {
                let field = quote_spanned!(ty.span()=> <#ty as #krate::__private::StaticField>);
                quote! {
                    for (__j, __t) in ::core::iter::Iterator::enumerate(::core::iter::IntoIterator::into_iter(#others)) {
                        if !#field::same_field(__t, #b) {
                            return ::core::result::Result::Err(
                                #krate::__private::static_mismatch(
                                    #field::erase_field(#b),
                                    #field::erase_field(__t),
                                    __j + 1,
                                )#place,
                            );
                        }
                    }
                }
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
fn zip_method(c: &Container<'_>, ns: &syn::Path, mutate: bool) -> TokenStream {
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
        let body = if mutate {
            let updates = v.fields.iter().enumerate().filter(|(_, f)| f.is_data()).map(|(i, f)| {
                let (b, ty) = (&f.binding, f.ty);
                let others = others_field(c, i, f);
                let data_trait = data_trait(c, ns, ty.span());
                quote_spanned!(ty.span()=> <#ty as #data_trait>::zip_field_mut(#b, #others, __f);)
            });
            quote!(#(#updates)*)
        } else {
            // Each built data field is held in an `Unwinding` guard until
            // the value is built (see `map_leaves`).
            let built = v.fields.iter().enumerate().filter(|(_, f)| f.is_data()).map(|(i, f)| {
                let (b, ty) = (&f.binding, f.ty);
                let others = others_field(c, i, f);
                let unflatten_trait = unflatten_trait(c, ns, ty.span());
                let call = quote_spanned!(ty.span()=> <#ty as #unflatten_trait>::zip_field(#b, #others, __f));
                let held = hold(c, ns, f, call);
                quote!(let #b = #held;)
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

fn unflatten_method(c: &Container<'_>, ns: &syn::Path) -> TokenStream {
    let krate = &c.krate;
    let self_leaf = self_leaf(krate, ns);
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
            let checked = try_at(call, &place);
            // Held until the value is built, so that a later field's error
            // or panic drops a deep one on a fresh stack (see `map_leaves`).
            let held = hold(c, ns, f, checked);
            quote!(let #b = #held;)
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
    quote! {
        match #krate::Source::<#self_leaf>::struct_node(__source, &[#(&#schemas),*])? {
            #(#arms)*
            _ => ::core::result::Result::Err(#krate::Error::custom("the TreeDef names a variant this type does not have")),
        }
    }
}

/// `#[pytree(leaf)]`: the whole value is one leaf, lent by reference:
/// `impl_leaf!` with the type's generics and where-clause, so that leaf
/// semantics are written in one place.
fn leaf_impls(c: &Container<'_>, ns: &syn::Path) -> TokenStream {
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

#[cfg(test)]
mod tests {

    #[test]
    fn a_leaf_type_names_the_leaf_and_reaches_fields_through_converted_field() {
        let input: syn::DeriveInput = syn::parse_quote! {
            #[pytree(leaf_type = AnyArray)]
            struct Embeddings { weight: Array2<f32>, ids: Array1<i64> }
        };
        let code = super::try_derive(&input)
            .map(|ts| ts.to_string())
            .unwrap_or_default();
        assert!(code.contains("type Leaf = AnyArray ;"), "{code}");
        assert!(
            code.contains("ConvertedField < :: pytree_std :: Std , < Self as :: pytree_std :: Flatten < :: pytree_std :: Std >> :: Leaf >"),
            "{code}"
        );
        assert!(
            code.contains(
                "ConvertedFieldUnflatten < :: pytree_std :: Std , < Self as :: pytree_std :: Flatten < :: pytree_std :: Std >> :: Leaf >"
            ),
            "{code}"
        );
        assert!(!code.contains("DataField"), "{code}");
    }

    #[test]
    fn a_kind_is_emitted_into_the_field_schema() {
        let input: syn::DeriveInput = syn::parse_quote! {
            struct Counter { #[pytree(kind = "state")] count: f64, bias: f64 }
        };
        let code = super::try_derive(&input)
            .map(|ts| ts.to_string())
            .unwrap_or_default();
        assert!(
            code.contains("FieldSchema :: data (\"count\") . with_kind (\"state\")"),
            "{code}"
        );
        assert!(code.contains("FieldSchema :: data (\"bias\")]"), "{code}");
    }
}
