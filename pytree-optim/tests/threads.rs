//! What a transformation does travels as values (the masks, the exec
//! mode, the reduction of leaf sums: a `Context`), not in thread-locals:
//! stepped inside a rayon task or on a thread of its own, under every
//! wrapper, it gives the bits it gives on the caller's thread.

use pytree_optim::{
    adam, chain, clip_by_global_norm, global_norm_in, masked, multi_transform, sgd, step_in,
    Context, Exec, GradientTransformation, Mask, Wrap,
};
use pytree_std::{Error, KeyPath};

type Tree = (Vec<f32>, Vec<f32>, f32);

fn tree(scale: f32) -> Tree {
    let a = (0..40_000)
        .map(|i| scale * ((i % 7) as f32 - 3.0))
        .collect();
    let b = (0..50).map(|i| scale * (i as f32 * 0.1 - 2.0)).collect();
    (a, b, scale)
}

/// Three steps of `opt` from fixed parameters and gradients: the
/// parameters' bits.
fn steps<T: GradientTransformation<Tree>>(opt: &T) -> Vec<u32> {
    let mut params = tree(1.0);
    let mut state = opt.init(&params).unwrap();
    for t in 0..3 {
        let mut grads = tree(0.5 + t as f32);
        opt.step(&mut params, &mut grads, &mut state).unwrap();
    }
    let (a, b, c) = params;
    a.iter()
        .chain(&b)
        .chain([&c])
        .map(|x| x.to_bits())
        .collect()
}

/// Whether `p` is under the tuple's field `i` (`.i` or `[i]`).
fn under(p: &KeyPath, i: usize) -> bool {
    let s = p.to_string();
    s.starts_with(&format!(".{i}")) || s.starts_with(&format!("[{i}]"))
}

fn not_b() -> Mask {
    Mask::new(|p: &KeyPath| !under(p, 1))
}

/// The same bits on the caller's thread, on a spawned thread and inside a
/// rayon task (on one of rayon's threads, the caller waiting).
fn same_everywhere<T: GradientTransformation<Tree> + Sync>(opt: &T) {
    let here = steps(opt);
    let spawned = std::thread::scope(|s| s.spawn(|| steps(opt)).join().unwrap());
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let (in_task, _) = pool.install(|| rayon::join(|| steps(opt), || ()));
    assert_eq!(here, spawned);
    assert_eq!(here, in_task);
}

#[test]
fn masked_steps_give_the_callers_bits_on_other_threads() {
    same_everywhere(&masked(adam(0.1), not_b()));
    same_everywhere(&adam(0.1).mask(not_b()));
    same_everywhere(&chain(clip_by_global_norm(1.0), sgd(0.1).momentum(0.9)).mask(not_b()));
    same_everywhere(&adam(0.1).mask(not_b()).exec(Exec::Sequential));
    let label = |p: &KeyPath| if under(p, 0) { "a" } else { "b" };
    same_everywhere(
        &multi_transform(label)
            .group("a", adam(0.1))
            .group("b", chain(clip_by_global_norm(0.5), sgd(0.2))),
    );
}

#[test]
fn a_masked_step_differs_from_an_unmasked_one() {
    // The check above would pass if the mask were lost everywhere alike.
    assert_ne!(steps(&adam(0.1).mask(not_b())), steps(&adam(0.1)));
    let masked = steps(&adam(0.1).mask(not_b()));
    let b0: Vec<u32> = tree(1.0).1.iter().map(|x| x.to_bits()).collect();
    assert_eq!(masked[40_000..40_050], b0[..]);
}

#[test]
fn the_leaf_sums_reach_a_step_run_on_another_thread() {
    // A leaf of another process holds a sum of squares of 9.
    let other = |sums: &mut [f64]| -> Result<(), Error> {
        sums[1] += 9.0;
        Ok(())
    };
    let cx = Context::default().leaf_sums(&other);
    let opt = chain(clip_by_global_norm(1.0), sgd(1.0));
    let run = |cx: &Context<'_>| {
        let mut params = (vec![0.0f32], vec![0.0f32], 0.0f32);
        let mut state = opt.init(&params).unwrap();
        let mut grads = (vec![4.0f32], vec![0.0f32], 0.0f32);
        step_in(&opt, cx, &mut params, &mut grads, &mut state).unwrap();
        params.0[0]
    };
    let here = run(&cx);
    let spawned = std::thread::scope(|s| {
        s.spawn(|| run(&Context::default().leaf_sums(&other)))
            .join()
            .unwrap()
    });
    assert_eq!(here, -0.8); // the norm is 5, not 4
    assert_eq!(spawned, here);
    assert_eq!(run(&Context::default()), -1.0);
    assert_eq!(
        global_norm_in(&cx, &(vec![4.0f32], vec![0.0f32], 0.0f32)).unwrap(),
        5.0
    );
}
