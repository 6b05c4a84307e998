//! An opened checkpoint, [`Checkpoint`]: one file or the shards of one
//! (files read with positioned reads, memory maps, or bytes in memory),
//! its tensors by name, and loading trees from it (by type, against a
//! template, in place, as a flat map).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use indexmap::IndexMap;
use pytree_core::{DType, Error, Flatten, KeyPath, NodeView, Signature, TreeDef, Unflatten};

use super::by_names::NameSource;
use super::convert;
use super::format::{self, file_error, Entry};
use super::leaf;
use super::load::{Load, LoadReport};
use super::naming::{combine, names_of, Renames};
use super::statics;
use super::storage::{Storage, TensorData};
use super::{TensorLeaf, TensorView, PREFIX_KEY, TREEDEF_ERROR_KEY, TREEDEF_KEY};
use crate::Std;

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

/// An opened checkpoint: the header checked, the data in a file (read
/// with positioned reads, each tensor straight into its destination), in
/// a memory map ([`Load::open_mapped`]) or in memory. Read its tensors by
/// name, or load trees from it.
///
/// A file is read as it is on disk when each tensor is read: if another
/// program truncates it meanwhile, the load is an error naming the tensor
/// it could not read (a memory map would crash the process with SIGBUS
/// instead: [`Load::open_mapped`] is `unsafe` for that reason);
/// [`save`](fn@super::save) itself never writes over a file in place.
///
/// ```
/// use pytree_std::checkpoint::Checkpoint;
/// use pytree_std::ndarray::{arr0, arr1, ArrayD};
/// let tree = (arr0(1.0f32).into_dyn(), arr1(&[2.0f32; 3]).into_dyn());
/// let bytes = pytree_std::checkpoint::Save::new().metadata("step", "10").to_bytes(&tree)?;
/// let file = Checkpoint::from_bytes(bytes)?;
/// let names: Vec<_> = file.tensors().map(|t| format!("{} {}", t.name(), t.signature())).collect();
/// assert_eq!(names, ["0 f32[]", "1 f32[3]"]);
/// assert_eq!(file.metadata()["step"], "10");
/// assert_eq!(file.treedef()?.unwrap().to_string(), "(*, *)");
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub struct Checkpoint {
    shards: Vec<Shard>,
    /// Every tensor, shard after shard, each in the order of its data.
    entries: Vec<Entry>,
    /// Index into `entries` by name.
    by_name: HashMap<String, usize>,
    metadata: BTreeMap<String, String>,
    origin: String,
    options: Load,
}

/// One file of a checkpoint.
pub(crate) struct Shard {
    pub(crate) storage: Storage,
    /// Where its data starts.
    pub(crate) data_start: usize,
    /// Its path (or `<bytes>`), for the messages.
    pub(crate) origin: String,
}

impl std::fmt::Debug for Checkpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkpoint")
            .field("origin", &self.origin)
            .field("shards", &self.shards.len())
            .field("tensors", &self.entries.len())
            .field("metadata", &self.metadata)
            .finish()
    }
}

/// One leaf a load asks for.
struct Want {
    path: KeyPath,
    name: String,
    /// What the tensor must be: a whole signature (a template's leaf), or
    /// a dtype (a leaf type's, loading by type; `None` for any).
    expected: Expected,
}

enum Expected {
    Signature(Signature),
    DType(Option<DType>),
}

impl Expected {
    fn describe(&self) -> String {
        match self {
            Expected::Signature(s) => s.to_string(),
            Expected::DType(Some(d)) => format!("a {d} tensor"),
            Expected::DType(None) => "a tensor".into(),
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
    /// float of another width that is converted to it.
    fn accepts(&self, found: &Entry, convert: bool) -> bool {
        let dtype_ok = |want: DType| {
            want == found.dtype || (convert && convert::convertible(found.dtype, want))
        };
        match self {
            Expected::Signature(s) => dtype_ok(s.dtype()) && s.shape() == found.shape.as_slice(),
            Expected::DType(Some(d)) => dtype_ok(*d),
            Expected::DType(None) => true,
        }
    }
}

impl Checkpoint {
    /// Opens the file at `path` with the default [`Load`] options.
    ///
    /// ```
    /// let err = pytree_std::checkpoint::Checkpoint::open("/no/such/file.safetensors").unwrap_err();
    /// assert!(err.to_string().starts_with("at <root>: safetensors file /no/such/file.safetensors: cannot open"));
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<Self, Error> {
        Load::new().open(path)
    }

    /// Reads a file held in memory with the default [`Load`] options.
    ///
    /// ```
    /// let err = pytree_std::checkpoint::Checkpoint::from_bytes(vec![1, 2, 3]).unwrap_err();
    /// assert_eq!(err.to_string(), "at <root>: safetensors file <bytes>: 3 bytes, shorter than \
    ///     the 8-byte header length (truncated or not a safetensors file)");
    /// ```
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Self, Error> {
        Load::new().from_bytes(bytes)
    }

    pub(crate) fn new(storage: Storage, origin: String, options: Load) -> Result<Self, Error> {
        options.check()?;
        let header = format::parse(&storage, &origin, options.max_header_bytes)?;
        Ok(Checkpoint {
            shards: vec![Shard {
                storage,
                data_start: header.data_start,
                origin: origin.clone(),
            }],
            entries: header.entries,
            by_name: header.by_name,
            metadata: header.metadata,
            origin,
            options,
        })
    }

    /// A checkpoint of several files whose tensors were checked against
    /// an index: `entries` name their shard, each name once; the metadata
    /// is the first shard's.
    pub(crate) fn from_shards(
        shards: Vec<Shard>,
        entries: Vec<Entry>,
        metadata: BTreeMap<String, String>,
        origin: String,
        options: Load,
    ) -> Self {
        let by_name = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.name.clone(), i))
            .collect();
        Checkpoint {
            shards,
            entries,
            by_name,
            metadata,
            origin,
            options,
        }
    }

    /// The number of files: 1, or the shards of a sharded checkpoint.
    ///
    /// ```
    /// let file = pytree_std::checkpoint::Checkpoint::from_bytes(pytree_std::checkpoint::to_bytes(&[1u8, 2])?)?;
    /// assert_eq!(file.num_shards(), 1);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn num_shards(&self) -> usize {
        self.shards.len()
    }

    /// The number of tensors.
    ///
    /// ```
    /// let file = pytree_std::checkpoint::Checkpoint::from_bytes(pytree_std::checkpoint::to_bytes(&[1u8, 2])?)?;
    /// assert_eq!(file.len(), 2);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the file holds no tensor.
    ///
    /// ```
    /// let file = pytree_std::checkpoint::Checkpoint::from_bytes(pytree_std::checkpoint::to_bytes(&Vec::<f32>::new())?)?;
    /// assert!(file.is_empty());
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The tensors' names as in the file, in the order of their data
    /// (shard after shard).
    ///
    /// ```
    /// let file = pytree_std::checkpoint::Checkpoint::from_bytes(pytree_std::checkpoint::to_bytes(&[1u8, 2])?)?;
    /// assert_eq!(file.names().collect::<Vec<_>>(), ["0", "1"]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn names(&self) -> impl Iterator<Item = &str> + '_ {
        self.entries.iter().map(|e| e.name.as_str())
    }

    /// Every tensor, in the order of their data (each read when asked:
    /// [`TensorView::data`]).
    ///
    /// ```
    /// let file = pytree_std::checkpoint::Checkpoint::from_bytes(pytree_std::checkpoint::to_bytes(&[1u8, 2])?)?;
    /// let bytes: Vec<Vec<u8>> = file.tensors().map(|t| t.data().map(|d| d.to_vec())).collect::<Result<_, _>>()?;
    /// assert_eq!(bytes, [[1], [2]]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn tensors(&self) -> impl Iterator<Item = TensorView<'_>> + '_ {
        self.entries.iter().map(|e| self.view(e))
    }

    /// The tensor of this name in the file, if there is one.
    ///
    /// ```
    /// let file = pytree_std::checkpoint::Checkpoint::from_bytes(pytree_std::checkpoint::to_bytes(&[1u8, 2])?)?;
    /// assert_eq!(file.tensor("1").map(|t| t.data_in_memory()), Some(Some(&[2u8][..])));
    /// assert!(file.tensor("2").is_none());
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn tensor(&self, name: &str) -> Option<TensorView<'_>> {
        self.by_name.get(name).map(|&i| self.view(&self.entries[i]))
    }

    /// The header's `__metadata__` (string to string), this crate's
    /// `pytree.*` entries included.
    ///
    /// ```
    /// let file = pytree_std::checkpoint::Checkpoint::from_bytes(pytree_std::checkpoint::to_bytes(&[1u8])?)?;
    /// assert!(file.metadata().contains_key(pytree_std::checkpoint::TREEDEF_KEY));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn metadata(&self) -> &BTreeMap<String, String> {
        &self.metadata
    }

    /// The TreeDef saved in the metadata: `None` when the file has none
    /// (written by another program, or with a static field serde cannot
    /// write); an error when it is there but cannot be read.
    ///
    /// ```
    /// let file = pytree_std::checkpoint::Checkpoint::from_bytes(pytree_std::checkpoint::to_bytes(&(1u8, 2u8))?)?;
    /// assert_eq!(file.treedef()?.map(|d| d.to_string()), Some("(*, *)".to_string()));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn treedef(&self) -> Result<Option<TreeDef>, Error> {
        let Some(json) = self.metadata.get(TREEDEF_KEY) else {
            return Ok(None);
        };
        serde_json::from_str::<TreeDef>(json)
            .map(Some)
            .map_err(|e| {
                file_error(
                    &self.origin,
                    format!("metadata `{TREEDEF_KEY}` is not a TreeDef: {e}"),
                )
            })
    }

    fn view<'a>(&'a self, e: &'a Entry) -> TensorView<'a> {
        // In bounds: `parse` checked that the entries tile the data that
        // follows the header exactly (`data` gives an empty slice rather
        // than a panic otherwise).
        let data = match self.shards.get(e.shard) {
            Some(s) => s
                .storage
                .data((s.data_start + e.begin) as u64, e.end - e.begin, &s.origin),
            None => TensorData::Memory(&[]),
        };
        TensorView {
            name: &e.name,
            dtype: e.dtype,
            shape: &e.shape,
            data,
        }
    }

    /// Calls `f` with entry `i` as a leaf of dtype `wanted` reads it:
    /// converted to `wanted` when [`Load::convert_floats`] is on and the
    /// two are floats of different widths, else as it is in the file.
    fn with_view<R>(
        &self,
        i: usize,
        wanted: Option<DType>,
        f: impl FnOnce(&TensorView<'_>) -> Result<R, Error>,
    ) -> Result<R, Error> {
        let view = self.view(&self.entries[i]);
        let converted = match wanted.filter(|_| self.options.convert_floats) {
            Some(to) => convert::floats(&view, to)?.map(|bytes| (to, bytes)),
            None => None,
        };
        match converted {
            Some((to, bytes)) => f(&TensorView {
                dtype: to,
                data: TensorData::Memory(&bytes),
                ..view
            }),
            None => f(&view),
        }
    }

    /// The file's name for each of its entries after the renames (or,
    /// with none, `extra_prefix` stripped).
    fn renamed(&self, extra_prefix: Option<&str>) -> Vec<Cow<'_, str>> {
        let renames: &Renames = &self.options.renames;
        self.entries
            .iter()
            .map(|e| {
                if !renames.is_empty() {
                    return renames.apply(&e.name);
                }
                if let Some(rest) = extra_prefix.and_then(|p| e.name.strip_prefix(p)) {
                    return Cow::Owned(rest.to_string());
                }
                Cow::Borrowed(e.name.as_str())
            })
            .collect()
    }

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
                    if want.expected.accepts(entry, self.options.convert_floats) {
                        report.loaded.push(want.name.clone());
                        pairs.push(Some(i));
                    } else {
                        problems.push(
                            Error::custom(format!(
                                "tensor `{}`: expected {}, found {}",
                                entry.name,
                                want.expected.describe(),
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
                                want.expected.describe()
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
        combine(problems)?;
        Ok((pairs, report))
    }

    /// Loads a `T` by its type alone; see [`load`](fn@super::load). The
    /// prefix the file was saved with is stripped (unless renames are
    /// given).
    ///
    /// ```
    /// let file = pytree_std::checkpoint::Checkpoint::from_bytes(pytree_std::checkpoint::to_bytes(&vec![1u8, 2])?)?;
    /// assert_eq!(file.load::<Vec<u8>>()?, [1, 2]);
    /// let err = file.load::<Vec<u16>>().unwrap_err();
    /// assert_eq!(err.to_string(), "tree structures differ (2 mismatches found)
    ///   at [0]: tensor `0`: expected a u16 tensor, found u8[]
    ///   at [1]: tensor `1`: expected a u16 tensor, found u8[]");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn load<T>(&self) -> Result<T, Error>
    where
        T: Unflatten<Std>,
        T::Leaf: TensorLeaf,
    {
        let Some(def) = self.treedef()? else {
            return self.load_by_names_with_report().map(|(tree, _)| tree);
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
                path,
                name,
                expected: Expected::DType(T::Leaf::fixed_dtype()),
            })
            .collect();
        let (pairs, _) = self.pair(&wants, false, prefix.map(String::as_str))?;
        let mut leaves = Vec::with_capacity(wants.len());
        for (want, pair) in wants.iter().zip(pairs) {
            let Some(i) = pair else {
                return Err(Error::custom("missing tensor").under(&want.path));
            };
            let leaf = self.with_view(i, self.dtype_by_type::<T::Leaf>(i), |view| {
                T::Leaf::from_tensor(view, None)
            });
            leaves.push(leaf.map_err(|e| e.under(&want.path))?);
        }
        crate::unflatten(&def, leaves)
    }

    /// [`load`](Checkpoint::load) of a file that holds no TreeDef (one
    /// written by Python's `safetensors` or transformers), and what it
    /// did: the type fixes the structure; the names, after the renames,
    /// give each `Vec`'s length (`layers.0.…`, `layers.1.…`) and each
    /// `Option`; the tensors give the shapes. Strict: a tensor the type
    /// asks for and the file lacks, or (without
    /// [`Load::allow_unused`]) one the type never asks for, is an error;
    /// the report lists what was loaded and left unused. An enum variant,
    /// a static field or a map's keys, which names cannot say, are an
    /// error naming the place. [`load`](Checkpoint::load) does this for
    /// such a file.
    ///
    /// ```
    /// use pytree_std::checkpoint::{Load, Renames};
    /// use pytree_std::ndarray::{Array1, Array2};
    /// use pytree_std::PyTree;
    /// #[derive(PyTree, Debug)]
    /// struct Layer { w: Array2<f32>, b: Array1<f32> }
    /// #[derive(PyTree, Debug)]
    /// struct Net { layers: Vec<Layer> }
    /// // A file as Python's `safetensors` writes it: names, no TreeDef.
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
    /// let (net, report) = file.load_by_names_with_report::<Net>()?;
    /// assert_eq!((net.layers.len(), net.layers[2].w.dim()), (3, (2, 4)));
    /// assert!(report.is_complete());
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn load_by_names_with_report<T>(&self) -> Result<(T, LoadReport), Error>
    where
        T: Unflatten<Std>,
        T::Leaf: TensorLeaf,
    {
        let why = match self.metadata.get(TREEDEF_ERROR_KEY) {
            Some(reason) => format!("it was saved without one: {reason}"),
            None => "it was not written by this crate".into(),
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

    /// The file's name of entry `i`.
    pub(super) fn entry_name(&self, i: usize) -> &str {
        self.entries.get(i).map_or("", |e| e.name.as_str())
    }

    /// The dtype and shape of entry `i`.
    pub(super) fn entry_signature(&self, i: usize) -> Signature {
        self.entries
            .get(i)
            .map_or_else(|| Signature::new(DType::U8, Vec::new()), Entry::signature)
    }

    /// Entry `i` as a leaf of type `L` (converted when
    /// [`Load::convert_floats`] allows); another dtype is an error.
    pub(super) fn read_leaf<L: TensorLeaf>(&self, i: usize) -> Result<L, Error> {
        let Some(entry) = self.entries.get(i) else {
            return Err(Error::custom("no such tensor"));
        };
        let want = L::fixed_dtype();
        if let Some(d) = want {
            let ok = entry.dtype == d
                || (self.options.convert_floats && convert::convertible(entry.dtype, d));
            if !ok {
                return Err(Error::custom(format!(
                    "tensor `{}`: expected a {d} tensor, found {}",
                    entry.name,
                    entry.signature()
                )));
            }
        }
        self.with_view(i, self.dtype_by_type::<L>(i), |view| {
            L::from_tensor(view, None)
        })
    }

    /// The dtype a leaf of type `L` loaded by type reads entry `i` as:
    /// `L`'s own, or, for a leaf type that leaves it open and a float
    /// tensor, the target of [`Load::convert_floats_to`]; `None` for the
    /// tensor's own.
    fn dtype_by_type<L: TensorLeaf>(&self, i: usize) -> Option<DType> {
        L::fixed_dtype().or_else(|| {
            let float = self
                .entries
                .get(i)
                .is_some_and(|e| convert::is_float(e.dtype));
            self.options.float_dtype.filter(|_| float)
        })
    }

    /// The leaf paths of a TreeDef read from the file, once it is known to
    /// fit the file: no more leaves than tensors, and no more key-path
    /// entries than the tensors' names have characters (each entry is at
    /// least one), so that the paths cost memory proportional to the
    /// header.
    fn leaf_paths_of(&self, def: &TreeDef) -> Result<Vec<KeyPath>, Error> {
        self.check_fits(def)?;
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
    fn check_fits(&self, def: &TreeDef) -> Result<(), Error> {
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

    /// Loads a tree shaped like `like`; see [`load_like`](fn@super::load_like).
    ///
    /// ```
    /// let file = pytree_std::checkpoint::Checkpoint::from_bytes(pytree_std::checkpoint::to_bytes(&(1u8, 2u8))?)?;
    /// assert_eq!(file.load_like(&(0u8, 0u8))?, (1, 2));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn load_like<T>(&self, like: &T) -> Result<T, Error>
    where
        T: Unflatten<Std>,
        T::Leaf: TensorLeaf,
    {
        self.load_like_with_report(like).map(|(tree, _)| tree)
    }

    /// [`load_like`](Checkpoint::load_like), and what it did: a partial
    /// load ([`Load::allow_missing`], [`Load::allow_unused`]) says here
    /// which leaves kept the template's value and which tensors it
    /// skipped, so it cannot pass for a full one.
    ///
    /// ```
    /// use pytree_std::checkpoint::{Load, to_bytes};
    /// let file = Load::new().non_strict().from_bytes(to_bytes(&(1u8, 2u8))?)?;
    /// let (t, report) = file.load_like_with_report(&(0u8,))?;
    /// assert_eq!((t, report.is_complete()), ((1,), false));
    /// assert_eq!(report.unused, ["1"]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn load_like_with_report<T>(&self, like: &T) -> Result<(T, LoadReport), Error>
    where
        T: Unflatten<Std>,
        T::Leaf: TensorLeaf,
    {
        let def = crate::structure(like);
        let def = match self.restore_statics(&def)? {
            Some((restored, _)) => restored,
            None => def,
        };
        refuse_skipped_fields(
            &def,
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
                    .with_view(i, want.expected.dtype(), |view| {
                        T::Leaf::from_tensor(view, Some(leaf))
                    })
                    .map_err(|e| e.under(path))?,
                None => T::Leaf::to_owned_leaf(leaf),
            });
        }
        crate::unflatten(&def, out).map(|tree| (tree, report))
    }

    /// Loads into `tree`, in place; see [`load_into`](fn@super::load_into).
    ///
    /// ```
    /// let file = pytree_std::checkpoint::Checkpoint::from_bytes(pytree_std::checkpoint::to_bytes(&(1u8, 2u8))?)?;
    /// let mut t = (0u8, 0u8);
    /// file.load_into(&mut t)?;
    /// assert_eq!(t, (1, 2));
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
                        return Err((leaf::bad_data::<bool>(data.len())).under(path));
                    }
                }
            }
        }
        self.check_not_truncated()?;
        if let Some((def, names)) = self.restore_statics(&crate::structure(&*tree))? {
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
            for ((leaf, pair), want) in crate::leaves(&*tree).iter().zip(pairs).zip(&wants) {
                out.push(match pair {
                    Some(i) => self
                        .with_view(i, want.expected.dtype(), |view| T::Leaf::reload(leaf, view))
                        .map_err(|e| e.under(&want.path))?,
                    None => T::Leaf::to_owned_leaf(leaf),
                });
            }
            *tree = crate::unflatten(&def, out)?;
            return Ok(report);
        }
        for ((slot, pair), want) in crate::leaves_mut(tree).into_iter().zip(pairs).zip(&wants) {
            if let Some(i) = pair {
                self.with_view(i, want.expected.dtype(), |view| {
                    T::Leaf::copy_from_tensor(slot, view)
                })
                .map_err(|e| e.under(&want.path))?;
            }
        }
        Ok(report)
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
        self.check_fits(&file_def)?;
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
    fn check_not_truncated(&self) -> Result<(), Error> {
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

    /// Every tensor of the file (after the renames) as a map from its name
    /// to a leaf, in the order of the file: a flat state dict, for a file
    /// that holds no TreeDef (written by Python's `safetensors`, say).
    /// Every tensor of another dtype than `L`'s is listed in the error.
    ///
    /// ```
    /// use pytree_std::ndarray::ArrayD;
    /// let bytes = pytree_std::checkpoint::to_bytes(&(vec![1.0f32, 2.0], 3.0f32))?;
    /// let file = pytree_std::checkpoint::Checkpoint::from_bytes(bytes)?;
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
            match L::tensor_signature(leaf) {
                Ok(sig) => wants.push(Want {
                    path: path.clone(),
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
