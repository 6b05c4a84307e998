//! Conversion between typed pytrees and [`Tree`], through key paths.
//!
//! The mapping (typed → tree), which is also how a `Tree` unflattens from
//! any TreeDef:
//! - a struct becomes a map of its *data* fields, keyed by field name in
//!   declaration order (a tuple struct's fields are `"0"`, `"1"`, ...);
//! - an enum variant becomes a one-entry map `{"Variant": {fields}}`;
//! - tuples, `Vec`, arrays and other sequences become sequences;
//! - a map becomes a map whose keys are the typed keys as strings (`String`
//!   and `&str` as they are; numbers, `char` and `bool` as `to_string`
//!   prints them; other key types by their `Debug` form);
//! - `Some(x)` is `x`; `None` is `None`; `Box`, `Rc`, `Arc` are transparent.
//!
//! What is lost: static fields, the type and schema names, the difference
//! between a tuple and a `Vec`, and which places were `Some`. The typed
//! value's [`TreeDef`] keeps all of that, which is why the way back,
//! [`Tree::to_pytree`], takes one.

use pytree_core::{
    DefSource, Error, ErrorKind, Flatten, KeyEntry, NodeView, Source, StaticValue, TreeDef,
    Unflatten,
};

use super::node::Tree;
use super::walk;
use crate::std_namespace::Std;

/// How the children of an open container are keyed.
enum Names {
    Seq,
    Keys(StaticValue),
    Fields(Vec<&'static str>),
    Variant(&'static str),
}

/// A container being read, with how many children it has and has read.
struct Open {
    names: Names,
    len: usize,
    next: usize,
}

impl Open {
    /// The tree key of the child about to be read.
    fn child_key(&self) -> Option<String> {
        match &self.names {
            Names::Seq => None,
            Names::Keys(keys) => Some(
                keys.item(self.next)
                    .map_or_else(String::new, |k| key_string(&k)),
            ),
            Names::Fields(names) => names.get(self.next).map(|n| n.to_string()),
            Names::Variant(name) => Some(name.to_string()),
        }
    }

    /// The key-path entry of the child being read (the typed one).
    fn entry(&self) -> KeyEntry {
        match &self.names {
            Names::Seq => KeyEntry::Index(self.next),
            Names::Keys(keys) => match keys.item(self.next) {
                Some(k) => KeyEntry::Key(k),
                None => KeyEntry::Index(self.next),
            },
            Names::Fields(names) => KeyEntry::Field(names.get(self.next).copied().unwrap_or("?")),
            Names::Variant(name) => KeyEntry::Variant(name),
        }
    }
}

/// The string a typed map key becomes in a [`Tree`].
///
/// ```
/// use pytree_std::{tree::key_string, StaticValue};
/// assert_eq!(key_string(&StaticValue::new(String::from("w"))), "w");
/// assert_eq!(key_string(&StaticValue::new(7u32)), "7");
/// assert_eq!(key_string(&StaticValue::new((1, 2))), "(1, 2)");
/// ```
pub fn key_string(key: &StaticValue) -> String {
    macro_rules! as_text {
        ($($t:ty),*) => {
            $(if let Some(k) = key.downcast_ref::<$t>() {
                return k.to_string();
            })*
        };
    }
    as_text!(
        String,
        &'static str,
        char,
        bool,
        i8,
        i16,
        i32,
        i64,
        i128,
        isize,
        u8,
        u16,
        u32,
        u64,
        u128,
        usize
    );
    format!("{key:?}")
}

/// Reads one value of any structure from `source`, iteratively.
pub(crate) fn read_any<L, S: Source<L> + ?Sized>(source: &mut S) -> Result<Tree<L>, Error> {
    let mut out = walk::Builder::new();
    let mut open: Vec<Open> = Vec::new();
    let at = |e: Error, open: &[Open]| open.iter().rev().fold(e, |e, o| e.at(o.entry()));
    loop {
        let view = source.any_node().map_err(|e| at(e, &open))?;
        // The new child's key in its parent, checked for collisions.
        let key = open.last().and_then(Open::child_key);
        if !matches!(view, NodeView::Some) {
            if let Some(k) = &key {
                if out.has_key(k) {
                    let msg = format!("two keys of this map are both written {k:?} in a tree");
                    return Err(at(Error::custom(msg), &open));
                }
            }
        }
        let mut opened = |names: Names, len: usize, out: &mut walk::Builder<L>, key| {
            match names {
                Names::Seq => out.open_seq(key, len),
                _ => out.open_map(key, len),
            }
            open.push(Open {
                names,
                len,
                next: 0,
            });
        };
        match view {
            NodeView::Some => continue,
            NodeView::Leaf => {
                let x = source.leaf().map_err(|e| at(e, &open))?;
                out.push(key, Tree::leaf(x));
                if let Some(parent) = open.last_mut() {
                    parent.next += 1;
                }
            }
            NodeView::None => {
                out.push(key, Tree::none());
                if let Some(parent) = open.last_mut() {
                    parent.next += 1;
                }
            }
            NodeView::Seq(n) | NodeView::Tuple(n) => opened(Names::Seq, n, &mut out, key),
            NodeView::Map { len, keys } => opened(Names::Keys(keys), len, &mut out, key),
            NodeView::Struct { schema, .. } => {
                let fields: Vec<&'static str> = schema
                    .fields()
                    .iter()
                    .filter(|f| !f.is_static)
                    .map(|f| f.name)
                    .collect();
                let n = fields.len();
                match schema.variant() {
                    Some(variant) => {
                        opened(Names::Variant(variant), 1, &mut out, key);
                        opened(
                            Names::Fields(fields),
                            n,
                            &mut out,
                            Some(variant.to_string()),
                        );
                    }
                    None => opened(Names::Fields(fields), n, &mut out, key),
                }
            }
        }
        // Close every container whose children are all read.
        while open.last().is_some_and(|o| o.next >= o.len) {
            open.pop();
            out.close();
            if let Some(parent) = open.last_mut() {
                parent.next += 1;
            }
        }
        if open.is_empty() {
            return Ok(out.finish());
        }
    }
}

/// Reads a whole TreeDef with `leaves`, checking that both are used up.
fn read_def<L>(def: &TreeDef, leaves: impl Iterator<Item = L>) -> Result<Tree<L>, Error> {
    let mut source = DefSource::new(def, leaves);
    let tree = read_any(&mut source)?;
    source.finish()?;
    Ok(tree)
}

/// The same error without the tree index (for single-tree messages).
fn without_tree_index(e: Error) -> Error {
    let path = e.path();
    path.entries()
        .iter()
        .rev()
        .fold(Error::new(e.kind().clone()), |e, k| e.at(k.clone()))
}

impl<L> Tree<L> {
    /// The tree of a typed pytree, through its key paths: a derived
    /// `Mlp<f32>` becomes a tree whose leaf paths are `layers/0/w`, ...
    ///
    /// - a struct becomes a map of its *data* fields, keyed by field name
    ///   in declaration order (a tuple struct's fields are `"0"`, `"1"`);
    /// - an enum variant becomes a one-entry map `{"Variant": {fields}}`;
    /// - tuples, `Vec`, arrays and other sequences become sequences;
    /// - a map's keys become strings ([`key_string`]);
    /// - `Some(x)` is `x`, `None` is `None`; `Box`, `Rc`, `Arc` vanish.
    ///
    /// Lost: static fields, type names, tuple-versus-`Vec`, which places
    /// were `Some`; the typed value's TreeDef keeps them, which is why
    /// [`to_pytree`](Tree::to_pytree) takes one. Errors only if two keys of
    /// one typed map print the same (a `Debug` that is not one-to-one).
    ///
    /// ```
    /// use pytree_std::{PyTree, Tree};
    /// #[derive(PyTree)]
    /// struct Linear { w: f32, b: f32 }
    /// #[derive(PyTree)]
    /// struct Mlp { layers: Vec<Linear>, #[pytree(static)] name: String }
    /// let mlp = Mlp { layers: vec![Linear { w: 1.0, b: 2.0 }], name: "m".into() };
    /// let t = Tree::from_pytree(mlp)?;
    /// assert_eq!(format!("{t:?}"), r#"{"layers": [{"w": 1.0, "b": 2.0}]}"#);
    /// assert_eq!(t.subtree("layers/0/w").and_then(Tree::as_leaf), Some(&1.0));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn from_pytree<T: Flatten<Std, Leaf = L>>(value: T) -> Result<Tree<L>, Error> {
        let (leaves, def) = crate::walk::flatten(value);
        read_def(&def, leaves.into_iter())
    }

    /// Builds a typed pytree from this tree: `def` (the TreeDef of a value
    /// of type `T`, e.g. `structure(&model)` or a deserialized one) gives
    /// the shape and the static fields; each of its leaves is taken from
    /// this tree at the same key path. The tree must have exactly that
    /// structure (map entries may be in any order): a missing or extra key,
    /// a sequence of another length or a leaf where the type has a
    /// container is an error naming the path, so no leaf is silently left
    /// out.
    ///
    /// ```
    /// use pytree_std::{tree, PyTree, Tree};
    /// #[derive(PyTree, Debug, PartialEq)]
    /// struct Linear { w: f32, b: f32 }
    /// let def = pytree_std::structure(&Linear { w: 0.0, b: 0.0 });
    /// let t: Tree<f32> = tree! { "b" => 2.0, "w" => 1.0 };
    /// assert_eq!(t.to_pytree::<Linear>(&def)?, Linear { w: 1.0, b: 2.0 });
    /// let err = tree! { "w" => 1.0f32 }.to_pytree::<Linear>(&def).unwrap_err();
    /// assert_eq!(err.to_string(), r#"at <root>: map key mismatch; expected key(s): ["w", "b"], got key(s): ["w"], missing key(s): ["b"]"#);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn to_pytree<T>(&self, def: &TreeDef) -> Result<T, Error>
    where
        T: Unflatten<Std, Leaf = L>,
        L: Clone,
    {
        // The shape is built from `def` alone, so it is built only when it
        // is no more than about twice this tree's size (a document's
        // TreeDef may claim any number of leaves); otherwise the counts
        // alone say they cannot match.
        let have = self.num_leaves();
        if def.num_leaves() > have.saturating_mul(2).saturating_add(16) {
            return Err(Error::new(ErrorKind::TooFewLeaves {
                expected: def.num_leaves(),
                found: have,
            }));
        }
        let shape: Tree<usize> = read_def(def, 0..def.num_leaves())?;
        let mut leaves = Vec::with_capacity(def.num_leaves());
        walk::lockstep(&shape, [self], |_, [x]| {
            leaves.push(x.clone());
            Ok(())
        })
        .map_err(without_tree_index)?;
        crate::walk::unflatten(def, leaves)
    }
}
