//! An opened checkpoint, [`Checkpoint`]: one file or the shards of one
//! (files read with positioned reads, memory maps, or bytes in memory),
//! and what inspecting it needs: its tensors by name, its metadata, its
//! TreeDef, and each tensor read as a leaf. Opening it is [`Load`]'s
//! (module `open`); loading trees from it is module `load`'s.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use pytree_core::{DType, Error, Signature, TreeDef};

use super::convert;
use super::format::{self, Entry, TREEDEF_KEY};
use super::leaf::{TensorLeaf, TensorView};
use super::naming::Renames;
use super::options::Load;
use super::storage::{file_error, Storage, TensorData};

/// An opened checkpoint: the header checked, the data in a file (read
/// with positioned reads, each tensor straight into its destination), in
/// a memory map ([`Load::open_mapped`]) or in memory, opened by
/// [`Load::open`], [`Load::from_bytes`] or [`Load::open_mapped`] with the
/// options of the loads from it. Inspect it (its tensors by name, its
/// metadata, its TreeDef), or load trees from it: by type
/// ([`load`](Checkpoint::load)), against a template
/// ([`load_like`](Checkpoint::load_like)), in place
/// ([`load_into`](Checkpoint::load_into)), or as a flat map of every
/// tensor ([`load_map`](Checkpoint::load_map)).
///
/// A file is read as it is on disk when each tensor is read: if another
/// program truncates it meanwhile, the load is an error naming the tensor
/// it could not read (a memory map would crash the process with SIGBUS
/// instead: [`Load::open_mapped`] is `unsafe` for that reason);
/// [`save`](fn@super::save) itself never writes over a file in place.
///
/// ```
/// use pytree_std::checkpoint::{Load, Save};
/// use pytree_std::ndarray::{arr0, arr1, ArrayD};
/// let tree = (arr0(1.0f32).into_dyn(), arr1(&[2.0f32; 3]).into_dyn());
/// let bytes = Save::new().metadata("step", "10").to_bytes(&tree)?;
/// let file = Load::new().from_bytes(bytes)?;
/// let names: Vec<_> = file.tensors().map(|t| format!("{} {}", t.name(), t.signature())).collect();
/// assert_eq!(names, ["0 f32[]", "1 f32[3]"]);
/// assert_eq!(file.metadata()["step"], "10");
/// assert_eq!(file.treedef()?.unwrap().to_string(), "(*, *)");
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub struct Checkpoint {
    pub(super) shards: Vec<Shard>,
    /// Every tensor, shard after shard, each in the order of its data.
    pub(super) entries: Vec<Entry>,
    /// Index into `entries` by name.
    pub(super) by_name: HashMap<String, usize>,
    pub(super) metadata: BTreeMap<String, String>,
    pub(super) origin: String,
    pub(super) options: Load,
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

impl Checkpoint {
    pub(super) fn new(storage: Storage, origin: String, options: Load) -> Result<Self, Error> {
        options.validate()?;
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
    pub(super) fn from_shards(
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
    /// let file = pytree_std::checkpoint::Load::new().from_bytes(pytree_std::checkpoint::Save::new().to_bytes(&[1u8, 2])?)?;
    /// assert_eq!(file.num_shards(), 1);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn num_shards(&self) -> usize {
        self.shards.len()
    }

    /// The number of tensors.
    ///
    /// ```
    /// let file = pytree_std::checkpoint::Load::new().from_bytes(pytree_std::checkpoint::Save::new().to_bytes(&[1u8, 2])?)?;
    /// assert_eq!(file.len(), 2);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the file holds no tensor.
    ///
    /// ```
    /// let file = pytree_std::checkpoint::Load::new().from_bytes(pytree_std::checkpoint::Save::new().to_bytes(&Vec::<f32>::new())?)?;
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
    /// let file = pytree_std::checkpoint::Load::new().from_bytes(pytree_std::checkpoint::Save::new().to_bytes(&[1u8, 2])?)?;
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
    /// let file = pytree_std::checkpoint::Load::new().from_bytes(pytree_std::checkpoint::Save::new().to_bytes(&[1u8, 2])?)?;
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
    /// let file = pytree_std::checkpoint::Load::new().from_bytes(pytree_std::checkpoint::Save::new().to_bytes(&[1u8, 2])?)?;
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
    /// let file = pytree_std::checkpoint::Load::new().from_bytes(pytree_std::checkpoint::Save::new().to_bytes(&[1u8])?)?;
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
    /// let file = pytree_std::checkpoint::Load::new().from_bytes(pytree_std::checkpoint::Save::new().to_bytes(&(1u8, 2u8))?)?;
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

    pub(super) fn view<'a>(&'a self, e: &'a Entry) -> TensorView<'a> {
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
    /// two are floats of different widths, else as it is in the file; and
    /// transposed when `transposed` ([`Load::transpose`]: a 2-d tensor
    /// `[a, b]` read as `[b, a]`, another rank an error naming it).
    pub(super) fn with_view<R>(
        &self,
        i: usize,
        wanted: Option<DType>,
        transposed: bool,
        f: impl FnOnce(&TensorView<'_>) -> Result<R, Error>,
    ) -> Result<R, Error> {
        let view = self.view(&self.entries[i]);
        let converted = match wanted.filter(|_| self.options.convert_floats) {
            Some(to) => convert::floats(&view, to)?.map(|bytes| (to, bytes)),
            None => None,
        };
        let view = match &converted {
            Some((to, bytes)) => TensorView {
                dtype: *to,
                data: TensorData::Memory(bytes),
                ..view
            },
            None => view,
        };
        if !transposed {
            return f(&view);
        }
        let &[rows, cols] = view.shape else {
            return Err(Error::custom(format!(
                "tensor `{}` ({}): Load::transpose reads a 2-d tensor",
                view.name,
                view.signature()
            )));
        };
        let width = view.dtype.size_in_bytes().unwrap_or(1);
        let bytes = convert::transpose_2d(&view.data()?, width, rows, cols);
        let shape = [cols, rows];
        f(&TensorView {
            shape: &shape,
            data: TensorData::Memory(&bytes),
            ..view
        })
    }

    /// True when the tree's leaf `name` is stored transposed
    /// ([`Load::transpose`]).
    pub(super) fn is_transposed(&self, name: &str) -> bool {
        self.options.transposed.contains(name)
    }

    /// An error for each name of [`Load::transpose`] that no leaf of the
    /// load has (`is_leaf` says which names are).
    pub(super) fn transposed_not_read(&self, is_leaf: impl Fn(&str) -> bool) -> Vec<Error> {
        self.options
            .transposed
            .iter()
            .filter(|name| !is_leaf(name))
            .map(|name| {
                Error::custom(format!(
                    "Load::transpose names `{name}`, which is no leaf of the tree"
                ))
            })
            .collect()
    }

    /// The file's name for each of its entries after the renames (or,
    /// with none, `extra_prefix` stripped).
    pub(super) fn renamed(&self, extra_prefix: Option<&str>) -> Vec<Cow<'_, str>> {
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

    /// Entry `i` as the leaf `name` of type `L` (converted when
    /// [`Load::convert_floats`] allows, transposed when
    /// [`Load::transpose`] names it); another dtype is an error.
    pub(super) fn read_leaf<L: TensorLeaf>(&self, i: usize, name: &str) -> Result<L, Error> {
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
        self.with_view(
            i,
            self.dtype_by_type::<L>(i),
            self.is_transposed(name),
            |view| L::from_tensor(view, None),
        )
    }

    /// The dtype a leaf of type `L` loaded by type reads entry `i` as:
    /// `L`'s own, or, for a leaf type that leaves it open and a float
    /// tensor, the target of [`Load::convert_floats_to`]; `None` for the
    /// tensor's own.
    pub(super) fn dtype_by_type<L: TensorLeaf>(&self, i: usize) -> Option<DType> {
        L::fixed_dtype().or_else(|| {
            let float = self
                .entries
                .get(i)
                .is_some_and(|e| convert::is_float(e.dtype));
            self.options.float_dtype.filter(|_| float)
        })
    }
}
