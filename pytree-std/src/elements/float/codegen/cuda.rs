//! CUDA C printed from a [`Program`]: one multi-tensor kernel per update
//! (a table of tensors, each block a [`CHUNK`] of one tensor, one launch
//! for all of them, as torch's `multi_tensor_apply`), every operation an
//! IEEE intrinsic rounded to nearest (`__fmul_rn`, `__fadd_rn`, ...), so
//! that nothing is contracted into a fused multiply-add: the CPU's loops
//! contract nothing either (Rust never fuses `a * b + c`; the AVX2 + FMA
//! copy of the loops has FMA enabled but no `mul_add` to use it), so the
//! device gives the CPU's bits. And the global norm's two kernels, which
//! sum the squares in `f64` in the order of candle's CPU path.

use super::{Node, Program};
use pytree_core::Error;

/// The threads of a block of the generated kernels.
///
/// ```
/// assert_eq!(pytree_std::elements::codegen::BLOCK, 256);
/// ```
pub const BLOCK: u32 = 256;

/// The elements one block of an update kernel handles (a block's chunk
/// lies in one tensor; a tensor of `len` elements takes
/// `len.div_ceil(CHUNK)` blocks).
///
/// ```
/// assert_eq!(pytree_std::elements::codegen::CHUNK, 4096);
/// ```
pub const CHUNK: u64 = 4096;

/// The elements of one partial sum of the norm kernels: candle's CPU path
/// sums a tensor's squares in runs of this many elements (each run with
/// eight running sums, combined in a fixed tree), then adds the runs' sums
/// in order.
///
/// ```
/// assert_eq!(pytree_std::elements::codegen::NORM_CHUNK, 256);
/// ```
pub const NORM_CHUNK: u64 = 256;

/// The most constants a generated kernel takes: its by-value argument is
/// `struct { double k[MAX_CONSTS]; }` (256 bytes); Adam into the
/// parameters with weight decay uses 10.
///
/// ```
/// assert_eq!(pytree_std::elements::codegen::MAX_CONSTS, 32);
/// ```
pub const MAX_CONSTS: usize = 32;

/// The element type a kernel is generated for.
///
/// ```
/// use pytree_std::elements::codegen::DeviceFloat;
/// assert_eq!(DeviceFloat::F32.c_type(), "float");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceFloat {
    /// `float`: each constant rounded from `f64` with `__double2float_rn`.
    F32,
    /// `double`.
    F64,
}

impl DeviceFloat {
    /// The C type.
    ///
    /// ```
    /// assert_eq!(pytree_std::elements::codegen::DeviceFloat::F64.c_type(), "double");
    /// ```
    pub fn c_type(self) -> &'static str {
        match self {
            DeviceFloat::F32 => "float",
            DeviceFloat::F64 => "double",
        }
    }

    /// The intrinsic of an operation, rounded to nearest.
    fn intrinsic(self, op: Op) -> &'static str {
        let f32 = self == DeviceFloat::F32;
        match op {
            Op::Add if f32 => "__fadd_rn",
            Op::Add => "__dadd_rn",
            Op::Sub if f32 => "__fsub_rn",
            Op::Sub => "__dsub_rn",
            Op::Mul if f32 => "__fmul_rn",
            Op::Mul => "__dmul_rn",
            Op::Div if f32 => "__fdiv_rn",
            Op::Div => "__ddiv_rn",
        }
    }

    fn sqrt(self) -> &'static str {
        match self {
            DeviceFloat::F32 => "__fsqrt_rn",
            DeviceFloat::F64 => "__dsqrt_rn",
        }
    }
}

/// A two-operand operation.
#[derive(Clone, Copy)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

/// Whether `name` is a C identifier (ASCII letters, digits, `_`; not
/// starting with a digit).
fn check_name(name: &str) -> Result<(), Error> {
    let mut chars = name.chars();
    let ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(Error::custom(format!(
            "`{name}` is not a C identifier, so it cannot name a kernel"
        )))
    }
}

/// The CUDA C source of `program` as one multi-tensor kernel, `name`, over
/// elements of type `float`:
///
/// - `struct {name}_tensor { unsigned long long len, first_block; T* m0 ..;
///   const T* r0 ..; }`: a row of the table per tensor (group of
///   operands), all fields 8 bytes, so a row is `2 + muts + refs` `u64`s
///   ([`TensorTable`] writes them); `first_block` is the number of blocks
///   of the rows before it (each tensor takes `len.div_ceil(CHUNK)`).
/// - `extern "C" __global__ void {name}(const {name}_tensor* table,
///   unsigned int tensors, {name}_consts k)`: the constants by value, as
///   `f64` (`struct {name}_consts { double k[MAX_CONSTS]; }`, the first
///   `consts().len()` used).
/// - `extern "C" __global__ void {name}_dk(const {name}_tensor* table,
///   unsigned int tensors, const double* k)`: the constants read from
///   device memory, and a flag after them: the kernel does nothing unless
///   `k[consts]` is nonzero (the clip, whose factor the norm kernels leave
///   on the device).
///
/// Launched with [`BLOCK`] threads per block and as many blocks as the
/// table's rows take ([`TensorTable::blocks`]). Operands of one row must
/// not overlap. An error if `name` is not a C identifier or the program
/// has more than [`MAX_CONSTS`] constants.
///
/// ```
/// use pytree_std::elements::codegen::{cuda_source, record, DeviceFloat};
/// use pytree_std::elements::{Arith, ElementUpdate};
/// struct AddTo;
/// impl ElementUpdate<f64, 1, 1> for AddTo {
///     fn apply<T: Arith<f64>>(&self, [p]: [&mut T; 1], [u]: [T; 1]) {
///         *p = p.clone() + u;
///     }
/// }
/// let src = cuda_source(&record(&AddTo), "add_to", DeviceFloat::F32)?;
/// assert!(src.contains("const float v2 = __fadd_rn(v0, v1);"));
/// assert!(cuda_source(&record(&AddTo), "add-to", DeviceFloat::F32).is_err());
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn cuda_source(program: &Program, name: &str, float: DeviceFloat) -> Result<String, Error> {
    check_name(name)?;
    let t = float.c_type();
    let nk = program.consts().len();
    if nk > MAX_CONSTS {
        return Err(Error::custom(format!(
            "`{name}` has {nk} constants, more than a kernel takes ({MAX_CONSTS})"
        )));
    }
    let mut s = String::new();
    let mut w = |line: &str| {
        s.push_str(line);
        s.push('\n');
    };
    w("// Generated by pytree-std (elements::codegen) from an ElementUpdate: do not edit.");
    w(&format!("struct {name}_tensor {{"));
    w("    unsigned long long len;");
    w("    unsigned long long first_block;");
    for i in 0..program.muts() {
        w(&format!("    {t}* m{i};"));
    }
    for i in 0..program.refs() {
        w(&format!("    const {t}* r{i};"));
    }
    w("};");
    w(&format!(
        "struct {name}_consts {{ double k[{}]; }};",
        nk.max(1)
    ));
    w(&format!(
        "static __device__ __forceinline__ void {name}_body(const {name}_tensor* __restrict__ table, unsigned int tensors, const double* __restrict__ k) {{"
    ));
    w("    const unsigned long long b = blockIdx.x;");
    w("    unsigned int lo = 0, hi = tensors;");
    w("    while (hi - lo > 1) {");
    w("        const unsigned int mid = lo + (hi - lo) / 2;");
    w("        if (table[mid].first_block <= b) lo = mid; else hi = mid;");
    w("    }");
    w(&format!("    const {name}_tensor t = table[lo];"));
    w(&format!(
        "    const unsigned long long start = (b - t.first_block) * {CHUNK}ull;"
    ));
    w(&format!(
        "    const unsigned long long end = t.len < start + {CHUNK}ull ? t.len : start + {CHUNK}ull;"
    ));
    for slot in 0..nk {
        match float {
            DeviceFloat::F32 => w(&format!(
                "    const float k{slot} = __double2float_rn(k[{slot}]);"
            )),
            DeviceFloat::F64 => w(&format!("    const double k{slot} = k[{slot}];")),
        }
    }
    if nk == 0 {
        w("    (void)k;");
    }
    w("    for (unsigned long long i = start + threadIdx.x; i < end; i += blockDim.x) {");
    for (id, &node) in program.nodes().iter().enumerate() {
        let rhs = match node {
            Node::Mut(i) => format!("t.m{i}[i]"),
            Node::Ref(i) => format!("t.r{i}[i]"),
            Node::Const(slot) => format!("k{slot}"),
            Node::Zero => match float {
                DeviceFloat::F32 => "0.0f".to_string(),
                DeviceFloat::F64 => "0.0".to_string(),
            },
            Node::Sqrt(a) => format!("{}(v{a})", float.sqrt()),
            Node::Add(a, b) => format!("{}(v{a}, v{b})", float.intrinsic(Op::Add)),
            Node::Sub(a, b) => format!("{}(v{a}, v{b})", float.intrinsic(Op::Sub)),
            Node::Mul(a, b) => format!("{}(v{a}, v{b})", float.intrinsic(Op::Mul)),
            Node::Div(a, b) => format!("{}(v{a}, v{b})", float.intrinsic(Op::Div)),
        };
        w(&format!("        const {t} v{id} = {rhs};"));
    }
    for (i, &o) in program.outputs().iter().enumerate() {
        if program.writes(i) {
            w(&format!("        t.m{i}[i] = v{o};"));
        }
    }
    w("    }");
    w("}");
    w(&format!(
        "extern \"C\" __global__ void __launch_bounds__({BLOCK}) {name}(const {name}_tensor* __restrict__ table, unsigned int tensors, {name}_consts k) {{"
    ));
    w(&format!("    {name}_body(table, tensors, k.k);"));
    w("}");
    w(&format!(
        "extern \"C\" __global__ void __launch_bounds__({BLOCK}) {name}_dk(const {name}_tensor* __restrict__ table, unsigned int tensors, const double* __restrict__ k) {{"
    ));
    w(&format!("    if (!(k[{nk}] != 0.0)) return;"));
    w(&format!("    {name}_body(table, tensors, k);"));
    w("}");
    Ok(s)
}

/// The CUDA C source of the global norm's two kernels over tensors of
/// `float`, which sum the squares of the tensors' elements in `f64` in
/// the order candle's CPU path sums them (pytree-optim's
/// `clip_by_global_norm` and `global_norm` on the host), so the norm has
/// the CPU's bits:
///
/// - `struct pytree_norm_tensor { unsigned long long len, first_chunk;
///   const T* x; }`: a row per tensor ([`TensorTable::norm`] writes them);
///   `first_chunk` counts the [`NORM_CHUNK`]s of the rows before.
/// - `pytree_sq_partials(table, tensors, chunks, double* partials)`: eight
///   threads per chunk of [`NORM_CHUNK`] elements, thread `j` adding the
///   squares of the chunk's elements `j, j + 8, ...` in order (the CPU's
///   eight running sums), combined as `((a0 + a1) + (a2 + a3)) + ((a4 +
///   a5) + (a6 + a7))`; grid: `chunks * 8` threads in blocks of [`BLOCK`]
///   ([`TensorTable::norm_grid`]).
/// - `pytree_sq_finish(table, tensors, partials, double* leaf_sums, double
///   max_norm, double* out)`: one block of [`BLOCK`] threads; each
///   tensor's chunks added in order from `0.0`, then the tensors' sums in
///   table order from `0.0`; `out[0]` is the norm (`__dsqrt_rn`), `out[1]`
///   `max_norm`, `out[2]` `1.0` where the clip applies (`!(norm <
///   max_norm)`, as the CPU tests it) else `0.0`: the constants and flag
///   of the clip's `_dk` kernel ([`cuda_source`]), whose constants are
///   `[norm, max_norm]`.
///
/// ```
/// use pytree_std::elements::codegen::{norm_source, DeviceFloat};
/// let src = norm_source(DeviceFloat::F32);
/// assert!(src.contains("pytree_sq_partials") && src.contains("const float* x;"));
/// ```
pub fn norm_source(float: DeviceFloat) -> String {
    let t = float.c_type();
    format!(
        r#"// Generated by pytree-std (elements::codegen): the squares of tensors summed in f64 in candle's CPU order.
struct pytree_norm_tensor {{
    unsigned long long len;
    unsigned long long first_chunk;
    const {t}* x;
}};
extern "C" __global__ void __launch_bounds__({BLOCK}) pytree_sq_partials(const pytree_norm_tensor* __restrict__ table, unsigned int tensors, unsigned long long chunks, double* __restrict__ partials) {{
    const unsigned long long c = ((unsigned long long)blockIdx.x * blockDim.x + threadIdx.x) / 8;
    const unsigned int lane = threadIdx.x % 8;
    double acc = 0.0;
    if (c < chunks) {{
        unsigned int lo = 0, hi = tensors;
        while (hi - lo > 1) {{
            const unsigned int mid = lo + (hi - lo) / 2;
            if (table[mid].first_chunk <= c) lo = mid; else hi = mid;
        }}
        const pytree_norm_tensor t = table[lo];
        const unsigned long long start = (c - t.first_chunk) * {NORM_CHUNK}ull;
        const unsigned long long n = t.len - start < {NORM_CHUNK}ull ? t.len - start : {NORM_CHUNK}ull;
        for (unsigned long long j = lane; j < n; j += 8) {{
            const double v = (double)t.x[start + j];
            acc = __dadd_rn(acc, __dmul_rn(v, v));
        }}
    }}
    acc = __dadd_rn(acc, __shfl_down_sync(0xffffffffu, acc, 1, 8));
    acc = __dadd_rn(acc, __shfl_down_sync(0xffffffffu, acc, 2, 8));
    acc = __dadd_rn(acc, __shfl_down_sync(0xffffffffu, acc, 4, 8));
    if (lane == 0 && c < chunks) partials[c] = acc;
}}
extern "C" __global__ void __launch_bounds__({BLOCK}) pytree_sq_finish(const pytree_norm_tensor* __restrict__ table, unsigned int tensors, const double* __restrict__ partials, double* __restrict__ leaf_sums, double max_norm, double* __restrict__ out) {{
    for (unsigned int l = threadIdx.x; l < tensors; l += blockDim.x) {{
        const unsigned long long first = table[l].first_chunk;
        const unsigned long long n = (table[l].len + {NORM_CHUNK}ull - 1) / {NORM_CHUNK}ull;
        double s = 0.0;
        for (unsigned long long c = 0; c < n; ++c) s = __dadd_rn(s, partials[first + c]);
        leaf_sums[l] = s;
    }}
    __syncthreads();
    if (threadIdx.x == 0) {{
        double total = 0.0;
        for (unsigned int l = 0; l < tensors; ++l) total = __dadd_rn(total, leaf_sums[l]);
        const double norm = __dsqrt_rn(total);
        out[0] = norm;
        out[1] = max_norm;
        out[2] = norm < max_norm ? 0.0 : 1.0;
    }}
}}
"#
    )
}

/// The table a generated kernel reads, built on the host: a row of `u64`s
/// per tensor (its length, the blocks or chunks of the rows before it,
/// then one device address per operand), in the layout of the generated
/// `struct`s, to copy to the device. Tensors of no elements get no row.
///
/// ```
/// use pytree_std::elements::codegen::{record, DeviceFloat, TensorTable, CHUNK};
/// use pytree_std::elements::{Arith, ElementUpdate};
/// struct AddTo;
/// impl ElementUpdate<f64, 1, 1> for AddTo {
///     fn apply<T: Arith<f64>>(&self, [p]: [&mut T; 1], [u]: [T; 1]) { *p = p.clone() + u; }
/// }
/// let mut table = TensorTable::update(&record(&AddTo), DeviceFloat::F32);
/// table.push(CHUNK + 1, &[0x1000_0000, 0x2000_0000])?;
/// table.push(5, &[0x3000_0000, 0x4000_0000])?;
/// assert_eq!((table.tensors(), table.blocks()), (2, 3));
/// assert_eq!(&table.rows()[4..6], [5, 2]);
/// assert!(table.push(5, &[0x5000_0000]).is_err()); // one address short
/// # Ok::<(), pytree_std::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct TensorTable {
    operands: usize,
    writes: usize,
    elem_bytes: u64,
    chunk: u64,
    rows: Vec<u64>,
    tensors: usize,
    blocks: u64,
}

impl TensorTable {
    /// The table of an update kernel of `program` ([`cuda_source`]):
    /// `muts + refs` addresses per row, written operands first.
    ///
    /// ```
    /// # use pytree_std::elements::codegen::{record, DeviceFloat, TensorTable};
    /// # use pytree_std::elements::{Arith, ElementUpdate};
    /// # struct Zero;
    /// # impl ElementUpdate<f64, 1, 0> for Zero {
    /// #     fn apply<T: Arith<f64>>(&self, [u]: [&mut T; 1], []: [T; 0]) { *u = u.zero(); }
    /// # }
    /// assert_eq!(TensorTable::update(&record(&Zero), DeviceFloat::F64).tensors(), 0);
    /// ```
    pub fn update(program: &Program, float: DeviceFloat) -> TensorTable {
        TensorTable::new(
            program.muts() + program.refs(),
            program.muts(),
            float,
            CHUNK,
        )
    }

    /// The table of the norm kernels ([`norm_source`]): one address per
    /// row, chunks of [`NORM_CHUNK`].
    ///
    /// ```
    /// use pytree_std::elements::codegen::{DeviceFloat, TensorTable};
    /// let mut table = TensorTable::norm(DeviceFloat::F32);
    /// table.push(300, &[0x1000])?;
    /// assert_eq!((table.blocks(), table.norm_grid()?), (2, 1));
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn norm(float: DeviceFloat) -> TensorTable {
        TensorTable::new(1, 0, float, NORM_CHUNK)
    }

    fn new(operands: usize, writes: usize, float: DeviceFloat, chunk: u64) -> TensorTable {
        let elem_bytes = match float {
            DeviceFloat::F32 => 4,
            DeviceFloat::F64 => 8,
        };
        TensorTable {
            operands,
            writes,
            elem_bytes,
            chunk,
            rows: Vec::new(),
            tensors: 0,
            blocks: 0,
        }
    }

    /// Adds a tensor of `len` elements: the device address of each
    /// operand. An error if the number of addresses is not the kernel's,
    /// an address is null or not aligned to the element, or a written
    /// operand's elements overlap another operand's; nothing is added then.
    /// A tensor of no elements adds nothing.
    ///
    /// ```
    /// use pytree_std::elements::codegen::{DeviceFloat, TensorTable};
    /// let mut table = TensorTable::norm(DeviceFloat::F32);
    /// assert!(table.push(4, &[0]).is_err());
    /// assert!(table.push(4, &[0x1002]).is_err());
    /// table.push(0, &[0x1000])?;
    /// assert_eq!(table.tensors(), 0);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn push(&mut self, len: u64, addresses: &[u64]) -> Result<(), Error> {
        if addresses.len() != self.operands {
            return Err(Error::custom(format!(
                "a kernel of {} operands given {} addresses",
                self.operands,
                addresses.len()
            )));
        }
        if let Some(a) = addresses
            .iter()
            .find(|&&a| a == 0 || a % self.elem_bytes != 0)
        {
            return Err(Error::custom(format!(
                "device address {a:#x} is null or not aligned to its {}-byte elements",
                self.elem_bytes
            )));
        }
        if len == 0 {
            return Ok(());
        }
        let bytes = len
            .checked_mul(self.elem_bytes)
            .ok_or_else(|| Error::custom(format!("{len} elements overflow an address")))?;
        let range = |a: u64| (a, a.saturating_add(bytes));
        for (i, &w) in addresses[..self.writes].iter().enumerate() {
            let (ws, we) = range(w);
            let clash = addresses.iter().enumerate().any(|(j, &o)| {
                let (os, oe) = range(o);
                j != i && ws < oe && os < we
            });
            if clash {
                return Err(Error::custom(format!(
                    "operand {i} (written, at {w:#x}) overlaps another operand of the same tensor"
                )));
            }
        }
        if self.tensors >= u32::MAX as usize {
            return Err(Error::custom("more tensors than a kernel's table takes"));
        }
        self.rows.push(len);
        self.rows.push(self.blocks);
        self.rows.extend_from_slice(addresses);
        self.tensors += 1;
        self.blocks += len.div_ceil(self.chunk);
        Ok(())
    }

    /// The rows, to copy to the device (`(2 + operands) * tensors`
    /// values).
    ///
    /// ```
    /// use pytree_std::elements::codegen::{DeviceFloat, TensorTable};
    /// let mut table = TensorTable::norm(DeviceFloat::F64);
    /// table.push(3, &[0x100])?;
    /// assert_eq!(table.rows(), [3, 0, 0x100]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn rows(&self) -> &[u64] {
        &self.rows
    }

    /// The number of rows (tensors), the kernels' `tensors` argument.
    ///
    /// ```
    /// use pytree_std::elements::codegen::{DeviceFloat, TensorTable};
    /// assert_eq!(TensorTable::norm(DeviceFloat::F32).tensors(), 0);
    /// ```
    pub fn tensors(&self) -> usize {
        self.tensors
    }

    /// The chunks of all rows: an update kernel's blocks (chunks of
    /// [`CHUNK`]), or the norm's partial sums (of [`NORM_CHUNK`]).
    ///
    /// ```
    /// use pytree_std::elements::codegen::{DeviceFloat, TensorTable};
    /// let mut table = TensorTable::norm(DeviceFloat::F32);
    /// table.push(257, &[0x100])?;
    /// assert_eq!(table.blocks(), 2);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    /// The blocks of `pytree_sq_partials` ([`norm_source`]): eight threads
    /// per chunk, [`BLOCK`] threads a block; an error past CUDA's grid.
    ///
    /// ```
    /// use pytree_std::elements::codegen::{DeviceFloat, TensorTable};
    /// let mut table = TensorTable::norm(DeviceFloat::F32);
    /// table.push(256 * 33, &[0x100])?;
    /// assert_eq!(table.norm_grid()?, 2);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn norm_grid(&self) -> Result<u32, Error> {
        grid(self.blocks.saturating_mul(8).div_ceil(u64::from(BLOCK)))
    }

    /// The blocks of an update kernel ([`cuda_source`]); an error past
    /// CUDA's grid.
    ///
    /// ```
    /// use pytree_std::elements::codegen::{DeviceFloat, TensorTable};
    /// let mut table = TensorTable::norm(DeviceFloat::F32);
    /// table.push(1000, &[0x100])?;
    /// assert_eq!(table.update_grid()?, 4);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn update_grid(&self) -> Result<u32, Error> {
        grid(self.blocks)
    }
}

/// `blocks` as a grid's x dimension (at most 2^31 - 1).
fn grid(blocks: u64) -> Result<u32, Error> {
    u32::try_from(blocks)
        .ok()
        .filter(|&b| b <= i32::MAX as u32)
        .ok_or_else(|| Error::custom(format!("{blocks} blocks exceed CUDA's grid")))
}
