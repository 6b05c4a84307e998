//! Target `load_by_names`: safetensors files that hold no TreeDef (as
//! Python's `safetensors` and transformers write them), loaded by type
//! through the tensors' names (`Checkpoint::load`, which reads such a file
//! by names, and the same with `Load::by_names`, which reads any file so).
//!
//! The first byte picks how the file is made (its low bit) and the load
//! options (the other bits):
//!
//! - `0`: the rest of the bytes are the file, as they are;
//! - `1`: a file is built from the bytes that follow (`tensors_file`):
//!   up to 12 tensors, each a name of one to four segments from a
//!   vocabulary of the names a model uses and names a loader must refuse
//!   (`layers.0.w`, `model.layer.1.b`, `layers.-1.w`,
//!   `layers.99999999999999999999.b`, `layers.00.w`, `__metadata__`, an
//!   empty segment ...), a dtype, a shape (sometimes with a huge
//!   dimension) and data of the right length (sometimes one byte off), and
//!   the format's metadata or a saved prefix.
//!
//! Options: renames (none, a prefix, a pattern, both), `convert_floats`,
//! `allow_missing`, `allow_unused`, `shapes_from_file`. What reads is
//! loaded by names into a model of optional and repeated layers, a
//! `Vec` of arrays, a `Vec` of `Vec`s, a tuple, and types names cannot
//! describe (a static field, an enum, a map, a `Tree`), which must be
//! errors. Laws: nothing panics; `load` and `load` with `Load::by_names`
//! agree; a value loaded saves, and loads back from its own file to a
//! value that saves to the same bytes; the report lists every tensor of
//! the file once, as loaded or unused, and every leaf once, as loaded or
//! missing.

use std::collections::BTreeMap;

use pytree_std::checkpoint::{Checkpoint, Load, LoadReport, Renames, TensorLeaf, PREFIX_KEY};
use pytree_std::ndarray::{Array0, Array1, Array2, ArrayD};
use pytree_std::{PyTree, Std, Tree, Unflatten};
use serde_json::{json, Map, Value};

use super::checkpoint::{inspect, saves_and_loads_back, with_options, Net};
use super::{Input, Model};

/// A block: a weight of any rank and an optional bias.
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct Block {
    /// Weights.
    pub w: ArrayD<f32>,
    /// An optional bias.
    pub b: Option<Array1<f32>>,
}

/// A model whose every part a name can say: repeated layers, an optional
/// norm, fixed ranks.
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct Stack {
    /// `layers.0.w`, `layers.0.b`, ...
    pub layers: Vec<Block>,
    /// `norm`, if there.
    pub norm: Option<ArrayD<f32>>,
    /// `emb`, rank 2.
    pub emb: Array2<f32>,
    /// `scale`, rank 0.
    pub scale: Array0<f32>,
}

/// Segments of the names of [`tensors_file`]: a model's, and ones a loader
/// must refuse or read with care.
const SEGMENTS: [&str; 24] = [
    "layers",
    "layer",
    "0",
    "1",
    "2",
    "w",
    "b",
    "norm",
    "emb",
    "scale",
    "model",
    "h",
    "weight",
    "bias",
    "10",
    "00",
    "-1",
    "99999999999999999999",
    "18446744073709551615",
    "",
    "__metadata__",
    "a b",
    "ü",
    "layers.0",
];

/// Dtypes of [`tensors_file`] and their bits per element.
const DTYPES: [(&str, usize); 12] = [
    ("F32", 32),
    ("F32", 32),
    ("F16", 16),
    ("BF16", 16),
    ("F64", 64),
    ("I64", 64),
    ("I32", 32),
    ("U8", 8),
    ("BOOL", 8),
    ("F8_E4M3", 8),
    ("F4", 4),
    ("C64", 64),
];

/// A name of one to four segments (see [`SEGMENTS`]).
fn name(input: &mut Input<'_>) -> String {
    let n = 1 + input.below(4);
    let parts: Vec<&str> = (0..n)
        .map(|_| SEGMENTS[input.below(SEGMENTS.len())])
        .collect();
    parts.join(".")
}

/// A safetensors file built from the input, with no TreeDef: up to 12
/// tensors of the names, dtypes and shapes the input picks, data of the
/// right length (the input's bytes, then zeros) unless the input says one
/// byte more or less, and some metadata. Shared with `any_array` and
/// `shard_index`.
pub(crate) fn tensors_file(input: &mut Input<'_>) -> Vec<u8> {
    let mut header = Map::new();
    let mut data: Vec<u8> = Vec::new();
    for _ in 0..input.below(13) {
        let name = name(input);
        let (dtype, bits) = DTYPES[input.below(DTYPES.len())];
        let shape: Vec<usize> = (0..input.below(4))
            .map(|_| match input.byte() {
                b @ 0..=243 => usize::from(b % 5),
                244 => 1 << 32,
                245 => usize::MAX,
                _ => usize::from(input.byte()),
            })
            .collect();
        let bytes = shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .and_then(|n| n.checked_mul(bits))
            .filter(|b| b % 8 == 0 && b / 8 <= 1 << 16)
            .map_or(0, |b| b / 8);
        let bytes = match input.byte() {
            250 => bytes + 1,
            251 => bytes.saturating_sub(1),
            _ => bytes,
        };
        let start = data.len();
        data.extend((0..bytes).map(|_| input.byte()));
        header.insert(
            name,
            json!({"dtype": dtype, "shape": shape, "data_offsets": [start, data.len()]}),
        );
    }
    let mut metadata = Map::new();
    match input.byte() % 4 {
        0 => {}
        1 => {
            metadata.insert("format".into(), json!("pt"));
        }
        2 => {
            metadata.insert(PREFIX_KEY.into(), json!("model."));
        }
        _ => {
            metadata.insert("pytree.treedef".into(), json!("{}"));
        }
    }
    if !metadata.is_empty() {
        header.insert("__metadata__".into(), Value::Object(metadata));
    }
    let text = Value::Object(header).to_string();
    let mut file = (text.len() as u64).to_le_bytes().to_vec();
    file.extend(text.bytes().chain(data));
    file
}

/// The file from the input: raw (first byte even) or built.
fn file_of(input: &mut Input<'_>, data: &[u8]) -> Vec<u8> {
    if data.first().is_some_and(|b| b & 1 == 0) {
        return data.get(1..).unwrap_or(&[]).to_vec();
    }
    tensors_file(input)
}

/// The load options of the first byte's upper bits.
fn load_options(head: u8) -> Load {
    let mut load = Load::new();
    load = match (head >> 1) & 3 {
        0 => load,
        1 => load.renames(Renames::new().prefix("model.", "")),
        2 => load.renames(Renames::new().pattern("layer.*", "layers.$1")),
        _ => load.renames(
            Renames::new()
                .prefix("model.", "")
                .pattern("h.*", "layers.$1")
                .pattern("weight", "w"),
        ),
    };
    load = with_options(load, head, [8, 16, 32]);
    if head & 64 != 0 {
        load = load.shapes_from_file();
    }
    load
}

/// Loads a `T` by names (from `named`, the file opened with
/// `Load::by_names`); checks the report and the round trip, and (when
/// `same`: the file holds no TreeDef) that `load` of `file` agrees.
fn by_names<T>(file: &Checkpoint, named: &Checkpoint, same: bool)
where
    T: Unflatten<Std>,
    T::Leaf: TensorLeaf,
{
    let by_load = same.then(|| file.load::<T>().is_ok());
    let (value, report): (T, LoadReport) = match named.load() {
        Ok(loaded) => loaded,
        Err(e) => {
            let _ = e.to_string();
            assert_ne!(by_load, Some(true), "load and load_by_names disagree");
            return;
        }
    };
    assert_ne!(by_load, Some(false), "load and load_by_names disagree");
    // Every tensor of the file is loaded or unused, once.
    let mut loaded = report.loaded.clone();
    loaded.sort();
    loaded.dedup();
    assert_eq!(loaded.len(), report.loaded.len(), "a name loaded twice");
    assert_eq!(
        report.loaded.len() + report.unused.len(),
        file.len(),
        "{report:?}"
    );
    assert_eq!(
        report.loaded.len() + report.missing.len(),
        pytree_std::leaves(&value).len()
    );
    saves_and_loads_back(&value);
}

/// Target `load_by_names`; see the module docs.
pub fn load_by_names(data: &[u8]) {
    let mut input = Input::new(data);
    let head = input.byte();
    let bytes = file_of(&mut input, data);
    let file = match load_options(head).from_bytes(bytes.clone()) {
        Ok(file) => file,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    // Opening does not depend on `by_names`: what opened once opens again.
    let named = load_options(head)
        .by_names()
        .from_bytes(bytes)
        .expect("the file opened without by_names");
    inspect(&file);
    match file.treedef() {
        Ok(None) => {}
        // Loaded by its TreeDef (target `checkpoint_doc`'s), or a
        // TreeDef that does not read: `load` says so, by names still
        // loads.
        Ok(Some(_)) => return,
        Err(e) => {
            let _ = e.to_string();
            assert!(file.load::<Stack>().is_err());
            by_names::<Stack>(&file, &named, false);
            return;
        }
    }
    let sel = usize::from(data.last().copied().unwrap_or(0));
    let loads: [fn(&Checkpoint, &Checkpoint); 8] = [
        |file, named| by_names::<Stack>(file, named, true),
        |file, named| by_names::<Vec<ArrayD<f32>>>(file, named, true),
        |file, named| by_names::<Vec<Vec<ArrayD<f64>>>>(file, named, true),
        |file, named| by_names::<(ArrayD<f32>, Vec<Block>)>(file, named, true),
        |file, named| by_names::<Option<Block>>(file, named, true),
        |file, named| by_names::<Net>(file, named, true),
        |file, named| by_names::<Model<ArrayD<f32>>>(file, named, true),
        |_, named| {
            // Names cannot say a map's keys or a dynamic tree's nodes.
            assert!(named
                .load::<BTreeMap<String, ArrayD<f32>>>()
                .is_err_and(|e| !e.to_string().is_empty()));
            assert!(named.load::<Tree<ArrayD<f32>>>().is_err());
        },
    ];
    loads[sel % 8](&file, &named);
    loads[(sel / 8 + 1 + sel % 8) % 8](&file, &named);
}
