//! Issue 27 (items 3 and 5): a `BertForMaskedLM` written by transformers
//! itself (`tests/fixtures/hf/make_fixtures.py`: `save_pretrained`, one
//! file and two shards, in f32 and bf16, and `huggingface_hub`'s sharded
//! writer), whose decoder is tied to the word embeddings and left out of
//! the files, loaded **by type** into a derived struct named as
//! transformers names the module: the ties of [`Load::tie`] and the float
//! conversion of [`Load::convert_floats`] work by type as against a
//! template. Every value is checked against the reference reader of the
//! format (the `safetensors` crate) on the same files, and the files
//! written back are checked by transformers' own loader
//! (`make_fixtures.py check`, see its docstring: no missing or unexpected
//! keys, the same logits).

use std::path::{Path, PathBuf};

use pytree_std::candle_core::{DType as CandleDType, Device, Tensor};
use pytree_std::checkpoint::{self, Load, Save};
use pytree_std::half::bf16;
use pytree_std::ndarray::ArrayD;
use pytree_std::{AnyArray, DType, PyTree};

mod hf;
use hf::{fixtures, tied, CLS_BIAS, DECODER_BIAS, DECODER_WEIGHT, WORD_EMBEDDINGS};

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Linear<T> {
    weight: T,
    bias: T,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Embedding<T> {
    weight: T,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Embeddings<T> {
    word_embeddings: Embedding<T>,
    position_embeddings: Embedding<T>,
    token_type_embeddings: Embedding<T>,
    #[pytree(rename = "LayerNorm")]
    layer_norm: Linear<T>,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct SelfAttention<T> {
    query: Linear<T>,
    key: Linear<T>,
    value: Linear<T>,
}

/// `attention.output`, `output`, `cls.predictions.transform`: a dense
/// layer and a LayerNorm.
#[derive(PyTree, Clone, Debug, PartialEq)]
struct DenseNorm<T> {
    dense: Linear<T>,
    #[pytree(rename = "LayerNorm")]
    layer_norm: Linear<T>,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Attention<T> {
    #[pytree(rename = "self")]
    self_attn: SelfAttention<T>,
    output: DenseNorm<T>,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Intermediate<T> {
    dense: Linear<T>,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Layer<T> {
    attention: Attention<T>,
    intermediate: Intermediate<T>,
    output: DenseNorm<T>,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Encoder<T> {
    layer: Vec<Layer<T>>,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Bert<T> {
    embeddings: Embeddings<T>,
    encoder: Encoder<T>,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Predictions<T> {
    bias: T,
    transform: DenseNorm<T>,
    /// Tied by transformers: `weight` to the word embeddings, `bias` to
    /// `cls.predictions.bias`; neither is in its files.
    decoder: Linear<T>,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Cls<T> {
    predictions: Predictions<T>,
}

/// transformers' `BertForMaskedLM`, field for field.
#[derive(PyTree, Clone, Debug, PartialEq)]
struct BertForMaskedLM<T> {
    bert: Bert<T>,
    cls: Cls<T>,
}

/// The first f32 checkpoint, loaded by type with the ties.
fn tied_f32_model() -> BertForMaskedLM<ArrayD<f32>> {
    let file = tied().open(&f32_checkpoints()[0]).unwrap();
    file.load().unwrap().0
}

/// The checkpoints transformers and huggingface_hub wrote of one model.
fn f32_checkpoints() -> [PathBuf; 3] {
    let f = fixtures();
    [
        f.join("bert_mlm/model.safetensors"),
        f.join("bert_mlm_sharded/model.safetensors.index.json"),
        f.join("bert_mlm_hub/model.safetensors.index.json"),
    ]
}

/// A fresh directory for one test (`$PYTREE_HF_OUT` when set, so that the
/// Python script can check what was written).
fn out_dir(test: &str) -> PathBuf {
    pytree_tests::out_dir("PYTREE_HF_OUT", &format!("hf-mlm-{test}"))
}

fn remove_out_dir(d: &Path) {
    if std::env::var_os("PYTREE_HF_OUT").is_none() {
        std::fs::remove_dir_all(d).ok();
    }
}

/// Every tensor of the model file(s) at `path` as the reference reader
/// (the `safetensors` crate) gives it: name, dtype name, shape, bytes.
fn reference(path: &Path) -> Vec<(String, String, Vec<usize>, Vec<u8>)> {
    let files: Vec<PathBuf> = if path.extension().is_some_and(|e| e == "json") {
        let index: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut shards: Vec<String> = index["weight_map"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        shards.sort();
        shards.dedup();
        shards
            .iter()
            .map(|s| path.parent().unwrap().join(s))
            .collect()
    } else {
        vec![path.to_path_buf()]
    };
    let mut out = Vec::new();
    for file in files {
        let bytes = std::fs::read(file).unwrap();
        let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
        for (name, t) in st.tensors() {
            out.push((
                name,
                format!("{:?}", t.dtype()),
                t.shape().to_vec(),
                t.data().to_vec(),
            ));
        }
    }
    out.sort();
    out
}

/// The model's leaves by tensor name, as f32 values.
fn named_values(model: &BertForMaskedLM<ArrayD<f32>>) -> Vec<(String, Vec<f32>)> {
    pytree_std::paths::leaves_with_path(model)
        .into_iter()
        .map(|(p, a)| {
            (
                p.keystr(pytree_std::paths::KeyStr::SIMPLE),
                a.iter().copied().collect(),
            )
        })
        .collect()
}

/// The f32 values the reference reader gives for tensor `name` of `path`.
fn reference_f32(path: &Path, name: &str) -> Vec<f32> {
    let (_, dtype, _, bytes) = reference(path)
        .into_iter()
        .find(|(n, ..)| n == name)
        .unwrap_or_else(|| panic!("{name} is in {}", path.display()));
    match dtype.as_str() {
        "F32" => bytes
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect(),
        "BF16" => bytes
            .chunks(2)
            .map(|c| bf16::from_le_bytes([c[0], c[1]]).to_f32())
            .collect(),
        other => panic!("{other}"),
    }
}

/// Checks a loaded model against the reference reader: every tensor of
/// the file(s) is the leaf of its name, and the tied leaves are the
/// tensors they are tied to.
fn assert_is_the_file(model: &BertForMaskedLM<ArrayD<f32>>, path: &Path) {
    let values = named_values(model);
    let refs = reference(path);
    assert_eq!(
        refs.len() + 2,
        values.len(),
        "the file lacks the two tied tensors"
    );
    for (name, values) in &values {
        let source = match name.as_str() {
            DECODER_WEIGHT => WORD_EMBEDDINGS,
            DECODER_BIAS => CLS_BIAS,
            other => other,
        };
        assert_eq!(*values, reference_f32(path, source), "{name}");
    }
}

/// The report: by type, a tied weight that the file leaves out is
/// "found nothing"; with the ties, every checkpoint loads by type (one
/// file, transformers' shards, the hub's shards), each leaf holding the
/// reference reader's values, the decoder its tied tensors.
#[test]
fn a_transformers_bert_for_masked_lm_loads_by_type_with_its_ties() {
    for path in f32_checkpoints() {
        let err = checkpoint::load::<BertForMaskedLM<ArrayD<f32>>>(&path).unwrap_err();
        assert_eq!(
            err.to_string(),
            "at .cls.predictions.decoder.weight: tensor `cls.predictions.decoder.weight`: \
             expected a f32 tensor, found nothing in the file",
            "{}",
            path.display()
        );
        let model: BertForMaskedLM<ArrayD<f32>> = tied().open(&path).unwrap().load().unwrap().0;
        assert_eq!(model.bert.encoder.layer.len(), 2);
        assert_eq!(model.cls.predictions.decoder.weight.shape(), [32, 8]);
        assert_eq!(
            model.cls.predictions.decoder.weight,
            model.bert.embeddings.word_embeddings.weight
        );
        assert_is_the_file(&model, &path);

        // What the load did: every tensor used, the tied names loaded.
        let file = tied().open(&path).unwrap();
        let (again, report) = file.load::<BertForMaskedLM<ArrayD<f32>>>().unwrap();
        assert_eq!(again, model);
        assert!(report.is_complete(), "{report:?}");
        assert_eq!(report.loaded.len(), 44);
        assert!(report.loaded.iter().any(|n| n == DECODER_WEIGHT));
        assert!(report.loaded.iter().any(|n| n == DECODER_BIAS));

        // By template and in place: the same tree, the same report.
        let (like, like_report) = file.load_like(&model).unwrap();
        assert_eq!(like, model);
        assert!(like_report.is_complete());
        let mut into = pytree_std::map(model.clone(), |a| a * 0.0);
        assert!(file.load_into(&mut into).unwrap().is_complete());
        assert_eq!(into, model);

        // candle tensors and AnyArray leaves, by type.
        let tensors: BertForMaskedLM<Tensor> = file.load().unwrap().0;
        assert_eq!(
            tensors
                .cls
                .predictions
                .decoder
                .bias
                .to_vec1::<f32>()
                .unwrap(),
            model
                .cls
                .predictions
                .bias
                .iter()
                .copied()
                .collect::<Vec<_>>()
        );
        let any: BertForMaskedLM<AnyArray> = file.load().unwrap().0;
        assert_eq!(
            any.cls.predictions.decoder.weight.view::<f32>().unwrap(),
            model.bert.embeddings.word_embeddings.weight.view()
        );
    }
}

/// A file this crate saved with its ties (a TreeDef in the metadata, the
/// tied tensors left out as transformers does): by type, the tie is taken
/// through the TreeDef's names as through the file's; without it, the
/// TreeDef's leaves outnumber the tensors, and the error says why.
#[test]
fn a_tie_by_type_through_the_treedef() {
    let model = tied_f32_model();
    let bytes = Save::new()
        .tie(DECODER_WEIGHT, WORD_EMBEDDINGS)
        .tie(DECODER_BIAS, CLS_BIAS)
        .to_bytes(&model)
        .unwrap();
    let file = tied().from_bytes(bytes.clone()).unwrap();
    assert!(file.treedef().unwrap().is_some());
    assert_eq!(file.len(), 42);
    assert_eq!(
        file.load::<BertForMaskedLM<ArrayD<f32>>>().unwrap().0,
        model
    );
    let err = Load::new()
        .from_bytes(bytes)
        .unwrap()
        .load::<BertForMaskedLM<ArrayD<f32>>>()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "at <root>: safetensors file <bytes>: the TreeDef in the metadata has 44 leaves, the \
         file holds 42 tensors (a file saved with Save::tie loads with the same Load::tie)"
    );
}

/// Loaded by type, saved back with the ties as transformers writes them:
/// the same tensor names, dtypes, shapes and bits, one file and two shards
/// (`make_fixtures.py check` loads both in `BertForMaskedLM.from_pretrained`
/// and compares the logits with the fixture's).
#[test]
fn saved_back_with_its_ties_it_is_the_transformers_file() {
    let d = out_dir("saved");
    let single = &f32_checkpoints()[0];
    let model: BertForMaskedLM<ArrayD<f32>> = tied().open(single).unwrap().load().unwrap().0;
    let save = Save::new()
        .tie(DECODER_WEIGHT, WORD_EMBEDDINGS)
        .tie(DECODER_BIAS, CLS_BIAS);
    let written = d.join("bert_mlm");
    std::fs::create_dir_all(&written).unwrap();
    save.save(written.join("model.safetensors"), &model)
        .unwrap();
    assert_eq!(
        reference(&written.join("model.safetensors")),
        reference(single)
    );
    let files = save
        .clone()
        .max_shard_bytes(6000)
        .save_sharded(d.join("bert_mlm_sharded"), &model)
        .unwrap();
    assert_eq!(files.len(), 3);
    assert_eq!(reference(&files[2]), reference(single));
    remove_out_dir(&d);
}

/// Issue 27 item 5: a bf16 file into an f32 model by type. Refused without
/// conversion; with it, every leaf is the bf16 value widened (exactly) to
/// f32: the fixture's f32 weights rounded to bf16, as torch's
/// `.to(torch.bfloat16)` rounds them. Leaf types whose dtype is a value
/// (AnyArray, candle tensors) take the target of `convert_floats_to`.
#[test]
fn a_bf16_file_loads_by_type_into_an_f32_model() {
    let path = fixtures().join("bert_mlm_bf16/model.safetensors");
    let err = tied()
        .open(&path)
        .unwrap()
        .load::<BertForMaskedLM<ArrayD<f32>>>()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .bert.embeddings.word_embeddings.weight: tensor `bert.embeddings.word_embeddings.weight`: \
         expected a f32 tensor, found bf16[32,8]"
    );
    let model: BertForMaskedLM<ArrayD<f32>> = tied()
        .convert_floats()
        .open(&path)
        .unwrap()
        .load()
        .unwrap()
        .0;
    let f32_model = tied_f32_model();
    let rounded = pytree_std::map(f32_model, |a| a.mapv(|x| bf16::from_f32(x).to_f32()));
    assert_eq!(model, rounded);
    assert_is_the_file(&model, &path);

    // Through a TreeDef too: saved by this crate in bf16, loaded by type.
    let half: BertForMaskedLM<ArrayD<bf16>> =
        pytree_std::walk::map_into(model.clone(), |a| a.mapv(bf16::from_f32)).unwrap();
    let bytes = checkpoint::Save::new().to_bytes(&half).unwrap();
    let back: BertForMaskedLM<ArrayD<f32>> = Load::new()
        .convert_floats()
        .from_bytes(bytes)
        .unwrap()
        .load()
        .unwrap()
        .0;
    assert_eq!(back, model);

    // Dtype-erased leaves: the float target is given.
    let file = tied().convert_floats_to(DType::F32).open(&path).unwrap();
    let any: BertForMaskedLM<AnyArray> = file.load().unwrap().0;
    assert_eq!(any.cls.predictions.bias.dtype(), DType::F32);
    assert_eq!(
        any.cls.predictions.decoder.weight.view::<f32>().unwrap(),
        model.bert.embeddings.word_embeddings.weight.view()
    );
    let tensors: BertForMaskedLM<Tensor> = file.load().unwrap().0;
    assert_eq!(
        tensors.bert.embeddings.layer_norm.weight.dtype(),
        CandleDType::F32
    );
    let unconverted: BertForMaskedLM<Tensor> = tied().open(&path).unwrap().load().unwrap().0;
    assert_eq!(
        unconverted.bert.embeddings.layer_norm.weight.dtype(),
        CandleDType::BF16
    );
    assert!(Load::new()
        .convert_floats_to(DType::I64)
        .open(&path)
        .unwrap_err()
        .to_string()
        .contains("floats are converted to f16, bf16, f32 or f64 only"));

    // Saved as f32 for transformers (`make_fixtures.py check` compares its
    // logits with `from_pretrained(bert_mlm_bf16, dtype=torch.float32)`).
    let d = out_dir("from-bf16");
    let written = d.join("bert_mlm_from_bf16");
    std::fs::create_dir_all(&written).unwrap();
    Save::new()
        .tie(DECODER_WEIGHT, WORD_EMBEDDINGS)
        .tie(DECODER_BIAS, CLS_BIAS)
        .save(written.join("model.safetensors"), &model)
        .unwrap();
    let names = |p: &Path| -> Vec<String> { reference(p).into_iter().map(|t| t.0).collect() };
    assert_eq!(names(&written.join("model.safetensors")), names(&path));
    remove_out_dir(&d);
}

/// The candle model of the same file: loaded by type with the ties onto
/// the CPU, as a candle user builds it.
#[test]
fn a_candle_model_loads_the_shards_by_type() {
    let index = &f32_checkpoints()[1];
    let model: BertForMaskedLM<Tensor> = tied().open(index).unwrap().load().unwrap().0;
    let reference_model: BertForMaskedLM<ArrayD<f32>> =
        tied().open(index).unwrap().load().unwrap().0;
    for (t, a) in pytree_std::leaves(&model)
        .into_iter()
        .zip(pytree_std::leaves(&reference_model))
    {
        assert_eq!(t.device().location(), Device::Cpu.location());
        assert_eq!(t.dims(), a.shape());
        let v: Vec<f32> = t.flatten_all().unwrap().to_vec1().unwrap();
        assert_eq!(v, a.iter().copied().collect::<Vec<_>>());
    }
}
