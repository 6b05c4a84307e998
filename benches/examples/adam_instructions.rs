//! Instructions per parameter of one Adam step, for callgrind
//! (`benches/scripts/adam_instructions.sh`): pytree-optim's fused `adam(..).step`
//! against the hand-written fused loop, on a GPT-2-shaped tree of about 6M
//! parameters (148 arrays, the shapes of GPT-2 small scaled down: d 256,
//! vocab 8192, ctx 512, 12 blocks). Steady where wall time on a shared
//! machine is not.
//!
//! `cargo run --release -p pytree-benches --example adam_instructions -- <optim|hand> <steps>`

use std::hint::black_box;

use pytree_benches::gpt2::{adam_hand, Dims, Gpt2, HandAdam};
use pytree_optim::{adam, GradientTransformation};

/// The model of the instruction counts.
pub const DIMS: Dims = Dims {
    d: 256,
    vocab: 8192,
    ctx: 512,
    layers: 12,
};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let which = args.get(1).map(String::as_str).unwrap_or("optim");
    let steps: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut p = Gpt2::new(DIMS, 1, 0.02);
    let g = Gpt2::new(DIMS, 2, 1e-3);
    match which {
        "optim" => {
            let opt = adam(1e-3);
            let mut state = opt.init(&p).expect("init");
            let mut g = g;
            run_optim(&opt, &mut p, &mut g, &mut state, steps);
        }
        "hand" => {
            let (mut m, mut v) = (Gpt2::new(DIMS, 0, 0.0), Gpt2::new(DIMS, 0, 0.0));
            run_hand(&mut p, &mut m, &mut v, &g, steps);
        }
        other => panic!("unknown implementation {other}: optim or hand"),
    }
    println!(
        "{} parameters, {}",
        DIMS.parameters(),
        black_box(&p).wte[[0, 0]]
    );
}

#[inline(never)]
fn run_optim<T: GradientTransformation<Gpt2>>(
    opt: &T,
    p: &mut Gpt2,
    g: &mut Gpt2,
    state: &mut T::State,
    steps: u64,
) {
    for _ in 0..steps {
        opt.step(black_box(&mut *p), black_box(&mut *g), state)
            .expect("step");
    }
}

#[inline(never)]
fn run_hand(p: &mut Gpt2, m: &mut Gpt2, v: &mut Gpt2, g: &Gpt2, steps: u64) {
    for t in 0..steps {
        adam_hand(
            black_box(&mut *p),
            m,
            v,
            black_box(g),
            HandAdam::new(1e-3, t),
        );
    }
}
