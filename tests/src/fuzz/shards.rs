//! Target `shard_index`: the index of a sharded checkpoint,
//! `model.safetensors.index.json` (transformers' `weight_map` of tensor
//! names to shard files), read from bytes and opened with `Load::open`
//! against two real shards written once per process in a directory of
//! its own (under the system's temporary directory).
//!
//! The first byte picks how the index is made (its low bit): `0`, the
//! rest of the bytes are the index, as they are; `1`, the real index
//! (written by `Save::save_sharded` with the shards) is mutated by the
//! bytes that follow: an entry removed, added or renamed, a shard changed
//! to another real one, to a shard that does not exist, to the index
//! itself, to `..`, to a path, or to an empty or very long name,
//! `total_size` changed to a lie or another JSON type, the weight map
//! made something else or removed. The other bits pick the load options
//! (`allow_missing`, `allow_unused`, a rename).
//!
//! Laws: nothing panics or hangs; an index that opens is a checkpoint
//! whose tensors agree with themselves (as `checkpoint_doc` checks) and
//! hold exactly the tensors the index names; what loads saves and loads
//! back.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use pytree_std::checkpoint::{Checkpoint, Load, Renames, Save};
use pytree_std::ndarray::{Array1, Array2, ArrayD};
use serde_json::{json, Value};

use super::by_names::Stack;
use super::checkpoint::{inspect, saves_and_loads_back, with_options};
use super::Input;

/// The model the shards hold: three layers, a norm, an embedding.
fn model() -> Stack {
    let block = |k: usize| super::by_names::Block {
        w: ArrayD::from_shape_fn(vec![2, 3], |i| (i[0] * 3 + i[1] + k) as f32),
        b: (k != 1).then(|| Array1::from_elem(3, k as f32)),
    };
    Stack {
        layers: (0..3).map(block).collect(),
        norm: Some(ArrayD::from_elem(vec![3], 0.5)),
        emb: Array2::from_shape_fn((4, 3), |(r, c)| (r * 3 + c) as f32 - 2.0),
        scale: pytree_std::ndarray::arr0(f32::NAN),
    }
}

/// The directory of this process (and thread) with the real shards, and
/// the real index's JSON.
fn fixture() -> (PathBuf, Value) {
    thread_local! {
        static FIXTURE: (PathBuf, Value) = {
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let dir = std::env::temp_dir().join(format!(
                "pytree-fuzz-shards-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            let files = Save::new()
                .max_shard_bytes(64)
                .save_sharded(&dir, &model())
                .expect("the shards save");
            assert!(files.len() > 2, "the model is sharded");
            let index = files.last().expect("the index").clone();
            let text = std::fs::read_to_string(&index).expect("the index reads");
            (dir, serde_json::from_str(&text).expect("the index is JSON"))
        };
    }
    FIXTURE.with(|f| f.clone())
}

/// Shard names an index may give: real ones and ones it must refuse.
fn shard_name(input: &mut Input<'_>, real: &[String]) -> String {
    match input.below(12) {
        0..=3 => real
            .get(input.below(real.len().max(1)))
            .cloned()
            .unwrap_or_default(),
        4 => "model-00009-of-00002.safetensors".into(),
        5 => "model.safetensors.index.json".into(),
        6 => "..".into(),
        7 => "../model-00001-of-00004.safetensors".into(),
        8 => "/nonexistent/model-00001-of-00002.safetensors".into(),
        9 => String::new(),
        10 => ".".into(),
        _ => "m".repeat(300),
    }
}

/// Tensor names an index may give.
const NAMES: [&str; 8] = [
    "layers.0.w",
    "layers.1.w",
    "layers.2.b",
    "norm",
    "emb",
    "scale",
    "layers.9.w",
    "__metadata__",
];

/// The real index mutated by the input.
fn mutated(input: &mut Input<'_>, mut index: Value) -> Value {
    let real: Vec<String> = {
        let mut files: Vec<String> = index["weight_map"]
            .as_object()
            .map(|m| {
                m.values()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        files.dedup();
        files
    };
    let mut n = 0;
    while !input.is_empty() && n < 16 {
        n += 1;
        let op = input.below(9);
        let keys: Vec<String> = index["weight_map"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        let pick = |input: &mut Input<'_>| keys.get(input.below(keys.len().max(1))).cloned();
        match op {
            0 => {
                if let (Some(k), Some(m)) = (pick(input), index["weight_map"].as_object_mut()) {
                    m.remove(&k);
                }
            }
            1 => {
                let name = NAMES[input.below(NAMES.len())].to_string();
                let shard = shard_name(input, &real);
                if let Some(m) = index["weight_map"].as_object_mut() {
                    m.insert(name, json!(shard));
                }
            }
            2 => {
                let shard = shard_name(input, &real);
                if let (Some(k), Some(m)) = (pick(input), index["weight_map"].as_object_mut()) {
                    m.insert(k, json!(shard));
                }
            }
            3 => {
                let name = NAMES[input.below(NAMES.len())].to_string();
                if let (Some(k), Some(m)) = (pick(input), index["weight_map"].as_object_mut()) {
                    if let Some(v) = m.remove(&k) {
                        m.insert(name, v);
                    }
                }
            }
            4 => {
                let size = match input.below(5) {
                    0 => json!(0),
                    1 => json!(u64::MAX),
                    2 => json!(-1),
                    3 => json!("big"),
                    _ => json!(input.count()),
                };
                // (Indexing a string with a key would panic.)
                index["metadata"] = json!({ "total_size": size });
            }
            5 => {
                index["weight_map"] = match input.below(4) {
                    0 => json!([]),
                    1 => json!(7),
                    2 => Value::Null,
                    _ => json!({"layers.0.w": 3}),
                }
            }
            6 => {
                if let Some(o) = index.as_object_mut() {
                    o.remove("weight_map");
                }
            }
            7 => index["metadata"] = json!("none"),
            _ => {
                // Every tensor in one real shard.
                let shard = real.get(input.below(real.len().max(1))).cloned();
                if let (Some(s), Some(m)) = (shard, index["weight_map"].as_object_mut()) {
                    for v in m.values_mut() {
                        *v = json!(s.clone());
                    }
                }
            }
        }
    }
    index
}

/// The tensor names an index gives, read by serde_json apart from the
/// library: its `weight_map` alone, as transformers reads it. The other
/// keys may hold any JSON, numbers beyond `f64`'s range included
/// (`1e999`), which a `serde_json::Value` refuses ("number out of range")
/// and the library, which ignores those keys, rightly accepts (found by
/// this target).
#[derive(serde::Deserialize)]
struct Named {
    weight_map: BTreeMap<String, String>,
}

/// Target `shard_index`; see the module docs.
pub fn shard_index(data: &[u8]) {
    let (dir, real) = fixture();
    let mut input = Input::new(data);
    let head = input.byte();
    let text: Vec<u8> = if head & 1 == 0 {
        data.get(1..).unwrap_or(&[]).to_vec()
    } else {
        mutated(&mut input, real).to_string().into_bytes()
    };
    let index = dir.join("model.safetensors.index.json");
    std::fs::write(&index, &text).expect("the index is written");
    // No float conversion (bit 0: none).
    let mut load = with_options(Load::new(), head, [0, 2, 4]);
    if head & 8 != 0 {
        load = load.renames(Renames::new().pattern("layers.*", "blocks.$1"));
    }
    let file: Checkpoint = match load.open(&index) {
        Ok(file) => file,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    inspect(&file);
    assert!(file.is_empty() || file.num_shards() >= 1);
    // Exactly the tensors the index names (as the files name them).
    let named: Named =
        serde_json::from_slice(&text).expect("an index that opened has a weight map of names");
    let mut in_index: Vec<&str> = named.weight_map.keys().map(String::as_str).collect();
    in_index.sort_unstable();
    let mut in_file: Vec<&str> = file.names().collect();
    in_file.sort_unstable();
    if head & 8 == 0 {
        assert_eq!(in_file, in_index);
    }
    match data.last().copied().unwrap_or(0) % 3 {
        0 => {
            if let Ok(m) = file.load_map::<ArrayD<f32>>() {
                assert_eq!(m.len(), file.len());
            }
        }
        1 => {
            if let Ok((v, _)) = file.load::<Stack>() {
                saves_and_loads_back(&v);
            }
        }
        _ => {
            if let Ok((v, _)) = file.load::<BTreeMap<String, ArrayD<f32>>>() {
                saves_and_loads_back(&v);
            }
        }
    }
}
