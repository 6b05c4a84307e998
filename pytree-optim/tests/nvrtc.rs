//! Every generated CUDA kernel compiles: the multi-tensor kernel of each
//! of the optimizers' element updates (`pytree_optim::device_updates`),
//! for `f32` and `f64` elements, and the global norm's kernels, compiled
//! to PTX for Hopper (`compute_90`) by NVRTC, loaded at run time (NVIDIA's
//! `nvidia-cuda-nvrtc` wheel, CUDA 13; `.ci/run` installs it and puts it on
//! `LD_LIBRARY_PATH`). No GPU is needed. Without the library the test
//! fails in CI (`CI=true`) and is skipped, saying why, elsewhere.

use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};
use pytree_std::elements::codegen::{norm_source, DeviceFloat};

/// Whether NVRTC can be loaded; in CI its absence is a failure.
fn nvrtc_present() -> bool {
    // SAFETY: `is_culib_present` only tries to open the library by its
    // usual names (dlopen); it calls nothing in it.
    if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return true;
    }
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    assert!(
        !ci,
        "CI=true but libnvrtc is not on LD_LIBRARY_PATH (.ci/run installs nvidia-cuda-nvrtc 13.0)"
    );
    eprintln!("skipped: libnvrtc (CUDA 13) not found on LD_LIBRARY_PATH; .ci/run installs it");
    false
}

/// The options the kernels are built with at run time: no flushing of
/// subnormals, IEEE division and square root, no contraction.
fn options() -> CompileOptions {
    CompileOptions {
        ftz: Some(false),
        prec_div: Some(true),
        prec_sqrt: Some(true),
        fmad: Some(false),
        arch: Some("compute_90"),
        ..Default::default()
    }
}

/// Compiles `src`, failing with NVRTC's log if it rejects it, and returns
/// the PTX.
fn compile(name: &str, src: &str) -> String {
    match compile_ptx_with_opts(src, options()) {
        Ok(ptx) => ptx.to_src(),
        Err(e) => panic!("NVRTC rejected the source of {name}: {e:?}\n{src}"),
    }
}

/// The PTX's instructions that fuse a multiply and an add.
fn fused_ops(ptx: &str) -> Vec<&str> {
    ptx.lines()
        .map(str::trim)
        .filter(|l| l.starts_with("fma.") || l.starts_with("mad."))
        .filter(|l| l.contains(".f32") || l.contains(".f64"))
        .collect()
}

#[test]
fn every_update_kernel_compiles_to_ptx_with_no_fused_multiply_add() {
    if !nvrtc_present() {
        return;
    }
    let updates = pytree_optim::device_updates();
    assert!(updates.len() >= 23);
    for u in &updates {
        for float in [DeviceFloat::F32, DeviceFloat::F64] {
            let src = match u.cuda_source(float) {
                Ok(s) => s,
                Err(e) => panic!("{}: {e}", u.name()),
            };
            let ptx = compile(u.name(), &src);
            for entry in [u.name().to_string(), format!("{}_dk", u.name())] {
                assert!(
                    ptx.contains(&format!(".entry {entry}(")),
                    "{}: no entry {entry} in the PTX",
                    u.name()
                );
            }
            let fused = fused_ops(&ptx);
            assert!(
                fused.is_empty(),
                "{} ({float:?}): the CPU rounds every operation, the PTX fuses: {fused:?}",
                u.name()
            );
        }
    }
}

#[test]
fn the_norm_kernels_compile_to_ptx_with_no_fused_multiply_add() {
    if !nvrtc_present() {
        return;
    }
    for float in [DeviceFloat::F32, DeviceFloat::F64] {
        let ptx = compile("the norm kernels", &norm_source(float));
        assert!(
            ptx.contains(".entry pytree_sq_partials(") && ptx.contains(".entry pytree_sq_finish(")
        );
        assert!(
            fused_ops(&ptx).is_empty(),
            "{float:?}: {:?}",
            fused_ops(&ptx)
        );
    }
}

/// NVRTC is really checking: a source with an error is rejected.
#[test]
fn nvrtc_rejects_a_broken_source() {
    if !nvrtc_present() {
        return;
    }
    let broken = "extern \"C\" __global__ void k(float* x) { x[0] = __fmul_rn(x[0]); }";
    assert!(compile_ptx_with_opts(broken, options()).is_err());
}

/// The check for fused instructions sees one: `a * b + c` written plainly,
/// compiled with contraction allowed, is one `fma.rn.f32`.
#[test]
fn a_plain_multiply_add_compiles_to_a_fused_one() {
    if !nvrtc_present() {
        return;
    }
    let src = "extern \"C\" __global__ void k(float* x) { x[0] = x[0] * x[1] + x[2]; }";
    let opts = CompileOptions {
        fmad: Some(true),
        ..options()
    };
    let ptx = match compile_ptx_with_opts(src, opts) {
        Ok(p) => p.to_src(),
        Err(e) => panic!("{e:?}"),
    };
    assert_eq!(fused_ops(&ptx).len(), 1, "{ptx}");
}
