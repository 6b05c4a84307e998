//! What a tree of tensors holds, at a glance: [`signatures`] (a [`Tree`]
//! of each leaf's dtype and shape, JAX's `eval_shape` output) and
//! [`summary`] (a table of every leaf and subtree with element and byte
//! counts, as flax's `tabulate` and torchinfo print).

use std::fmt;

use pytree_core::{Error, Flatten, KeyEntry, KeyPath, Leaf, Signature};

use crate::std_namespace::Std;
use crate::tree::Tree;

/// The signature (dtype, shape, device) of every leaf, as a [`Tree`] of
/// the tree's structure (JAX's `jax.eval_shape` gives a tree of
/// `ShapeDtypeStruct`s). Numeric scalars are 0-d. A leaf that does not
/// describe itself (a `String`) is an error naming its path.
///
/// ```
/// use pytree_std::{DType, PyTree, Signature, Tree};
/// #[derive(PyTree)]
/// struct Linear { w: Vec<f32>, b: f32 }
/// let sigs = pytree_std::elements::signatures(&Linear { w: vec![1.0, 2.0], b: 0.0 })?;
/// assert_eq!(sigs["b"], Tree::leaf(Signature::scalar(DType::F32)));
/// assert_eq!(format!("{sigs:?}"), "{\"w\": [Signature { dtype: F32, shape: [], device: None }, \
///     Signature { dtype: F32, shape: [], device: None }], \"b\": Signature { dtype: F32, shape: [], device: None }}");
/// let err = pytree_std::elements::signatures(&vec![String::from("x")]).unwrap_err();
/// assert_eq!(err.to_string(), "at [0]: the leaf (a alloc::string::String) has no signature");
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn signatures<T: Flatten<Std>>(tree: &T) -> Result<Tree<Signature>, Error> {
    let def = crate::walk::structure(tree);
    let mut sigs = Vec::with_capacity(def.num_leaves());
    for (i, leaf) in crate::walk::leaves(tree).into_iter().enumerate() {
        match T::Leaf::signature(&leaf) {
            Some(sig) => sigs.push(sig),
            None => {
                let mut err = Error::custom(format!(
                    "the leaf (a {}) has no signature",
                    std::any::type_name::<T::Leaf>()
                ));
                if let Some(path) = def.leaf_path(i) {
                    err = err.under(&path);
                }
                return Err(err);
            }
        }
    }
    crate::walk::unflatten(&def, sigs)
}

/// One row of a [`Summary`]: a leaf, or a subtree with the totals of the
/// leaves below it.
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryRow {
    /// Where the row is.
    pub path: KeyPath,
    /// The leaf's signature (`None` for a subtree, or a leaf that does not
    /// describe itself).
    pub signature: Option<Signature>,
    /// True for a leaf, false for a subtree.
    pub is_leaf: bool,
    /// Leaves in the row (1 for a leaf).
    pub leaves: usize,
    /// Elements in the row (a leaf without a signature counts as 1).
    pub elements: usize,
    /// Bytes of data in the row, when every leaf's dtype has a size.
    pub bytes: Option<usize>,
    /// The leaf's kind (`"param"`, or a field's `#[pytree(kind = ..)]`).
    pub kind: &'static str,
}

/// A table of a tree's leaves and subtrees (flax's `tabulate`,
/// torchinfo's summary): path, kind, dtype, shape, element count and
/// bytes per leaf, totals per subtree, per kind and for the whole tree.
/// Print it with `{}`; [`max_depth`](Summary::max_depth) folds deep rows
/// into their subtree's.
///
/// ```
/// use pytree_std::PyTree;
/// #[derive(PyTree)]
/// struct Linear { w: Vec<f32>, b: f32, #[pytree(kind = "state")] steps: f32 }
/// let model = vec![Linear { w: vec![0.0; 3], b: 0.0, steps: 0.0 }, Linear { w: vec![0.0; 2], b: 0.0, steps: 0.0 }];
/// let s = pytree_std::elements::summary(&model);
/// assert_eq!(s.num_elements(), 9);
/// assert_eq!(s.num_bytes(), Some(9 * 4));
/// let table = s.max_depth(1).to_string();
/// assert_eq!(table, "\
/// path   kind   dtype       shape  elements  bytes
/// [0]                                     5   20 B
/// [1]                                     4   16 B
/// total  param                            7   28 B
/// total  state                            2    8 B
/// total         (9 leaves)                9   36 B
/// ");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    rows: Vec<SummaryRow>,
    /// Deepest row shown (rows deeper than this are folded).
    max_depth: usize,
}

/// The table of `tree`: see [`Summary`].
///
/// ```
/// let s = pytree_std::elements::summary(&(vec![1.0f64; 4], 2.0f64));
/// assert_eq!((s.num_leaves(), s.num_elements(), s.num_bytes()), (5, 5, Some(40)));
/// ```
pub fn summary<T: Flatten<Std>>(tree: &T) -> Summary {
    let mut rows: Vec<SummaryRow> = Vec::new();
    // Rows of the subtrees that contain the current leaf, outermost first.
    let mut open: Vec<usize> = Vec::new();
    for (path, leaf) in crate::paths::leaves_with_path(tree) {
        let entries = path.entries();
        // Keep the open subtrees that are prefixes of this path.
        let common = open
            .iter()
            .take_while(|&&r| entries.starts_with(rows[r].path.entries()))
            .count();
        open.truncate(common);
        let mut depth = open.last().map_or(0, |&r| rows[r].path.len());
        while depth + 1 < entries.len() {
            depth += 1;
            open.push(rows.len());
            rows.push(SummaryRow {
                path: KeyPath::from_entries(entries[..depth].to_vec()),
                signature: None,
                is_leaf: false,
                leaves: 0,
                elements: 0,
                bytes: Some(0),
                kind: path.kind(),
            });
        }
        let signature = T::Leaf::signature(&leaf);
        let elements = signature.as_ref().map_or(1, Signature::num_elements);
        let bytes = signature.as_ref().and_then(Signature::size_in_bytes);
        for &r in &open {
            let row = &mut rows[r];
            row.leaves += 1;
            row.elements = row.elements.saturating_add(elements);
            row.bytes = row.bytes.zip(bytes).map(|(a, b)| a.saturating_add(b));
        }
        let kind = path.kind();
        rows.push(SummaryRow {
            path,
            signature,
            is_leaf: true,
            leaves: 1,
            elements,
            bytes,
            kind,
        });
    }
    Summary {
        rows,
        max_depth: usize::MAX,
    }
}

impl Summary {
    /// Every row, in pre-order (subtrees before their leaves), unfolded.
    ///
    /// ```
    /// let s = pytree_std::elements::summary(&vec![(1.0f32, 2.0f32)]);
    /// let paths: Vec<String> = s.rows().iter().map(|r| r.path.to_string()).collect();
    /// assert_eq!(paths, ["[0]", "[0][0]", "[0][1]"]);
    /// ```
    pub fn rows(&self) -> &[SummaryRow] {
        &self.rows
    }

    /// The same table showing rows down to `depth` path entries; deeper
    /// rows are folded into the subtree rows that contain them.
    ///
    /// ```
    /// let s = pytree_std::elements::summary(&vec![(1.0f32, 2.0f32)]).max_depth(1);
    /// assert_eq!(s.to_string().lines().count(), 3); // header, [0], total
    /// ```
    #[must_use]
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth.max(1);
        self
    }

    /// The number of leaves.
    ///
    /// ```
    /// assert_eq!(pytree_std::elements::summary(&(1u8, [2u8, 3])).num_leaves(), 3);
    /// ```
    pub fn num_leaves(&self) -> usize {
        self.rows.iter().filter(|r| r.is_leaf).count()
    }

    /// The number of elements of all leaves (a parameter count).
    ///
    /// ```
    /// assert_eq!(pytree_std::elements::summary(&vec![0.0f32; 10]).num_elements(), 10);
    /// ```
    pub fn num_elements(&self) -> usize {
        self.leaf_rows()
            .fold(0usize, |n, r| n.saturating_add(r.elements))
    }

    /// Bytes of all leaves, when every leaf's dtype has a size.
    ///
    /// ```
    /// assert_eq!(pytree_std::elements::summary(&vec![0.0f64; 10]).num_bytes(), Some(80));
    /// assert_eq!(pytree_std::elements::summary(&String::from("x")).num_bytes(), None);
    /// ```
    pub fn num_bytes(&self) -> Option<usize> {
        self.leaf_rows()
            .try_fold(0usize, |n, r| Some(n.saturating_add(r.bytes?)))
    }

    fn leaf_rows(&self) -> impl Iterator<Item = &SummaryRow> {
        self.rows.iter().filter(|r| r.is_leaf)
    }

    /// Totals per kind, in order of first appearance.
    fn kinds(&self) -> Vec<(&'static str, usize, usize, Option<usize>)> {
        let mut out: Vec<(&'static str, usize, usize, Option<usize>)> = Vec::new();
        for r in self.leaf_rows() {
            match out.iter_mut().find(|k| k.0 == r.kind) {
                Some(k) => {
                    k.1 += 1;
                    k.2 = k.2.saturating_add(r.elements);
                    k.3 = k.3.zip(r.bytes).map(|(a, b)| a.saturating_add(b));
                }
                None => out.push((r.kind, 1, r.elements, r.bytes)),
            }
        }
        out
    }
}

/// `1234567` as `1,234,567`.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Bytes in binary units: `512 B`, `1.5 KiB`, `12.0 MiB`.
fn human_bytes(bytes: Option<usize>) -> String {
    let Some(b) = bytes else {
        return "-".to_string();
    };
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if b < 1024 {
        return format!("{b} B");
    }
    let mut value = b as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// How a row names its place: the last entry, indented by depth.
fn label(path: &KeyPath) -> String {
    let entries = path.entries();
    match entries.last() {
        None => "<root>".to_string(),
        Some(last) => {
            let indent = "  ".repeat(entries.len() - 1);
            let shown = match last {
                KeyEntry::Field(name) => format!(".{name}"),
                other => other.to_string(),
            };
            format!("{indent}{shown}")
        }
    }
}

fn shape(sig: &Signature) -> String {
    let dims: Vec<String> = sig.shape().iter().map(usize::to_string).collect();
    format!("[{}]", dims.join(", "))
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show_kind =
            self.leaf_rows().any(|r| r.kind != KeyPath::DEFAULT_KIND) || self.kinds().len() > 1;
        let mut table: Vec<[String; 6]> = vec![[
            "path".into(),
            "kind".into(),
            "dtype".into(),
            "shape".into(),
            "elements".into(),
            "bytes".into(),
        ]];
        for r in self.rows.iter().filter(|r| r.path.len() <= self.max_depth) {
            let (dtype, shp) = match (&r.signature, r.is_leaf) {
                (Some(s), _) => (s.dtype().to_string(), shape(s)),
                (None, true) => ("-".to_string(), "-".to_string()),
                (None, false) => (String::new(), String::new()),
            };
            let kind = if r.is_leaf && show_kind {
                r.kind.to_string()
            } else {
                String::new()
            };
            table.push([
                label(&r.path),
                kind,
                dtype,
                shp,
                grouped(r.elements),
                human_bytes(r.bytes),
            ]);
        }
        let kinds = self.kinds();
        if kinds.len() > 1 {
            for (kind, _, elements, bytes) in &kinds {
                table.push([
                    "total".into(),
                    kind.to_string(),
                    String::new(),
                    String::new(),
                    grouped(*elements),
                    human_bytes(*bytes),
                ]);
            }
        }
        let leaves = self.num_leaves();
        table.push([
            "total".into(),
            String::new(),
            format!(
                "({} lea{})",
                grouped(leaves),
                if leaves == 1 { "f" } else { "ves" }
            ),
            String::new(),
            grouped(self.num_elements()),
            human_bytes(self.num_bytes()),
        ]);
        let mut widths = [0usize; 6];
        for row in &table {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        for row in &table {
            let mut line = String::new();
            for (i, (cell, w)) in row.iter().zip(widths).enumerate() {
                if i == 1 && !show_kind {
                    continue;
                }
                if i > 0 {
                    line.push_str("  ");
                }
                // Counts are right-aligned, the rest left-aligned.
                if i >= 4 {
                    line.push_str(&format!("{cell:>w$}"));
                } else {
                    line.push_str(&format!("{cell:<w$}"));
                }
            }
            writeln!(f, "{}", line.trim_end())?;
        }
        Ok(())
    }
}
