//! Family `qai8dxp_qsi4cxp`: int8 activations quantized per row at run time (`qai8dxp`) times
//! int4 weights with one f32 scale per output channel (`qsi4cxp`), f32 bias, f32 output with
//! clamp (docs/kernels.md; docs/formats.md, §Arithmetic: qai8dxp_qsi4cxp kernels).
//!
//! A call takes three steps on caller-owned buffers:
//!
//! 1. once per weight matrix: [`rhs::qsi4cxp::pack`](crate::rhs::qsi4cxp::pack) with the
//!    kernel's [`Packing`];
//! 2. per call: [`lhs::qai8dxp::quantize_pack`](crate::lhs::qai8dxp::quantize_pack);
//! 3. [`Kernel::run`](crate::Kernel::run) on the whole output or any grid of sub-rectangles.
//!
//! ```
//! use qgemm::qai8dxp_qsi4cxp as fam;
//! use qgemm::rhs::{Int4Encoding, Int4Source};
//! use qgemm::{CpuFeatures, MatmulArgs};
//!
//! let (m, n, k) = (2, 8, 64);
//! let cpu = CpuFeatures::from_target();
//! let kernel = fam::select(&cpu, m);
//! let p = kernel.packing();
//!
//! let weights = [0x98u8; 8 * 32]; // n x k nibbles, zero point 8: values +0 and +1
//! let scales = [0.5f32; 8];
//! let mut rhs_packed = [0u8; 8 * (32 + 12)];
//! let src = Int4Source::nxk(&weights, k, Int4Encoding::ZeroPoint8);
//! qgemm::rhs::qsi4cxp::pack(&p, n, k, &src, &scales, None, &mut rhs_packed[..kernel.rhs_packed_size(n, k, 0)?])?;
//!
//! let x = [1.0f32; 2 * 64];
//! let mut lhs_packed = [0u8; 4 * 72];
//! qgemm::lhs::qai8dxp::quantize_pack(&p, m, k, 0, &x, k, &mut lhs_packed)?;
//!
//! let mut dst = [0f32; 2 * 8];
//! kernel.run(&lhs_packed, &rhs_packed, &mut dst, &MatmulArgs::new(m, n, k))?;
//! assert!(dst.iter().all(|&v| (v - 16.0).abs() < 0.1)); // 32 depths of weight 1, times 0.5
//! # Ok::<(), qgemm::Error>(())
//! ```

pub mod dotprod;
pub mod i8mm;
pub mod neon;
pub(crate) mod scalar;

use crate::matmul::Packing;

/// Marker type of the family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Qai8dxpQsi4cxp;

/// `(mr 1, nr 4, kr 16)`: GEMV over 4-channel tiles (KleidiAI `qai8dxp1x8_qsi4cxp4x8`).
pub const PACKING_1X4: Packing = Packing::int4(1, 4, 16);
/// `(mr 1, nr 8, kr 16)`: GEMV over 8-channel tiles (KleidiAI `qai8dxp1x8_qsi4cxp8x8`).
pub const PACKING_1X8: Packing = Packing::int4(1, 8, 16);
/// `(mr 4, nr 4, kr 16)`: GEMM (KleidiAI `qai8dxp4x8_qsi4cxp4x8`, i8mm).
pub const PACKING_4X4: Packing = Packing::int4(4, 4, 16);
/// `(mr 4, nr 8, kr 16)`: GEMM (KleidiAI `qai8dxp4x8_qsi4cxp8x8`, i8mm).
pub const PACKING_4X8: Packing = Packing::int4(4, 8, 16);
/// `(mr 1, nr 4, kr 8)`: KleidiAI `qai8dxp1x4_qsi4cxp4x4` (dotprod).
pub const PACKING_1X4_KR8: Packing = Packing::int4(1, 4, 8);
/// `(mr 4, nr 4, kr 8)`: KleidiAI `qai8dxp4x8_qsi4cxp4x4` (dotprod 16x4).
pub const PACKING_4X4_KR8: Packing = Packing::int4(4, 4, 8);
/// `(mr 4, nr 8, kr 8)`: KleidiAI `qai8dxp4x4_qsi4cxp8x4` (dotprod 8x8).
pub const PACKING_4X8_KR8: Packing = Packing::int4(4, 8, 8);

/// The RHS packing `select` uses: `nr = 8, kr = 16, sr = 2`, shared by the decode (`mr = 1`)
/// and prefill (`mr = 4`) kernels of every tier, so one packed weight matrix serves both.
pub const PREFERRED_RHS: crate::RhsPacking = PACKING_4X8.rhs(crate::RhsFormat::Qsi4cxp);

/// Where the asm tiers find the data in this family's packed tiles for one call (docs/formats.md,
/// §LHS and §RHS): `Kp` data bytes per LHS row, RHS tiles of `nr * Kp/2` data bytes, then
/// `rsum`, `scale` and `bias`.
#[cfg(target_arch = "aarch64")]
#[inline]
pub(crate) fn asm_layout<O, P>(
    args: &crate::UncheckedArgs<O, P>,
    strides: &crate::matmul::TileStrides,
    packing: &Packing,
) -> crate::matmul::arch::asm::Layout {
    crate::matmul::arch::asm::Layout::per_channel(args, strides, packing, 4)
}

/// A family of this arithmetic with outputs of type `$dst` (named `$dst_name` in kernel
/// names): the `Kernel` alias and the `Family` impl of marker `$fam` (family name `$name`), its
/// scalar kernels, `KERNELS` from its tier modules and the dispatch functions. Every family of
/// the arithmetic declares itself with this one table (`$packings`: `all`, or `kr16` without the
/// `kr = 8` packings, which the bf16 LHS packer does not take).
macro_rules! qsi4cxp_catalogue {
    ($fam:ident, $name:literal, $dst:ty, $dst_name:literal, $packings:ident) => {
        qai8dxp_family_impl!($fam, $name, $dst, per_channel);
        subset_family_catalogue!(
            $fam,
            $dst_name,
            (Qai8dxp, Qsi4cxp),
            $packings,
            [(SCALAR_1X4, "qai8dxp1x8_qsi4cxp4x8_1x4", PACKING_1X4), (SCALAR_1X8, "qai8dxp1x8_qsi4cxp8x8_1x8", PACKING_1X8), (SCALAR_4X4, "qai8dxp4x8_qsi4cxp4x8_4x4", PACKING_4X4), (SCALAR_4X8, "qai8dxp4x8_qsi4cxp8x8_4x8", PACKING_4X8)],
            [(SCALAR_1X4_KR8, "qai8dxp1x4_qsi4cxp4x4_1x4", PACKING_1X4_KR8), (SCALAR_4X4_KR8, "qai8dxp4x4_qsi4cxp4x4_4x4", PACKING_4X4_KR8), (SCALAR_4X8_KR8, "qai8dxp4x4_qsi4cxp8x4_4x8", PACKING_4X8_KR8)],
            fallback: SCALAR_4X8
        );
    };
}
pub(crate) use qsi4cxp_catalogue;

qsi4cxp_catalogue!(Qai8dxpQsi4cxp, "qai8dxp_qsi4cxp", f32, "f32", all);

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
