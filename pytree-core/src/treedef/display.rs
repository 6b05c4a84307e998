//! Printing a [`TreeDef`] like the value it describes, with `*` for leaves:
//! `Mlp { layers: [Linear { w: *, b: * }], activation: Relu }`.
//! Iterative (an explicit stack), so a 100 000-level TreeDef prints without
//! overflowing the call stack.
//!
//! Bounded: a run of more than [`MAX_RUN`] consecutive leaves in one
//! sequence or tuple prints its first [`SHOWN`] leaves and a count
//! (`[*, *, *, *, *, *, *, *, ... 99992 more leaves]`), and so does a run
//! of more than `MAX_RUN` data fields of one struct that are all leaves
//! (`S { f0: *, ..., f7: *, ... 92 more fields }`). So the text is
//! proportional to the records, not to the leaves they stand for (a
//! two-record TreeDef can stand for 10^18 leaves): each record prints at
//! most `SHOWN + 1` names (each at most `TreeDefLimits::max_name_len`
//! bytes in a document) plus what it holds (static values, map keys).
//! That is still up to kilobytes per 16-byte record (a struct's name and
//! its fields' names, printed at every node), so the text stops at half
//! the TreeDef's output budget (`TreeDefLimits::output_budget`; a `String`
//! that grows by doubling then holds at most the budget) with a note that
//! says so: a document cannot make printing it take more memory or time
//! than any other reader.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt::{self, Write as _};

use super::{Decoder, Item, Record, TreeDef, TreeDefLimits};
use crate::static_data::StaticValue;
use crate::treedef::schema::{FieldStyle, Schema};

/// Runs of leaves up to this long print in full.
pub(crate) const MAX_RUN: usize = 64;
/// How many leaves of a longer run print before the count.
const SHOWN: usize = 8;

/// An open container whose children are being printed.
enum Frame<'d> {
    List {
        left: usize,
        printed: bool,
        close: &'static str,
    },
    Map {
        keys: Option<&'d StaticValue>,
        next: usize,
        len: usize,
    },
    Struct {
        schema: &'static Schema,
        next_field: usize,
        statics: &'d [StaticValue],
        next_static: usize,
    },
}

impl fmt::Display for TreeDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.nodes().is_empty() {
            return f.write_str("<empty>");
        }
        let budget = TreeDefLimits::current().output_budget(self);
        let mut w = Bounded {
            f,
            left: budget / 2,
            cut: false,
        };
        let mut decoder = Decoder::new(self);
        let mut stack: Vec<Frame<'_>> = Vec::new();
        loop {
            // Print the subtree that starts here (opening it if it has children).
            match decoder.next_item() {
                None => w.write_str("?")?,
                Some(Item::Leaf) => w.write_str("*")?,
                Some(Item::Node(node, statics)) => open(&mut w, node, statics, &mut stack)?,
            }
            // Move to the next child to print, closing finished containers.
            loop {
                if w.cut {
                    return write!(
                        w.f,
                        " ... (the text of this TreeDef stops at half its output budget of {budget} bytes)"
                    );
                }
                let Some(top) = stack.last_mut() else {
                    return Ok(());
                };
                if next_child(&mut w, top, &mut decoder)? {
                    break;
                }
                stack.pop();
            }
        }
    }
}

/// Map key `.1` of keys `.0`, printed as the map prints it.
struct KeyItem<'k>(&'k StaticValue, usize);

impl fmt::Display for KeyItem<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt_item(self.1, f)
    }
}

/// The formatter, taking at most `left` more bytes: what would pass it is
/// cut (at a character boundary) and `cut` set.
struct Bounded<'f, 'a> {
    f: &'f mut fmt::Formatter<'a>,
    left: usize,
    cut: bool,
}

impl fmt::Write for Bounded<'_, '_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.cut {
            return Ok(());
        }
        if s.len() <= self.left {
            self.left -= s.len();
            return self.f.write_str(s);
        }
        let mut end = self.left;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        self.left = 0;
        self.cut = true;
        self.f.write_str(&s[..end])
    }
}

impl fmt::Debug for TreeDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TreeDef({self})")
    }
}

fn open<'d>(
    f: &mut Bounded<'_, '_>,
    node: Record,
    statics: &'d [StaticValue],
    stack: &mut Vec<Frame<'d>>,
) -> fmt::Result {
    let list = |left, close| Frame::List {
        left,
        printed: false,
        close,
    };
    match node {
        Record::Struct(schema) => {
            write!(f, "{}", schema.display_name())?;
            match schema.style() {
                FieldStyle::Unit => return Ok(()),
                FieldStyle::Named if schema.fields().is_empty() => return f.write_str(" {}"),
                FieldStyle::Named => f.write_str(" { ")?,
                FieldStyle::Tuple => f.write_str("(")?,
            }
            stack.push(Frame::Struct {
                schema,
                next_field: 0,
                statics,
                next_static: 0,
            });
        }
        Record::Seq(n) => {
            f.write_str("[")?;
            stack.push(list(n, "]"));
        }
        Record::Tuple(n) => {
            f.write_str("(")?;
            stack.push(list(n, if n == 1 { ",)" } else { ")" }));
        }
        Record::Map(n) => {
            f.write_str("{")?;
            stack.push(Frame::Map {
                keys: statics.first(),
                next: 0,
                len: n,
            });
        }
        Record::Some => {
            f.write_str("Some(")?;
            stack.push(list(1, ")"));
        }
        Record::None => f.write_str("None")?,
        Record::Leaves(_) => f.write_str("*")?,
    }
    Ok(())
}

/// Writes what precedes the frame's next data child and returns true, or
/// closes the frame and returns false. Long runs of leaves are printed
/// here, shortened (see the module docs), and consumed from `decoder`.
fn next_child(
    f: &mut Bounded<'_, '_>,
    frame: &mut Frame<'_>,
    decoder: &mut Decoder<'_>,
) -> Result<bool, fmt::Error> {
    match frame {
        Frame::List {
            left,
            printed,
            close,
        } => loop {
            if *left == 0 {
                f.write_str(close)?;
                return Ok(false);
            }
            if *printed {
                f.write_str(", ")?;
            }
            *printed = true;
            let run = decoder.leaves_ahead().min(*left);
            if run > MAX_RUN {
                f.write_str("*")?;
                for _ in 1..SHOWN {
                    f.write_str(", *")?;
                }
                write!(f, ", ... {} more leaves", run - SHOWN)?;
                decoder.skip_leaves(run);
                *left -= run;
                continue;
            }
            *left -= 1;
            return Ok(true);
        },
        Frame::Map { keys, next, len } => {
            if *next == *len {
                f.write_str("}")?;
                return Ok(false);
            }
            if *next > 0 {
                f.write_str(", ")?;
            }
            match keys {
                Some(k) => write!(f, "{}", KeyItem(k, *next))?,
                None => f.write_str("?")?,
            }
            f.write_str(": ")?;
            *next += 1;
            Ok(true)
        }
        Frame::Struct {
            schema,
            next_field,
            statics,
            next_static,
        } => {
            let named = schema.style() == FieldStyle::Named;
            while let Some(field) = schema.fields().get(*next_field) {
                if *next_field > 0 {
                    f.write_str(", ")?;
                }
                // Data fields from here on that are all leaves, counted
                // only where they may be more than `MAX_RUN` (and then
                // passed at once): each field is counted a bounded number
                // of times, not once per field before it.
                let ahead = decoder.leaves_ahead();
                if !field.is_static && ahead > MAX_RUN {
                    let data = schema.fields()[*next_field..]
                        .iter()
                        .take(ahead)
                        .take_while(|f| !f.is_static)
                        .count();
                    let run = ahead.min(data);
                    if run > MAX_RUN {
                        for (k, field) in schema.fields()[*next_field..][..SHOWN].iter().enumerate()
                        {
                            if k > 0 {
                                f.write_str(", ")?;
                            }
                            if named {
                                write!(f, "{}: ", field.name)?;
                            }
                            f.write_str("*")?;
                        }
                        write!(f, ", ... {} more fields", run - SHOWN)?;
                        decoder.skip_leaves(run);
                        *next_field += run;
                        continue;
                    }
                }
                *next_field += 1;
                if named {
                    write!(f, "{}: ", field.name)?;
                }
                if !field.is_static {
                    return Ok(true);
                }
                match statics.get(*next_static) {
                    Some(value) => write!(f, "{value:?}")?,
                    None => f.write_str("?")?,
                }
                *next_static += 1;
            }
            f.write_str(if named { " }" } else { ")" })?;
            Ok(false)
        }
    }
}

/// How messages name two nodes that do not line up: as
/// [`describe_node`], with module paths when both are structs that would
/// otherwise read alike.
pub(crate) fn describe_node_pair(expected: Record, found: Record) -> (String, String) {
    match (expected, found) {
        (Record::Struct(a), Record::Struct(b)) if a.reads_like(b) => (
            format!("{}", a.qualified_name()),
            format!("{}", b.qualified_name()),
        ),
        _ => (describe_node(expected), describe_node(found)),
    }
}

/// How messages name what the TreeDef holds at a place.
pub(crate) fn describe(item: Option<Item<'_>>) -> String {
    match item {
        None => "the end of the TreeDef".to_string(),
        Some(Item::Leaf) => "a leaf".to_string(),
        Some(Item::Node(node, _)) => describe_node(node),
    }
}

/// How messages name a node that a reader owns (`Source::any_node`'s), as
/// [`describe_node`] does.
pub(crate) fn describe_view(view: &crate::treedef::node::NodeView) -> String {
    use crate::treedef::node::NodeView;
    describe_node(match view {
        NodeView::Leaf => Record::Leaves(1),
        NodeView::Struct { schema, .. } => Record::Struct(schema),
        NodeView::Seq(n) => Record::Seq(*n),
        NodeView::Tuple(n) => Record::Tuple(*n),
        NodeView::Map { len, .. } => Record::Map(*len),
        NodeView::Some => Record::Some,
        NodeView::None => Record::None,
    })
}

/// How messages name a node.
pub(crate) fn describe_node(node: Record) -> String {
    match node {
        Record::Leaves(_) => "a leaf".to_string(),
        Record::Struct(schema) => format!("{}", schema.display_name()),
        Record::Seq(n) => format!("a sequence of length {n}"),
        Record::Tuple(n) => format!("a tuple of arity {n}"),
        Record::Map(n) => format!("a map of {n} entries"),
        Record::Some => "Some(_)".to_string(),
        Record::None => "None".to_string(),
    }
}
