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

use pytree_std::serialized::Serialized;
use pytree_std::{tree, Tree};
use pytree_tests::fuzz;

/// How long each target runs in CI (debug build).
const BUDGET: Duration = Duration::from_millis(2500);

/// splitmix64: a fixed stream of numbers from a seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
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
            data[i] = rng.next() as u8;
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
    let mut rng = Rng(seed);
    let start = Instant::now();
    while start.elapsed() < BUDGET || count < 200 {
        let mut input = if seeds.is_empty() || rng.below(4) == 0 {
            (0..rng.below(160)).map(|_| rng.next() as u8).collect()
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

#[test]
fn treedef_doc() {
    let n = run("treedef_doc", 1, treedef_seeds(), fuzz::treedef_doc);
    eprintln!("treedef_doc: {n} inputs");
    assert!(n >= 200);
}

#[test]
fn mutated_treedef() {
    let n = run("mutated_treedef", 2, byte_seeds(), fuzz::mutated_treedef);
    eprintln!("mutated_treedef: {n} inputs");
    assert!(n >= 200);
}

#[test]
fn tree_doc() {
    let n = run("tree_doc", 3, tree_seeds(), fuzz::tree_doc);
    eprintln!("tree_doc: {n} inputs");
    assert!(n >= 200);
}

#[test]
fn serialized_doc() {
    let n = run(
        "serialized_doc",
        4,
        serialized_seeds(),
        fuzz::serialized_doc,
    );
    eprintln!("serialized_doc: {n} inputs");
    assert!(n >= 200);
}

#[test]
fn multi_tree() {
    let n = run("multi_tree", 5, byte_seeds(), fuzz::multi_tree);
    eprintln!("multi_tree: {n} inputs");
    assert!(n >= 200);
}

#[test]
fn checkpoint_doc() {
    let n = run(
        "checkpoint_doc",
        6,
        checkpoint_seeds(),
        fuzz::checkpoint_doc,
    );
    eprintln!("checkpoint_doc: {n} inputs");
    assert!(n >= 200);
}

/// Writes the seed files of `fuzz/seeds/` (the fuzz script copies them
/// into each target's corpus).
#[test]
#[ignore]
fn write_fuzz_seeds() {
    let sets = [
        ("treedef_doc", treedef_seeds()),
        ("mutated_treedef", byte_seeds()),
        ("tree_doc", tree_seeds()),
        ("serialized_doc", serialized_seeds()),
        ("multi_tree", byte_seeds()),
        ("checkpoint_doc", checkpoint_seeds()),
    ];
    for (target, seeds) in sets {
        let dir = fuzz_dir("seeds", target);
        std::fs::create_dir_all(&dir).unwrap();
        for (i, seed) in seeds.iter().enumerate() {
            std::fs::write(dir.join(format!("seed-{i:02}")), seed).unwrap();
        }
    }
}
