//! The Adam benchmark's two sides compute the same thing: pytree-optim's
//! `adam` on the GPT-2-shaped tree and the hand-written fused loop over
//! its arrays (`pytree_benches::gpt2`), on a small model of the same
//! structure; and the benchmark's tree has GPT-2 small's leaf count.

use pytree_benches::gpt2::{adam_hand, adam_hand_parallel, Dims, Gpt2, HandAdam};
use pytree_optim::{adam, GradientTransformation};

const TINY: Dims = Dims {
    d: 8,
    vocab: 50,
    ctx: 16,
    layers: 2,
};

#[test]
fn the_library_step_equals_the_hand_written_loop_bit_for_bit() {
    let opt = adam(1e-3);
    let mut p = Gpt2::new(TINY, 1, 0.02);
    let mut state = opt.init(&p).unwrap();
    let (mut hp, mut hm, mut hv) = (p.clone(), Gpt2::new(TINY, 0, 0.0), Gpt2::new(TINY, 0, 0.0));
    let (mut qp, mut qm, mut qv) = (hp.clone(), hm.clone(), hv.clone());
    for t in 0..3 {
        let g = Gpt2::new(TINY, 10 + t, 1e-3);
        opt.step(&mut p, &mut g.clone(), &mut state).unwrap();
        adam_hand(&mut hp, &mut hm, &mut hv, &g, HandAdam::new(1e-3, t));
        adam_hand_parallel(&mut qp, &mut qm, &mut qv, &g, HandAdam::new(1e-3, t), 7);
    }
    assert_eq!(p, hp);
    assert_eq!((&state.0.mu, &state.0.nu), (&hm, &hv));
    assert_eq!((qp, qm, qv), (hp, hm, hv));
    assert_ne!(p, Gpt2::new(TINY, 1, 0.02));
}

#[test]
fn the_benchmark_tree_has_gpt2_smalls_shapes() {
    assert_eq!(Dims::SMALL.parameters(), 124_439_808);
    let tiny = Gpt2::new(TINY, 0, 0.0);
    assert_eq!(pytree_std::leaves(&tiny).len(), 2 + 12 * TINY.layers + 2);
    assert_eq!(2 + 12 * Dims::SMALL.layers + 2, 148);
    let elements: usize = pytree_std::leaves(&tiny).iter().map(|a| a.len()).sum();
    assert_eq!(elements, TINY.parameters());
    let names: Vec<String> = pytree_std::paths::leaves_with_path(&tiny)
        .iter()
        .take(5)
        .map(|(p, _)| p.to_string())
        .collect();
    assert_eq!(
        names,
        [
            ".wte",
            ".wpe",
            ".h[0].ln_1.g",
            ".h[0].ln_1.b",
            ".h[0].attn.c_attn.w"
        ]
    );
}
