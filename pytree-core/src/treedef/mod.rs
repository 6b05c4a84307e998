//! [`TreeDef`]: the structure of a pytree without its leaves, as a flat
//! pre-order list of node records plus a side table of static data.
//!
//! Encoding: each internal node is one 16-byte record; consecutive leaves
//! (in pre-order) share one `Leaves(n)` record, so a `Vec` of 100 000 leaves
//! costs two records, not 100 001. Decoding is unique because every internal
//! record knows its arity. Static data (struct meta fields, map keys) lives
//! in `statics`, in the pre-order of the nodes that own it. Records are
//! stored as [`RecordWords`] (every byte initialized), so that two encodings
//! are compared as plain words, one `memcmp`.

mod align;
mod budget;
mod builder;
mod checked;
mod compose;
mod decode;
mod diff;
mod display;
mod limits;
pub(crate) mod node;
mod nodes;
mod parse_path;
mod paths;
mod relations;
pub(crate) mod schema;
mod validate;

use alloc::vec::Vec;
use core::hash::{Hash, Hasher};
use core::mem::MaybeUninit;

pub use align::Mode;
pub(crate) use align::{align, Alignment, Arg, Inherit, Policy, Span};
pub use builder::TreeDefBuilder;
pub(crate) use checked::type_key;
use checked::CheckedFor;
pub(crate) use compose::{pair_of_leaves, seq_of_leaves};
pub(crate) use decode::{Decoder, Item, StaticsRange};
pub(crate) use display::{describe, describe_node, describe_view};
pub use limits::TreeDefLimits;
pub(crate) use nodes::view_of;
pub(crate) use relations::common_suffix_plan;
#[cfg(feature = "serde")]
pub(crate) use validate::{check_schema_parts, Checker};

use crate::static_data::StaticValue;
use crate::treedef::schema::Schema;

/// One record of the flat encoding. `repr(u64)`: a `u64` tag, then the
/// variant's one word (if any) at offset 8, which `payload` relies on.
#[derive(Clone, Copy, Debug, Eq)]
#[repr(u64)]
pub(crate) enum Record {
    /// `n >= 1` consecutive leaves.
    Leaves(usize),
    /// A derived struct or enum variant; owns `schema.num_static()` statics.
    Struct(&'static Schema),
    /// A sequence of this length.
    Seq(usize),
    /// A tuple of this arity.
    Tuple(usize),
    /// A map of this many entries; owns one static (its keys).
    Map(usize),
    /// `Some`: one child.
    Some,
    /// `None`: no children.
    None,
}

impl PartialEq for Record {
    /// Same kind and same payload word (a count, or a schema's address) is
    /// the common case and is checked without a branch per kind; schemas at
    /// different addresses are then compared by value, out of line.
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        core::mem::discriminant(self) == core::mem::discriminant(other)
            && (self.payload() == other.payload() || self.eq_by_value(other))
    }
}

impl Record {
    /// The record's second word: a count, a schema's address, or 0. Read
    /// as a word rather than matched per kind, so that comparing records
    /// needs no jump table.
    #[inline(always)]
    fn payload(&self) -> usize {
        match *self {
            Record::Some | Record::None => 0,
            // SAFETY: with `repr(u64)` every variant is laid out as a `u64`
            // tag followed by its fields; the other variants each have one
            // initialized word-sized field (a `usize` or a reference) at
            // offset 8, which is in bounds of the 16-byte record and
            // aligned. Reading a reference's bytes as an integer is allowed
            // (the value read has no provenance; it is only compared).
            _ => unsafe {
                (self as *const Record)
                    .cast::<u8>()
                    .add(8)
                    .cast::<usize>()
                    .read()
            },
        }
    }

    /// Equality for records whose payload words differ: only two schemas
    /// at different addresses can still be equal.
    #[cold]
    #[inline(never)]
    fn eq_by_value(&self, other: &Self) -> bool {
        match (*self, *other) {
            (Record::Struct(a), Record::Struct(b)) => a == b,
            _ => false,
        }
    }
}

/// A [`Record`] as a `TreeDef` stores it: the same 16 bytes with every byte
/// initialized (the payload word of `Some` and `None` is 0), so that a slice
/// of records can be compared as plain words. Only made from a `Record`, so
/// its bytes are always a valid `Record` and a slice of them reads as
/// `&[Record]`.
///
/// The words are `MaybeUninit<u64>`, not `u64`: a `Struct` record's payload
/// is a `&'static Schema`, and a copy at an integer type would drop the
/// pointer's provenance (a reference read back from such bytes could not be
/// dereferenced under Rust's provenance rules). A copy of a `MaybeUninit`
/// is an untyped copy of its bytes, provenance included, so `Clone`/`Copy`
/// of a record, of a `Vec` of records, and `as_records` keep the schema
/// reference intact. Equality still compares the words as integers (a
/// pointer-to-integer read is allowed and only strips the provenance of the
/// value read, not of the memory).
#[derive(Clone, Copy)]
#[repr(transparent)]
pub(crate) struct RecordWords([MaybeUninit<u64>; 2]);

// `RecordWords` and `Record` must have the same layout for `as_records`.
const _: () = assert!(core::mem::size_of::<RecordWords>() == core::mem::size_of::<Record>());
const _: () = assert!(core::mem::align_of::<RecordWords>() == core::mem::align_of::<Record>());

impl From<Record> for RecordWords {
    #[inline(always)]
    fn from(node: Record) -> Self {
        let mut words = RecordWords([MaybeUninit::new(0); 2]);
        let to = (&mut words as *mut RecordWords).cast::<u8>();
        let from = (&node as *const Record).cast::<u8>();
        // SAFETY: `Record` is `repr(u64)`: an initialized `u64` tag at offset
        // 0, then the variant's one field (a `usize` or a reference) at
        // offset 8, except for `Some` and `None`, which have none. Both
        // pointers are to live, aligned 16-byte values, so the reads and
        // writes at offsets 0 and 8 are in bounds and aligned. The tag and
        // that field are copied to the same offsets of 16 zeroed bytes, as
        // `MaybeUninit` (an untyped copy that keeps a reference's
        // provenance), so the result has `node`'s bytes, padding zeroed.
        unsafe {
            to.cast::<u64>().write(from.cast::<u64>().read());
            if !matches!(node, Record::Some | Record::None) {
                let field = from.add(8).cast::<MaybeUninit<usize>>().read();
                to.add(8).cast::<MaybeUninit<usize>>().write(field);
            }
        }
        words
    }
}

impl RecordWords {
    /// The records as nodes.
    #[inline(always)]
    fn as_records(records: &[RecordWords]) -> &[Record] {
        // SAFETY: same size and alignment (checked above); every
        // `RecordWords` is made from a `Record` by `from` and then only copied
        // as `MaybeUninit` bytes, so its bytes are a valid `Record`, a
        // schema reference with its provenance (initialized padding is
        // allowed). The slice borrows `records`, so it lives no longer.
        unsafe { core::slice::from_raw_parts(records.as_ptr().cast::<Record>(), records.len()) }
    }

    /// The records as plain words, two per record, for comparing.
    #[inline(always)]
    fn as_words(records: &[RecordWords]) -> &[u64] {
        // SAFETY: `RecordWords` is `repr(transparent)` over two
        // `MaybeUninit<u64>`, which have the layout of `u64`, so the records
        // are `2 * len` aligned words, borrowed for as long as `records`.
        // Every byte is initialized (`from` zeroes the padding and the
        // payload of `Some`/`None`), so reading them as integers is
        // defined; a schema address read this way is only compared, never
        // turned back into a pointer.
        unsafe { core::slice::from_raw_parts(records.as_ptr().cast::<u64>(), records.len() * 2) }
    }

    /// Equality of two encodings: one word comparison (a `memcmp`) in the
    /// common case, where equal schemas sit at the same address; otherwise
    /// record by record, schemas by value.
    #[inline]
    fn slices_eq(a: &[RecordWords], b: &[RecordWords]) -> bool {
        a.len() == b.len()
            && (Self::as_words(a) == Self::as_words(b) || Self::slices_eq_by_value(a, b))
    }

    /// Equality record by record, for encodings whose words differ (it may
    /// still hold when a schema appears at two addresses).
    #[cold]
    #[inline(never)]
    fn slices_eq_by_value(a: &[RecordWords], b: &[RecordWords]) -> bool {
        Self::as_records(a) == Self::as_records(b)
    }
}

impl Hash for Record {
    /// Consistent with `eq`: a schema hashes by value.
    fn hash<H: Hasher>(&self, state: &mut H) {
        core::mem::discriminant(self).hash(state);
        match *self {
            Record::Struct(schema) => schema.hash(state),
            Record::Leaves(n) | Record::Seq(n) | Record::Tuple(n) | Record::Map(n) => n.hash(state),
            Record::Some | Record::None => {}
        }
    }
}

impl Record {
    /// Children of an internal node (not meaningful for `Leaves`).
    pub(crate) fn arity(&self) -> usize {
        match *self {
            Record::Struct(schema) => schema.num_data(),
            Record::Seq(n) | Record::Tuple(n) | Record::Map(n) => n,
            Record::Some => 1,
            Record::None | Record::Leaves(_) => 0,
        }
    }

    /// Entries of the statics table this node owns.
    pub(crate) fn num_statics(&self) -> usize {
        match *self {
            Record::Struct(schema) => schema.num_static(),
            Record::Map(_) => 1,
            _ => 0,
        }
    }
}

/// The structure of a pytree: everything but its leaves.
///
/// Built by [`flatten`](crate::ops::flatten) or
/// [`structure`](crate::ops::structure); consumed by
/// [`unflatten`](crate::ops::unflatten). Cheap to compare and hash, printable
/// (`Display` reads like the value with `*` for leaves), `Send + Sync`.
///
/// ```
/// use pytree_std::{PyTree, TreeDef};
/// #[derive(PyTree)]
/// struct Linear { w: f32, b: f32 }
/// let def: TreeDef = pytree_std::structure(&vec![Linear { w: 1.0, b: 2.0 }]);
/// assert_eq!(def.to_string(), "[Linear { w: *, b: * }]");
/// assert_eq!(def.num_leaves(), 2);
/// assert_eq!(def.num_nodes(), 4);
/// assert_eq!(def.children()?[0].to_string(), "Linear { w: *, b: * }");
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(Clone)]
pub struct TreeDef {
    nodes: Vec<RecordWords>,
    statics: Vec<StaticValue>,
    num_leaves: usize,
    /// The type this TreeDef was last read as, all records checked (not
    /// part of its value: equality, hash and serde ignore it).
    checked_for: CheckedFor,
}

impl TreeDef {
    pub(crate) fn from_parts(
        nodes: Vec<RecordWords>,
        statics: Vec<StaticValue>,
        num_leaves: usize,
    ) -> Self {
        TreeDef {
            nodes,
            statics,
            num_leaves,
            checked_for: CheckedFor::default(),
        }
    }

    /// A TreeDef from its records as nodes.
    #[cfg(feature = "serde")]
    pub(crate) fn from_nodes(
        nodes: Vec<Record>,
        statics: Vec<StaticValue>,
        num_leaves: usize,
    ) -> Self {
        let nodes = nodes.into_iter().map(RecordWords::from).collect();
        let def = Self::from_parts(nodes, statics, num_leaves);
        debug_assert!(validate::check(&def, TreeDefLimits::UNLIMITED).is_ok());
        def
    }

    /// The TreeDef of a single leaf (JAX's `*`).
    ///
    /// ```
    /// let def = pytree_std::TreeDef::leaf();
    /// assert!(def.is_leaf());
    /// assert_eq!(def.to_string(), "*");
    /// ```
    pub fn leaf() -> Self {
        let mut b = TreeDefBuilder::new();
        b.leaf();
        b.build()
    }

    /// Number of leaves.
    ///
    /// ```
    /// assert_eq!(pytree_std::structure(&(1u8, [2u8, 3])).num_leaves(), 3);
    /// ```
    pub fn num_leaves(&self) -> usize {
        self.num_leaves
    }

    /// Number of nodes, leaves included (JAX's `num_nodes`).
    ///
    /// ```
    /// assert_eq!(pytree_std::structure(&(1u8, [2u8, 3])).num_nodes(), 5);
    /// ```
    pub fn num_nodes(&self) -> usize {
        // Saturating: a TreeDef that is checked (deserialized, or finished
        // by a builder) has at most `usize::MAX` nodes; one flattened from
        // zero-sized leaves might not.
        self.nodes().iter().fold(0usize, |sum, n| {
            sum.saturating_add(match *n {
                Record::Leaves(k) => k,
                _ => 1,
            })
        })
    }

    /// True when the whole tree is one leaf.
    ///
    /// ```
    /// assert!(!pytree_std::structure(&vec![1u8]).is_leaf());
    /// ```
    pub fn is_leaf(&self) -> bool {
        self.nodes().len() == 1 && self.nodes()[0] == Record::Leaves(1)
    }

    /// The TreeDefs of the root's children, in order (empty for a leaf).
    /// A node may claim billions of children in one record; when their
    /// copies would need more memory than the
    /// [output budget](TreeDefLimits::output_budget), the result is an
    /// error, returned before anything is copied. [`child`](Self::child)
    /// copies one.
    ///
    /// ```
    /// let def = pytree_std::structure(&(1u8, vec![2u8, 3]));
    /// let kids: Vec<String> = def.children()?.iter().map(|d| d.to_string()).collect();
    /// assert_eq!(kids, ["*", "[*, *]"]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn children(&self) -> Result<Vec<TreeDef>, crate::error::Error> {
        let mut decoder = Decoder::new(self);
        let arity = match decoder.next_item() {
            Some(Item::Node(node, _)) => node.arity(),
            _ => return Ok(Vec::new()),
        };
        // Each child is a TreeDef holding its own records: together at
        // most the records and statics of `self`, plus one record for each
        // leaf split off a run.
        let bytes = budget::mul_add(
            arity,
            core::mem::size_of::<TreeDef>() + core::mem::size_of::<Record>(),
            self.encoded_bytes(),
        );
        budget::check_output(self, "the children of this TreeDef", bytes)?;
        let mut children = Vec::with_capacity(arity);
        for _ in 0..arity {
            children.push(decoder.copy_subtree());
        }
        Ok(children)
    }

    /// Bytes of memory held by the encoding (records and the statics table,
    /// not the static values themselves).
    ///
    /// ```
    /// let def = pytree_std::structure(&vec![0.0f64; 100_000]);
    /// assert!(def.heap_bytes() <= 64);
    /// ```
    pub fn heap_bytes(&self) -> usize {
        self.nodes.capacity() * core::mem::size_of::<RecordWords>()
            + self.statics.capacity() * core::mem::size_of::<StaticValue>()
    }

    /// The number of records in the encoding (internal nodes plus runs of
    /// leaves). Benchmarks report it; equality costs one comparison each.
    ///
    /// ```
    /// assert_eq!(pytree_std::structure(&vec![0.0f64; 1000]).num_records(), 2);
    /// ```
    pub fn num_records(&self) -> usize {
        self.nodes.len()
    }

    pub(crate) fn nodes(&self) -> &[Record] {
        RecordWords::as_records(&self.nodes)
    }

    pub(crate) fn statics(&self) -> &[StaticValue] {
        &self.statics
    }

    /// True if this TreeDef was read as the type of `key` (see
    /// `checked.rs`), all records checked.
    #[inline]
    pub(crate) fn is_checked_for(&self, key: u64) -> bool {
        self.checked_for.is(key)
    }

    /// Remembers that this TreeDef was read as the type of `key`.
    #[inline]
    pub(crate) fn set_checked_for(&self, key: u64) {
        self.checked_for.set(key)
    }
}

impl PartialEq for TreeDef {
    fn eq(&self, other: &Self) -> bool {
        self.num_leaves == other.num_leaves
            && RecordWords::slices_eq(&self.nodes, &other.nodes)
            && self.statics == other.statics
    }
}

impl Eq for TreeDef {}

impl Hash for TreeDef {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.num_leaves.hash(state);
        self.nodes().hash(state);
        self.statics.hash(state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::treedef::schema::FieldStyle;

    #[test]
    fn a_node_record_is_sixteen_bytes() {
        assert_eq!(core::mem::size_of::<Record>(), 16);
    }

    static A: Schema = Schema::new("A", "m", None, FieldStyle::Unit, &[]);
    static A_TOO: Schema = Schema::new("A", "m", None, FieldStyle::Unit, &[]);
    static B: Schema = Schema::new("B", "m", None, FieldStyle::Unit, &[]);

    #[test]
    fn the_payload_word_is_each_records_count_or_schema_address() {
        assert_eq!(Record::Leaves(7).payload(), 7);
        assert_eq!(Record::Seq(3).payload(), 3);
        assert_eq!(Record::Tuple(2).payload(), 2);
        assert_eq!(Record::Map(9).payload(), 9);
        assert_eq!(Record::Struct(&A).payload(), &A as *const Schema as usize);
        assert_eq!(Record::Some.payload(), 0);
        assert_eq!(Record::None.payload(), 0);
    }

    #[test]
    fn records_are_equal_when_kind_and_payload_or_schema_value_agree() {
        assert_eq!(Record::Seq(3), Record::Seq(3));
        assert_ne!(Record::Seq(3), Record::Seq(4));
        assert_ne!(Record::Seq(3), Record::Tuple(3));
        assert_ne!(Record::Leaves(1), Record::Map(1));
        assert_eq!(Record::None, Record::None);
        assert_ne!(Record::Some, Record::None);
        assert_eq!(Record::Struct(&A), Record::Struct(&A));
        assert_eq!(Record::Struct(&A), Record::Struct(&A_TOO));
        assert_ne!(Record::Struct(&A), Record::Struct(&B));
    }

    const EVERY_KIND: [Record; 7] = [
        Record::Leaves(7),
        Record::Struct(&A),
        Record::Seq(3),
        Record::Tuple(2),
        Record::Map(9),
        Record::Some,
        Record::None,
    ];

    #[test]
    fn stored_records_read_back_as_the_nodes_they_were_made_from() {
        let stored: Vec<RecordWords> = EVERY_KIND.iter().map(|n| RecordWords::from(*n)).collect();
        let read = RecordWords::as_records(&stored);
        assert_eq!(read.len(), EVERY_KIND.len());
        for (got, want) in read.iter().zip(EVERY_KIND) {
            assert_eq!(core::mem::discriminant(got), core::mem::discriminant(&want));
            assert_eq!(got.payload(), want.payload());
        }
        assert!(matches!(read[1], Record::Struct(s) if core::ptr::eq(s, &A)));
    }

    #[test]
    fn a_schema_read_back_after_copies_of_the_records_is_usable() {
        // Copies by value, through a Vec's growth and a clone: the schema
        // reference must keep its provenance (run under Miri to check).
        let mut stored: Vec<RecordWords> = Vec::with_capacity(1);
        for node in EVERY_KIND {
            stored.push(RecordWords::from(node));
        }
        let copied = stored.clone();
        let one = copied[1];
        let moved = [one, copied[0]];
        let def = TreeDef::from_parts(moved.to_vec(), Vec::new(), 0);
        match def.nodes()[0] {
            Record::Struct(schema) => assert_eq!(schema.type_name(), "A"),
            other => panic!("read back {other:?}"),
        }
    }

    #[test]
    fn a_stored_record_is_its_tag_then_its_payload_word_or_zero() {
        let words: Vec<[u64; 2]> = EVERY_KIND
            .iter()
            .map(|n| {
                let stored = [RecordWords::from(*n)];
                let w = RecordWords::as_words(&stored);
                [w[0], w[1]]
            })
            .collect();
        let tags: Vec<u64> = words.iter().map(|w| w[0]).collect();
        assert_eq!(tags, [0, 1, 2, 3, 4, 5, 6]);
        let payloads: Vec<u64> = EVERY_KIND.iter().map(|n| n.payload() as u64).collect();
        assert_eq!(words.iter().map(|w| w[1]).collect::<Vec<_>>(), payloads);
        assert_eq!((words[5][1], words[6][1]), (0, 0));
    }

    fn def_of(nodes: &[Record]) -> TreeDef {
        TreeDef::from_parts(
            nodes.iter().map(|n| RecordWords::from(*n)).collect(),
            Vec::new(),
            0,
        )
    }

    fn hash_of(def: &TreeDef) -> u64 {
        let mut h = checked::Fnv1a::new();
        def.hash(&mut h);
        h.finish()
    }

    #[test]
    fn encodings_with_equal_words_are_equal_and_any_differing_record_makes_them_unequal() {
        let base = [
            Record::Tuple(3),
            Record::Some,
            Record::Leaves(1),
            Record::None,
            Record::Struct(&A),
        ];
        let a = def_of(&base);
        assert!(a == def_of(&base));
        let changes = [
            (1, Record::None),
            (2, Record::Leaves(2)),
            (3, Record::Some),
            (4, Record::Struct(&B)),
            (0, Record::Seq(3)),
        ];
        for (i, record) in changes {
            let mut changed = base;
            changed[i] = record;
            assert!(a != def_of(&changed), "{changed:?}");
        }
        assert!(a != def_of(&base[..4]));
    }

    #[test]
    fn a_schema_at_two_addresses_still_compares_and_hashes_equal() {
        let a = def_of(&[Record::Seq(2), Record::Struct(&A), Record::Struct(&A)]);
        let a_too = def_of(&[Record::Seq(2), Record::Struct(&A), Record::Struct(&A_TOO)]);
        let b = def_of(&[Record::Seq(2), Record::Struct(&A), Record::Struct(&B)]);
        assert!(a == a_too);
        assert_eq!(hash_of(&a), hash_of(&a_too));
        assert!(a != b);
    }
}
