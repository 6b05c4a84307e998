//! The scenarios, each run on every rank of one job. Each returns an
//! error naming the failed check; `pytree_dist::run` then ends the job
//! with it (so a failure is a non-zero exit of `mpirun`).

use std::process::ExitCode;

use pytree_dist::Dist;
use pytree_optim::{adam, GradientTransformation, Mask};
use pytree_std::ndarray::Array1;
use pytree_std::{Error, KeyPath};

use super::{combine, ensure, model, Model};

/// The scenarios that must succeed, at any world size.
pub const PASSING: &[&str] = &["collectives", "disagreements", "broadcast", "replicas"];

pub fn run(name: &str) -> ExitCode {
    let name = name.to_string();
    pytree_dist::run(move |dist| match name.as_str() {
        "collectives" => collectives(dist),
        "disagreements" => disagreements(dist),
        "broadcast" => broadcast(dist),
        "replicas" => replicas(dist),
        "panic_at_step_3" => fail_at_step_3(dist, true),
        "error_at_step_3" => fail_at_step_3(dist, false),
        other => Err(Error::custom(format!("no scenario {other}"))),
    })
}

const SIZES: &[usize] = &[6, 5, 3];

/// The mean (or sum) of every rank's model, computed here from the
/// models' definition (integer values: exact in any order).
fn expected(n: usize, r: usize, sum: bool) -> Model {
    let models: Vec<Model> = (0..n).map(|q| model(q, SIZES)).collect();
    combine(&models, &model(r, SIZES), !sum)
}

/// all_reduce_mean / _sum / masked, with the default bucket size and with
/// buckets of 20 bytes (leaves split across buckets); integer leaves left
/// alone; the plan cached (a second step on the same structure).
fn collectives(dist: &Dist) -> Result<(), Error> {
    let (r, n) = (dist.rank(), dist.size());
    for bucket in [pytree_dist::DEFAULT_BUCKET_BYTES, 20] {
        let dist = dist.with_bucket_bytes(bucket);
        for step in 0..2 {
            let mut g = model(r, SIZES);
            dist.all_reduce_mean(&mut g)?;
            let want = expected(n, r, false);
            ensure!(
                g == want,
                "{bucket} B buckets, step {step}: mean: {g:?} != {want:?}"
            );
            ensure!(
                g.ids == model(r, SIZES).ids,
                "integer leaves are left alone"
            );
            let mut s = model(r, SIZES);
            dist.all_reduce_sum(&mut s)?;
            ensure!(s == expected(n, r, true), "sum");
        }
    }
    // Only the `.layers[1]` leaves are sent.
    let mask = Mask::new(|p: &KeyPath| p.to_string().starts_with(".layers[1]"));
    let mut g = model(r, SIZES);
    dist.all_reduce_mean_masked(&mut g, &mask)?;
    let want = expected(n, r, false);
    ensure!(g.layers[1] == want.layers[1], "masked-in leaves averaged");
    ensure!(
        n == 1 || g.layers[0] != want.layers[0],
        "masked-out leaves not averaged"
    );
    ensure!(
        g.layers[0] == model(r, SIZES).layers[0] && g.scale == model(r, SIZES).scale,
        "masked-out leaves kept"
    );
    Ok(())
}

/// A rank whose tree differs: an error on every rank naming the ranks and
/// the first differing key path, nothing sent; then the job goes on.
fn disagreements(dist: &Dist) -> Result<(), Error> {
    let (r, n) = (dist.rank(), dist.size());
    if n == 1 {
        return Ok(());
    }
    let last = n - 1;
    // A shape.
    let sizes: &[usize] = if r == last { &[6, 4, 3] } else { SIZES };
    let mut g = model(r, sizes);
    let err = dist
        .all_reduce_mean(&mut g)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    ensure!(
        err.contains(&format!("rank {last} differs from rank 0 at .layers[0].w: f32[6,5] on rank 0, f32[6,4] on rank {last}")),
        "shape: {err}"
    );
    ensure!(
        g == model(r, sizes),
        "nothing changed after a refused all-reduce"
    );
    // Static data.
    let mut g = model(r, SIZES);
    if r == last {
        g.name = "other".into();
    }
    let err = dist
        .all_reduce_mean(&mut g)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    ensure!(
        err.contains(&format!("rank {last} differs from rank 0")) && err.contains(".name"),
        "static: {err}"
    );
    // A leaf more.
    let mut v = vec![1.0f32; if r == last { 3 } else { 2 }];
    let err = dist
        .all_reduce_mean(&mut v)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    ensure!(
        err.contains(&format!("rank 0 has 2 leaves, rank {last} has 3")),
        "length: {err}"
    );
    // A mask.
    let mask = if r == last {
        Mask::all()
    } else {
        Mask::new(|p: &KeyPath| p.to_string() != ".scale")
    };
    let mut g = model(r, SIZES);
    let err = dist
        .all_reduce_mean_masked(&mut g, &mask)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    ensure!(
        err.contains("at .scale: rank 0 leaves it out (masked)"),
        "mask: {err}"
    );
    // Another operation.
    let mut v = vec![1.0f32, 2.0];
    let res = if r == last {
        dist.broadcast(&mut v, 0)
    } else {
        dist.all_reduce_mean(&mut v)
    };
    let err = res.err().map(|e| e.to_string()).unwrap_or_default();
    ensure!(
        err.contains(&format!("rank {last} called broadcast from rank 0")),
        "op: {err}"
    );
    // Bucket sizes are part of the agreement.
    let other = dist.with_bucket_bytes(if r == last { 64 } else { 128 });
    let mut v = vec![1.0f32, 2.0];
    let err = other
        .all_reduce_mean(&mut v)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    ensure!(err.contains("byte buckets"), "bucket size: {err}");
    // And the job goes on: the next collective is right.
    let mut g = model(r, SIZES);
    dist.all_reduce_mean(&mut g)?;
    ensure!(g.layers == expected(n, r, false).layers, "after the errors");
    Ok(())
}

/// Rank `root`'s parameters and an Adam state with its step count on
/// every rank.
fn broadcast(dist: &Dist) -> Result<(), Error> {
    let (r, n) = (dist.rank(), dist.size());
    for root in [0, n - 1] {
        let mut m = model(r, SIZES);
        dist.broadcast(&mut m, root)?;
        ensure!(m == model(root, SIZES), "broadcast from {root}");
        let opt = adam(0.1);
        let mut p = Array1::from_elem(3, r as f32);
        let _: &Array1<f32> = &p;
        let mut state = opt.init(&p)?;
        for _ in 0..(if r == root { 4 } else { 1 }) {
            opt.step(&mut p, &mut Array1::from_elem(3, 0.5), &mut state)?;
        }
        dist.broadcast(&mut p, root)?;
        dist.broadcast(&mut state, root)?;
        ensure!(
            state.count == 4,
            "the step count (static data) comes from the root: {}",
            state.count
        );
        // The states are replicas now: one more step keeps them equal.
        opt.step(&mut p, &mut Array1::from_elem(3, 0.5), &mut state)?;
        dist.check_replicated(&p)?;
        dist.check_replicated(&state)?;
    }
    if n > 1 {
        let mut v = vec![0.0f32; if r == 1 { 3 } else { 2 }];
        let err = dist
            .broadcast(&mut v, 0)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        ensure!(
            err.contains("rank 0 has 2 leaves"),
            "broadcast of another tree: {err}"
        );
    }
    Ok(())
}

/// check_replicated names the leaf and the rank that differ.
fn replicas(dist: &Dist) -> Result<(), Error> {
    let (r, n) = (dist.rank(), dist.size());
    let mut m = model(0, SIZES);
    dist.check_replicated(&m)?;
    if n > 1 && r == n - 1 {
        if let pytree_std::AnyArray::F32(b) = &mut m.layers[1].b {
            b[[2]] += 1.0;
        }
    }
    let res = dist.check_replicated(&m);
    if n > 1 {
        let err = res.err().map(|e| e.to_string()).unwrap_or_default();
        ensure!(
            err.contains(&format!(
                "rank {} differs from rank 0 at .layers[1].b",
                n - 1
            )),
            "{err}"
        );
    }
    Ok(())
}

/// Steps of all-reduce; at step 3 rank 1 panics or returns an error, while
/// the others go on into the next all-reduce.
fn fail_at_step_3(dist: &Dist, panic: bool) -> Result<(), Error> {
    let r = dist.rank();
    for step in 0..10 {
        if step == 3 && r == 1 {
            if panic {
                panic!("rank 1 panics at step 3 on purpose");
            }
            return Err(Error::custom(
                "rank 1 returns an error at step 3 on purpose",
            ));
        }
        let mut g = model(r, SIZES);
        dist.all_reduce_mean(&mut g)?;
    }
    Ok(())
}
