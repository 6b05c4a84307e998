//! The error value every fallible operation returns: what went wrong, and
//! where (a [`KeyPath`] into the tree).

use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;

use crate::paths::key_path::{KeyEntry, KeyPath};
use crate::signature::Signature;

/// What went wrong, without the place. See [`Error`].
///
/// ```
/// use pytree_std::ErrorKind;
/// let def = pytree_std::structure(&(1, 2));
/// let err = pytree_std::unflatten::<(i32, i32)>(&def, [1]).unwrap_err();
/// assert_eq!(err.kind(), &ErrorKind::TooFewLeaves { expected: 2, found: 1 });
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The leaves ran out before the [`TreeDef`](crate::TreeDef) was filled.
    TooFewLeaves {
        /// Leaves the TreeDef needs.
        expected: usize,
        /// Leaves that were given.
        found: usize,
    },
    /// Leaves were left over after the [`TreeDef`](crate::TreeDef) was filled.
    TooManyLeaves {
        /// Leaves the TreeDef needs.
        expected: usize,
        /// Leaves that were given.
        found: usize,
    },
    /// The TreeDef (or another tree) has a different kind of node here.
    NodeMismatch {
        /// The node the target type (or the first tree) has here.
        expected: String,
        /// The node that was found.
        found: String,
    },
    /// Static (meta) data differs between two trees.
    StaticMismatch {
        /// Debug form of the expected static data.
        expected: String,
        /// Debug form of the static data found.
        found: String,
    },
    /// A map's keys differ.
    KeyMismatch {
        /// Keys that were expected (Debug form).
        expected: Vec<String>,
        /// Keys that were found (Debug form).
        found: Vec<String>,
    },
    /// A sequence has another length.
    LengthMismatch {
        /// The expected length.
        expected: usize,
        /// The length found.
        found: usize,
    },
    /// A key path that does not lead anywhere in the tree (lookups and
    /// updates by path). The error's own path is the one asked for.
    PathNotFound {
        /// The longest prefix of the path that exists.
        existing: KeyPath,
        /// The entry that the place at `existing` does not have.
        missing: KeyEntry,
    },
    /// `combine` found a leaf position where not exactly one of the trees
    /// holds a leaf (the others must be `None` holes).
    CombineConflict {
        /// The trees (0-based) that hold a leaf here.
        holders: Vec<usize>,
        /// How many trees were combined.
        trees: usize,
    },
    /// Two leaves paired by a multi-tree operation (or a leaf and its
    /// replacement) differ in signature: shape, dtype or device.
    SignatureMismatch {
        /// The signature of the leaf of the first tree (or the one replaced).
        expected: Signature,
        /// The signature found.
        found: Signature,
    },
    /// The function given to a fallible operation (`try_map2`,
    /// `try_zip_mut`, ...) failed on the leaf at the error's path. The
    /// function's own error is [`Error::source`](core::error::Error::source)
    /// (and [`LeafFnError::get`]).
    LeafFn(LeafFnError),
    /// Several trees differ in more than one place: every mismatch, each an
    /// error with its own path and tree (a multi-tree operation reports all
    /// of them at once, like JAX's "Mismatch details (N found)").
    Mismatches(Vec<Error>),
    /// A type that a [`TreeDef`](crate::TreeDef) and leaves alone cannot
    /// build (a burn module: its configuration is not in the TreeDef),
    /// with the message that says how to get one. Operations that hold a
    /// tree of the type (`map_n`, ensembles, a load against a template)
    /// build like it instead.
    NeedsTemplate(String),
    /// Any other failure, with its message.
    Custom(String),
}

/// The error of every fallible pytree operation.
///
/// It names the place (a [`KeyPath`] such as `.layers[1].b`) and what was
/// expected and found there. Its `Display` reads like
/// `at .layers[1].b: too few leaves for TreeDef: expected 4, got 3`.
///
/// ```
/// use pytree_std::{PyTree, TreeDef};
/// #[derive(PyTree, Debug, PartialEq)]
/// struct Linear { w: f32, b: f32 }
/// let def: TreeDef = pytree_std::structure(&Linear { w: 1.0, b: 2.0 });
/// let err = pytree_std::unflatten::<Linear>(&def, vec![1.0]).unwrap_err();
/// assert_eq!(err.to_string(), "at .b: too few leaves for TreeDef: expected 2, got 1");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    /// Boxed so that `Result<f64, Error>` is two words: every leaf of
    /// `zip_with`, `zip_mut` and `unflatten` returns one.
    inner: Box<Inner>,
}

#[derive(Clone, PartialEq, Eq)]
struct Inner {
    kind: ErrorKind,
    /// Stored innermost-first while the error bubbles up; reversed on read.
    reversed_path: Vec<KeyEntry>,
    /// Which tree (argument position) the error is about, for multi-tree ops.
    tree_index: Option<usize>,
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.inner.kind)
            .field("reversed_path", &self.inner.reversed_path)
            .field("tree_index", &self.inner.tree_index)
            .finish()
    }
}

impl Error {
    /// An error of this kind at the root of the tree.
    ///
    /// ```
    /// use pytree_std::{Error, ErrorKind};
    /// let e = Error::new(ErrorKind::LengthMismatch { expected: 2, found: 3 });
    /// assert_eq!(e.to_string(), "at <root>: sequence length mismatch: expected 2, found 3");
    /// ```
    #[cold]
    pub fn new(kind: ErrorKind) -> Self {
        Error {
            inner: Box::new(Inner {
                kind,
                reversed_path: Vec::new(),
                tree_index: None,
            }),
        }
    }

    /// A free-form error at the root of the tree.
    ///
    /// ```
    /// let e = pytree_std::Error::custom("bad shape");
    /// assert_eq!(e.to_string(), "at <root>: bad shape");
    /// ```
    pub fn custom(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Custom(message.into()))
    }

    /// Places this error one level deeper: `key` is the entry that leads from
    /// the parent to where the error happened. Called while the error bubbles
    /// up, so entries arrive innermost first.
    ///
    /// ```
    /// use pytree_std::{Error, paths::KeyEntry};
    /// let e = Error::custom("x").at(KeyEntry::Index(1)).at(KeyEntry::Field("layers"));
    /// assert_eq!(e.path().to_string(), ".layers[1]");
    /// ```
    #[must_use]
    #[cold]
    #[inline(never)]
    pub fn at(mut self, key: KeyEntry) -> Self {
        self.inner.reversed_path.push(key);
        self
    }

    /// The error of a leaf function (`try_map`, `try_zip_mut`, ...),
    /// kept as [`ErrorKind::LeafFn`]: its message is shown after the path,
    /// and the function's own error is the [`source`](core::error::Error::source).
    ///
    /// ```
    /// use pytree_std::{Error, paths::KeyEntry};
    /// let e = Error::leaf_fn("not finite").at(KeyEntry::Field("w"));
    /// assert_eq!(e.to_string(), "at .w: the function failed: not finite");
    /// assert_eq!(std::error::Error::source(&e).unwrap().to_string(), "not finite");
    /// ```
    #[cold]
    pub fn leaf_fn(err: impl Into<Box<dyn core::error::Error + Send + Sync + 'static>>) -> Self {
        Error::new(ErrorKind::LeafFn(LeafFnError::new(err)))
    }

    /// Places this error under `path` (the error's own path comes after
    /// it): for errors found at a place known by its whole path, as
    /// [`at`](Error::at) is for one key at a time.
    ///
    /// ```
    /// use pytree_std::{Error, paths::KeyEntry};
    /// let (leaves, _) = pytree_std::flatten_with_path(vec![(1.0f32, 2.0f32)]);
    /// let (path, _) = &leaves[1];
    /// let e = Error::custom("not finite").at(KeyEntry::Field("x")).under(path);
    /// assert_eq!(e.to_string(), "at [0][1].x: not finite");
    /// ```
    #[must_use]
    #[cold]
    pub fn under(self, path: &KeyPath) -> Self {
        self.under_entries(path.entries())
    }

    /// [`under`](Error::under), for a path given as its entries.
    #[cold]
    pub(crate) fn under_entries(mut self, entries: &[KeyEntry]) -> Self {
        for entry in entries.iter().rev() {
            self = self.at(entry.clone());
        }
        self
    }

    /// Records which tree argument (0-based) the error is about.
    ///
    /// ```
    /// let e = pytree_std::Error::custom("x").in_tree(1);
    /// assert_eq!(e.tree_index(), Some(1));
    /// ```
    #[must_use]
    pub fn in_tree(self, index: usize) -> Self {
        self.with_tree(Some(index))
    }

    /// Sets or clears the tree index (multi-tree operations renumber the
    /// errors of the pairwise comparisons they run).
    pub(crate) fn with_tree(mut self, index: Option<usize>) -> Self {
        self.inner.tree_index = index;
        self
    }

    /// One error for a list of mismatches: the error itself when there is
    /// one, [`ErrorKind::Mismatches`] when there are several (and "the
    /// trees differ" for none: check for an empty list first where none
    /// means success).
    ///
    /// ```
    /// use pytree_std::{Error, ErrorKind};
    /// let one = Error::from_mismatches(vec![Error::custom("a")]);
    /// assert_eq!(one.to_string(), "at <root>: a");
    /// let two = Error::from_mismatches(vec![Error::custom("a"), Error::custom("b")]);
    /// assert!(matches!(two.kind(), ErrorKind::Mismatches(all) if all.len() == 2));
    /// ```
    #[cold]
    pub fn from_mismatches(mut all: Vec<Error>) -> Self {
        match all.len() {
            0 => Error::custom("the trees differ"),
            1 => all
                .pop()
                .unwrap_or_else(|| Error::custom("the trees differ")),
            _ => Error::new(ErrorKind::Mismatches(all)),
        }
    }

    /// What went wrong.
    ///
    /// ```
    /// use pytree_std::{Error, ErrorKind};
    /// let e = Error::new(ErrorKind::LengthMismatch { expected: 1, found: 2 });
    /// assert_eq!(e.kind(), &ErrorKind::LengthMismatch { expected: 1, found: 2 });
    /// ```
    pub fn kind(&self) -> &ErrorKind {
        &self.inner.kind
    }

    /// Where it went wrong, from the root.
    ///
    /// ```
    /// use pytree_std::{Error, paths::KeyEntry};
    /// let e = Error::custom("x").at(KeyEntry::Field("b"));
    /// assert_eq!(e.path().to_string(), ".b");
    /// ```
    pub fn path(&self) -> KeyPath {
        KeyPath::from_entries(self.inner.reversed_path.iter().rev().cloned().collect())
    }

    /// The tree argument the error is about, if the operation took several.
    ///
    /// ```
    /// assert_eq!(pytree_std::Error::custom("x").tree_index(), None);
    /// ```
    pub fn tree_index(&self) -> Option<usize> {
        self.inner.tree_index
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::TooFewLeaves { expected, found } => write!(
                f,
                "too few leaves for TreeDef: expected {expected}, got {found}"
            ),
            ErrorKind::TooManyLeaves { expected, found } => write!(
                f,
                "too many leaves for TreeDef: expected {expected}, got {found}"
            ),
            ErrorKind::NodeMismatch { expected, found } => {
                write!(f, "node mismatch: expected {expected}, found {found}")
            }
            ErrorKind::StaticMismatch { expected, found } => write!(
                f,
                "static data mismatch: expected {expected}, found {found}"
            ),
            ErrorKind::KeyMismatch { expected, found } => {
                let missing: Vec<&String> =
                    expected.iter().filter(|k| !found.contains(k)).collect();
                let extra: Vec<&String> = found.iter().filter(|k| !expected.contains(k)).collect();
                write!(
                    f,
                    "map key mismatch; expected key(s): [{}], got key(s): [{}]",
                    expected.join(", "),
                    found.join(", ")
                )?;
                if !missing.is_empty() {
                    write!(f, ", missing key(s): [{}]", join(&missing))?;
                }
                if !extra.is_empty() {
                    write!(f, ", extra key(s): [{}]", join(&extra))?;
                }
                Ok(())
            }
            ErrorKind::LengthMismatch { expected, found } => write!(
                f,
                "sequence length mismatch: expected {expected}, found {found}"
            ),
            ErrorKind::PathNotFound { existing, missing } => {
                write!(f, "no such key path: {existing} has no child {missing}")
            }
            ErrorKind::CombineConflict { holders, trees } => match holders.as_slice() {
                [] => write!(
                    f,
                    "none of the {trees} trees holds a leaf here; combine needs exactly one"
                ),
                [a, b] => write!(
                    f,
                    "trees {a} and {b} both hold a leaf here; combine needs exactly one"
                ),
                many => {
                    f.write_str("trees ")?;
                    for (i, t) in many.iter().enumerate() {
                        if i > 0 {
                            f.write_str(", ")?;
                        }
                        write!(f, "{t}")?;
                    }
                    f.write_str(" hold a leaf here; combine needs exactly one")
                }
            },
            ErrorKind::Mismatches(all) => {
                write!(f, "tree structures differ ({} mismatches found)", all.len())?;
                for e in all {
                    write!(f, "\n  {e}")?;
                }
                Ok(())
            }
            ErrorKind::SignatureMismatch { expected, found } => write!(
                f,
                "leaf signature mismatch: expected {expected}, found {found}"
            ),
            ErrorKind::LeafFn(err) => write!(f, "the function failed: {err}"),
            ErrorKind::NeedsTemplate(message) | ErrorKind::Custom(message) => f.write_str(message),
        }
    }
}

fn join(items: &[&String]) -> String {
    let mut out = String::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(item);
    }
    out
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A list of mismatches names its places line by line.
        if matches!(self.inner.kind, ErrorKind::Mismatches(_))
            && self.inner.reversed_path.is_empty()
            && self.inner.tree_index.is_none()
        {
            return fmt::Display::fmt(&self.inner.kind, f);
        }
        if let Some(i) = self.inner.tree_index {
            write!(f, "tree {i} ")?;
        }
        write!(f, "at {}: {}", self.path(), self.inner.kind)
    }
}

impl core::error::Error for Error {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match &self.inner.kind {
            ErrorKind::LeafFn(err) => Some(err.get()),
            _ => None,
        }
    }
}

/// What a leaf function's error may be: anything that converts into a boxed
/// error (an error type, a `String`, an `&str`).
pub trait IntoLeafFnError: Into<Box<dyn core::error::Error + Send + Sync + 'static>> {}
impl<E: Into<Box<dyn core::error::Error + Send + Sync + 'static>>> IntoLeafFnError for E {}

/// The error of a leaf function, as [`ErrorKind::LeafFn`] keeps it: shared
/// (so [`Error`] stays `Clone`), compared by identity or, failing that, by
/// message.
///
/// ```
/// let e = pytree_std::LeafFnError::new("bad value");
/// assert_eq!(e.to_string(), "bad value");
/// assert_eq!(e, pytree_std::LeafFnError::new("bad value"));
/// ```
#[derive(Clone)]
pub struct LeafFnError(Arc<dyn core::error::Error + Send + Sync + 'static>);

impl LeafFnError {
    /// Wraps a function's error (anything that converts into a boxed
    /// error: an error type, a `String`, an `&str`).
    ///
    /// ```
    /// let e = pytree_std::LeafFnError::new(String::from("nope"));
    /// assert_eq!(e.get().to_string(), "nope");
    /// ```
    pub fn new(err: impl Into<Box<dyn core::error::Error + Send + Sync + 'static>>) -> Self {
        LeafFnError(Arc::from(err.into()))
    }

    /// The function's error.
    ///
    /// ```
    /// use std::fmt;
    /// #[derive(Debug)]
    /// struct Nan;
    /// impl fmt::Display for Nan { fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str("NaN") } }
    /// impl std::error::Error for Nan {}
    /// let e = pytree_std::LeafFnError::new(Nan);
    /// assert!(e.get().downcast_ref::<Nan>().is_some());
    /// ```
    pub fn get(&self) -> &(dyn core::error::Error + Send + Sync + 'static) {
        &*self.0
    }
}

impl fmt::Debug for LeafFnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for LeafFnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl PartialEq for LeafFnError {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.to_string() == other.0.to_string()
    }
}

impl Eq for LeafFnError {}

/// The error for two leaves whose signatures differ, if both have one and
/// they differ (leaves that say nothing about themselves always match).
#[cold]
pub(crate) fn signature_mismatch_error(expected: &Signature, found: &Signature) -> Error {
    Error::new(ErrorKind::SignatureMismatch {
        expected: expected.clone(),
        found: found.clone(),
    })
}

/// `Some(error)` when both leaves describe themselves and differ.
#[inline]
pub(crate) fn signature_mismatch(
    expected: Option<&Signature>,
    found: Option<&Signature>,
) -> Option<Error> {
    match (expected, found) {
        (Some(e), Some(f)) if e != f => Some(signature_mismatch_error(e, f)),
        _ => None,
    }
}
