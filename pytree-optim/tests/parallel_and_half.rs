//! `.parallel()` (feature `rayon`) gives the sequential results bit for
//! bit, on arrays long enough to be split; `half` floats compute in `f32`.

#[cfg(all(feature = "rayon", feature = "ndarray"))]
mod parallel {
    use pytree_optim::{
        adam, adamw, chain, clip_by_global_norm, sgd, EmaOfParams, Exec, GradientTransformation,
        Wrap, GRAIN,
    };
    use pytree_std::ndarray::{Array1, Array2};
    use pytree_std::PyTree;

    #[derive(PyTree, Clone, Debug, PartialEq)]
    struct Model {
        big: Array2<f32>,
        small: Array1<f32>,
        odd: Array1<f32>,
    }

    fn model(seed: u32) -> Model {
        let f = |i: usize| {
            (((i as u32).wrapping_mul(2_654_435_761) ^ seed) % 2001) as f32 / 1000.0 - 1.0
        };
        Model {
            big: Array2::from_shape_fn((5, GRAIN), |(r, c)| f(r * GRAIN + c)),
            small: Array1::from_shape_fn(100, f),
            odd: Array1::from_shape_fn(3 * GRAIN + 17, |i| f(i + 7)),
        }
    }

    fn same<T, U>(seq: T, par: U)
    where
        T: GradientTransformation<Model>,
        U: GradientTransformation<Model, State = T::State>,
        T::State: PartialEq + std::fmt::Debug,
    {
        let (mut a, mut b) = (model(1), model(1));
        let (mut sa, mut sb) = (seq.init(&a).unwrap(), par.init(&b).unwrap());
        for t in 0..3 {
            seq.step(&mut a, &mut model(10 + t), &mut sa).unwrap();
            par.step(&mut b, &mut model(10 + t), &mut sb).unwrap();
            let (mut ua, mut ub) = (model(20 + t), model(20 + t));
            seq.update(&mut ua, &mut sa, &a).unwrap();
            par.update(&mut ub, &mut sb, &b).unwrap();
            assert_eq!(ua, ub);
        }
        assert_eq!(a, b);
        assert_eq!(sa, sb);
        assert_ne!(a, model(1));
    }

    #[test]
    fn parallel_steps_give_the_sequential_bits() {
        same(sgd(0.1).momentum(0.9), sgd(0.1).momentum(0.9).parallel());
        same(adam(0.01), adam(0.01).parallel());
        same(adamw(0.01, 0.1), adamw(0.01, 0.1).exec(Exec::Parallel));
        // The clipping norm is summed in the same blocks in both modes.
        same(
            chain(clip_by_global_norm(1.0), adamw(0.01, 0.1)),
            chain(
                clip_by_global_norm(1.0).parallel(),
                adamw(0.01, 0.1).parallel(),
            ),
        );
    }

    #[test]
    fn a_parallel_moving_average_matches_too() {
        let mut a = EmaOfParams::new(0.9, &model(1)).unwrap();
        let mut b = EmaOfParams::new(0.9, &model(1))
            .unwrap()
            .exec(Exec::Parallel);
        for t in 0..3 {
            a.update(&model(t)).unwrap();
            b.update(&model(t)).unwrap();
        }
        assert_eq!(a.average(), b.average());
    }
}

#[cfg(feature = "half")]
mod half {
    use pytree_optim::{adam, GradientTransformation};
    use pytree_std::half::{bf16, f16};
    use pytree_std::PyTree;

    #[derive(PyTree, Clone, Debug, PartialEq)]
    struct H<T> {
        w: Vec<T>,
    }

    #[test]
    fn half_floats_take_adams_first_step() {
        // Adam's first step moves each parameter by lr against its gradient's sign.
        let opt = adam(0.125);
        let mut p = H {
            w: vec![f16::from_f32(1.0), f16::from_f32(-1.0)],
        };
        let mut s = opt.init(&p).unwrap();
        let mut g = H {
            w: vec![f16::from_f32(0.5), f16::from_f32(-3.0)],
        };
        opt.step(&mut p, &mut g, &mut s).unwrap();
        assert_eq!(p.w, [f16::from_f32(0.875), f16::from_f32(-0.875)]);

        let mut p = H {
            w: vec![bf16::from_f32(2.0)],
        };
        let mut s = opt.init(&p).unwrap();
        opt.step(
            &mut p,
            &mut H {
                w: vec![bf16::from_f32(1.0)],
            },
            &mut s,
        )
        .unwrap();
        assert_eq!(p.w, [bf16::from_f32(1.875)]);
        assert_eq!(s.0.mu.w, [bf16::from_f32(0.1)]);
    }

    #[cfg(feature = "ndarray")]
    #[test]
    fn half_arrays_too() {
        use pytree_std::ndarray::Array1;
        #[derive(PyTree, Clone, Debug, PartialEq)]
        struct A {
            w: Array1<f16>,
        }
        let opt = pytree_optim::sgd(0.5);
        let mut p = A {
            w: Array1::from(vec![f16::from_f32(1.0); 4]),
        };
        let mut s = opt.init(&p).unwrap();
        opt.step(
            &mut p,
            &mut A {
                w: Array1::from(vec![f16::from_f32(1.0); 4]),
            },
            &mut s,
        )
        .unwrap();
        assert_eq!(p.w, Array1::from(vec![f16::from_f32(0.5); 4]));
    }
}
