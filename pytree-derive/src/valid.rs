//! Cross-field rules that attribute parsing cannot see, one function per
//! rule. Each reports at the offending span and never stops early.

use crate::ast::Container;

/// Runs every rule, accumulating errors.
pub fn check(container: &Container<'_>) -> darling::Result<()> {
    let mut errors = darling::Error::accumulator();
    leaf_has_no_static_fields(container, &mut errors);
    static_or_skip_not_both(container, &mut errors);
    errors.finish()
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
