//! Checkpoints by key path (feature `safetensors`): any pytree of tensor
//! leaves (ndarray arrays, candle tensors, numeric scalars as 0-d tensors)
//! saved to and loaded from a [`.safetensors`] file, the format of
//! Hugging Face, PyTorch, JAX and candle, readable by Python's
//! `safetensors` package.
//!
//! - **Names are key paths** in the PyTorch / Hugging Face convention
//!   ([`KeyStr::SIMPLE`]): the leaf at `.layers[0].w` is the tensor
//!   `layers.0.w` (a map key is written as it is, so a flat state dict,
//!   `BTreeMap<String, _>` with keys such as `"encoder.0.w"`, keeps its
//!   names). A leaf that has no name (a leaf at the root, or under an
//!   empty map key), a name that is `__metadata__` (the format's), and two
//!   leaves whose names are equal (`{"a.b": x, "a": {"b": y}}`) are
//!   errors naming their paths.
//! - **The structure travels with the file.** The [`TreeDef`] (with the
//!   static fields) is written to the header's `__metadata__` as
//!   `pytree.treedef`, so [`load`] rebuilds a value from its type alone;
//!   [`load_like`] reads against a template instead (equinox's `like`), and
//!   [`load_into`] writes into an existing tree. A TreeDef whose static
//!   fields serde cannot write (a user's enum) is left out, and the file
//!   loads against a template (see [`Save::require_treedef`]).
//! - **Loading checks names, dtypes and shapes** (against the template's
//!   leaves, or the leaf type's dtype and the field's rank when loading by
//!   type) and lists every missing, unused and mismatched tensor at once,
//!   each with its path, what was expected and what was found
//!   ([`ErrorKind::Mismatches`] when there
//!   are several). Nothing is changed on such an error.
//! - **Partial loading** for fine-tuning ([`Load`]): leaves the file lacks
//!   keep their value ([`Load::allow_missing`]), tensors no leaf asks for
//!   are skipped ([`Load::allow_unused`]), and names are renamed by prefix
//!   ([`Load::rename_prefix`]`("model.", "")`); [`LoadReport`] says what
//!   was loaded, missing and unused (PyTorch's `missing_keys` /
//!   `unexpected_keys`).
//! - **Reading is one copy**: the file is memory-mapped and each tensor
//!   copied once, from the map into its array (or, with [`load_into`],
//!   into the array that is already there).
//! - **A malformed or hostile file is an error**, never a panic or an
//!   allocation beyond the file's size: the header is at most 100 MB
//!   ([`Load::max_header_bytes`]), must be UTF-8 JSON, names appear once,
//!   dtypes are the format's, element counts and offsets are checked for
//!   overflow, the tensors must tile the data exactly, a `bool` byte must
//!   be 0 or 1, and a TreeDef read from the metadata must describe the
//!   file's tensors before anything is built from it.
//! - Data is written little-endian in C order, as the format says, to a
//!   temporary file beside the target that is then renamed over it, so a
//!   failed save or a crash of the process never leaves half a checkpoint,
//!   and a file that is memory-mapped elsewhere is not truncated under it.
//!   The file is not `fsync`ed (neither the `safetensors` package nor
//!   `torch.save` do): call `File::sync_all` on it if it must survive a
//!   power cut.
//!
//! ```
//! use pytree_std::checkpoint::{self, Load};
//! use pytree_std::ndarray::{Array1, Array2};
//! use pytree_std::PyTree;
//!
//! #[derive(PyTree, Clone, Debug, PartialEq)]
//! struct Linear { w: Array2<f32>, b: Array1<f32> }
//!
//! #[derive(PyTree, Clone, Debug, PartialEq)]
//! struct Mlp { layers: Vec<Linear>, #[pytree(static)] name: String }
//!
//! let layer = |i, o| Linear { w: Array2::from_elem((i, o), 0.5), b: Array1::zeros(o) };
//! let mlp = Mlp { layers: vec![layer(4, 3), layer(3, 2)], name: "mlp".into() };
//! let dir = std::env::temp_dir().join(format!("pytree-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let path = dir.join("mlp.safetensors");
//!
//! checkpoint::save(&path, &mlp)?;
//! let by_type: Mlp = checkpoint::load(&path)?;                 // the TreeDef comes from the file
//! let by_template = checkpoint::load_like(&path, &mlp)?;        // names, dtypes, shapes checked
//! assert_eq!((&by_type, &by_template), (&mlp, &mlp));
//! let names: Vec<String> = checkpoint::Checkpoint::open(&path)?.names().map(String::from).collect();
//! assert_eq!(names, ["layers.0.w", "layers.0.b", "layers.1.w", "layers.1.b"]);
//!
//! // A template of another shape: every difference, with its path.
//! let other = Mlp { layers: vec![layer(4, 3), layer(3, 5), layer(5, 1)], ..mlp.clone() };
//! let err = checkpoint::load_like(&path, &other).unwrap_err();
//! assert_eq!(err.to_string(), "\
//! tree structures differ (4 mismatches found)
//!   at .layers[1].w: tensor `layers.1.w`: expected f32[3,5], found f32[3,2]
//!   at .layers[1].b: tensor `layers.1.b`: expected f32[5], found f32[2]
//!   at .layers[2].w: tensor `layers.2.w`: expected f32[5,1], found nothing in the file
//!   at .layers[2].b: tensor `layers.2.b`: expected f32[1], found nothing in the file");
//!
//! // Fine-tuning: a deeper model takes the two layers from the file and
//! // keeps its new third layer as it is.
//! let mut deeper = Mlp { layers: vec![layer(4, 3), layer(3, 2), layer(2, 1)], ..mlp.clone() };
//! let report = Load::new().allow_missing().load_into(&path, &mut deeper)?;
//! assert_eq!(report.missing, ["layers.2.w", "layers.2.b"]);
//! assert_eq!(deeper.layers[1], mlp.layers[1]);
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok::<(), pytree_std::Error>(())
//! ```
//!
//! [`.safetensors`]: https://huggingface.co/docs/safetensors
//! [`KeyStr::SIMPLE`]: crate::KeyStr::SIMPLE

mod format;
mod leaf;

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use indexmap::IndexMap;
use pytree_core::{
    DType, Error, ErrorKind, Flatten, KeyPath, KeyStr, NodeView, Signature, TreeDef, Unflatten,
};

pub use self::format::DEFAULT_MAX_HEADER_BYTES;
use self::format::{file_error, Entry, Header, Planned};
pub use self::leaf::{Element, TensorLeaf, TensorView};
use crate::Std;

/// The metadata key of the TreeDef (JSON, as `TreeDef`'s serde writes it).
///
/// ```
/// use pytree_std::checkpoint::{self, Checkpoint, TREEDEF_KEY};
/// let file = Checkpoint::from_bytes(checkpoint::to_bytes(&(1u8,))?)?;
/// assert!(file.metadata()[TREEDEF_KEY].starts_with("{\"schemas\""));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub const TREEDEF_KEY: &str = "pytree.treedef";
/// The metadata key saying why the TreeDef was left out (a static field
/// serde cannot write).
///
/// ```
/// use pytree_std::checkpoint::{self, Checkpoint, TREEDEF_ERROR_KEY};
/// let file = Checkpoint::from_bytes(checkpoint::to_bytes(&(1u8,))?)?;
/// assert!(!file.metadata().contains_key(TREEDEF_ERROR_KEY));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub const TREEDEF_ERROR_KEY: &str = "pytree.treedef_error";
/// The metadata key of the prefix the names were saved with.
///
/// ```
/// use pytree_std::checkpoint::{Checkpoint, Save, PREFIX_KEY};
/// let file = Checkpoint::from_bytes(Save::new().prefix("m.").to_bytes(&(1u8,))?)?;
/// assert_eq!(file.metadata()[PREFIX_KEY], "m.");
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub const PREFIX_KEY: &str = "pytree.prefix";

/// Places `err` at `path` (entries added innermost first).
fn at_path(mut err: Error, path: &KeyPath) -> Error {
    for entry in path.entries().iter().rev() {
        err = err.at(entry.clone());
    }
    err
}

/// One error for a list of problems: the problem itself when there is
/// one, [`ErrorKind::Mismatches`] when there are several.
fn combine(mut all: Vec<Error>) -> Result<(), Error> {
    match all.len() {
        0 => Ok(()),
        1 => Err(all
            .pop()
            .unwrap_or_else(|| Error::custom("the checkpoint does not match"))),
        _ => Err(Error::new(ErrorKind::Mismatches(all))),
    }
}

/// The tensor name of each path (`layers.0.w`), or every path that cannot
/// be named and every name given twice.
fn names_of<'p>(
    paths: impl IntoIterator<Item = &'p KeyPath>,
    prefix: &str,
) -> Result<Vec<String>, Error> {
    let mut names = Vec::new();
    let mut problems = Vec::new();
    let mut first: HashMap<String, KeyPath> = HashMap::new();
    for path in paths {
        let name = format!("{prefix}{}", path.keystr(KeyStr::SIMPLE));
        if name.is_empty() {
            problems.push(at_path(
                Error::custom(
                    "the leaf has no name: a checkpoint names each tensor by its key path, which is \
                     empty here (a leaf at the root, or an empty map key); put it in a struct, tuple \
                     or map, or save with a prefix",
                ),
                path,
            ));
        } else if name == "__metadata__" {
            problems.push(at_path(
                Error::custom("`__metadata__` is reserved by the format and cannot name a tensor"),
                path,
            ));
        } else if let Some(other) = first.get(&name) {
            problems.push(at_path(
                Error::custom(format!(
                    "tensor name `{name}` is also the name of the leaf at {other}"
                )),
                path,
            ));
        } else {
            first.insert(name.clone(), path.clone());
        }
        names.push(name);
    }
    combine(problems).map(|()| names)
}

/// Options of [`save`]: a prefix for every name, metadata of your own,
/// and whether the TreeDef must be written.
///
/// ```
/// use pytree_std::checkpoint::{Checkpoint, Save};
/// let bytes = Save::new().prefix("model.").metadata("epoch", "3").to_bytes(&vec![1.0f32, 2.0])?;
/// let file = Checkpoint::from_bytes(bytes)?;
/// assert_eq!(file.names().collect::<Vec<_>>(), ["model.0", "model.1"]);
/// assert_eq!(file.metadata()["epoch"], "3");
/// assert_eq!(file.load::<Vec<f32>>()?, [1.0, 2.0]); // the saved prefix is known
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Save {
    prefix: String,
    metadata: BTreeMap<String, String>,
    require_treedef: bool,
}

impl Save {
    /// The default options: names are the key paths, the TreeDef is
    /// written when serde can write it.
    ///
    /// ```
    /// let bytes = pytree_std::checkpoint::Save::new().to_bytes(&(1.0f32,))?;
    /// assert!(!bytes.is_empty());
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn new() -> Self {
        Save::default()
    }

    /// Puts `prefix` before every name (`"model."` gives `model.layers.0.w`).
    /// It is recorded in the metadata, so [`load`] by type strips it.
    ///
    /// ```
    /// let bytes = pytree_std::checkpoint::Save::new().prefix("enc.").to_bytes(&(1.0f32,))?;
    /// let file = pytree_std::checkpoint::Checkpoint::from_bytes(bytes)?;
    /// assert_eq!(file.names().next(), Some("enc.0"));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Adds a metadata entry (string to string, as the format allows).
    /// Keys beginning with `pytree.` are this crate's: saving with one is
    /// an error.
    ///
    /// ```
    /// use pytree_std::checkpoint::Save;
    /// assert!(Save::new().metadata("pytree.treedef", "x").to_bytes(&(1u8,)).is_err());
    /// ```
    #[must_use]
    pub fn metadata(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }

    /// Makes a TreeDef that serde cannot write (a static field of a type
    /// of your own) an error when saving, instead of a file that loads
    /// only against a template.
    ///
    /// ```
    /// use pytree_std::PyTree;
    /// #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    /// enum Act { Relu }
    /// #[derive(PyTree)]
    /// struct M { w: f32, #[pytree(static)] act: Act }
    /// let m = M { w: 1.0, act: Act::Relu };
    /// assert!(pytree_std::checkpoint::to_bytes(&m).is_ok());
    /// let err = pytree_std::checkpoint::Save::new().require_treedef().to_bytes(&m).unwrap_err();
    /// assert!(err.to_string().contains("cannot be serialized"));
    /// ```
    #[must_use]
    pub fn require_treedef(mut self) -> Self {
        self.require_treedef = true;
        self
    }

    /// Saves `tree` to `path` (see the [module docs](self)). The file is
    /// written beside `path` under a temporary name and renamed over it.
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("pytree-save-{}.safetensors", std::process::id()));
    /// pytree_std::checkpoint::Save::new().save(&path, &(1.0f64, [2.0f64, 3.0]))?;
    /// let back: (f64, [f64; 2]) = pytree_std::checkpoint::load(&path)?;
    /// assert_eq!(back, (1.0, [2.0, 3.0]));
    /// # std::fs::remove_file(&path).ok();
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn save<T>(&self, path: impl AsRef<Path>, tree: &T) -> Result<(), Error>
    where
        T: Flatten<Std>,
        T::Leaf: TensorLeaf,
    {
        let path = path.as_ref();
        let plan = self.plan(tree)?;
        let io = |what: &str, e: std::io::Error| {
            file_error(&path.display().to_string(), format!("{what}: {e}"))
        };
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let file_name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let temp = dir.join(format!(".{file_name}.{}.{stamp}.tmp", std::process::id()));
        let written = (|| {
            let file = File::options()
                .write(true)
                .create_new(true)
                .open(&temp)
                .map_err(|e| io("cannot create the temporary file", e))?;
            file.set_len(plan.total_len() as u64)
                .map_err(|e| io("cannot size the file", e))?;
            let mut out = BufWriter::with_capacity(1 << 20, file);
            plan.write(tree, &mut out).map_err(|e| match e {
                WriteError::Io(e) => io("write", e),
                WriteError::Leaf(e) => e,
            })?;
            drop(out.into_inner().map_err(|e| io("write", e.into_error()))?);
            std::fs::rename(&temp, path)
                .map_err(|e| io("cannot rename the temporary file over it", e))
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        written
    }

    /// The file's bytes, in memory.
    ///
    /// ```
    /// let bytes = pytree_std::checkpoint::Save::new().to_bytes(&(1u8,))?;
    /// assert_eq!(&bytes[8..9], b"{");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn to_bytes<T>(&self, tree: &T) -> Result<Vec<u8>, Error>
    where
        T: Flatten<Std>,
        T::Leaf: TensorLeaf,
    {
        let plan = self.plan(tree)?;
        let mut out = Vec::with_capacity(plan.total_len());
        plan.write(tree, &mut out).map_err(|e| match e {
            WriteError::Io(e) => Error::custom(format!("write: {e}")),
            WriteError::Leaf(e) => e,
        })?;
        Ok(out)
    }

    /// Names, signatures and the header of `tree`'s file.
    fn plan<T>(&self, tree: &T) -> Result<WritePlan, Error>
    where
        T: Flatten<Std>,
        T::Leaf: TensorLeaf,
    {
        if let Some(key) = self.metadata.keys().find(|k| k.starts_with("pytree.")) {
            return Err(Error::custom(format!(
                "metadata key `{key}`: keys beginning with `pytree.` are reserved for this crate"
            )));
        }
        let leaves = crate::leaves_with_path(tree);
        let names = names_of(leaves.iter().map(|(p, _)| p), &self.prefix)?;
        let mut problems = Vec::new();
        let mut tensors = Vec::with_capacity(leaves.len());
        let mut widths = Vec::with_capacity(leaves.len());
        for ((path, leaf), name) in leaves.iter().zip(names) {
            let sig = match T::Leaf::tensor_signature(leaf) {
                Ok(sig) => sig,
                Err(e) => {
                    problems.push(at_path(e, path));
                    continue;
                }
            };
            let stored = format::dtype_name(sig.dtype()).ok_or_else(|| {
                format!(
                    "dtype {} has no name in the safetensors format",
                    sig.dtype()
                )
            });
            let bytes = stored
                .clone()
                .and_then(|_| format::data_len(sig.dtype(), sig.shape()));
            match (stored, bytes) {
                (Ok(dtype_name), Ok(bytes)) => {
                    widths.push(sig.dtype().size_in_bytes().unwrap_or(1));
                    tensors.push(Planned {
                        name,
                        dtype_name,
                        shape: sig.shape().to_vec(),
                        bytes,
                    });
                }
                (Err(e), _) | (_, Err(e)) => problems.push(at_path(Error::custom(e), path)),
            }
        }
        combine(problems)?;
        // Widest elements first (stable: leaf order within a width), so
        // that every tensor starts aligned to its element size, as the
        // reference writer orders them.
        let mut order: Vec<usize> = (0..tensors.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(widths[i]));
        let mut metadata = self.metadata.clone();
        if !self.prefix.is_empty() {
            metadata.insert(PREFIX_KEY.into(), self.prefix.clone());
        }
        match serde_json::to_string(&crate::structure(tree)) {
            Ok(json) => {
                metadata.insert(TREEDEF_KEY.into(), json);
            }
            Err(e) if self.require_treedef => {
                return Err(Error::custom(format!("the TreeDef cannot be saved: {e}")));
            }
            Err(e) => {
                metadata.insert(TREEDEF_ERROR_KEY.into(), e.to_string());
            }
        }
        let ordered: Vec<Planned> = {
            let mut slots: Vec<Option<Planned>> = tensors.into_iter().map(Some).collect();
            order.iter().filter_map(|&i| slots[i].take()).collect()
        };
        let header = format::header_bytes(&ordered, &metadata);
        let data_len = ordered.iter().map(|t| t.bytes).sum();
        Ok(WritePlan {
            header,
            order,
            sizes: ordered.iter().map(|t| t.bytes).collect(),
            data_len,
        })
    }
}

/// A failure while writing: the sink's, or a leaf's.
enum WriteError {
    Io(std::io::Error),
    Leaf(Error),
}

/// What [`Save`] writes: the header, the order of the leaves' data, the
/// size of each.
struct WritePlan {
    header: Vec<u8>,
    /// Leaf indices in the order of their data.
    order: Vec<usize>,
    /// Bytes of each, in that order.
    sizes: Vec<usize>,
    data_len: usize,
}

impl WritePlan {
    fn total_len(&self) -> usize {
        format::N_LEN + self.header.len() + self.data_len
    }

    fn write<T, W>(&self, tree: &T, out: &mut W) -> Result<(), WriteError>
    where
        T: Flatten<Std>,
        T::Leaf: TensorLeaf,
        W: Write,
    {
        out.write_all(&(self.header.len() as u64).to_le_bytes())
            .map_err(WriteError::Io)?;
        out.write_all(&self.header).map_err(WriteError::Io)?;
        let leaves = crate::leaves_with_path(tree);
        for (&i, &size) in self.order.iter().zip(&self.sizes) {
            let Some((path, leaf)) = leaves.get(i) else {
                return Err(WriteError::Leaf(Error::custom(
                    "the tree changed while it was saved",
                )));
            };
            let bytes =
                T::Leaf::tensor_bytes(leaf).map_err(|e| WriteError::Leaf(at_path(e, path)))?;
            if bytes.len() != size {
                return Err(WriteError::Leaf(at_path(
                    Error::custom(format!(
                        "the leaf gave {} bytes of data, its signature says {size}",
                        bytes.len()
                    )),
                    path,
                )));
            }
            out.write_all(&bytes).map_err(WriteError::Io)?;
        }
        out.flush().map_err(WriteError::Io)
    }
}

/// Saves `tree` to `path` with the default [`Save`] options.
///
/// ```
/// use pytree_std::ndarray::{array, Array2};
/// let path = std::env::temp_dir().join(format!("pytree-fn-save-{}.safetensors", std::process::id()));
/// let params = std::collections::BTreeMap::from([("w".to_string(), array![[1.0f32, 2.0]])]);
/// pytree_std::checkpoint::save(&path, &params)?;
/// let back: std::collections::BTreeMap<String, Array2<f32>> = pytree_std::checkpoint::load(&path)?;
/// assert_eq!(back, params);
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn save<T>(path: impl AsRef<Path>, tree: &T) -> Result<(), Error>
where
    T: Flatten<Std>,
    T::Leaf: TensorLeaf,
{
    Save::new().save(path, tree)
}

/// The bytes of `tree`'s file with the default [`Save`] options.
///
/// ```
/// let bytes = pytree_std::checkpoint::to_bytes(&(1i64, 2i64))?;
/// let back: (i64, i64) = pytree_std::checkpoint::Checkpoint::from_bytes(bytes)?.load()?;
/// assert_eq!(back, (1, 2));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn to_bytes<T>(tree: &T) -> Result<Vec<u8>, Error>
where
    T: Flatten<Std>,
    T::Leaf: TensorLeaf,
{
    Save::new().to_bytes(tree)
}

/// Options of loading: renames by prefix, partial loading, the header
/// limit. The same options serve [`Load::load`], [`Load::load_like`],
/// [`Load::load_into`] and [`Load::open`].
///
/// ```
/// use pytree_std::checkpoint::{Load, Save, Checkpoint};
/// // A file of a bigger model: `model.` before every name, and a head.
/// let full = (vec![1.0f32, 2.0], 9.0f32);
/// let bytes = Save::new().prefix("model.").to_bytes(&full)?;
/// // Its backbone, into a tree of our own: `model.0.0` is our `0`.
/// let mut backbone = (vec![0.0f32, 0.0],);
/// let file = Load::new().rename_prefix("model.0.", "0.").allow_unused().from_bytes(bytes)?;
/// let report = file.load_into(&mut backbone)?;
/// assert_eq!(backbone.0, [1.0, 2.0]);
/// assert_eq!(report.unused, ["model.1"]);
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Load {
    renames: Vec<(String, String)>,
    allow_missing: bool,
    allow_unused: bool,
    max_header_bytes: usize,
}

impl Default for Load {
    fn default() -> Self {
        Load {
            renames: Vec::new(),
            allow_missing: false,
            allow_unused: false,
            max_header_bytes: DEFAULT_MAX_HEADER_BYTES,
        }
    }
}

impl Load {
    /// Strict loading: every leaf must be in the file, every tensor of the
    /// file must be a leaf, with the same dtype and shape.
    ///
    /// ```
    /// let bytes = pytree_std::checkpoint::to_bytes(&(1.0f32, 2.0f32))?;
    /// let err = pytree_std::checkpoint::Load::new().from_bytes(bytes)?.load_like(&(0.0f32,)).unwrap_err();
    /// assert_eq!(err.to_string(), "at <root>: tensor `1` (f32[]) of the file is not a leaf of the tree");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn new() -> Self {
        Load::default()
    }

    /// Renames the file's tensors whose name begins with `from`: that
    /// prefix becomes `to` (`("model.", "")` reads `model.layers.0.w` as
    /// `layers.0.w`). Rules are tried in order; the first that matches
    /// applies. Two tensors renamed to one name are an error.
    ///
    /// ```
    /// use pytree_std::checkpoint::{Load, Save};
    /// let bytes = Save::new().prefix("model.").to_bytes(&(1.0f32,))?;
    /// let file = Load::new().rename_prefix("model.", "").from_bytes(bytes)?;
    /// assert_eq!(file.load_like(&(0.0f32,))?, (1.0,));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn rename_prefix(mut self, from: impl Into<String>, to: impl Into<String>) -> Self {
        self.renames.push((from.into(), to.into()));
        self
    }

    /// Leaves that the file lacks are not an error: [`load_into`](Load::load_into)
    /// leaves them as they are, [`load_like`](Load::load_like) copies the
    /// template's. Loading by type alone still needs every leaf.
    ///
    /// ```
    /// use pytree_std::checkpoint::{Load, to_bytes};
    /// let file = Load::new().allow_missing().from_bytes(to_bytes(&(1.0f32,))?)?;
    /// assert_eq!(file.load_like(&(0.0f32, 5.0f32))?, (1.0, 5.0));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn allow_missing(mut self) -> Self {
        self.allow_missing = true;
        self
    }

    /// Tensors of the file that no leaf asks for are skipped instead of an
    /// error (and listed in [`LoadReport::unused`]).
    ///
    /// ```
    /// use pytree_std::checkpoint::{Load, to_bytes};
    /// let file = Load::new().allow_unused().from_bytes(to_bytes(&(1.0f32, 2.0f32))?)?;
    /// assert_eq!(file.load_like(&(0.0f32,))?, (1.0,));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn allow_unused(mut self) -> Self {
        self.allow_unused = true;
        self
    }

    /// Both of the above: PyTorch's `strict=False`.
    ///
    /// ```
    /// let o = pytree_std::checkpoint::Load::new().non_strict();
    /// # let _ = o;
    /// ```
    #[must_use]
    pub fn non_strict(self) -> Self {
        self.allow_missing().allow_unused()
    }

    /// The largest header to read (default [`DEFAULT_MAX_HEADER_BYTES`],
    /// the format's 100 MB). Reading a header costs memory proportional to
    /// its size; a longer one is an error before anything is allocated.
    ///
    /// ```
    /// use pytree_std::checkpoint::{Load, to_bytes};
    /// let bytes = to_bytes(&(1.0f32,))?;
    /// let err = Load::new().max_header_bytes(16).from_bytes(bytes).unwrap_err();
    /// assert!(err.to_string().contains("over the limit of 16"));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn max_header_bytes(mut self, limit: usize) -> Self {
        self.max_header_bytes = limit;
        self
    }

    /// Opens (memory-maps) the file at `path` and checks its header.
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("pytree-open-{}.safetensors", std::process::id()));
    /// pytree_std::checkpoint::save(&path, &(1u8,))?;
    /// let file = pytree_std::checkpoint::Load::new().open(&path)?;
    /// assert_eq!(file.len(), 1);
    /// # drop(file); std::fs::remove_file(&path).ok();
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn open(&self, path: impl AsRef<Path>) -> Result<Checkpoint, Error> {
        let path = path.as_ref();
        let origin = path.display().to_string();
        let file =
            File::open(path).map_err(|e| file_error(&origin, format!("cannot open: {e}")))?;
        let len = file
            .metadata()
            .map_err(|e| file_error(&origin, format!("cannot read its size: {e}")))?
            .len();
        let bytes = if len < format::N_LEN as u64 {
            // Too short to map usefully (an empty file cannot be mapped);
            // `parse` says what is wrong.
            let mut v = Vec::new();
            use std::io::Read;
            (&file)
                .take(len)
                .read_to_end(&mut v)
                .map_err(|e| file_error(&origin, format!("read: {e}")))?;
            Storage::Owned(v)
        } else {
            // SAFETY: a memory map is valid as long as nobody changes or
            // truncates the file while it is mapped; this is the contract
            // of every safetensors loader (the `safetensors` crate's
            // examples, candle's `MmapedSafetensors`). It is documented
            // on `Checkpoint`: the map lives as long as the `Checkpoint`,
            // and every read of it is bounds-checked against the length
            // the header was validated against.
            let map = unsafe { memmap2::Mmap::map(&file) }
                .map_err(|e| file_error(&origin, format!("cannot map: {e}")))?;
            Storage::Mapped(map)
        };
        Checkpoint::new(bytes, origin, self.clone())
    }

    /// Reads a file held in memory.
    ///
    /// ```
    /// let bytes = pytree_std::checkpoint::to_bytes(&(1u8,))?;
    /// assert_eq!(pytree_std::checkpoint::Load::new().from_bytes(bytes)?.len(), 1);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn from_bytes(&self, bytes: Vec<u8>) -> Result<Checkpoint, Error> {
        Checkpoint::new(Storage::Owned(bytes), "<bytes>".into(), self.clone())
    }

    /// [`open`](Load::open), then [`Checkpoint::load`].
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("pytree-load-{}.safetensors", std::process::id()));
    /// pytree_std::checkpoint::Save::new().prefix("m.").save(&path, &(1u8,))?;
    /// let back: (u8,) = pytree_std::checkpoint::Load::new().load(&path)?;
    /// assert_eq!(back, (1,));
    /// # std::fs::remove_file(&path).ok();
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn load<T>(&self, path: impl AsRef<Path>) -> Result<T, Error>
    where
        T: Unflatten<Std>,
        T::Leaf: TensorLeaf,
    {
        self.open(path)?.load()
    }

    /// [`open`](Load::open), then [`Checkpoint::load_like`].
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("pytree-like-{}.safetensors", std::process::id()));
    /// pytree_std::checkpoint::save(&path, &(1u8, 2u8))?;
    /// let back = pytree_std::checkpoint::Load::new().allow_unused().load_like(&path, &(0u8,))?;
    /// assert_eq!(back, (1,));
    /// # std::fs::remove_file(&path).ok();
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn load_like<T>(&self, path: impl AsRef<Path>, like: &T) -> Result<T, Error>
    where
        T: Unflatten<Std>,
        T::Leaf: TensorLeaf,
    {
        self.open(path)?.load_like(like)
    }

    /// [`open`](Load::open), then [`Checkpoint::load_into`].
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("pytree-into-{}.safetensors", std::process::id()));
    /// pytree_std::checkpoint::save(&path, &(1u8,))?;
    /// let mut t = (0u8, 7u8);
    /// let report = pytree_std::checkpoint::Load::new().allow_missing().load_into(&path, &mut t)?;
    /// assert_eq!((t, report.missing), ((1, 7), vec!["1".to_string()]));
    /// # std::fs::remove_file(&path).ok();
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn load_into<T>(&self, path: impl AsRef<Path>, tree: &mut T) -> Result<LoadReport, Error>
    where
        T: Flatten<Std>,
        T::Leaf: TensorLeaf,
    {
        self.open(path)?.load_into(tree)
    }
}

/// Loads a `T` from the file at `path` by its type alone: the structure
/// (sequence lengths, map keys, static fields) comes from the TreeDef in
/// the file's metadata; names and dtypes are checked (every problem
/// listed), then the ranks of the fields as the value is built.
///
/// ```
/// use pytree_std::ndarray::{Array1, Array2};
/// use pytree_std::PyTree;
/// #[derive(PyTree, Debug, PartialEq)]
/// struct Linear { w: Array2<f32>, b: Array1<f32> }
/// let path = std::env::temp_dir().join(format!("pytree-fn-load-{}.safetensors", std::process::id()));
/// pytree_std::checkpoint::save(&path, &vec![Linear { w: Array2::ones((2, 2)), b: Array1::zeros(2) }])?;
/// let back: Vec<Linear> = pytree_std::checkpoint::load(&path)?;
/// assert_eq!(back[0].w, Array2::<f32>::ones((2, 2)));
/// let err = pytree_std::checkpoint::load::<Vec<(f64, f64)>>(&path).unwrap_err();
/// assert!(err.to_string().starts_with("tree structures differ (2 mismatches found)"));
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn load<T>(path: impl AsRef<Path>) -> Result<T, Error>
where
    T: Unflatten<Std>,
    T::Leaf: TensorLeaf,
{
    Load::new().load(path)
}

/// Loads a tree shaped like `like` from the file at `path` (equinox's
/// `tree_deserialise_leaves(path, like)`): every leaf is read from the
/// tensor of its name, which must have the template leaf's dtype and
/// shape; every problem is listed. A candle tensor goes to the template's
/// device.
///
/// ```
/// let path = std::env::temp_dir().join(format!("pytree-fn-like-{}.safetensors", std::process::id()));
/// pytree_std::checkpoint::save(&path, &(1.5f32, 2.0f32))?;
/// assert_eq!(pytree_std::checkpoint::load_like(&path, &(0.0f32, 0.0f32))?, (1.5, 2.0));
/// let err = pytree_std::checkpoint::load_like(&path, &(0.0f64, 0.0f64)).unwrap_err();
/// assert_eq!(err.to_string(), "tree structures differ (2 mismatches found)
///   at [0]: tensor `0`: expected f64[], found f32[]
///   at [1]: tensor `1`: expected f64[], found f32[]");
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn load_like<T>(path: impl AsRef<Path>, like: &T) -> Result<T, Error>
where
    T: Unflatten<Std>,
    T::Leaf: TensorLeaf,
{
    Load::new().load_like(path, like)
}

/// Loads the file at `path` into `tree`, in place: each leaf's data is
/// copied once, from the memory map into the array that is already there.
/// Everything is checked first; on an error nothing has changed (except
/// for a device error of candle, after the checks, which leaves the
/// tensors before it loaded).
///
/// ```
/// let path = std::env::temp_dir().join(format!("pytree-fn-into-{}.safetensors", std::process::id()));
/// pytree_std::checkpoint::save(&path, &vec![1.0f32, 2.0])?;
/// let mut t = vec![0.0f32, 0.0];
/// let report = pytree_std::checkpoint::load_into(&path, &mut t)?;
/// assert_eq!((t, report.loaded), (vec![1.0, 2.0], vec!["0".to_string(), "1".to_string()]));
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn load_into<T>(path: impl AsRef<Path>, tree: &mut T) -> Result<LoadReport, Error>
where
    T: Flatten<Std>,
    T::Leaf: TensorLeaf,
{
    Load::new().load_into(path, tree)
}

/// What a load did, by tensor name (PyTorch's `load_state_dict` result).
///
/// ```
/// let bytes = pytree_std::checkpoint::to_bytes(&(1u8, 2u8))?;
/// let file = pytree_std::checkpoint::Load::new().non_strict().from_bytes(bytes)?;
/// let mut t = (0u8,);
/// let report = file.load_into(&mut t)?;
/// assert_eq!((report.loaded, report.missing, report.unused), (vec!["0".to_string()], vec![], vec!["1".to_string()]));
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadReport {
    /// The leaves loaded, by name (after renaming), in leaf order.
    pub loaded: Vec<String>,
    /// The leaves the file lacks (allowed by [`Load::allow_missing`]), in
    /// leaf order.
    pub missing: Vec<String>,
    /// The file's tensors that no leaf asked for (allowed by
    /// [`Load::allow_unused`]), by their names in the file, in file order.
    pub unused: Vec<String>,
}

/// The bytes of a file: mapped, or in memory.
enum Storage {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl Storage {
    fn bytes(&self) -> &[u8] {
        match self {
            Storage::Mapped(m) => m,
            Storage::Owned(v) => v,
        }
    }
}

/// An opened checkpoint: the header checked, the data memory-mapped (or
/// in memory). Read its tensors by name, or load trees from it.
///
/// The map reads the file as it is on disk: it must not be changed or
/// truncated by another program while the `Checkpoint` lives (the
/// contract of every memory-mapped safetensors loader); [`save`] itself
/// never writes over a file in place.
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
    storage: Storage,
    header: Header,
    origin: String,
    options: Load,
}

impl std::fmt::Debug for Checkpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkpoint")
            .field("origin", &self.origin)
            .field("tensors", &self.header.entries.len())
            .field("metadata", &self.header.metadata)
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
    fn accepts(&self, found: &Entry) -> bool {
        match self {
            Expected::Signature(s) => {
                s.dtype() == found.dtype && s.shape() == found.shape.as_slice()
            }
            Expected::DType(Some(d)) => *d == found.dtype,
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

    fn new(storage: Storage, origin: String, options: Load) -> Result<Self, Error> {
        let header = format::parse(storage.bytes(), &origin, options.max_header_bytes)?;
        Ok(Checkpoint {
            storage,
            header,
            origin,
            options,
        })
    }

    /// The number of tensors.
    ///
    /// ```
    /// let file = pytree_std::checkpoint::Checkpoint::from_bytes(pytree_std::checkpoint::to_bytes(&[1u8, 2])?)?;
    /// assert_eq!(file.len(), 2);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.header.entries.len()
    }

    /// True when the file holds no tensor.
    ///
    /// ```
    /// let file = pytree_std::checkpoint::Checkpoint::from_bytes(pytree_std::checkpoint::to_bytes(&Vec::<f32>::new())?)?;
    /// assert!(file.is_empty());
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.header.entries.is_empty()
    }

    /// The tensors' names as in the file, in the order of their data.
    ///
    /// ```
    /// let file = pytree_std::checkpoint::Checkpoint::from_bytes(pytree_std::checkpoint::to_bytes(&[1u8, 2])?)?;
    /// assert_eq!(file.names().collect::<Vec<_>>(), ["0", "1"]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn names(&self) -> impl Iterator<Item = &str> + '_ {
        self.header.entries.iter().map(|e| e.name.as_str())
    }

    /// Every tensor, in the order of their data.
    ///
    /// ```
    /// let file = pytree_std::checkpoint::Checkpoint::from_bytes(pytree_std::checkpoint::to_bytes(&[1u8, 2])?)?;
    /// assert_eq!(file.tensors().map(|t| t.data()[0]).collect::<Vec<_>>(), [1, 2]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn tensors(&self) -> impl Iterator<Item = TensorView<'_>> + '_ {
        self.header.entries.iter().map(|e| self.view(e))
    }

    /// The tensor of this name in the file, if there is one.
    ///
    /// ```
    /// let file = pytree_std::checkpoint::Checkpoint::from_bytes(pytree_std::checkpoint::to_bytes(&[1u8, 2])?)?;
    /// assert_eq!(file.tensor("1").map(|t| t.data()), Some(&[2u8][..]));
    /// assert!(file.tensor("2").is_none());
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn tensor(&self, name: &str) -> Option<TensorView<'_>> {
        self.header
            .by_name
            .get(name)
            .map(|&i| self.view(&self.header.entries[i]))
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
        &self.header.metadata
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
        let Some(json) = self.header.metadata.get(TREEDEF_KEY) else {
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
        let data = self.storage.bytes();
        let start = self.header.data_start;
        // In bounds: `parse` checked that the entries tile the data that
        // follows the header exactly; `get` keeps that from being a panic.
        let bytes = data.get(start + e.begin..start + e.end).unwrap_or(&[]);
        TensorView {
            name: &e.name,
            dtype: e.dtype,
            shape: &e.shape,
            data: bytes,
        }
    }

    /// The file's name for each of its entries after the renames.
    fn renamed(&self, extra_prefix: Option<&str>) -> Vec<Cow<'_, str>> {
        self.header
            .entries
            .iter()
            .map(|e| {
                for (from, to) in &self.options.renames {
                    if let Some(rest) = e.name.strip_prefix(from.as_str()) {
                        return Cow::Owned(format!("{to}{rest}"));
                    }
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
                    self.header.entries[j].name, self.header.entries[i].name
                )));
            } else {
                index.insert(name, i);
            }
        }
        let mut used = vec![false; renamed.len()];
        let mut pairs = Vec::with_capacity(wants.len());
        let mut report = LoadReport::default();
        for want in wants {
            match index.get(want.name.as_str()) {
                Some(&i) => {
                    used[i] = true;
                    let entry = &self.header.entries[i];
                    if want.expected.accepts(entry) {
                        report.loaded.push(want.name.clone());
                        pairs.push(Some(i));
                    } else {
                        problems.push(at_path(
                            Error::custom(format!(
                                "tensor `{}`: expected {}, found {}",
                                entry.name,
                                want.expected.describe(),
                                entry.signature()
                            )),
                            &want.path,
                        ));
                        pairs.push(None);
                    }
                }
                None => {
                    if !allow_missing {
                        problems.push(at_path(
                            Error::custom(format!(
                                "tensor `{}`: expected {}, found nothing in the file",
                                want.name,
                                want.expected.describe()
                            )),
                            &want.path,
                        ));
                    }
                    report.missing.push(want.name.clone());
                    pairs.push(None);
                }
            }
        }
        for (i, entry) in self.header.entries.iter().enumerate() {
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

    /// Loads a `T` by its type alone; see [`load`](fn@load). The
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
        let def = self.treedef()?.ok_or_else(|| {
            let why = match self.header.metadata.get(TREEDEF_ERROR_KEY) {
                Some(reason) => format!("it was saved without one ({reason})"),
                None => "it was not written by this crate".into(),
            };
            file_error(
                &self.origin,
                format!("the file holds no TreeDef to load a value by its type alone: {why}; load it against a template with load_like or load_into"),
            )
        })?;
        let paths = self.leaf_paths_of(&def)?;
        let prefix = self
            .header
            .metadata
            .get(PREFIX_KEY)
            .filter(|_| self.options.renames.is_empty());
        let names = names_of(paths.iter(), "")?;
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
                return Err(at_path(Error::custom("missing tensor"), &want.path));
            };
            let view = self.view(&self.header.entries[i]);
            leaves.push(T::Leaf::from_tensor(&view, None).map_err(|e| at_path(e, &want.path))?);
        }
        crate::unflatten(&def, leaves)
    }

    /// The leaf paths of a TreeDef read from the file, once it is known to
    /// fit the file: no more leaves than tensors, and no more key-path
    /// entries than the tensors' names have characters (each entry is at
    /// least one), so that the paths cost memory proportional to the
    /// header.
    fn leaf_paths_of(&self, def: &TreeDef) -> Result<Vec<KeyPath>, Error> {
        let tensors = self.header.entries.len();
        if def.num_leaves() > tensors {
            return Err(file_error(
                &self.origin,
                format!(
                    "the TreeDef in the metadata has {} leaves, the file holds {tensors} tensors",
                    def.num_leaves()
                ),
            ));
        }
        let budget: usize = self.header.entries.iter().map(|e| e.name.len()).sum();
        // (leaves below, key-path entries summed over those leaves)
        let (_, entries) = def.walk(
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

    /// Loads a tree shaped like `like`; see [`load_like`](fn@load_like).
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
        let leaves = crate::leaves_with_path(like);
        let wants = self.wants_of::<T::Leaf>(&leaves)?;
        let (pairs, _) = self.pair(&wants, self.options.allow_missing, None)?;
        let mut out = Vec::with_capacity(leaves.len());
        for (((path, leaf), pair), _) in leaves.iter().zip(pairs).zip(&wants) {
            out.push(match pair {
                Some(i) => {
                    let view = self.view(&self.header.entries[i]);
                    T::Leaf::from_tensor(&view, Some(leaf)).map_err(|e| at_path(e, path))?
                }
                None => T::Leaf::to_owned_leaf(leaf),
            });
        }
        crate::unflatten(&crate::structure(like), out)
    }

    /// Loads into `tree`, in place; see [`load_into`](fn@load_into).
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
        T: Flatten<Std>,
        T::Leaf: TensorLeaf,
    {
        let (pairs, report, paths) = {
            let leaves = crate::leaves_with_path(&*tree);
            let wants = self.wants_of::<T::Leaf>(&leaves)?;
            let (pairs, report) = self.pair(&wants, self.options.allow_missing, None)?;
            (
                pairs,
                report,
                wants.into_iter().map(|w| w.path).collect::<Vec<_>>(),
            )
        };
        // The data is checked before anything is written, so that on an
        // error nothing has changed: a `bool` byte must be 0 or 1 (the
        // only data a leaf whose dtype and shape match can refuse).
        for (pair, path) in pairs.iter().zip(&paths) {
            if let Some(i) = *pair {
                let view = self.view(&self.header.entries[i]);
                if view.dtype == DType::Bool && view.data.iter().any(|&b| b > 1) {
                    return Err(at_path(leaf::bad_data::<bool>(view.data.len()), path));
                }
            }
        }
        for ((slot, pair), path) in crate::leaves_mut(tree).into_iter().zip(pairs).zip(&paths) {
            if let Some(i) = pair {
                let view = self.view(&self.header.entries[i]);
                T::Leaf::copy_from_tensor(slot, &view).map_err(|e| at_path(e, path))?;
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
        for (entry, name) in self.header.entries.iter().zip(renamed) {
            let path = KeyPath::root().key(name.to_string());
            if out.contains_key(name.as_ref()) {
                problems.push(at_path(
                    Error::custom(format!(
                        "two tensors of the file are named `{name}` after renaming"
                    )),
                    &path,
                ));
                continue;
            }
            match L::from_tensor(&self.view(entry), None) {
                Ok(leaf) => {
                    out.insert(name.into_owned(), leaf);
                }
                Err(e) => problems.push(at_path(e, &path)),
            }
        }
        combine(problems)?;
        Ok(out)
    }

    /// What each leaf of a template asks for.
    fn wants_of<L: TensorLeaf>(
        &self,
        leaves: &[(KeyPath, L::Ref<'_>)],
    ) -> Result<Vec<Want>, Error> {
        let names = names_of(leaves.iter().map(|(p, _)| p), "")?;
        let mut problems = Vec::new();
        let mut wants = Vec::with_capacity(leaves.len());
        for ((path, leaf), name) in leaves.iter().zip(names) {
            match L::tensor_signature(leaf) {
                Ok(sig) => wants.push(Want {
                    path: path.clone(),
                    name,
                    expected: Expected::Signature(sig),
                }),
                Err(e) => problems.push(at_path(e, path)),
            }
        }
        combine(problems)?;
        Ok(wants)
    }
}
