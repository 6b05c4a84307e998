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
//!   [`Checkpoint::load_like`] reads against a template instead (equinox's
//!   `like`), and [`Checkpoint::load_into`] writes into an existing tree.
//! - **One door per capability**: [`save`] or [`Save`] to write; [`load`]
//!   by type with the default options; every other load is [`Load`] (the
//!   options), a source ([`Load::open`], [`Load::from_bytes`],
//!   [`Load::open_mapped`]), then a target of the [`Checkpoint`] it
//!   opened ([`load`](Checkpoint::load), [`load_like`](Checkpoint::load_like),
//!   [`load_into`](Checkpoint::load_into), [`load_map`](Checkpoint::load_map)),
//!   each returning its [`LoadReport`]. [`Checkpoint`] is also how a file
//!   is inspected. A TreeDef whose static
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
//!   are skipped ([`Load::allow_unused`]); [`LoadReport`] says what was
//!   loaded, missing and unused (PyTorch's `missing_keys` /
//!   `unexpected_keys`).
//! - **Files written elsewhere** (Hugging Face transformers, PyTorch):
//!   names are mapped by [`Renames`], ordered rules that chain (prefixes,
//!   patterns with wildcards such as `encoder.layer.*`, closures), on
//!   load ([`Load::renames`]) and on save ([`Save::renames`]); a field
//!   whose name Rust refuses is renamed by the derive
//!   (`#[pytree(rename = "self")]`). [`Load::shapes_from_file`] takes the
//!   shapes from the file, so a template fixes only the structure;
//!   [`Load::convert_floats`] reads f16 / bf16 into f32 and back. An index
//!   `model.safetensors.index.json` opens a sharded checkpoint as one
//!   ([`Load::open`]), and [`Save::save_sharded`] writes one as
//!   transformers names it. Saved files carry `{"format": "pt"}`, which
//!   transformers' `load_state_dict` requires; a weight shared by two
//!   fields is written once and tied again on load ([`Save::tie`],
//!   [`Load::tie`]).
//! - **Reading is one copy, straight into the destination**: each tensor
//!   is read from the file with a positioned read into the array being
//!   built (or, with [`Checkpoint::load_into`], the array that is already there),
//!   never through a memory map, so a file truncated or rewritten while a
//!   load reads it is an error naming the tensor, not a crash (SIGBUS).
//!   [`Load::open_mapped`] maps the files instead, for readers that use
//!   the tensors' bytes in place ([`TensorView::data_in_memory`]): it is
//!   `unsafe`, the map's contract being that nobody changes the files
//!   meanwhile.
//! - **A malformed or hostile file is an error**, never a panic or an
//!   allocation beyond the file's size: the header is at most 100 MB
//!   ([`Load::max_header_bytes`]), must be UTF-8 JSON, names appear once,
//!   dtypes are the format's, element counts and offsets are checked for
//!   overflow, the tensors must tile the data exactly, a `bool` byte must
//!   be 0 or 1, and a TreeDef read from the metadata must describe the
//!   file's tensors before anything is built from it. A path that is not
//!   a regular file (a named pipe, a device, a directory) is refused
//!   before it is opened, so a load never waits on a FIFO.
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
//! let (by_template, _) = Load::new().open(&path)?.load_like(&mlp)?; // names, dtypes, shapes checked
//! assert_eq!((&by_type, &by_template), (&mlp, &mlp));
//! let names: Vec<String> = Load::new().open(&path)?.names().map(String::from).collect();
//! assert_eq!(names, ["layers.0.w", "layers.0.b", "layers.1.w", "layers.1.b"]);
//!
//! // A template of another shape: every difference, with its path.
//! let other = Mlp { layers: vec![layer(4, 3), layer(3, 5), layer(5, 1)], ..mlp.clone() };
//! let err = Load::new().open(&path)?.load_like(&other).unwrap_err();
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
//! let report = Load::new().allow_missing().open(&path)?.load_into(&mut deeper)?;
//! assert_eq!(report.missing, ["layers.2.w", "layers.2.b"]);
//! assert_eq!(deeper.layers[1], mlp.layers[1]);
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok::<(), pytree_std::Error>(())
//! ```
//!
//! [`.safetensors`]: https://huggingface.co/docs/safetensors
//! [`KeyStr::SIMPLE`]: crate::paths::KeyStr::SIMPLE
//! [`TreeDef`]: crate::TreeDef
//! [`ErrorKind::Mismatches`]: crate::ErrorKind::Mismatches

// The layers, from the ground up: where the bytes are (`storage`), the
// format (`format`), names (`naming`); a leaf as a tensor (`leaf`, with
// `convert` and `statics`); the options (`options`); the opened file and
// its inspection (`reader`, `shards`); its sources (`open`); the loads
// from it (`by_names`, `load`); saving (`save`).
mod by_names;
mod convert;
mod format;
pub(crate) mod leaf;
mod load;
mod naming;
mod open;
mod options;
mod reader;
mod save;
mod shards;
mod statics;
mod storage;

use std::path::Path;

use pytree_core::{Error, Flatten, Unflatten};

pub use self::format::{DEFAULT_MAX_HEADER_BYTES, PREFIX_KEY, TREEDEF_ERROR_KEY, TREEDEF_KEY};
pub use self::leaf::{TensorLeaf, TensorView};
pub use self::naming::Renames;
pub use self::options::{Load, LoadReport};
pub use self::reader::Checkpoint;
pub use self::save::{write_index, Save};
pub use self::shards::{shard_name, INDEX_FILE, SINGLE_FILE};
// Where `Element` was first (it is `leaf_bytes`'s, compiled without this feature).
pub use crate::leaf_bytes::Element;
use crate::std_namespace::Std;

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

/// Loads a `T` from the file at `path` by its type alone, with the
/// default (strict) [`Load`] options: [`Checkpoint::load`] of
/// `Load::new().open(path)`, whose [`LoadReport`] says nothing here (a
/// strict load that succeeds loaded every leaf from every tensor). The
/// structure comes from the TreeDef in the file's metadata; a file
/// without one (written by Python's `safetensors` or transformers) loads
/// by its tensor names. Other loads (against a template, in place,
/// partial, renamed) start at [`Load`].
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
    Load::new().open(path)?.load().map(|(tree, _)| tree)
}
