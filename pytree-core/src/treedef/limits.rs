//! [`TreeDefLimits`]: how large a TreeDef read from a document (or
//! finished by a [`TreeDefBuilder`](super::TreeDefBuilder)) may be.
//!
//! A TreeDef is run-length encoded, so a 90-byte document can describe
//! 10^18 leaves. Every reader of a TreeDef works in time and memory
//! proportional to what it is given or returns, but a reader that returns
//! one value per leaf (`children`, `compose`) or is handed such a TreeDef
//! with no leaves to check it against would still be asked for 10^18 of
//! something. The limits refuse such documents at the door, with an error
//! that names the limit, as serde_json's recursion limit and bincode's size
//! limit do. The defaults are far above any real model; a program that
//! needs more raises them for one scope with [`TreeDefLimits::scope`].

/// Limits on the TreeDefs that deserialization and
/// [`TreeDefBuilder::finish`](super::TreeDefBuilder::finish) accept.
///
/// The defaults ([`TreeDefLimits::DEFAULT`]): 2^32 leaves (4 294 967 296:
/// 16 GiB of `f32` leaves), 2^26 internal nodes (67 108 864; a TreeDef of
/// that many holds 1 GiB of records), depth 4096 (nested nodes; a real
/// model is tens deep, and JAX's pytrees stop at Python's recursion limit
/// of 1000), 2^16 distinct struct schemas in one document, and names (of
/// types, modules, variants, fields, kinds) of at most 512 bytes (a
/// TreeDef prints a struct's name for every struct node). The depth is
/// kept low because some results grow with it: each mismatch that
/// [`TreeDef::diff`](crate::TreeDef::diff) reports carries its key path.
/// What a document may claim is one bound; what a reader of the TreeDef
/// then allocates for it, and the steps it takes, is another: the output
/// budget ([`output_budget`](TreeDefLimits::output_budget): 2 times the
/// TreeDef's encoding plus 256 MiB by default) and the work budget
/// ([`work_budget`](TreeDefLimits::work_budget): one step per 16 bytes of
/// the output budget).
/// Fields are public: start from a constant and change what you need.
///
/// # Memory and time, in terms of the document
///
/// A TreeDef holds 16 bytes per record, at most 2.3 times the JSON
/// document it was read from (the shortest record, `"none"`, takes 7
/// bytes with its comma); reading a document holds at most 5 times its
/// size at once (the records' vector grows by doubling). Each reader of
/// the TreeDef then holds at most its output budget for its result: by
/// default 2 times the encoding, about 4.6 times the document, plus 256
/// MiB; readers whose result would be larger say so before they allocate
/// it. Readers of two TreeDefs ([`diff`](crate::TreeDef::diff),
/// [`is_prefix_of`](crate::TreeDef::is_prefix_of),
/// [`broadcast_to_common_suffix`](crate::TreeDef::broadcast_to_common_suffix))
/// hold at most the two encodings (the common structure) beyond a few
/// words per level. Time is in proportion to the records read and the
/// result: a run of leaves is one step wherever the result allows it, and
/// a reader that must take one step per leaf a record claims
/// ([`transform`](crate::TreeDef::transform) calls a closure per leaf)
/// counts its steps first and refuses more than the work budget. So a
/// program that reads an untrusted document of `D` bytes and calls its
/// readers one at a time holds at most about 7 `D` + 256 MiB for them
/// (the TreeDef and one result), and waits in proportion to `D` + 16 Mi
/// steps (measured in `tests/tests/untrusted.rs`; a 470 MB document in
/// `docs/design-notes.md`).
///
/// ```
/// use pytree_std::{NodeRef, TreeDefBuilder, TreeDefLimits};
/// // A sequence of 10^12 leaves: two records (with serde, a 70-byte document).
/// let build = || {
///     let mut b = TreeDefBuilder::new();
///     b.node(NodeRef::Seq(1_000_000_000_000));
///     b.leaves(1_000_000_000_000);
///     b.finish()
/// };
/// let err = build().unwrap_err();
/// assert!(err.to_string().contains("more than 4294967296 leaves"), "{err}");
///
/// let mut big = TreeDefLimits::DEFAULT;
/// big.max_leaves = 1 << 40;
/// let def = big.scope(build)?;
/// assert_eq!(def.num_leaves(), 1_000_000_000_000);
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct TreeDefLimits {
    /// The most leaves.
    pub max_leaves: usize,
    /// The most internal nodes (structs, sequences, tuples, maps, `Some`,
    /// `None`; leaves are counted by `max_leaves`).
    pub max_nodes: usize,
    /// The most nodes with children nested in one another (`[*]` is 1
    /// deep; a derived linked list is 2 deep per level: the struct and its
    /// `Some`).
    pub max_depth: usize,
    /// The most struct schemas one document may list.
    pub max_schemas: usize,
    /// The longest name (in bytes) a schema may hold.
    pub max_name_len: usize,
    /// With [`output_allowance`](Self::output_allowance), the memory
    /// budget of every reader of a TreeDef (see
    /// [`output_budget`](Self::output_budget)): this many bytes per byte
    /// of the TreeDef's encoding.
    pub output_factor: usize,
    /// The fixed part of the memory budget of every reader of a TreeDef,
    /// in bytes (see [`output_budget`](Self::output_budget)).
    pub output_allowance: usize,
}

impl TreeDefLimits {
    /// The limits in force unless a [`scope`](Self::scope) says otherwise
    /// (see the type's docs for the figures).
    ///
    /// ```
    /// assert_eq!(pytree_std::TreeDefLimits::DEFAULT.max_leaves, 1 << 32);
    /// ```
    pub const DEFAULT: TreeDefLimits = TreeDefLimits {
        max_leaves: 1 << 32,
        max_nodes: 1 << 26,
        max_depth: 1 << 12,
        max_schemas: 1 << 16,
        max_name_len: 512,
        output_factor: 2,
        output_allowance: 256 << 20,
    };

    /// No limit at all: only what fits in a `usize` (counts are still
    /// checked, so nothing overflows).
    ///
    /// ```
    /// assert_eq!(pytree_std::TreeDefLimits::UNLIMITED.max_depth, usize::MAX);
    /// ```
    pub const UNLIMITED: TreeDefLimits = TreeDefLimits {
        max_leaves: usize::MAX,
        max_nodes: usize::MAX,
        max_depth: usize::MAX,
        max_schemas: usize::MAX,
        max_name_len: usize::MAX,
        output_factor: usize::MAX,
        output_allowance: usize::MAX,
    };

    /// The most memory, in bytes, that a reader of `def` may allocate for
    /// its result: `output_factor` times the bytes of `def`'s encoding (16
    /// per record, plus its statics table, see
    /// [`TreeDef::encoded_bytes`](crate::TreeDef::encoded_bytes)) plus
    /// `output_allowance`; by default 2 times plus 256 MiB. A TreeDef is
    /// run-length encoded, so an 84-byte document may claim 2^32 leaves;
    /// every reader whose result grows with what the document claims
    /// ([`children`](crate::TreeDef::children),
    /// [`entries`](crate::TreeDef::entries),
    /// [`leaf_paths`](crate::TreeDef::leaf_paths),
    /// [`fold`](crate::TreeDef::fold),
    /// [`transform`](crate::TreeDef::transform),
    /// [`compose`](crate::TreeDef::compose)) works out what its result
    /// needs first, and returns an error naming this budget instead of
    /// allocating more. Raise it for one scope with
    /// [`scope`](Self::scope) to read a TreeDef you trust.
    ///
    /// ```
    /// use pytree_std::{TreeDef, TreeDefLimits};
    /// let def = pytree_std::structure(&vec![0u8; 1000]); // two records
    /// let budget = TreeDefLimits::DEFAULT.output_budget(&def);
    /// assert_eq!(budget, 2 * def.encoded_bytes() + (256 << 20));
    /// let mut tight = TreeDefLimits::DEFAULT;
    /// tight.output_allowance = 0;
    /// let err = tight.scope(|| def.leaf_paths()).unwrap_err();
    /// assert!(err.to_string().contains("more than the output budget"), "{err}");
    /// assert_eq!(def.leaf_paths()?.len(), 1000);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn output_budget(&self, def: &crate::treedef::TreeDef) -> usize {
        self.output_factor
            .saturating_mul(def.encoded_bytes())
            .saturating_add(self.output_allowance)
    }

    /// The most steps a reader of `def` may take: one per 16 bytes (a
    /// record's size) of its [output budget](Self::output_budget), so that
    /// time is bounded by the same budget as memory; by default 2 steps per
    /// 16 bytes of the encoding plus 16 Mi steps. A step is a node or leaf
    /// visited, or a call of a closure the caller passed. Most readers
    /// take a step per record, or per item of their result, and need no
    /// check; one that would take a step per leaf a record claims
    /// ([`transform`](crate::TreeDef::transform), which calls its closure
    /// once per leaf) counts them first and returns an error naming this
    /// budget. An 84-byte document may claim 2^32 leaves, which a closure
    /// called once each would take minutes to see.
    ///
    /// ```
    /// use pytree_std::{TreeDef, TreeDefLimits};
    /// let def = pytree_std::structure(&vec![0u8; 1000]); // two records
    /// assert_eq!(TreeDefLimits::DEFAULT.work_budget(&def), (2 * 32 + (256 << 20)) / 16);
    /// let mut tight = TreeDefLimits::DEFAULT;
    /// tight.output_allowance = 0;
    /// let err = tight
    ///     .scope(|| def.transform(|_, node| Ok(node.clone()), |_| TreeDef::leaf()))
    ///     .unwrap_err();
    /// assert!(err.to_string().contains("more than the work budget"), "{err}");
    /// ```
    pub fn work_budget(&self, def: &crate::treedef::TreeDef) -> usize {
        self.output_budget(def) / core::mem::size_of::<super::Record>()
    }

    /// The limits in force on this thread: those of the innermost
    /// [`scope`](Self::scope), else [`DEFAULT`](Self::DEFAULT) (always the
    /// default without pytree-core's `std` feature).
    ///
    /// ```
    /// use pytree_std::TreeDefLimits;
    /// assert_eq!(TreeDefLimits::current(), TreeDefLimits::DEFAULT);
    /// TreeDefLimits::UNLIMITED.scope(|| assert_eq!(TreeDefLimits::current(), TreeDefLimits::UNLIMITED));
    /// ```
    pub fn current() -> TreeDefLimits {
        #[cfg(feature = "std")]
        {
            scoped::CURRENT.with(|c| c.get())
        }
        #[cfg(not(feature = "std"))]
        {
            TreeDefLimits::DEFAULT
        }
    }

    /// Runs `f` with these limits in force on this thread, for every
    /// TreeDef deserialized (in any format, also inside a larger document)
    /// or finished by a builder; the previous limits come back afterwards,
    /// also if `f` panics.
    ///
    /// ```
    /// use pytree_std::{NodeRef, TreeDefBuilder, TreeDefLimits};
    /// let build = || {
    ///     let mut b = TreeDefBuilder::new();
    ///     b.node(NodeRef::Seq(3));
    ///     b.leaves(3);
    ///     b.finish()
    /// };
    /// let mut tight = TreeDefLimits::DEFAULT;
    /// tight.max_leaves = 2;
    /// assert!(tight.scope(build).is_err());
    /// assert!(build().is_ok()); // the default limits are back
    /// ```
    #[cfg(feature = "std")]
    pub fn scope<R>(self, f: impl FnOnce() -> R) -> R {
        let _restore = scoped::Restore(scoped::CURRENT.with(|c| c.replace(self)));
        f()
    }
}

impl Default for TreeDefLimits {
    /// [`TreeDefLimits::DEFAULT`].
    ///
    /// ```
    /// assert_eq!(pytree_std::TreeDefLimits::default(), pytree_std::TreeDefLimits::DEFAULT);
    /// ```
    fn default() -> Self {
        TreeDefLimits::DEFAULT
    }
}

#[cfg(feature = "std")]
mod scoped {
    use std::cell::Cell;

    use super::TreeDefLimits;

    std::thread_local! {
        pub(super) static CURRENT: Cell<TreeDefLimits> = const { Cell::new(TreeDefLimits::DEFAULT) };
    }

    /// Puts the previous limits back when dropped, even when unwinding.
    pub(super) struct Restore(pub(super) TreeDefLimits);

    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.with(|c| c.set(self.0));
        }
    }
}
