//! [`PathTracker`]: the key path (and kind) of the place a walk is at. The
//! path-aware visitors (`flatten_with_path`, `partition`, ...) own one and
//! forward `node`, `enter` and `exit` to it (`enter` and `exit` written by
//! [`follow_path!`], which at_path's matcher uses too).
//!
//! The kind of a place is the `#[pytree(kind = "...")]` of the innermost
//! tagged field on its path. The tracker learns it from the
//! `NodeRef::Struct { schema, .. }` a struct reports before its children:
//! one small frame per level remembers the struct whose fields are being
//! entered and the kind in force, so nothing is looked up twice and
//! nothing is allocated but the path's own entries.

use alloc::vec::Vec;

use crate::paths::key_path::{KeyPath, KeyRef};
use crate::treedef::node::NodeRef;
use crate::treedef::schema::Schema;

/// A visitor's `enter` and `exit`, which move the field `$place` (a
/// [`PathTracker`], or at_path's matcher) along the walk.
macro_rules! follow_path {
    ($place:ident) => {
        #[inline]
        fn enter(&mut self, key: $crate::paths::key_path::KeyRef<'_>) {
            self.$place.enter(key);
        }
        #[inline]
        fn exit(&mut self) {
            self.$place.exit();
        }
    };
}
pub(crate) use follow_path;

/// What one level of the walk remembers.
#[derive(Clone, Copy)]
struct Frame {
    /// The explicit kind in force here (`None`: the default).
    kind: Option<&'static str>,
    /// The struct or variant reported at this level, whose fields are
    /// entered next.
    schema: Option<&'static Schema>,
}

/// The current key path of a walk, with its kind.
pub(crate) struct PathTracker {
    path: KeyPath,
    frames: Vec<Frame>,
}

impl PathTracker {
    /// A tracker at the root.
    pub(crate) fn new() -> Self {
        PathTracker {
            path: KeyPath::root(),
            frames: alloc::vec![Frame {
                kind: None,
                schema: None,
            }],
        }
    }

    /// The path of the place the walk is at, with its kind.
    #[inline]
    pub(crate) fn path(&self) -> &KeyPath {
        &self.path
    }

    /// A node was reported at the current level.
    #[inline]
    pub(crate) fn node(&mut self, node: &NodeRef<'_>) {
        if let Some(top) = self.frames.last_mut() {
            top.schema = match *node {
                NodeRef::Struct { schema, .. } => Some(schema),
                _ => None,
            };
        }
    }

    /// The walk goes down to the child `key`.
    #[inline]
    pub(crate) fn enter(&mut self, key: KeyRef<'_>) {
        let top = self.frames.last().copied().unwrap_or(Frame {
            kind: None,
            schema: None,
        });
        let frame = match key {
            // A field's own tag wins over the one in force.
            KeyRef::Field(name) => Frame {
                kind: top
                    .schema
                    .and_then(|s| s.fields().iter().find(|f| !f.is_static && f.name == name))
                    .and_then(|f| f.kind)
                    .or(top.kind),
                schema: None,
            },
            // An enum's fields follow its variant entry: keep the schema.
            KeyRef::Variant(_) => top,
            KeyRef::Index(_) | KeyRef::Key(_) => Frame {
                kind: top.kind,
                schema: None,
            },
        };
        self.frames.push(frame);
        self.path.push(key.to_owned_entry());
        self.path.set_kind(frame.kind);
    }

    /// The walk comes back from the last child entered.
    #[inline]
    pub(crate) fn exit(&mut self) {
        self.path.pop();
        if self.frames.len() > 1 {
            self.frames.pop();
        }
        let kind = self.frames.last().and_then(|f| f.kind);
        self.path.set_kind(kind);
    }

    /// Runs `f` with the path of element `i` of a sequence of leaves at the
    /// current place (same kind, no frame needed).
    #[inline]
    pub(crate) fn with_index<R>(&mut self, i: usize, f: impl FnOnce(&KeyPath) -> R) -> R {
        self.path.push(crate::paths::key_path::KeyEntry::Index(i));
        let out = f(&self.path);
        self.path.pop();
        out
    }
}
