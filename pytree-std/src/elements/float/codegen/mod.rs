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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elements::{Arith, ElementUpdate};

    /// Writes a value it then overwrites, and a constant it never uses.
    struct Overwrites;
    impl ElementUpdate<f64, 2, 1> for Overwrites {
        fn apply<T: Arith<f64>>(&self, [a, b]: [&mut T; 2], [x]: [T; 1]) {
            *a = x.clone().scale(7.0);
            let _unused = b.clone().shift(9.0);
            *a = x.div_by(2.0);
        }
    }

    #[test]
    fn recording_keeps_only_what_the_outputs_need() {
        let p = record(&Overwrites);
        assert_eq!(p.consts(), [2.0]);
        assert_eq!(
            p.nodes(),
            [Node::Mut(1), Node::Ref(0), Node::Const(0), Node::Div(1, 2)]
        );
        assert_eq!(p.outputs(), [3, 0]);
        assert!(p.writes(0) && !p.writes(1));
        let src = cuda_source(&p, "overwrites", DeviceFloat::F32).unwrap_or_default();
        assert!(src.contains("t.m0[i] = v3;") && !src.contains("t.m1[i] ="));
        assert!(
            !src.contains("t.m0[i];"),
            "the old value of m0 is not read:\n{src}"
        );
    }

    /// More constants than a kernel takes is an error, not a kernel.
    #[test]
    fn too_many_constants_is_an_error() {
        struct Many;
        impl ElementUpdate<f64, 1, 0> for Many {
            fn apply<T: Arith<f64>>(&self, [x]: [&mut T; 1], []: [T; 0]) {
                for k in 0..=MAX_CONSTS {
                    *x = x.clone().shift(k as f64);
                }
            }
        }
        let p = record(&Many);
        assert_eq!(p.consts().len(), MAX_CONSTS + 1);
        assert!(cuda_source(&p, "many", DeviceFloat::F64).is_err());
    }

    #[test]
    fn a_written_operand_overlapping_another_is_refused() {
        let p = record(&Overwrites);
        let mut t = TensorTable::update(&p, DeviceFloat::F32);
        // m0 at 0x1000 (16 bytes for 4 elements) overlaps r0 at 0x100c.
        assert!(t.push(4, &[0x1000, 0x2000, 0x100c]).is_err());
        assert!(t.push(4, &[0x1000, 0x2000, 0x1010]).is_ok());
        // A length whose bytes overflow an address is refused.
        let mut n = TensorTable::norm(DeviceFloat::F64);
        assert!(n.push(u64::MAX, &[0x1000]).is_err());
        assert_eq!((t.tensors(), t.blocks(), t.rows().len()), (1, 1, 5));
    }

    #[test]
    fn kernel_names_must_be_c_identifiers() {
        let p = record(&Overwrites);
        for bad in ["", "1x", "a-b", "a b", "ä"] {
            assert!(cuda_source(&p, bad, DeviceFloat::F32).is_err(), "{bad:?}");
        }
        assert!(cuda_source(&p, "_a1", DeviceFloat::F32).is_ok());
    }
}
