//! Target `checkpoint_doc`: safetensors checkpoints from bytes, read by
//! `pytree_std::checkpoint` and loaded into several types.
//!
//! The first byte picks how the file is made (its low two bits) and the
//! load options (the other bits):
//!
//! - `0`: the rest of the bytes are the file, as they are;
//! - `1`: a real checkpoint made by the library (one of [`bases`], picked
//!   by the next byte) is taken apart into its header JSON and its data,
//!   and the bytes that follow drive structure-aware mutations of it: a
//!   tensor dropped, duplicated or renamed, its dtype, shape or offsets
//!   changed, a field dropped or of the wrong JSON type, the TreeDef in
//!   `__metadata__` mutated as `mutated_treedef` mutates documents, the
//!   metadata changed, data bytes changed, the header length or padding
//!   changed;
//! - `2`, `3`: the same, then the offsets are recomputed so that the
//!   tensors tile the data again (so most files still read, and the loads
//!   are reached with other dtypes, shapes, names and TreeDefs).
//!
//! What reads is loaded by type into a derived struct of ndarray arrays
//! of fixed ranks, a derived generic model (enum variants, maps, static
//! fields) of `ArrayD<f32>`, `Vec<ArrayD<f32>>`, `Tree<ArrayD<f32>>`,
//! `BTreeMap<String, Array2<f32>>`, `Vec<ArrayD<bool>>` and `Vec<f64>`; as
//! flat maps; against templates (`load_like`); and into existing trees
//! (`load_into`), a few of these per input (picked by its last byte, so
//! that each input is quick; all of them over the inputs). Laws: nothing panics; every tensor's data is as long as
//! its dtype and shape say; a value loaded by type saves, and the saved
//! file loads back to a value that saves to the same bytes (equal leaves,
//! bit for bit, NaN included); a typed value's TreeDef is the file's, and
//! its tensors are the file's (same names, dtypes, shapes and bytes); a
//! value loaded against a template has the template's structure (its
//! static fields maybe the file's); a failed `load_into` changed nothing.

use std::collections::BTreeMap;

use pytree_std::checkpoint::{self, Checkpoint, Load, Save, TensorLeaf, PREFIX_KEY, TREEDEF_KEY};
use pytree_std::ndarray::{Array0, Array1, Array2, ArrayD, IxDyn};
use pytree_std::{DType, PyTree, Tree, TreeDef};
use serde_json::{Map, Value};

use super::{models, Input, Model, NAMES};

/// A linear layer: arrays of fixed ranks.
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct Linear {
    /// Weights.
    pub w: Array2<f32>,
    /// Biases.
    pub b: Array1<f32>,
}

/// A network: a `Vec` of layers, an optional array, a 0-d array, an array
/// of any rank, a static field.
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct Net {
    /// Layers.
    pub layers: Vec<Linear>,
    /// An optional norm.
    pub norm: Option<Array1<f32>>,
    /// A 0-d array.
    pub scale: Array0<f32>,
    /// Any rank.
    pub emb: ArrayD<f32>,
    /// A static name.
    #[pytree(static)]
    pub name: String,
}

fn net() -> Net {
    let linear = |i: usize, o: usize, s: f32| Linear {
        w: Array2::from_shape_fn((i, o), |(r, c)| s + r as f32 * 0.5 - c as f32),
        b: Array1::from_shape_fn(o, |k| s - k as f32),
    };
    Net {
        layers: vec![linear(3, 2, 1.0), linear(2, 1, -2.0)],
        norm: Some(Array1::from_elem(1, 0.25)),
        scale: pytree_std::ndarray::arr0(f32::NAN),
        emb: ArrayD::from_shape_fn(IxDyn(&[2, 0, 3]), |_| 0.0),
        name: "net".into(),
    }
}

fn model() -> Model<ArrayD<f32>> {
    pytree_std::walk::map_into(models()[1].clone(), |x: u32| {
        let shape: &[usize] = match x % 4 {
            0 => &[],
            1 => &[2],
            2 => &[1, 3],
            _ => &[0, 2],
        };
        ArrayD::from_elem(IxDyn(shape), x as f32 * 1.5)
    })
    .expect("the model maps to arrays")
}

fn arrays() -> Vec<ArrayD<f32>> {
    vec![
        ArrayD::from_elem(IxDyn(&[]), -1.0),
        ArrayD::from_shape_fn(IxDyn(&[2, 3]), |d| d[0] as f32 - d[1] as f32),
        ArrayD::from_elem(IxDyn(&[0, 5]), 0.0),
        ArrayD::from_elem(IxDyn(&[1, 1, 2]), f32::INFINITY),
    ]
}

fn dynamic() -> Tree<ArrayD<f32>> {
    pytree_std::tree! {
        "encoder" => { "w" => ArrayD::from_elem(IxDyn(&[2, 2]), 1.0f32), "b" => ArrayD::from_elem(IxDyn(&[2]), 0.5f32) },
        "head" => [ArrayD::from_elem(IxDyn(&[3]), 2.0f32), None],
        "x" => {},
    }
}

fn state_dict() -> BTreeMap<String, Array2<f32>> {
    BTreeMap::from([
        ("enc.w".to_string(), Array2::from_elem((2, 2), 3.0)),
        ("dec.w".to_string(), Array2::from_elem((1, 2), -3.0)),
    ])
}

fn masks() -> Vec<ArrayD<bool>> {
    vec![
        ArrayD::from_shape_fn(IxDyn(&[2, 2]), |d| d[0] == d[1]),
        ArrayD::from_elem(IxDyn(&[3]), true),
    ]
}

/// The templates of `load_like` and `load_into` (built once).
struct Templates {
    net: Net,
    state_dict: BTreeMap<String, Array2<f32>>,
    masks: Vec<ArrayD<bool>>,
    dynamic: Tree<ArrayD<f32>>,
}

fn templates() -> &'static Templates {
    static T: std::sync::OnceLock<Templates> = std::sync::OnceLock::new();
    T.get_or_init(|| Templates {
        net: net(),
        state_dict: state_dict(),
        masks: masks(),
        dynamic: dynamic(),
    })
}

/// The real checkpoints the structure-aware mutations start from, made by
/// the library (built once): a `Net`, the generic model, a `Vec` of
/// arrays, a `Tree`, a state dict saved with a prefix and metadata of its
/// own, and boolean masks.
pub fn bases() -> &'static [Vec<u8>] {
    static BASES: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
    BASES.get_or_init(|| {
        vec![
            checkpoint::Save::new().to_bytes(&net()).expect("saves"),
            checkpoint::Save::new().to_bytes(&model()).expect("saves"),
            checkpoint::Save::new().to_bytes(&arrays()).expect("saves"),
            checkpoint::Save::new().to_bytes(&dynamic()).expect("saves"),
            Save::new()
                .prefix("model.")
                .metadata("epoch", "3")
                .to_bytes(&state_dict())
                .expect("saves"),
            checkpoint::Save::new().to_bytes(&masks()).expect("saves"),
        ]
    })
}

/// Bits per element of the format's dtypes (the reader's table, kept here
/// to check its tensors against).
const DTYPES: &[(&str, usize)] = &[
    ("BOOL", 8),
    ("U8", 8),
    ("I8", 8),
    ("U16", 16),
    ("I16", 16),
    ("F16", 16),
    ("BF16", 16),
    ("U32", 32),
    ("I32", 32),
    ("F32", 32),
    ("U64", 64),
    ("I64", 64),
    ("F64", 64),
    ("F8_E5M2", 8),
    ("F8_E4M3", 8),
    ("F8_E8M0", 8),
    ("F8_E4M3FNUZ", 8),
    ("F8_E5M2FNUZ", 8),
    ("F6_E2M3", 6),
    ("F6_E3M2", 6),
    ("F4", 4),
    ("C64", 64),
];

/// Bits per element of a [`DType`] as the reader reports it.
fn bits_of(dtype: DType) -> Option<usize> {
    Some(match dtype {
        DType::Bool | DType::U8 | DType::I8 => 8,
        DType::U16 | DType::I16 | DType::F16 | DType::BF16 => 16,
        DType::U32 | DType::I32 | DType::F32 => 32,
        DType::U64 | DType::I64 | DType::F64 => 64,
        DType::Other(name) => match name {
            "f8e5m2" | "f8e4m3" | "f8e8m0" | "f8e4m3fnuz" | "f8e5m2fnuz" => 8,
            "f6e2m3" | "f6e3m2" => 6,
            "f4" => 4,
            "c64" => 64,
            _ => return None,
        },
        _ => return None,
    })
}

/// Bytes of a tensor entry of the header as it stands, if its dtype and
/// shape are well-formed and it is at most `cap` bytes.
fn entry_bytes(entry: &Value, cap: usize) -> Option<usize> {
    let dtype = entry.get("dtype")?.as_str()?;
    let bits = DTYPES.iter().find(|(n, _)| *n == dtype)?.1;
    let mut elements = 1usize;
    for d in entry.get("shape")?.as_array()? {
        elements = elements.checked_mul(usize::try_from(d.as_u64()?).ok()?)?;
    }
    let total = elements.checked_mul(bits)?;
    (total % 8 == 0 && total / 8 <= cap).then_some(total / 8)
}

/// Names a mutation gives a tensor: names of the bases' tensors, with and
/// without their prefix, and names a checkpoint must refuse.
const TENSOR_NAMES: [&str; 14] = [
    "layers.0.w",
    "layers.1.b",
    "norm",
    "scale",
    "0",
    "3",
    "model.enc.w",
    "enc.w",
    "encoder.w",
    "head.0",
    "",
    "__metadata__",
    "a.b",
    "extra.layers.0.b.1",
];

/// Something to do to the file's bytes once the header is written.
enum Post {
    /// Add to the header length (wrapping).
    LenDelta(u64),
    /// Insert a byte into the header text.
    Insert(usize, u8),
    /// Append `n` copies of a byte to the header text (padding).
    Pad(usize, u8),
}

/// A checkpoint taken apart: its header JSON and its data.
struct Parts {
    header: Value,
    data: Vec<u8>,
    post: Vec<Post>,
    /// The TreeDef of the metadata while it is being mutated (read once,
    /// written back by [`Parts::flush`]).
    treedef: Option<Value>,
}

impl Parts {
    /// The bases taken apart (once).
    fn bases() -> &'static [(Value, Vec<u8>)] {
        static PARTS: std::sync::OnceLock<Vec<(Value, Vec<u8>)>> = std::sync::OnceLock::new();
        PARTS.get_or_init(|| {
            bases()
                .iter()
                .map(|file| {
                    let n = u64::from_le_bytes(file[..8].try_into().expect("8 bytes")) as usize;
                    let header =
                        serde_json::from_slice(&file[8..8 + n]).expect("a base's header is JSON");
                    (header, file[8 + n..].to_vec())
                })
                .collect()
        })
    }

    /// Writes the TreeDef being mutated back into the metadata.
    fn flush(&mut self) {
        if let Some(def) = self.treedef.take() {
            if let Some(doc) = self
                .header
                .pointer_mut(&format!("/__metadata__/{TREEDEF_KEY}"))
            {
                *doc = Value::from(serde_json::to_string(&def).expect("a JSON value writes"));
            }
        }
    }

    fn bytes(&self) -> Vec<u8> {
        let mut text = serde_json::to_vec(&self.header).expect("a JSON value writes");
        let mut len = text.len() as u64;
        for p in &self.post {
            match *p {
                Post::LenDelta(d) => len = len.wrapping_add(d),
                Post::Insert(at, b) => {
                    let at = at % (text.len() + 1);
                    text.insert(at, b);
                    len = len.wrapping_add(1);
                }
                Post::Pad(n, b) => {
                    text.extend(std::iter::repeat_n(b, n));
                    len = len.wrapping_add(n as u64);
                }
            }
        }
        let mut out = len.to_le_bytes().to_vec();
        out.extend(text);
        out.extend(&self.data);
        out
    }

    fn tensor_names(&self) -> Vec<String> {
        match self.header.as_object() {
            Some(m) => m.keys().filter(|k| *k != "__metadata__").cloned().collect(),
            None => Vec::new(),
        }
    }

    /// Recomputes the offsets so that the tensors tile the data in the
    /// order of their present offsets, resizing the data (new bytes taken
    /// from `fill`); leaves the file as it is when an entry is malformed
    /// or the data would pass 64 KiB.
    fn retile(&mut self, fill: u8) {
        const CAP: usize = 1 << 16;
        let Some(map) = self.header.as_object_mut() else {
            return;
        };
        let mut order: Vec<(u64, String, usize)> = Vec::new();
        for (name, entry) in map.iter() {
            if name == "__metadata__" {
                continue;
            }
            let Some(size) = entry_bytes(entry, CAP) else {
                return;
            };
            let begin = entry
                .pointer("/data_offsets/0")
                .and_then(Value::as_u64)
                .unwrap_or(u64::MAX);
            order.push((begin, name.clone(), size));
        }
        order.sort();
        let total: usize = order.iter().map(|o| o.2).sum();
        if total > CAP {
            return;
        }
        let mut at = 0usize;
        for (_, name, size) in order {
            if let Some(entry) = map.get_mut(&name).and_then(Value::as_object_mut) {
                entry.insert("data_offsets".into(), serde_json::json!([at, at + size]));
            }
            at += size;
        }
        let mut k = 0u8;
        self.data.resize_with(at, || {
            k = k.wrapping_add(1);
            fill.wrapping_mul(k)
        });
    }

    /// One structure-aware mutation.
    fn mutate(&mut self, input: &mut Input<'_>) {
        let names = self.tensor_names();
        let pick = |input: &mut Input<'_>| -> Option<String> {
            (!names.is_empty()).then(|| names[input.below(names.len())].clone())
        };
        let op = input.below(16);
        match op {
            0 => {
                // A data byte.
                if !self.data.is_empty() {
                    let i = input.count() % self.data.len();
                    self.data[i] = input.byte();
                }
            }
            1 => {
                // The data cut or extended.
                let n = input.count() % 64;
                if input.below(2) == 0 {
                    self.data.truncate(self.data.len().saturating_sub(n));
                } else {
                    let b = input.byte();
                    self.data.extend(std::iter::repeat_n(b, n));
                }
            }
            2 => {
                self.flush();
                if let (Some(name), Some(map)) = (pick(input), self.header.as_object_mut()) {
                    map.remove(&name);
                }
            }
            3 | 4 => {
                // Duplicated under another name, or renamed.
                self.flush();
                if let (Some(name), Some(map)) = (pick(input), self.header.as_object_mut()) {
                    let to = match input.below(3) {
                        0 => TENSOR_NAMES[input.below(TENSOR_NAMES.len())].to_string(),
                        1 => format!("{name}.{}", NAMES[input.below(NAMES.len())]),
                        _ => format!("model.{name}"),
                    };
                    let entry = if op == 3 {
                        map.get(&name).cloned()
                    } else {
                        map.remove(&name)
                    };
                    if let Some(entry) = entry {
                        map.insert(to, entry);
                    }
                }
            }
            5 => {
                // The dtype: another of the format's, or not one.
                if let Some(entry) = pick(input).and_then(|n| self.header.get_mut(&n)) {
                    entry["dtype"] = match input.below(8) {
                        0 => Value::from("F33"),
                        1 => Value::from(7),
                        2 => Value::from("f32"),
                        _ => Value::from(DTYPES[input.below(DTYPES.len())].0),
                    };
                }
            }
            6 | 7 => {
                // The shape: a dimension changed, added or removed.
                if let Some(entry) = pick(input).and_then(|n| self.header.get_mut(&n)) {
                    match input.below(6) {
                        0 => entry["shape"] = Value::from("2,3"),
                        1 => {
                            let n = input.below(40);
                            entry["shape"] = Value::Array(vec![Value::from(1); n]);
                        }
                        k => {
                            if let Some(shape) = entry["shape"].as_array_mut() {
                                match k {
                                    2 => {
                                        shape.pop();
                                    }
                                    3 => shape.push(Value::from(input.count())),
                                    _ => {
                                        if !shape.is_empty() {
                                            let i = input.below(shape.len());
                                            shape[i] = match input.below(8) {
                                                0 => Value::from(-1),
                                                1 => Value::from(1.5),
                                                _ => Value::from(input.count()),
                                            };
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            8 => {
                // The offsets.
                if let Some(entry) = pick(input).and_then(|n| self.header.get_mut(&n)) {
                    let (b, e) = (input.count() as u64, input.count() as u64);
                    entry["data_offsets"] = match input.below(8) {
                        0 => serde_json::json!([b]),
                        1 => serde_json::json!([b, e, 0]),
                        2 => serde_json::json!([-1, e]),
                        3 => serde_json::json!([u64::MAX, u64::MAX]),
                        4 => serde_json::json!([e, b]),
                        _ => {
                            let begin = entry
                                .pointer("/data_offsets/0")
                                .and_then(Value::as_u64)
                                .unwrap_or(0);
                            let end = entry
                                .pointer("/data_offsets/1")
                                .and_then(Value::as_u64)
                                .unwrap_or(0);
                            let d = b % 9;
                            if input.below(2) == 0 {
                                serde_json::json!([begin.wrapping_add(d), end.wrapping_add(d)])
                            } else {
                                serde_json::json!([begin, end.wrapping_sub(d)])
                            }
                        }
                    };
                }
            }
            9 => {
                // A field dropped, of the wrong type, or one too many.
                if let Some(entry) = pick(input)
                    .and_then(|n| self.header.get_mut(&n))
                    .and_then(Value::as_object_mut)
                {
                    let field = ["dtype", "shape", "data_offsets"][input.below(3)];
                    match input.below(4) {
                        0 => {
                            entry.remove(field);
                        }
                        1 => {
                            entry.insert(field.into(), Value::Null);
                        }
                        2 => {
                            entry.insert("extra".into(), Value::from(1));
                        }
                        _ => {
                            entry.insert(field.into(), serde_json::json!({ "x": [] }));
                        }
                    }
                }
            }
            10 | 11 => {
                // The TreeDef in the metadata, mutated as a document.
                if self.treedef.is_none() {
                    self.treedef = self
                        .header
                        .pointer(&format!("/__metadata__/{TREEDEF_KEY}"))
                        .and_then(Value::as_str)
                        .and_then(|s| serde_json::from_str::<Value>(s).ok());
                }
                if let Some(def) = &mut self.treedef {
                    for _ in 0..1 + input.below(3) {
                        super::mutate(def, input);
                    }
                }
            }
            12 => {
                // The metadata.
                self.flush();
                let Some(map) = self.header.as_object_mut() else {
                    return;
                };
                let k = input.below(8);
                if k == 0 {
                    map.insert("__metadata__".into(), Value::Null);
                    return;
                }
                if k == 1 {
                    map.remove("__metadata__");
                    return;
                }
                let meta = map
                    .entry("__metadata__")
                    .or_insert_with(|| Value::Object(Map::new()));
                let Some(meta) = meta.as_object_mut() else {
                    return;
                };
                match k {
                    2 => {
                        meta.remove(TREEDEF_KEY);
                    }
                    3 => {
                        let doc = match input.below(4) {
                            0 => "{}".to_string(),
                            1 => "not json".to_string(),
                            2 => r#"{"schemas":[],"nodes":[{"seq":1000000000000000000},{"leaves":1000000000000000000}]}"#.to_string(),
                            _ => serde_json::to_string(&pytree_std::structure(&arrays()))
                                .expect("a TreeDef writes"),
                        };
                        meta.insert(TREEDEF_KEY.into(), Value::from(doc));
                    }
                    4 => {
                        let p = ["model.", "", "layers.", "m"][input.below(4)];
                        meta.insert(PREFIX_KEY.into(), Value::from(p));
                    }
                    5 => {
                        meta.insert("epoch".into(), Value::from(input.count()));
                    }
                    _ => {
                        meta.insert(NAMES[input.below(NAMES.len())].into(), Value::from("v"));
                    }
                }
            }
            13 => self.post.push(Post::LenDelta(match input.below(4) {
                0 => 1,
                1 => u64::MAX,
                2 => input.count() as u64,
                _ => (input.count() as u64).wrapping_neg(),
            })),
            14 => {
                let at = input.count();
                let b = [b' ', b'}', b'{', b'"', b',', 0, 0xff, b'1'][input.below(8)];
                self.post.push(Post::Insert(at, b));
            }
            _ => {
                let n = input.below(16);
                let b = [b' ', b'\n', 0, b'x'][input.below(4)];
                self.post.push(Post::Pad(n, b));
            }
        }
    }
}

/// `load` with the options whose bit (of `[convert_floats, allow_missing,
/// allow_unused]`, 0 for never) is set in `head`.
pub(crate) fn with_options(mut load: Load, head: u8, [convert, missing, unused]: [u8; 3]) -> Load {
    if head & convert != 0 {
        load = load.convert_floats();
    }
    if head & missing != 0 {
        load = load.allow_missing();
    }
    if head & unused != 0 {
        load = load.allow_unused();
    }
    load
}

/// The file made from the fuzz input, and the load options: see the
/// module docs.
pub fn file_of(data: &[u8]) -> (Vec<u8>, u8) {
    let mut input = Input::new(data);
    let head = input.byte();
    let (mode, options) = (head & 3, head >> 2);
    if mode == 0 {
        return (data.get(1..).unwrap_or(&[]).to_vec(), options);
    }
    let (header, data) = &Parts::bases()[input.below(bases().len())];
    let mut parts = Parts {
        header: header.clone(),
        data: data.clone(),
        post: Vec::new(),
        treedef: None,
    };
    let mut n = 0;
    while !input.is_empty() && n < 32 {
        parts.mutate(&mut input);
        n += 1;
    }
    parts.flush();
    if mode >= 2 {
        parts.retile(head);
    }
    (parts.bytes(), options)
}

/// Target `checkpoint_doc`; see the module docs.
pub fn checkpoint_doc(data: &[u8]) {
    let (bytes, options) = file_of(data);
    let mut load = Load::new();
    if options & 1 != 0 {
        load = load.allow_missing();
    }
    if options & 2 != 0 {
        load = load.allow_unused();
    }
    let renamed = options & 4 != 0;
    if renamed {
        load = load.rename_prefix("model.", "");
    }
    if options & 8 != 0 {
        load = load.max_header_bytes(usize::from(options) * 16);
    }
    let read = if options & 15 != 0 && options & 8 == 0 {
        let read = load.from_bytes(bytes.clone());
        assert_eq!(
            Load::new().from_bytes(bytes).is_ok(),
            read.is_ok(),
            "the load options change whether the same bytes read"
        );
        read
    } else {
        load.from_bytes(bytes)
    };
    let file = match read {
        Ok(file) => file,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    inspect(&file);
    let laws = Laws {
        file: &file,
        renamed,
        allow_unused: options & 2 != 0,
    };
    // A few of the loads per input (picked by its last byte), so that each
    // input is quick; every one of them over the inputs.
    let sel = usize::from(data.last().copied().unwrap_or(0));
    let by_type: [fn(&Laws<'_>); 7] = [
        |l| l.by_type::<Net>(true),
        |l| l.by_type::<Model<ArrayD<f32>>>(true),
        |l| l.by_type::<Vec<ArrayD<f32>>>(true),
        |l| l.by_type::<BTreeMap<String, Array2<f32>>>(true),
        |l| l.by_type::<Vec<ArrayD<bool>>>(true),
        |l| l.by_type::<Vec<f64>>(true),
        |l| l.by_type::<Tree<ArrayD<f32>>>(false),
    ];
    let others: [fn(&Laws<'_>); 7] = [
        |l| l.map::<ArrayD<f32>>(),
        |l| l.map::<ArrayD<bool>>(),
        |l| l.map::<f32>(),
        |l| l.like_and_into(&templates().net),
        |l| l.like_and_into(&templates().state_dict),
        |l| l.like_and_into(&templates().masks),
        |l| l.like_and_into(&templates().dynamic),
    ];
    by_type[sel % 7](&laws);
    by_type[(sel / 7 + 1 + sel % 7) % 7](&laws);
    others[(sel / 3) % 7](&laws);
    others[(sel / 21 + 1 + (sel / 3) % 7) % 7](&laws);
}

/// What the reader reports of each tensor agrees with itself.
pub(crate) fn inspect(file: &Checkpoint) {
    let _ = format!("{file:?}");
    let names: Vec<&str> = file.names().collect();
    assert_eq!(names.len(), file.len());
    assert_eq!(file.is_empty(), names.is_empty());
    for t in file.tensors() {
        let bits = bits_of(t.dtype()).expect("a dtype of the format");
        let elements = t
            .shape()
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .expect("a tensor's element count fits");
        assert_eq!(
            elements.checked_mul(bits),
            Some(t.num_bytes() * 8),
            "tensor `{}` ({}) has {} bytes",
            t.name(),
            t.signature(),
            t.num_bytes()
        );
        let again = file
            .tensor(t.name())
            .expect("a tensor is found by its name");
        assert_eq!(again.data_in_memory(), t.data_in_memory());
        assert_eq!(again.signature(), t.signature());
    }
    let _ = file.metadata().len();
    if let Ok(Some(def)) = file.treedef() {
        let _ = def.num_leaves();
    }
}

struct Laws<'a> {
    file: &'a Checkpoint,
    renamed: bool,
    allow_unused: bool,
}

/// The file of a value, read back: the value saves, and its file loads
/// by type to a value that saves to the same bytes.
pub(crate) fn saves_and_loads_back<T>(value: &T) -> Checkpoint
where
    T: pytree_std::Unflatten<pytree_std::Std>,
    T::Leaf: TensorLeaf,
{
    let bytes = checkpoint::Save::new()
        .to_bytes(value)
        .unwrap_or_else(|e| panic!("a value loaded from a checkpoint saves: {e}"));
    let file = Load::new()
        .from_bytes(bytes.clone())
        .expect("a saved file reads");
    let back: T = file
        .load()
        .map(|(t, _)| t)
        .unwrap_or_else(|e| panic!("a saved file loads by type: {e}"));
    let again = checkpoint::Save::new()
        .to_bytes(&back)
        .expect("and saves again");
    assert!(again == bytes, "save(load(save(v))) != save(v)");
    file
}

impl Laws<'_> {
    /// Loads a `T` by type; a value obeys the round trip, and, when `typed`
    /// (a Rust type, not a `Tree`), has the file's TreeDef (if it holds
    /// one; else it was loaded by names) and tensors.
    fn by_type<T>(&self, typed: bool)
    where
        T: pytree_std::Unflatten<pytree_std::Std>,
        T::Leaf: TensorLeaf,
    {
        let Ok((value, _)) = self.file.load::<T>() else {
            return;
        };
        let saved = saves_and_loads_back(&value);
        if !typed {
            return;
        }
        // A file without a TreeDef loads by names (the type's structure);
        // its tensors are compared below.
        let def: Option<TreeDef> = self.file.treedef().expect("the TreeDef read");
        if let Some(def) = def {
            assert!(
                pytree_std::structure(&value) == def,
                "a typed value has the file's TreeDef"
            );
        }
        if self.renamed {
            return;
        }
        let prefix = self
            .file
            .metadata()
            .get(PREFIX_KEY)
            .map_or("", String::as_str);
        for t in saved.tensors() {
            let full = format!("{prefix}{}", t.name());
            let there = self
                .file
                .tensor(&full)
                .or_else(|| self.file.tensor(t.name()))
                .unwrap_or_else(|| panic!("tensor `{}` is not in the file", t.name()));
            assert_eq!(there.signature(), t.signature(), "tensor `{}`", t.name());
            assert!(
                there.data_in_memory() == t.data_in_memory(),
                "the data of tensor `{}`",
                t.name()
            );
        }
        if self.allow_unused {
            assert!(saved.len() <= self.file.len());
        } else {
            assert_eq!(saved.len(), self.file.len(), "every tensor is loaded");
        }
    }

    /// The file as a flat map: each leaf holds its tensor's bytes.
    fn map<L>(&self)
    where
        L: TensorLeaf + pytree_std::Flatten<pytree_std::Std, Leaf = L>,
    {
        let Ok(map) = self.file.load_map::<L>() else {
            return;
        };
        if self.renamed {
            return;
        }
        assert_eq!(map.len(), self.file.len());
        for ((name, leaf), t) in map.iter().zip(self.file.tensors()) {
            assert_eq!(name, t.name());
            for view in pytree_std::leaves(leaf) {
                let sig = <L as pytree_std::ByteLeaf>::signature(&view)
                    .expect("a leaf read has a signature");
                let bytes = L::bytes(&view).expect("and bytes");
                assert_eq!(sig, t.signature());
                assert!(
                    Some(&*bytes) == t.data_in_memory(),
                    "the data of tensor `{name}`"
                );
            }
        }
    }

    /// Loads against `template` and into a copy of it: a value obeys the
    /// round trip; a failed `load_into` changed nothing.
    fn like_and_into<T>(&self, template: &T)
    where
        T: pytree_std::Unflatten<pytree_std::Std> + Clone,
        T::Leaf: TensorLeaf,
    {
        if let Ok((value, _)) = self.file.load_like(template) {
            saves_and_loads_back(&value);
            // The template's structure, its static fields maybe the file's.
            let (got, want) = (
                pytree_std::structure(&value),
                pytree_std::structure(template),
            );
            assert_eq!(got.leaf_paths().ok(), want.leaf_paths().ok());
            assert_eq!(got.num_nodes(), want.num_nodes());
        }
        let mut tree = template.clone();
        match self.file.load_into(&mut tree) {
            Ok(report) => {
                assert_eq!(
                    report.loaded.len() + report.missing.len(),
                    pytree_std::structure(template).num_leaves()
                );
                saves_and_loads_back(&tree);
            }
            Err(e) => {
                let _ = e.to_string();
                // Compared as files, so that NaN equals itself.
                let before = checkpoint::Save::new()
                    .to_bytes(template)
                    .expect("the template saves");
                let after = checkpoint::Save::new()
                    .to_bytes(&tree)
                    .expect("the tree saves");
                assert!(before == after, "a failed load_into changed the tree: {e}");
            }
        }
    }
}
