//! Target `any_array`: checkpoints read into [`AnyArray`] leaves, whose
//! dtype is the file's (any of the format's that ndarray holds: floats of
//! 16, 32 and 64 bits, integers, bools), and the typed access to what was
//! read.
//!
//! The first byte picks the file (its low two bits) and the load options
//! (the other bits): `0`, the rest of the bytes as they are; `1`, a file
//! built by `load_by_names`' [`tensors_file`](super::by_names) (names,
//! dtypes, shapes and data from the bytes, no TreeDef); `2` and `3`, a
//! real checkpoint of the library mutated as `checkpoint_doc` mutates it.
//! Options: `convert_floats`, `allow_unused`, `allow_missing`.
//!
//! What reads is loaded as a flat map of `AnyArray`s, by type as a `Vec`,
//! a `BTreeMap` and a `Tree` of them, and against a template of the map
//! read. Laws: nothing panics; each array has its tensor's dtype, shape
//! and bytes; exactly one typed view of it exists (the one of its dtype),
//! and converting it to that type and back gives it again; a value loaded
//! saves, and loads back from its own file to a value that saves to the
//! same bytes; loading against the map read as a template gives the same
//! arrays.

use std::collections::BTreeMap;

use pytree_std::checkpoint::{Checkpoint, Load};
use pytree_std::half::{bf16, f16};
use pytree_std::ndarray::{ArrayD, IxDyn};
use pytree_std::{AnyArray, AnyElement, ByteLeaf, DType, Tree};

use super::by_names::tensors_file;
use super::checkpoint::{file_of, inspect, saves_and_loads_back, with_options};
use super::Input;

/// Whether `a` holds `A`s: its view, its typed array and back.
fn typed<A: AnyElement>(a: &AnyArray) -> bool {
    let held = a.view::<A>().is_some();
    let converted = a.clone().into_typed::<A, IxDyn>();
    assert_eq!(held, converted.is_ok(), "{}", a.signature());
    if let Ok(array) = converted {
        let array: ArrayD<A> = array;
        assert_eq!(array.shape(), a.shape());
        let back = AnyArray::from(array);
        assert_eq!(back.signature(), a.signature());
        let bytes = |x: &AnyArray| {
            <AnyArray as ByteLeaf>::bytes(&x.lend())
                .expect("an array has bytes")
                .into_owned()
        };
        assert!(bytes(&back) == bytes(a), "{}", a.signature());
    }
    held
}

/// The laws of one array read as tensor `name` of `file` (`None`: the
/// name was renamed, so the tensor is not looked for).
fn array_laws(a: &AnyArray, tensor: Option<pytree_std::checkpoint::TensorView<'_>>) {
    let sig = <AnyArray as ByteLeaf>::signature(&a.lend()).expect("a signature");
    assert_eq!(sig, a.signature());
    assert_eq!(a.signature().dtype(), a.dtype());
    if let Some(t) = tensor {
        assert_eq!(a.signature(), t.signature());
        let view = a.lend();
        let bytes = <AnyArray as ByteLeaf>::bytes(&view).expect("bytes");
        assert!(
            *bytes == *t.data().expect("the tensor's data"),
            "the data of tensor `{}`",
            t.name()
        );
    }
    let views = [
        typed::<f32>(a),
        typed::<f64>(a),
        typed::<f16>(a),
        typed::<bf16>(a),
        typed::<i64>(a),
        typed::<i32>(a),
        typed::<u8>(a),
        typed::<bool>(a),
    ];
    let known = [
        DType::F32,
        DType::F64,
        DType::F16,
        DType::BF16,
        DType::I64,
        DType::I32,
        DType::U8,
        DType::Bool,
    ];
    for (held, dtype) in views.iter().zip(known) {
        assert_eq!(*held, a.dtype() == dtype, "{}", a.signature());
    }
    let bytes = |x: &AnyArray| {
        <AnyArray as ByteLeaf>::bytes(&x.lend())
            .expect("an array has bytes")
            .into_owned()
    };
    let owned = a.lend().to_owned();
    assert_eq!(owned.signature(), a.signature());
    assert!(bytes(&owned) == bytes(a), "{}", a.signature());
    assert_eq!(
        a.is_float(),
        matches!(
            a.dtype(),
            DType::F32 | DType::F64 | DType::F16 | DType::BF16
        )
    );
}

/// Target `any_array`; see the module docs.
pub fn any_array(data: &[u8]) {
    let mut input = Input::new(data);
    let head = input.byte();
    let bytes = match head & 3 {
        0 => data.get(1..).unwrap_or(&[]).to_vec(),
        1 => tensors_file(&mut input),
        _ => file_of(data.get(1..).unwrap_or(&[])).0,
    };
    let load = with_options(Load::new(), head, [4, 16, 8]);
    let file: Checkpoint = match load.from_bytes(bytes) {
        Ok(file) => file,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    inspect(&file);
    let map = file.load_map::<AnyArray>();
    if let Ok(map) = &map {
        assert_eq!(map.len(), file.len());
        for (name, a) in map {
            array_laws(a, file.tensor(name));
        }
    }
    let sel = data.last().copied().unwrap_or(0);
    match sel % 4 {
        0 => {
            if let Ok((v, _)) = file.load::<Vec<AnyArray>>() {
                v.iter().for_each(|a| array_laws(a, None));
                saves_and_loads_back(&v);
            }
        }
        1 => {
            if let Ok((m, _)) = file.load::<BTreeMap<String, AnyArray>>() {
                m.values().for_each(|a| array_laws(a, None));
                saves_and_loads_back(&m);
            }
        }
        2 => {
            if let Ok((t, _)) = file.load::<Tree<AnyArray>>() {
                pytree_std::leaves(&t)
                    .iter()
                    .for_each(|a| array_laws(&a.to_owned(), None));
                saves_and_loads_back(&t);
            }
        }
        _ => {
            // The map read, as a template: the same arrays again.
            let Ok(map) = map else { return };
            let template: BTreeMap<String, AnyArray> = map.into_iter().collect();
            if let Ok((again, _)) = file.load_like(&template) {
                // Compared as files, so that NaN equals itself.
                let as_file = |m: &BTreeMap<String, AnyArray>| {
                    pytree_std::checkpoint::Save::new()
                        .to_bytes(m)
                        .expect("a map of arrays saves")
                };
                assert!(
                    as_file(&again) == as_file(&template),
                    "load_like gave other arrays"
                );
                saves_and_loads_back(&again);
            }
        }
    }
}
