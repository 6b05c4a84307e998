//! Printing a [`Tree`]: `Display` as an ascii tree in treevalue's style,
//! `Debug` as a compact Python-like literal. Both write out the events of
//! the tree's cursor (so they are iterative); `Display` stops below a depth
//! (its output grows with depth × lines), `Debug` does not (its output is
//! linear in the tree).
//!
//! ```text
//! ├── a --> 2
//! ├── b --> 6
//! └── x
//!     ├── c --> 2
//!     └── d --> 9
//! ```

use std::fmt::{self, Write};

use super::cursor::{Cursor, Event, Ref, Shape};
use super::node::Tree;

/// Levels `Display` prints before it writes `…` for deeper subtrees.
pub(crate) const DEFAULT_DEPTH: usize = 64;

/// What a leafless node prints as: `None`, or an empty container.
fn short_form<M>(event: &Event<Ref<'_, M>>) -> Option<&'static str> {
    match event {
        Event::None(_) => Some("None"),
        Event::Enter(_, Shape::Seq(0)) => Some("[]"),
        Event::Enter(_, Shape::Map(0, _)) => Some("{}"),
        _ => None,
    }
}

/// Writes a leaf with the formatter's precision; lines after the first
/// start with `indent`.
fn write_leaf<L: fmt::Display>(x: &L, indent: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let text = match f.precision() {
        Some(p) => format!("{x:.p$}"),
        None => x.to_string(),
    };
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            f.write_char('\n')?;
            f.write_str(indent)?;
        }
        f.write_str(line)?;
    }
    Ok(())
}

/// The ascii tree, `max_depth` levels deep.
pub(crate) fn ascii<L: fmt::Display>(
    root: &Tree<L>,
    max_depth: usize,
    f: &mut fmt::Formatter<'_>,
) -> fmt::Result {
    let mut cursor = Cursor::<Ref<'_, L>>::new(root);
    // The start of the lines below the open containers, and where each
    // open container's part of it begins.
    let mut prefix = String::new();
    let mut starts: Vec<usize> = Vec::new();
    let mut first_line = true;
    while let Some(event) = cursor.next() {
        let place = match &event {
            Event::Exit(_) => {
                if let Some(start) = starts.pop() {
                    prefix.truncate(start);
                }
                continue;
            }
            Event::Enter(place, _) | Event::Leaf(place, _) | Event::None(place) => place,
        };
        let Some(place) = place else {
            // The root: a leaf or a leafless node prints alone, a
            // container's children print on lines of their own.
            if let Event::Leaf(_, x) = event {
                return write_leaf(x, "", f);
            }
            if let Some(s) = short_form(&event) {
                return f.write_str(s);
            }
            continue;
        };
        if !first_line {
            f.write_char('\n')?;
        }
        first_line = false;
        let (branch, indent) = if place.last {
            ("└── ", "    ")
        } else {
            ("├── ", "│   ")
        };
        f.write_str(&prefix)?;
        f.write_str(branch)?;
        match place.key {
            Some(k) => f.write_str(k)?,
            None => write!(f, "{}", place.index)?,
        }
        let start = prefix.len();
        prefix.push_str(indent);
        if let Event::Leaf(_, x) = event {
            f.write_str(" --> ")?;
            write_leaf(x, &prefix, f)?;
        } else if let Some(s) = short_form(&event) {
            write!(f, " --> {s}")?;
            if let Event::Enter(..) = event {
                cursor.skip_children();
            }
        } else if cursor.depth() > max_depth {
            f.write_str(" --> …")?;
            cursor.skip_children();
        } else {
            // An entered container: its children print below, with the
            // longer prefix, until its `Exit`.
            starts.push(start);
            continue;
        }
        prefix.truncate(start);
    }
    Ok(())
}

/// A [`Tree`] printed as an ascii tree down to a chosen depth; made by
/// [`Tree::display_depth`].
///
/// ```
/// let t = pytree_std::tree! { "x" => { "c" => 4 } };
/// assert_eq!(format!("{}", t.display_depth(1)), "└── x --> …");
/// ```
pub struct DisplayDepth<'a, L> {
    tree: &'a Tree<L>,
    max_depth: usize,
}

impl<L: fmt::Display> fmt::Display for DisplayDepth<'_, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        ascii(self.tree, self.max_depth, f)
    }
}

impl<L> Tree<L> {
    /// The ascii tree of `Display`, printing `max_depth` levels; a deeper
    /// non-empty subtree prints as `--> …`. (`Display` itself prints 64.)
    ///
    /// ```
    /// let t = pytree_std::tree! { "a" => 1, "x" => { "c" => { "d" => 4 } } };
    /// assert_eq!(t.display_depth(2).to_string(), "\
    /// ├── a --> 1
    /// └── x
    ///     └── c --> …");
    /// ```
    pub fn display_depth(&self, max_depth: usize) -> DisplayDepth<'_, L> {
        DisplayDepth {
            tree: self,
            max_depth,
        }
    }
}

/// The compact literal.
pub(crate) fn debug<L: fmt::Debug>(root: &Tree<L>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    for event in Cursor::<Ref<'_, L>>::new(root) {
        if let Event::Enter(Some(place), _)
        | Event::Leaf(Some(place), _)
        | Event::None(Some(place)) = &event
        {
            if place.index > 0 {
                f.write_str(", ")?;
            }
            if let Some(k) = place.key {
                write!(f, "{k:?}: ")?;
            }
        }
        match event {
            Event::Leaf(_, x) => fmt::Debug::fmt(x, f)?,
            Event::None(_) => f.write_str("None")?,
            Event::Enter(_, Shape::Seq(_)) => f.write_char('[')?,
            Event::Enter(_, Shape::Map(..)) => f.write_char('{')?,
            Event::Exit(Shape::Seq(_)) => f.write_char(']')?,
            Event::Exit(Shape::Map(..)) => f.write_char('}')?,
        }
    }
    Ok(())
}

impl<L: fmt::Debug> fmt::Debug for Tree<L> {
    /// A compact literal: `{"a": 1, "b": [2, None]}` (Python's, with the
    /// leaves' `Debug`). Iterative.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug(self, f)
    }
}

impl<L: fmt::Display> fmt::Display for Tree<L> {
    /// An ascii tree in treevalue's style, children indented under their
    /// key; leaves print with their `Display` (a precision such as `{:.2}`
    /// is passed on to them). Stops below 64 levels (see
    /// [`Tree::display_depth`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        ascii(self, DEFAULT_DEPTH, f)
    }
}
