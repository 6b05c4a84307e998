//! Cross-field rules that attribute parsing cannot see, one function per
//! rule. Each reports at the offending span and never stops early.

use crate::ast::Container;

/// Runs every rule, accumulating errors.
pub fn check(container: &Container<'_>) -> darling::Result<()> {
    let mut errors = darling::Error::accumulator();
    leaf_has_no_static_fields(container, &mut errors);
    static_or_skip_not_both(container, &mut errors);
    kind_is_a_name(container, &mut errors);
    kind_is_on_data_fields_only(container, &mut errors);
    errors.finish()
}

/// A kind is matched against names (`path.kind() == "state"`); an empty
/// one could never be asked for on purpose.
fn kind_is_a_name(container: &Container<'_>, errors: &mut darling::error::Accumulator) {
    for field in container.all_fields() {
        if let Some(kind) = field.kind {
            if kind.value().trim().is_empty() {
                errors.push(
                    darling::Error::custom(
                        "`#[pytree(kind = \"...\")]` needs a non-empty kind, such as \"param\" or \"state\"",
                    )
                    .with_span(kind),
                );
            }
        }
    }
}

/// Kinds label leaves: a static field has none, and the fields of a
/// `#[pytree(leaf)]` type are not walked, so a kind there would do nothing.
fn kind_is_on_data_fields_only(
    container: &Container<'_>,
    errors: &mut darling::error::Accumulator,
) {
    for field in container.all_fields() {
        let Some(kind) = field.kind else { continue };
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
fn leaf_has_no_static_fields(container: &Container<'_>, errors: &mut darling::error::Accumulator) {
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

/// A skipped field is not in the tree at all, a static one is in the
/// TreeDef: a field cannot be both.
fn static_or_skip_not_both(container: &Container<'_>, errors: &mut darling::error::Accumulator) {
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
    use crate::expand::try_derive;

    /// The messages `derive` reports for `input`, in order.
    fn errors(input: syn::DeriveInput) -> Vec<String> {
        match try_derive(&input) {
            Ok(_) => Vec::new(),
            Err(err) => err.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn an_empty_kind_is_rejected() {
        let input = syn::parse_quote! {
            struct Counter { #[pytree(kind = " ")] count: f64 }
        };
        assert_eq!(
            errors(input),
            ["`#[pytree(kind = \"...\")]` needs a non-empty kind, such as \"param\" or \"state\""]
        );
    }

    #[test]
    fn a_kind_on_a_static_field_is_rejected() {
        let input = syn::parse_quote! {
            struct Counter { count: f64, #[pytree(static, kind = "state")] training: bool }
        };
        assert_eq!(
            errors(input),
            ["`#[pytree(kind = ...)]` has no effect on a `#[pytree(static)]` field: it has no leaves"]
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
    fn every_bad_kind_is_reported_in_one_pass() {
        let input = syn::parse_quote! {
            struct Counter {
                #[pytree(kind = "")] count: f64,
                #[pytree(static, kind = "state")] training: bool,
            }
        };
        assert_eq!(errors(input).len(), 2);
    }
}
