//! Runs one T1 operation in a loop, for a profiler: `perf record` or
//! `valgrind --tool=callgrind` (instruction counts are steady where wall
//! time on a shared machine is not). Run it twice with different counts
//! and subtract to remove the setup.
//!
//! `cargo run --release -p pytree-benches --example profile -- <op> <pytree|hand> <count>`
//! with `<op>` one of flatten, unflatten, map, map2, sgd, for_each_mut, leaves,
//! struct_eq, flatten_with_path, flatten_wide (a `Vec<f64>` of 100 000
//! leaves: `flatten` of a clone against two `Vec::clone`s).

use std::hint::black_box;

use pytree_benches::{hand::t1, shapes};
use pytree_std::TreeDef;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (op, imp) = (args[1].as_str(), args[2].as_str());
    let count: usize = args[3].parse().expect("count");
    let t = shapes::t1();
    let t2 = shapes::t1();
    let (leaves, def): (Vec<f64>, TreeDef) = pytree_std::flatten(t.clone());
    let (da, db) = (pytree_std::structure(&t), pytree_std::structure(&t2));
    let params = t.clone();
    let wide: Vec<f64> = (0..100_000).map(|i| i as f64).collect();
    let inputs: Vec<shapes::Transformer> = match op {
        "flatten" | "map" => (0..count).map(|_| t.clone()).collect(),
        _ => Vec::new(),
    };
    run(
        op,
        imp,
        count,
        Inputs {
            t,
            t2,
            leaves,
            def,
            da,
            db,
            params,
            owned: inputs,
            wide,
        },
    );
}

/// What the operations read.
struct Inputs {
    t: shapes::Transformer,
    t2: shapes::Transformer,
    leaves: Vec<f64>,
    def: TreeDef,
    da: TreeDef,
    db: TreeDef,
    params: shapes::Transformer,
    owned: Vec<shapes::Transformer>,
    wide: Vec<f64>,
}

/// The timed loop (`valgrind --toggle-collect='profile::run'` counts only it).
#[inline(never)]
fn run(op: &str, imp: &str, count: usize, inputs: Inputs) {
    let Inputs {
        t,
        t2,
        leaves,
        def,
        da,
        db,
        mut params,
        owned,
        wide,
    } = inputs;
    let mut owned = owned.into_iter();
    let mut next = || owned.next().expect("input");
    for _ in 0..count {
        match (op, imp) {
            ("flatten", "pytree") => drop(black_box(pytree_std::flatten(next()))),
            ("flatten", "hand") => drop(black_box(t1::leaves_owned(next()))),
            ("flatten_wide", "pytree") => {
                drop(black_box(pytree_std::flatten(black_box(&wide).clone())))
            }
            ("flatten_wide", "hand") => drop(black_box((
                black_box(&wide).clone(),
                black_box(&wide).clone(),
            ))),
            ("flatten_t5", "pytree") => {
                drop(black_box(pytree_std::flatten(black_box(shapes::t5()))))
            }
            ("flatten_t5", "hand") => drop(black_box(black_box(shapes::t5()))),
            ("unflatten", "pytree") => drop(black_box(
                pytree_std::unflatten::<shapes::Transformer>(&def, leaves.iter().copied()),
            )),
            ("unflatten", "hand") => drop(black_box(t1::build(48, leaves.iter().copied()))),
            ("map", "pytree") => drop(black_box(pytree_std::map(next(), |x| x + 1.0))),
            ("map", "hand") => drop(black_box(t1::map(next(), |x| x + 1.0))),
            ("map2", "pytree") => drop(black_box(pytree_std::walk::map_n(&t, [&t2], |x, [y]| {
                x + y
            }))),
            ("map2", "hand") => drop(black_box(t1::map2(&t, &t2, |x, y| x + y))),
            ("map2", "hand_result") => drop(black_box(t1::map2_result(&t, &t2, |x, y| x + y))),
            ("sgd", "pytree") => {
                pytree_std::zip_mut([black_box(&mut params)], [&t2], |[p], [g]| *p -= 0.01 * g)
                    .expect("same shape")
            }
            ("sgd", "hand") => t1::sgd(black_box(&mut params), &t2, 0.01),
            ("for_each_mut", "pytree") => {
                pytree_std::for_each_mut(black_box(&mut params), |x| *x += 1.0)
            }
            ("for_each_mut", "hand") => t1::for_each_mut(black_box(&mut params), |x| *x += 1.0),
            ("leaves", "pytree") => drop(black_box(pytree_std::leaves(black_box(&t)))),
            ("leaves", "hand") => drop(black_box(t1::leaves_ref(black_box(&t)))),
            ("leaves", "hand_sized") => drop(black_box(t1::leaves_ref_sized(black_box(&t)))),
            ("struct_eq", "pytree") => assert!(black_box(&da) == black_box(&db)),
            ("flatten_with_path", "pytree") => drop(black_box(pytree_std::flatten_with_path(
                black_box(t.clone()),
            ))),
            ("flatten_with_path", "hand") => drop(black_box(t1::leaves_with_path(black_box(&t)))),
            other => panic!("unknown op {other:?}"),
        }
    }
}
