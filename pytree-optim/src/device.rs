//! The optimizers' element updates as device programs: every
//! [`ElementUpdate`] a transformation runs (Adam's moments and direction,
//! the trace's momentum and Nesterov, the EMAs, the learning-rate scaling
//! and decayed weights of the tail into the parameters or the updates,
//! the clip's scale, `apply_updates`, `set_to_zero`), recorded by
//! pytree-std's [`codegen`] into the [`Program`] its CUDA kernel is
//! printed from: the update's one definition (`rules.rs`) is also the
//! source of its device code.

use pytree_std::elements::codegen::{self, record, DeviceFloat, Program};
use pytree_std::elements::ElementUpdate;
use pytree_std::Error;

use crate::rules::{
    AdamK, AdamUpdate, AddTo, Assign, Average, Clip, Gradient, Momentum, Tail, TailK, TailUpdate,
    TraceUpdate, Zero,
};

/// One element update of the optimizers, recorded: its name (a C
/// identifier, the kernel's) and its [`Program`], with sample constants
/// (a transformation records its own each step: the constants change, the
/// code does not, see [`Program::same_code`]).
///
/// ```
/// let all = pytree_optim::device_updates();
/// let adam = all.iter().find(|u| u.name() == "adam_params_decay").unwrap();
/// assert_eq!((adam.program().muts(), adam.program().refs()), (3, 1));
/// ```
#[derive(Clone, Debug)]
pub struct DeviceUpdate {
    name: &'static str,
    program: Program,
}

impl DeviceUpdate {
    /// The name, also the kernel's.
    ///
    /// ```
    /// assert_eq!(pytree_optim::device_updates()[0].name(), "zero");
    /// ```
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The recorded program.
    ///
    /// ```
    /// assert_eq!(pytree_optim::device_updates()[0].program().refs(), 0);
    /// ```
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// The CUDA C source of its multi-tensor kernel over `float` elements
    /// ([`codegen::cuda_source`]).
    ///
    /// ```
    /// use pytree_std::elements::codegen::DeviceFloat;
    /// let src = pytree_optim::device_updates()[0].cuda_source(DeviceFloat::F32)?;
    /// assert!(src.contains("extern \"C\" __global__ void __launch_bounds__(256) zero("));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn cuda_source(&self, float: DeviceFloat) -> Result<String, Error> {
        codegen::cuda_source(&self.program, self.name, float)
    }
}

/// Called with every element update of the optimizers, by name.
pub(crate) trait Visit {
    fn visit<U: ElementUpdate<f64, N, M>, const N: usize, const M: usize>(
        &mut self,
        name: &'static str,
        update: &U,
    );
}

/// Sample constants of Adam: `adamw(1e-3, 0.01)`'s at its first step (as
/// `ScaleByAdam::constants` makes them), so that the programs of Adam
/// into the parameters are that optimizer's first step.
pub(crate) fn sample_adam() -> AdamK<f64> {
    let (b1, b2) = (0.9f64, 0.999f64);
    AdamK {
        b1,
        b2,
        one_minus_b1: 1.0 - b1,
        one_minus_b2: 1.0 - b2,
        inv_c1: 1.0 / (1.0 - b1.powf(1.0)),
        inv_c2: 1.0 / (1.0 - b2.powf(1.0)),
        eps: 1e-8,
        eps_root: 0.0,
    }
}

/// The sample tail: the learning rate `1e-3` with weight decay `0.01`
/// (`adamw(1e-3, 0.01)`'s; the forms without decay are `sgd(1e-3)`'s).
pub(crate) fn sample_tail() -> Tail {
    Tail {
        factor: -1e-3,
        weight_decay: 0.01,
        decay_mask: None,
    }
}

/// Each fused update's four forms: into the parameters (reading the
/// gradients) or into the updates (reading the parameters where the leaf
/// decays), with and without weight decay.
macro_rules! fused_forms {
    ($v:expr, $ty:ident, $dir:expr, $tail:expr, $n:literal,
     $pd:literal, $p:literal, $ud:literal, $u:literal) => {{
        let (dir, tail) = (&$dir, &$tail);
        $v.visit::<_, $n, 1>($pd, &$ty::<f64, true, true>(dir, tail));
        $v.visit::<_, $n, 1>($p, &$ty::<f64, true, false>(dir, tail));
        $v.visit::<_, $n, 1>($ud, &$ty::<f64, false, true>(dir, tail));
        $v.visit::<_, $n, 0>($u, &$ty::<f64, false, false>(dir, tail));
    }};
}

/// Calls `v` with every element update the transformations run, in a
/// fixed order, with sample constants: the trace's momentum `0.9`, the
/// EMAs' decay `0.99`, Adam's and the tail's of `adamw(1e-3, 0.01)` at its
/// first step ([`sample_adam`], [`sample_tail`]).
pub(crate) fn for_each_update(v: &mut impl Visit) {
    v.visit::<_, 1, 0>("zero", &Zero);
    v.visit::<_, 1, 1>("assign", &Assign);
    v.visit::<_, 1, 1>("add_to", &AddTo);
    v.visit::<_, 1, 0>(
        "clip",
        &Clip {
            norm: 3.5,
            max: 1.25,
        },
    );
    v.visit::<_, 1, 1>("ema_params", &Average::<f64>::new(0.99, None));
    v.visit::<_, 2, 0>("ema_updates", &Average::<f64>::new(0.99, None));
    v.visit::<_, 2, 0>(
        "ema_updates_corrected",
        &Average::<f64>::new(0.99, Some(0.0297)),
    );
    let tail = TailK::new(&sample_tail());
    fused_forms!(
        v,
        TailUpdate,
        Gradient::<f64>::new(),
        tail,
        1,
        "tail_params_decay",
        "tail_params",
        "tail_updates_decay",
        "tail_updates"
    );
    fused_forms!(
        v,
        TraceUpdate,
        Momentum {
            mu: 0.9f64,
            nesterov: false
        },
        tail,
        2,
        "trace_params_decay",
        "trace_params",
        "trace_updates_decay",
        "trace_updates"
    );
    fused_forms!(
        v,
        TraceUpdate,
        Momentum {
            mu: 0.9f64,
            nesterov: true
        },
        tail,
        2,
        "nesterov_params_decay",
        "nesterov_params",
        "nesterov_updates_decay",
        "nesterov_updates"
    );
    fused_forms!(
        v,
        AdamUpdate,
        sample_adam(),
        tail,
        3,
        "adam_params_decay",
        "adam_params",
        "adam_updates_decay",
        "adam_updates"
    );
}

/// Every element update the optimizers run, recorded for the device (see
/// [`DeviceUpdate`]): the zeroing of `set_to_zero`, the copy and the
/// addition of `apply_updates` and the EMAs, the clip's scale, the EMA of
/// the parameters and of the updates (with and without bias correction),
/// and the tail alone, the trace (with and without Nesterov) and Adam,
/// each into the parameters or the updates, with and without weight
/// decay. pytree-optim's GPU check (`benches/cuda`) compiles and runs each.
///
/// ```
/// let names: Vec<_> = pytree_optim::device_updates().iter().map(|u| u.name()).collect();
/// assert!(names.contains(&"adam_updates") && names.contains(&"nesterov_params_decay"));
/// assert_eq!(names.len(), 23);
/// ```
pub fn device_updates() -> Vec<DeviceUpdate> {
    struct Recorder(Vec<DeviceUpdate>);
    impl Visit for Recorder {
        fn visit<U: ElementUpdate<f64, N, M>, const N: usize, const M: usize>(
            &mut self,
            name: &'static str,
            update: &U,
        ) {
            self.0.push(DeviceUpdate {
                name,
                program: record(update),
            });
        }
    }
    let mut r = Recorder(Vec::new());
    for_each_update(&mut r);
    r.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use pytree_std::elements::codegen::Node;
    use pytree_std::elements::{zip_slices, Exec, Float};

    /// splitmix64.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
        /// Mostly ordinary numbers of every sign and magnitude, some
        /// zeros, subnormals, infinities and NaNs.
        fn value(&mut self) -> f64 {
            let r = self.next();
            let unit = (r >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0;
            match r % 64 {
                0 => 0.0,
                1 => -0.0,
                2 => f64::INFINITY,
                3 => f64::NEG_INFINITY,
                4 => f64::NAN,
                5 => unit * 1e-40,
                6 => unit * 1e-310,
                _ => unit * 10f64.powi((r >> 8) as i32 % 24 - 12),
            }
        }
    }

    /// Equal bits, or both NaN (a NaN's payload is the hardware's: the
    /// CPU's loops and a GPU may propagate different ones).
    fn same<T: Float>(a: T, b: T) -> bool {
        let (a, b) = (a.to_f64(), b.to_f64());
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    /// Runs each update through the CPU's element loop ([`zip_slices`], as
    /// candle's CPU path runs it: `f32` elements with `f64` constants
    /// rounded at each use, and `f64`) and its recorded program through
    /// the interpreter, on the same random inputs, and counts the element
    /// positions where they differ.
    struct BitCheck {
        seed: u64,
        len: usize,
        checked: Vec<&'static str>,
        failures: Vec<String>,
    }

    impl BitCheck {
        fn run<T, U, const N: usize, const M: usize>(&mut self, name: &str, update: &U)
        where
            T: Float
                + pytree_std::elements::FloatElement<Compute = T>
                + pytree_std::elements::Arith<f64>,
            U: ElementUpdate<f64, N, M>,
        {
            let prog = record(update);
            let mut rng = Rng(self.seed);
            let mut data =
                |_| -> Vec<T> { (0..self.len).map(|_| T::from_f64(rng.value())).collect() };
            let start: [Vec<T>; N] = core::array::from_fn(&mut data);
            let reads: [Vec<T>; M] = core::array::from_fn(&mut data);
            let mut cpu = start.clone();
            zip_slices::<T, N, M, _>(
                cpu.each_mut().map(|v| &mut v[..]),
                reads.each_ref().map(|v| &v[..]),
                Exec::Sequential,
                &|ms, rs| update.apply(ms, rs),
            );
            for i in 0..self.len {
                let mut ms: Vec<T> = start.iter().map(|v| v[i]).collect();
                let rs: Vec<T> = reads.iter().map(|v| v[i]).collect();
                if let Err(e) = prog.eval(&mut ms, &rs) {
                    self.failures.push(format!("{name}: {e}"));
                    return;
                }
                for (k, m) in ms.iter().enumerate() {
                    if !same(*m, cpu[k][i]) {
                        self.failures.push(format!(
                            "{name} ({}): operand {k} at {i}: program {:?}, CPU {:?}",
                            core::any::type_name::<T>(),
                            m,
                            cpu[k][i]
                        ));
                    }
                }
            }
        }
    }

    impl Visit for BitCheck {
        fn visit<U: ElementUpdate<f64, N, M>, const N: usize, const M: usize>(
            &mut self,
            name: &'static str,
            update: &U,
        ) {
            self.run::<f32, U, N, M>(name, update);
            self.run::<f64, U, N, M>(name, update);
            self.checked.push(name);
        }
    }

    /// The recorded program of every update computes, in `f32` and in
    /// `f64`, the CPU loop's bits at every position (1031 elements: the
    /// AVX2 + FMA copy of the loop where the CPU has it, and its tail), on
    /// 16 draws of inputs with zeros, subnormals, infinities and NaNs.
    #[test]
    fn every_recorded_update_computes_the_cpu_bits() {
        let mut check = BitCheck {
            seed: 0,
            len: 1031,
            checked: Vec::new(),
            failures: Vec::new(),
        };
        for seed in 1..=16 {
            check.seed = seed;
            for_each_update(&mut check);
        }
        assert!(
            check.failures.is_empty(),
            "{} mismatches, first: {:?}",
            check.failures.len(),
            &check.failures[..check.failures.len().min(5)]
        );
        assert_eq!(check.checked.len(), 16 * device_updates().len());
    }

    /// The check above sees a difference: a program changed in one
    /// rounding (Adam's `eps` added before the square root) differs from
    /// the CPU on some inputs.
    #[test]
    fn the_bit_check_catches_a_changed_program() {
        struct Moved(AdamK<f64>);
        impl ElementUpdate<f64, 3, 1> for Moved {
            fn apply<T: pytree_std::elements::Arith<f64>>(
                &self,
                [p, m, v]: [&mut T; 3],
                [g]: [T; 1],
            ) {
                let a = &self.0;
                *m = g.clone().scale(a.one_minus_b1) + m.clone().scale(a.b1);
                *v = (g.clone() * g).scale(a.one_minus_b2) + v.clone().scale(a.b2);
                let d = m.clone().scale(a.inv_c1) / v.clone().affine(a.inv_c2, a.eps).sqrt();
                *p = p.clone() + d;
            }
        }
        let recorded = record(&Moved(sample_adam()));
        let tail = TailK::new(&Tail::scale(1.0));
        let adam = sample_adam();
        let real = AdamUpdate::<f64, true, false>(&adam, &tail);
        let mut rng = Rng(7);
        let differs = (0..1000).any(|_| {
            let g = rng.value() as f32;
            let (p, m, v) = (1.0f32, 0.1f32, (rng.value() * 1e-6).abs() as f32);
            let mut a = [p, m, v];
            let mut b = [p, m, v];
            recorded.eval(&mut a, &[g]).is_ok()
                && {
                    let [p, m, v] = &mut b;
                    real.apply([p, m, v], [g]);
                    true
                }
                && !a.iter().zip(&b).all(|(x, y)| same(*x, *y))
        });
        assert!(differs);
    }

    /// The clip's constants are `[norm, max]`, in that order: the slots the
    /// norm kernel (`pytree_sq_finish`) writes for the clip's `_dk` kernel.
    #[test]
    fn the_clip_reads_the_norm_then_the_maximum() {
        let clip = record(&Clip {
            norm: 3.0f64,
            max: 5.0,
        });
        assert_eq!(clip.consts(), [3.0, 5.0]);
        let all = device_updates();
        let listed = all.iter().find(|u| u.name() == "clip").map(|u| u.program());
        assert!(listed.is_some_and(|p| p.same_code(&clip)));
    }

    /// One program per transformation, whatever the step: Adam's constants
    /// at steps 1 and 1000 differ, its code does not; the recorded code
    /// reads each operand once and has one division and one square root.
    #[test]
    fn adam_records_one_code_for_every_step() {
        let tail = TailK::new(&Tail::scale(-1e-3));
        let mut late = sample_adam();
        late.inv_c1 = 1.0;
        late.inv_c2 = 1.0 / (1.0 - 0.999f64.powi(1000));
        let a = record(&AdamUpdate::<f64, true, false>(&sample_adam(), &tail));
        let b = record(&AdamUpdate::<f64, true, false>(&late, &tail));
        assert!(a.same_code(&b) && a.consts() != b.consts());
        let count = |f: fn(&Node) -> bool| a.nodes().iter().filter(|n| f(n)).count();
        assert_eq!(count(|n| matches!(n, Node::Mut(_) | Node::Ref(_))), 4);
        assert_eq!(count(|n| matches!(n, Node::Div(..))), 1);
        assert_eq!(count(|n| matches!(n, Node::Sqrt(_))), 1);
        assert_eq!(a.outputs().len(), 3);
        assert!((0..3).all(|i| a.writes(i)));
    }

    /// `ln` numbers drawn as gradients and parameters are (finite, of
    /// every sign, around 1e-3 to 1).
    fn moderate(rng: &mut Rng, n: usize, scale: f32) -> Vec<f32> {
        (0..n)
            .map(|_| ((rng.next() >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale)
            .collect()
    }

    /// The listed program of `name`, run by the interpreter on `p`, the
    /// states (zeros) and `g`: the new parameters.
    fn program_step(name: &str, p: &[f32], g: &[f32]) -> Vec<f32> {
        let all = device_updates();
        let Some(u) = all.iter().find(|u| u.name() == name) else {
            return Vec::new();
        };
        let prog = u.program();
        p.iter()
            .zip(g)
            .map(|(&p, &g)| {
                let mut ms = vec![0.0f32; prog.muts()];
                ms[0] = p;
                match prog.eval(&mut ms, &[g]) {
                    Ok(()) => ms[0],
                    Err(_) => f32::NAN,
                }
            })
            .collect()
    }

    /// The programs of Adam, the trace and Nesterov into the parameters
    /// are the optimizers' own first steps: `adamw(1e-3, 0.01)`,
    /// `sgd(1e-3).momentum(0.9)` and `.nesterov()` stepped on `f32`
    /// leaves by the CPU give the interpreter's bits on every element.
    #[test]
    fn the_listed_programs_are_the_optimizers_first_steps() {
        use crate::{adamw, sgd, GradientTransformation};
        let mut rng = Rng(11);
        let n = 4099;
        let p0 = moderate(&mut rng, n, 1.0);
        let g0 = moderate(&mut rng, n, 1e-2);
        let stepped = |opt: &dyn Fn(&mut Vec<f32>, &mut Vec<f32>)| {
            let (mut p, mut g) = (p0.clone(), g0.clone());
            opt(&mut p, &mut g);
            p
        };
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let adam = stepped(&|p, g| {
            let o = adamw(1e-3, 0.01);
            let mut s = o.init(p).expect("init");
            o.step(p, g, &mut s).expect("step");
        });
        assert_eq!(
            bits(&adam),
            bits(&program_step("adam_params_decay", &p0, &g0))
        );
        let trace = stepped(&|p, g| {
            let o = sgd(1e-3).momentum(0.9);
            let mut s = o.init(p).expect("init");
            o.step(p, g, &mut s).expect("step");
        });
        assert_eq!(bits(&trace), bits(&program_step("trace_params", &p0, &g0)));
        let nesterov = stepped(&|p, g| {
            let o = sgd(1e-3).momentum(0.9).nesterov();
            let mut s = o.init(p).expect("init");
            o.step(p, g, &mut s).expect("step");
        });
        assert_eq!(
            bits(&nesterov),
            bits(&program_step("nesterov_params", &p0, &g0))
        );
        assert_ne!(bits(&adam), bits(&p0));
    }

    /// Names are unique C identifiers, so each is a kernel's name.
    #[test]
    fn names_are_unique_kernel_names() {
        let all = device_updates();
        let mut names: Vec<_> = all.iter().map(|u| u.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len());
        for u in &all {
            assert!(u.cuda_source(DeviceFloat::F32).is_ok(), "{}", u.name());
        }
    }

    /// The emitted CUDA C, pinned: Adam into the parameters with weight
    /// decay (`f32`), the clip reading its constants from the device, and
    /// the norm's kernels.
    #[test]
    fn snapshots_of_the_emitted_source() {
        let all = device_updates();
        let find = |n: &str| all.iter().find(|u| u.name() == n);
        let adam = find("adam_params_decay").map(|u| u.cuda_source(DeviceFloat::F32));
        insta::assert_snapshot!(
            "adam_params_decay_f32",
            adam.and_then(Result::ok).unwrap_or_default()
        );
        let nesterov = find("nesterov_updates").map(|u| u.cuda_source(DeviceFloat::F64));
        insta::assert_snapshot!(
            "nesterov_updates_f64",
            nesterov.and_then(Result::ok).unwrap_or_default()
        );
        let clip = find("clip").map(|u| u.cuda_source(DeviceFloat::F32));
        insta::assert_snapshot!("clip_f32", clip.and_then(Result::ok).unwrap_or_default());
        insta::assert_snapshot!("norm_f32", codegen::norm_source(DeviceFloat::F32));
    }
}
