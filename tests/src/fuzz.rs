//! The bodies of the fuzz targets (`fuzz/fuzz_targets/*.rs` call them on
//! libFuzzer's inputs; `tests/fuzz_bodies.rs` calls them on a seeded stream
//! of inputs in CI, and on every crash input kept in `fuzz/regressions/`).
//!
//! Each body takes arbitrary bytes and must neither panic nor abort; where
//! a law holds (a round trip, the checked and the remembered unflatten
//! agreeing, "on error nothing changed"), it asserts it, so a violation is
//! a crash too. Documents are read under [`FUZZ_LIMITS`] when every reader
//! is called (so that a legitimately large result, such as `children` of
//! a 4-billion-leaf sequence, does not exhaust the fuzzer's memory), and
//! under the default limits for the readers that work on records only.

use std::borrow::Cow;
use std::collections::BTreeMap;

use pytree_std::serialized::Serialized;
use pytree_std::{
    elements::Tolerance, paths::KeyStr, treelize::mode, treelize::Treelize, KeyPath, PyTree, Tree,
    TreeDef, TreeDefLimits,
};
use serde_json::Value;

pub mod any_array;
pub mod by_names;
pub mod checkpoint;
pub mod renames;
pub mod shards;
pub use any_array::any_array;
pub use by_names::load_by_names;
pub use checkpoint::checkpoint_doc;
pub use renames::renames;
pub use shards::shard_index;

/// The limits under which every reader is called on a fuzzed document.
pub const FUZZ_LIMITS: TreeDefLimits = {
    let mut l = TreeDefLimits::DEFAULT;
    l.max_leaves = 4096;
    l.max_nodes = 4096;
    l.max_depth = 256;
    l.max_schemas = 64;
    l
};

/// A layer of a model: data fields, a `Vec`, two static fields.
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct Layer<T> {
    /// A weight.
    pub w: T,
    /// Biases.
    pub b: Vec<T>,
    /// A static name.
    #[pytree(static)]
    pub name: String,
    /// A static width.
    #[pytree(static)]
    pub width: usize,
}

/// An enum with a unit, a tuple (with a static field) and a recursive
/// struct variant.
#[derive(PyTree, Clone, Debug, PartialEq)]
pub enum Act<T> {
    /// No data.
    Relu,
    /// A leaf and a static flag.
    Scaled(T, #[pytree(static)] bool),
    /// A leaf and a boxed inner activation.
    Gated {
        /// The gate.
        gate: T,
        /// The inner activation.
        inner: Box<Act<T>>,
    },
}

/// A model: sequences, an enum, a recursive `Option<Box<_>>`, maps keyed by
/// strings and by integers, tuples, and a `&'static str` static field.
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct Model<T> {
    /// Layers.
    pub layers: Vec<Layer<T>>,
    /// The activation.
    pub act: Act<T>,
    /// A nested model.
    pub extra: Option<Box<Model<T>>>,
    /// Pairs by name.
    pub table: BTreeMap<String, (T, T)>,
    /// Optional leaves by number.
    pub keyed: BTreeMap<u8, Option<T>>,
    /// A static tag.
    #[pytree(static)]
    pub tag: &'static str,
}

/// A few typed values whose TreeDefs the mutation target starts from
/// (built once).
pub fn models() -> &'static [Model<u32>] {
    static MODELS: std::sync::OnceLock<Vec<Model<u32>>> = std::sync::OnceLock::new();
    MODELS.get_or_init(build_models)
}

fn build_models() -> Vec<Model<u32>> {
    let layer = |w, name: &str, n: usize| Layer {
        w,
        b: (0..n as u32).collect(),
        name: name.into(),
        width: n,
    };
    let small = Model {
        layers: vec![layer(1, "a", 2)],
        act: Act::Relu,
        extra: None,
        table: BTreeMap::new(),
        keyed: BTreeMap::from([(1, None)]),
        tag: "small",
    };
    let big = Model {
        layers: vec![layer(1, "in", 3), layer(2, "mid", 0), layer(3, "out", 1)],
        act: Act::Gated {
            gate: 4,
            inner: Box::new(Act::Scaled(5, true)),
        },
        extra: Some(Box::new(small.clone())),
        table: BTreeMap::from([("x".into(), (6, 7)), ("y".into(), (8, 9))]),
        keyed: BTreeMap::from([(0, Some(10)), (7, None)]),
        tag: "big",
    };
    vec![small, big]
}

/// Reads bytes as small numbers, counts (some of them huge) and choices;
/// zeros once the bytes run out.
pub struct Input<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Input<'a> {
    /// Reads from `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Input { data, pos: 0 }
    }
    /// True when every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }
    /// The next byte (0 past the end).
    pub fn byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }
    /// A number below `n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        usize::from(self.byte()) % n.max(1)
    }
    /// A count: mostly small, sometimes at the edges of `usize` or of the
    /// limits.
    pub fn count(&mut self) -> usize {
        match self.byte() {
            b @ 0..=199 => usize::from(b % 8),
            200..=219 => usize::from(self.byte()),
            220 => 4095,
            221 => 4096,
            222 => 4097,
            223 => 1 << 32,
            224 => (1 << 32) + 1,
            225 => 1_000_000_000_000_000_000,
            226 => usize::MAX,
            227 => usize::MAX - 1,
            228 => usize::MAX / 2 + 1,
            229 => 1 << 26,
            _ => usize::from(self.byte()) * 256 + usize::from(self.byte()),
        }
    }
}

const NAMES: [&str; 6] = ["a", "b", "x", "0", "1", "w"];

/// A TreeDef document made from bytes: a few schemas, then records with
/// counts, statics and keys picked by the bytes (well-formed JSON, not
/// necessarily a well-formed TreeDef).
pub fn records_doc(input: &mut Input<'_>) -> String {
    let mut schemas = Vec::new();
    for _ in 0..input.below(4) {
        let style = ["named", "tuple", "unit"][input.below(3)];
        let fields: Vec<Value> = (0..input.below(4))
            .map(|_| {
                serde_json::json!({ "name": NAMES[input.below(NAMES.len())], "static": input.below(3) == 0 })
            })
            .collect();
        let variant = match input.below(3) {
            0 => Value::Null,
            _ => Value::from(NAMES[input.below(NAMES.len())]),
        };
        let type_name = ["S", "T", "Layer"][input.below(3)];
        schemas.push(serde_json::json!({
            "type": type_name, "module": "m", "variant": variant,
            "style": style, "fields": fields,
        }));
    }
    let mut nodes = Vec::new();
    while !input.is_empty() && nodes.len() < 64 {
        let node = match input.below(9) {
            0 | 1 => serde_json::json!({ "leaves": input.count() }),
            2 => serde_json::json!({ "seq": input.count() }),
            3 => serde_json::json!({ "tuple": input.count() }),
            4 => Value::from("some"),
            5 => Value::from("none"),
            6 => {
                let len = input.count();
                let n = input.below(4);
                let keys: Value = match input.below(3) {
                    0 => {
                        serde_json::json!({ "String": (0..n).map(|i| NAMES[(i + input.below(2)) % NAMES.len()]).collect::<Vec<_>>() })
                    }
                    1 => {
                        serde_json::json!({ "&str": (0..n).map(|i| NAMES[i % NAMES.len()]).collect::<Vec<_>>() })
                    }
                    _ => {
                        serde_json::json!({ "u8": (0..n).map(|i| i as u8 * 2).collect::<Vec<_>>() })
                    }
                };
                serde_json::json!({ "map": { "len": len, "keys": keys } })
            }
            _ => {
                let statics: Vec<Value> = (0..input.below(3))
                    .map(|_| match input.below(5) {
                        0 => serde_json::json!({ "usize": input.count() }),
                        1 => serde_json::json!({ "String": NAMES[input.below(NAMES.len())] }),
                        2 => serde_json::json!({ "&str": NAMES[input.below(NAMES.len())] }),
                        3 => serde_json::json!({ "bool": input.below(2) == 1 }),
                        _ => Value::from("()"),
                    })
                    .collect();
                serde_json::json!({ "struct": { "schema": input.below(5), "statics": statics } })
            }
        };
        nodes.push(node);
    }
    serde_json::json!({ "schemas": schemas, "nodes": nodes }).to_string()
}

/// TreeDefs a fuzzed one is compared with (built once).
fn others() -> &'static [TreeDef] {
    static OTHERS: std::sync::OnceLock<Vec<TreeDef>> = std::sync::OnceLock::new();
    OTHERS.get_or_init(|| {
        vec![
            pytree_std::structure(&vec![0u32; 3]),
            pytree_std::structure(&models()[0]),
            pytree_std::structure(&(0u32, 0u32)),
            TreeDef::leaf(),
        ]
    })
}

fn hash_of(def: &TreeDef) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    def.hash(&mut h);
    h.finish()
}

/// Readers whose work is bounded by the records (safe under the default
/// limits), and the laws they obey.
fn record_readers(def: &TreeDef) {
    let text = def.to_string();
    let json = serde_json::to_string(def).expect("a checked TreeDef serializes");
    // Display is bounded by the records (each prints at most 9 names of at
    // most 512 bytes) and what the document holds (statics, keys).
    assert!(
        text.len() <= 6000 * (def.num_records() + 1) + 4 * json.len(),
        "Display printed {} bytes for {} records",
        text.len(),
        def.num_records()
    );
    let _ = def.num_nodes();
    let _ = def.root_node();
    // Under the default limits a document may claim 2^32 leaves: the
    // readers whose results grow with the claim give them or say no,
    // naming the output budget, before they allocate.
    let within = |what: &str, r: Result<usize, pytree_std::Error>, len: usize| match r {
        Ok(got) => assert_eq!(got, len, "{what}"),
        Err(e) => assert!(e.to_string().contains("output budget"), "{what}: {e}"),
    };
    within(
        "children",
        def.children().map(|k| k.len()),
        def.num_children(),
    );
    within(
        "entries",
        def.entries().map(|k| k.len()),
        def.num_children(),
    );
    within(
        "leaf_paths",
        def.leaf_paths().map(|k| k.len()),
        def.num_leaves(),
    );
    if let Some(twice) = def.num_leaves().checked_mul(2) {
        let pair = pytree_std::structure(&(0u8, 0u8));
        within("compose", def.compose(&pair).map(|c| c.num_leaves()), twice);
    }
    assert!(def == &def.clone());
    assert!(def.diff(def).is_empty());
    assert!(def.is_prefix_of(def));
    assert!(TreeDef::leaf().is_prefix_of(def) || def.num_records() == 0);
    // serde round trip: equal, and equal TreeDefs hash equal.
    let back: TreeDef = serde_json::from_str(&json).expect("and reads back");
    assert!(back == *def, "{back} != {def}");
    assert_eq!(hash_of(&back), hash_of(def));
    assert_eq!(back.to_string(), text);
    assert_eq!(back.num_leaves(), def.num_leaves());
}

/// Every reader, for a TreeDef read under [`FUZZ_LIMITS`]; `sel` picks
/// which of the typed reads run (all of them over the inputs; a few per
/// input, so that each input is quick).
fn all_readers(def: &TreeDef, sel: u8) {
    record_readers(def);
    let n = def.num_leaves();
    let kids = def
        .children()
        .expect("under FUZZ_LIMITS, within the output budget");
    assert!(
        kids.iter().map(TreeDef::num_leaves).sum::<usize>() == n || kids.is_empty(),
        "the children hold the leaves"
    );
    assert_eq!(def.compose(&TreeDef::leaf()).ok().as_ref(), Some(def));
    if let Ok(c) = def.compose(&others()[2]) {
        assert_eq!(c.num_leaves(), 2 * n);
    }
    for other in others() {
        let d = def.diff(other);
        assert_eq!(d.is_empty(), def == other);
        let _ = def.is_prefix_of(other);
        let _ = other.is_prefix_of(def);
        let _ = pytree_std::nested::transpose::<_, Tree<u32>>(def, other, vec![(1u32, 2u32); 3]);
    }
    let _ = pytree_std::nested::flatten_up_to(def, models()[1].clone());
    let _ = pytree_std::nested::flatten_up_to(def, vec![1u32, 2, 3]);
    let _ = pytree_std::generic::transpose::unflatten_pairs::<
        pytree_std::Std,
        u32,
        u32,
        Tree<u32>,
        Tree<u32>,
    >(def, (0..n as u32).map(|i| (i, i)));
    let _ = Tree::leaf(1u32).to_pytree::<Vec<u32>>(def);
    let _ = Tree::seq((0..3).map(Tree::leaf)).to_pytree::<Tree<u32>>(def);
    node_readers(def, sel);
    // Unflatten into several types, checked then remembered.
    unflatten_laws(def, sel);
}

/// The node-by-node readers, the leaf paths and the relations, with their
/// laws: a TreeDef is its root node over its children, `child(i)` is
/// `children()[i]`, `leaf_path(i)` is `leaf_paths()[i]`, an identity
/// `transform` and a counting `fold` give the TreeDef and its leaf count.
fn node_readers(def: &TreeDef, sel: u8) {
    let n = def.num_children();
    let kids = def
        .children()
        .expect("under FUZZ_LIMITS, within the output budget");
    assert_eq!(kids.len(), n);
    if def.num_records() > 0 {
        let rebuilt = TreeDef::from_node(&def.root_node(), kids.clone());
        assert_eq!(rebuilt.as_ref().ok(), Some(def), "root over children");
        let counted = def.fold(
            0..def.num_leaves(),
            |_| 1usize,
            |_, kids| kids.iter().sum::<usize>(),
        );
        assert_eq!(counted.ok(), Some(def.num_leaves()));
        let same = def.transform(|_, node| Ok(node.clone()), |_| TreeDef::leaf());
        assert_eq!(same.as_ref().ok(), Some(def), "identity transform");
    }
    for i in [
        0,
        1,
        n / 2,
        n.saturating_sub(1),
        n,
        usize::MAX,
        usize::from(sel),
    ] {
        assert_eq!(def.child(i).as_ref(), kids.get(i));
    }
    assert_eq!(def.entries().map(|e| e.len()).ok(), Some(n));
    let _ = (def.one_level(), def.is_one_level());
    let paths = def
        .leaf_paths()
        .expect("under FUZZ_LIMITS, within the output budget");
    assert_eq!(paths.len(), def.num_leaves());
    let m = paths.len();
    for i in [0, 1, m / 2, m.saturating_sub(1), usize::from(sel) % (m + 1)] {
        assert_eq!(def.leaf_path(i).as_ref(), paths.get(i), "leaf_path({i})");
    }
    assert_eq!(def.leaf_path(m), None);
    assert_eq!(def.leaf_path(usize::MAX), None);
    if let Some(path) = paths.get(usize::from(sel) % (m + 1)) {
        let _ = def.parse_key_path(&path.keystr(KeyStr::FULL), KeyStr::FULL);
        let _ = def.parse_key_path(&path.keystr(KeyStr::SIMPLE), KeyStr::SIMPLE);
    }
    for text in ["[999999999999999999]", "a.0.b", "<root>", "[0][1]"] {
        let _ = def.parse_key_path(text, KeyStr::FULL);
        let _ = def.parse_key_path(text, KeyStr::SIMPLE);
    }
    for other in others() {
        let _ = def.is_strict_prefix_of(other);
        let _ = def.is_suffix_of(other);
        let _ = def.is_strict_suffix_of(other);
        let _ = def.broadcast_to_common_suffix(other);
    }
}

/// For several types: the checked read and the remembered read of the
/// same TreeDef agree; a value read flattens back to the TreeDef and the
/// leaves; one leaf more or less is an error.
fn unflatten_laws(def: &TreeDef, sel: u8) {
    fn one<T>(def: &TreeDef, typed: bool)
    where
        T: pytree_std::Unflatten<pytree_std::Std, Leaf = u32> + PartialEq + std::fmt::Debug,
    {
        let n = def.num_leaves() as u32;
        let first = pytree_std::unflatten::<T>(def, 0..n);
        let again = pytree_std::unflatten::<T>(def, 0..n);
        match (&first, &again) {
            (Ok(a), Ok(b)) => assert_eq!(a, b),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            _ => panic!("the checked and the remembered read differ: {first:?} / {again:?}"),
        }
        if let Ok(value) = first {
            let (leaves, back) = pytree_std::flatten(value);
            assert_eq!(leaves, (0..n).collect::<Vec<_>>());
            if typed {
                assert!(back == *def, "{back} != {def}");
            }
            assert!(pytree_std::unflatten::<T>(def, 0..n + 1).is_err());
            if n > 0 {
                assert!(pytree_std::unflatten::<T>(def, 0..n - 1).is_err());
            }
        }
    }
    // The type a TreeDef was last read as is remembered (one slot): read
    // it as two types in turn, then the first again.
    let reads: [fn(&TreeDef); 6] = [
        |d| one::<Model<u32>>(d, true),
        |d| one::<Vec<Layer<u32>>>(d, true),
        |d| one::<Act<u32>>(d, true),
        |d| one::<(u32, Option<u32>)>(d, true),
        |d| one::<BTreeMap<String, (u32, u32)>>(d, true),
        |d| one::<Tree<u32>>(d, false),
    ];
    let first = usize::from(sel) % reads.len();
    let second = usize::from(sel / 8) % reads.len();
    reads[first](def);
    reads[second](def);
    reads[first](def);
    one::<Vec<u32>>(def, true);
}

/// Target `treedef_doc`: a TreeDef document from bytes (raw text when the
/// first byte is 0, else records built from the bytes), read under the
/// default limits (record readers) and under [`FUZZ_LIMITS`] (every
/// reader).
pub fn treedef_doc(data: &[u8]) {
    let text: Cow<'_, str> = match data.split_first() {
        Some((0, rest)) => String::from_utf8_lossy(rest),
        _ => Cow::Owned(records_doc(&mut Input::new(data))),
    };
    if let Ok(def) = serde_json::from_str::<TreeDef>(&text) {
        record_readers(&def);
    }
    let sel = data.last().copied().unwrap_or(0);
    FUZZ_LIMITS.scope(|| {
        if let Ok(def) = serde_json::from_str::<TreeDef>(&text) {
            all_readers(&def, sel);
        }
    });
}

/// Target `mutated_treedef`: the document of a real TreeDef, mutated by the
/// bytes (numbers, records, statics, keys, schemas), then read and
/// unflattened into several types through the checked and the remembered
/// path.
pub fn mutated_treedef(data: &[u8]) {
    let mut input = Input::new(data);
    let sel = input.byte();
    let values = models();
    let def = match input.below(4) {
        0 => pytree_std::structure(&values[0]),
        1 => pytree_std::structure(&values[1]),
        2 => pytree_std::structure(&values[1].layers),
        _ => pytree_std::structure(&values[1].act),
    };
    let mut doc = serde_json::to_value(&def).expect("a real TreeDef serializes");
    while !input.is_empty() {
        mutate(&mut doc, &mut input);
    }
    FUZZ_LIMITS.scope(|| {
        if let Ok(def) = serde_json::from_value::<TreeDef>(doc) {
            all_readers(&def, sel);
        }
    });
}

/// One mutation of a TreeDef document.
fn mutate(doc: &mut Value, input: &mut Input<'_>) {
    let op = input.below(10);
    if op >= 8 {
        // A schema: rename a field, flip static, change the style or name.
        let Some(schemas) = doc.get_mut("schemas").and_then(Value::as_array_mut) else {
            return;
        };
        if schemas.is_empty() {
            return;
        }
        let k = input.below(schemas.len());
        let s = &mut schemas[k];
        match input.below(4) {
            0 => s["style"] = Value::from(["named", "tuple", "unit"][input.below(3)]),
            1 => s["type"] = Value::from(["Layer", "Model", "Act", "Other"][input.below(4)]),
            2 => {
                if let Some(fields) = s["fields"].as_array_mut() {
                    if let Some(f) = fields.get_mut(input.below(8)) {
                        f["static"] = Value::from(input.below(2) == 1);
                    }
                }
            }
            _ => {
                if let Some(fields) = s["fields"].as_array_mut() {
                    match input.below(3) {
                        0 => {
                            fields.pop();
                        }
                        1 => fields.push(serde_json::json!({"name": "new", "static": false})),
                        _ => {
                            if let Some(f) = fields.get_mut(input.below(8)) {
                                f["name"] = Value::from(NAMES[input.below(NAMES.len())]);
                            }
                        }
                    }
                }
            }
        }
        return;
    }
    let Some(nodes) = doc.get_mut("nodes").and_then(Value::as_array_mut) else {
        return;
    };
    if nodes.is_empty() {
        nodes.push(serde_json::json!({ "leaves": 1 }));
        return;
    }
    let i = input.below(nodes.len());
    match op {
        0 => {
            nodes.remove(i);
        }
        1 => {
            let copy = nodes[i].clone();
            nodes.insert(input.below(nodes.len() + 1), copy);
        }
        2 => {
            let j = input.below(nodes.len());
            nodes.swap(i, j);
        }
        3 | 4 => {
            // A count: leaves, seq, tuple, map len.
            let count = input.count();
            if let Some(obj) = nodes[i].as_object_mut() {
                for (key, v) in obj.iter_mut() {
                    match key.as_str() {
                        "map" => v["len"] = Value::from(count),
                        "struct" => v["schema"] = Value::from(count % 8),
                        _ => *v = Value::from(count),
                    }
                }
            }
        }
        5 => {
            nodes[i] = match input.below(6) {
                0 => Value::from("some"),
                1 => Value::from("none"),
                2 => serde_json::json!({ "seq": input.count() }),
                3 => serde_json::json!({ "tuple": input.count() }),
                4 => serde_json::json!({ "leaves": input.count() }),
                _ => serde_json::json!({ "struct": { "schema": input.below(6), "statics": [] } }),
            }
        }
        6 => {
            // Map keys: drop one, add one, change their type.
            if let Some(keys) = nodes[i]
                .pointer_mut("/map/keys")
                .and_then(Value::as_object_mut)
            {
                let tag = keys.keys().next().cloned().unwrap_or_default();
                let list = keys.remove(&tag).unwrap_or(Value::Array(Vec::new()));
                let mut list = list.as_array().cloned().unwrap_or_default();
                match input.below(3) {
                    0 => {
                        list.pop();
                    }
                    1 => list.push(Value::from(NAMES[input.below(NAMES.len())])),
                    _ => {}
                }
                let tag = ["String", "&str", "u8", "u16", tag.as_str()][input.below(5)].to_string();
                keys.insert(tag, Value::Array(list));
            }
        }
        _ => {
            // Statics of a struct: change a value or its type, add, drop.
            if let Some(statics) = nodes[i]
                .pointer_mut("/struct/statics")
                .and_then(Value::as_array_mut)
            {
                match input.below(4) {
                    0 => {
                        statics.pop();
                    }
                    1 => statics.push(serde_json::json!({ "usize": input.count() })),
                    2 => {
                        if let Some(s) = statics.first_mut() {
                            *s = serde_json::json!({ "String": NAMES[input.below(NAMES.len())] });
                        }
                    }
                    _ => {
                        if let Some(s) = statics.first_mut() {
                            let tag = ["small", "big", "other"][input.below(3)];
                            *s = serde_json::json!({ "&str": tag });
                        }
                    }
                }
            }
        }
    }
}

/// Target `tree_doc`: a `Tree` document from bytes, read as
/// `Tree<serde_json::Value>`, `Tree<f64>` and `Tree<i64>`; what reads,
/// writes back and reads again to the same tree, and converts to and from
/// a typed structure.
pub fn tree_doc(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(t) = serde_json::from_str::<Tree<Value>>(&text) {
        let json = serde_json::to_string(&t).expect("a tree read from JSON writes back");
        let back: Tree<Value> = serde_json::from_str(&json).expect("and reads again");
        assert_eq!(back, t);
        let _ = format!("{t:?}");
    }
    if let Ok(t) = serde_json::from_str::<Tree<f64>>(&text) {
        // JSON has no NaN or infinity, so every leaf read is finite and the
        // tree writes back.
        let json = serde_json::to_string(&t).expect("a tree of finite floats writes");
        let back: Tree<f64> = serde_json::from_str(&json).expect("and reads again");
        assert_eq!(back, t);
        tree_laws(&t);
    }
    if let Ok(t) = serde_json::from_str::<Tree<i64>>(&text) {
        tree_laws(&t);
    }
}

/// Laws of one tree: flatten/unflatten, structure, paths, partition and
/// combine, conversion to a typed-looking tree and back.
fn tree_laws<L>(t: &Tree<L>)
where
    L: Clone + PartialEq + std::fmt::Debug + std::fmt::Display + pytree_std::Leaf<pytree_std::Std>,
    for<'a> pytree_std::LeafRef<'a, pytree_std::Std, L>: PartialEq + std::fmt::Debug,
{
    let (leaves, def) = pytree_std::flatten(t.clone());
    assert!(def == pytree_std::structure(t));
    let back: Tree<L> = pytree_std::unflatten(&def, leaves.clone()).expect("unflatten(flatten(t))");
    assert_eq!(&back, t);
    let back: Tree<L> = pytree_std::unflatten(&def, leaves).expect("the remembered read");
    assert_eq!(&back, t);
    for (path, leaf) in pytree_std::paths::leaves_with_path(t) {
        assert_eq!(
            pytree_std::paths::get(t, &path).ok(),
            Some(leaf),
            "get({path})"
        );
    }
    let (a, b): (Tree<L>, Tree<L>) =
        pytree_std::split::partition(t.clone(), |path, _| path.len() % 2 == 0).expect("partition");
    let whole: Tree<L> = pytree_std::split::combine([a, b]).expect("combine");
    assert_eq!(&whole, t);
    let again = t
        .to_pytree::<Tree<L>>(&def)
        .expect("to_pytree of its own TreeDef");
    assert_eq!(&again, t);
    let _ = t.to_string();
    let _ = format!("{t:?}");
}

/// Target `serialized_doc`: a `Serialized` document from bytes, read as
/// several types; what reads writes back to a document that reads back
/// equal.
pub fn serialized_doc(data: &[u8]) {
    fn one<T>(text: &str)
    where
        T: pytree_std::Unflatten<pytree_std::Std> + Clone + PartialEq + std::fmt::Debug,
        T::Leaf: serde::de::DeserializeOwned,
        for<'a> pytree_std::LeafRef<'a, pytree_std::Std, T::Leaf>: serde::Serialize,
    {
        if let Ok(Serialized(v)) = serde_json::from_str::<Serialized<T>>(text) {
            let json =
                serde_json::to_string(&Serialized(v.clone())).expect("what was read writes back");
            let Serialized(back) =
                serde_json::from_str::<Serialized<T>>(&json).expect("and reads back");
            assert_eq!(back, v);
        }
    }
    let text = String::from_utf8_lossy(data);
    FUZZ_LIMITS.scope(|| {
        one::<Vec<f64>>(&text);
        one::<(i32, Option<i32>)>(&text);
        one::<BTreeMap<String, Vec<f32>>>(&text);
        one::<Model<u32>>(&text);
        one::<Act<f64>>(&text);
        one::<Tree<u32>>(&text);
    });
}

/// A small dynamic tree built from bytes (depth at most 6, at most 48
/// nodes; keys from a small alphabet, so that two trees share some).
pub fn tree_from(input: &mut Input<'_>) -> Tree<i32> {
    fn go(input: &mut Input<'_>, depth: usize, budget: &mut usize) -> Tree<i32> {
        if *budget == 0 {
            return Tree::leaf(0);
        }
        *budget -= 1;
        match input.below(if depth >= 6 { 2 } else { 5 }) {
            0 => Tree::leaf(i32::from(input.byte()) - 128),
            1 if input.below(4) == 0 => Tree::none(),
            1 => Tree::leaf(i32::from(input.byte())),
            2 | 3 => {
                let n = input.below(4);
                Tree::seq(
                    (0..n)
                        .map(|_| go(input, depth + 1, budget))
                        .collect::<Vec<_>>(),
                )
            }
            _ => {
                let n = input.below(4);
                let mut entries = Vec::new();
                for _ in 0..n {
                    let key = NAMES[input.below(NAMES.len())];
                    let child = go(input, depth + 1, budget);
                    if !entries.iter().any(|(k, _): &(&str, _)| *k == key) {
                        entries.push((key, child));
                    }
                }
                Tree::dict(entries)
            }
        }
    }
    let mut budget = 48;
    go(input, 0, &mut budget)
}

/// Target `multi_tree`: two trees from bytes through every operation on
/// several trees and every `Treelize` mode (the first byte picks a group of
/// operations, so that each input is quick and every group is reached);
/// laws where they hold.
pub fn multi_tree(data: &[u8]) {
    let mut input = Input::new(data);
    let group = input.below(5);
    let a = tree_from(&mut input);
    let b = if input.below(4) == 0 {
        a.map_ref(|x| x.wrapping_mul(3))
    } else {
        tree_from(&mut input)
    };
    match group {
        0 => same_structure_maps(&a, &b),
        1 => structures_and_prefixes(&a, &b),
        2 => {
            modes(&a, &b, true);
            modes(&a, &b, false);
        }
        3 => transposes(&a, &b),
        _ => {
            for t in [&a, &b] {
                tree_laws(t);
                let json = serde_json::to_string(t).expect("a small tree writes");
                let back: Tree<i32> = serde_json::from_str(&json).expect("and reads back");
                assert_eq!(&back, t);
            }
            let (p, q): (Tree<i32>, Tree<i32>) =
                pytree_std::split::partition(a.clone(), |_, x| x % 2 == 0).expect("partition");
            let _ = pytree_std::split::combine::<_, Tree<i32>, 2>([p, b.clone()]);
            let _ = pytree_std::split::combine::<_, Tree<i32>, 2>([q, a.clone()]);
            let _ = b.to_pytree::<Tree<i32>>(&pytree_std::structure(&a));
            let _ = pytree_std::paths::get(&a, &KeyPath::root());
        }
    }
}

fn same_structure_maps(a: &Tree<i32>, b: &Tree<i32>) {
    let add = |x: &i32, y: &i32| x.wrapping_add(*y);
    let twice =
        pytree_std::walk::map_n(a, [a], |x, [y]| add(x, y)).expect("a tree zips with itself");
    assert_eq!(twice, a.map_ref(|x| x.wrapping_mul(2)));
    let sum = pytree_std::walk::map_n(a, [b], |x, [y]| add(x, y));
    if pytree_std::generic::multi::check_same_structure::<pytree_std::Std, _, _>(a, b).is_ok() {
        assert!(sum.is_ok(), "equal structures zip");
    }
    let _ = pytree_std::map_n(a, [b, a], |x, [y, z]| x.wrapping_add(*y).wrapping_sub(*z));
    let mut c = a.clone();
    if pytree_std::zip_mut([&mut c], [b], |[x], [y]| *x = x.wrapping_sub(*y)).is_err() {
        assert_eq!(&c, a, "on error nothing changed");
    }
    if let Ok(s) = a.try_add(b) {
        assert_eq!(Ok(&s), sum.as_ref());
    }
    let _ = pytree_std::elements::tree_equal(
        &a.map_ref(|x| f64::from(*x)),
        &b.map_ref(|x| f64::from(*x)),
        Tolerance::new(1e-9, 0.0),
    );
}

fn structures_and_prefixes(a: &Tree<i32>, b: &Tree<i32>) {
    let (sa, sb) = (pytree_std::structure(a), pytree_std::structure(b));
    assert_eq!(sa.diff(&sb).is_empty(), sa == sb);
    assert!(sa.is_prefix_of(&sa));
    let prefix = sa.is_prefix_of(&sb);
    assert_eq!(
        pytree_std::nested::flatten_up_to(&sa, b.clone()).is_ok(),
        prefix
    );
    let _ = pytree_std::generic::prefix::broadcast_prefix::<pytree_std::Std, _, _>(a, b);
    let _ = pytree_std::nested::broadcast::<_, _, Tree<i32>>(a, b);
    let _ = pytree_std::generic::prefix::map_prefix::<pytree_std::Std, _, _, i32, Tree<i32>, _>(
        a,
        b,
        |x, sub| x.wrapping_add(sub.leaves().iter().fold(0i32, |s, y| s.wrapping_add(**y))),
    );
    let _ = pytree_std::nested::map_with_prefix::<_, _, i32, Tree<i32>>(b, a, |x, y| {
        x.wrapping_add(*y)
    });
}

/// Treelize: every mode, with `inherit` as given and a missing value.
fn modes(a: &Tree<i32>, b: &Tree<i32>, inherit: bool) {
    // `f` on `a` and `$b`, in the mode and with the missing value given.
    macro_rules! add {
        ($b:expr, $mode:expr $(, $missing:ident($value:expr))?) => {{
            let f = |x: &i32, y: &i32| x.wrapping_add(*y);
            Treelize::new(f)
                .mode($mode)
                .inherit(inherit)
                $(.$missing($value))?
                .call2::<_, _, _, Tree<i32>>(a, $b)
        }};
    }
    let _ = add!(b, mode::Strict);
    let same = add!(a, mode::Strict);
    assert!(same.is_ok(), "strict mode lines a tree up with itself");
    let _ = add!(b, mode::Inner);
    let _ = add!(b, mode::Outer, missing(0));
    let _ = add!(b, mode::Left, missing_with(|| 7));
    let _: Result<Tree<i32>, _> = Treelize::new(|x: &i32| x.wrapping_neg())
        .mode(mode::Outer)
        .inherit(inherit)
        .call1(a);
    let _: Result<Tree<i32>, _> =
        Treelize::new(|x: &i32, y: &i32, z: &i32| x.wrapping_add(*y).wrapping_add(*z))
            .mode(mode::Outer)
            .inherit(inherit)
            .missing(1)
            .call3(a, b, a);
}

fn transposes(a: &Tree<i32>, b: &Tree<i32>) {
    let (sa, sb) = (pytree_std::structure(a), pytree_std::structure(b));
    match pytree_std::nested::subside::<_, Tree<i32>>(vec![a.clone(), b.clone()]) {
        Ok(stacked) => {
            let parts: Vec<Tree<i32>> = pytree_std::nested::rise(stacked).expect("rise(subside)");
            if a.num_leaves() > 0 {
                assert_eq!(parts, [a.clone(), b.clone()]);
            }
        }
        Err(_) => assert!(sa != sb),
    }
    // A tree of pairs as a `Tree` holds sequences of two (it has no
    // tuples), which `unpair_leaves` does not take for pairs: no law here.
    if let Ok(z) = pytree_std::generic::transpose::pair_leaves::<pytree_std::Std, _, _, Tree<i32>>(
        a.clone(),
        b.clone(),
    ) {
        let _ = pytree_std::generic::transpose::unpair_leaves::<
            pytree_std::Std,
            _,
            Tree<i32>,
            Tree<i32>,
        >(z);
    }
    let _ = pytree_std::nested::transpose::<_, Tree<i32>>(&sa, &sb, b.clone());
    if let Ok(composed) = sa.compose(&sb) {
        assert_eq!(composed.num_leaves(), sa.num_leaves() * sb.num_leaves());
    }
}
