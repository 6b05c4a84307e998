//! Reading a key path back from its string ([`KeyPath::keystr`], or
//! `Display`), against a TreeDef: the structure says what each entry can
//! be, so a field name becomes the schema's `&'static str`, a map key the
//! map's own key (of its type), and the simple style's bare `0` an index,
//! a tuple field or a key, whichever the node has.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::align::ChildKeys;
use super::{Decoder, Item, TreeDef};
use crate::error::Error;
use crate::paths::key_path::{KeyEntry, KeyPath};
use crate::paths::key_str::KeyStr;

/// True when `rest` (what follows an entry) can start the next entry, or
/// is the end.
fn boundary(rest: &str, style: KeyStr<'_>) -> bool {
    let sep = style.separator_str();
    if rest.is_empty() {
        return true;
    }
    if !sep.is_empty() {
        return rest.starts_with(sep);
    }
    // No separator: the full style's entries start with `.`, `[` or `::`;
    // simple entries run together, so anything may follow.
    style.is_simple() || rest.starts_with(['.', '[', ':'])
}

/// The index of a child of a sequence or tuple of `arity` children
/// written at the start of `text`, and the length of its text: the
/// longest run of digits that is a valid index and ends an entry (runs
/// of simple entries without a separator are read greedily).
fn read_index(text: &str, arity: usize, style: KeyStr<'_>) -> Option<(usize, usize)> {
    let (open, close) = if style.is_simple() {
        ("", "")
    } else {
        ("[", "]")
    };
    let digits = text.strip_prefix(open)?;
    let most = digits.bytes().take_while(u8::is_ascii_digit).count();
    (1..=most).rev().find_map(|n| {
        let i: usize = digits[..n].parse().ok()?;
        let rest = digits[n..].strip_prefix(close)?;
        (i < arity && boundary(rest, style)).then_some((i, open.len() + n + close.len()))
    })
}

impl TreeDef {
    /// Reads a key path back from its string in `style` ([`KeyStr::FULL`]
    /// for what `Display` and [`KeyPath::keystr`] print, `.layers[0].w`;
    /// [`KeyStr::SIMPLE`] for `layers.0.w`), against this structure: each
    /// entry must name a child of the node reached so far, so field names,
    /// map keys (with their type) and variants come from the TreeDef. The
    /// path may end at a leaf or at a subtree; `""` (and `<root>` in the
    /// full style) is the root. With the simple style and no separator the
    /// entries run together and are read greedily (the longest entry that
    /// fits, at each step): choose a separator for strings to read back. `Option` adds no entry, as in every key
    /// path. A string that names no child is an error at the deepest
    /// place reached, listing the children there.
    ///
    /// The dynamic tree's paths read the same way against its structure
    /// (its keys are `String`s); its own `"x/c"` strings are a
    /// `pytree_std::tree::TreePath` already.
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use pytree_std::{paths::KeyStr, PyTree};
    /// #[derive(PyTree)]
    /// struct Linear { w: f32, b: f32 }
    /// #[derive(PyTree)]
    /// struct Mlp { layers: Vec<Linear>, extra: BTreeMap<String, f32> }
    /// let mlp = Mlp { layers: vec![Linear { w: 1.0, b: 2.0 }], extra: BTreeMap::from([("scale".into(), 3.0)]) };
    /// let def = pytree_std::structure(&mlp);
    ///
    /// let p = def.parse_key_path(".layers[0].b", KeyStr::FULL)?;
    /// assert_eq!(pytree_std::paths::get(&mlp, &p)?, &2.0);
    /// let q = def.parse_key_path("extra.scale", KeyStr::SIMPLE)?;
    /// assert_eq!(q.to_string(), r#".extra["scale"]"#);
    /// // Every leaf's path reads back as itself, in either style.
    /// for path in def.leaf_paths()? {
    ///     assert_eq!(def.parse_key_path(&path.keystr(KeyStr::SIMPLE), KeyStr::SIMPLE)?, path);
    ///     assert_eq!(def.parse_key_path(&path.to_string(), KeyStr::FULL)?, path);
    /// }
    /// let err = def.parse_key_path("layers.0.q", KeyStr::SIMPLE).unwrap_err();
    /// assert_eq!(err.to_string(), r#"at .layers[0]: cannot read "q" as a key path here: the children are w, b"#);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn parse_key_path(&self, text: &str, style: KeyStr<'_>) -> Result<KeyPath, Error> {
        let mut rest = if !style.is_simple() && text == "<root>" {
            ""
        } else {
            text
        };
        let sep = style.separator_str();
        let mut decoder = Decoder::new(self);
        let mut entries: Vec<KeyEntry> = Vec::new();
        while !rest.is_empty() {
            let (node, statics) = match decoder.next_item() {
                Some(Item::Node(node, statics)) => (node, statics),
                Some(Item::Leaf) | None => {
                    return Err(Error::custom(format!(
                        "cannot read {rest:?} as a key path here: a leaf has no children"
                    ))
                    .under_entries(&entries))
                }
            };
            let keys = ChildKeys::of(node, statics);
            if matches!(node, super::Record::Some) {
                // `Some`'s child has no entry of its own.
                continue;
            }
            // The separator before this entry (none before the first).
            let body = match (entries.is_empty(), rest.strip_prefix(sep)) {
                (true, _) => Some(rest),
                (false, stripped) => stripped,
            };
            let lead = rest.len() - body.map_or(rest.len(), str::len);
            let mut found: Option<(usize, Vec<KeyEntry>, usize)> = None;
            if let (Some(body), ChildKeys::Index) = (body, &keys) {
                if let Some((i, len)) = read_index(body, node.arity(), style) {
                    found = Some((i, alloc::vec![KeyEntry::Index(i)], lead + len));
                }
            } else if let Some(body) = body {
                for j in 0..node.arity() {
                    let mut child = Vec::new();
                    keys.push(j, &mut child);
                    let mut written = String::new();
                    // Writing to a `String` cannot fail.
                    let _ = style.write_entries(&mut written, &child);
                    let longer = found.as_ref().is_none_or(|f| lead + written.len() > f.2);
                    if !child.is_empty()
                        && longer
                        && body.starts_with(written.as_str())
                        && boundary(&body[written.len()..], style)
                    {
                        found = Some((j, child, lead + written.len()));
                    }
                }
            }
            let Some((j, child, len)) = found else {
                return Err(self
                    .no_child(body.unwrap_or(rest), &keys, node.arity(), style)
                    .under_entries(&entries));
            };
            decoder.skip_subtrees(j);
            entries.extend(child);
            rest = &rest[len..];
        }
        Ok(KeyPath::from_entries(entries))
    }

    /// The error for a string that names no child of a node.
    #[cold]
    fn no_child(&self, rest: &str, keys: &ChildKeys, arity: usize, style: KeyStr<'_>) -> Error {
        const SHOWN: usize = 8;
        let mut names: Vec<String> = (0..arity.min(SHOWN))
            .map(|j| {
                let mut child = Vec::new();
                keys.push(j, &mut child);
                let mut written = String::new();
                let _ = style.write_entries(&mut written, &child);
                written
            })
            .collect();
        if arity > SHOWN {
            names.push(format!("... ({arity} in all)"));
        }
        let children = if names.is_empty() {
            String::from("there are no children")
        } else {
            format!("the children are {}", names.join(", "))
        };
        Error::custom(format!(
            "cannot read {rest:?} as a key path here: {children}"
        ))
    }
}
