//! The GPU check of issue 37: every element update of pytree-optim as a
//! generated multi-tensor CUDA kernel (one launch for all tensors), run on
//! the GPU and compared bit for bit (NaN with NaN) with the recorded
//! program run on the CPU (which the unit tests hold to the CPU loops'
//! bits); AdamW's first step, the global norm and the clip against
//! pytree-optim's own CPU path over candle tensors; then timings on GPT-2
//! small (148 f32 tensors, 124,439,808 parameters). Exits 1 if any check
//! fails. Run by run.sh (README.md).
use std::sync::Arc;
use std::time::Instant;

use candle_core::{Device, Tensor};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};
use pytree_benches::gpt2::{Dims, Gpt2};
use pytree_optim::{
    adamw, clip_by_global_norm, device_updates, global_norm, GradientTransformation,
};
use pytree_std::elements::codegen::{
    launch_clip, launch_norm, launch_update, DeviceFloat, DeviceTable, NormScratch, Program,
    TensorTable,
};
use pytree_std::elements::Float;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// splitmix64, and values of every sign and magnitude with zeros,
/// subnormals, infinities and NaNs (as the unit tests draw them).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
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

/// A device buffer of one tensor at an element offset inside its
/// allocation (odd offsets: addresses aligned to the element only).
struct Buf<T> {
    mem: CudaSlice<T>,
    offset: usize,
    len: usize,
}

impl<T: cudarc::driver::DeviceRepr + Copy + Default> Buf<T> {
    fn new(stream: &Arc<CudaStream>, data: &[T], offset: usize) -> Res<Buf<T>> {
        let mut host = vec![T::default(); offset];
        host.extend_from_slice(data);
        Ok(Buf {
            mem: stream.clone_htod(&host)?,
            offset,
            len: data.len(),
        })
    }
    fn address(&self, stream: &Arc<CudaStream>) -> u64 {
        let (a, _sync) = self.mem.device_ptr(stream);
        a + (self.offset * std::mem::size_of::<T>()) as u64
    }
    fn read(&self, stream: &Arc<CudaStream>) -> Res<Vec<T>> {
        let v = stream.clone_dtoh(&self.mem)?;
        Ok(v[self.offset..self.offset + self.len].to_vec())
    }
}

fn same<T: Float>(a: T, b: T) -> bool {
    let (a, b) = (a.to_f64(), b.to_f64());
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// The operands of one tensor of `len` elements for `prog`: random data,
/// on the device at `offset`, and the expected results from the
/// interpreter.
fn check_update<T>(
    stream: &Arc<CudaStream>,
    name: &str,
    prog: &Program,
    float: DeviceFloat,
    lens: &[usize],
    rng: &mut Rng,
) -> Res<(usize, usize)>
where
    T: Float + cudarc::driver::DeviceRepr + Default,
{
    let mut table = TensorTable::update(prog, float);
    let mut bufs: Vec<Vec<Buf<T>>> = Vec::new();
    let mut want: Vec<Vec<Vec<T>>> = Vec::new();
    for (t, &len) in lens.iter().enumerate() {
        let ops = prog.muts() + prog.refs();
        let data: Vec<Vec<T>> = (0..ops)
            .map(|_| (0..len).map(|_| T::from_f64(rng.value())).collect())
            .collect();
        let mut expect: Vec<Vec<T>> = data[..prog.muts()].to_vec();
        for i in 0..len {
            let mut ms: Vec<T> = (0..prog.muts()).map(|k| data[k][i]).collect();
            let rs: Vec<T> = (prog.muts()..ops).map(|k| data[k][i]).collect();
            prog.eval(&mut ms, &rs)?;
            for (k, m) in ms.into_iter().enumerate() {
                expect[k][i] = m;
            }
        }
        let row: Vec<Buf<T>> = data
            .iter()
            .enumerate()
            .map(|(k, d)| Buf::new(stream, d, (t + k) % 5))
            .collect::<Res<_>>()?;
        let addresses: Vec<u64> = row.iter().map(|b| b.address(stream)).collect();
        table.push(len as u64, &addresses)?;
        bufs.push(row);
        want.push(expect);
    }
    // SAFETY: every address is a live allocation of this stream's context
    // holding its row's elements (`bufs` outlives the synchronization
    // below), and the operands of a row are distinct allocations.
    unsafe { launch_update(stream, prog, name, float, &table, &mut DeviceTable::new())? };
    stream.synchronize()?;
    let (mut bad, mut total) = (0, 0);
    for (row, expect) in bufs.iter().zip(&want) {
        for (b, e) in row.iter().zip(expect) {
            let got = b.read(stream)?;
            total += got.len();
            bad += got.iter().zip(e).filter(|(g, e)| !same(**g, **e)).count();
        }
    }
    Ok((bad, total))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// The GPT-2 small trees as flat `f32` vectors, leaf order.
fn flat(tree: &Gpt2) -> Vec<Vec<f32>> {
    pytree_std::leaves(tree)
        .into_iter()
        .map(|a| a.iter().copied().collect())
        .collect()
}

fn cpu_tensors(v: &[Vec<f32>]) -> Res<Vec<Tensor>> {
    Ok(v.iter()
        .map(|x| Tensor::from_slice(x, x.len(), &Device::Cpu))
        .collect::<Result<_, _>>()?)
}

fn host(v: &[Tensor]) -> Res<Vec<Vec<f32>>> {
    Ok(v.iter()
        .map(|t| t.to_vec1::<f32>())
        .collect::<Result<_, _>>()?)
}

fn differing(a: &[Vec<f32>], b: &[Vec<f32>]) -> usize {
    a.iter()
        .zip(b)
        .map(|(x, y)| x.iter().zip(y).filter(|(p, q)| !same(**p, **q)).count())
        .sum()
}

fn main() -> Res<()> {
    // SAFETY: only tries to open the driver's library by its usual names.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(
            "no CUDA driver (libcuda.so.1) on this machine: run this on a GPU machine".into(),
        );
    }
    let ctx = CudaContext::new(0)?;
    let stream = ctx.default_stream();
    let (major, minor) = ctx.compute_capability()?;
    println!("device 0: {} (compute {major}.{minor})", ctx.name()?);
    let mut failed = false;

    // 1. Every update, f32 and f64, odd sizes at odd offsets, one launch each.
    let odd = [
        1usize, 3, 7, 63, 64, 255, 256, 257, 4095, 4096, 4097, 65537, 1_000_003,
    ];
    let mut rng = Rng(37);
    for u in device_updates() {
        let (b32, n32) = check_update::<f32>(
            &stream,
            u.name(),
            u.program(),
            DeviceFloat::F32,
            &odd,
            &mut rng,
        )?;
        let (b64, n64) = check_update::<f64>(
            &stream,
            u.name(),
            u.program(),
            DeviceFloat::F64,
            &odd,
            &mut rng,
        )?;
        failed |= b32 + b64 > 0;
        println!("check {}: f32 {b32} of {n32} differ, f64 {b64} of {n64} differ ({} tensors, one launch)", u.name(), odd.len());
    }

    // 2. GPT-2 small: AdamW's first step, the norm and the clip against
    // pytree-optim's CPU path over candle tensors (f32).
    let dims = Dims::SMALL;
    let p0 = flat(&Gpt2::new(dims, 1, 0.02));
    let g0 = flat(&Gpt2::new(dims, 2, 1e-3));
    let n: usize = p0.iter().map(Vec::len).sum();
    println!("gpt-2 small: {} tensors, {n} parameters", p0.len());
    let zeros: Vec<Vec<f32>> = p0.iter().map(|x| vec![0.0; x.len()]).collect();
    let upload = |v: &[Vec<f32>]| -> Res<Vec<Buf<f32>>> {
        v.iter().map(|x| Buf::new(&stream, x, 0)).collect()
    };
    let (p, m, v, g) = (upload(&p0)?, upload(&zeros)?, upload(&zeros)?, upload(&g0)?);
    let all = device_updates();
    let find = |name: &str| {
        all.iter()
            .find(|u| u.name() == name)
            .map(|u| u.program().clone())
            .ok_or(name.to_string())
    };
    let adam = find("adam_params_decay")?;
    let mut adam_table = TensorTable::update(&adam, DeviceFloat::F32);
    for i in 0..p.len() {
        let a = [&p[i], &m[i], &v[i], &g[i]].map(|b| b.address(&stream));
        adam_table.push(p0[i].len() as u64, &a)?;
    }
    let mut adam_dev = DeviceTable::new();
    // The AdamW step over the whole model, once here and then timed.
    let adam_step = |dev: &mut DeviceTable| -> Res<()> {
        // SAFETY: the table's addresses are the live buffers above,
        // distinct, each of its tensor's length; the stream is synchronized
        // before they are read.
        unsafe {
            launch_update(
                &stream,
                &adam,
                "adam_params_decay",
                DeviceFloat::F32,
                &adam_table,
                dev,
            )?
        };
        Ok(())
    };
    adam_step(&mut adam_dev)?;
    stream.synchronize()?;
    let on_gpu: Vec<Vec<f32>> = p.iter().map(|b| b.read(&stream)).collect::<Res<_>>()?;
    let (mut cp, mut cg) = (cpu_tensors(&p0)?, cpu_tensors(&g0)?);
    let opt = adamw(1e-3, 0.01);
    let mut s = opt.init(&cp)?;
    opt.step(&mut cp, &mut cg, &mut s)?;
    let d = differing(&on_gpu, &host(&cp)?);
    failed |= d > 0;
    println!("check adamw(1e-3, 0.01) first step, generated kernel vs CPU (candle f32): {d} of {n} differ");

    // A table of one operand per tensor: the gradients.
    let of_grads = |mut table: TensorTable| -> Res<TensorTable> {
        for (b, x) in g.iter().zip(&g0) {
            table.push(x.len() as u64, &[b.address(&stream)])?;
        }
        Ok(table)
    };
    let norm_table = of_grads(TensorTable::norm(DeviceFloat::F32))?;
    let mut scratch = NormScratch::new();
    let cpu_norm = global_norm(&cpu_tensors(&g0)?)?;
    // The global norm of the gradients into `scratch` (with the clip's
    // factor for `max_norm`), once here and then timed.
    let norm_step = |scratch: &mut NormScratch, max_norm: f64| -> Res<()> {
        // SAFETY: the gradients' buffers above, live and not written
        // meanwhile.
        unsafe { launch_norm(&stream, DeviceFloat::F32, &norm_table, scratch, max_norm)? };
        Ok(())
    };
    norm_step(&mut scratch, cpu_norm / 2.0)?;
    let gpu_norm = scratch.norm(&stream)?;
    failed |= gpu_norm.to_bits() != cpu_norm.to_bits();
    println!(
        "check global_norm: gpu {gpu_norm:e}, cpu {cpu_norm:e}, same bits: {}",
        gpu_norm.to_bits() == cpu_norm.to_bits()
    );

    let clip_prog = find("clip")?;
    let clip_table = of_grads(TensorTable::update(&clip_prog, DeviceFloat::F32))?;
    // The clip of the gradients by the norm in `scratch`, once here and
    // then timed.
    let clip_step = |dev: &mut DeviceTable, scratch: &NormScratch| -> Res<()> {
        // SAFETY: the gradients' buffers, live; `scratch` holds the norm
        // just computed on this stream.
        unsafe {
            launch_clip(
                &stream,
                &clip_prog,
                "clip",
                DeviceFloat::F32,
                &clip_table,
                dev,
                scratch,
            )?
        };
        Ok(())
    };
    clip_step(&mut DeviceTable::new(), &scratch)?;
    stream.synchronize()?;
    let clipped: Vec<Vec<f32>> = g.iter().map(|b| b.read(&stream)).collect::<Res<_>>()?;
    let mut cu = cpu_tensors(&g0)?;
    let cparams = cpu_tensors(&p0)?;
    let c = clip_by_global_norm(cpu_norm / 2.0);
    let mut cs = c.init(&cparams)?;
    c.update(&mut cu, &mut cs, &cparams)?;
    let d = differing(&clipped, &host(&cu)?);
    failed |= d > 0;
    println!(
        "check clip_by_global_norm(norm / 2), norm and clip on the gpu vs CPU: {d} of {n} differ"
    );

    // 3. Timings: median of 30 after 5 warm-ups, the stream synchronized
    // around each (same machine as run.sh's torch and candle-nn figures).
    let time = |f: &mut dyn FnMut() -> Res<()>| -> Res<f64> {
        for _ in 0..5 {
            f()?;
        }
        stream.synchronize()?;
        let mut t = Vec::new();
        for _ in 0..30 {
            let start = Instant::now();
            f()?;
            stream.synchronize()?;
            t.push(start.elapsed().as_secs_f64() * 1e3);
        }
        Ok(median(t))
    };
    let adam_ms = time(&mut || adam_step(&mut adam_dev))?;
    let mut clip_dev = DeviceTable::new();
    let clip_ms = time(&mut || {
        norm_step(&mut scratch, f64::INFINITY)?;
        clip_step(&mut clip_dev, &scratch)
    })?;
    let gb = n as f64 * 28.0 / 1e9;
    println!("speed adamw step, one generated kernel, {n} f32 params (ms, median of 30): {adam_ms:.3} ({:.2} TB/s of the 28 B/param an AdamW step moves)", gb / adam_ms);
    println!("speed global norm + clip (3 launches, ms, median of 30): {clip_ms:.3}");
    if failed {
        println!("FAILED: some generated kernel differs from the CPU");
        std::process::exit(1);
    }
    println!("all checks passed");
    Ok(())
}
