//! Family `qai8dxp_qsi8cxp`: int8 activations quantized per row at run time (`qai8dxp`) times
//! int8 weights with one f32 scale per output channel (`qsi8cxp`), f32 bias, f32 output with
//! clamp (docs/kernels.md; docs/formats.md, §RHS `qsi8cxp` and §Arithmetic: qai8dxp_qsi8cxp
//! kernels). The choice for layers that lose too much accuracy at 4 bits.
//!
//! A call takes three steps on caller-owned buffers:
//!
//! 1. once per weight matrix: [`rhs::qsi8cxp::pack`](crate::rhs::qsi8cxp::pack) with the
//!    kernel's [`Packing`];
//! 2. per call: [`lhs::qai8dxp::quantize_pack`](crate::lhs::qai8dxp::quantize_pack);
//! 3. [`Kernel::run`](crate::Kernel::run) on the whole output or any grid of sub-rectangles.
//!
//! ```
//! use qgemm::qai8dxp_qsi8cxp as fam;
//! use qgemm::rhs::qsi8cxp::{self, Int8Source};
//! use qgemm::{CpuFeatures, MatmulArgs};
//!
//! let (m, n, k) = (2, 8, 64);
//! let cpu = CpuFeatures::from_target();
//! let kernel = fam::select(&cpu, m);
//! let p = kernel.packing();
//!
//! let weights = [2i8; 8 * 64]; // n x k
//! let scales = [0.25f32; 8];
//! let mut rhs_packed = [0u8; 8 * (64 + 12)];
//! let size = kernel.rhs_packed_size(n, k, 0)?;
//! qsi8cxp::pack(&p, n, k, &Int8Source::nxk(&weights, k), &scales, None, &mut rhs_packed[..size])?;
//!
//! let x = [1.0f32; 2 * 64];
//! let mut lhs_packed = [0u8; 4 * 72];
//! qgemm::lhs::qai8dxp::quantize_pack(&p, m, k, 0, &x, k, &mut lhs_packed)?;
//!
//! let mut dst = [0f32; 2 * 8];
//! kernel.run(&lhs_packed, &rhs_packed, &mut dst, &MatmulArgs::new(m, n, k))?;
//! assert!(dst.iter().all(|&v| (v - 32.0).abs() < 0.1)); // 64 depths of 1 * 2 * 0.25
//! # Ok::<(), qgemm::Error>(())
//! ```

pub mod dotprod;
pub mod i8mm;
pub mod neon;
pub(crate) mod scalar;

use crate::matmul::Packing;

/// Marker type of the family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Qai8dxpQsi8cxp;

/// `(mr 1, nr 4, kr 4)`: GEMV (KleidiAI `qai8dxp1x4_qsi8cxp4x4`, dotprod 1x4).
pub const PACKING_1X4_KR4: Packing = Packing::int8(1, 4, 4);
/// `(mr 1, nr 4, kr 8)`: GEMV (KleidiAI `qai8dxp1x8_qsi8cxp4x8`, dotprod 1x4).
pub const PACKING_1X4: Packing = Packing::int8(1, 4, 8);
/// `(mr 4, nr 4, kr 4)`: GEMM (KleidiAI `qai8dxp4x4_qsi8cxp4x4`, dotprod 16x4).
pub const PACKING_4X4_KR4: Packing = Packing::int8(4, 4, 4);
/// `(mr 4, nr 4, kr 8)`: GEMM (KleidiAI `qai8dxp4x8_qsi8cxp4x8`, i8mm 16x4).
pub const PACKING_4X4: Packing = Packing::int8(4, 4, 8);

/// The RHS packing `select` uses: `nr = 4, kr = 8, sr = 1`, shared by the decode (`mr = 1`)
/// and prefill (`mr = 4`) kernels of every tier, so one packed weight matrix serves both.
pub const PREFERRED_RHS: crate::RhsPacking = PACKING_4X4.rhs(crate::RhsFormat::Qsi8cxp);

/// Where the asm tiers find the data in this family's packed tiles for one call (docs/formats.md,
/// §LHS and §RHS `qsi8cxp`): `Kp` data bytes per LHS row, RHS tiles of `nr * Kp` data bytes,
/// then `rsum`, `scale` and `bias`.
#[cfg(target_arch = "aarch64")]
#[inline]
pub(crate) fn asm_layout<O, P>(
    args: &crate::UncheckedArgs<O, P>,
    strides: &crate::matmul::TileStrides,
    packing: &Packing,
) -> crate::matmul::arch::asm::Layout {
    crate::matmul::arch::asm::Layout::per_channel(args, strides, packing, 8)
}

/// A family of this arithmetic with outputs of type `$dst` (named `$dst_name` in kernel
/// names): the `Kernel` alias and the `Family` impl of marker `$fam` (family name `$name`), its
/// scalar kernels, `KERNELS` from its tier modules and the dispatch functions. Every family of
/// the arithmetic declares itself with this one table.
macro_rules! qsi8cxp_catalogue {
    ($fam:ident, $name:literal, $dst:ty, $dst_name:literal) => {
        qai8dxp_family_impl!($fam, $name, $dst, per_channel);
        family_catalogue!(
            $fam,
            dst: $dst_name,
            formats: (Qai8dxp, Qsi8cxp),
            scalar: [
                (SCALAR_1X4, "qai8dxp1x8_qsi8cxp4x8_1x4", PACKING_1X4),
                (SCALAR_4X4, "qai8dxp4x8_qsi8cxp4x8_4x4", PACKING_4X4),
                (SCALAR_1X4_KR4, "qai8dxp1x4_qsi8cxp4x4_1x4", PACKING_1X4_KR4),
                (SCALAR_4X4_KR4, "qai8dxp4x4_qsi8cxp4x4_4x4", PACKING_4X4_KR4),
            ],
            fallback: SCALAR_4X4,
        );
    };
}
pub(crate) use qsi8cxp_catalogue;

qsi8cxp_catalogue!(Qai8dxpQsi8cxp, "qai8dxp_qsi8cxp", f32, "f32");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::CpuFeatures;

    #[test]
    fn select_prefers_gemv_for_one_row() {
        let cpu = CpuFeatures::NONE;
        assert_eq!(select(&cpu, 1).packing().mr, 1);
        assert_eq!(select(&cpu, 5).packing().mr, 4);
    }
}
