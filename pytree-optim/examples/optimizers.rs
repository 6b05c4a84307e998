use pytree_optim::{
    adamw, chain, clip_by_global_norm, warmup_cosine_decay_schedule, EmaOfParams,
    GradientTransformation, Mask, Wrap,
};
use pytree_std::ndarray::{Array1, Array2};
use pytree_std::{KeyPath, PyTree};

#[derive(PyTree, Clone, Debug)]
struct Linear {
    w: Array2<f32>,
    b: Array1<f32>,
}

#[derive(PyTree, Clone, Debug)]
struct Model {
    layers: Vec<Linear>,
    #[pytree(kind = "state")]
    seen: Array1<f32>, // a running statistic: never optimized
}

fn main() -> Result<(), pytree_std::Error> {
    let linear = |i, o| Linear {
        w: Array2::from_elem((i, o), 0.1),
        b: Array1::zeros(o),
    };
    let mut model = Model {
        layers: vec![linear(4, 8), linear(8, 2)],
        seen: Array1::zeros(1),
    };

    // Clip, then AdamW with warm-up + cosine decay and no decay on biases,
    // on the parameters only (`Mask::params()`: not on kind "state").
    let lr = warmup_cosine_decay_schedule(0.0, 1e-2, 10, 100, 1e-4);
    let no_bias = Mask::new(|p: &KeyPath| !p.to_string().ends_with(".b"));
    let opt = chain(
        clip_by_global_norm(1.0),
        adamw(lr, 1e-4).weight_decay_mask(no_bias),
    )
    .mask(Mask::params());
    let mut state = opt.init(&model)?; // Adam's mu and nu are Models too
    let mut ema = EmaOfParams::new(0.99, &model)?; // an average of the weights, for evaluation

    for _ in 0..100 {
        // Gradients are a tree of the model's type (here: pull every weight to 1).
        let mut grads = model.clone();
        for l in &mut grads.layers {
            l.w.mapv_inplace(|w| w - 1.0);
            l.b.fill(0.0);
        }
        grads.seen.fill(1.0);
        opt.step(&mut model, &mut grads, &mut state)?; // one fused pass per leaf
        ema.update(&model)?;
    }
    assert!(model.layers[0].w.iter().all(|&w| w > 0.5));
    assert_eq!(model.seen[0], 0.0); // kind "state": untouched
    assert!(ema.average().layers[0].w[[0, 0]] < model.layers[0].w[[0, 0]]);

    // A gradient of another shape is an error naming the path; nothing changed.
    let mut odd = model.clone();
    odd.layers[1].w = Array2::zeros((2, 8));
    let before = model.layers[1].w.clone();
    let err = opt.step(&mut model, &mut odd, &mut state).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at .layers[1].w: leaf signature mismatch: expected f32[8,2], found f32[2,8]"
    );
    assert_eq!(model.layers[1].w, before);
    Ok(())
}
