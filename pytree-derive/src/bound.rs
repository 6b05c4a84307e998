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
//! `#[pytree(bound = "...")]` replaces all of this.

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::quote;
use syn::visit::Visit;

use crate::ast::Container;

/// Which trait the impl being generated is for.
#[derive(Clone, Copy)]
pub enum Trait {
    Flatten,
    Unflatten,
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
    let trait_path = match which {
        Trait::Flatten => quote!(#krate::Flatten<#ns>),
        Trait::Unflatten => quote!(#krate::Unflatten<#ns>),
    };
    let mut out = Vec::new();
    let mut first: Option<&syn::Ident> = None;
    for param in &params {
        if in_data.contains(&param.to_string()) {
            match first {
                None => {
                    out.push(quote!(#param: #trait_path));
                    first = Some(param);
                }
                Some(p0) => out.push(quote!(
                    #param: #trait_path + #krate::Flatten<#ns, Leaf = <#p0 as #krate::Flatten<#ns>>::Leaf>
                )),
            }
        } else if in_static.contains(&param.to_string()) {
            out.push(quote!(#param: #krate::Static));
        }
    }
    out
}

/// The names of `params` that occur in any of `types`.
fn used_params<'t>(
    params: &[&syn::Ident],
    types: impl Iterator<Item = &'t syn::Type>,
) -> BTreeSet<String> {
    struct Finder<'p> {
        params: &'p [&'p syn::Ident],
        found: BTreeSet<String>,
    }
    impl<'ast> Visit<'ast> for Finder<'_> {
        fn visit_path(&mut self, path: &'ast syn::Path) {
            if let Some(first) = path.segments.first() {
                if self.params.iter().any(|p| first.ident == **p) {
                    self.found.insert(first.ident.to_string());
                }
            }
            syn::visit::visit_path(self, path);
        }
    }
    let mut finder = Finder {
        params,
        found: BTreeSet::new(),
    };
    for ty in types {
        finder.visit_type(ty);
    }
    finder.found
}

/// True when `ty` mentions `ident` (used to avoid picking a recursive field
/// as the source of the leaf type).
pub fn mentions(ty: &syn::Type, ident: &syn::Ident) -> bool {
    !used_params(&[ident], std::iter::once(ty)).is_empty() || {
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
