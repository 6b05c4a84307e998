//! The loads from an opened [`Checkpoint`], its targets: by type
//! ([`Checkpoint::load`], by the file's TreeDef or by the tensors' names),
//! against a template ([`Checkpoint::load_like`]), in place
//! ([`Checkpoint::load_into`]), and every tensor as a flat map
//! ([`Checkpoint::load_map`]). Each pairs the leaves it wants with the
//! file's tensors by name, checks them all, lists every problem at once,
//! and says what it did in a [`LoadReport`] (the map, which takes every
//! tensor, has nothing to report).

use std::borrow::Cow;
use std::collections::HashMap;

use indexmap::IndexMap;
use pytree_core::{DType, Error, Flatten, KeyPath, NodeView, Signature, TreeDef, Unflatten};

use super::by_names::NameSource;
use super::convert;
use super::format::{Entry, PREFIX_KEY, TREEDEF_ERROR_KEY};
use super::leaf::TensorLeaf;
use super::naming::{combine, names_of, Renames};
use super::options::LoadReport;
use super::reader::Checkpoint;
use super::statics;
use super::storage::{file_error, Storage};
use crate::leaf_bytes::{self, ByteLeaf};
use crate::std_namespace::Std;

/// A load that builds a new value from a template's TreeDef (`load_like`,
/// and `load_into` when it restores static fields) would give its
/// `#[pytree(skip)]` fields `Default`, silently losing the template's
/// value. Refuses a TreeDef with such a field (`PhantomData` and
/// `#[pytree(skip(recomputed))]` fields, whose `Default` loses nothing,
/// are not listed in the schema), naming its place; `why` says which load
/// rebuilds the value, `instead` what to do.
fn refuse_skipped_fields(def: &TreeDef, why: &str, instead: &str) -> Result<(), Error> {
    // One pass over the structure; the place is looked for only on error.
    let any = def.fold(
        0..def.num_leaves(),
        |_| false,
        |node, kids| {
            kids.contains(&true)
                || matches!(node, NodeView::Struct { schema, .. } if !schema.skipped().is_empty())
        },
    )?;
    if !any {
        return Ok(());
    }
    let mut todo = vec![(def.clone(), KeyPath::root())];
    while let Some((def, path)) = todo.pop() {
        if let NodeView::Struct { schema, .. } = def.root_node() {
            if let Some(field) = schema.skipped().first() {
                let err = Error::custom(format!(
                    "{}.{field} is #[pytree(skip)]: {why} rebuilds the value with Default \
                     there, losing the template's value; mark the field \
                     #[pytree(skip(recomputed))] if the type recomputes it on use, {instead}",
                    schema.display_name()
                ));
                return Err(err.under(&path));
            }
        }
        for (i, entry) in def.entries()?.into_iter().enumerate().rev() {
            if let Some(child) = def.child(i) {
                let mut p = path.clone();
                for e in entry.entries() {
                    p.push(e.clone());
                }
                todo.push((child, p));
            }
        }
    }
    Ok(())
}

/// One leaf a load asks for.
struct Want {
    path: KeyPath,
    name: String,
    /// What the tensor must be: a whole signature (a template's leaf), or
    /// a dtype (a leaf type's, loading by type; `None` for any).
    expected: Expected,
    /// Stored transposed ([`Load::transpose`](super::Load::transpose)):
    /// the tensor is 2-d, of the leaf's shape reversed.
    transposed: bool,
}

enum Expected {
    Signature(Signature),
    DType(Option<DType>),
}

impl Expected {
    /// What is asked for, for the messages; `transposed` as in [`Want`].
    fn describe(&self, transposed: bool) -> String {
        match (self, transposed) {
            (Expected::Signature(s), false) => s.to_string(),
            (Expected::Signature(s), true) => match s.shape() {
                &[rows, cols] => format!(
                    "{} (the leaf's {s} transposed: Load::transpose)",
                    pytree_core::Signature::new(s.dtype(), vec![cols, rows])
                ),
                _ => format!("a 2-d tensor (Load::transpose), but the leaf is {s}"),
            },
            (Expected::DType(Some(d)), false) => format!("a {d} tensor"),
            (Expected::DType(Some(d)), true) => format!("a 2-d {d} tensor (Load::transpose)"),
            (Expected::DType(None), false) => "a tensor".into(),
            (Expected::DType(None), true) => "a 2-d tensor (Load::transpose)".into(),
        }
    }
    /// The dtype asked for, if one is.
    fn dtype(&self) -> Option<DType> {
        match self {
            Expected::Signature(s) => Some(s.dtype()),
            Expected::DType(d) => *d,
        }
    }
    /// True when `found` is what is asked for, or (with `convert`) a
    /// float of another width that is converted to it; with `transposed`,
    /// a 2-d tensor of the leaf's shape reversed.
    fn accepts(&self, found: &Entry, convert: bool, transposed: bool) -> bool {
        let dtype_ok = |want: DType| {
            want == found.dtype || (convert && convert::convertible(found.dtype, want))
        };
        let shape_ok = |want: &[usize]| match (transposed, want, found.shape.as_slice()) {
            (false, want, found) => want == found,
            (true, &[rows, cols], &[found_rows, found_cols]) => {
                (rows, cols) == (found_cols, found_rows)
            }
            (true, ..) => false,
        };
        let rank_ok = !transposed || found.shape.len() == 2;
        match self {
            Expected::Signature(s) => dtype_ok(s.dtype()) && shape_ok(s.shape()),
            Expected::DType(Some(d)) => dtype_ok(*d) && rank_ok,
            Expected::DType(None) => rank_ok,
        }
    }
}

impl Checkpoint {
    /// Loads a `T` by its type alone, and what the load did. The
    /// structure (sequence lengths, map keys, static fields) comes from
    /// the TreeDef in the file's metadata; names and dtypes are checked
    /// (every problem listed), then the ranks of the fields as the value
    /// is built. The prefix the file was saved with is stripped (unless
    /// renames are given). A `#[pytree(skip)]` field is `Default` here
    /// (the file holds no value for it and there is no template to take
    /// one from).
    ///
    /// A file without a TreeDef (written by Python's `safetensors` or
    /// transformers), or any file with [`Load::by_names`](super::Load::by_names), loads by its
    /// names: the type fixes the structure; the names, after the renames,
    /// give each `Vec`'s length (`layers.0.…`, `layers.1.…`) and each
    /// `Option`; the tensors give the shapes. An enum variant, a static
    /// field or a map's keys, which names cannot say, are an error naming
    /// the place.
    ///
    /// Strict as every load: a tensor the type asks for and the file
    /// lacks is an error; one the type never asks for is an error unless
    /// [`Load::allow_unused`](super::Load::allow_unused) is on, and then it is listed in the
    /// [`LoadReport`].
    ///
    /// ```
    /// use pytree_std::checkpoint::{Load, Save};
    /// let file = Load::new().from_bytes(Save::new().to_bytes(&vec![1u8, 2])?)?;
    /// let (v, report) = file.load::<Vec<u8>>()?;
    /// assert_eq!((v, report.is_complete()), (vec![1, 2], true));
    /// let err = file.load::<Vec<u16>>().unwrap_err();
    /// assert_eq!(err.to_string(), "tree structures differ (2 mismatches found)
    ///   at [0]: tensor `0`: expected a u16 tensor, found u8[]
    ///   at [1]: tensor `1`: expected a u16 tensor, found u8[]");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    ///
    /// A file as Python's `safetensors` writes it, by its names:
    ///
    /// ```
    /// use pytree_std::checkpoint::{Load, Renames};
    /// use pytree_std::ndarray::{Array1, Array2};
    /// use pytree_std::PyTree;
    /// #[derive(PyTree, Debug)]
    /// struct Layer { w: Array2<f32>, b: Array1<f32> }
    /// #[derive(PyTree, Debug)]
    /// struct Net { layers: Vec<Layer> }
    /// // Names, no TreeDef.
    /// let (mut header, mut data) = (Vec::new(), Vec::new());
    /// for i in 0..3 {
    ///     for (name, shape, len) in [("w", "[2,4]", 8), ("b", "[4]", 4)] {
    ///         let start = data.len();
    ///         data.resize(start + 4 * len, 0u8);
    ///         header.push(format!(r#""model.layer.{i}.{name}":{{"dtype":"F32","shape":{shape},"data_offsets":[{start},{}]}}"#, data.len()));
    ///     }
    /// }
    /// let header = format!("{{{}}}", header.join(","));
    /// let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    /// bytes.extend(header.bytes().chain(data));
    /// let file = Load::new()
    ///     .renames(Renames::new().prefix("model.", "").pattern("layer.*", "layers.$1"))
    ///     .from_bytes(bytes)?;
    /// let (net, report) = file.load::<Net>()?;
    /// assert_eq!((net.layers.len(), net.layers[2].w.dim()), (3, (2, 4)));
    /// assert!(report.is_complete());
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn load<T>(&self) -> Result<(T, LoadReport), Error>
    where
        T: Unflatten<Std>,
        T::Leaf: TensorLeaf,
    {
        let def = if self.options.by_names {
            None
        } else {
            self.treedef()?
        };
        let Some(def) = def else {
            return self.load_by_names();
        };
        let paths = self.leaf_paths_of(&def)?;
        let prefix = self
            .metadata
            .get(PREFIX_KEY)
            .filter(|_| self.options.renames.is_empty());
        let names = names_of(paths.iter(), "", &Renames::new())?;
        let wants: Vec<Want> = paths
            .into_iter()
            .zip(names)
            .map(|(path, name)| Want {
                transposed: self.is_transposed(&name),
                path,
                name,
                expected: Expected::DType(<T::Leaf as ByteLeaf>::fixed_dtype()),
            })
            .collect();
        let (pairs, report) = self.pair(&wants, false, prefix.map(String::as_str))?;
        let mut leaves = Vec::with_capacity(wants.len());
        for (want, pair) in wants.iter().zip(pairs) {
            let Some(i) = pair else {
                return Err(Error::custom("missing tensor").under(&want.path));
            };
            let leaf = self.with_view(
                i,
                self.dtype_by_type::<T::Leaf>(i),
                want.transposed,
                |view| T::Leaf::from_tensor(view, None),
            );
            leaves.push(leaf.map_err(|e| e.under(&want.path))?);
        }
        crate::walk::unflatten(&def, leaves).map(|tree| (tree, report))
    }

    /// Loads a tree shaped like `like` (equinox's
    /// `tree_deserialise_leaves(path, like)`), and what the load did:
    /// every leaf is read from the tensor of its name, which must have the
    /// template leaf's dtype and shape (with [`Load::shapes_from_file`](super::Load::shapes_from_file),
    /// the dtype only); every problem is listed. A candle tensor goes to
    /// the template's device. A partial load ([`Load::allow_missing`](super::Load::allow_missing):
    /// the template's value is kept; [`Load::allow_unused`](super::Load::allow_unused): a tensor is
    /// skipped) says in the [`LoadReport`] which leaves kept the template's
    /// value and which tensors it skipped, so it cannot pass for a full
    /// one.
    ///
    /// Static fields are the file's where its TreeDef holds them (as a
    /// load by type takes them: an optimizer state's step `count`), else
    /// the template's; see [`load_into`](Checkpoint::load_into).
    ///
    /// A template whose type has a `#[pytree(skip)]` field (other than
    /// `PhantomData`) is refused, naming the field: the new value would get
    /// `Default` there, not the template's value. A field marked
    /// `#[pytree(skip(recomputed))]` is not: its type recomputes it on use,
    /// as the optimizers' states do with their masks, so an optimizer state
    /// loads against a template. Use [`load_into`](Checkpoint::load_into)
    /// on the template instead, which writes the leaves in place and keeps
    /// skipped fields.
    ///
    /// ```
    /// use pytree_std::checkpoint::{Load, Save};
    /// let bytes = Save::new().to_bytes(&(1.5f32, 2.0f32))?;
    /// let file = Load::new().from_bytes(bytes.clone())?;
    /// assert_eq!(file.load_like(&(0.0f32, 0.0f32))?.0, (1.5, 2.0));
    /// let err = file.load_like(&(0.0f64, 0.0f64)).unwrap_err();
    /// assert_eq!(err.to_string(), "tree structures differ (2 mismatches found)
    ///   at [0]: tensor `0`: expected f64[], found f32[]
    ///   at [1]: tensor `1`: expected f64[], found f32[]");
    /// // A partial load says what it left out.
    /// let file = Load::new().non_strict().from_bytes(bytes)?;
    /// let (t, report) = file.load_like(&(0.0f32,))?;
    /// assert_eq!((t, report.is_complete()), ((1.5,), false));
    /// assert_eq!(report.unused, ["1"]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn load_like<T>(&self, like: &T) -> Result<(T, LoadReport), Error>
    where
        T: Unflatten<Std>,
        T::Leaf: TensorLeaf,
    {
        let def_of_like = crate::walk::structure(like);
        let restored = self
            .restore_statics(&def_of_like)?
            .map(|(restored, _)| restored);
        let def = restored.as_ref().unwrap_or(&def_of_like);
        refuse_skipped_fields(
            def,
            "load_like",
            "load into the template in place with load_into (which keeps skipped fields), \
             or leave the field out of the type",
        )?;
        let leaves = crate::paths::leaves_with_path(like);
        let wants = self.wants_of::<T::Leaf>(&leaves, self.options.shapes_from_file)?;
        let (pairs, report) = self.pair(&wants, self.options.allow_missing, None)?;
        let mut out = Vec::with_capacity(leaves.len());
        for (((path, leaf), pair), want) in leaves.iter().zip(pairs).zip(&wants) {
            out.push(match pair {
                Some(i) => self
                    .with_view(i, want.expected.dtype(), want.transposed, |view| {
                        T::Leaf::from_tensor(view, Some(leaf))
                    })
                    .map_err(|e| e.under(path))?,
                None => <T::Leaf as ByteLeaf>::to_owned_leaf(leaf),
            });
        }
        let tree = match &restored {
            // Static fields from the file: the TreeDef that holds them.
            Some(def) => crate::walk::unflatten(def, out)?,
            // Through the template's TreeDef, or built like the template
            // for a tree a TreeDef cannot rebuild alone (a `BurnModule`).
            None => pytree_core::ops::basic::unflatten_like::<Std, T>(&def_of_like, like, out)?,
        };
        Ok((tree, report))
    }

    /// Loads into `tree`, in place, and says what the load did: each
    /// leaf's data is read once, straight from the file into the array
    /// that is already there. Everything is checked first; on an error
    /// nothing has changed (except for a device error of candle, or a file
    /// truncated while the load reads it, after the checks, which leave
    /// the leaves before it loaded). With [`Load::allow_missing`](super::Load::allow_missing) a leaf
    /// the file lacks keeps its value and is listed in
    /// [`LoadReport::missing`].
    ///
    /// Static fields are loaded too, as a load by type takes them: where
    /// the file's TreeDef holds a static field (an optimizer state's step
    /// `count`) whose value differs from the tree's, the value is rebuilt
    /// with the file's (static fields are reached only through
    /// `Unflatten`): each leaf is then read into a new array (a candle
    /// variable is written in place and kept), and the tree is replaced.
    /// Its `#[pytree(skip)]` fields would be `Default` then: such a field
    /// is an error naming it, unless it is `#[pytree(skip(recomputed))]`
    /// (an optimizer's mask). A static field's value of another type in
    /// the file is an error naming the field and both values.
    ///
    /// ```
    /// use pytree_std::checkpoint::{Load, Save};
    /// let file = Load::new().from_bytes(Save::new().to_bytes(&vec![1.0f32, 2.0])?)?;
    /// let mut t = vec![0.0f32, 0.0];
    /// let report = file.load_into(&mut t)?;
    /// assert_eq!((t, report.loaded), (vec![1.0, 2.0], vec!["0".to_string(), "1".to_string()]));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn load_into<T>(&self, tree: &mut T) -> Result<LoadReport, Error>
    where
        T: Flatten<Std> + Unflatten<Std>,
        T::Leaf: TensorLeaf,
    {
        let (pairs, report, wants) = {
            let leaves = crate::paths::leaves_with_path(&*tree);
            let wants = self.wants_of::<T::Leaf>(&leaves, false)?;
            let (pairs, report) = self.pair(&wants, self.options.allow_missing, None)?;
            (pairs, report, wants)
        };
        let paths: Vec<&KeyPath> = wants.iter().map(|w| &w.path).collect();
        // The data is checked before anything is written, so that on an
        // error nothing has changed: a `bool` byte must be 0 or 1 (the
        // only data a leaf whose dtype and shape match can refuse), and
        // the files must still hold what their headers said.
        for (pair, path) in pairs.iter().zip(&paths) {
            if let Some(i) = *pair {
                let view = self.view(&self.entries[i]);
                if view.dtype == DType::Bool {
                    let data = view.data().map_err(|e| e.under(path))?;
                    if data.iter().any(|&b| b > 1) {
                        return Err((leaf_bytes::bad_data::<bool>(data.len())).under(path));
                    }
                }
            }
        }
        self.verify_not_truncated()?;
        if let Some((def, names)) = self.restore_statics(&crate::walk::structure(&*tree))? {
            // Static fields are reached only through `Unflatten`: the
            // value is rebuilt with the file's, around leaves read from the
            // file (a candle variable is written in place and kept).
            refuse_skipped_fields(
                &def,
                &format!(
                    "restoring the file's static fields ({}) in place",
                    names.join(", ")
                ),
                "set those fields to the file's values before the load \
                 (Checkpoint::treedef shows them), or leave the field out of the type",
            )?;
            let mut out = Vec::with_capacity(wants.len());
            for ((leaf, pair), want) in crate::walk::leaves(&*tree).iter().zip(pairs).zip(&wants) {
                out.push(match pair {
                    Some(i) => self
                        .with_view(i, want.expected.dtype(), want.transposed, |view| {
                            T::Leaf::reload(leaf, view)
                        })
                        .map_err(|e| e.under(&want.path))?,
                    None => <T::Leaf as ByteLeaf>::to_owned_leaf(leaf),
                });
            }
            *tree = crate::walk::unflatten(&def, out)?;
            return Ok(report);
        }
        for ((slot, pair), want) in crate::walk::leaves_mut(tree)
            .into_iter()
            .zip(pairs)
            .zip(&wants)
        {
            if let Some(i) = pair {
                self.with_view(i, want.expected.dtype(), want.transposed, |view| {
                    T::Leaf::copy_from_tensor(slot, view)
                })
                .map_err(|e| e.under(&want.path))?;
            }
        }
        Ok(report)
    }

    /// Every tensor of the file (after the renames) as a map from its name
    /// to a leaf, in the order of the file: a flat state dict, for a file
    /// that holds no TreeDef (written by Python's `safetensors`, say).
    /// Every tensor of another dtype than `L`'s is listed in the error.
    ///
    /// ```
    /// use pytree_std::ndarray::ArrayD;
    /// let bytes = pytree_std::checkpoint::Save::new().to_bytes(&(vec![1.0f32, 2.0], 3.0f32))?;
    /// let file = pytree_std::checkpoint::Load::new().from_bytes(bytes)?;
    /// let map = file.load_map::<ArrayD<f32>>()?;
    /// assert_eq!(map.keys().collect::<Vec<_>>(), ["0.0", "0.1", "1"]);
    /// assert_eq!(map["1"].shape(), [0usize; 0]);
    /// let err = file.load_map::<f64>().unwrap_err();
    /// assert!(err.to_string().starts_with("tree structures differ (3 mismatches found)"));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn load_map<L: TensorLeaf>(&self) -> Result<IndexMap<String, L>, Error> {
        let renamed = self.renamed(None);
        let mut problems = Vec::new();
        let mut out: IndexMap<String, L> = IndexMap::with_capacity(renamed.len());
        for (entry, name) in self.entries.iter().zip(renamed) {
            let path = KeyPath::root().key(name.to_string());
            if out.contains_key(name.as_ref()) {
                problems.push(
                    Error::custom(format!(
                        "two tensors of the file are named `{name}` after renaming"
                    ))
                    .under(&path),
                );
                continue;
            }
            match L::from_tensor(&self.view(entry), None) {
                Ok(leaf) => {
                    out.insert(name.into_owned(), leaf);
                }
                Err(e) => problems.push(e.under(&path)),
            }
        }
        combine(problems)?;
        Ok(out)
    }
}

impl Checkpoint {
    /// Pairs each wanted leaf with an entry of the file, checking dtypes
    /// and shapes; every problem is listed.
    fn pair(
        &self,
        wants: &[Want],
        allow_missing: bool,
        extra_prefix: Option<&str>,
    ) -> Result<(Vec<Option<usize>>, LoadReport), Error> {
        let renamed = self.renamed(extra_prefix);
        let mut problems = Vec::new();
        let mut index: HashMap<&str, usize> = HashMap::with_capacity(renamed.len());
        for (i, name) in renamed.iter().enumerate() {
            if let Some(&j) = index.get(name.as_ref()) {
                problems.push(Error::custom(format!(
                    "tensors `{}` and `{}` of the file are both named `{name}` after renaming",
                    self.entries[j].name, self.entries[i].name
                )));
            } else {
                index.insert(name, i);
            }
        }
        let mut used = vec![false; renamed.len()];
        let mut pairs = Vec::with_capacity(wants.len());
        let mut report = LoadReport::default();
        for want in wants {
            let found = index.get(want.name.as_str()).copied().or_else(|| {
                let (_, to) = self
                    .options
                    .ties
                    .iter()
                    .find(|(name, _)| *name == want.name)?;
                index.get(to.as_str()).copied()
            });
            match found.as_ref() {
                Some(&i) => {
                    used[i] = true;
                    let entry = &self.entries[i];
                    if want
                        .expected
                        .accepts(entry, self.options.convert_floats, want.transposed)
                    {
                        report.loaded.push(want.name.clone());
                        pairs.push(Some(i));
                    } else {
                        problems.push(
                            Error::custom(format!(
                                "tensor `{}`: expected {}, found {}",
                                entry.name,
                                want.expected.describe(want.transposed),
                                entry.signature()
                            ))
                            .under(&want.path),
                        );
                        pairs.push(None);
                    }
                }
                None => {
                    if !allow_missing {
                        problems.push(
                            Error::custom(format!(
                                "tensor `{}`: expected {}, found nothing in the file",
                                want.name,
                                want.expected.describe(want.transposed)
                            ))
                            .under(&want.path),
                        );
                    }
                    report.missing.push(want.name.clone());
                    pairs.push(None);
                }
            }
        }
        for (i, entry) in self.entries.iter().enumerate() {
            if used[i] {
                continue;
            }
            if !self.options.allow_unused {
                let renamed_note = if renamed[i] != entry.name.as_str() {
                    format!(", renamed `{}`,", renamed[i])
                } else {
                    String::new()
                };
                problems.push(Error::custom(format!(
                    "tensor `{}` ({}){renamed_note} of the file is not a leaf of the tree",
                    entry.name,
                    entry.signature()
                )));
            }
            report.unused.push(entry.name.clone());
        }
        if !self.options.transposed.is_empty() {
            let leaves: std::collections::HashSet<&str> =
                wants.iter().map(|w| w.name.as_str()).collect();
            problems.extend(self.transposed_not_read(|name| leaves.contains(name)));
        }
        combine(problems)?;
        Ok((pairs, report))
    }

    /// [`load`](Checkpoint::load) by the tensors' names (a file without
    /// a TreeDef, or [`Load::by_names`](super::Load::by_names)); see there.
    fn load_by_names<T>(&self) -> Result<(T, LoadReport), Error>
    where
        T: Unflatten<Std>,
        T::Leaf: TensorLeaf,
    {
        let why = match self.metadata.get(TREEDEF_ERROR_KEY) {
            _ if self.options.by_names => {
                "the load reads the file by its names (Load::by_names), not by a TreeDef".into()
            }
            Some(reason) => {
                format!("the file holds no TreeDef (it was saved without one: {reason})")
            }
            None => "the file holds no TreeDef (it was not written by this crate)".into(),
        };
        let prefix = self
            .metadata
            .get(PREFIX_KEY)
            .filter(|_| self.options.renames.is_empty());
        let names: Vec<String> = self
            .renamed(prefix.map(String::as_str))
            .into_iter()
            .map(Cow::into_owned)
            .collect();
        let mut source = NameSource::new(self, names, &self.options.ties, why)?;
        let tree = T::unflatten_from(&mut source)?;
        let report = source.finish(self.options.allow_unused)?;
        Ok((tree, report))
    }

    /// The leaf paths of a TreeDef read from the file, once it is known to
    /// fit the file: no more leaves than tensors, and no more key-path
    /// entries than the tensors' names have characters (each entry is at
    /// least one), so that the paths cost memory proportional to the
    /// header.
    fn leaf_paths_of(&self, def: &TreeDef) -> Result<Vec<KeyPath>, Error> {
        self.verify_fits(def)?;
        let budget: usize = self
            .entries
            .iter()
            .map(|e| e.name.len())
            .chain(self.options.ties.iter().map(|(name, _)| name.len()))
            .sum();
        // (leaves below, key-path entries summed over those leaves)
        let (_, entries) = def.fold(
            0..def.num_leaves(),
            |_| (1usize, 0usize),
            |node, kids| {
                let step = match node {
                    NodeView::Struct { schema, .. } if schema.variant().is_some() => 2,
                    NodeView::Some | NodeView::None | NodeView::Leaf => 0,
                    _ => 1,
                };
                kids.iter().fold((0usize, 0usize), |(l, s), &(kl, ks)| {
                    (
                        l.saturating_add(kl),
                        s.saturating_add(ks).saturating_add(kl.saturating_mul(step)),
                    )
                })
            },
        )?;
        if entries > budget {
            return Err(file_error(
                &self.origin,
                "the TreeDef in the metadata names its leaves with more key-path entries than the \
                 file's tensor names have characters: it does not describe this file",
            ));
        }
        def.leaf_paths()
    }

    /// An error unless a TreeDef read from the file has no more leaves
    /// than the file has tensors and the load ties names to them (what
    /// bounds the work of reading it).
    fn verify_fits(&self, def: &TreeDef) -> Result<(), Error> {
        let tensors = self.entries.len();
        let ties = self.options.ties.len();
        if def.num_leaves() > tensors.saturating_add(ties) {
            let tied = if ties > 0 {
                format!(" and the load ties {ties} names to them")
            } else {
                String::new()
            };
            return Err(file_error(
                &self.origin,
                format!(
                    "the TreeDef in the metadata has {} leaves, the file holds {tensors} \
                     tensors{tied} (a file saved with Save::tie loads with the same Load::tie)",
                    def.num_leaves()
                ),
            ));
        }
        Ok(())
    }

    /// `def` (a template's structure) with the static fields the file's
    /// TreeDef holds where they differ, and their names; `None` when the
    /// file holds none that differs (or no TreeDef: written elsewhere, or
    /// with a static field serde could not write).
    fn restore_statics(&self, def: &TreeDef) -> Result<Option<(TreeDef, Vec<String>)>, Error> {
        if !statics::any(def)? {
            return Ok(None);
        }
        let Some(file_def) = self.treedef()? else {
            return Ok(None);
        };
        self.verify_fits(&file_def)?;
        let prefix = self.metadata.get(PREFIX_KEY).map_or("", String::as_str);
        let renames = &self.options.renames;
        statics::restored(def, &file_def, |name| {
            let in_file = format!("{prefix}{name}");
            if renames.is_empty() {
                in_file
            } else {
                renames.apply(&in_file).into_owned()
            }
        })
    }

    /// An error unless every file read with positioned reads still holds
    /// the bytes its header described (checked before a load in place
    /// writes anything; a file truncated while the load runs makes the
    /// read that misses its bytes an error instead).
    fn verify_not_truncated(&self) -> Result<(), Error> {
        for shard in &self.shards {
            if let Storage::File { file, len } = &shard.storage {
                let now = file
                    .metadata()
                    .map_err(|e| {
                        file_error(&shard.origin, format!("cannot read its metadata: {e}"))
                    })?
                    .len();
                if now < *len {
                    return Err(file_error(
                        &shard.origin,
                        format!(
                            "{now} bytes now, {len} when it was opened: truncated since, \
                             nothing was loaded"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// What each leaf of a template asks for: its signature, or with
    /// `any_shape` its dtype only.
    fn wants_of<L: TensorLeaf>(
        &self,
        leaves: &[(KeyPath, L::Ref<'_>)],
        any_shape: bool,
    ) -> Result<Vec<Want>, Error> {
        let names = names_of(leaves.iter().map(|(p, _)| p), "", &Renames::new())?;
        let mut problems = Vec::new();
        let mut wants = Vec::with_capacity(leaves.len());
        for ((path, leaf), name) in leaves.iter().zip(names) {
            match <L as ByteLeaf>::signature(leaf) {
                Ok(sig) => wants.push(Want {
                    path: path.clone(),
                    transposed: self.is_transposed(&name),
                    name,
                    expected: if any_shape {
                        Expected::DType(Some(sig.dtype()))
                    } else {
                        Expected::Signature(sig)
                    },
                }),
                Err(e) => problems.push(e.under(path)),
            }
        }
        combine(problems)?;
        Ok(wants)
    }
}
