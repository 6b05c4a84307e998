//! Writing a checkpoint: [`Save`], its options (a prefix, renames,
//! metadata, the TreeDef, a maximum shard size), the plan of a file (names,
//! the header, the order of the data) and the write itself, to a
//! temporary file renamed over the target.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use pytree_core::{Error, Flatten, KeyStr};

use super::convert::transpose_2d;
use super::format::{self, Planned, PREFIX_KEY, TREEDEF_ERROR_KEY, TREEDEF_KEY};
use super::leaf::TensorLeaf;
use super::naming::{combine, names_of, Renames};
use super::shards;
use super::storage::file_error;
use crate::leaf_bytes::ByteLeaf;
use crate::std_namespace::Std;

/// Options of [`save`](fn@super::save): a prefix for every name, rename
/// rules, metadata of your own, whether the TreeDef must be written, and
/// shards. Every file carries `{"format": "pt"}` in its metadata (unless
/// [`metadata`](Save::metadata) sets `format`), as transformers'
/// `load_state_dict` requires of a safetensors file.
///
/// ```
/// use pytree_std::checkpoint::{Checkpoint, Load, Save};
/// let bytes = Save::new().prefix("model.").metadata("epoch", "3").to_bytes(&vec![1.0f32, 2.0])?;
/// let file = Load::new().from_bytes(bytes)?;
/// assert_eq!(file.names().collect::<Vec<_>>(), ["model.0", "model.1"]);
/// assert_eq!(file.metadata()["epoch"], "3");
/// assert_eq!(file.load::<Vec<f32>>()?.0, [1.0, 2.0]); // the saved prefix is known
/// assert_eq!(file.metadata()["format"], "pt");
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Save {
    prefix: String,
    renames: Renames,
    metadata: BTreeMap<String, String>,
    require_treedef: bool,
    max_shard_bytes: Option<usize>,
    /// (tied name, the name it is tied to), file names.
    ties: Vec<(String, String)>,
    /// The tree's names of the leaves written transposed
    /// ([`Save::transpose`]).
    transposed: BTreeSet<String>,
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
    /// It is recorded in the metadata, so [`load`](fn@super::load) by type
    /// strips it. It goes before the names the [`renames`](Save::renames)
    /// made.
    ///
    /// ```
    /// let bytes = pytree_std::checkpoint::Save::new().prefix("enc.").to_bytes(&(1.0f32,))?;
    /// let file = pytree_std::checkpoint::Load::new().from_bytes(bytes)?;
    /// assert_eq!(file.names().next(), Some("enc.0"));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Renames the tree's names on the way to the file (for a file whose
    /// names a Rust field cannot spell). The rules chain, in order; two
    /// leaves renamed to one name are an error naming both.
    ///
    /// ```
    /// use pytree_std::checkpoint::{Checkpoint, Load, Renames, Save};
    /// let to_hf = Renames::new().pattern("layers.*", "encoder.layer.$1").prefix("", "bert.");
    /// let bytes = Save::new().renames(to_hf).to_bytes(&std::collections::BTreeMap::from([("layers", vec![1.0f32])]))?;
    /// let file = Load::new().from_bytes(bytes)?;
    /// assert_eq!(file.names().collect::<Vec<_>>(), ["bert.encoder.layer.0"]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn renames(mut self, renames: Renames) -> Self {
        self.renames = renames;
        self
    }

    /// The largest shard [`save_sharded`](Save::save_sharded) writes, in
    /// bytes of tensor data (transformers' `max_shard_size`; default 5 GB,
    /// its default). A tensor larger than that is a shard of its own.
    ///
    /// ```
    /// let dir = std::env::temp_dir().join(format!("pytree-shard-size-{}", std::process::id()));
    /// let files = pytree_std::checkpoint::Save::new().max_shard_bytes(8).save_sharded(&dir, &(vec![1.0f32, 2.0], vec![3.0f32]))?;
    /// assert_eq!(files.len(), 3); // two shards and the index
    /// # std::fs::remove_dir_all(&dir).ok();
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn max_shard_bytes(mut self, bytes: usize) -> Self {
        self.max_shard_bytes = Some(bytes);
        self
    }

    /// Ties the tensor `name` to `to` (names as in the file, after the
    /// renames), as tied embeddings are: `name` is not written, and
    /// [`Load::tie`](super::Load::tie) reads it from `to` again (Python
    /// `safetensors`' `save_model` / `load_model`). The two leaves must
    /// be equal (dtype, shape and bytes); else saving is an error naming
    /// both, since the file could not give `name` back.
    ///
    /// ```
    /// use pytree_std::checkpoint::{Checkpoint, Load, Save};
    /// use std::collections::BTreeMap;
    /// let m = BTreeMap::from([("embed".to_string(), vec![1.0f32, 2.0]), ("head".to_string(), vec![1.0, 2.0])]);
    /// let bytes = Save::new().tie("head.0", "embed.0").tie("head.1", "embed.1").to_bytes(&m)?;
    /// assert_eq!(Load::new().from_bytes(bytes.clone())?.len(), 2); // head is not in the file
    /// let file = Load::new().tie("head.0", "embed.0").tie("head.1", "embed.1").from_bytes(bytes)?;
    /// assert_eq!(file.load_like(&m)?.0, m);
    /// let differs = BTreeMap::from([("embed".to_string(), vec![1.0f32]), ("head".to_string(), vec![3.0])]);
    /// let err = Save::new().tie("head.0", "embed.0").to_bytes(&differs).unwrap_err();
    /// assert_eq!(err.to_string(), "at <root>: tensor `head.0` is tied to `embed.0`, but their data differ");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn tie(mut self, name: impl Into<String>, to: impl Into<String>) -> Self {
        self.ties.push((name.into(), to.into()));
        self
    }

    /// Writes the leaves `names` (the tree's names: key paths, before the
    /// renames and the prefix) transposed: a 2-d leaf `[a, b]` becomes the
    /// tensor `[b, a]`, its elements transposed; a leaf of another rank,
    /// or a name that is no leaf, is an error. The inverse of
    /// [`Load::transpose`](super::Load::transpose) with the same names, so
    /// a model that keeps a matrix transposed (burn's `Linear`, `[d_in,
    /// d_out]`) is written in PyTorch's layout (`[d_out, d_in]`). A tie
    /// compares the tensors as written. For a burn module,
    /// `Save::transpose_linear` (feature `burn`) names the weights of its `Linear` layers.
    ///
    /// ```
    /// use pytree_std::checkpoint::{Load, Save};
    /// use pytree_std::ndarray::{array, ArrayD};
    /// use std::collections::BTreeMap;
    /// let ours = BTreeMap::from([("fc.weight".to_string(), array![[1.0f32, 3.0, 5.0], [2.0, 4.0, 6.0]])]);
    /// let bytes = Save::new().transpose(["fc.weight"]).to_bytes(&ours)?;
    /// let file = Load::new().from_bytes(bytes)?;
    /// assert_eq!(file.tensor("fc.weight").unwrap().shape(), [3, 2]);
    /// let torch = file.load_map::<ArrayD<f32>>()?;
    /// assert_eq!(torch["fc.weight"], array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]].into_dyn());
    /// assert_eq!(Load::new().transpose(["fc.weight"]).from_bytes(Save::new().transpose(["fc.weight"]).to_bytes(&ours)?)?.load_like(&ours)?.0, ours);
    /// let err = Save::new().transpose(["fc.bias"]).to_bytes(&ours).unwrap_err();
    /// assert_eq!(err.to_string(), "at <root>: Save::transpose names `fc.bias`, which is no leaf of the tree");
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    #[must_use]
    pub fn transpose<I>(mut self, names: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        self.transposed.extend(names.into_iter().map(Into::into));
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
    /// assert!(pytree_std::checkpoint::Save::new().to_bytes(&m).is_ok());
    /// let err = pytree_std::checkpoint::Save::new().require_treedef().to_bytes(&m).unwrap_err();
    /// assert!(err.to_string().contains("cannot be serialized"));
    /// ```
    #[must_use]
    pub fn require_treedef(mut self) -> Self {
        self.require_treedef = true;
        self
    }

    /// Saves `tree` to `path` (see the [module docs](super)). The file is
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
        let plan = self.plan(tree)?;
        let all = plan.written();
        write_file(path.as_ref(), &plan.file(&all), tree)
    }

    /// Saves `tree` into the directory `dir` (created if needed) as
    /// transformers names a checkpoint: `model.safetensors` when the data
    /// fits in one shard of [`max_shard_bytes`](Save::max_shard_bytes),
    /// else `model-00001-of-0000N.safetensors` ... and the index
    /// `model.safetensors.index.json` (`metadata.total_size` and a
    /// `weight_map` from each tensor name to its shard, keys sorted).
    /// Leaves go to shards in leaf order. Returns the paths written, the
    /// index last. Each file is written whole or not at all; a failure
    /// after some shards leaves those shards (and no index).
    ///
    /// ```
    /// use pytree_std::checkpoint::{Checkpoint, Load, Save};
    /// let dir = std::env::temp_dir().join(format!("pytree-sharded-{}", std::process::id()));
    /// let tree = std::collections::BTreeMap::from([("a".to_string(), vec![1.0f32; 4]), ("b".to_string(), vec![2.0f32; 4])]);
    /// let files = Save::new().max_shard_bytes(16).save_sharded(&dir, &tree)?;
    /// let names: Vec<_> = files.iter().map(|p| p.file_name().unwrap().to_str().unwrap()).collect();
    /// assert_eq!(names, ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors", "model.safetensors.index.json"]);
    /// let back = Load::new().open(dir.join("model.safetensors.index.json"))?;
    /// assert_eq!(back.len(), 8);
    /// assert_eq!(back.load::<std::collections::BTreeMap<String, Vec<f32>>>()?.0["b"], [2.0; 4]);
    /// # std::fs::remove_dir_all(&dir).ok();
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn save_sharded<T>(&self, dir: impl AsRef<Path>, tree: &T) -> Result<Vec<PathBuf>, Error>
    where
        T: Flatten<Std>,
        T::Leaf: TensorLeaf,
    {
        let dir = dir.as_ref();
        let plan = self.plan(tree)?;
        let max = self
            .max_shard_bytes
            .unwrap_or(shards::DEFAULT_MAX_SHARD_BYTES);
        let written_leaves = plan.written();
        let groups: Vec<Vec<usize>> =
            shards::split(written_leaves.iter().map(|&i| plan.tensors[i].bytes), max)
                .into_iter()
                .map(|g| g.into_iter().map(|k| written_leaves[k]).collect())
                .collect();
        std::fs::create_dir_all(dir).map_err(|e| {
            file_error(
                &dir.display().to_string(),
                format!("cannot create the directory: {e}"),
            )
        })?;
        if groups.len() <= 1 {
            let path = dir.join(shards::SINGLE_FILE);
            let all = plan.written();
            write_file(&path, &plan.file(&all), tree)?;
            return Ok(vec![path]);
        }
        let mut written = Vec::with_capacity(groups.len() + 1);
        let mut weight_map = BTreeMap::new();
        for (k, group) in groups.iter().enumerate() {
            let file_name = shards::shard_name(k + 1, groups.len());
            let path = dir.join(&file_name);
            write_file(&path, &plan.file(group), tree)?;
            for &i in group {
                weight_map.insert(plan.tensors[i].name.clone(), file_name.clone());
            }
            written.push(path);
        }
        let total: usize = written_leaves.iter().map(|&i| plan.tensors[i].bytes).sum();
        let index = shards::index_json(total, &weight_map);
        let index_path = dir.join(shards::INDEX_FILE);
        write_bytes(&index_path, index.as_bytes())?;
        written.push(index_path);
        Ok(written)
    }

    /// Writes the leaves of `tree` for which `part(leaf index)` holds to
    /// the file at `path` (its metadata, the TreeDef included, as in every
    /// file of this crate), and returns each tensor written with its size
    /// in bytes: one shard of a checkpoint that several processes write
    /// together, each its own part, before one of them writes the index
    /// ([`write_index`](super::write_index)). The file is written whole or
    /// not at all; a part with no tensor writes no file.
    ///
    /// ```
    /// use pytree_std::checkpoint::{self, Checkpoint, Load, Save};
    /// let dir = std::env::temp_dir().join(format!("pytree-part-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let tree = (vec![1.0f32; 2], vec![2.0f32; 3]);
    /// let a = Save::new().save_part(dir.join("a.safetensors"), &tree, |i| i < 2)?;
    /// let b = Save::new().save_part(dir.join("b.safetensors"), &tree, |i| i >= 2)?;
    /// assert_eq!(a, [("0.0".to_string(), 4), ("0.1".to_string(), 4)]);
    /// let map = a.iter().map(|(n, _)| (n.clone(), "a.safetensors".to_string()))
    ///     .chain(b.iter().map(|(n, _)| (n.clone(), "b.safetensors".to_string())))
    ///     .collect();
    /// let index = checkpoint::write_index(&dir, &map, 20)?;
    /// assert_eq!(Load::new().open(&index)?.load::<(Vec<f32>, Vec<f32>)>()?.0, tree);
    /// # std::fs::remove_dir_all(&dir).ok();
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn save_part<T>(
        &self,
        path: impl AsRef<Path>,
        tree: &T,
        part: impl Fn(usize) -> bool,
    ) -> Result<Vec<(String, usize)>, Error>
    where
        T: Flatten<Std>,
        T::Leaf: TensorLeaf,
    {
        let plan = self.plan(tree)?;
        let leaves: Vec<usize> = plan.written().into_iter().filter(|&i| part(i)).collect();
        if leaves.is_empty() {
            return Ok(Vec::new());
        }
        let path = path.as_ref();
        if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                file_error(
                    &dir.display().to_string(),
                    format!("cannot create the directory: {e}"),
                )
            })?;
        }
        write_file(path, &plan.file(&leaves), tree)?;
        Ok(leaves
            .iter()
            .map(|&i| (plan.tensors[i].name.clone(), plan.tensors[i].bytes))
            .collect())
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
        let all = plan.written();
        let file = plan.file(&all);
        let mut out = Vec::with_capacity(file.total_len());
        file.write(tree, &mut out).map_err(|e| match e {
            WriteError::Io(e) => Error::custom(format!("write: {e}")),
            WriteError::Leaf(e) => e,
        })?;
        Ok(out)
    }

    /// Names, signatures and the metadata of `tree`'s files.
    fn plan<T>(&self, tree: &T) -> Result<TreePlan, Error>
    where
        T: Flatten<Std>,
        T::Leaf: TensorLeaf,
    {
        if let Some(key) = self.metadata.keys().find(|k| k.starts_with("pytree.")) {
            return Err(Error::custom(format!(
                "metadata key `{key}`: keys beginning with `pytree.` are reserved for this crate"
            )));
        }
        self.renames.validate()?;
        let leaves = crate::paths::leaves_with_path(tree);
        let names = names_of(leaves.iter().map(|(p, _)| p), &self.prefix, &self.renames)?;
        let mut problems = Vec::new();
        let mut tensors = Vec::with_capacity(leaves.len());
        let mut widths = Vec::with_capacity(leaves.len());
        let mut transposes = Vec::with_capacity(leaves.len());
        let mut transposed_seen = 0;
        for ((path, leaf), name) in leaves.iter().zip(names) {
            let sig = match <T::Leaf as ByteLeaf>::signature(leaf) {
                Ok(sig) => sig,
                Err(e) => {
                    problems.push(e.under(path));
                    continue;
                }
            };
            let transposed = !self.transposed.is_empty()
                && self.transposed.contains(&path.keystr(KeyStr::SIMPLE));
            let sig = if transposed {
                transposed_seen += 1;
                let &[rows, cols] = sig.shape() else {
                    problems.push(
                        Error::custom(format!(
                            "Save::transpose writes a 2-d leaf transposed, this one is {sig}"
                        ))
                        .under(path),
                    );
                    continue;
                };
                let width = sig.dtype().size_in_bytes().unwrap_or(1);
                transposes.push(Some([width, rows, cols]));
                pytree_core::Signature::new(sig.dtype(), vec![cols, rows])
            } else {
                transposes.push(None);
                sig
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
                (Err(e), _) | (_, Err(e)) => problems.push(Error::custom(e).under(path)),
            }
        }
        if transposed_seen < self.transposed.len() {
            let names: BTreeSet<String> = leaves
                .iter()
                .map(|(p, _)| p.keystr(KeyStr::SIMPLE))
                .collect();
            for name in self.transposed.difference(&names) {
                problems.push(Error::custom(format!(
                    "Save::transpose names `{name}`, which is no leaf of the tree"
                )));
            }
        }
        combine(problems)?;
        let skip = self.tied_leaves::<T::Leaf>(&tensors, &leaves, &transposes)?;
        let mut metadata = self.metadata.clone();
        metadata
            .entry(FORMAT_KEY.into())
            .or_insert_with(|| FORMAT_PT.into());
        if !self.prefix.is_empty() {
            metadata.insert(PREFIX_KEY.into(), self.prefix.clone());
        }
        match serde_json::to_string(&crate::walk::structure(tree)) {
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
        Ok(TreePlan {
            tensors,
            widths,
            metadata,
            skip,
            transposes,
        })
    }

    /// Which leaves are not written, being tied to another with equal
    /// data; every tie that names no leaf or ties unequal leaves is an
    /// error.
    fn tied_leaves<L: TensorLeaf>(
        &self,
        tensors: &[Planned],
        leaves: &[(pytree_core::KeyPath, L::Ref<'_>)],
        transposes: &[Option<[usize; 3]>],
    ) -> Result<Vec<bool>, Error> {
        let mut skip = vec![false; tensors.len()];
        if self.ties.is_empty() {
            return Ok(skip);
        }
        let index: std::collections::HashMap<&str, usize> = tensors
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.as_str(), i))
            .collect();
        let mut problems = Vec::new();
        for (name, to) in &self.ties {
            let (Some(&i), Some(&j)) = (index.get(name.as_str()), index.get(to.as_str())) else {
                let missing = if index.contains_key(name.as_str()) {
                    to
                } else {
                    name
                };
                problems.push(Error::custom(format!(
                    "tie `{name}` -> `{to}`: no leaf is named `{missing}`"
                )));
                continue;
            };
            let same_sig = tensors[i].dtype_name == tensors[j].dtype_name
                && tensors[i].shape == tensors[j].shape;
            let same_data = same_sig
                && match (
                    written_bytes::<L>(&leaves[i].1, transposes[i]),
                    written_bytes::<L>(&leaves[j].1, transposes[j]),
                ) {
                    (Ok(a), Ok(b)) => a == b,
                    _ => false,
                };
            if !same_data || skip[j] {
                let why = if skip[j] {
                    format!("`{to}` is itself tied")
                } else {
                    "their data differ".to_string()
                };
                problems.push(Error::custom(format!(
                    "tensor `{name}` is tied to `{to}`, but {why}"
                )));
                continue;
            }
            skip[i] = true;
        }
        combine(problems)?;
        Ok(skip)
    }
}

/// The metadata key transformers reads the framework from.
const FORMAT_KEY: &str = "format";
/// Its value for PyTorch, which transformers' `load_state_dict` requires
/// (it refuses a safetensors file whose `format` is missing or other than
/// `pt`, `tf`, `flax` or `mlx`).
const FORMAT_PT: &str = "pt";

/// The tensors of a tree, in leaf order, and the metadata of its files.
struct TreePlan {
    tensors: Vec<Planned>,
    /// Bytes per element of each.
    widths: Vec<usize>,
    metadata: BTreeMap<String, String>,
    /// Leaves not written (tied to another).
    skip: Vec<bool>,
    /// Per leaf, `[element width, rows, cols]` of a leaf written
    /// transposed ([`Save::transpose`]).
    transposes: Vec<Option<[usize; 3]>>,
}

/// A leaf's bytes as written: transposed when `transpose` says so.
fn written_bytes<'a, L: TensorLeaf>(
    leaf: &'a L::Ref<'_>,
    transpose: Option<[usize; 3]>,
) -> Result<Cow<'a, [u8]>, Error> {
    let bytes = <L as ByteLeaf>::bytes(leaf)?;
    Ok(match transpose {
        Some([width, rows, cols]) => Cow::Owned(transpose_2d(&bytes, width, rows, cols)),
        None => bytes,
    })
}

impl TreePlan {
    /// The leaves written, in leaf order.
    fn written(&self) -> Vec<usize> {
        (0..self.tensors.len()).filter(|&i| !self.skip[i]).collect()
    }

    /// The file holding the leaves `leaves` (indices in leaf order): the
    /// widest elements first (stable: leaf order within a width), so that
    /// every tensor starts aligned to its element size, as the reference
    /// writer orders them.
    fn file(&self, leaves: &[usize]) -> WritePlan {
        let mut order: Vec<usize> = leaves.to_vec();
        order.sort_by_key(|&i| std::cmp::Reverse(self.widths[i]));
        let ordered: Vec<&Planned> = order.iter().map(|&i| &self.tensors[i]).collect();
        let header = format::header_bytes(&ordered, &self.metadata);
        let sizes: Vec<usize> = ordered.iter().map(|t| t.bytes).collect();
        WritePlan {
            header,
            transposes: order.iter().map(|&i| self.transposes[i]).collect(),
            order,
            data_len: sizes.iter().sum(),
            sizes,
        }
    }
}

/// Writes a planned file at `path`: beside it under a temporary name,
/// then renamed over it.
fn write_file<T>(path: &Path, plan: &WritePlan, tree: &T) -> Result<(), Error>
where
    T: Flatten<Std>,
    T::Leaf: TensorLeaf,
{
    atomic_write(path, plan.total_len(), |out| plan.write(tree, out))
}

/// Writes `bytes` at `path` as [`write_file`] does.
fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    atomic_write(path, bytes.len(), |out| {
        out.write_all(bytes).map_err(WriteError::Io)
    })
}

/// Creates a temporary file beside `path`, sized `len`, fills it with
/// `fill`, and renames it over `path`; on a failure the temporary file is
/// removed and `path` is untouched.
fn atomic_write(
    path: &Path,
    len: usize,
    fill: impl FnOnce(&mut BufWriter<File>) -> Result<(), WriteError>,
) -> Result<(), Error> {
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
        file.set_len(len as u64)
            .map_err(|e| io("cannot size the file", e))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        fill(&mut out).map_err(|e| match e {
            WriteError::Io(e) => io("write", e),
            WriteError::Leaf(e) => e,
        })?;
        drop(out.into_inner().map_err(|e| io("write", e.into_error()))?);
        std::fs::rename(&temp, path).map_err(|e| io("cannot rename the temporary file over it", e))
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
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
    /// Whether each, in that order, is written transposed (see
    /// [`TreePlan`]).
    transposes: Vec<Option<[usize; 3]>>,
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
        let leaves = crate::paths::leaves_with_path(tree);
        for ((&i, &size), &transpose) in self.order.iter().zip(&self.sizes).zip(&self.transposes) {
            let Some((path, leaf)) = leaves.get(i) else {
                return Err(WriteError::Leaf(Error::custom(
                    "the tree changed while it was saved",
                )));
            };
            let bytes = written_bytes::<T::Leaf>(leaf, transpose)
                .map_err(|e| WriteError::Leaf(e.under(path)))?;
            if bytes.len() != size {
                return Err(WriteError::Leaf(
                    Error::custom(format!(
                        "the leaf gave {} bytes of data, its signature says {size}",
                        bytes.len()
                    ))
                    .under(path),
                ));
            }
            out.write_all(&bytes).map_err(WriteError::Io)?;
        }
        out.flush().map_err(WriteError::Io)
    }
}

/// Writes the index `model.safetensors.index.json` of a sharded
/// checkpoint into `dir`, as transformers writes it (`metadata.total_size`,
/// the `weight_map` from each tensor name to its file, keys sorted), under
/// a temporary name then renamed over the target: a reader finds the
/// previous index or this one, never a part. Written last, after every
/// shard it names ([`Save::save_part`]), it is what makes a checkpoint
/// complete. Returns its path.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("pytree-index-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let map = std::collections::BTreeMap::from([("w".to_string(), "a.safetensors".to_string())]);
/// let path = pytree_std::checkpoint::write_index(&dir, &map, 4)?;
/// assert!(std::fs::read_to_string(&path).unwrap().contains("\"w\": \"a.safetensors\""));
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn write_index(
    dir: impl AsRef<Path>,
    weight_map: &BTreeMap<String, String>,
    total_size: usize,
) -> Result<PathBuf, Error> {
    let path = dir.as_ref().join(shards::INDEX_FILE);
    write_bytes(&path, shards::index_json(total_size, weight_map).as_bytes())?;
    Ok(path)
}
