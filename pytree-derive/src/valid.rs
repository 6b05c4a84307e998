//! Cross-field rules that attribute parsing cannot see, one function per
//! rule. Each reports at the offending span and never stops early; they
//! run on what parsed, beside darling's errors on what did not.

use darling::error::Accumulator;

use crate::ast::{Container, Field};

/// Runs every rule, adding each error to `errors`.
pub fn check(container: &Container<'_>, errors: &mut Accumulator) {
    leaf_has_no_static_fields(container, errors);
    leaf_type_is_for_trees(container, errors);
    static_or_skip_not_both(container, errors);
    kind_is_a_name(container, errors);
    kind_is_on_data_fields_only(container, errors);
    rename_is_a_name(container, errors);
    rename_is_on_named_tree_fields(container, errors);
    names_are_unique(container, errors);
}

/// A renamed field is looked up by its name (key paths, checkpoints); an
/// empty name cannot be a key path entry that anyone can read or write.
fn rename_is_a_name(container: &Container<'_>, errors: &mut Accumulator) {
    empty_on_any_field(
        container,
        errors,
        |field| field.rename.as_ref(),
        |name| name.is_empty(),
        "`#[pytree(rename = \"...\")]` needs a non-empty name, such as \"self\" or \"LayerNorm\"",
    );
}

/// The error `message` at each field's attribute `attr` whose value is
/// `empty`.
fn empty_on_any_field(
    container: &Container<'_>,
    errors: &mut Accumulator,
    attr: impl for<'f> Fn(&'f Field<'_>) -> Option<&'f syn::LitStr>,
    empty: impl Fn(&str) -> bool,
    message: &str,
) {
    for lit in container.all_fields().filter_map(attr) {
        if empty(&lit.value()) {
            errors.push(darling::Error::custom(message).with_span(lit));
        }
    }
}

/// A rename only changes names the tree shows: a skipped field is not in
/// the tree, the fields of a `#[pytree(leaf)]` type are not walked, and a
/// tuple field is named by its index (serde ignores a rename there
/// silently; here it is an error, so it never does nothing unseen).
fn rename_is_on_named_tree_fields(container: &Container<'_>, errors: &mut Accumulator) {
    for field in container.all_fields() {
        let Some(rename) = &field.rename else {
            continue;
        };
        let why = if container.leaf.is_some() {
            Some("has no effect in a `#[pytree(leaf)]` type: the whole value is one leaf")
        } else if field.skip.is_some() {
            Some("has no effect on a `#[pytree(skip)]` field: it is not in the tree")
        } else if matches!(field.member, syn::Member::Unnamed(_)) {
            Some("needs a named field: a tuple field is named by its index")
        } else {
            None
        };
        if let Some(why) = why {
            errors.push(
                darling::Error::custom(format!("`#[pytree(rename = ...)]` {why}"))
                    .with_span(rename),
            );
        }
    }
}

/// Two fields of one struct or variant under one name would give two
/// leaves the same key path (and one checkpoint tensor name).
fn names_are_unique(container: &Container<'_>, errors: &mut Accumulator) {
    for variant in &container.variants {
        let mut seen: Vec<&str> = Vec::new();
        for field in variant.tree_fields() {
            if seen.contains(&field.name.as_str()) {
                let message = format!(
                    "two fields are named `{}`: names in key paths and checkpoints must be unique",
                    field.name
                );
                let err = darling::Error::custom(message);
                errors.push(match (&field.rename, &field.member) {
                    (Some(rename), _) => err.with_span(rename),
                    (None, syn::Member::Named(ident)) => err.with_span(ident),
                    (None, _) => err.with_span(&field.ty),
                });
            } else {
                seen.push(&field.name);
            }
        }
    }
}

/// A kind is matched against names (`path.kind() == "state"`); an empty
/// one could never be asked for on purpose.
fn kind_is_a_name(container: &Container<'_>, errors: &mut Accumulator) {
    empty_on_any_field(
        container,
        errors,
        |field| field.kind.as_ref(),
        |kind| kind.trim().is_empty(),
        "`#[pytree(kind = \"...\")]` needs a non-empty kind, such as \"param\" or \"state\"",
    );
}

/// Kinds label leaves: a static field has none, and the fields of a
/// `#[pytree(leaf)]` type are not walked, so a kind there would do nothing.
fn kind_is_on_data_fields_only(container: &Container<'_>, errors: &mut Accumulator) {
    for field in container.all_fields() {
        let Some(kind) = &field.kind else { continue };
        if field.is_static.is_some() {
            errors.push(
                darling::Error::custom(
                    "`#[pytree(kind = ...)]` has no effect on a `#[pytree(static)]` field: it has no leaves",
                )
                .with_span(kind),
            );
        } else if container.leaf.is_some() {
            errors.push(
                darling::Error::custom(
                    "`#[pytree(kind = ...)]` has no effect in a `#[pytree(leaf)]` type: the whole value is one leaf",
                )
                .with_span(kind),
            );
        }
    }
}

/// A union has no known active field, so its leaves cannot be walked. This
/// runs before attribute parsing, to say so in those words.
pub fn not_a_union(input: &syn::DeriveInput) -> darling::Result<()> {
    match &input.data {
        syn::Data::Union(u) => Err(darling::Error::custom(
            "`#[derive(PyTree)]` does not support unions: which field holds the value is unknown, so its leaves cannot be walked",
        )
        .with_span(&u.union_token)),
        _ => Ok(()),
    }
}

/// A `#[pytree(leaf)]` type is one leaf: its fields are not walked, so
/// marking one of them static would silently do nothing. Say so instead.
fn leaf_has_no_static_fields(container: &Container<'_>, errors: &mut Accumulator) {
    if container.leaf.is_none() {
        return;
    }
    for field in container.all_fields() {
        for (span, name) in [(field.is_static, "static"), (field.skip, "skip")] {
            if let Some(span) = span {
                errors.push(
                    darling::Error::custom(format!(
                        "`#[pytree({name})]` has no effect in a `#[pytree(leaf)]` type: the whole value is one leaf"
                    ))
                    .with_span(&span),
                );
            }
        }
    }
}

/// `#[pytree(leaf_type = L)]` says what a tree's fields' leaves stand as;
/// a `#[pytree(leaf)]` type is one leaf of its own type, with no fields
/// walked, so the two contradict each other.
fn leaf_type_is_for_trees(container: &Container<'_>, errors: &mut Accumulator) {
    if let (Some(_), Some(leaf_type)) = (container.leaf, &container.leaf_type) {
        errors.push(
            darling::Error::custom(
                "`#[pytree(leaf_type = ...)]` is for a type whose fields are walked; a `#[pytree(leaf)]` type is one leaf of its own type: remove one of the two",
            )
            .with_span(leaf_type),
        );
    }
}

/// A skipped field is not in the tree at all, a static one is in the
/// TreeDef: a field cannot be both.
fn static_or_skip_not_both(container: &Container<'_>, errors: &mut Accumulator) {
    for field in container.all_fields() {
        if let (Some(_), Some(span)) = (field.is_static, field.skip) {
            errors.push(
                darling::Error::custom(
                    "a field cannot be both `#[pytree(static)]` (kept in the TreeDef) and `#[pytree(skip)]` (left out of the tree)",
                )
                .with_span(&span),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::try_derive;

    /// The messages `derive` reports for `input`, in order.
    fn errors(input: syn::DeriveInput) -> Vec<String> {
        match try_derive(&input) {
            Ok(_) => Vec::new(),
            Err(err) => err.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn parse_errors_and_rule_errors_are_reported_together() {
        let input = syn::parse_quote! {
            #[pytree(bound = "T Clone")]
            struct Model<T> {
                #[pytree(statik)] name: String,
                #[pytree(static, skip)] cache: Vec<T>,
            }
        };
        assert_eq!(
            errors(input),
            [
                "Unknown field: `statik`. Did you mean `static`?",
                "`bound` must be where-clause predicates such as \"T: Clone, U: Default\": expected `:`",
                "a field cannot be both `#[pytree(static)]` (kept in the TreeDef) and `#[pytree(skip)]` (left out of the tree)",
            ]
        );
        // A container attribute in error: the fields are checked against
        // the default container.
        let input = syn::parse_quote! {
            #[pytree(leef)]
            struct Tensor { #[pytree(rename = "")] data: Vec<f32> }
        };
        assert_eq!(
            errors(input),
            [
                "Unknown field: `leef`. Did you mean `leaf`?",
                "`#[pytree(rename = \"...\")]` needs a non-empty name, such as \"self\" or \"LayerNorm\"",
            ]
        );
    }

    #[test]
    fn a_kind_in_a_leaf_type_is_rejected() {
        let input = syn::parse_quote! {
            #[pytree(leaf)]
            struct Tensor { #[pytree(kind = "state")] data: Vec<f32> }
        };
        assert_eq!(
            errors(input),
            ["`#[pytree(kind = ...)]` has no effect in a `#[pytree(leaf)]` type: the whole value is one leaf"]
        );
    }

    #[test]
    fn a_rename_must_be_unique_non_empty_and_on_a_named_tree_field() {
        let input = syn::parse_quote! {
            struct Attention {
                #[pytree(rename = "self")] self_: f64,
                #[pytree(rename = "self")] other: f64,
                #[pytree(rename = "")] empty: f64,
                #[pytree(skip, rename = "cache")] cache: f64,
            }
        };
        assert_eq!(
            errors(input),
            [
                "`#[pytree(rename = \"...\")]` needs a non-empty name, such as \"self\" or \"LayerNorm\"",
                "`#[pytree(rename = ...)]` has no effect on a `#[pytree(skip)]` field: it is not in the tree",
                "two fields are named `self`: names in key paths and checkpoints must be unique",
            ]
        );
        let tuple = syn::parse_quote! { struct Pair(#[pytree(rename = "a")] f64, f64); };
        assert_eq!(
            errors(tuple),
            ["`#[pytree(rename = ...)]` needs a named field: a tuple field is named by its index"]
        );
        let clash =
            syn::parse_quote! { struct Norm { #[pytree(rename = "w")] weight: f64, w: f64 } };
        assert_eq!(
            errors(clash),
            ["two fields are named `w`: names in key paths and checkpoints must be unique"]
        );
    }
}
