//! Checkpoints (feature `safetensors`): round trips of ndarray, candle and
//! scalar trees by type, against a template and in place; every error
//! path (missing, unused and mismatched tensors listed together, dtypes,
//! shapes, ranks, names, metadata, truncated and malformed files) as a
//! value, never a panic; partial loading and prefix renames; a file
//! written by Python's `safetensors` (committed fixture) and files
//! exchanged with the reference Rust implementation (the `safetensors`
//! crate).

mod models;

use std::collections::BTreeMap;
use std::path::PathBuf;

use pytree_std::candle_core::{DType as CDType, Device, Tensor};
use pytree_std::checkpoint::{self, Checkpoint, Load, Save};
use pytree_std::half::f16;
use pytree_std::ndarray::{arr0, array, Array1, Array2, Array3, ArrayD, IxDyn};
use pytree_std::{ErrorKind, PyTree, Tree};

use models::arrays::{Linear, Mlp};

fn linear(i: usize, o: usize, seed: f32) -> Linear {
    Linear {
        w: Array2::from_shape_fn((i, o), |(r, c)| seed + r as f32 * 0.5 - c as f32 * 0.25),
        b: Array1::from_shape_fn(o, |k| seed - k as f32),
    }
}

fn mlp(sizes: &[usize]) -> Mlp {
    Mlp {
        layers: sizes
            .windows(2)
            .enumerate()
            .map(|(k, w)| linear(w[0], w[1], k as f32 + 1.0))
            .collect(),
        name: "mlp".into(),
    }
}

/// A fresh directory under the target's temp dir for one test.
fn dir(test: &str) -> PathBuf {
    pytree_tests::scratch_dir(&format!("ckpt-{test}"))
}

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/checkpoint/python_numpy.safetensors")
}

/// The file of `header` (JSON) and `data`.
fn file_of(header: &str, data: &[u8]) -> Vec<u8> {
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

// ---------------------------------------------------------------- round trips

#[test]
fn ndarray_mixed_ranks_round_trip_by_type_template_and_in_place() {
    #[derive(PyTree, Clone, Debug, PartialEq)]
    struct Mixed {
        scalar: pytree_std::ndarray::Array0<f64>,
        v: Array1<f64>,
        m: Array2<f64>,
        c: Array3<f64>,
        any: Vec<ArrayD<f64>>,
    }
    let t = Mixed {
        scalar: arr0(2.5),
        v: array![1.0, 2.0, 3.0],
        m: array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]],
        c: Array3::from_shape_fn((2, 3, 4), |(a, b, c)| (a * 100 + b * 10 + c) as f64),
        any: vec![
            ArrayD::zeros(IxDyn(&[0, 5])),
            ArrayD::from_elem(IxDyn(&[1, 1, 1, 2]), -1.0),
        ],
    };
    let d = dir("mixed");
    let path = d.join("m.safetensors");
    checkpoint::save(&path, &t).unwrap();
    assert_eq!(checkpoint::load::<Mixed>(&path).unwrap(), t);
    assert_eq!(
        checkpoint::Load::new()
            .open(&path)
            .unwrap()
            .load_like(&t)
            .unwrap()
            .0,
        t
    );
    let mut zeroed = pytree_std::map(t.clone(), |a| a.mapv(|_| 0.0));
    let report = checkpoint::Load::new()
        .open(&path)
        .unwrap()
        .load_into(&mut zeroed)
        .unwrap();
    assert_eq!(zeroed, t);
    assert_eq!(report.loaded, ["scalar", "v", "m", "c", "any.0", "any.1"]);
    let file = Load::new().open(&path).unwrap();
    let sigs: Vec<String> = file
        .tensors()
        .map(|t| format!("{}={}", t.name(), t.signature()))
        .collect();
    assert_eq!(
        sigs,
        [
            "scalar=f64[]",
            "v=f64[3]",
            "m=f64[3,2]",
            "c=f64[2,3,4]",
            "any.0=f64[0,5]",
            "any.1=f64[1,1,1,2]"
        ]
    );
    std::fs::remove_dir_all(d).ok();
}

#[test]
fn a_model_with_static_fields_round_trips_by_type_alone() {
    let m = mlp(&[64, 32, 10]);
    let bytes = checkpoint::Save::new().to_bytes(&m).unwrap();
    let file = Load::new().from_bytes(bytes).unwrap();
    assert_eq!(
        file.names().collect::<Vec<_>>(),
        ["layers.0.w", "layers.0.b", "layers.1.w", "layers.1.b"]
    );
    let back: Mlp = file.load().unwrap().0;
    assert_eq!(back, m);
    assert_eq!(
        back.name, "mlp",
        "the static field comes from the file's TreeDef"
    );
}

#[test]
fn element_types_round_trip() {
    fn check<A>(values: Vec<A>)
    where
        A: checkpoint::Element + std::fmt::Debug + PartialEq,
        ArrayD<A>: checkpoint::TensorLeaf,
    {
        let t = (ArrayD::from_shape_vec(IxDyn(&[values.len()]), values).unwrap(),);
        let file = Load::new()
            .from_bytes(checkpoint::Save::new().to_bytes(&t).unwrap())
            .unwrap();
        assert_eq!(file.load::<(ArrayD<A>,)>().unwrap().0, t);
        assert_eq!(file.load_like(&t).unwrap().0, t);
    }
    check(vec![true, false, true]);
    check(vec![0u8, 255]);
    check(vec![-128i8, 127]);
    check(vec![u16::MAX, 1]);
    check(vec![i16::MIN, 1]);
    check(vec![u32::MAX, 1]);
    check(vec![i32::MIN, 1]);
    check(vec![u64::MAX, 1]);
    check(vec![i64::MIN, 1]);
    check(vec![f32::MIN_POSITIVE, f32::INFINITY, -0.0]);
    check(vec![f64::MAX, f64::NEG_INFINITY]);
    check(vec![f16::from_f32(1.5), f16::MAX]);
    check(vec![pytree_std::half::bf16::from_f32(-2.0)]);
    // NaN survives bit for bit.
    let t = (ArrayD::from_elem(IxDyn(&[2]), f32::NAN),);
    let back: (ArrayD<f32>,) = Load::new()
        .from_bytes(checkpoint::Save::new().to_bytes(&t).unwrap())
        .unwrap()
        .load()
        .unwrap()
        .0;
    assert!(back.0.iter().all(|x| x.to_bits() == f32::NAN.to_bits()));
}

#[test]
fn scalars_are_zero_d_tensors() {
    #[derive(PyTree, Debug, PartialEq, Clone)]
    struct Hyper {
        lr: f64,
        beta: (f64, f64),
        by_name: BTreeMap<String, f64>,
    }
    let h = Hyper {
        lr: 1e-3,
        beta: (0.9, 0.999),
        by_name: BTreeMap::from([("wd".into(), 0.01)]),
    };
    let file = Load::new()
        .from_bytes(checkpoint::Save::new().to_bytes(&h).unwrap())
        .unwrap();
    assert_eq!(
        file.names().collect::<Vec<_>>(),
        ["lr", "beta.0", "beta.1", "by_name.wd"]
    );
    assert!(file.tensors().all(|t| t.shape().is_empty()));
    assert_eq!(file.load::<Hyper>().unwrap().0, h);
    // A scalar read from a tensor that is not 0-d is an error at its path.
    let v = Load::new()
        .from_bytes(
            checkpoint::Save::new()
                .to_bytes(&(ArrayD::<f64>::zeros(IxDyn(&[2])),))
                .unwrap(),
        )
        .unwrap();
    let err = v.load::<(f64,)>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "at [0]: tensor `0`: expected a 0-d tensor (a scalar), found f64[2]"
    );
}

#[test]
fn candle_tensors_of_several_dtypes_round_trip() {
    let dev = Device::Cpu;
    let t: BTreeMap<String, Tensor> = BTreeMap::from([
        (
            "w".into(),
            Tensor::new(&[[1.0f32, 2.0], [3.0, 4.0]], &dev).unwrap(),
        ),
        (
            "h".into(),
            Tensor::new(&[1.5f32, -2.0], &dev)
                .unwrap()
                .to_dtype(CDType::BF16)
                .unwrap(),
        ),
        (
            "f".into(),
            Tensor::new(&[0.25f32], &dev)
                .unwrap()
                .to_dtype(CDType::F16)
                .unwrap(),
        ),
        ("ids".into(), Tensor::new(&[3i64, 4, 5], &dev).unwrap()),
        ("u".into(), Tensor::new(&[7u8], &dev).unwrap()),
        ("d".into(), Tensor::new(2.5f64, &dev).unwrap()),
        // A transposed (non-contiguous) tensor is stored in C order.
        (
            "t".into(),
            Tensor::new(&[[1u32, 2, 3], [4, 5, 6]], &dev)
                .unwrap()
                .t()
                .unwrap(),
        ),
    ]);
    let file = Load::new()
        .from_bytes(checkpoint::Save::new().to_bytes(&t).unwrap())
        .unwrap();
    let by_type: BTreeMap<String, Tensor> = file.load().unwrap().0;
    let like = file.load_like(&t).unwrap().0;
    let values = |t: &Tensor| {
        let t = t.to_dtype(CDType::F64).unwrap();
        t.flatten_all().unwrap().to_vec1::<f64>().unwrap()
    };
    for back in [&by_type, &like] {
        for (k, v) in &t {
            assert_eq!(back[k].dtype(), v.dtype(), "{k}");
            assert_eq!(back[k].dims(), v.dims(), "{k}");
            assert_eq!(values(v), values(&back[k]), "{k}");
        }
    }
    assert_eq!(
        by_type["t"].to_vec2::<u32>().unwrap(),
        [[1, 4], [2, 5], [3, 6]]
    );
    // In place: each tensor is replaced by the file's, on the leaf's device.
    let mut zero = pytree_std::map(t.clone(), |x| x.zeros_like().unwrap());
    checkpoint::Load::new()
        .from_bytes(checkpoint::Save::new().to_bytes(&t).unwrap())
        .unwrap()
        .load_into(&mut zero)
        .unwrap();
    assert_eq!(
        zero["w"].to_vec2::<f32>().unwrap(),
        [[1.0, 2.0], [3.0, 4.0]]
    );
    // A template of another dtype or shape: every difference listed.
    let mut other = t.clone();
    other.insert(
        "w".into(),
        Tensor::zeros((2, 2), CDType::F64, &dev).unwrap(),
    );
    other.insert("ids".into(), Tensor::zeros(2, CDType::I64, &dev).unwrap());
    let err = file.load_like(&other).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree structures differ (2 mismatches found)\n  \
         at [\"ids\"]: tensor `ids`: expected i64[2], found i64[3]\n  \
         at [\"w\"]: tensor `w`: expected f64[2,2], found f32[2,2]"
    );
}

#[test]
fn candle_dtypes_the_format_has_but_candle_lacks_are_errors_at_their_path() {
    let file = Load::new().open(fixture()).unwrap();
    // `mask` is BOOL, which candle has no dtype for.
    let err = Load::new()
        .allow_unused()
        .open(fixture())
        .unwrap()
        .load_map::<Tensor>()
        .unwrap_err();
    pytree_tests::assert_mentions(
        &err,
        "at [\"mask\"]: tensor `mask` (bool[3]): candle has no dtype bool",
    );
    let ok: Vec<String> = file
        .tensors()
        .filter(|t| t.name() != "mask")
        .map(|t| t.name().to_string())
        .collect();
    assert_eq!(ok.len(), 8);
}

#[test]
fn a_non_contiguous_array_is_stored_in_c_order() {
    let a = array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]];
    let t = (a.t().to_owned(), a.t().as_standard_layout().to_owned());
    let file = Load::new()
        .from_bytes(checkpoint::Save::new().to_bytes(&t).unwrap())
        .unwrap();
    let first = file.tensor("0").unwrap();
    let values: Vec<f32> = first
        .data_in_memory()
        .unwrap()
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(values, [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    assert_eq!(
        file.tensor("0").unwrap().data_in_memory(),
        file.tensor("1").unwrap().data_in_memory()
    );
    // Loading into a transposed view writes through its strides.
    let mut target = (
        Array2::<f32>::zeros((2, 3)).reversed_axes(),
        Array2::<f32>::zeros((3, 2)),
    );
    file.load_into(&mut target).unwrap();
    assert_eq!(target.0, a.t());
}

#[test]
fn a_dynamic_tree_round_trips() {
    let t: Tree<ArrayD<f32>> = pytree_std::tree! {
        "encoder" => { "w" => ArrayD::from_elem(IxDyn(&[2, 2]), 1.0f32) },
        "head" => [ArrayD::from_elem(IxDyn(&[3]), 2.0f32)],
    };
    let file = Load::new()
        .from_bytes(checkpoint::Save::new().to_bytes(&t).unwrap())
        .unwrap();
    assert_eq!(file.names().collect::<Vec<_>>(), ["encoder.w", "head.0"]);
    assert_eq!(file.load::<Tree<ArrayD<f32>>>().unwrap().0, t);
    assert_eq!(file.load_like(&t).unwrap().0, t);
}

// ---------------------------------------------------------------- errors

#[test]
fn missing_unused_and_mismatched_tensors_are_listed_together() {
    let saved = mlp(&[4, 3, 2]);
    let file = Load::new()
        .from_bytes(Save::new().to_bytes(&saved).unwrap())
        .unwrap();
    // Layer 0 has another shape, layer 1 another dtype-compatible shape
    // for b only, layer 2 is not in the file; the file's layer 1.w is fine.
    let mut want = mlp(&[4, 5, 2, 1]);
    want.layers[1] = linear(3, 2, 0.0);
    want.layers[1].b = Array1::zeros(7);
    let before = want.clone();
    let err = file.load_into(&mut want.clone()).unwrap_err();
    let ErrorKind::Mismatches(all) = err.kind() else {
        panic!("{err}")
    };
    let paths: Vec<String> = all.iter().map(|e| e.path().to_string()).collect();
    assert_eq!(
        paths,
        [
            ".layers[0].w",
            ".layers[0].b",
            ".layers[1].b",
            ".layers[2].w",
            ".layers[2].b"
        ]
    );
    assert_eq!(
        err.to_string(),
        "tree structures differ (5 mismatches found)
  at .layers[0].w: tensor `layers.0.w`: expected f32[4,5], found f32[4,3]
  at .layers[0].b: tensor `layers.0.b`: expected f32[5], found f32[3]
  at .layers[1].b: tensor `layers.1.b`: expected f32[7], found f32[2]
  at .layers[2].w: tensor `layers.2.w`: expected f32[2,1], found nothing in the file
  at .layers[2].b: tensor `layers.2.b`: expected f32[1], found nothing in the file"
    );
    // The same through load_like; and nothing changed in place.
    assert_eq!(file.load_like(&want).unwrap_err(), err);
    let mut target = want.clone();
    assert!(file.load_into(&mut target).is_err());
    assert_eq!(target, before);

    // Unused tensors of the file are listed too (at the root: they have
    // no place in the tree).
    let small = mlp(&[4, 3]);
    let err = file.load_like(&small).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree structures differ (2 mismatches found)
  at <root>: tensor `layers.1.w` (f32[3,2]) of the file is not a leaf of the tree
  at <root>: tensor `layers.1.b` (f32[2]) of the file is not a leaf of the tree"
    );
}

#[test]
fn wrong_dtypes_are_errors_by_type_and_by_template() {
    let file = Load::new()
        .from_bytes(checkpoint::Save::new().to_bytes(&mlp(&[2, 2])).unwrap())
        .unwrap();
    #[derive(PyTree, Debug)]
    struct Linear64 {
        w: Array2<f64>,
        b: Array1<f64>,
    }
    let err = file.load::<(Vec<Linear64>,)>().unwrap_err();
    // The TreeDef is an Mlp: the names it gives are checked first.
    pytree_tests::assert_mentions(&err, "expected a f64 tensor, found f32[2,2]");
    let like = Linear64 {
        w: Array2::zeros((2, 2)),
        b: Array1::zeros(2),
    };
    let file2 = Load::new()
        .rename_prefix("layers.0.", "")
        .from_bytes(checkpoint::Save::new().to_bytes(&mlp(&[2, 2])).unwrap())
        .unwrap();
    let err = file2.load_like(&like).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree structures differ (2 mismatches found)
  at .w: tensor `layers.0.w`: expected f64[2,2], found f32[2,2]
  at .b: tensor `layers.0.b`: expected f64[2], found f32[2]"
    );
}

#[test]
fn a_rank_that_is_not_the_fields_is_an_error_at_its_path() {
    // Saved as `Vec<ArrayD>` of ranks 1 and 2, read as a struct... via
    // load_like of another rank, and by type where the TreeDef's structure
    // matches but the rank does not.
    let t = (
        ArrayD::<f32>::zeros(IxDyn(&[3])),
        ArrayD::<f32>::zeros(IxDyn(&[2, 2])),
    );
    let file = Load::new()
        .from_bytes(checkpoint::Save::new().to_bytes(&t).unwrap())
        .unwrap();
    let err = file.load::<(Array1<f32>, Array1<f32>)>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "at [1]: array rank mismatch: expected a 1-d array, found f32[2,2]"
    );
    let ok = file.load::<(Array1<f32>, Array2<f32>)>().unwrap().0;
    assert_eq!(ok.1.shape(), [2, 2]);
}

#[test]
fn leaves_that_cannot_be_named_are_errors_naming_their_paths() {
    // Two leaves with one name.
    let mut clash: BTreeMap<String, Tree<f32>> = BTreeMap::new();
    clash.insert("a.b".into(), Tree::leaf(1.0));
    clash.insert("a".into(), pytree_std::tree! { "b" => 2.0 });
    let err = checkpoint::Save::new().to_bytes(&clash).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at [\"a.b\"]: tensor name `a.b` is also the name of the leaf at [\"a\"][\"b\"]"
    );
    // A leaf at the root.
    let err = checkpoint::Save::new().to_bytes(&1.0f32).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("at <root>: the leaf has no name"),
        "{err}"
    );
    // ... which a prefix names.
    let bytes = Save::new().prefix("x").to_bytes(&1.0f32).unwrap();
    assert_eq!(
        Load::new()
            .from_bytes(bytes)
            .unwrap()
            .names()
            .collect::<Vec<_>>(),
        ["x"]
    );
    // An empty key, and the reserved name, both listed.
    let odd = BTreeMap::from([(String::new(), 1.0f32), ("__metadata__".into(), 2.0)]);
    let err = checkpoint::Save::new().to_bytes(&odd).unwrap_err();
    let ErrorKind::Mismatches(all) = err.kind() else {
        panic!("{err}")
    };
    assert_eq!(all.len(), 2);
    assert!(
        all[1].to_string().contains("`__metadata__` is reserved"),
        "{}",
        all[1]
    );
    // A flat state dict keeps its dotted names.
    let sd = BTreeMap::from([("enc.0.w".to_string(), 1.0f32)]);
    assert_eq!(
        Load::new()
            .from_bytes(checkpoint::Save::new().to_bytes(&sd).unwrap())
            .unwrap()
            .load::<BTreeMap<String, f32>>()
            .unwrap()
            .0,
        sd
    );
}

#[test]
fn reserved_metadata_keys_are_refused() {
    let err = Save::new()
        .metadata("pytree.prefix", "x")
        .to_bytes(&(1.0f32,))
        .unwrap_err();
    assert!(err.to_string().contains("reserved for this crate"), "{err}");
}

#[test]
fn a_static_field_serde_cannot_write_leaves_the_treedef_out() {
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    enum Act {
        Relu,
    }
    #[derive(PyTree, Clone, Debug, PartialEq)]
    struct M {
        w: Array1<f32>,
        #[pytree(static)]
        act: Act,
    }
    let m = M {
        w: array![1.0, 2.0],
        act: Act::Relu,
    };
    let file = Load::new()
        .from_bytes(checkpoint::Save::new().to_bytes(&m).unwrap())
        .unwrap();
    assert!(file.treedef().unwrap().is_none());
    assert!(file.metadata()[checkpoint::TREEDEF_ERROR_KEY].contains("Act"));
    let err = file.load::<M>().unwrap_err();
    pytree_tests::assert_mentions(&err, "the file holds no TreeDef");
    assert!(err.to_string().contains("load_like or load_into"), "{err}");
    assert_eq!(file.load_like(&m).unwrap().0, m);
    assert!(Save::new().require_treedef().to_bytes(&m).is_err());
}

#[test]
fn bad_metadata_is_an_error() {
    let good = checkpoint::Save::new().to_bytes(&(1.0f32, 2.0f32)).unwrap();
    let header_of = |bytes: &[u8]| {
        let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
        String::from_utf8(bytes[8..8 + n].to_vec()).unwrap()
    };
    let data = &good[good.len() - 8..];
    let with_treedef = |doc: &str| {
        let h = format!(
            r#"{{"__metadata__":{{"pytree.treedef":{}}},"0":{{"dtype":"F32","shape":[],"data_offsets":[0,4]}},"1":{{"dtype":"F32","shape":[],"data_offsets":[4,8]}}}}"#,
            serde_json::to_string(doc).unwrap()
        );
        Load::new().from_bytes(file_of(&h, data)).unwrap()
    };
    assert!(header_of(&good).contains("pytree.treedef"));
    let pair = |doc: &str| with_treedef(doc).load::<(f32, f32)>().map(drop);
    let seq = |doc: &str| with_treedef(doc).load::<Vec<f32>>().map(drop);
    // Deep paths whose names would be longer than the file's names.
    let deep = format!(
        r#"{{"schemas":[],"nodes":[{}{{"tuple":2}},{{"leaves":2}}]}}"#,
        r#"{"seq":1},"#.repeat(50)
    );
    let cases = [
        // Not JSON.
        (pair("{nope"), "metadata `pytree.treedef` is not a TreeDef"),
        // A TreeDef of another structure: unflatten says where.
        (
            pair(r#"{"schemas":[],"nodes":[{"seq":2},{"leaves":2}]}"#),
            "node mismatch",
        ),
        // More leaves than the file has tensors.
        (
            seq(r#"{"schemas":[],"nodes":[{"seq":3},{"leaves":3}]}"#),
            "has 3 leaves, the file holds 2 tensors",
        ),
        // A bomb: 10^18 leaves, past the TreeDef reader's bound (2^32).
        (
            seq(
                r#"{"schemas":[],"nodes":[{"seq":1000000000000000000},{"leaves":1000000000000000000}]}"#,
            ),
            "is not a TreeDef: TreeDef record 1: more than 4294967296 leaves",
        ),
        // Within that bound, 4 * 10^9 leaves against 2 tensors: the
        // checkpoint's own count check, before anything is allocated per
        // leaf.
        (
            seq(r#"{"schemas":[],"nodes":[{"seq":4000000000},{"leaves":4000000000}]}"#),
            "has 4000000000 leaves, the file holds 2 tensors",
        ),
        (
            with_treedef(&deep).load::<Tree<f32>>().map(drop),
            "does not describe this file",
        ),
    ];
    for (result, want) in cases {
        let err = result.unwrap_err().to_string();
        assert!(err.contains(want), "{err}");
    }
    // Metadata values must be strings.
    let h = r#"{"__metadata__":{"a":1},"0":{"dtype":"F32","shape":[],"data_offsets":[0,4]}}"#;
    let err = Load::new().from_bytes(file_of(h, &[0; 4])).unwrap_err();
    pytree_tests::assert_mentions(
        &err,
        "`__metadata__` value of `a` is not a string: a number",
    );
}

/// Every way a header or its data can be wrong gives an error naming it.
#[test]
fn malformed_files_are_errors() {
    let t = |header: &str, data: &[u8]| {
        Load::new()
            .from_bytes(file_of(header, data))
            .unwrap_err()
            .to_string()
    };
    let f32_at =
        |a: usize, b: usize| format!(r#"{{"dtype":"F32","shape":[1],"data_offsets":[{a},{b}]}}"#);
    let cases: Vec<(String, Vec<u8>, &str)> = vec![
        (format!(r#"{{"x":{},"x":{}}}"#, f32_at(0, 4), f32_at(4, 8)), vec![0; 8], "duplicate tensor name `x`"),
        (r#"{"x":{"dtype":"Q8","shape":[1],"data_offsets":[0,1]}}"#.into(), vec![0], "not a safetensors dtype"),
        (format!(r#"{{"x":{},"y":{}}}"#, f32_at(0, 4), f32_at(2, 6)), vec![0; 8], "overlaps"),
        (format!(r#"{{"x":{},"y":{}}}"#, f32_at(0, 4), f32_at(8, 12)), vec![0; 12], "unused"),
        (format!(r#"{{"x":{}}}"#, f32_at(0, 4)), vec![0; 6], "2 bytes after the last tensor"),
        (format!(r#"{{"x":{}}}"#, f32_at(0, 4)), vec![0; 2], "truncated"),
        (format!(r#"{{"x":{}}}"#, f32_at(0, 8)), vec![0; 8], "hold 8 bytes, but F32 [1] takes 4"),
        (format!(r#"{{"x":{}}}"#, f32_at(4, 0)), vec![0; 4], "offsets [4, 0]"),
        (r#"{"x":{"dtype":"F32","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,4]}}"#.into(), vec![0; 4], "more elements than fit"),
        (r#"{"x":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}}"#.into(), vec![0; 2], "ends inside a byte"),
        (r#"{"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}"#.into(), vec![0; 4], "tensor `x`"),
        (r#"{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,18446744073709551615]}}"#.into(), vec![0; 4], "hold"),
        (r#"{"x":{"dtype":"F32","shape":[1]}}"#.into(), vec![], "missing field `data_offsets`"),
        (r#"[1, 2]"#.into(), vec![], "does not start with '{'"),
        (r#"{"x": 1}"#.into(), vec![], "tensor `x`"),
        (r#"{"x":{"#.into(), vec![], "header"),
        (format!(r#"{{"x":{}}} junk"#, f32_at(0, 4)), vec![0; 4], "trailing characters"),
        (r#"{"__metadata__":{},"__metadata__":{}}"#.into(), vec![], "appears twice"),
        (r#"{"__metadata__":{"a":"1","a":"2"}}"#.into(), vec![], "key `a` appears twice"),
    ];
    for (header, data, want) in cases {
        let msg = t(&header, &data);
        assert!(msg.contains(want), "{header}: {msg}");
        assert!(
            msg.starts_with("at <root>: safetensors file <bytes>: "),
            "{msg}"
        );
    }
    // Not UTF-8.
    let mut bad = file_of("{\"x\":1}", &[]);
    bad[9] = 0xff;
    // A header length over the limit, and the length itself lying.
    let mut huge = u64::MAX.to_le_bytes().to_vec();
    huge.extend_from_slice(b"{}");
    let mut lying = 1000u64.to_le_bytes().to_vec();
    lying.extend_from_slice(b"{}");
    for (bytes, want) in [
        (bad, "not UTF-8"),
        (huge, "over the limit of 100000000"),
        (lying, "only 2 follow (truncated)"),
    ] {
        let err = Load::new().from_bytes(bytes).unwrap_err().to_string();
        assert!(err.contains(want), "{err}");
    }
    // A bool that is not 0 or 1 is an error when read, not UB.
    let f = Load::new()
        .from_bytes(file_of(
            r#"{"m":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}}"#,
            &[1, 2],
        ))
        .unwrap();
    let err = f.load_map::<ArrayD<bool>>().unwrap_err();
    assert!(err.to_string().contains("a bool must be 0 or 1"), "{err}");
    // An empty file and a file that is only the length.
    assert!(Load::new()
        .from_bytes(vec![])
        .unwrap_err()
        .to_string()
        .contains("0 bytes"));
    assert!(Load::new()
        .from_bytes(vec![0; 8])
        .unwrap_err()
        .to_string()
        .contains("does not start with"));
}

#[test]
fn every_truncation_of_a_file_is_an_error() {
    let bytes = checkpoint::Save::new().to_bytes(&mlp(&[3, 2])).unwrap();
    for len in 0..bytes.len() {
        let r = Load::new().from_bytes(bytes[..len].to_vec());
        assert!(
            r.is_err(),
            "a file cut at {len} of {} bytes was read",
            bytes.len()
        );
    }
    assert!(Load::new().from_bytes(bytes).is_ok());
}

/// Flipped bytes anywhere in a file: an error or a value, never a panic.
#[test]
fn corrupted_files_never_panic() {
    let m = mlp(&[3, 2, 2]);
    let bytes = checkpoint::Save::new().to_bytes(&m).unwrap();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut read = 0;
    for _ in 0..3000 {
        let mut b = bytes.clone();
        for _ in 0..=(next() % 3) {
            let i = (next() as usize) % b.len();
            b[i] = next() as u8;
        }
        if let Ok(file) = Load::new().from_bytes(b) {
            read += 1;
            let _ = file.load::<Mlp>();
            let _ = file.load_like(&m);
            let _ = file.load_into(&mut m.clone());
            let _ = file.load_map::<ArrayD<f32>>();
        }
    }
    assert!(read > 0, "some corruptions (in the data) still read");
}

/// A `bool` byte other than 0 or 1 in a later tensor: `load_into` fails
/// before it has written any leaf (it used to have written the tensors
/// before it; found by the `checkpoint_doc` fuzz target).
#[test]
fn a_failed_load_into_of_bools_changed_nothing() {
    let masks = vec![ArrayD::from_elem(IxDyn(&[2]), true); 2];
    let mut bytes = checkpoint::Save::new().to_bytes(&masks).unwrap();
    *bytes.last_mut().unwrap() = 2; // in the second tensor
    let file = Load::new().from_bytes(bytes).unwrap();
    let zeros = vec![ArrayD::from_elem(IxDyn(&[2]), false); 2];
    let mut tree = zeros.clone();
    let err = file.load_into(&mut tree).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at [1]: the tensor's 2 bytes are not a whole number of bool values (a bool must be 0 or 1)"
    );
    assert_eq!(tree, zeros, "nothing changed");
    let mut bytes = checkpoint::Save::new().to_bytes(&(true, true)).unwrap();
    *bytes.last_mut().unwrap() = 7;
    let mut scalars = (false, false);
    let file = Load::new().from_bytes(bytes).unwrap();
    assert!(file.load_into(&mut scalars).is_err());
    assert_eq!(scalars, (false, false), "nothing changed");
}

#[test]
fn a_missing_file_and_a_directory_are_errors() {
    let d = dir("missing");
    let err = checkpoint::load::<(f32,)>(d.join("none.safetensors")).unwrap_err();
    assert!(err.to_string().contains("cannot open"), "{err}");
    let err = checkpoint::save(d.join("no/such/dir/x.safetensors"), &(1.0f32,)).unwrap_err();
    pytree_tests::assert_mentions(&err, "cannot create the temporary file");
    std::fs::remove_dir_all(d).ok();
}

// ---------------------------------------------------------------- partial loading

#[test]
fn partial_loading_keeps_what_the_file_lacks_and_skips_what_the_tree_lacks() {
    let base = mlp(&[4, 3, 2]);
    let d = dir("partial");
    let path = d.join("base.safetensors");
    Save::new()
        .prefix("model.")
        .metadata("epoch", "7")
        .save(&path, &base)
        .unwrap();

    // A deeper model: layers 0 and 1 from the file, layer 2 as it was.
    let mut deeper = mlp(&[4, 3, 2, 5]);
    deeper.layers[0] = linear(4, 3, -9.0);
    let third = deeper.layers[2].clone();
    let report = Load::new()
        .rename_prefix("model.", "")
        .allow_missing()
        .open(&path)
        .unwrap()
        .load_into(&mut deeper)
        .unwrap();
    assert_eq!(deeper.layers[..2], base.layers[..]);
    assert_eq!(deeper.layers[2], third);
    assert_eq!(
        report.loaded,
        ["layers.0.w", "layers.0.b", "layers.1.w", "layers.1.b"]
    );
    assert_eq!(report.missing, ["layers.2.w", "layers.2.b"]);
    assert!(report.unused.is_empty());

    // load_like copies the template's leaves for the missing ones.
    let like = mlp(&[4, 3, 2, 5]);
    let got = Load::new()
        .rename_prefix("model.", "")
        .allow_missing()
        .open(&path)
        .unwrap()
        .load_like(&like)
        .unwrap()
        .0;
    assert_eq!(
        (&got.layers[..2], &got.layers[2]),
        (&base.layers[..], &like.layers[2])
    );

    // A shallower model: the file's layer 1 is unused.
    let mut shallow = mlp(&[4, 3]);
    let report = Load::new()
        .rename_prefix("model.", "")
        .allow_unused()
        .open(&path)
        .unwrap()
        .load_into(&mut shallow)
        .unwrap();
    assert_eq!(shallow.layers[0], base.layers[0]);
    assert_eq!(report.unused, ["model.layers.1.w", "model.layers.1.b"]);

    // Without the rename, nothing matches: every name is listed.
    let err = Load::new()
        .open(&path)
        .and_then(|f| f.load_into(&mut mlp(&[4, 3])))
        .unwrap_err();
    let ErrorKind::Mismatches(all) = err.kind() else {
        panic!("{err}")
    };
    assert_eq!(all.len(), 6);

    // Loading by type strips the prefix the file was saved with.
    assert_eq!(checkpoint::load::<Mlp>(&path).unwrap(), base);
    assert_eq!(Load::new().open(&path).unwrap().metadata()["epoch"], "7");
    std::fs::remove_dir_all(d).ok();
}

#[test]
fn renames_that_collide_are_errors() {
    let t = BTreeMap::from([("a.x".to_string(), 1.0f32), ("b.x".to_string(), 2.0)]);
    let file = Load::new()
        .rename_prefix("a.", "")
        .rename_prefix("b.", "")
        .from_bytes(checkpoint::Save::new().to_bytes(&t).unwrap())
        .unwrap();
    let err = file
        .load_like(&BTreeMap::from([("x".to_string(), 0.0f32)]))
        .unwrap_err();
    pytree_tests::assert_mentions(
        &err,
        "tensors `a.x` and `b.x` of the file are both named `x` after renaming",
    );
}

#[test]
fn a_file_being_read_is_not_changed_by_saving_over_it() {
    let d = dir("overwrite");
    let path = d.join("c.safetensors");
    checkpoint::save(&path, &(vec![1.0f32; 1000],)).unwrap();
    let open = Load::new().open(&path).unwrap();
    checkpoint::save(&path, &(vec![2.0f32; 10],)).unwrap();
    // The old map still reads the old file; the path holds the new one.
    assert_eq!(open.len(), 1000);
    assert_eq!(open.load::<(Vec<f32>,)>().unwrap().0 .0[999], 1.0);
    assert_eq!(
        checkpoint::load::<(Vec<f32>,)>(&path).unwrap().0,
        vec![2.0; 10]
    );
    // No temporary file is left behind.
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
    std::fs::remove_dir_all(d).ok();
}

// ---------------------------------------------------------------- interop

#[test]
fn the_file_python_wrote_loads() {
    let file = Load::new().open(fixture()).unwrap();
    assert_eq!(file.metadata()["format"], "np");
    assert!(file.treedef().unwrap().is_none());
    // The MLP by template, its `model.` prefix renamed away, other
    // tensors skipped.
    let like = Mlp {
        layers: vec![linear(2, 3, 0.0), linear(3, 2, 0.0)],
        name: "from python".into(),
    };
    let m = Load::new()
        .rename_prefix("model.", "")
        .allow_unused()
        .open(fixture())
        .unwrap()
        .load_like(&like)
        .unwrap()
        .0;
    assert_eq!(
        m.layers[0].w,
        Array2::from_shape_fn((2, 3), |(r, c)| (r * 3 + c) as f32 / 4.0)
    );
    assert_eq!(m.layers[0].b, array![0.5, -1.0, 2.0]);
    assert_eq!(
        m.layers[1].w,
        Array2::from_shape_fn((3, 2), |(r, c)| (r * 2 + c) as f32 - 2.5)
    );
    assert_eq!(m.layers[1].b, array![1.0, 2.0]);
    assert_eq!(m.name, "from python");
    // The other dtypes, each as its own tree.
    #[derive(PyTree, Debug, PartialEq)]
    struct Step {
        step: i64,
    }
    let f = Load::new().allow_unused().open(fixture()).unwrap();
    assert_eq!(f.load_like(&Step { step: 0 }).unwrap().0, Step { step: 7 });
    let mask = f
        .load_like(&BTreeMap::from([(
            "mask".to_string(),
            ArrayD::<bool>::from_elem(IxDyn(&[3]), false),
        )]))
        .unwrap()
        .0;
    assert_eq!(mask["mask"].as_slice().unwrap(), [true, false, true]);
    let half = f
        .load_like(&BTreeMap::from([(
            "half".to_string(),
            Array1::<f16>::zeros(2),
        )]))
        .unwrap()
        .0;
    assert_eq!(
        half["half"],
        array![f16::from_f32(1.5), f16::from_f32(-2.0)]
    );
    let cube = f
        .load_like(&BTreeMap::from([(
            "cube".to_string(),
            Array3::<f64>::zeros((2, 3, 4)),
        )]))
        .unwrap()
        .0;
    assert_eq!(
        cube["cube"],
        Array3::from_shape_fn((2, 3, 4), |(a, b, c)| (a * 12 + b * 4 + c) as f64)
    );
    let bytes = f.load_map::<Tensor>();
    assert!(bytes.is_err(), "mask is BOOL, which candle lacks");
    // Every f32 tensor as a flat state dict.
    let sd = Load::new()
        .rename_prefix("model.", "")
        .open(fixture())
        .unwrap();
    let f32s: Vec<String> = sd
        .tensors()
        .filter(|t| t.dtype() == pytree_std::DType::F32)
        .map(|t| t.name().to_string())
        .collect();
    assert_eq!(f32s.len(), 4);
}

/// Writes the file `tests/fixtures/checkpoint/check_in_python.py` checks
/// (to `$PYTREE_CHECKPOINT_OUT` when set, so the script can be pointed at
/// it), and checks it here the way that script does, through the
/// reference Rust implementation.
#[test]
fn a_file_this_library_writes_is_read_by_the_reference_implementation() {
    let m = mlp(&[3, 2]);
    let path = match std::env::var_os("PYTREE_CHECKPOINT_OUT") {
        Some(p) => PathBuf::from(p),
        None => dir("reference").join("rust_written.safetensors"),
    };
    Save::new()
        .metadata("written_by", "pytree")
        .save(&path, &m)
        .unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let mut names = st.names();
    names.sort();
    assert_eq!(names, ["layers.0.b", "layers.0.w"]);
    let w = st.tensor("layers.0.w").unwrap();
    assert_eq!(w.dtype(), safetensors::Dtype::F32);
    assert_eq!(w.shape(), [3, 2]);
    let values: Vec<f32> = w
        .data()
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(values, m.layers[0].w.iter().copied().collect::<Vec<_>>());
    let (_, meta) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
    assert_eq!(meta.metadata().as_ref().unwrap()["written_by"], "pytree");
}

#[test]
fn a_file_the_reference_implementation_writes_loads() {
    let w: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let b: Vec<u8> = [0.5f64].iter().flat_map(|x| x.to_le_bytes()).collect();
    let views = vec![
        (
            "enc.w",
            safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![2, 2], &w).unwrap(),
        ),
        (
            "enc.scale",
            safetensors::tensor::TensorView::new(safetensors::Dtype::F64, vec![], &b).unwrap(),
        ),
    ];
    let bytes = safetensors::serialize(views, None).unwrap();
    let file = Load::new().from_bytes(bytes).unwrap();
    #[derive(PyTree, Debug, PartialEq)]
    struct Enc {
        w: Array2<f32>,
    }
    let enc = Load::new()
        .rename_prefix("enc.", "")
        .allow_unused()
        .from_bytes(file_bytes(&file))
        .unwrap();
    assert_eq!(
        enc.load_like(&Enc {
            w: Array2::zeros((2, 2))
        })
        .unwrap()
        .0
        .w,
        array![[1.0, 2.0], [3.0, 4.0]]
    );
    assert_eq!(
        file.tensor("enc.scale").unwrap().data_in_memory().unwrap(),
        0.5f64.to_le_bytes()
    );
}

/// The bytes of a checkpoint read from memory, rebuilt from its tensors
/// through the reference writer (a second round trip).
fn file_bytes(file: &Checkpoint) -> Vec<u8> {
    let dtype = |d: pytree_std::DType| match d {
        pytree_std::DType::F32 => safetensors::Dtype::F32,
        pytree_std::DType::F64 => safetensors::Dtype::F64,
        other => panic!("not used here: {other}"),
    };
    let views: Vec<(String, safetensors::tensor::TensorView<'_>)> = file
        .tensors()
        .map(|t| {
            (
                t.name().to_string(),
                safetensors::tensor::TensorView::new(
                    dtype(t.dtype()),
                    t.shape().to_vec(),
                    t.data_in_memory().unwrap(),
                )
                .unwrap(),
            )
        })
        .collect();
    safetensors::serialize(views, None).unwrap()
}

/// A layer with a field kept out of the tree (a cache, a config) and a
/// `PhantomData` marker.
#[derive(PyTree, Clone, Debug, PartialEq)]
struct Cached {
    w: Array1<f32>,
    #[pytree(skip)]
    calls: u64,
    #[pytree(skip)]
    _marker: std::marker::PhantomData<f32>,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Stack {
    head: Array1<f32>,
    layers: Vec<Cached>,
}

/// A `#[pytree(skip)]` field never comes back silently as `Default` from
/// `load_like`: the template is refused, naming the field's place; the
/// same load in place keeps the field; `PhantomData` alone is fine.
#[test]
fn load_like_refuses_a_template_with_skipped_fields_and_load_into_keeps_them() {
    let cached = |w: f32, calls| Cached {
        w: Array1::from_elem(2, w),
        calls,
        _marker: std::marker::PhantomData,
    };
    let saved = Stack {
        head: array![1.0, 2.0],
        layers: vec![cached(3.0, 0), cached(4.0, 0)],
    };
    let bytes = checkpoint::Save::new().to_bytes(&saved).unwrap();
    let file = Load::new().from_bytes(bytes).unwrap();
    let template = Stack {
        head: array![0.0, 0.0],
        layers: vec![cached(0.0, 7), cached(0.0, 9)],
    };
    let err = file.load_like(&template).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .layers[0]: Cached.calls is #[pytree(skip)]: load_like rebuilds the value with \
         Default there, losing the template's value; mark the field \
         #[pytree(skip(recomputed))] if the type recomputes it on use, load into the template \
         in place with load_into (which keeps skipped fields), or leave the field out of the type"
    );
    assert!(file.load_like(&template).is_err());
    let mut into = template.clone();
    assert!(file.load_into(&mut into).unwrap().is_complete());
    assert_eq!(into.head, saved.head);
    assert_eq!(into.layers[1].w, saved.layers[1].w);
    assert_eq!((into.layers[0].calls, into.layers[1].calls), (7, 9));

    // Only PhantomData skipped: Default is exact, so load_like works.
    #[derive(PyTree, Clone, Debug, PartialEq)]
    struct Marked {
        w: Array1<f32>,
        #[pytree(skip)]
        _m: std::marker::PhantomData<u8>,
    }
    let m = Marked {
        w: array![5.0],
        _m: std::marker::PhantomData,
    };
    let file = Load::new()
        .from_bytes(checkpoint::Save::new().to_bytes(&m).unwrap())
        .unwrap();
    let back = file
        .load_like(&Marked {
            w: array![0.0],
            _m: std::marker::PhantomData,
        })
        .unwrap()
        .0;
    assert_eq!(back, m);

    // In an enum variant, at the root.
    #[derive(PyTree, Clone, Debug, PartialEq)]
    enum Head {
        Plain(Array1<f32>),
        Counted {
            w: Array1<f32>,
            #[pytree(skip)]
            seen: u32,
        },
    }
    let h = Head::Counted {
        w: array![1.0],
        seen: 3,
    };
    let file = Load::new()
        .from_bytes(checkpoint::Save::new().to_bytes(&h).unwrap())
        .unwrap();
    let err = file.load_like(&h).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("at <root>: Head::Counted.seen is #[pytree(skip)]"),
        "{err}"
    );
    let plain = Head::Plain(array![2.0]);
    let file = Load::new()
        .from_bytes(checkpoint::Save::new().to_bytes(&plain).unwrap())
        .unwrap();
    assert_eq!(file.load_like(&plain).unwrap().0, plain);
}

/// A layer whose running statistic is a static field (kept in the
/// TreeDef, so in the file's metadata), with a cache of its own.
#[derive(PyTree, Clone, Debug, PartialEq)]
struct Counted {
    w: Array1<f32>,
    #[pytree(static)]
    steps: u64,
    #[pytree(static)]
    name: String,
    /// Recomputed on use: its `Default` loses nothing.
    #[pytree(skip(recomputed))]
    norm: Option<f32>,
}

fn counted(w: f32, steps: u64) -> Counted {
    Counted {
        w: Array1::from_elem(2, w),
        steps,
        name: "enc".into(),
        norm: Some(w.abs()),
    }
}

/// Issue 27 item 1: static fields the file holds are loaded, in place as
/// against a template, as a load by type takes them; before, `load_into`
/// kept the tree's `steps` and reported a complete load.
#[test]
fn static_fields_the_file_holds_are_loaded_in_place_and_by_template() {
    let saved = (counted(1.5, 10), vec![counted(2.5, 3)]);
    let bytes = checkpoint::Save::new().to_bytes(&saved).unwrap();
    let file = Load::new().from_bytes(bytes).unwrap();
    let fresh = (counted(0.0, 0), vec![counted(0.0, 0)]);

    let mut into = fresh.clone();
    let report = file.load_into(&mut into).unwrap();
    assert!(report.is_complete());
    assert_eq!((into.0.steps, into.1[0].steps), (10, 3));
    assert_eq!(into.0.w, saved.0.w);
    // The rebuilt value's recomputed field is its `Default`.
    assert_eq!(into.0.norm, None);
    assert_eq!(pytree_std::structure(&into), pytree_std::structure(&saved));

    let like = file.load_like(&fresh).unwrap().0;
    assert_eq!(pytree_std::structure(&like), pytree_std::structure(&saved));
    assert_eq!((like.0.steps, like.1[0].steps), (10, 3));
    let by_type: (Counted, Vec<Counted>) = file.load().unwrap().0;
    assert_eq!(
        pytree_std::structure(&by_type),
        pytree_std::structure(&like)
    );

    // Equal static fields: nothing is rebuilt, the cache is kept.
    let mut same = saved.clone();
    file.load_into(&mut same).unwrap();
    assert_eq!(same, saved);
    assert_eq!(same.0.norm, Some(1.5));

    // A static field whose value is of another type in the file: an error
    // naming it and both values, and nothing changed.
    #[derive(PyTree, Clone, Debug, PartialEq)]
    struct Wide {
        w: Array1<f32>,
        #[pytree(static)]
        steps: u32,
    }
    let mut wide = Wide {
        w: Array1::zeros(2),
        steps: 0,
    };
    let file = Load::new()
        .from_bytes(checkpoint::Save::new().to_bytes(&counted(1.0, 7)).unwrap())
        .unwrap();
    let err = Load::new()
        .allow_unused()
        .from_bytes(checkpoint::Save::new().to_bytes(&counted(1.0, 7)).unwrap())
        .unwrap()
        .load_into(&mut wide)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .steps: static field `steps` cannot be restored: the file holds 7 (a u64), the tree 0 \
         (a u32)"
    );
    assert_eq!(wide.steps, 0);
    assert!(file.load_like(&wide).is_err());
}

/// A static field restored in place rebuilds the value: a skipped field
/// that is not `recomputed` would be lost, so it is an error naming it
/// (and the static fields), with nothing changed.
#[test]
fn restoring_static_fields_in_place_refuses_to_lose_a_skipped_field() {
    #[derive(PyTree, Clone, Debug, PartialEq)]
    struct Layer {
        w: Array1<f32>,
        #[pytree(static)]
        steps: u64,
        #[pytree(skip)]
        calls: u64,
    }
    let saved = Layer {
        w: array![1.0, 2.0],
        steps: 4,
        calls: 0,
    };
    let file = Load::new()
        .from_bytes(checkpoint::Save::new().to_bytes(&saved).unwrap())
        .unwrap();
    let mut fresh = Layer {
        w: array![0.0, 0.0],
        steps: 0,
        calls: 9,
    };
    let err = file.load_into(&mut fresh).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at <root>: Layer.calls is #[pytree(skip)]: restoring the file's static fields (steps) \
         in place rebuilds the value with Default there, losing the template's value; mark the \
         field #[pytree(skip(recomputed))] if the type recomputes it on use, set those fields to \
         the file's values before the load (Checkpoint::treedef shows them), or leave the field \
         out of the type"
    );
    assert_eq!(fresh.w, array![0.0, 0.0]);
    // Set as the file has it, the load is in place and keeps `calls`.
    fresh.steps = 4;
    file.load_into(&mut fresh).unwrap();
    assert_eq!((fresh.w.clone(), fresh.calls), (saved.w, 9));
}

/// A file whose TreeDef could not be written (a static field serde cannot
/// serialize) holds no static fields to restore: the template's stay.
#[test]
fn without_a_treedef_the_templates_static_fields_stay() {
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    enum Act {
        Relu,
        Gelu,
    }
    #[derive(PyTree, Clone, Debug, PartialEq)]
    struct M {
        w: Array1<f32>,
        #[pytree(static)]
        act: Act,
    }
    let saved = M {
        w: array![1.0],
        act: Act::Gelu,
    };
    let file = Load::new()
        .from_bytes(checkpoint::Save::new().to_bytes(&saved).unwrap())
        .unwrap();
    assert!(file.treedef().unwrap().is_none());
    let mut m = M {
        w: array![0.0],
        act: Act::Relu,
    };
    file.load_into(&mut m).unwrap();
    assert_eq!((m.w, m.act), (saved.w.clone(), Act::Relu));
}

/// A candle variable keeps its identity when static fields are restored:
/// it is written in place (`Var::set`), and every holder sees the load.
#[test]
fn restoring_static_fields_keeps_candle_variables() {
    use pytree_std::candle_core::Var;
    #[derive(PyTree)]
    struct Layer {
        w: Var,
        #[pytree(static)]
        steps: u64,
    }
    let saved = Layer {
        w: Var::new(&[1.0f32, 2.0], &Device::Cpu).unwrap(),
        steps: 5,
    };
    let file = Load::new()
        .from_bytes(checkpoint::Save::new().to_bytes(&saved).unwrap())
        .unwrap();
    let mut layer = Layer {
        w: Var::zeros(2, CDType::F32, &Device::Cpu).unwrap(),
        steps: 0,
    };
    let held = layer.w.as_tensor().clone();
    file.load_into(&mut layer).unwrap();
    assert_eq!(layer.steps, 5);
    assert_eq!(held.to_vec1::<f32>().unwrap(), [1.0, 2.0]);
    assert_eq!(layer.w.as_tensor().id(), held.id(), "the same variable");
}
