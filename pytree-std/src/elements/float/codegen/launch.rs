//! The generated kernels compiled and launched (feature `cuda`, through
//! cudarc): each source compiled once per device with NVRTC (no CUDA
//! compiler at build time; contraction, subnormal flushing and inexact
//! division and square root off) and cached by source and device; the
//! tables and scratch kept on the device between steps, so a step
//! allocates nothing once they are large enough. The launches are
//! `unsafe`: the tables hold raw device addresses, which the caller
//! vouches for.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{
    CudaFunction, CudaModule, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};
use pytree_core::Error;

use super::{cuda_source, norm_source, DeviceFloat, Program, TensorTable, BLOCK, MAX_CONSTS};

/// A driver or compiler failure as an [`Error`].
fn cuda_error(what: &str, e: impl core::fmt::Debug) -> Error {
    Error::custom(format!("CUDA: {what}: {e:?}"))
}

type Modules = Mutex<HashMap<(usize, String), Arc<CudaModule>>>;

/// The module of `src` on `stream`'s device: compiled by NVRTC for the
/// device's architecture and loaded the first time, then from the cache.
fn module(stream: &Arc<CudaStream>, src: &str) -> Result<Arc<CudaModule>, Error> {
    static MODULES: OnceLock<Modules> = OnceLock::new();
    let ctx = stream.context();
    let key = (ctx.ordinal(), src.to_string());
    let cache = MODULES.get_or_init(Modules::default);
    if let Some(m) = cache
        .lock()
        .map_err(|_| cuda_error("module cache", "poisoned"))?
        .get(&key)
    {
        return Ok(Arc::clone(m));
    }
    let (major, minor) = ctx
        .compute_capability()
        .map_err(|e| cuda_error("compute capability", e))?;
    let opts = CompileOptions {
        ftz: Some(false),
        prec_div: Some(true),
        prec_sqrt: Some(true),
        fmad: Some(false),
        options: vec![format!("--gpu-architecture=compute_{major}{minor}")],
        ..Default::default()
    };
    let ptx = compile_ptx_with_opts(src, opts).map_err(|e| cuda_error("NVRTC", e))?;
    let m = ctx
        .load_module(ptx)
        .map_err(|e| cuda_error("loading a module", e))?;
    cache
        .lock()
        .map_err(|_| cuda_error("module cache", "poisoned"))?
        .insert(key, Arc::clone(&m));
    Ok(m)
}

fn function(stream: &Arc<CudaStream>, src: &str, name: &str) -> Result<CudaFunction, Error> {
    module(stream, src)?
        .load_function(name)
        .map_err(|e| cuda_error(name, e))
}

/// A [`TensorTable`]'s rows on the device: uploaded when they differ from
/// the last ones (a model's tensors keep their addresses from step to
/// step, so usually once), into a buffer that grows only when too small.
///
/// ```
/// let table = pytree_std::elements::codegen::DeviceTable::new();
/// # let _ = table;
/// ```
#[derive(Default)]
pub struct DeviceTable {
    buf: Option<CudaSlice<u64>>,
    rows: Vec<u64>,
}

impl DeviceTable {
    /// An empty table (nothing on a device yet).
    ///
    /// ```
    /// let _ = pytree_std::elements::codegen::DeviceTable::new();
    /// ```
    pub fn new() -> DeviceTable {
        DeviceTable::default()
    }

    fn upload(
        &mut self,
        stream: &Arc<CudaStream>,
        table: &TensorTable,
    ) -> Result<&CudaSlice<u64>, Error> {
        let rows = table.rows();
        let fits = self.buf.as_ref().is_some_and(|b| {
            b.len() >= rows.len().max(1) && b.context().ordinal() == stream.context().ordinal()
        });
        if !fits {
            self.buf = Some(
                stream
                    .alloc_zeros::<u64>(rows.len().max(1))
                    .map_err(|e| cuda_error("allocating a table", e))?,
            );
            self.rows.clear();
        }
        let Some(buf) = self.buf.as_mut() else {
            return Err(cuda_error("table", "no buffer"));
        };
        if self.rows != rows {
            let mut view = buf.slice_mut(0..rows.len());
            stream
                .memcpy_htod(rows, &mut view)
                .map_err(|e| cuda_error("uploading a table", e))?;
            self.rows.clear();
            self.rows.extend_from_slice(rows);
        }
        Ok(buf)
    }
}

/// What an update kernel ([`launch_update`], [`launch_clip`]) is
/// launched with over `table`: its grid (a thread per element), the
/// table's rows on the device (uploaded into `dev` where they changed)
/// and its number of tensors.
fn over_table<'d>(
    stream: &Arc<CudaStream>,
    table: &TensorTable,
    dev: &'d mut DeviceTable,
) -> Result<(LaunchConfig, &'d CudaSlice<u64>, u32), Error> {
    let cfg = LaunchConfig {
        grid_dim: (table.update_grid()?, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    Ok((cfg, dev.upload(stream, table)?, table.tensors() as u32))
}

/// The constants of `program` as the kernel's by-value argument.
fn constants(program: &Program) -> Result<[f64; MAX_CONSTS], Error> {
    let mut k = [0.0f64; MAX_CONSTS];
    if program.consts().len() > MAX_CONSTS {
        return Err(Error::custom(format!(
            "{} constants, more than a kernel takes ({MAX_CONSTS})",
            program.consts().len()
        )));
    }
    k[..program.consts().len()].copy_from_slice(program.consts());
    Ok(k)
}

/// Runs `program` (as [`cuda_source`] prints it, kernel `name`) on every
/// tensor of `table`, in one launch on `stream`, with the program's own
/// constants; `dev` keeps the table on the device between calls. Nothing
/// is launched for an empty table.
///
/// # Safety
///
/// Every address in `table` is device memory of `stream`'s context
/// holding at least its row's `len` elements of `float`, written
/// operands writable, and nothing else reads or writes a written operand
/// until the kernel is done (work on `stream` after the call is ordered
/// after it).
///
/// ```
/// use std::sync::Arc;
/// use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};
/// use pytree_std::elements::codegen::{launch_update, record, DeviceFloat, DeviceTable, TensorTable};
/// use pytree_std::elements::{Arith, ElementUpdate};
/// struct AddTo;
/// impl ElementUpdate<f64, 1, 1> for AddTo {
///     fn apply<T: Arith<f64>>(&self, [p]: [&mut T; 1], [u]: [T; 1]) { *p = p.clone() + u; }
/// }
/// /// `p += u` on the device (a GPU machine calls this).
/// fn add(stream: &Arc<CudaStream>, p: &mut CudaSlice<f32>, u: &CudaSlice<f32>) -> Result<(), pytree_std::Error> {
///     if u.len() < p.len() {
///         return Err(pytree_std::Error::custom("`u` is shorter than `p`"));
///     }
///     let prog = record(&AddTo);
///     let mut table = TensorTable::update(&prog, DeviceFloat::F32);
///     let (pa, _g1) = p.device_ptr(stream);
///     let (ua, _g2) = u.device_ptr(stream);
///     table.push(p.len() as u64, &[pa, ua])?;
///     // SAFETY: both slices live on `stream`'s context, hold at least
///     // `p.len()` elements (checked above), are distinct allocations, and
///     // are borrowed until after the launch is queued on `stream`.
///     unsafe { launch_update(stream, &prog, "add_to", DeviceFloat::F32, &table, &mut DeviceTable::new()) }
/// }
/// # let _ = add;
/// ```
pub unsafe fn launch_update(
    stream: &Arc<CudaStream>,
    program: &Program,
    name: &str,
    float: DeviceFloat,
    table: &TensorTable,
    dev: &mut DeviceTable,
) -> Result<(), Error> {
    if table.tensors() == 0 {
        return Ok(());
    }
    let k = constants(program)?;
    let f = function(stream, &cuda_source(program, name, float)?, name)?;
    let (cfg, rows, tensors) = over_table(stream, table, dev)?;
    let mut launch = stream.launch_builder(&f);
    launch.arg(rows).arg(&tensors).arg(&k);
    // SAFETY: the kernel's parameters are (table pointer, unsigned int,
    // struct of MAX_CONSTS doubles), the arguments pushed above in that
    // order and layout; the rows were written by `TensorTable` for this
    // program (its operand count), and the addresses in them are valid as
    // this function's contract requires.
    unsafe { launch.launch(cfg) }.map_err(|e| cuda_error(name, e))?;
    Ok(())
}

/// The device memory of the global norm ([`launch_norm`]): the partial
/// sums, the tensors' sums, and its result, `[norm, max_norm, flag]`
/// (the constants and flag of a clip's `_dk` kernel, [`launch_clip`]);
/// grown when too small, kept between steps.
///
/// ```
/// let scratch = pytree_std::elements::codegen::NormScratch::new();
/// # let _ = scratch;
/// ```
#[derive(Default)]
pub struct NormScratch {
    partials: Option<CudaSlice<f64>>,
    sums: Option<CudaSlice<f64>>,
    out: Option<CudaSlice<f64>>,
    table: DeviceTable,
}

/// `slot`, holding at least `n` values on `stream`'s device.
fn at_least<'a>(
    slot: &'a mut Option<CudaSlice<f64>>,
    stream: &Arc<CudaStream>,
    n: usize,
) -> Result<&'a mut CudaSlice<f64>, Error> {
    if slot.as_ref().is_none_or(|s| s.len() < n) {
        *slot = Some(
            stream
                .alloc_zeros::<f64>(n.max(1))
                .map_err(|e| cuda_error("allocating norm scratch", e))?,
        );
    }
    slot.as_mut()
        .ok_or_else(|| cuda_error("norm scratch", "no buffer"))
}

impl NormScratch {
    /// No memory yet.
    ///
    /// ```
    /// let _ = pytree_std::elements::codegen::NormScratch::new();
    /// ```
    pub fn new() -> NormScratch {
        NormScratch::default()
    }

    /// The last norm computed, copied to the host (waits for the stream).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use cudarc::driver::CudaStream;
    /// fn norm(stream: &Arc<CudaStream>, s: &pytree_std::elements::codegen::NormScratch) -> Result<f64, pytree_std::Error> {
    ///     s.norm(stream)
    /// }
    /// # let _ = norm;
    /// ```
    pub fn norm(&self, stream: &Arc<CudaStream>) -> Result<f64, Error> {
        let Some(out) = self.out.as_ref() else {
            return Err(Error::custom("no norm has been computed on the device"));
        };
        let host = stream
            .clone_dtoh(&out.slice(0..1))
            .map_err(|e| cuda_error("reading the norm", e))?;
        host.first()
            .copied()
            .ok_or_else(|| cuda_error("reading the norm", "empty"))
    }
}

/// The global norm of the tensors of `table` ([`TensorTable::norm`]) on
/// the device, in two launches ([`norm_source`]), with the CPU's bits;
/// `[norm, max_norm, flag]` is left in `scratch` for [`launch_clip`] and
/// [`NormScratch::norm`].
///
/// # Safety
///
/// Every address in `table` is device memory of `stream`'s context
/// holding at least its row's `len` elements of `float`, not written
/// until the kernels are done.
///
/// ```
/// use std::sync::Arc;
/// use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};
/// use pytree_std::elements::codegen::{launch_norm, DeviceFloat, NormScratch, TensorTable};
/// fn norm(stream: &Arc<CudaStream>, x: &CudaSlice<f32>) -> Result<f64, pytree_std::Error> {
///     let mut table = TensorTable::norm(DeviceFloat::F32);
///     let (a, _guard) = x.device_ptr(stream);
///     table.push(x.len() as u64, &[a])?;
///     let mut scratch = NormScratch::new();
///     // SAFETY: `x` lives on `stream`'s context with `x.len()` elements
///     // and is borrowed (read) until the launches are queued.
///     unsafe { launch_norm(stream, DeviceFloat::F32, &table, &mut scratch, f64::INFINITY)? };
///     scratch.norm(stream)
/// }
/// # let _ = norm;
/// ```
pub unsafe fn launch_norm(
    stream: &Arc<CudaStream>,
    float: DeviceFloat,
    table: &TensorTable,
    scratch: &mut NormScratch,
    max_norm: f64,
) -> Result<(), Error> {
    let src = norm_source(float);
    let partials_fn = function(stream, &src, "pytree_sq_partials")?;
    let finish_fn = function(stream, &src, "pytree_sq_finish")?;
    let chunks = table.blocks();
    let tensors = table.tensors() as u32;
    let grid = table.norm_grid()?;
    let rows = scratch.table.upload(stream, table)?;
    let partials = at_least(&mut scratch.partials, stream, chunks as usize)?;
    if grid > 0 {
        let mut launch = stream.launch_builder(&partials_fn);
        launch
            .arg(rows)
            .arg(&tensors)
            .arg(&chunks)
            .arg(&mut *partials);
        let cfg = LaunchConfig {
            grid_dim: (grid, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: parameters (table, unsigned int, unsigned long long,
        // double*), pushed in that order; `partials` holds `chunks`
        // values, one per chunk the grid covers; the table's addresses
        // are valid by this function's contract.
        unsafe { launch.launch(cfg) }.map_err(|e| cuda_error("pytree_sq_partials", e))?;
    }
    let sums = at_least(&mut scratch.sums, stream, table.tensors())?;
    let out = at_least(&mut scratch.out, stream, 3)?;
    let partials = scratch
        .partials
        .as_ref()
        .ok_or_else(|| cuda_error("norm", "no partials"))?;
    let mut launch = stream.launch_builder(&finish_fn);
    launch
        .arg(rows)
        .arg(&tensors)
        .arg(partials)
        .arg(&mut *sums)
        .arg(&max_norm)
        .arg(&mut *out);
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: parameters (table, unsigned int, const double*, double*,
    // double, double*), pushed in that order; `sums` holds one value per
    // tensor, `out` three; the kernel reads the partials the launch
    // before wrote (same stream).
    unsafe { launch.launch(cfg) }.map_err(|e| cuda_error("pytree_sq_finish", e))?;
    Ok(())
}

/// The clip of `clip_by_global_norm` on the device: `program` (the clip's
/// update, whose constants are `[norm, max_norm]`) launched as its `_dk`
/// kernel, reading the norm [`launch_norm`] left in `scratch` and doing
/// nothing where the norm is under `max_norm`: no copy to the host.
///
/// # Safety
///
/// As [`launch_update`]'s; and `scratch` holds the result of a
/// [`launch_norm`] on `stream`.
///
/// ```
/// use std::sync::Arc;
/// use cudarc::driver::CudaStream;
/// use pytree_std::elements::codegen::{launch_clip, DeviceFloat, DeviceTable, NormScratch, Program, TensorTable};
/// fn clip(stream: &Arc<CudaStream>, prog: &Program, table: &TensorTable, s: &NormScratch) -> Result<(), pytree_std::Error> {
///     // SAFETY: the caller built `table` from live tensors of this
///     // stream's device and ran `launch_norm` into `s` just before.
///     unsafe { launch_clip(stream, prog, "clip", DeviceFloat::F32, table, &mut DeviceTable::new(), s) }
/// }
/// # let _ = clip;
/// ```
pub unsafe fn launch_clip(
    stream: &Arc<CudaStream>,
    program: &Program,
    name: &str,
    float: DeviceFloat,
    table: &TensorTable,
    dev: &mut DeviceTable,
    scratch: &NormScratch,
) -> Result<(), Error> {
    if program.consts().len() != 2 {
        return Err(Error::custom(format!(
            "a clip reads two constants from the device (norm, maximum), `{name}` has {}",
            program.consts().len()
        )));
    }
    if table.tensors() == 0 {
        return Ok(());
    }
    let Some(out) = scratch.out.as_ref() else {
        return Err(Error::custom("no norm has been computed on the device"));
    };
    let entry = format!("{name}_dk");
    let f = function(stream, &cuda_source(program, name, float)?, &entry)?;
    let (cfg, rows, tensors) = over_table(stream, table, dev)?;
    let mut launch = stream.launch_builder(&f);
    launch.arg(rows).arg(&tensors).arg(out);
    // SAFETY: parameters (table, unsigned int, const double*), pushed in
    // that order; `out` holds `[norm, max_norm, flag]`, the program's two
    // constants and the flag after them; the addresses are valid by this
    // function's contract.
    unsafe { launch.launch(cfg) }.map_err(|e| cuda_error(&entry, e))?;
    Ok(())
}
