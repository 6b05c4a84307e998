//! Where-clause inference, as serde does it: bounds go on the type
//! parameters that data fields use, never on concrete field types (a bound
//! such as `Option<Box<Node>>: Flatten<Std>` makes recursive types fail to
//! compile with E0275).
//!
//! For `struct Mlp<T, C> { layers: Vec<Linear<T>>, #[pytree(static)] cfg: C }`
//! the Flatten impl gets `T: Flatten<Ns>` (T is in a data field) and
//! `C: Static` (C only in a static field). A second parameter used in data
//! fields is tied to the first one's leaf type (`U: Flatten<Ns, Leaf =
//! <T as Flatten<Ns>>::Leaf>`), since all leaves share one type.
//! A field whose type is an associated type of a parameter (a backend's
//! tensor, `B::Tensor`, as burn and candle models are written) bounds that
//! type, `B::Tensor: Flatten<Ns>`, not `B`, which is no pytree (serde's
//! `bound.rs` does the same):
//! `struct Linear<B: Backend> { w: B::Tensor, b: Vec<B::Tensor> }` gets
//! `B::Tensor: Flatten<Ns>`.
//! A data field of a concrete type (one that mentions no type parameter
//! and not the type itself) fixes the leaf type: every parameter and
//! associated type is then tied to the first such field's leaf type,
//! through a projection and with no bound on the concrete type itself
//! (which would bring E0275 back). `struct TrainCkpt<S> { params: Mlp,
//! opt: S }` gets `S: Flatten<Ns, Leaf = <Mlp as Flatten<Ns>>::Leaf>`, and
//! its leaf type is `Mlp`'s (`expand::leaf_source`). Not where the type's
//! own bounds on such a parameter name a trait that may fix its leaf type
//! already (`S: PyTree<Leaf = f32>`; anything but `Clone`, `Debug`,
//! `Send`, ...): two `Leaf = ..` bounds on one type are ambiguous to rustc
//! (E0284), and those types compiled before, so they keep their expansion.
//! What this cannot do (each pinned in `ui-tests/tests/ui/generic_*`): a
//! parameter inside a leaf type (`scale: Tensor<A>` beside `Tensor<f32>`)
//! is tied as if its leaves were `A`'s, so the field is an E0271 at the
//! field, naming both leaf types; and a concrete field that leads back to
//! this type with the parameter fixed (`inner: Option<Box<Inner>>`, where
//! `Inner` holds an `Outer<f32>`) makes the tie a cycle, E0275: there the
//! user names the leaf type (`#[pytree(bound = "S: PyTree<Leaf = f32>")]`).
//! A parameter used only inside a data field's type (`w: Array2<A>`, an
//! element type) also gets `A: 'static`, since leaf types are `'static`.
//! With `#[pytree(leaf_type = L)]` the parameters are not tied to each
//! other: each gets `<T as Flatten<Ns>>::Leaf: LeafAs<Ns, L>` instead.
//! `#[pytree(bound = "...")]` replaces all of this.

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::visit::Visit;

use crate::ast::Container;

/// Which trait the impl being generated is for.
#[derive(Clone, Copy)]
pub enum Trait {
    Flatten,
    Unflatten,
}

impl Trait {
    /// `krate::Flatten<ns>` or `krate::Unflatten<ns>`.
    pub fn path(self, krate: &syn::Path, ns: &syn::Path) -> TokenStream {
        match self {
            Trait::Flatten => quote!(#krate::Flatten<#ns>),
            Trait::Unflatten => quote!(#krate::Unflatten<#ns>),
        }
    }
}

/// The where-clause predicates for one impl.
pub fn predicates(container: &Container<'_>, ns: &syn::Path, which: Trait) -> Vec<TokenStream> {
    let krate = &container.krate;
    if let Some(bound) = &container.bound {
        return bound.iter().map(|p| quote!(#p)).collect();
    }
    if container.leaf.is_some() {
        return Vec::new();
    }
    let params: Vec<&syn::Ident> = container.generics.type_params().map(|p| &p.ident).collect();
    let in_data = used_params(&params, container.data_fields().map(|f| f.ty));
    let in_static = used_params(
        &params,
        container
            .all_fields()
            .filter(|f| f.is_static.is_some())
            .map(|f| f.ty),
    );
    let trait_path = which.path(krate, ns);
    let bounded = bounded_types(container);
    let mut out = Vec::new();
    if let Some(leaf_type) = &container.leaf_type {
        // `#[pytree(leaf_type = L)]`: each bounded type's leaves stand as
        // `L`s, whatever their own type.
        for ty in &bounded {
            out.push(quote!(#ty: #trait_path));
            out.push(quote!(
                <#ty as #krate::Flatten<#ns>>::Leaf: #krate::LeafAs<#ns, #leaf_type>
            ));
        }
    } else if let Some(fixed) = leaf_anchor(container) {
        // A field of a concrete type fixes the leaf type: every bounded
        // type is tied to it through a projection. No bound on the
        // concrete type itself (that is what makes recursive types E0275);
        // the projection asks only that it be a pytree, which its own
        // field requires anyway. Spanned at that field, so that a field
        // that is no pytree is reported there.
        let leaf = quote_spanned!(fixed.span()=> <#fixed as #krate::Flatten<#ns>>::Leaf);
        for ty in &bounded {
            out.push(quote!(#ty: #trait_path + #krate::Flatten<#ns, Leaf = #leaf>));
        }
    } else if let Some((first, rest)) = bounded.split_first() {
        out.push(quote!(#first: #trait_path));
        for ty in rest {
            out.push(quote!(
                #ty: #trait_path + #krate::Flatten<#ns, Leaf = <#first as #krate::Flatten<#ns>>::Leaf>
            ));
        }
    }
    // A parameter used inside a data field's type (`Array2<A>`, `Vec<A>`,
    // `Linear<A>`) is, as far as the derive can tell, an element of a leaf
    // type, and leaves are `'static` (`Leaf: 'static`): say so, so that
    // `struct Linear<A> { w: Array2<A> }` needs no hand-written
    // `A: 'static` (without it, rustc asks for one at every field). This
    // holds when the parameter is also used bare (`bias: T` beside
    // `transform: DenseNorm<T>`, whose own impl may ask `T: 'static`:
    // E0310 otherwise). A parameter used only bare (`w: T`) is bounded by
    // the pytree trait alone, so a tree of references stays possible.
    // `#[pytree(bound = "...")]` replaces this for the rare non-'static
    // element.
    let in_nested = used_params(
        &params,
        container
            .data_fields()
            .filter(|f| !is_bare_param(f.ty, container))
            .map(|f| f.ty),
    );
    for param in &params {
        if in_nested.params.contains(&param.to_string()) {
            out.push(quote!(#param: 'static));
        }
    }
    for param in &params {
        let name = param.to_string();
        if !in_data.params.contains(&name)
            && !in_data.in_assoc.contains(&name)
            && in_static.params.contains(&name)
        {
            out.push(quote!(#param: #krate::Static));
        }
    }
    out
}

/// The data field whose leaf type every parameter is tied to: the first
/// of a concrete type (mentioning no type parameter and not the type
/// itself: `params: Mlp` in `struct TrainCkpt<S> { params: Mlp, opt: S }`,
/// whose leaf type is the container's whatever the parameters are). None
/// when `#[pytree(bound)]` replaces the inference, and when the type's own
/// generics or where-clause bound a type that would be tied with a trait
/// that could fix its leaf type already (`S: PyTree<Leaf = f32>`, or a
/// trait of the user's whose supertraits do): a second `Leaf = ..` on the
/// same type makes rustc's projection ambiguous (E0284), and such types
/// compiled before the tie existed, so they keep the expansion they had.
pub fn leaf_anchor<'c>(container: &'c Container<'_>) -> Option<&'c syn::Type> {
    if container.bound.is_some()
        || user_bounds_may_fix_a_leaf(container.generics, &bounded_types(container))
    {
        return None;
    }
    let params: Vec<&syn::Ident> = container.generics.type_params().map(|p| &p.ident).collect();
    container
        .data_fields()
        .find(|f| {
            let uses = used_params(&params, std::iter::once(f.ty));
            uses.params.is_empty()
                && uses.in_assoc.is_empty()
                && uses.assoc.is_empty()
                && !mentions(f.ty, container.ident)
        })
        .map(|f| f.ty)
}

/// What gets a pytree bound: the type parameters used in data fields,
/// then the associated types of parameters (`B::Tensor`) data fields are
/// of, in field order.
fn bounded_types(container: &Container<'_>) -> Vec<TokenStream> {
    let params: Vec<&syn::Ident> = container.generics.type_params().map(|p| &p.ident).collect();
    let in_data = used_params(&params, container.data_fields().map(|f| f.ty));
    params
        .iter()
        .filter(|p| in_data.params.contains(&p.to_string()))
        .map(|p| quote!(#p))
        .chain(in_data.assoc.iter().map(|ty| quote!(#ty)))
        .collect()
}

/// Whether a bound written on the type (inline or in its where-clause) on
/// one of `bounded` names a trait that is not one of std's that cannot say
/// anything about a leaf type (`Clone`, `Debug`, `Send`, ..., `?Sized`,
/// lifetimes).
fn user_bounds_may_fix_a_leaf(generics: &syn::Generics, bounded: &[TokenStream]) -> bool {
    const HARMLESS: &[&str] = &[
        "Clone",
        "Copy",
        "Debug",
        "Default",
        "Display",
        "PartialEq",
        "Eq",
        "PartialOrd",
        "Ord",
        "Hash",
        "Send",
        "Sync",
        "Sized",
        "Unpin",
    ];
    let harmless = |b: &syn::TypeParamBound| match b {
        syn::TypeParamBound::Trait(t) => {
            matches!(t.modifier, syn::TraitBoundModifier::Maybe(_))
                || t.path.segments.last().is_some_and(|s| {
                    s.arguments.is_empty() && HARMLESS.iter().any(|h| s.ident == h)
                })
        }
        _ => true,
    };
    let is_bounded = |ty: TokenStream| {
        let ty = ty.to_string();
        bounded.iter().any(|b| b.to_string() == ty)
    };
    let inline = generics
        .type_params()
        .filter(|p| {
            let ident = &p.ident;
            is_bounded(quote!(#ident))
        })
        .flat_map(|p| p.bounds.iter());
    let in_where = generics
        .where_clause
        .iter()
        .flat_map(|w| w.predicates.iter())
        .flat_map(|p| match p {
            syn::WherePredicate::Type(t) if is_bounded(t.bounded_ty.to_token_stream()) => {
                Some(t.bounds.iter())
            }
            _ => None,
        })
        .flatten();
    !inline.chain(in_where).all(harmless)
}

/// What the data (or static) fields' types use of the type parameters.
#[derive(Default)]
struct Uses {
    /// Parameters used as types (`T`, `Vec<T>`).
    params: BTreeSet<String>,
    /// Associated types of parameters (`B::Tensor`, `<B as Backend>::Tensor`),
    /// in order of first use, each once.
    assoc: Vec<syn::Type>,
    /// Parameters that occur only through an associated type.
    in_assoc: BTreeSet<String>,
}

/// The uses of `params` in `types`. A path whose first segment is a
/// parameter and that goes on (`B::Tensor`), or a qualified path whose
/// self type mentions a parameter, is an associated type: it gets the
/// bound itself (as serde's `bound.rs` does), since the parameter is not
/// a pytree.
fn used_params<'t>(params: &[&syn::Ident], types: impl Iterator<Item = &'t syn::Type>) -> Uses {
    struct Finder<'p> {
        params: &'p [&'p syn::Ident],
        uses: Uses,
    }
    impl Finder<'_> {
        fn is_param(&self, ident: &syn::Ident) -> bool {
            self.params.contains(&ident)
        }
    }
    impl<'ast> Visit<'ast> for Finder<'_> {
        fn visit_type_path(&mut self, ty: &'ast syn::TypePath) {
            let assoc = match &ty.qself {
                Some(q) => {
                    let mut inner = Finder {
                        params: self.params,
                        uses: Uses::default(),
                    };
                    inner.visit_type(&q.ty);
                    !inner.uses.params.is_empty()
                }
                None => {
                    ty.path.segments.len() > 1
                        && ty
                            .path
                            .segments
                            .first()
                            .is_some_and(|s| self.is_param(&s.ident))
                }
            };
            if assoc {
                let whole = syn::Type::Path(ty.clone());
                if !self.uses.assoc.contains(&whole) {
                    self.uses.assoc.push(whole);
                }
                let mut inner = Finder {
                    params: self.params,
                    uses: Uses::default(),
                };
                syn::visit::visit_type_path(&mut inner, ty);
                self.uses.in_assoc.extend(inner.uses.params);
                return;
            }
            syn::visit::visit_type_path(self, ty);
        }
        fn visit_path(&mut self, path: &'ast syn::Path) {
            if let Some(first) = path.segments.first() {
                if self.is_param(&first.ident) {
                    self.uses.params.insert(first.ident.to_string());
                }
            }
            syn::visit::visit_path(self, path);
        }
    }
    let mut finder = Finder {
        params,
        uses: Uses::default(),
    };
    for ty in types {
        finder.visit_type(ty);
    }
    finder.uses
}

/// True when `ty` mentions `ident` (used to avoid picking a recursive field
/// as the source of the leaf type).
pub fn mentions(ty: &syn::Type, ident: &syn::Ident) -> bool {
    let uses = used_params(&[ident], std::iter::once(ty));
    !uses.params.is_empty() || !uses.in_assoc.is_empty() || {
        struct Any<'i>(&'i syn::Ident, bool);
        impl<'ast> Visit<'ast> for Any<'_> {
            fn visit_ident(&mut self, i: &'ast syn::Ident) {
                if i == self.0 || i == "Self" {
                    self.1 = true;
                }
            }
        }
        let mut v = Any(ident, false);
        v.visit_type(ty);
        v.1
    }
}

/// True when `ty` is exactly one of the type parameters.
pub fn is_bare_param(ty: &syn::Type, container: &Container<'_>) -> bool {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() && p.path.segments.len() == 1 => {
            container.generics.type_params().any(|tp| {
                p.path.segments[0].ident == tp.ident && p.path.segments[0].arguments.is_empty()
            })
        }
        _ => false,
    }
}
