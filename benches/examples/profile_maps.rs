//! Runs one operation over T4 (10 000 `String` keys to `f64`) as a
//! `BTreeMap`, a `HashMap` or an `IndexMap`, in a loop, for callgrind:
//! the keyed maps' instruction counts before and after a change to their
//! impls. Uses only root functions that every version since issue 20 has.
//!
//! `cargo run --release -p pytree-benches --example profile_maps -- <op> <btree|hash|index> <count>`
//! with `<op>` one of flatten (of a clone made outside the loop), unflatten,
//! leaves, map (of a clone), map_n (two maps, one other), structure.

use std::collections::{BTreeMap, HashMap};
use std::hint::black_box;

use pytree_std::indexmap::IndexMap;
use pytree_std::{PyTree, TreeDef};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (op, kind) = (args[1].as_str(), args[2].as_str());
    let count: usize = args[3].parse().expect("count");
    let entries = || (0..10_000).map(|i| (format!("k{i:05}"), i as f64));
    match kind {
        "btree" => run::<BTreeMap<String, f64>>(op, count, entries().collect()),
        "hash" => run::<HashMap<String, f64>>(op, count, entries().collect()),
        "index" => run::<IndexMap<String, f64>>(op, count, entries().collect()),
        other => panic!("unknown map kind {other:?}"),
    }
}

fn run<T: PyTree<Leaf = f64> + Clone>(op: &str, count: usize, t: T) {
    let (leaves, def): (Vec<f64>, TreeDef) = pytree_std::flatten(t.clone());
    let mut inputs: Vec<T> = match op {
        "flatten" | "map" => (0..count).map(|_| t.clone()).collect(),
        _ => Vec::new(),
    };
    timed(op, count, &t, &leaves, &def, &mut inputs);
}

/// The loop callgrind counts (`--toggle-collect='profile_maps::timed*'`).
#[inline(never)]
fn timed<T: PyTree<Leaf = f64> + Clone>(
    op: &str,
    count: usize,
    t: &T,
    leaves: &[f64],
    def: &TreeDef,
    inputs: &mut Vec<T>,
) {
    for _ in 0..count {
        match op {
            "flatten" => drop(black_box(pytree_std::flatten(inputs.pop().expect("input")))),
            "unflatten" => drop(black_box(
                pytree_std::unflatten::<T>(def, leaves.iter().copied()).expect("unflatten"),
            )),
            "leaves" => drop(black_box(pytree_std::leaves(black_box(t)))),
            "map" => drop(black_box(pytree_std::map(
                inputs.pop().expect("input"),
                |x| x + 1.0,
            ))),
            "map_n" => drop(black_box(
                pytree_std::map_n(t, [t], |x, [y]| x + y).expect("map_n"),
            )),
            "structure" => drop(black_box(pytree_std::structure(black_box(t)))),
            other => panic!("unknown op {other:?}"),
        }
    }
}
