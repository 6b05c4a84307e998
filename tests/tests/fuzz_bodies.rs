//! The fuzz target bodies (`pytree_tests::fuzz`) in CI: each runs for a
//! couple of seconds over a seeded, deterministic stream of inputs (the
//! seed documents of `fuzz/seeds/`, mutations of them, and random bytes),
//! and over every input kept in `fuzz/regressions/` (the crashes fuzzing
//! found, each fixed). A failing input is printed in hex, to be added to
//! `fuzz/regressions/<target>/`.
//!
//! `cargo test -p pytree-tests --test fuzz_bodies -- --ignored` rewrites
//! the seed files from the values below.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pytree_examples::digits::Rng;
use pytree_std::serialized::Serialized;
use pytree_std::{tree, Tree};
use pytree_tests::fuzz;

/// How long each target runs in CI (debug build).
const BUDGET: Duration = Duration::from_millis(2500);

/// The draws of the fuzz loop, from the examples' splitmix64 (a fixed
/// stream of numbers from a seed).
trait Below {
    /// A number below `n` (0 where `n` is 0).
    fn below(&mut self, n: usize) -> usize;
}

impl Below for Rng {
    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

fn fuzz_dir(kind: &str, target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz")
        .join(kind)
        .join(target)
}

/// The files of `fuzz/<kind>/<target>/`, sorted by name.
fn files(kind: &str, target: &str) -> Vec<Vec<u8>> {
    let Ok(dir) = std::fs::read_dir(fuzz_dir(kind, target)) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = dir.filter_map(|e| Some(e.ok()?.path())).collect();
    paths.sort();
    paths
        .into_iter()
        .filter_map(|p| std::fs::read(p).ok())
        .collect()
}

/// One mutation of `data` (a byte changed, inserted, removed, or a piece of
/// another input spliced in), as libFuzzer makes them.
fn mutate(rng: &mut Rng, data: &mut Vec<u8>, other: &[u8]) {
    let interesting = [
        0u8, 1, 2, 7, 8, 199, 200, 223, 225, 226, 255, b'{', b'}', b'[', b'"',
    ];
    match rng.below(5) {
        0 if !data.is_empty() => {
            let i = rng.below(data.len());
            data[i] = rng.next_u64() as u8;
        }
        1 => {
            let i = rng.below(data.len() + 1);
            data.insert(i, interesting[rng.below(interesting.len())]);
        }
        2 if !data.is_empty() => {
            let i = rng.below(data.len());
            data.remove(i);
        }
        3 if !other.is_empty() => {
            let start = rng.below(other.len());
            let len = rng.below(other.len() - start + 1);
            let at = rng.below(data.len() + 1);
            data.splice(at..at, other[start..start + len].iter().copied());
        }
        _ => {
            if let Some(b) = data.last_mut() {
                *b = b.wrapping_add(1);
            }
        }
    }
}

/// Runs `body` on the regressions, the seeds, then a seeded stream for
/// [`BUDGET`]; returns how many inputs ran.
fn run(target: &str, seed: u64, builtin: Vec<Vec<u8>>, body: fn(&[u8])) -> usize {
    let check = |input: &[u8]| {
        let caught = std::panic::catch_unwind(|| body(input));
        if let Err(panic) = caught {
            let hex: String = input.iter().map(|b| format!("{b:02x}")).collect();
            eprintln!("{target}: failing input ({} bytes): {hex}", input.len());
            std::panic::resume_unwind(panic);
        }
    };
    let mut count = 0;
    for input in files("regressions", target) {
        check(&input);
        count += 1;
    }
    let mut seeds = files("seeds", target);
    seeds.extend(builtin);
    for input in &seeds {
        check(input);
        count += 1;
    }
    let mut rng = Rng::new(seed);
    let start = Instant::now();
    while start.elapsed() < BUDGET || count < 200 {
        let mut input = if seeds.is_empty() || rng.below(4) == 0 {
            (0..rng.below(160)).map(|_| rng.next_u64() as u8).collect()
        } else {
            seeds[rng.below(seeds.len())].clone()
        };
        let other = seeds
            .get(rng.below(seeds.len().max(1)))
            .cloned()
            .unwrap_or_default();
        for _ in 0..1 + rng.below(6) {
            mutate(&mut rng, &mut input, &other);
        }
        check(&input);
        count += 1;
    }
    count
}

fn treedef_seeds() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let docs = [
        serde_json::to_string(&pytree_std::structure(&fuzz::models()[1])).unwrap(),
        serde_json::to_string(&pytree_std::structure(&fuzz::models()[0])).unwrap(),
        serde_json::to_string(&pytree_std::structure(&(vec![0u8; 100], None::<u8>))).unwrap(),
        r#"{"schemas":[],"nodes":[{"seq":1000000000000000000},{"leaves":1000000000000000000}]}"#
            .to_string(),
    ];
    for doc in docs {
        let mut raw = vec![0u8];
        raw.extend(doc.as_bytes());
        out.push(raw);
    }
    out.push(vec![1, 7, 2, 3, 0, 3, 1, 2]);
    out
}

fn tree_seeds() -> Vec<Vec<u8>> {
    let t: Tree<f64> = tree! { "a" => 1.0, "x" => [2.5, None, { "k" => [] }], "y" => {} };
    vec![
        serde_json::to_vec(&t).unwrap(),
        br#"{"a": [1, "s", true, null, {"b": 1e300}], "c": -0.0}"#.to_vec(),
        serde_json::to_vec(&Tree::from_pytree(fuzz::models()[1].clone()).unwrap()).unwrap(),
    ]
}

fn serialized_seeds() -> Vec<Vec<u8>> {
    let models = fuzz::models();
    vec![
        serde_json::to_vec(&Serialized(models[1].clone())).unwrap(),
        serde_json::to_vec(&Serialized(vec![1.5f64, -2.0])).unwrap(),
        serde_json::to_vec(&Serialized((1i32, Some(2i32)))).unwrap(),
        serde_json::to_vec(&Serialized(fuzz::Act::Gated {
            gate: 1.0f64,
            inner: Box::new(fuzz::Act::Relu),
        }))
        .unwrap(),
    ]
}

fn byte_seeds() -> Vec<Vec<u8>> {
    // For `multi_tree` the first byte picks the group of operations.
    let tree = [4, 3, 0, 7, 1, 9, 2, 2, 0, 1, 0, 2, 4, 1, 1, 0, 3];
    (0..5u8)
        .map(|group| {
            let mut seed = vec![group];
            seed.extend(tree);
            seed
        })
        .collect()
}

/// For `checkpoint_doc`: each real checkpoint of the target as raw bytes
/// (first byte 0), and as the start of structure-aware mutations (first
/// byte: mode 1 to 3 and the load options, then the base, then the
/// mutations; see `pytree_tests::fuzz::checkpoint`).
fn checkpoint_seeds() -> Vec<Vec<u8>> {
    let bases = fuzz::checkpoint::bases();
    let mut out = Vec::new();
    for (i, base) in bases.iter().enumerate() {
        let mut raw = vec![0u8];
        raw.extend(base);
        out.push(raw);
        out.push(vec![2, i as u8]);
    }
    out.extend([
        // The state dict (base 4, saved with the prefix `model.`) renamed
        // back (option 4) and loaded with a dtype changed, then retiled.
        vec![2 | 4 << 2, 4, 5, 0, 9],
        // The net's TreeDef mutated (op 10), retiled.
        vec![3, 0, 10, 1, 3, 4, 2, 5],
        // A shape changed (op 6) and retiled: data of another length.
        vec![2, 2, 6, 1, 3, 3],
        // A bool mask's byte set to 2 (op 0).
        vec![1, 5, 0, 3, 2],
        // A tensor dropped (op 2) with unused and missing allowed.
        vec![1 | 3 << 2, 0, 2, 4],
        // The header length off by one (op 13).
        vec![1, 1, 13, 0],
    ]);
    out
}

/// A file as Python's `safetensors` writes it (names, no TreeDef), of
/// tensors `(name, dtype, shape)` whose bytes count up.
fn file_without_treedef(tensors: &[(&str, &str, &[usize])]) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    let mut data: Vec<u8> = Vec::new();
    for (name, dtype, shape) in tensors {
        let size = match *dtype {
            "F64" | "I64" => 8,
            "F32" | "I32" => 4,
            "F16" | "BF16" => 2,
            _ => 1,
        };
        let start = data.len();
        let n: usize = shape.iter().product();
        data.extend((0..n * size).map(|i| (i % 61) as u8));
        header.insert(
            name.to_string(),
            serde_json::json!({"dtype": dtype, "shape": shape, "data_offsets": [start, data.len()]}),
        );
    }
    let text = serde_json::Value::Object(header).to_string();
    let mut file = (text.len() as u64).to_le_bytes().to_vec();
    file.extend(text.bytes().chain(data));
    file
}

/// For `load_by_names`: files without a TreeDef (first byte 0, then the
/// file) that load into `Stack` or a `Vec`, and built files (first byte
/// odd: the load options, then the bytes `tensors_file` reads).
fn by_names_seeds() -> Vec<Vec<u8>> {
    let stack = file_without_treedef(&[
        ("layers.0.w", "F32", &[2, 3]),
        ("layers.0.b", "F32", &[3]),
        ("layers.1.w", "F32", &[1]),
        ("norm", "F32", &[3]),
        ("emb", "F32", &[4, 3]),
        ("scale", "F32", &[]),
    ]);
    let hf = file_without_treedef(&[
        ("model.layer.0.w", "F16", &[2, 2]),
        ("model.layer.1.w", "BF16", &[2, 2]),
        ("model.h.0.weight", "F32", &[2]),
        ("model.emb", "F32", &[1, 3]),
        ("model.scale", "F64", &[]),
    ]);
    let listed =
        file_without_treedef(&[("0", "F32", &[2]), ("1", "F32", &[]), ("2.0", "F64", &[1])]);
    let mut out = Vec::new();
    for (options, file) in [
        (0u8, &stack),
        (2 << 1 | 8 | 32, &hf),
        (3 << 1 | 8, &hf),
        (0, &listed),
    ] {
        let mut seed = vec![options & !1];
        seed.extend(file);
        out.push(seed);
    }
    out.extend([
        vec![
            1, 6, 0, 2, 5, 1, 2, 3, 0, 0, 1, 2, 9, 9, 1, 0, 8, 5, 2, 2, 0,
        ],
        vec![1 | 16 | 64, 4, 1, 5, 0, 2, 2, 3, 0, 1, 0, 4, 1, 1],
        vec![1, 12, 17, 20, 0, 3, 244, 0, 0, 0],
    ]);
    out
}

/// For `renames`: rules and names (see `pytree_tests::fuzz::renames`).
fn renames_seeds() -> Vec<Vec<u8>> {
    vec![
        // prefix "model." -> "", pattern "layer.*" -> "layers.$1"; names.
        vec![2, 0, 1, 0, 1, 4, 5, 3, 0, 3, 0, 1, 2, 0, 8, 1, 0, 0],
        // pattern "h.*.attn" -> "blocks.$1.attention"; an empty segment.
        vec![1, 1, 12, 13, 2, 0, 2, 3, 7, 4, 0, 3, 10, 8],
        // Rules that do not check: `$2`, `$0`, "a..b".
        vec![3, 1, 4, 9, 1, 4, 10, 1, 14, 19, 1, 0, 1, 5],
        // Raw bytes as a rule and a name.
        vec![
            1, 0, 250, 3, b'a', b'.', b'b', 250, 2, b'*', b'.', 1, 240, 4, b'a', b'.', b'b', b'.',
        ],
    ]
}

/// For `shard_index`: the real index as it is (first byte 1, nothing to
/// mutate), raw (first byte 0), and mutated.
fn shard_seeds() -> Vec<Vec<u8>> {
    let mut raw = vec![0u8];
    raw.extend(br#"{"metadata":{"total_size":40},"weight_map":{"norm":"model-00001-of-00004.safetensors"}}"#);
    vec![
        vec![1],
        raw,
        vec![1, 0, 0, 2, 5, 1],
        vec![3, 1, 1, 4, 2, 2, 6, 4, 1],
        vec![5, 2, 1, 7, 3, 0, 3],
        vec![1 | 8, 8, 0, 4, 0, 2],
    ]
}

/// For `any_array`: a real file of arrays of every dtype `AnyArray`
/// holds (first byte 0), a built file (1) and mutated real checkpoints
/// (2, 3).
fn any_array_seeds() -> Vec<Vec<u8>> {
    use pytree_std::half::{bf16, f16};
    use pytree_std::ndarray::array;
    use pytree_std::AnyArray;
    let arrays = std::collections::BTreeMap::from([
        (
            "f32".to_string(),
            AnyArray::from(array![[1.5f32, f32::NAN]]),
        ),
        ("f64".to_string(), AnyArray::from(array![2.5f64])),
        (
            "f16".to_string(),
            AnyArray::from(array![f16::from_f32(0.5)]),
        ),
        (
            "bf16".to_string(),
            AnyArray::from(array![bf16::from_f32(-1.0)]),
        ),
        ("i64".to_string(), AnyArray::from(array![[1i64, 2], [3, 4]])),
        ("i32".to_string(), AnyArray::from(array![7i32])),
        ("u8".to_string(), AnyArray::from(array![255u8])),
        ("bool".to_string(), AnyArray::from(array![true, false])),
    ]);
    let mut real = vec![0u8];
    real.extend(
        pytree_std::checkpoint::Save::new()
            .to_bytes(&arrays)
            .unwrap(),
    );
    // File 0 (the bytes as they are), with convert_floats (4) and allow_unused (8).
    let mut unnamed = vec![4u8 | 8];
    unnamed.extend(file_without_treedef(&[
        ("a", "F16", &[2]),
        ("b", "I64", &[1, 1]),
        ("c", "BOOL", &[3]),
        ("d", "F8_E4M3", &[1]),
    ]));
    vec![
        real,
        unnamed,
        vec![1, 4, 0, 2, 1, 2, 3, 1, 5, 1, 1, 7, 0, 1, 3],
        vec![2, 2, 5, 0, 1, 2],
        vec![3, 1, 2, 1, 3, 4, 0],
    ]
}

/// One test per fuzz target: its body on the regressions, the seeds and
/// mutated inputs ([`run`], from the generator seed given), at least 200
/// of them; and [`targets`], each target with its built-in seeds.
macro_rules! targets {
    ($($target:ident: $seed:literal, $seeds:ident;)*) => {
        $(
            #[test]
            fn $target() {
                let n = run(stringify!($target), $seed, $seeds(), fuzz::$target);
                eprintln!("{}: {n} inputs", stringify!($target));
                assert!(n >= 200);
            }
        )*

        /// Every fuzz target with its built-in seeds.
        fn targets() -> Vec<(&'static str, Vec<Vec<u8>>)> {
            vec![$((stringify!($target), $seeds())),*]
        }
    };
}

targets! {
    treedef_doc: 1, treedef_seeds;
    mutated_treedef: 2, byte_seeds;
    tree_doc: 3, tree_seeds;
    serialized_doc: 4, serialized_seeds;
    multi_tree: 5, byte_seeds;
    checkpoint_doc: 6, checkpoint_seeds;
    load_by_names: 7, by_names_seeds;
    renames: 8, renames_seeds;
    shard_index: 9, shard_seeds;
    any_array: 10, any_array_seeds;
}

/// Writes the seed files of `fuzz/seeds/` (the fuzz script copies them
/// into each target's corpus).
#[test]
#[ignore]
fn write_fuzz_seeds() {
    for (target, seeds) in targets() {
        let dir = fuzz_dir("seeds", target);
        std::fs::create_dir_all(&dir).unwrap();
        for (i, seed) in seeds.iter().enumerate() {
            std::fs::write(dir.join(format!("seed-{i:02}")), seed).unwrap();
        }
    }
}
