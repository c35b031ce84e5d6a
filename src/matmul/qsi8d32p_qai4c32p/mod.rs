//! Family `qsi8d32p_qai4c32p`: int8 activations quantized per block of `bl` values with an f32
//! scale and an f32 block sum (`qsi8d32pscalef32`) times **asymmetric** int4 weights with an f32
//! scale and an f32 offset per block (`qai4c32p`, GGML `Q4_1`-like), f32 bias, f32 output with
//! clamp (docs/kernels.md; docs/formats.md, §Arithmetic: qsi8d32p_qai4c32p kernels). The format
//! of AWQ- and GPTQ-style checkpoints with zero points.
//!
//! Steps: pack the weights once with [`rhs::qai4c32p::pack`](crate::rhs::qai4c32p::pack), the
//! activations per call with
//! [`lhs::qsi8d32pscalef32::quantize_pack`](crate::lhs::qsi8d32pscalef32::quantize_pack), then
//! [`Kernel::run`](crate::Kernel::run) with `MatmulArgs::new(m, n, k).with_block_len(bl)`
//! (`bl` a multiple of 32 dividing `k`).
//!
//! Per output, blocks in order from `+0.0`: `acc = fma(zero, bsum, acc)`, then
//! `acc = fma(float(16 * S_b), fl(scale16 * lhs_scale), acc)`; then `+ bias`, clamp.
//!
//! KleidiAI's GEMV kernels of this family (`qsi8d32p1x4_qai4c32p4x4_1x4`,
//! `qsi8d32p1x8_qai4c32p4x8_1x4`) write only row 0 when called with `m > 1`; qgemm's kernels of
//! those packings compute every row.
//!
//! ```
//! use qgemm::qsi8d32p_qai4c32p as fam;
//! use qgemm::{CpuFeatures, MatmulArgs};
//!
//! let (m, n, k, bl) = (2, 4, 64, 32);
//! let cpu = CpuFeatures::from_target();
//! let kernel = fam::select(&cpu, m);
//! let p = kernel.packing();
//! // Every code 9 (value 9 - 8 = 1), scale 0.5 and offset 0.25: every weight 0.75.
//! let codes = [0x99u8; 4 * 32];
//! let (zero, scale) = ([0.25f32; 4 * 2], [0.5f32; 4 * 2]);
//! let mut rhs = vec![0u8; kernel.rhs_packed_size(n, k, bl)?];
//! qgemm::rhs::qai4c32p::pack(&p, n, k, bl, &codes, k / 2, &zero, &scale, None, &mut rhs)?;
//!
//! let x = [1.0f32; 2 * 64];
//! let mut lhs = vec![0u8; kernel.lhs_packed_size(m, k, bl)?];
//! qgemm::lhs::qsi8d32pscalef32::quantize_pack(&p, m, k, bl, 0, &x, k, &mut lhs)?;
//!
//! let mut y = [0f32; 2 * 4];
//! kernel.run(&lhs, &rhs, &mut y, &MatmulArgs::new(m, n, k).with_block_len(bl))?;
//! assert!(y.iter().all(|v| (v - 48.0).abs() < 0.01)); // 64 depths of 1 * 0.75
//! # Ok::<(), qgemm::Error>(())
//! ```

pub mod dotprod;
pub mod i8mm;
pub mod neon;
pub(crate) mod scalar;

use crate::matmul::Packing;

/// Marker type of the family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Qsi8d32pQai4c32p;

/// `(mr 1, nr 4, kr 16)` (KleidiAI `qsi8d32p1x8_qai4c32p4x8`, dotprod 1x4).
pub const PACKING_1X4: Packing = Packing::int4(1, 4, 16);
/// `(mr 4, nr 4, kr 16)` (KleidiAI `qsi8d32p4x8_qai4c32p4x8`, i8mm 8x4).
pub const PACKING_4X4: Packing = Packing::int4(4, 4, 16);
/// `(mr 1, nr 4, kr 8)` (KleidiAI `qsi8d32p1x4_qai4c32p4x4`, dotprod 1x4).
pub const PACKING_1X4_KR8: Packing = Packing::int4(1, 4, 8);
/// `(mr 4, nr 4, kr 8)` (KleidiAI `qsi8d32p4x4_qai4c32p4x4`, dotprod 8x4).
pub const PACKING_4X4_KR8: Packing = Packing::int4(4, 4, 8);

/// The RHS packing `select` uses: `nr = 4, kr = 16, sr = 2`, shared by the GEMV (`mr = 1`) and
/// GEMM (`mr = 4`) kernels.
pub const PREFERRED_RHS: crate::RhsPacking = PACKING_4X4.rhs(crate::RhsFormat::Qai4c32p);

/// Where the asm tiers find the data in this family's packed tiles for one call (docs/formats.md,
/// §LHS `qsi8d32pscalef32` and §RHS `qai4c32p`): per block, LHS tiles hold the `mr * bl` data
/// bytes then `8 * mr` bytes of sums and scales; RHS tiles the `nr * bl / 2` data bytes then
/// `8 * nr` bytes of offsets and scales; after the blocks, the `nr` f32 bias values. `None` for a
/// `bl` outside the kernels' contract.
#[cfg(target_arch = "aarch64")]
#[inline]
pub(crate) fn asm_layout<O, P>(
    args: &crate::UncheckedArgs<O, P>,
    strides: &crate::matmul::TileStrides,
    packing: &Packing,
) -> Option<crate::matmul::arch::asm::Layout> {
    let mut layout = crate::matmul::arch::asm::Layout::blocked(args, strides, packing, false)?;
    layout.block_bytes = packing.nr * (args.bl / 2 + 8);
    layout.extras_at = layout.blocks * layout.block_bytes;
    layout.skip = 8 * packing.nr;
    Some(layout)
}

/// A family of this arithmetic with outputs of type `$dst` (named `$dst_name` in kernel names):
/// the `Kernel` alias and the `Family` impl of marker `$fam` (family name `$name`), its scalar
/// kernels, `KERNELS` from its tier modules and the dispatch functions. Both families of the
/// arithmetic declare themselves with this one table.
macro_rules! qai4c32p_catalogue {
    ($fam:ident, $name:literal, $dst:ty, $dst_name:literal) => {
        /// A kernel of this family, resolved for a CPU.
        pub type Kernel = $crate::matmul::Kernel<$fam>;
        /// A catalogue entry of this family.
        pub type Descriptor = $crate::matmul::Descriptor<$fam>;

        impl $crate::matmul::sealed::Sealed for $fam {}

        impl $crate::Family for $fam {
            const NAME: &'static str = $name;
            const BLOCKED: bool = true;
            type Lhs = u8;
            type Dst = $dst;
            type Params = ();
            const PREFERRED_RHS: $crate::RhsPacking = PREFERRED_RHS;

            fn kernels() -> &'static [&'static Descriptor] {
                KERNELS
            }
        }

        family_catalogue!(
            $fam,
            dst: $dst_name,
            formats: (Qsi8d32pscalef32, Qai4c32p),
            scalar: [
                (SCALAR_1X4, "qsi8d32p1x8_qai4c32p4x8_1x4", PACKING_1X4),
                (SCALAR_4X4, "qsi8d32p4x8_qai4c32p4x8_4x4", PACKING_4X4),
                (SCALAR_1X4_KR8, "qsi8d32p1x4_qai4c32p4x4_1x4", PACKING_1X4_KR8),
                (SCALAR_4X4_KR8, "qsi8d32p4x4_qai4c32p4x4_4x4", PACKING_4X4_KR8),
            ],
            fallback: SCALAR_4X4,
        );
    };
}
pub(crate) use qai4c32p_catalogue;

qai4c32p_catalogue!(Qsi8d32pQai4c32p, "qsi8d32p_qai4c32p", f32, "f32");

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
