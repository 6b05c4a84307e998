//! Device code generated from the one definition of an element update:
//! [`record`] runs an [`ElementUpdate`](crate::elements::ElementUpdate)
//! over [`Sym`], an [`Arith`](crate::elements::Arith) whose values are
//! nodes, and keeps what it computed as a [`Program`]; [`cuda_source`]
//! prints the program as a CUDA C multi-tensor kernel (one launch for every
//! tensor of a table, [`TensorTable`]), each operation an intrinsic rounded
//! to nearest as the CPU rounds it, so a GPU gives the CPU's bits;
//! [`norm_source`] prints the global norm's reduction in the CPU's order;
//! [`Program::eval`] runs a program on numbers (the reference the device
//! is checked against). No formula is written twice: the CUDA code of
//! Adam is Adam's `ElementUpdate`, recorded.
//!
//! The source is compiled at run time (NVRTC), so a build needs no CUDA
//! compiler: with feature `cuda` (cudarc), `launch_update`, `launch_norm`
//! and `launch_clip` compile each source once per device and launch it
//! over a table of device addresses.
//!
//! ```
//! use pytree_std::elements::codegen::{cuda_source, record, DeviceFloat};
//! use pytree_std::elements::{Arith, ElementUpdate};
//! /// `m = b * m + (1 - b) * g`
//! struct Ema(f64);
//! impl ElementUpdate<f64, 1, 1> for Ema {
//!     fn apply<T: Arith<f64>>(&self, [m]: [&mut T; 1], [g]: [T; 1]) {
//!         *m = m.clone().scale(self.0) + g.scale(1.0 - self.0);
//!     }
//! }
//! let prog = record(&Ema(0.9));
//! let (mut m, g) = (1.0f32, 3.0f32);
//! Ema(0.9).apply([&mut m], [g]);
//! let mut m_rec = [1.0f32];
//! prog.eval(&mut m_rec, &[3.0])?;
//! assert_eq!(m.to_bits(), m_rec[0].to_bits());
//! let src = cuda_source(&prog, "ema", DeviceFloat::F32)?;
//! assert!(src.contains("__fmul_rn") && !src.contains("fma"));
//! # Ok::<(), pytree_std::Error>(())
//! ```

mod cuda;
mod eval;
#[cfg(feature = "cuda")]
mod launch;
mod program;

pub use cuda::{
    cuda_source, norm_source, DeviceFloat, TensorTable, BLOCK, CHUNK, MAX_CONSTS, NORM_CHUNK,
};
#[cfg(feature = "cuda")]
pub use launch::{launch_clip, launch_norm, launch_update, DeviceTable, NormScratch};
pub use program::{record, Node, Program, Sym};
