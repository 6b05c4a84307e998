//! The one-pass CPU path for candle tensors: the optimizer's element
//! closure runs on the tensors' memory in place (each written tensor
//! locked by a nested `InplaceOp1`, each read one by its read lock): an
//! [`ElementUpdate`] over `f32` or `f64` tensors in their own type (the
//! element loop of an ndarray array of that type, the same bits), other
//! work in `f64` (16-bit elements, and closures on `f32` elements, through
//! chunks converted to `f64` and back), so an Adam step reads and writes
//! each element once, with no tensor allocated.

use std::cell::RefCell;

use candle_core::{self as candle, CpuStorage, InplaceOp1, Layout, Storage, Tensor, WithDType};

use crate::elements::{sum_slice, widened, zip_slices, ElementUpdate, Exec};

/// Whether two tensors are views of one storage (candle's own
/// `same_storage` is crate-private): the addresses of their storages,
/// each read under its read lock, taken one after the other.
pub(crate) fn same_storage(a: &Tensor, b: &Tensor) -> bool {
    storage_address(a) == storage_address(b)
}

/// The address of a tensor's storage (stable: it lives behind an `Arc`).
fn storage_address(t: &Tensor) -> usize {
    let (guard, _) = t.storage_and_layout();
    std::ptr::from_ref::<candle_core::Storage>(&guard).addr()
}

/// Elements converted to `f64` at a time (fits in L1 for a handful of
/// tensors).
const CHUNK: usize = 256;

/// A contiguous run of one tensor's elements, read (and written) as `f64`.
trait Lane {
    /// `out[k] = element[at + k]` as `f64`.
    fn load(&self, at: usize, out: &mut [f64]);
    /// `element[at + k] = xs[k]` in the lane's dtype (a lane read: nothing).
    fn store(&mut self, _at: usize, _xs: &[f64]) {}
}

struct SliceMut<'a, T>(&'a mut [T]);
struct SliceRef<'a, T>(&'a [T]);

/// `out[k] = src[at + k]` as `f64`.
#[inline]
fn load<T: WithDType>(src: &[T], at: usize, out: &mut [f64]) {
    for (o, x) in out.iter_mut().zip(&src[at..]) {
        *o = x.to_f64();
    }
}

impl<T: WithDType> Lane for SliceMut<'_, T> {
    #[inline]
    fn load(&self, at: usize, out: &mut [f64]) {
        load(self.0, at, out);
    }
    #[inline]
    fn store(&mut self, at: usize, xs: &[f64]) {
        for (d, x) in self.0[at..].iter_mut().zip(xs) {
            *d = T::from_f64(*x);
        }
    }
}

impl<T: WithDType> Lane for SliceRef<'_, T> {
    #[inline]
    fn load(&self, at: usize, out: &mut [f64]) {
        load(self.0, at, out);
    }
}

/// `Some(Box::new($lane))` for a float storage, `$v` bound to its
/// elements as each dtype has them; `None` for another.
macro_rules! float_lane {
    ($s:expr, $v:ident => $lane:expr) => {
        Some(match $s {
            CpuStorage::F32($v) => Box::new($lane),
            CpuStorage::F64($v) => Box::new($lane),
            CpuStorage::F16($v) => Box::new($lane),
            CpuStorage::BF16($v) => Box::new($lane),
            _ => return None,
        })
    };
}

/// The `n` elements from `start` of a float storage, writable.
fn lane_mut(s: &mut CpuStorage, start: usize, n: usize) -> Option<Box<dyn Lane + '_>> {
    let end = start.checked_add(n)?;
    float_lane!(s, v => SliceMut(v.get_mut(start..end)?))
}

/// The `n` elements from `start` of a float storage, read only.
fn lane_ref(s: &Storage, start: usize, n: usize) -> Option<Box<dyn Lane + '_>> {
    let end = start.checked_add(n)?;
    let Storage::Cpu(s) = s else { return None };
    float_lane!(s, v => SliceRef(v.get(start..end)?))
}

/// Whether the fused path can take `t`: contiguous float data in CPU memory.
fn eligible(t: &Tensor) -> bool {
    use candle::DType::{BF16, F16, F32, F64};
    t.device().is_cpu() && t.is_contiguous() && matches!(t.dtype(), F16 | BF16 | F32 | F64)
}

/// Locks a storage for writing and calls the closure with it.
struct Lock<'a>(&'a dyn Fn(&mut CpuStorage, &Layout) -> candle::Result<()>);

impl InplaceOp1 for Lock<'_> {
    fn name(&self) -> &'static str {
        "pytree-optim-fused-update"
    }
    fn cpu_fwd(&self, storage: &mut CpuStorage, layout: &Layout) -> candle::Result<()> {
        (self.0)(storage, layout)
    }
}

type Held = Vec<(*mut CpuStorage, usize)>;

/// Locks every tensor of `ts` for writing, one inside the other, and calls
/// `body` with a pointer to each storage and the tensor's start offset.
fn lock_all(
    ts: &[&Tensor],
    held: &mut Held,
    body: &mut dyn FnMut(&Held) -> candle::Result<()>,
) -> candle::Result<()> {
    let Some((first, rest)) = ts.split_first() else {
        return body(held);
    };
    let state = RefCell::new((held, body));
    first.inplace_op1(&Lock(&|storage, layout| {
        let mut guard = state.borrow_mut();
        let (held, body) = &mut *guard;
        held.push((storage as *mut CpuStorage, layout.start_offset()));
        lock_all(rest, held, &mut **body)
    }))
}

/// Runs `update` (if any; else `f`, which computes the same) on every
/// element of the tensors in place, or `None` when the
/// fused path does not apply (a tensor off the CPU, not contiguous, not
/// float, or two tensors sharing memory): the caller then takes the
/// tensor-operation path. The tensors have the same dims (checked by the
/// caller).
pub(super) fn try_zip<const N: usize, const M: usize, F, U>(
    muts: [&Tensor; N],
    refs: [&Tensor; M],
    exec: Exec,
    f: &F,
    update: Option<&U>,
) -> Option<candle::Result<()>>
where
    F: Fn([&mut f64; N], [f64; M]) + Sync,
    U: ElementUpdate<f64, N, M>,
{
    if !muts.iter().chain(refs.iter()).all(|t| eligible(t)) {
        return None;
    }
    for (i, a) in muts.iter().enumerate() {
        if muts[i + 1..]
            .iter()
            .chain(refs.iter())
            .any(|b| same_storage(a, b))
        {
            return None;
        }
    }
    let n = muts.first().or(refs.first())?.elem_count();
    let mut held = Vec::with_capacity(N);
    Some(lock_all(&muts, &mut held, &mut |held: &Held| {
        let guards: Vec<_> = refs.iter().map(|r| r.storage_and_layout()).collect();
        let mut rlanes = Vec::with_capacity(M);
        for (g, layout) in &guards {
            match lane_ref(g, layout.start_offset(), n) {
                Some(l) => rlanes.push(l),
                None => candle::bail!("pytree-optim: a tensor read is not float CPU memory"),
            }
        }
        // SAFETY (for each `&mut *ptr` below): `ptr` points to the
        // storage of one tensor of `muts`, whose write lock is held by an
        // enclosing `inplace_op1` call that returns only after this
        // closure; the storages of `muts` are pairwise distinct and
        // distinct from those of `refs` (checked with `same_storage`
        // above), and the references made by one call of `storages` are
        // dropped before the next call makes new ones (each attempt below
        // either returns or lets its slices go), so each is the only
        // reference to its storage while it lives.
        let storages = || {
            held.iter()
                .map(|&(ptr, start)| (unsafe { &mut *ptr }, start))
        };
        // One dtype throughout (the trees' signatures were compared):
        // `f32` and `f64` run one loop over the slices themselves.
        if let Some(ms) = typed::<f32, N>(storages(), n, |s| match s {
            CpuStorage::F32(v) => Some(v),
            _ => None,
        }) {
            if let Some(rs) = typed_refs::<f32, M>(&guards, n) {
                match update {
                    Some(u) => {
                        zip_slices::<f32, N, M, _>(ms, rs, exec, &move |ms, rs| u.apply(ms, rs))
                    }
                    None => zip_slices::<f32, N, M, _>(ms, rs, exec, &widened::<f32, N, M, F>(f)),
                }
                return Ok(());
            }
        }
        if let Some(ms) = typed::<f64, N>(storages(), n, |s| match s {
            CpuStorage::F64(v) => Some(v),
            _ => None,
        }) {
            if let Some(rs) = typed_refs::<f64, M>(&guards, n) {
                zip_slices::<f64, N, M, F>(ms, rs, exec, f);
                return Ok(());
            }
        }
        let mut mlanes = Vec::with_capacity(N);
        for (storage, start) in storages() {
            match lane_mut(storage, start, n) {
                Some(l) => mlanes.push(l),
                None => candle::bail!("pytree-optim: a tensor written is not float CPU memory"),
            }
        }
        let mut mb = [[0.0f64; CHUNK]; N];
        let mut rb = [[0.0f64; CHUNK]; M];
        let mut at = 0;
        while at < n {
            let len = CHUNK.min(n - at);
            for (b, l) in mb.iter_mut().zip(&mlanes) {
                l.load(at, &mut b[..len]);
            }
            for (b, l) in rb.iter_mut().zip(&rlanes) {
                l.load(at, &mut b[..len]);
            }
            let ms = mb.each_mut().map(|b| &mut b[..len]);
            let rs = rb.each_ref().map(|b| &b[..len]);
            zip_slices::<f64, N, M, F>(ms, rs, Exec::Sequential, f);
            for (b, l) in mb.iter().zip(mlanes.iter_mut()) {
                l.store(at, &b[..len]);
            }
            at += len;
        }
        Ok(())
    }))
}

/// The `n` elements from each start of storages all of element type `T`
/// (`slice` picks the vector), or `None` if one is of another type.
fn typed<'a, T: 'a, const N: usize>(
    storages: impl Iterator<Item = (&'a mut CpuStorage, usize)>,
    n: usize,
    slice: impl Fn(&'a mut CpuStorage) -> Option<&'a mut Vec<T>>,
) -> Option<[&'a mut [T]; N]> {
    let mut out = Vec::with_capacity(N);
    for (s, start) in storages {
        out.push(slice(s)?.get_mut(start..start.checked_add(n)?)?);
    }
    out.try_into().ok()
}

/// [`typed`] for the tensors read, through their read guards.
fn typed_refs<'a, T: WithDType, const M: usize>(
    guards: &'a [(candle::StorageRef<'_>, &Layout)],
    n: usize,
) -> Option<[&'a [T]; M]> {
    let mut out = Vec::with_capacity(M);
    for (g, layout) in guards {
        let Storage::Cpu(s) = &**g else { return None };
        let start = layout.start_offset();
        out.push(s.as_slice::<T>().ok()?.get(start..start.checked_add(n)?)?);
    }
    out.try_into().ok()
}

/// The sum of `f(element)` read in place, or `None` when `t` is not
/// contiguous float CPU memory.
pub(super) fn try_sum<F>(t: &Tensor, f: &F) -> Option<f64>
where
    F: Fn(f64) -> f64 + Sync,
{
    if !eligible(t) {
        return None;
    }
    let n = t.elem_count();
    let (guard, layout) = t.storage_and_layout();
    let lane = lane_ref(&guard, layout.start_offset(), n)?;
    let mut buf = [0.0f64; CHUNK];
    let (mut at, mut total) = (0, 0.0);
    while at < n {
        let len = CHUNK.min(n - at);
        lane.load(at, &mut buf[..len]);
        total += sum_slice::<f64, F>(&buf[..len], Exec::Sequential, f);
        at += len;
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    /// The device's global norm (`elements::codegen::norm_source`) sums in
    /// runs of `NORM_CHUNK` elements because this path sums in runs of
    /// `CHUNK`: the two must stay equal for the GPU to give the CPU's norm.
    #[test]
    fn the_device_norm_sums_in_the_runs_of_this_path() {
        assert_eq!(super::CHUNK as u64, crate::elements::codegen::NORM_CHUNK);
    }
}
