//! Issue 36 item 3: a Hugging Face file loads into a burn-nn model by key
//! path. The tiny `BertForMaskedLM` that transformers wrote
//! (`tests/fixtures/hf/bert_mlm/model.safetensors`, see
//! `make_fixtures.py`) is loaded into a `#[derive(Module)]` BERT of
//! burn-nn layers (`Embedding`, `Linear`, `LayerNorm`; attention and GELU
//! in burn tensor ops) through `BurnModule`, with
//!
//! - the layout rule: burn's `Linear` keeps its weight as `[d_in, d_out]`,
//!   PyTorch's as `[d_out, d_in]`; `Load::transpose_linear(&template)`
//!   reads every `Linear` weight of the template transposed (by name, as
//!   burn-store's `PyTorchToBurnAdapter` picks them: most of BERT's are
//!   square, so the shape cannot say), strictly;
//! - renames where burn-nn's names differ (`LayerNorm.weight` / `.bias`
//!   are burn's `gamma` / `beta`; `self` is a Rust keyword);
//! - the MLM decoder tied to the word embeddings as transformers ties it
//!   (`Load::tie`; the tied weight read transposed into the decoder);
//!
//! then run on the input `make_fixtures.py logits` gave transformers, and
//! its logits compared with transformers' (`bert_mlm_logits.json`). Saved
//! back with `Save::transpose_linear`, it is transformers' file, bit for
//! bit.

use std::path::{Path, PathBuf};

use burn::module::{Module, Param};
use burn::nn::{Embedding, EmbeddingConfig, LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::tensor::activation::{gelu, softmax};
use burn::tensor::{Device, Int, Tensor, TensorData};
use pytree_std::checkpoint::{Load, Renames, Save};
use pytree_std::BurnModule;

mod hf;
use hf::{fixtures, CLS_BIAS, DECODER_BIAS, DECODER_WEIGHT, WORD_EMBEDDINGS};

#[derive(Module, Debug)]
struct Embeddings {
    word_embeddings: Embedding,
    position_embeddings: Embedding,
    token_type_embeddings: Embedding,
    layer_norm: LayerNorm,
}

#[derive(Module, Debug)]
struct SelfAttention {
    query: Linear,
    key: Linear,
    value: Linear,
}

/// `attention.output`, `output`, `cls.predictions.transform`: a dense
/// layer and a LayerNorm.
#[derive(Module, Debug)]
struct DenseNorm {
    dense: Linear,
    layer_norm: LayerNorm,
}

#[derive(Module, Debug)]
struct Attention {
    self_attn: SelfAttention,
    output: DenseNorm,
}

#[derive(Module, Debug)]
struct Intermediate {
    dense: Linear,
}

#[derive(Module, Debug)]
struct Layer {
    attention: Attention,
    intermediate: Intermediate,
    output: DenseNorm,
}

#[derive(Module, Debug)]
struct Encoder {
    layer: Vec<Layer>,
}

#[derive(Module, Debug)]
struct Bert {
    embeddings: Embeddings,
    encoder: Encoder,
}

#[derive(Module, Debug)]
struct Predictions {
    bias: Param<Tensor<1>>,
    transform: DenseNorm,
    /// `[hidden, vocab]`; transformers ties its weight to the word
    /// embeddings and its bias to `cls.predictions.bias`, and leaves both
    /// out of its files.
    decoder: Linear,
}

#[derive(Module, Debug)]
struct Cls {
    predictions: Predictions,
}

/// transformers' `BertForMaskedLM` in burn-nn modules, field for field
/// (no pooler: the masked-LM model has none).
#[derive(Module, Debug)]
struct BertForMaskedLM {
    bert: Bert,
    cls: Cls,
    #[module(skip)]
    heads: usize,
}

/// The fields of `config.json` the model needs.
struct Config {
    vocab: usize,
    hidden: usize,
    layers: usize,
    heads: usize,
    intermediate: usize,
    max_positions: usize,
    type_vocab: usize,
    eps: f64,
}

impl Config {
    fn read(path: &Path) -> Config {
        let c: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let n = |k: &str| c[k].as_u64().unwrap_or_else(|| panic!("{k}")) as usize;
        assert_eq!(c["hidden_act"], "gelu");
        assert_eq!(c["tie_word_embeddings"], true);
        Config {
            vocab: n("vocab_size"),
            hidden: n("hidden_size"),
            layers: n("num_hidden_layers"),
            heads: n("num_attention_heads"),
            intermediate: n("intermediate_size"),
            max_positions: n("max_position_embeddings"),
            type_vocab: n("type_vocab_size"),
            eps: c["layer_norm_eps"].as_f64().unwrap(),
        }
    }

    /// A model of this shape (its values are burn's initializers': the
    /// load replaces every one).
    fn init(&self, d: &Device) -> BertForMaskedLM {
        let h = self.hidden;
        let linear = |i, o| LinearConfig::new(i, o).init(d);
        let norm = || LayerNormConfig::new(h).with_epsilon(self.eps).init(d);
        let dense_norm = || DenseNorm {
            dense: linear(h, h),
            layer_norm: norm(),
        };
        BertForMaskedLM {
            bert: Bert {
                embeddings: Embeddings {
                    word_embeddings: EmbeddingConfig::new(self.vocab, h).init(d),
                    position_embeddings: EmbeddingConfig::new(self.max_positions, h).init(d),
                    token_type_embeddings: EmbeddingConfig::new(self.type_vocab, h).init(d),
                    layer_norm: norm(),
                },
                encoder: Encoder {
                    layer: (0..self.layers)
                        .map(|_| Layer {
                            attention: Attention {
                                self_attn: SelfAttention {
                                    query: linear(h, h),
                                    key: linear(h, h),
                                    value: linear(h, h),
                                },
                                output: dense_norm(),
                            },
                            intermediate: Intermediate {
                                dense: linear(h, self.intermediate),
                            },
                            output: DenseNorm {
                                dense: linear(self.intermediate, h),
                                layer_norm: norm(),
                            },
                        })
                        .collect(),
                },
            },
            cls: Cls {
                predictions: Predictions {
                    bias: Param::from_tensor(Tensor::zeros([self.vocab], d)),
                    transform: dense_norm(),
                    decoder: linear(h, self.vocab),
                },
            },
            heads: self.heads,
        }
    }
}

impl BertForMaskedLM {
    /// transformers' `BertForMaskedLM.forward` in eval mode (no dropout),
    /// without an attention mask (no padding): logits `[batch, seq, vocab]`.
    fn forward(&self, input_ids: Tensor<2, Int>, token_type_ids: Tensor<2, Int>) -> Tensor<3> {
        let d = input_ids.device();
        let [_, seq] = input_ids.dims();
        let e = &self.bert.embeddings;
        let positions = Tensor::<1, Int>::arange(0..seq as i64, &d).reshape([1, seq]);
        let x = e.word_embeddings.forward(input_ids)
            + e.position_embeddings.forward(positions)
            + e.token_type_embeddings.forward(token_type_ids);
        let mut x = e.layer_norm.forward(x);
        for layer in &self.bert.encoder.layer {
            let a = self.attention(&layer.attention.self_attn, x.clone());
            let out = &layer.attention.output;
            let a = out.layer_norm.forward(out.dense.forward(a) + x);
            let i = gelu(layer.intermediate.dense.forward(a.clone()));
            let out = &layer.output;
            x = out.layer_norm.forward(out.dense.forward(i) + a);
        }
        let p = &self.cls.predictions;
        let t = &p.transform;
        let h = t.layer_norm.forward(gelu(t.dense.forward(x)));
        p.decoder.forward(h)
    }

    /// Multi-head self-attention: softmax(q kᵀ / √d_head) v per head.
    fn attention(&self, s: &SelfAttention, x: Tensor<3>) -> Tensor<3> {
        let [batch, seq, hidden] = x.dims();
        let (heads, d_head) = (self.heads, hidden / self.heads);
        let split = |t: Tensor<3>| t.reshape([batch, seq, heads, d_head]).swap_dims(1, 2);
        let q = split(s.query.forward(x.clone()));
        let k = split(s.key.forward(x.clone()));
        let v = split(s.value.forward(x));
        let scores = q
            .matmul(k.swap_dims(2, 3))
            .div_scalar((d_head as f64).sqrt());
        let context = softmax(scores, 3).matmul(v);
        context.swap_dims(1, 2).reshape([batch, seq, hidden])
    }
}

fn model_file() -> PathBuf {
    fixtures().join("bert_mlm/model.safetensors")
}

/// The template: the model of `config.json`, as a tree.
fn template() -> BurnModule<BertForMaskedLM> {
    let config = Config::read(&fixtures().join("bert_mlm/config.json"));
    BurnModule::new(config.init(&Device::default()))
}

/// From transformers' names to the tree's: burn-nn's `LayerNorm` names
/// its parameters `gamma` and `beta`; `self` is a Rust keyword.
fn from_hf() -> Renames {
    Renames::new()
        .pattern("LayerNorm.weight", "layer_norm.gamma")
        .pattern("LayerNorm.bias", "layer_norm.beta")
        .pattern("attention.self", "attention.self_attn")
}

/// The way back.
fn to_hf() -> Renames {
    Renames::new()
        .pattern("layer_norm.gamma", "LayerNorm.weight")
        .pattern("layer_norm.beta", "LayerNorm.bias")
        .pattern("attention.self_attn", "attention.self")
}

/// The renames and the ties, without the layout rule.
fn hf_names() -> Load {
    hf::tied().renames(from_hf())
}

/// transformers' file loaded against `like` by key path under the layout
/// rule (`Load::transpose_linear`): the burn model of its weights.
fn load_with_the_rule(like: &BurnModule<BertForMaskedLM>) -> BurnModule<BertForMaskedLM> {
    hf_names()
        .transpose_linear(like)
        .open(model_file())
        .unwrap()
        .load_like(like)
        .unwrap()
        .0
}

/// transformers' logits on its input (`make_fixtures.py logits`).
struct Reference {
    input_ids: Vec<i64>,
    token_type_ids: Vec<i64>,
    shape: Vec<usize>,
    logits: Vec<f32>,
}

fn reference_logits() -> Reference {
    let j: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("bert_mlm_logits.json")).unwrap(),
    )
    .unwrap();
    let ints = |k: &str| -> Vec<i64> {
        j[k][0]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect()
    };
    Reference {
        input_ids: ints("input_ids"),
        token_type_ids: ints("token_type_ids"),
        shape: j["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as usize)
            .collect(),
        // Each an f32 written as the f64 it is: exact.
        logits: j["logits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap() as f32)
            .collect(),
    }
}

fn values(t: &pytree_std::BurnTensor) -> Vec<f32> {
    t.to_data().convert::<f32>().try_to_vec::<f32>().unwrap()
}

/// The leaf of `tree` named `name`.
fn leaf<'a>(tree: &'a BurnModule<BertForMaskedLM>, name: &str) -> &'a pytree_std::BurnTensor {
    pytree_std::paths::leaves_with_path(tree)
        .into_iter()
        .find(|(p, _)| p.keystr(pytree_std::paths::KeyStr::SIMPLE) == name)
        .unwrap_or_else(|| panic!("no leaf {name}"))
        .1
}

/// The f32 elements of tensor `name` of the safetensors file at `path`,
/// and its shape, as the reference reader (the `safetensors` crate) reads
/// them.
fn file_tensor(path: &Path, name: &str) -> (Vec<usize>, Vec<f32>) {
    let bytes = std::fs::read(path).unwrap();
    let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let t = st.tensor(name).unwrap();
    let v = t
        .data()
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    (t.shape().to_vec(), v)
}

/// `[r, c]` row-major as `[c, r]` row-major.
fn transposed(v: &[f32], r: usize, c: usize) -> Vec<f32> {
    (0..c)
        .flat_map(|j| (0..r).map(move |i| v[i * c + j]))
        .collect()
}

/// The tolerance on the logits: both are f32, computed in a different
/// order of operations (burn-flex's matmuls, softmax, erf and layer norm
/// against PyTorch's), about |logits| ≤ 0.2 here.
const TOLERANCE: f32 = 1e-5;

/// The issue's check: loaded by key path with the layout rule, the burn
/// model gives transformers' logits on the same input.
#[test]
fn a_transformers_bert_loads_into_burn_nn_and_gives_its_logits() {
    let like = template();
    let file = hf_names()
        .transpose_linear(&like)
        .open(model_file())
        .unwrap();
    let (tree, report) = file.load_like(&like).unwrap();
    // Strict: every leaf from the file (the two tied ones from the tensors
    // they are tied to), every tensor used.
    assert!(report.is_complete(), "{report:?}");
    assert_eq!(report.loaded.len(), 44);
    assert_eq!(like.linear_weights().len(), 2 * 6 + 2);
    // In place, the same tree.
    let mut into = template();
    assert!(file.load_into(&mut into).unwrap().is_complete());
    assert!(pytree_std::elements::tree_equal(
        &into,
        &tree,
        pytree_std::elements::Tolerance::EXACT
    ));

    // The rule, leaf by leaf: a Linear weight is the file's transposed
    // (the decoder's is the word embeddings', transposed); everything
    // else is the file's as it is.
    let path = model_file();
    let (shape, w) = file_tensor(&path, "bert.encoder.layer.0.intermediate.dense.weight");
    assert_eq!(shape, [16, 8]);
    let ours = leaf(&tree, "bert.encoder.layer.0.intermediate.dense.weight");
    assert_eq!(ours.shape(), [8, 16]);
    assert_eq!(values(ours), transposed(&w, 16, 8));
    let (_, q) = file_tensor(&path, "bert.encoder.layer.1.attention.self.query.weight");
    let ours = leaf(
        &tree,
        "bert.encoder.layer.1.attention.self_attn.query.weight",
    );
    assert_eq!(values(ours), transposed(&q, 8, 8));
    let (_, emb) = file_tensor(&path, WORD_EMBEDDINGS);
    assert_eq!(values(leaf(&tree, WORD_EMBEDDINGS)), emb);
    assert_eq!(leaf(&tree, DECODER_WEIGHT).shape(), [8, 32]);
    assert_eq!(values(leaf(&tree, DECODER_WEIGHT)), transposed(&emb, 32, 8));
    let (_, gamma) = file_tensor(&path, "bert.embeddings.LayerNorm.weight");
    assert_eq!(
        values(leaf(&tree, "bert.embeddings.layer_norm.gamma")),
        gamma
    );
    assert_eq!(
        values(leaf(&tree, DECODER_BIAS)),
        values(leaf(&tree, CLS_BIAS))
    );

    // The forward pass against transformers'.
    let reference = reference_logits();
    let model: BertForMaskedLM = tree.into_module().unwrap();
    let d = Device::default();
    let seq = reference.input_ids.len();
    let ids = |v: Vec<i64>| Tensor::<2, Int>::from_data(TensorData::new(v, [1, seq]), &d);
    let logits = model.forward(ids(reference.input_ids), ids(reference.token_type_ids));
    assert_eq!(logits.dims().to_vec(), reference.shape);
    let got = logits
        .into_data()
        .convert::<f32>()
        .try_to_vec::<f32>()
        .unwrap();
    let max_diff = got
        .iter()
        .zip(&reference.logits)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    let max_abs = reference.logits.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    println!(
        "burn-nn BERT vs transformers: {} logits, max |logit| {max_abs:e}, max |difference| {max_diff:e} (tolerance {TOLERANCE:e})",
        got.len()
    );
    assert!(max_diff <= TOLERANCE, "max |difference| {max_diff:e}");
    // Not trivially close: the logits differ from token to token.
    assert!(max_abs > 100.0 * TOLERANCE);
}

/// Without the rule, the non-square Linear weights are refused, each with
/// its path, what the template expects and what the file holds (the
/// square ones would load untransposed: the shape cannot tell them, so the
/// rule goes by name).
#[test]
fn without_the_rule_the_transposed_weights_are_refused_by_path() {
    let like = template();
    let err = hf_names()
        .open(model_file())
        .unwrap()
        .load_like(&like)
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("tree structures differ (5 mismatches found)"),
        "{text}"
    );
    assert!(
        text.contains(
            r#"at ["bert"]["encoder"]["layer"][0]["intermediate"]["dense"]["weight"]: tensor `bert.encoder.layer.0.intermediate.dense.weight`: expected f32[8,16], found f32[16,8]"#
        ),
        "{text}"
    );
    assert!(
        text.contains(
            r#"at ["cls"]["predictions"]["decoder"]["weight"]: tensor `bert.embeddings.word_embeddings.weight`: expected f32[8,32], found f32[32,8]"#
        ),
        "{text}"
    );
}

/// Strict both ways: a file already in burn's layout (written without the
/// rule) is an error under it, naming the path, the shape expected (the
/// transpose) and the one found: every non-square Linear weight is
/// listed. (A square one fits both layouts, so no shape check can catch
/// it: the rule is why the load may trust the name.) A name of the rule
/// that is no leaf is an error too.
#[test]
fn under_the_rule_a_file_in_burns_layout_is_refused_by_path() {
    let like = template();
    let tree = load_with_the_rule(&like);
    let burn_layout = Save::new().to_bytes(&tree).unwrap();
    let err = Load::new()
        .transpose_linear(&like)
        .from_bytes(burn_layout.clone())
        .unwrap()
        .load_like(&like)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"tree structures differ (5 mismatches found)
  at ["bert"]["encoder"]["layer"][0]["intermediate"]["dense"]["weight"]: tensor `bert.encoder.layer.0.intermediate.dense.weight`: expected f32[16,8] (the leaf's f32[8,16] transposed: Load::transpose), found f32[8,16]
  at ["bert"]["encoder"]["layer"][0]["output"]["dense"]["weight"]: tensor `bert.encoder.layer.0.output.dense.weight`: expected f32[8,16] (the leaf's f32[16,8] transposed: Load::transpose), found f32[16,8]
  at ["bert"]["encoder"]["layer"][1]["intermediate"]["dense"]["weight"]: tensor `bert.encoder.layer.1.intermediate.dense.weight`: expected f32[16,8] (the leaf's f32[8,16] transposed: Load::transpose), found f32[8,16]
  at ["bert"]["encoder"]["layer"][1]["output"]["dense"]["weight"]: tensor `bert.encoder.layer.1.output.dense.weight`: expected f32[8,16] (the leaf's f32[16,8] transposed: Load::transpose), found f32[16,8]
  at ["cls"]["predictions"]["decoder"]["weight"]: tensor `cls.predictions.decoder.weight`: expected f32[32,8] (the leaf's f32[8,32] transposed: Load::transpose), found f32[8,32]"#
    );
    // Without the rule, that file is the tree.
    let back = Load::new()
        .from_bytes(burn_layout)
        .unwrap()
        .load_like(&like)
        .unwrap()
        .0;
    assert!(pytree_std::elements::tree_equal(
        &back,
        &tree,
        pytree_std::elements::Tolerance::EXACT
    ));
    let err = Load::new()
        .transpose(["bert.pooler.dense.weight"])
        .open(model_file())
        .unwrap()
        .load_like(&like)
        .unwrap_err();
    assert!(
        err.to_string().contains(
            "Load::transpose names `bert.pooler.dense.weight`, which is no leaf of the tree"
        ),
        "{err}"
    );
}

/// Saved back with the rule reversed (`Save::transpose_linear`), the
/// renames back and transformers' ties, the burn model is transformers'
/// file: the same names, dtypes, shapes and bytes.
#[test]
fn saved_back_in_pytorch_layout_it_is_the_transformers_file() {
    let like = template();
    let tree = load_with_the_rule(&like);
    let bytes = Save::new()
        .renames(to_hf())
        .transpose_linear(&tree)
        .tie(DECODER_WEIGHT, WORD_EMBEDDINGS)
        .tie(DECODER_BIAS, CLS_BIAS)
        .to_bytes(&tree)
        .unwrap();
    let ours = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let theirs_bytes = std::fs::read(model_file()).unwrap();
    let theirs = safetensors::SafeTensors::deserialize(&theirs_bytes).unwrap();
    let mut names: Vec<String> = ours.names().into_iter().map(String::from).collect();
    let mut expected: Vec<String> = theirs.names().into_iter().map(String::from).collect();
    names.sort();
    expected.sort();
    assert_eq!(names, expected);
    for name in &names {
        let (a, b) = (ours.tensor(name).unwrap(), theirs.tensor(name).unwrap());
        assert_eq!(
            (a.dtype(), a.shape(), a.data()),
            (b.dtype(), b.shape(), b.data()),
            "{name}"
        );
    }
}
