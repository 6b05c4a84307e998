//! A typed model with an integer buffer, written the way transformers'
//! state dict reads: `Array2<f32>` / `Array1<f32>` weights and an
//! `Array2<i64>` `position_ids` buffer in one tree, with
//! `#[pytree(leaf_type = AnyArray)]` on the two structs that mix dtypes
//! and no `AnyArray` in the fields.
//!
//! Against real peers: the fixture `tests/fixtures/hf_typed/` is a tiny
//! `BertModel` saved by transformers 5.24 (`save_pretrained`, position_ids
//! in the file as transformers wrote it before 4.31) and the state after
//! three steps of `torch.optim.Adam`, made by `make_fixtures.py` there;
//! every file this test reads or writes is compared tensor by tensor with
//! the reference Rust implementation of the format (the `safetensors`
//! crate); `make_fixtures.py check` loads what this test wrote
//! (`PYTREE_HF_TYPED_OUT`) back into transformers' `BertModel` (not a CI
//! step: CI has no Python).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use pytree_optim::{adam, GradientTransformation};
use pytree_std::checkpoint::{self, Load, Save};
use pytree_std::elements::{tree_equal, Tolerance};
use pytree_std::ndarray::{array, Array1, Array2};
use pytree_std::{AnyArray, PyTree};

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Linear {
    weight: Array2<f32>,
    bias: Array1<f32>,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Embedding {
    weight: Array2<f32>,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct LayerNorm {
    weight: Array1<f32>,
    bias: Array1<f32>,
}

/// f32 tables and an i64 buffer: the struct that mixes dtypes.
#[derive(PyTree, Clone, Debug, PartialEq)]
#[pytree(leaf_type = AnyArray)]
struct Embeddings {
    word_embeddings: Embedding,
    position_embeddings: Embedding,
    token_type_embeddings: Embedding,
    #[pytree(rename = "LayerNorm")]
    layer_norm: LayerNorm,
    position_ids: Array2<i64>,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct SelfAttention {
    query: Linear,
    key: Linear,
    value: Linear,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct DenseNorm {
    dense: Linear,
    #[pytree(rename = "LayerNorm")]
    layer_norm: LayerNorm,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Attention {
    #[pytree(rename = "self")]
    self_attn: SelfAttention,
    output: DenseNorm,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Dense {
    dense: Linear,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Layer {
    attention: Attention,
    intermediate: Dense,
    output: DenseNorm,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Encoder {
    layer: Vec<Layer>,
}

/// transformers' `BertModel`, field for field: it holds `Embeddings`
/// (whose leaves are `AnyArray`s) beside f32-only structs, so it takes
/// the attribute too.
#[derive(PyTree, Clone, Debug, PartialEq)]
#[pytree(leaf_type = AnyArray)]
struct Bert {
    embeddings: Embeddings,
    encoder: Encoder,
    pooler: Dense,
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/hf_typed")
        .join(name)
}

/// A fresh directory for one test (`$PYTREE_HF_TYPED_OUT/<test>` when
/// set, so that `make_fixtures.py check` can read it), holding the
/// fixture's `config.json` so that `from_pretrained` can load it.
fn out_dir(test: &str) -> PathBuf {
    let d = match std::env::var_os("PYTREE_HF_TYPED_OUT") {
        Some(p) => PathBuf::from(p).join(test),
        None => std::env::temp_dir().join(format!("pytree-typed-{}-{test}", std::process::id())),
    };
    std::fs::create_dir_all(&d).unwrap();
    std::fs::copy(fixture("config.json"), d.join("config.json")).unwrap();
    d
}

fn bert() -> Bert {
    checkpoint::load(fixture("model.safetensors")).expect("the fixture loads by type")
}

/// The tensors of a file as the `safetensors` crate reads them: name to
/// (dtype, shape, bytes).
fn tensors(bytes: &[u8]) -> HashMap<String, (safetensors::Dtype, Vec<usize>, Vec<u8>)> {
    let file = safetensors::SafeTensors::deserialize(bytes).unwrap();
    file.tensors()
        .into_iter()
        .map(|(name, t)| (name, (t.dtype(), t.shape().to_vec(), t.data().to_vec())))
        .collect()
}

fn file_tensors(path: &Path) -> HashMap<String, (safetensors::Dtype, Vec<usize>, Vec<u8>)> {
    tensors(&std::fs::read(path).unwrap())
}

#[test]
fn a_transformers_bert_loads_by_type_into_typed_fields_and_saves_back_bit_for_bit() {
    let bert = bert();
    assert_eq!(bert.encoder.layer.len(), 2);
    assert_eq!(bert.embeddings.word_embeddings.weight.dim(), (16, 8));
    assert_eq!(bert.encoder.layer[1].output.dense.weight.dim(), (8, 16));
    let ids: Vec<i64> = (0..12).collect();
    assert_eq!(
        bert.embeddings.position_ids,
        Array2::from_shape_vec((1, 12), ids).unwrap()
    );
    // The typed fields hold the file's values (read with the reference
    // implementation).
    let want = file_tensors(&fixture("model.safetensors"));
    let (dtype, shape, data) = &want["encoder.layer.0.attention.self.query.weight"];
    assert_eq!(
        (*dtype, shape.as_slice()),
        (safetensors::Dtype::F32, &[8, 8][..])
    );
    let q = &bert.encoder.layer[0].attention.self_attn.query.weight;
    let first = f32::from_le_bytes(data[..4].try_into().unwrap());
    assert_eq!(q[[0, 0]], first);

    // Saved back: every tensor of transformers' file, same dtype (I64
    // position_ids), shape and bytes, and the format transformers needs.
    let dir = out_dir("saved");
    Save::new()
        .save(dir.join("model.safetensors"), &bert)
        .unwrap();
    let written = std::fs::read(dir.join("model.safetensors")).unwrap();
    assert_eq!(tensors(&written), want);
    let (_, meta) = safetensors::SafeTensors::read_metadata(&written).unwrap();
    assert_eq!(meta.metadata().as_ref().unwrap()["format"], "pt");

    // The two other load targets: a template and in place.
    let like = checkpoint::Load::new()
        .open(fixture("model.safetensors"))
        .unwrap()
        .load_like(&bert)
        .unwrap()
        .0;
    assert_eq!(like, bert);
    let mut zeroed = pytree_std::map(bert.clone(), |a| a.map_floats(|_| 0.0));
    pytree_std::for_each_mut(&mut zeroed.embeddings.position_ids, |mut ids| ids.fill(-1));
    let report = checkpoint::Load::new()
        .open(fixture("model.safetensors"))
        .unwrap()
        .load_into(&mut zeroed)
        .unwrap();
    assert!(report.is_complete());
    assert_eq!(zeroed, bert);
}

#[test]
fn the_float_only_map_leaves_the_buffer_bit_identical() {
    let bert = bert();
    let doubled = pytree_std::map(bert.clone(), |a| a.map_floats(|x| 2.0 * x));
    assert_eq!(
        doubled.embeddings.position_ids,
        bert.embeddings.position_ids
    );
    assert_eq!(
        doubled.pooler.dense.bias,
        bert.pooler.dense.bias.mapv(|x| 2.0 * x)
    );
    // In place, through the typed views of the leaves.
    let mut in_place = bert.clone();
    pytree_std::for_each_mut(&mut in_place, |mut a| {
        if let Some(mut w) = a.as_f32_mut() {
            w *= 2.0;
        }
    });
    assert_eq!(in_place, doubled);

    // Saved and read back with the reference implementation: every f32
    // tensor doubled exactly, position_ids the same bytes.
    let dir = out_dir("doubled");
    Save::new()
        .save(dir.join("model.safetensors"), &doubled)
        .unwrap();
    let written = file_tensors(&dir.join("model.safetensors"));
    let want = file_tensors(&fixture("model.safetensors"));
    assert_eq!(written.len(), want.len());
    for (name, (dtype, shape, data)) in &want {
        let (d, s, bytes) = &written[name];
        assert_eq!((d, s), (dtype, shape), "{name}");
        if *dtype == safetensors::Dtype::F32 {
            let twice: Vec<u8> = data
                .chunks_exact(4)
                .flat_map(|b| (2.0 * f32::from_le_bytes(b.try_into().unwrap())).to_le_bytes())
                .collect();
            assert_eq!(bytes, &twice, "{name}");
        } else {
            assert_eq!((*dtype, bytes), (safetensors::Dtype::I64, data), "{name}");
        }
    }
}

#[test]
fn adam_trains_the_floats_as_torch_does_and_leaves_the_buffer_alone() {
    let bert = bert();
    let opt = adam(1e-2);
    let mut params = bert.clone();
    let mut state = opt.init(&params).unwrap();
    for _ in 0..3 {
        // The gradient of 0.5 * sum(p^2): the parameters themselves.
        let mut grads = params.clone();
        opt.step(&mut params, &mut grads, &mut state).unwrap();
    }
    // torch.optim.Adam, the same three steps (f32 math there, f64 here).
    let torch: Bert = checkpoint::load(fixture("adam3.safetensors")).unwrap();
    assert!(tree_equal(&params, &torch, Tolerance::new(1e-5, 1e-7)));
    assert!(!tree_equal(&params, &bert, Tolerance::new(1e-5, 1e-7)));
    // The buffer: bit-identical, in the parameters and in the state.
    assert_eq!(params.embeddings.position_ids, bert.embeddings.position_ids);
    assert_eq!(torch.embeddings.position_ids, bert.embeddings.position_ids);
    assert!(state.0.mu.embeddings.position_ids.iter().all(|&x| x == 0));
    // The state is a Bert too: checkpointed and loaded back by type.
    let bytes = checkpoint::Save::new().to_bytes(&state).unwrap();
    let back: pytree_optim::AdamState<Bert> =
        Load::new().from_bytes(bytes).unwrap().load().unwrap().0;
    assert_eq!((back.0.mu, back.0.nu), (state.0.mu, state.0.nu));
}

#[test]
fn a_buffer_of_another_dtype_is_an_error_at_its_path() {
    // transformers' file with position_ids as I32, written by the
    // reference implementation.
    let bytes = std::fs::read(fixture("model.safetensors")).unwrap();
    let file = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let ids32: Vec<u8> = (0..12i32).flat_map(i32::to_le_bytes).collect();
    let mut views = Vec::new();
    for (name, t) in file.tensors() {
        let view = if name == "embeddings.position_ids" {
            safetensors::tensor::TensorView::new(safetensors::Dtype::I32, vec![1, 12], &ids32)
                .unwrap()
        } else {
            t
        };
        views.push((name, view));
    }
    let i32_file = safetensors::tensor::serialize(views, None).unwrap();
    let err = Load::new()
        .from_bytes(i32_file)
        .unwrap()
        .load::<Bert>()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .embeddings.position_ids: array type mismatch: expected an array of i64, found i32[1,12]"
    );
}

/// A generic struct with the attribute: the type parameter's leaves stand
/// as `AnyArray`s (the derive bounds `<W as Flatten<Std>>::Leaf:
/// LeafAs<Std, AnyArray>`), whatever its dtype.
#[derive(PyTree, Clone, Debug, PartialEq)]
#[pytree(leaf_type = AnyArray)]
struct Block<W> {
    w: W,
    ids: Array1<i64>,
}

#[test]
fn generic_fields_of_any_dtype_and_nested_structs() {
    let f = Block {
        w: array![[1.0f32, 2.0]],
        ids: array![3],
    };
    let d = Block {
        w: vec![array![1.0f64]],
        ids: array![4],
    };
    let both = (f.clone(), d.clone());
    let (leaves, def) = pytree_std::flatten(both.clone());
    let sigs: Vec<String> = leaves.iter().map(|l| l.signature().to_string()).collect();
    assert_eq!(sigs, ["f32[1,2]", "i64[1]", "f64[1]", "i64[1]"]);
    assert_eq!(
        def.to_string(),
        "(Block { w: *, ids: * }, Block { w: [*], ids: * })"
    );
    assert_eq!(
        pytree_std::unflatten::<(Block<Array2<f32>>, Block<Vec<Array1<f64>>>)>(&def, leaves)
            .unwrap(),
        both
    );
    // Rank errors keep their path too.
    let (mut leaves, def) = pytree_std::flatten(f.clone());
    leaves[0] = AnyArray::from(array![1.0f32]);
    let err = pytree_std::unflatten::<Block<Array2<f32>>>(&def, leaves).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .w: array rank mismatch: expected a 2-d array, found f32[1]"
    );
}

#[test]
#[should_panic(expected = "the function returned a leaf that the field cannot hold")]
fn an_infallible_map_that_changes_a_dtype_panics_naming_the_fallible_routes() {
    let b = Block {
        w: array![1.0f32],
        ids: array![1],
    };
    let _ = pytree_std::map(b, |_| AnyArray::from(array![1.0f64]));
}

#[test]
fn the_fallible_map_returns_the_dtype_error_at_its_path() {
    let b = Block {
        w: array![1.0f32],
        ids: array![1],
    };
    let err = pytree_std::walk::map_into::<_, Block<Array1<f32>>, _>(b, |_| {
        AnyArray::from(array![1.0f64])
    })
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .w: array type mismatch: expected an array of f32, found f64[1]"
    );
}

/// An enum with the attribute: each variant's typed fields stand as
/// `AnyArray`s, and the variant is checked in zips as for every enum.
#[derive(PyTree, Clone, Debug, PartialEq)]
#[pytree(leaf_type = AnyArray)]
enum Head {
    Tied {
        bias: Array1<f32>,
    },
    Own {
        weight: Array2<f32>,
        bias: Array1<f32>,
        mask: Array1<bool>,
    },
}

#[test]
fn enums_take_the_attribute_too() {
    let own = Head::Own {
        weight: array![[1.0, 2.0]],
        bias: array![0.5],
        mask: array![true, false],
    };
    let (leaves, def) = pytree_std::flatten(own.clone());
    let sigs: Vec<String> = leaves.iter().map(|l| l.signature().to_string()).collect();
    assert_eq!(sigs, ["f32[1,2]", "f32[1]", "bool[2]"]);
    assert_eq!(pytree_std::unflatten::<Head>(&def, leaves).unwrap(), own);
    let halved = pytree_std::map(own.clone(), |a| a.map_floats(|x| x / 2.0));
    assert_eq!(
        halved,
        Head::Own {
            weight: array![[0.5, 1.0]],
            bias: array![0.25],
            mask: array![true, false]
        }
    );
    let tied = Head::Tied { bias: array![1.0] };
    let err = pytree_std::walk::map_n(&own, [&tied], |a, [_]| a.to_owned()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at <root>: node mismatch: expected variant Head::Own, found variant Head::Tied"
    );
}
