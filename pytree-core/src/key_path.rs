//! Key paths: where a leaf or subtree sits in a tree, as JAX's `keystr`
//! prints it (`.layers[1].w`, `["bias"]`, `.0`).

use alloc::vec::Vec;
use core::fmt;

use crate::static_data::{Static, StaticValue};

/// One step from a node to one of its children.
///
/// ```
/// use pytree_std::KeyEntry;
/// assert_eq!(KeyEntry::Field("w").to_string(), ".w");
/// assert_eq!(KeyEntry::Index(3).to_string(), "[3]");
/// assert_eq!(KeyEntry::key(String::from("bias")).to_string(), "[\"bias\"]");
/// assert_eq!(KeyEntry::Variant("Circle").to_string(), "::Circle");
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum KeyEntry {
    /// A named field of a struct or enum variant (a tuple struct's fields are
    /// named `"0"`, `"1"`, ...).
    Field(&'static str),
    /// An index into a sequence or a tuple.
    Index(usize),
    /// A map key, kept as static data.
    Key(StaticValue),
    /// The variant of an enum that the following entries are inside.
    Variant(&'static str),
}

impl KeyEntry {
    /// A map-key entry.
    ///
    /// ```
    /// let k = pytree_std::KeyEntry::key(7u32);
    /// assert_eq!(k.to_string(), "[7]");
    /// ```
    pub fn key<K: Static>(key: K) -> Self {
        KeyEntry::Key(StaticValue::new(key))
    }
}

impl fmt::Display for KeyEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyEntry::Field(name) => write!(f, ".{name}"),
            KeyEntry::Index(i) => write!(f, "[{i}]"),
            KeyEntry::Key(k) => write!(f, "[{k:?}]"),
            KeyEntry::Variant(name) => write!(f, "::{name}"),
        }
    }
}

/// A borrowed [`KeyEntry`], handed to visitors without allocating.
///
/// ```
/// use pytree_std::{KeyEntry, KeyRef};
/// let k = String::from("a");
/// assert_eq!(KeyRef::Key(&k).to_owned_entry(), KeyEntry::key(String::from("a")));
/// ```
#[derive(Clone, Copy, Debug)]
pub enum KeyRef<'a> {
    /// See [`KeyEntry::Field`].
    Field(&'static str),
    /// See [`KeyEntry::Index`].
    Index(usize),
    /// See [`KeyEntry::Key`].
    Key(&'a dyn ErasableKey),
    /// See [`KeyEntry::Variant`].
    Variant(&'static str),
}

impl KeyRef<'_> {
    /// The owned form (clones a map key).
    ///
    /// ```
    /// assert_eq!(pytree_std::KeyRef::Index(2).to_owned_entry().to_string(), "[2]");
    /// ```
    pub fn to_owned_entry(&self) -> KeyEntry {
        match *self {
            KeyRef::Field(name) => KeyEntry::Field(name),
            KeyRef::Index(i) => KeyEntry::Index(i),
            KeyRef::Key(k) => KeyEntry::Key(k.erase()),
            KeyRef::Variant(name) => KeyEntry::Variant(name),
        }
    }
}

/// A map key that can be cloned into a [`StaticValue`]; implemented for
/// every [`Static`] type.
///
/// ```
/// use pytree_std::ErasableKey;
/// assert_eq!(format!("{:?}", 5u8.erase()), "5");
/// ```
pub trait ErasableKey: fmt::Debug {
    /// Clones the key into an erased value.
    ///
    /// ```
    /// use pytree_std::{ErasableKey, StaticValue};
    /// assert_eq!(String::from("k").erase(), StaticValue::new(String::from("k")));
    /// ```
    fn erase(&self) -> StaticValue;
}

impl<K: Static> ErasableKey for K {
    fn erase(&self) -> StaticValue {
        StaticValue::new(self.clone())
    }
}

/// A path from the root of a tree to one of its nodes.
///
/// ```
/// use pytree_std::{KeyEntry, KeyPath};
/// let p = KeyPath::from_entries(vec![KeyEntry::Field("layers"), KeyEntry::Index(1), KeyEntry::Field("w")]);
/// assert_eq!(p.to_string(), ".layers[1].w");
/// assert_eq!(KeyPath::root().to_string(), "<root>");
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct KeyPath(Vec<KeyEntry>);

impl KeyPath {
    /// The empty path (the root).
    ///
    /// ```
    /// assert!(pytree_std::KeyPath::root().is_root());
    /// ```
    pub fn root() -> Self {
        KeyPath(Vec::new())
    }

    /// A path of these entries, root first.
    ///
    /// ```
    /// let p = pytree_std::KeyPath::from_entries(vec![pytree_std::KeyEntry::Index(0)]);
    /// assert_eq!(p.len(), 1);
    /// ```
    pub fn from_entries(entries: Vec<KeyEntry>) -> Self {
        KeyPath(entries)
    }

    /// The entries, root first.
    ///
    /// ```
    /// let p = pytree_std::KeyPath::from_entries(vec![pytree_std::KeyEntry::Index(4)]);
    /// assert_eq!(p.entries()[0], pytree_std::KeyEntry::Index(4));
    /// ```
    pub fn entries(&self) -> &[KeyEntry] {
        &self.0
    }

    /// Number of entries.
    ///
    /// ```
    /// assert_eq!(pytree_std::KeyPath::root().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True for the root path.
    ///
    /// ```
    /// assert!(pytree_std::KeyPath::root().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// True for the root path.
    ///
    /// ```
    /// assert!(pytree_std::KeyPath::root().is_root());
    /// ```
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// Appends an entry.
    ///
    /// ```
    /// let mut p = pytree_std::KeyPath::root();
    /// p.push(pytree_std::KeyEntry::Field("a"));
    /// assert_eq!(p.to_string(), ".a");
    /// ```
    pub fn push(&mut self, entry: KeyEntry) {
        self.0.push(entry);
    }

    /// Removes the last entry.
    ///
    /// ```
    /// let mut p = pytree_std::KeyPath::from_entries(vec![pytree_std::KeyEntry::Index(1)]);
    /// assert_eq!(p.pop(), Some(pytree_std::KeyEntry::Index(1)));
    /// ```
    pub fn pop(&mut self) -> Option<KeyEntry> {
        self.0.pop()
    }
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("<root>");
        }
        for entry in &self.0 {
            fmt::Display::fmt(entry, f)?;
        }
        Ok(())
    }
}

impl FromIterator<KeyEntry> for KeyPath {
    fn from_iter<I: IntoIterator<Item = KeyEntry>>(iter: I) -> Self {
        KeyPath(iter.into_iter().collect())
    }
}
