//! Printing a [`Tree`]: `Display` as an ascii tree in treevalue's style,
//! `Debug` as a compact Python-like literal. Both are iterative; `Display`
//! stops below a depth (its output grows with depth × lines), `Debug` does
//! not (its output is linear in the tree).
//!
//! ```text
//! ├── a --> 2
//! ├── b --> 6
//! └── x
//!     ├── c --> 2
//!     └── d --> 9
//! ```

use std::fmt::{self, Write};

use super::{Map, Node, Tree};

/// Levels `Display` prints before it writes `…` for deeper subtrees.
pub(crate) const DEFAULT_DEPTH: usize = 64;

/// The children of a container still to print, with their labels.
enum Kids<'a, L> {
    Seq(std::iter::Enumerate<std::slice::Iter<'a, Tree<L>>>),
    Map(indexmap::map::Iter<'a, String, Tree<L>>),
}

impl<'a, L> Kids<'a, L> {
    fn of(t: &'a Tree<L>) -> Option<Self> {
        match t.node() {
            Node::Seq(items) => Some(Kids::Seq(items.iter().enumerate())),
            Node::Map(map) => Some(Kids::Map(map.iter())),
            Node::Leaf(_) | Node::None => None,
        }
    }

    /// The next child, its label, and whether it is the last one.
    fn next(&mut self) -> Option<(Label<'a>, &'a Tree<L>, bool)> {
        match self {
            Kids::Seq(it) => it.next().map(|(i, c)| (Label::Index(i), c, it.len() == 0)),
            Kids::Map(it) => it.next().map(|(k, c)| (Label::Key(k), c, it.len() == 0)),
        }
    }
}

enum Label<'a> {
    Index(usize),
    Key(&'a str),
}

impl fmt::Display for Label<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Label::Index(i) => write!(f, "{i}"),
            Label::Key(k) => f.write_str(k),
        }
    }
}

/// What a leafless node prints as, or `None` for a non-empty container.
fn short_form<L>(t: &Tree<L>) -> Option<&'static str> {
    match t.node() {
        Node::None => Some("None"),
        Node::Seq(items) if items.is_empty() => Some("[]"),
        Node::Map(map) if map.is_empty() => Some("{}"),
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
    if let Node::Leaf(x) = root.node() {
        return write_leaf(x, "", f);
    }
    if let Some(s) = short_form(root) {
        return f.write_str(s);
    }
    let Some(kids) = Kids::of(root) else {
        return Ok(());
    };
    let mut stack: Vec<(Kids<'_, L>, String)> = vec![(kids, String::new())];
    let mut first_line = true;
    while let Some((kids, prefix)) = stack.last_mut() {
        let Some((label, child, last)) = kids.next() else {
            stack.pop();
            continue;
        };
        if !first_line {
            f.write_char('\n')?;
        }
        first_line = false;
        let branch = if last { "└── " } else { "├── " };
        write!(f, "{prefix}{branch}{label}")?;
        let child_prefix = format!("{prefix}{}", if last { "    " } else { "│   " });
        if let Node::Leaf(x) = child.node() {
            f.write_str(" --> ")?;
            write_leaf(x, &child_prefix, f)?;
        } else if let Some(s) = short_form(child) {
            write!(f, " --> {s}")?;
        } else if stack.len() >= max_depth {
            f.write_str(" --> …")?;
        } else if let Some(kids) = Kids::of(child) {
            stack.push((kids, child_prefix));
        }
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

/// A container whose entries `Debug` is printing.
enum Open<'a, L> {
    Seq(std::slice::Iter<'a, Tree<L>>, bool),
    Map(indexmap::map::Iter<'a, String, Tree<L>>, bool),
}

/// Writes the opening of a node (all of it for a leaf or `None`) and
/// returns the container to continue with.
fn open<'a, L: fmt::Debug>(
    t: &'a Tree<L>,
    f: &mut fmt::Formatter<'_>,
) -> Result<Option<Open<'a, L>>, fmt::Error> {
    Ok(match t.node() {
        Node::Leaf(x) => {
            fmt::Debug::fmt(x, f)?;
            None
        }
        Node::None => {
            f.write_str("None")?;
            None
        }
        Node::Seq(items) => {
            f.write_char('[')?;
            Some(Open::Seq(items.iter(), false))
        }
        Node::Map(map) => {
            f.write_char('{')?;
            Some(Open::Map(map_iter(map), false))
        }
    })
}

fn map_iter<L>(map: &Map<L>) -> indexmap::map::Iter<'_, String, Tree<L>> {
    map.iter()
}

/// The compact literal.
pub(crate) fn debug<L: fmt::Debug>(root: &Tree<L>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let mut stack: Vec<Open<'_, L>> = Vec::new();
    if let Some(o) = open(root, f)? {
        stack.push(o);
    }
    while let Some(top) = stack.last_mut() {
        let child = match top {
            Open::Seq(it, started) => match it.next() {
                Some(c) => {
                    if std::mem::replace(started, true) {
                        f.write_str(", ")?;
                    }
                    Some(c)
                }
                None => {
                    f.write_char(']')?;
                    None
                }
            },
            Open::Map(it, started) => match it.next() {
                Some((k, c)) => {
                    if std::mem::replace(started, true) {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k:?}: ")?;
                    Some(c)
                }
                None => {
                    f.write_char('}')?;
                    None
                }
            },
        };
        match child {
            Some(c) => {
                if let Some(o) = open(c, f)? {
                    stack.push(o);
                }
            }
            None => {
                stack.pop();
            }
        }
    }
    Ok(())
}
