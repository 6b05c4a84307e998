//! Key paths: where a leaf or subtree sits in a tree, as JAX's `keystr`
//! prints it (`.layers[1].w`, `["bias"]`, `.0`).

use alloc::vec::Vec;
use core::fmt;

use crate::static_data::{Static, StaticValue};

/// One step from a node to one of its children.
///
/// ```
/// use pytree_std::paths::KeyEntry;
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
    /// let k = pytree_std::paths::KeyEntry::key(7u32);
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
/// use pytree_std::{paths::KeyEntry, KeyRef};
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

    /// True if this borrowed entry equals `entry` (without cloning a map key).
    ///
    /// ```
    /// use pytree_std::{paths::KeyEntry, KeyRef};
    /// let k = String::from("a");
    /// assert!(KeyRef::Key(&k).matches(&KeyEntry::key(String::from("a"))));
    /// assert!(!KeyRef::Key(&k).matches(&KeyEntry::key("a"))); // &str is another type
    /// assert!(KeyRef::Field("w").matches(&KeyEntry::Field("w")));
    /// ```
    pub fn matches(&self, entry: &KeyEntry) -> bool {
        match (*self, entry) {
            (KeyRef::Field(a), KeyEntry::Field(b)) => a == *b,
            (KeyRef::Index(a), KeyEntry::Index(b)) => a == *b,
            (KeyRef::Key(a), KeyEntry::Key(b)) => a.eq_erased(b),
            (KeyRef::Variant(a), KeyEntry::Variant(b)) => a == *b,
            _ => false,
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

    /// True if `value` holds a key of the same type equal to this one
    /// (path lookups compare keys this way, without cloning them).
    ///
    /// ```
    /// use pytree_std::{ErasableKey, StaticValue};
    /// assert!(5u8.eq_erased(&StaticValue::new(5u8)));
    /// assert!(!5u8.eq_erased(&StaticValue::new(5u16)));
    /// ```
    fn eq_erased(&self, value: &StaticValue) -> bool {
        self.erase() == *value
    }
}

impl<K: Static> ErasableKey for K {
    fn erase(&self) -> StaticValue {
        StaticValue::new(self.clone())
    }

    fn eq_erased(&self, value: &StaticValue) -> bool {
        value.downcast_ref::<K>() == Some(self)
    }
}

/// A path from the root of a tree to one of its nodes.
///
/// Walks that track paths (`flatten_with_path`, `partition`, ...) also
/// record the *kind* of the place: the `#[pytree(kind = "...")]` of the
/// innermost tagged field the path goes through (see [`kind`](KeyPath::kind)).
/// The kind is derived information, not part of the path's identity:
/// equality, hashing and printing look at the entries only.
///
/// ```
/// use pytree_std::{paths::KeyEntry, KeyPath};
/// let p = KeyPath::from_entries(vec![KeyEntry::Field("layers"), KeyEntry::Index(1), KeyEntry::Field("w")]);
/// assert_eq!(p.to_string(), ".layers[1].w");
/// assert_eq!(p, KeyPath::root().field("layers").index(1).field("w"));
/// assert_eq!(KeyPath::root().to_string(), "<root>");
/// ```
#[derive(Clone, Default)]
pub struct KeyPath(Vec<KeyEntry>, Option<&'static str>);

impl KeyPath {
    /// The kind of a place that no tagged field encloses: `"param"` (PAX's
    /// trainable parameter).
    pub const DEFAULT_KIND: &'static str = "param";

    /// The empty path (the root).
    ///
    /// ```
    /// assert!(pytree_std::KeyPath::root().is_root());
    /// ```
    pub fn root() -> Self {
        KeyPath(Vec::new(), None)
    }

    /// A path of these entries, root first.
    ///
    /// ```
    /// let p = pytree_std::KeyPath::from_entries(vec![pytree_std::paths::KeyEntry::Index(0)]);
    /// assert_eq!(p.len(), 1);
    /// ```
    pub fn from_entries(entries: Vec<KeyEntry>) -> Self {
        KeyPath(entries, None)
    }

    /// This path extended by a struct field: `.name`.
    ///
    /// ```
    /// assert_eq!(pytree_std::KeyPath::root().field("w").to_string(), ".w");
    /// ```
    #[must_use]
    pub fn field(mut self, name: &'static str) -> Self {
        self.0.push(KeyEntry::Field(name));
        self
    }

    /// This path extended by a sequence or tuple index: `[i]`.
    ///
    /// ```
    /// assert_eq!(pytree_std::KeyPath::root().index(2).to_string(), "[2]");
    /// ```
    #[must_use]
    pub fn index(mut self, i: usize) -> Self {
        self.0.push(KeyEntry::Index(i));
        self
    }

    /// This path extended by a map key: `[key]`. The key must have the map's
    /// key type (`String::from("a")` for a `BTreeMap<String, _>`, not `"a"`).
    ///
    /// ```
    /// let p = pytree_std::KeyPath::root().key(String::from("bias"));
    /// assert_eq!(p.to_string(), "[\"bias\"]");
    /// ```
    #[must_use]
    pub fn key<K: Static>(mut self, key: K) -> Self {
        self.0.push(KeyEntry::key(key));
        self
    }

    /// This path extended by an enum variant: `::Name`.
    ///
    /// ```
    /// let p = pytree_std::KeyPath::root().variant("Circle").field("r");
    /// assert_eq!(p.to_string(), "::Circle.r");
    /// ```
    #[must_use]
    pub fn variant(mut self, name: &'static str) -> Self {
        self.0.push(KeyEntry::Variant(name));
        self
    }

    /// The kind of the place: the `kind` of the innermost
    /// `#[pytree(kind = "...")]` field on the path, or
    /// [`DEFAULT_KIND`](KeyPath::DEFAULT_KIND) (`"param"`) if none. Known for
    /// paths handed out by walks that track paths; a path built by hand has
    /// the default unless given one with [`with_kind`](KeyPath::with_kind).
    ///
    /// ```
    /// use pytree_std::PyTree;
    /// #[derive(PyTree)]
    /// struct Counter { #[pytree(kind = "state")] count: f64, bias: f64 }
    /// let paths = pytree_std::paths::leaves_with_path(&Counter { count: 1.0, bias: 0.5 });
    /// assert_eq!(paths[0].0.kind(), "state");
    /// assert_eq!(paths[1].0.kind(), "param");
    /// ```
    pub fn kind(&self) -> &'static str {
        self.1.unwrap_or(Self::DEFAULT_KIND)
    }

    /// The same path with this kind (see [`kind`](KeyPath::kind)).
    ///
    /// ```
    /// let p = pytree_std::KeyPath::root().field("count").with_kind("state");
    /// assert_eq!(p.kind(), "state");
    /// assert_eq!(p, pytree_std::KeyPath::root().field("count")); // kind is not identity
    /// ```
    #[must_use]
    pub fn with_kind(mut self, kind: &'static str) -> Self {
        self.1 = Some(kind);
        self
    }

    /// Sets the explicit kind (`None`: the default), for path-tracking walks.
    pub(crate) fn set_kind(&mut self, kind: Option<&'static str>) {
        self.1 = kind;
    }

    /// The entries, root first.
    ///
    /// ```
    /// let p = pytree_std::KeyPath::from_entries(vec![pytree_std::paths::KeyEntry::Index(4)]);
    /// assert_eq!(p.entries()[0], pytree_std::paths::KeyEntry::Index(4));
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
    /// p.push(pytree_std::paths::KeyEntry::Field("a"));
    /// assert_eq!(p.to_string(), ".a");
    /// ```
    pub fn push(&mut self, entry: KeyEntry) {
        self.0.push(entry);
    }

    /// Removes the last entry.
    ///
    /// ```
    /// let mut p = pytree_std::KeyPath::from_entries(vec![pytree_std::paths::KeyEntry::Index(1)]);
    /// assert_eq!(p.pop(), Some(pytree_std::paths::KeyEntry::Index(1)));
    /// ```
    pub fn pop(&mut self) -> Option<KeyEntry> {
        self.0.pop()
    }
}

impl PartialEq for KeyPath {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl Eq for KeyPath {}

impl core::hash::Hash for KeyPath {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl fmt::Debug for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("KeyPath").field(&self.0).finish()
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
        KeyPath(iter.into_iter().collect(), None)
    }
}
