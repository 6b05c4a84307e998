//! Hugging Face checkpoints, as a new user meets them: a BERT written by
//! Python's `safetensors` in transformers' names (`bert.` prefix,
//! `LayerNorm`, `attention.self`, an I64 `position_ids` buffer, f16, two
//! shards and their index), loaded into derived structs named as Rust
//! wants, and written back with the original names and bits.
//!
//! The fixtures in `tests/fixtures/hf/` are made by
//! `tests/fixtures/hf/make_fixtures.py`, which also checks, in Python, the
//! files this test writes (its docstring has the commands).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pytree_std::candle_core::{DType, Device, Tensor};
use pytree_std::checkpoint::{Load, Renames, Save};
use pytree_std::ndarray::ArrayD;
use pytree_std::{paths::KeyStr, PyTree};

mod hf;
mod models;
use hf::fixtures;

#[derive(PyTree, Clone, Debug)]
struct Linear<T> {
    weight: T,
    bias: T,
}

#[derive(PyTree, Clone, Debug)]
struct Embedding<T> {
    weight: T,
}

#[derive(PyTree, Clone, Debug)]
struct LayerNorm<T> {
    weight: T,
    bias: T,
}

#[derive(PyTree, Clone, Debug)]
struct Embeddings<T> {
    word_embeddings: Embedding<T>,
    position_embeddings: Embedding<T>,
    #[pytree(rename = "LayerNorm")]
    layer_norm: LayerNorm<T>,
    /// A buffer of I64 position indices beside the f32 weights: of kind
    /// `buffer`, so the optimizers (which update `param` leaves by
    /// default) leave it alone.
    #[pytree(kind = "buffer")]
    position_ids: T,
}

#[derive(PyTree, Clone, Debug)]
struct SelfAttention<T> {
    query: Linear<T>,
    key: Linear<T>,
}

#[derive(PyTree, Clone, Debug)]
struct AttentionOutput<T> {
    #[pytree(rename = "LayerNorm")]
    layer_norm: LayerNorm<T>,
}

#[derive(PyTree, Clone, Debug)]
struct Attention<T> {
    #[pytree(rename = "self")]
    self_attn: SelfAttention<T>,
    output: AttentionOutput<T>,
}

#[derive(PyTree, Clone, Debug)]
struct Layer<T> {
    attention: Attention<T>,
}

#[derive(PyTree, Clone, Debug)]
struct Pooler<T> {
    dense: Linear<T>,
}

#[derive(PyTree, Clone, Debug)]
struct Bert<T> {
    embeddings: Embeddings<T>,
    /// transformers' `encoder.layer.N`, renamed by a pattern.
    layers: Vec<Layer<T>>,
    pooler: Pooler<T>,
}

impl<T: Clone> Bert<T> {
    /// A template: the structure (2 layers) and a leaf for every tensor;
    /// `float` for the weights, `int` for `position_ids`. The shapes come
    /// from the file.
    fn template(float: T, int: T) -> Self {
        let f = || float.clone();
        let linear = || Linear {
            weight: f(),
            bias: f(),
        };
        let norm = || LayerNorm {
            weight: f(),
            bias: f(),
        };
        let layer = || Layer {
            attention: Attention {
                self_attn: SelfAttention {
                    query: linear(),
                    key: linear(),
                },
                output: AttentionOutput { layer_norm: norm() },
            },
        };
        Bert {
            embeddings: Embeddings {
                word_embeddings: Embedding { weight: f() },
                position_embeddings: Embedding { weight: f() },
                layer_norm: norm(),
                position_ids: int,
            },
            layers: vec![layer(), layer()],
            pooler: Pooler { dense: linear() },
        }
    }
}

/// A fresh directory for one test (`$PYTREE_HF_OUT` when set, so the
/// Python script can check what was written).
fn out_dir(test: &str) -> PathBuf {
    pytree_tests::out_dir("PYTREE_HF_OUT", &format!("hf-{test}"))
}

/// transformers' names to ours: the `bert.` prefix goes, `encoder.layer.N`
/// is `layers.N`. (`self` and `LayerNorm` are field renames.)
fn from_hf() -> Renames {
    Renames::new()
        .prefix("bert.", "")
        .pattern("encoder.layer.*", "layers.$1")
}

/// Ours to transformers'.
fn to_hf() -> Renames {
    Renames::new()
        .pattern("layers.*", "encoder.layer.$1")
        .prefix("", "bert.")
}

fn cpu(dtype: DType) -> Tensor {
    Tensor::zeros(0, dtype, &Device::Cpu).unwrap()
}

/// The values the fixture script wrote into the float tensor `name`.
fn expected(name: &str, n: usize) -> Vec<f32> {
    (0..n).map(|k| k as f32 / 8.0 + name.len() as f32).collect()
}

/// The fixture `file` opened with the Hugging Face renames and the
/// shapes taken from the file.
fn hf_file(file: &str) -> pytree_std::checkpoint::Checkpoint {
    let load = Load::new().renames(from_hf()).shapes_from_file();
    load.open(fixtures().join(file)).unwrap()
}

fn load_bert(file: &str, float: DType) -> Bert<Tensor> {
    let template = Bert::template(cpu(float), cpu(DType::I64));
    hf_file(file).load_like(&template).unwrap().0
}

/// Every tensor of `written` has the name, dtype, shape and bytes of the
/// fixture's, checked with the reference implementation of the format,
/// and the metadata says `"format": "pt"`.
fn assert_same_tensors(written: &[u8], fixture: &Path) {
    models::assert_same_safetensors(written, &std::fs::read(fixture).unwrap());
    let (_, meta) = safetensors::SafeTensors::read_metadata(written).unwrap();
    assert_eq!(meta.metadata().as_ref().unwrap()["format"], "pt");
}

#[test]
fn a_hugging_face_bert_loads_by_name_into_derived_structs() {
    let bert = load_bert("bert.safetensors", DType::F32);
    let q = &bert.layers[1].attention.self_attn.query.weight;
    assert_eq!(q.dims(), [4, 4]);
    let name = "bert.encoder.layer.1.attention.self.query.weight";
    assert_eq!(
        q.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
        expected(name, 16)
    );
    let ln = &bert.embeddings.layer_norm.bias;
    assert_eq!(
        ln.to_vec1::<f32>().unwrap(),
        expected("bert.embeddings.LayerNorm.bias", 4)
    );
    let ids = &bert.embeddings.position_ids;
    assert_eq!(ids.dtype(), DType::I64);
    assert_eq!(ids.to_vec2::<i64>().unwrap(), [[0, 1, 2, 3, 4, 5]]);
    // The key paths show the renamed fields, as the checkpoint names do.
    let paths: Vec<String> = pytree_std::paths::leaves_with_path(&bert)
        .iter()
        .map(|(p, _)| p.keystr(KeyStr::SIMPLE))
        .collect();
    assert!(paths.contains(&"layers.0.attention.self.query.weight".to_string()));
    assert!(paths.contains(&"embeddings.LayerNorm.weight".to_string()));
    assert_eq!(paths.len(), 19);
}

#[test]
fn a_strict_load_lists_every_tensor_it_cannot_place() {
    // Without the pattern, the layers are neither found nor used: one
    // error lists all of them, and nothing is returned.
    let err = Load::new()
        .renames(Renames::new().prefix("bert.", ""))
        .shapes_from_file()
        .open(fixtures().join("bert.safetensors"))
        .and_then(|f| f.load_like(&Bert::template(cpu(DType::F32), cpu(DType::I64))))
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("tree structures differ (24 mismatches found)"),
        "{err}"
    );
    assert!(err.contains("at .layers[0].attention.self.query.weight: tensor `layers.0.attention.self.query.weight`: expected a f32 tensor, found nothing in the file"), "{err}");
    assert!(err.contains("tensor `bert.encoder.layer.1.attention.output.LayerNorm.bias` (f32[4]), renamed `encoder.layer.1.attention.output.LayerNorm.bias`, of the file is not a leaf of the tree"), "{err}");
}

#[test]
fn an_integer_buffer_is_never_converted_into_a_float_leaf() {
    // With ndarray, one leaf type: `ArrayD<f32>` cannot hold the I64
    // buffer, even with float conversion on.
    let like = Bert::template(ArrayD::<f32>::zeros(vec![0]), ArrayD::<f32>::zeros(vec![0]));
    let err = Load::new()
        .renames(from_hf())
        .shapes_from_file()
        .convert_floats()
        .open(fixtures().join("bert.safetensors"))
        .and_then(|f| f.load_like(&like))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .embeddings.position_ids: tensor `bert.embeddings.position_ids`: expected a f32 tensor, found i64[1,6]"
    );
}

#[test]
fn the_sharded_checkpoint_loads_as_one() {
    let index = fixtures().join("sharded/model.safetensors.index.json");
    let file = Load::new().open(&index).unwrap();
    assert_eq!((file.num_shards(), file.len()), (2, 19));
    assert_eq!(file.metadata()["format"], "pt");
    let sharded: Bert<Tensor> = Load::new()
        .renames(from_hf())
        .shapes_from_file()
        .open(&index)
        .unwrap()
        .load_like(&Bert::template(cpu(DType::F32), cpu(DType::I64)))
        .unwrap()
        .0;
    let single = load_bert("bert.safetensors", DType::F32);
    let flat = |b: &Bert<Tensor>| -> Vec<Vec<f32>> {
        let leaves = pytree_std::leaves(b).into_iter();
        leaves.map(models::tensor_values).collect()
    };
    assert_eq!(flat(&sharded), flat(&single));
}

#[test]
fn a_shard_disagreeing_with_the_index_is_an_error_naming_both() {
    let d = out_dir("bad-shards");
    let src = fixtures().join("sharded");
    for f in [
        "model-00001-of-00002.safetensors",
        "model-00002-of-00002.safetensors",
    ] {
        std::fs::copy(src.join(f), d.join(f)).unwrap();
    }
    let text = std::fs::read_to_string(src.join("model.safetensors.index.json")).unwrap();
    let mut index: serde_json::Value = serde_json::from_str(&text).unwrap();
    let map = index["weight_map"].as_object_mut().unwrap();
    map.insert(
        "bert.pooler.dense.bias".into(),
        "model-00001-of-00002.safetensors".into(),
    );
    map.insert(
        "bert.extra".into(),
        "model-00002-of-00002.safetensors".into(),
    );
    let bad = d.join("bad.index.json");
    std::fs::write(&bad, serde_json::to_string(&index).unwrap()).unwrap();
    let err = Load::new().open(&bad).unwrap_err().to_string();
    let origin = bad.display().to_string();
    assert!(
        err.starts_with("tree structures differ (2 mismatches found)"),
        "{err}"
    );
    assert!(err.contains(&format!("at <root>: sharded checkpoint index {origin}: shard `model-00002-of-00002.safetensors` holds tensor `bert.pooler.dense.bias`, which the index places in `model-00001-of-00002.safetensors`")), "{err}");
    assert!(err.contains("the index places tensor `bert.extra` in `model-00002-of-00002.safetensors`, which does not hold it"), "{err}");
    // A missing shard names itself and the index.
    std::fs::remove_file(d.join("model-00002-of-00002.safetensors")).unwrap();
    let index_path = d.join("model.safetensors.index.json");
    std::fs::write(&index_path, &text).unwrap();
    let err = Load::new().open(&index_path).unwrap_err().to_string();
    assert!(err.contains(&format!("sharded checkpoint index {}: shard `model-00002-of-00002.safetensors` listed in the index:", index_path.display())), "{err}");
    assert!(err.contains("cannot open"), "{err}");
    // A shard name that leaves the directory is refused before any file
    // is opened.
    let escape = r#"{"metadata": {}, "weight_map": {"a": "../model-00001-of-00002.safetensors"}}"#;
    std::fs::write(&index_path, escape).unwrap();
    let err = Load::new().open(&index_path).unwrap_err().to_string();
    assert!(
        err.ends_with(
            "shard `../model-00001-of-00002.safetensors` is not a file name beside the index"
        ),
        "{err}"
    );
    if std::env::var_os("PYTREE_HF_OUT").is_none() {
        std::fs::remove_dir_all(d).ok();
    }
}

#[test]
fn f16_loads_into_f32_leaves_only_when_asked() {
    let like = Bert::template(cpu(DType::F32), cpu(DType::I64));
    let path = fixtures().join("bert_f16.safetensors");
    let strict = Load::new().renames(from_hf()).shapes_from_file();
    let err = strict
        .open(&path)
        .and_then(|f| f.load_like(&like))
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("tree structures differ (18 mismatches found)"),
        "{err}"
    );
    let converted = strict
        .clone()
        .convert_floats()
        .open(&path)
        .unwrap()
        .load_like(&like)
        .unwrap()
        .0;
    let single = load_bert("bert.safetensors", DType::F32);
    let (a, b) = (
        &converted.layers[0].attention.output.layer_norm.weight,
        &single.layers[0].attention.output.layer_norm.weight,
    );
    assert_eq!(a.dtype(), DType::F32);
    assert_eq!(a.to_vec1::<f32>().unwrap(), b.to_vec1::<f32>().unwrap());
    assert_eq!(converted.embeddings.position_ids.dtype(), DType::I64);
}

/// Loads the fixtures and writes them back, named as transformers names
/// them: one file, its f16 twin, and two shards with their index. Each
/// holds the fixture's names and bits; the Python script checks the same
/// files with the `safetensors` package (see the module docs).
#[test]
fn files_written_back_have_the_original_names_and_bits() {
    let d = out_dir("written");
    let bert = load_bert("bert.safetensors", DType::F32);
    let save = Save::new().renames(to_hf());
    save.save(d.join("bert.safetensors"), &bert).unwrap();
    assert_same_tensors(
        &std::fs::read(d.join("bert.safetensors")).unwrap(),
        &fixtures().join("bert.safetensors"),
    );

    let half = load_bert("bert_f16.safetensors", DType::F16);
    save.save(d.join("bert_from_f16.safetensors"), &half)
        .unwrap();
    assert_same_tensors(
        &std::fs::read(d.join("bert_from_f16.safetensors")).unwrap(),
        &fixtures().join("bert_f16.safetensors"),
    );

    let files = save
        .clone()
        .max_shard_bytes(400)
        .save_sharded(d.join("sharded"), &bert)
        .unwrap();
    let names: Vec<&str> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "model-00001-of-00002.safetensors",
            "model-00002-of-00002.safetensors",
            "model.safetensors.index.json"
        ]
    );
    let text = std::fs::read_to_string(&files[2]).unwrap();
    let index: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(index["metadata"]["total_size"], 768);
    let map: BTreeMap<String, String> =
        serde_json::from_value(index["weight_map"].clone()).unwrap();
    assert_eq!(map.len(), 19);
    assert_eq!(
        map["bert.embeddings.word_embeddings.weight"],
        "model-00001-of-00002.safetensors"
    );
    assert_eq!(
        map["bert.pooler.dense.bias"],
        "model-00002-of-00002.safetensors"
    );
    // Read back as one checkpoint, it is the fixture's tensors.
    let back = Load::new().open(&files[2]).unwrap();
    let fixture = Load::new()
        .open(fixtures().join("bert.safetensors"))
        .unwrap();
    let sorted = |c: &pytree_std::checkpoint::Checkpoint| {
        let mut t: Vec<(String, String, Vec<u8>)> = c
            .tensors()
            .map(|t| {
                (
                    t.name().into(),
                    t.signature().to_string(),
                    t.data().unwrap().to_vec(),
                )
            })
            .collect();
        t.sort();
        t
    };
    assert_eq!(sorted(&back), sorted(&fixture));
    if std::env::var_os("PYTREE_HF_OUT").is_none() {
        std::fs::remove_dir_all(d).ok();
    }
}

/// The "done when" of issue 18: the loaded model fine-tunes (Adam leaves
/// the I64 buffer alone) and is saved back.
#[test]
fn a_loaded_bert_fine_tunes_with_its_buffer_left_alone() {
    use pytree_optim::{adam, GradientTransformation};
    let mut bert = load_bert("bert.safetensors", DType::F32);
    // A snapshot: candle tensors are written in place by the optimizers,
    // so a clone would see the step.
    let before = pytree_std::map(bert.clone(), |t| t.copy().unwrap());
    let opt = adam(0.1);
    let mut state = opt.init(&bert).unwrap();
    let mut grads = pytree_std::map(bert.clone(), |t| t.ones_like().unwrap());
    opt.step(&mut bert, &mut grads, &mut state).unwrap();
    let ids = bert.embeddings.position_ids.to_vec2::<i64>().unwrap();
    assert_eq!(
        ids,
        before.embeddings.position_ids.to_vec2::<i64>().unwrap()
    );
    let w = bert.pooler.dense.bias.to_vec1::<f32>().unwrap();
    let w0 = before.pooler.dense.bias.to_vec1::<f32>().unwrap();
    for (a, b) in w.iter().zip(&w0) {
        assert!((b - a - 0.1).abs() < 1e-5, "{a} {b}"); // Adam's first step: lr
    }
    let bytes = Save::new().renames(to_hf()).to_bytes(&bert).unwrap();
    let file = Load::new().from_bytes(bytes).unwrap();
    assert_eq!(
        file.tensor("bert.embeddings.position_ids")
            .unwrap()
            .signature()
            .to_string(),
        "i64[1,6]"
    );
}

// ---------------------------------------------------------------------
// The same BERT with ndarray: one tree of `AnyArray` leaves (f32 or f16
// weights beside the I64 buffer), loaded, summarised, fine-tuned and
// saved back whole.

use pytree_std::ndarray::{Array2, IxDyn};
use pytree_std::AnyArray;

/// A zero-size `AnyArray` of dtype `A`: a template leaf (the shape comes
/// from the file).
fn any<A: pytree_std::AnyElement + Default>() -> AnyArray {
    ArrayD::<A>::from_elem(IxDyn(&[0]), A::default()).into()
}

fn load_any_bert(file: &str, float: AnyArray) -> Bert<AnyArray> {
    let template = Bert::template(float, any::<i64>());
    hf_file(file).load_like(&template).unwrap().0
}

#[test]
fn an_ndarray_bert_with_an_i64_buffer_is_one_tree() {
    let bert = load_any_bert("bert.safetensors", any::<f32>());
    // The same values as candle reads from the Python-written file.
    let reference = load_bert("bert.safetensors", DType::F32);
    for (a, t) in pytree_std::leaves(&bert)
        .into_iter()
        .zip(pytree_std::leaves(&reference))
    {
        assert_eq!(a.dtype().to_string(), t.dtype().as_str());
        assert_eq!(a.shape(), t.dims());
    }
    let q = bert.layers[1]
        .attention
        .self_attn
        .query
        .weight
        .view::<f32>()
        .unwrap();
    assert_eq!(
        q.iter().copied().collect::<Vec<f32>>(),
        expected("bert.encoder.layer.1.attention.self.query.weight", 16)
    );
    // The buffer, typed.
    let ids: Array2<i64> = bert.embeddings.position_ids.clone().try_into().unwrap();
    assert_eq!(
        ids,
        Array2::from_shape_vec((1, 6), (0..6).collect()).unwrap()
    );
    // Flatten and back; a map over every leaf keeps each dtype.
    let (leaves, def) = pytree_std::flatten(bert.clone());
    assert_eq!(leaves.len(), 19);
    let back: Bert<AnyArray> = pytree_std::unflatten(&def, leaves).unwrap();
    assert_eq!(back.embeddings.position_ids, bert.embeddings.position_ids);
    let copied = pytree_std::map(bert.clone(), |a| a);
    assert_eq!(copied.pooler.dense.bias, bert.pooler.dense.bias);
    // The summary counts both dtypes: 18 f32 tensors and 6 i64 elements.
    let s = pytree_std::elements::summary(&bert);
    assert_eq!(s.num_leaves(), 19);
    let f32_bytes: usize = pytree_std::leaves(&bert)
        .iter()
        .filter(|a| a.dtype() == pytree_std::DType::F32)
        .map(|a| a.shape().iter().product::<usize>() * 4)
        .sum();
    assert_eq!(s.num_bytes(), Some(f32_bytes + 6 * 8));
    let ids_row = s
        .to_string()
        .lines()
        .find(|l| l.trim_start().starts_with(".position_ids"))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "));
    assert_eq!(
        ids_row.as_deref(),
        Some(".position_ids buffer i64 [1, 6] 6 48 B")
    );
    // Saved whole, it is the Python-written file, tensor for tensor.
    let bytes = Save::new().renames(to_hf()).to_bytes(&bert).unwrap();
    assert_same_tensors(&bytes, &fixtures().join("bert.safetensors"));
    // And loads back by type alone (the TreeDef is in the file now).
    let again: Bert<AnyArray> = Load::new()
        .renames(from_hf())
        .from_bytes(bytes)
        .unwrap()
        .load()
        .unwrap()
        .0;
    assert_eq!(again.embeddings.position_ids, bert.embeddings.position_ids);
}

#[test]
fn an_ndarray_bert_in_f16_loads_and_saves_with_its_buffer() {
    let bert = load_any_bert("bert_f16.safetensors", any::<pytree_std::half::f16>());
    assert_eq!(bert.pooler.dense.weight.signature().to_string(), "f16[4,4]");
    assert_eq!(
        bert.embeddings.position_ids.signature().to_string(),
        "i64[1,6]"
    );
    let bytes = Save::new().renames(to_hf()).to_bytes(&bert).unwrap();
    assert_same_tensors(&bytes, &fixtures().join("bert_f16.safetensors"));
    // A template of another float dtype is an error naming the tensor.
    let err = Load::new()
        .renames(from_hf())
        .shapes_from_file()
        .open(fixtures().join("bert_f16.safetensors"))
        .and_then(|f| f.load_like(&Bert::template(any::<f32>(), any::<i64>())))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("at .pooler.dense.weight: tensor `bert.pooler.dense.weight`: expected a f32 tensor, found f16[4,4]"),
        "{err}"
    );
}

/// Adam on the `AnyArray` BERT: float arrays move as the typed
/// `ArrayD<f32>` optimizer moves the same weights (a peer computed by the
/// typed kernels, not by this code), the I64 buffer is left alone.
#[test]
fn an_ndarray_bert_fine_tunes_with_its_buffer_left_alone() {
    use pytree_optim::{adam, GradientTransformation};
    let mut bert = load_any_bert("bert.safetensors", any::<f32>());
    let before = bert.clone();
    let opt = adam(0.1);
    let mut state = opt.init(&bert).unwrap();
    let mut grads = pytree_std::map(bert.clone(), |a| match a {
        AnyArray::F32(w) => AnyArray::F32(w.mapv(|x| x * 0.5 - 1.0)),
        other => other,
    });
    opt.step(&mut bert, &mut grads, &mut state).unwrap();
    opt.step(&mut bert, &mut grads.clone(), &mut state).unwrap();
    assert_eq!(bert.embeddings.position_ids, before.embeddings.position_ids);
    // The peer: the float leaves alone, as a typed tree.
    let typed = |b: &Bert<AnyArray>| -> Vec<ArrayD<f32>> {
        pytree_std::leaves(b)
            .into_iter()
            .filter_map(|a| a.to_owned().into_typed::<f32, IxDyn>().ok())
            .collect()
    };
    let mut params = typed(&before);
    let g = typed(&pytree_std::map(before.clone(), |a| match a {
        AnyArray::F32(w) => AnyArray::F32(w.mapv(|x| x * 0.5 - 1.0)),
        other => other,
    }));
    let mut s = opt.init(&params).unwrap();
    opt.step(&mut params, &mut g.clone(), &mut s).unwrap();
    opt.step(&mut params, &mut g.clone(), &mut s).unwrap();
    let got = typed(&bert);
    assert_eq!(got.len(), 18);
    for (a, b) in got.iter().zip(&params) {
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() <= 1e-6 * y.abs().max(1.0), "{x} {y}");
        }
    }
    assert_ne!(got, typed(&before));
}

// ---------------------------------------------------------------------
// Loading a foreign file by type alone: the type fixes the structure, the
// file's names the `Vec` lengths, its tensors the shapes.

#[test]
fn a_python_written_bert_loads_by_type_alone() {
    let path = fixtures().join("bert.safetensors");
    let file = Load::new().renames(from_hf()).open(&path).unwrap();
    assert!(file.treedef().unwrap().is_none());
    let (bert, report) = file.load::<Bert<AnyArray>>().unwrap();
    assert!(report.is_complete());
    assert_eq!(report.loaded.len(), 19);
    assert_eq!(bert.layers.len(), 2);
    // The same tree as a template-driven load.
    let like = load_any_bert("bert.safetensors", any::<f32>());
    assert_eq!(pytree_std::leaves(&bert), pytree_std::leaves(&like));
    // `load` does the same for a file without a TreeDef; candle too.
    let tensors: Bert<Tensor> = file.load().unwrap().0;
    assert_eq!(
        tensors.embeddings.position_ids.to_vec2::<i64>().unwrap(),
        [[0, 1, 2, 3, 4, 5]]
    );
    // The sharded checkpoint, by type alone.
    let sharded: Bert<AnyArray> = Load::new()
        .renames(from_hf())
        .open(fixtures().join("sharded/model.safetensors.index.json"))
        .unwrap()
        .load()
        .unwrap()
        .0;
    assert_eq!(pytree_std::leaves(&sharded), pytree_std::leaves(&like));
}

/// The error of loading a `T` from the file at `path`.
fn load_err<T: pytree_std::Unflatten<pytree_std::Std>>(load: Load, path: &Path) -> String
where
    T::Leaf: pytree_std::checkpoint::TensorLeaf,
{
    let loaded = load.open(path).and_then(|f| f.load::<T>());
    loaded.map(drop).unwrap_err().to_string()
}

#[test]
fn a_type_alone_load_is_strict_and_names_what_names_cannot_say() {
    let path = fixtures().join("bert.safetensors");
    // One leaf type for the I64 buffer too: an error at its path.
    let err = load_err::<Bert<ArrayD<f32>>>(Load::new().renames(from_hf()), &path);
    assert_eq!(
        err,
        "at .embeddings.position_ids: tensor `bert.embeddings.position_ids`: expected a f32 tensor, found i64[1,6]"
    );
    // Without the layer pattern the type finds no layers (length 0), and
    // their tensors are unused: an error listing them, unless allowed.
    let partial = Load::new().renames(Renames::new().prefix("bert.", ""));
    let err = load_err::<Bert<AnyArray>>(partial.clone(), &path);
    assert!(
        err.starts_with("tree structures differ (12 mismatches found)"),
        "{err}"
    );
    assert!(err.contains("tensor `bert.encoder.layer.0.attention.self.query.weight` (f32[4,4]), renamed `encoder.layer.0.attention.self.query.weight`, of the file is not a leaf of the type"), "{err}");
    let (bert, report) = partial
        .allow_unused()
        .open(&path)
        .unwrap()
        .load::<Bert<AnyArray>>()
        .unwrap();
    assert!(bert.layers.is_empty());
    assert!(!report.is_complete());
    assert_eq!(report.unused.len(), 12);
    // A tensor the type asks for and the file lacks.
    #[derive(PyTree, Debug)]
    struct WithExtra {
        embeddings: Embeddings<AnyArray>,
        extra: AnyArray,
    }
    let err = load_err::<WithExtra>(Load::new().renames(from_hf()).allow_unused(), &path);
    assert_eq!(
        err,
        "at .extra: tensor `extra`: expected a tensor, found nothing in the file"
    );
    // A gap in a sequence's numbers.
    let gap = Renames::new()
        .prefix("bert.", "")
        .pattern("encoder.layer.1", "layers.2")
        .pattern("encoder.layer.*", "layers.$1");
    let err = load_err::<Bert<AnyArray>>(Load::new().renames(gap), &path);
    assert_eq!(
        err,
        "at .layers: the file names layers.2 but nothing under `layers.1`: a sequence's \
         elements are numbered from 0 without gaps"
    );
    // An enum's variant is not in the names.
    #[derive(PyTree, Debug)]
    enum Head {
        Pooler(Box<Pooler<AnyArray>>),
        Nothing,
    }
    #[derive(PyTree, Debug)]
    struct WithHead {
        pooler: Head,
    }
    let err = load_err::<WithHead>(Load::new().renames(from_hf()).allow_unused(), &path);
    assert!(
        err.starts_with(
            "at .pooler: the file holds no TreeDef (it was not written by this crate), and the \
             enum variant (Head::Pooler or Head::Nothing) is not in the names"
        ),
        "{err}"
    );
}
