//! Static fields (a derived struct's `#[pytree(static)]` fields, kept in
//! the TreeDef: an optimizer's step count) of a tree loaded against a
//! template or in place, restored from the file's TreeDef as a load by
//! type takes them, so that no load returns, or reports as complete, a
//! tree whose static fields differ from the file's.
//!
//! A static field is named as a tensor at its place would be: the key path
//! of the field in the file's tree, after the prefix the file was saved
//! with, then the load's renames (or none); the tree's static field of the
//! same name takes the file's value. A static field the file does not
//! hold keeps the tree's value (a file written elsewhere holds no TreeDef,
//! nor one saved with a static field serde could not write); the file's
//! value of another type than the tree's field is an error naming the
//! field and both values.

use std::collections::HashMap;

use pytree_core::{Error, KeyPath, NodeView, StaticValue, TreeDef};

use super::naming::combine;
use crate::paths::KeyStr;

/// Every static field of `def`: its key path (the struct's, then the
/// field's name) and value.
fn static_fields(def: &TreeDef) -> Result<Vec<(KeyPath, StaticValue)>, Error> {
    let mut out = Vec::new();
    def.transform(
        |path, node| {
            if let NodeView::Struct { schema, statics } = node.root_node() {
                let names = schema.fields().iter().filter(|f| f.is_static);
                for (field, value) in names.zip(statics) {
                    out.push((path.clone().field(field.name), value));
                }
            }
            Ok(node.clone())
        },
        |_| TreeDef::leaf(),
    )?;
    Ok(out)
}

/// Whether `def` has a static field anywhere (a fold over its records,
/// so that a tree without any never reads the file's TreeDef).
pub(crate) fn any(def: &TreeDef) -> Result<bool, Error> {
    def.fold(
        0..def.num_leaves(),
        |_| false,
        |node, kids| {
            kids.contains(&true)
                || matches!(node, NodeView::Struct { schema, .. } if schema.num_static() > 0)
        },
    )
}

/// `tree` (a template's structure) with the static fields that `file` (the
/// file's TreeDef) holds where their values differ, or `None` when none
/// does, with the names of the fields restored. `tree_name` maps a static
/// field's name in the file (its key path, with the file's prefix) to the
/// tree's, as the load maps tensor names.
pub(crate) fn restored(
    tree: &TreeDef,
    file: &TreeDef,
    tree_name: impl Fn(&str) -> String,
) -> Result<Option<(TreeDef, Vec<String>)>, Error> {
    let from_file: HashMap<String, StaticValue> = static_fields(file)?
        .into_iter()
        .map(|(path, value)| (tree_name(&path.keystr(KeyStr::SIMPLE)), value))
        .collect();
    if from_file.is_empty() {
        return Ok(None);
    }
    let mut names = Vec::new();
    let mut problems = Vec::new();
    let new = tree.transform(
        |path, node| {
            let NodeView::Struct { schema, statics } = node.root_node() else {
                return Ok(node.clone());
            };
            let mut values = statics.clone();
            let fields = schema.fields().iter().filter(|f| f.is_static);
            for (k, field) in fields.enumerate() {
                let field_path = path.clone().field(field.name);
                let name = field_path.keystr(KeyStr::SIMPLE);
                let (Some(theirs), Some(ours)) = (from_file.get(&name), statics.get(k)) else {
                    continue;
                };
                if theirs == ours {
                    continue;
                }
                if theirs.type_name() != ours.type_name() {
                    problems.push(
                        Error::custom(format!(
                            "static field `{name}` cannot be restored: the file holds {theirs:?} \
                             (a {}), the tree {ours:?} (a {})",
                            theirs.type_name(),
                            ours.type_name()
                        ))
                        .under(&field_path),
                    );
                    continue;
                }
                values[k] = theirs.clone();
                names.push(name);
            }
            if values == statics {
                return Ok(node.clone());
            }
            TreeDef::from_node(
                &NodeView::Struct {
                    schema,
                    statics: values,
                },
                node.children()?,
            )
        },
        |_| TreeDef::leaf(),
    )?;
    combine(problems)?;
    Ok((!names.is_empty()).then_some((new, names)))
}
