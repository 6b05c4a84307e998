//! Key paths as strings, in the styles of JAX's `keystr(path, simple=,
//! separator=)`: the full form `.layers[0].w` (what `Display` prints) and
//! the simple form `layers.0.w`, each with a chosen separator between
//! entries. [`TreeDef::parse_key_path`](crate::TreeDef::parse_key_path)
//! reads a path back from either.

use alloc::borrow::Cow;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use core::fmt::{self, Write};

use crate::paths::key_path::{KeyEntry, KeyPath};
use crate::static_data::StaticValue;

/// How a [`KeyPath`] is written as a string (JAX's `keystr` options).
///
/// - [`KeyStr::FULL`]: each entry as `Display` prints it (`.w`, `[0]`,
///   `["bias"]`, `::Circle`), joined with no separator: `.layers[0].w`.
///   Unambiguous: fields, indices and keys look different, and a key is
///   printed with its `Debug` form (`["0"]` is a string key, `[0]` an
///   index or an integer key).
/// - [`KeyStr::SIMPLE`]: each entry bare (`w`, `0`, `bias`, `Circle`; a
///   string or `char` key without quotes, other keys by their `Debug`
///   form), joined with `.`: `layers.0.w`. Compact, but `0` may be an
///   index, a field of a tuple struct or a key: reading it back needs the
///   structure ([`TreeDef::parse_key_path`](crate::TreeDef::parse_key_path)).
///
/// [`separator`](KeyStr::separator) chooses what goes between entries.
/// The root path is the empty string in every style.
///
/// ```
/// use pytree_std::{KeyPath, paths::KeyStr};
/// let p = KeyPath::root().field("layers").index(0).key(String::from("w"));
/// assert_eq!(p.keystr(KeyStr::FULL), r#".layers[0]["w"]"#);
/// assert_eq!(p.keystr(KeyStr::SIMPLE), "layers.0.w");
/// assert_eq!(p.keystr(KeyStr::SIMPLE.separator("/")), "layers/0/w");
/// assert_eq!(p.keystr(KeyStr::FULL.separator(" ")), r#".layers [0] ["w"]"#);
/// assert_eq!(KeyPath::root().keystr(KeyStr::SIMPLE), "");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyStr<'s> {
    simple: bool,
    separator: &'s str,
}

impl KeyStr<'static> {
    /// Entries as `Display` prints them, no separator: `.layers[0].w`
    /// (JAX's `keystr(path)`).
    ///
    /// ```
    /// use pytree_std::{KeyPath, paths::KeyStr};
    /// let p = KeyPath::root().field("layers").index(0).field("w");
    /// assert_eq!(p.keystr(KeyStr::FULL), ".layers[0].w");
    /// assert_eq!(p.keystr(KeyStr::FULL), p.to_string());
    /// ```
    pub const FULL: KeyStr<'static> = KeyStr {
        simple: false,
        separator: "",
    };

    /// Bare entries joined with `.`: `layers.0.w` (JAX's
    /// `keystr(path, simple=True, separator=".")`).
    ///
    /// ```
    /// use pytree_std::{KeyPath, paths::KeyStr};
    /// let p = KeyPath::root().field("layers").index(0).key(String::from("w"));
    /// assert_eq!(p.keystr(KeyStr::SIMPLE), "layers.0.w");
    /// ```
    pub const SIMPLE: KeyStr<'static> = KeyStr {
        simple: true,
        separator: ".",
    };
}

impl<'s> KeyStr<'s> {
    /// The same style with `separator` between entries.
    ///
    /// ```
    /// use pytree_std::{KeyPath, paths::KeyStr};
    /// let p = KeyPath::root().field("a").index(2);
    /// assert_eq!(p.keystr(KeyStr::SIMPLE.separator("::")), "a::2");
    /// ```
    #[must_use]
    pub fn separator<'t>(self, separator: &'t str) -> KeyStr<'t> {
        KeyStr {
            simple: self.simple,
            separator,
        }
    }

    /// True for the simple style.
    ///
    /// ```
    /// assert!(pytree_std::paths::KeyStr::SIMPLE.is_simple());
    /// assert!(!pytree_std::paths::KeyStr::FULL.is_simple());
    /// ```
    pub fn is_simple(&self) -> bool {
        self.simple
    }

    /// What goes between entries.
    ///
    /// ```
    /// assert_eq!(pytree_std::paths::KeyStr::SIMPLE.separator_str(), ".");
    /// ```
    pub fn separator_str(&self) -> &'s str {
        self.separator
    }

    /// One entry in this style (without separator).
    ///
    /// ```
    /// use pytree_std::{paths::KeyEntry, paths::KeyStr};
    /// assert_eq!(KeyStr::SIMPLE.entry(&KeyEntry::key('x')), "x");
    /// assert_eq!(KeyStr::FULL.entry(&KeyEntry::key('x')), "['x']");
    /// assert_eq!(KeyStr::SIMPLE.entry(&KeyEntry::Variant("Circle")), "Circle");
    /// ```
    pub fn entry(&self, entry: &KeyEntry) -> String {
        let mut out = String::new();
        // Writing to a `String` cannot fail.
        let _ = self.write_entry(&mut out, entry);
        out
    }

    fn write_entry(&self, out: &mut impl Write, entry: &KeyEntry) -> fmt::Result {
        if !self.simple {
            return write!(out, "{entry}");
        }
        match entry {
            KeyEntry::Field(name) | KeyEntry::Variant(name) => out.write_str(name),
            KeyEntry::Index(i) => write!(out, "{i}"),
            KeyEntry::Key(key) => out.write_str(&simple_key(key)),
        }
    }

    /// Writes `entries` in this style.
    pub(crate) fn write_entries(&self, out: &mut impl Write, entries: &[KeyEntry]) -> fmt::Result {
        for (i, entry) in entries.iter().enumerate() {
            if i > 0 {
                out.write_str(self.separator)?;
            }
            self.write_entry(out, entry)?;
        }
        Ok(())
    }
}

/// A map key as the simple style writes it: a string or `char` key as it
/// is, any other key by its `Debug` form.
fn simple_key(key: &StaticValue) -> Cow<'_, str> {
    if let Some(s) = key.downcast_ref::<String>() {
        return Cow::Borrowed(s);
    }
    if let Some(s) = key.downcast_ref::<&'static str>() {
        return Cow::Borrowed(s);
    }
    if let Some(s) = key.downcast_ref::<Arc<str>>() {
        return Cow::Borrowed(s);
    }
    if let Some(s) = key.downcast_ref::<Cow<'static, str>>() {
        return Cow::Borrowed(s);
    }
    if let Some(c) = key.downcast_ref::<char>() {
        return Cow::Owned(c.to_string());
    }
    Cow::Owned(alloc::format!("{key:?}"))
}

impl KeyPath {
    /// The path as a string in the given style (JAX's `keystr(path,
    /// simple=, separator=)`); see [`KeyStr`]. The root is `""`.
    /// [`TreeDef::parse_key_path`](crate::TreeDef::parse_key_path) reads it
    /// back.
    ///
    /// ```
    /// use pytree_std::{paths::KeyStr, PyTree};
    /// #[derive(PyTree)]
    /// struct Linear { w: f32, b: f32 }
    /// #[derive(PyTree)]
    /// struct Mlp { layers: Vec<Linear> }
    /// let mlp = Mlp { layers: vec![Linear { w: 1.0, b: 2.0 }] };
    /// let paths: Vec<String> = pytree_std::paths::leaves_with_path(&mlp)
    ///     .iter()
    ///     .map(|(p, _)| p.keystr(KeyStr::SIMPLE))
    ///     .collect();
    /// assert_eq!(paths, ["layers.0.w", "layers.0.b"]);
    /// ```
    pub fn keystr(&self, style: KeyStr<'_>) -> String {
        let mut out = String::new();
        // Writing to a `String` cannot fail.
        let _ = style.write_entries(&mut out, self.entries());
        out
    }
}
