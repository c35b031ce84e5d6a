//! Family `qai8dxp_qsi4c32p`: int8 activations quantized per row at run time (`qai8dxp`) times
//! int4 weights with one **bf16** scale per block of `bl` depths (`qsi4c32p`), f32 bias, f32
//! output with clamp (docs/kernels.md; docs/formats.md, §Arithmetic: qai8dxp_qsi4c32p kernels). The quantized Llama 3.2
//! models use this format.
//!
//! Steps: pack the weights once with [`rhs::qsi4c32p::pack`](crate::rhs::qsi4c32p::pack), the
//! activations per call with [`lhs::qai8dxp::quantize_pack`](crate::lhs::qai8dxp::quantize_pack),
//! then [`Kernel::run`](crate::Kernel::run) with `MatmulArgs::new(m, n, k).with_block_len(bl)`.
//! `bl` is a multiple of 32 dividing `k` (32 and 64 in the golden vectors).
//!
//! The packed `rsum` is accumulated per `kr/sr`-byte chunk, so weights packed with `kr = 8`
//! and `kr = 16` can give different results in rare cases (docs/formats.md, §Arithmetic: RHS packer sums): always pack with the
//! kernel's own [`Packing`].

pub mod dotprod;
pub mod i8mm;
pub mod neon;
pub(crate) mod scalar;

use crate::matmul::Packing;

/// Marker type of the family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Qai8dxpQsi4c32p;

/// `(mr 1, nr 4, kr 16)` (KleidiAI `qai8dxp1x8_qsi4c32p4x8`).
pub const PACKING_1X4: Packing = Packing::int4(1, 4, 16);
/// `(mr 1, nr 8, kr 16)` (KleidiAI `qai8dxp1x8_qsi4c32p8x8`).
pub const PACKING_1X8: Packing = Packing::int4(1, 8, 16);
/// `(mr 4, nr 4, kr 16)` (KleidiAI `qai8dxp4x8_qsi4c32p4x8`, i8mm 8x4 / 16x4).
pub const PACKING_4X4: Packing = Packing::int4(4, 4, 16);
/// `(mr 4, nr 8, kr 16)` (KleidiAI `qai8dxp4x8_qsi4c32p8x8`, i8mm 4x8).
pub const PACKING_4X8: Packing = Packing::int4(4, 8, 16);
/// `(mr 1, nr 4, kr 8)` (KleidiAI `qai8dxp1x4_qsi4c32p4x4`).
pub const PACKING_1X4_KR8: Packing = Packing::int4(1, 4, 8);
/// `(mr 1, nr 8, kr 8)` (KleidiAI `qai8dxp1x4_qsi4c32p8x4`).
pub const PACKING_1X8_KR8: Packing = Packing::int4(1, 8, 8);
/// `(mr 4, nr 4, kr 8)` (KleidiAI `qai8dxp4x4_qsi4c32p4x4`, dotprod 16x4).
pub const PACKING_4X4_KR8: Packing = Packing::int4(4, 4, 8);
/// `(mr 4, nr 8, kr 8)` (KleidiAI `qai8dxp4x4_qsi4c32p8x4`, dotprod 4x8).
pub const PACKING_4X8_KR8: Packing = Packing::int4(4, 8, 8);

/// The RHS packing `select` uses: `nr = 8, kr = 16, sr = 2`, shared by the GEMV (`mr = 1`) and
/// GEMM (`mr = 4`) kernels.
pub const PREFERRED_RHS: crate::RhsPacking = PACKING_4X8.rhs(crate::RhsFormat::Qsi4c32p);

/// Where the asm tiers find the data in this family's packed tiles for one call (docs/formats.md,
/// §LHS and §RHS): RHS tiles of `k / bl` blocks (data, then bf16 scales), then `rsum` and
/// `bias`. `None` for a `bl` outside the kernels' contract.
#[cfg(target_arch = "aarch64")]
#[inline]
pub(crate) fn asm_layout<O, P>(
    args: &crate::UncheckedArgs<O, P>,
    strides: &crate::matmul::TileStrides,
    packing: &Packing,
) -> Option<crate::matmul::arch::asm::Layout> {
    crate::matmul::arch::asm::Layout::blocked(args, strides, packing, false)
}

/// A family of this arithmetic with outputs of type `$dst` (named `$dst_name` in kernel
/// names): the `Kernel` alias and the `Family` impl of marker `$fam` (family name `$name`), its
/// scalar kernels, `KERNELS` from its tier modules and the dispatch functions. Every family of
/// the arithmetic declares itself with this one table (`$packings`: `all`, or `kr16` without the
/// `kr = 8` packings, which the bf16 LHS packer does not take).
macro_rules! qsi4c32p_catalogue {
    ($fam:ident, $name:literal, $dst:ty, $dst_name:literal, $packings:ident) => {
        qai8dxp_family_impl!($fam, $name, $dst, per_block);
        subset_family_catalogue!(
            $fam,
            $dst_name,
            (Qai8dxp, Qsi4c32p),
            $packings,
            [(SCALAR_1X4, "qai8dxp1x8_qsi4c32p4x8_1x4", PACKING_1X4), (SCALAR_1X8, "qai8dxp1x8_qsi4c32p8x8_1x8", PACKING_1X8), (SCALAR_4X4, "qai8dxp4x8_qsi4c32p4x8_4x4", PACKING_4X4), (SCALAR_4X8, "qai8dxp4x8_qsi4c32p8x8_4x8", PACKING_4X8)],
            [(SCALAR_1X4_KR8, "qai8dxp1x4_qsi4c32p4x4_1x4", PACKING_1X4_KR8), (SCALAR_1X8_KR8, "qai8dxp1x4_qsi4c32p8x4_1x8", PACKING_1X8_KR8), (SCALAR_4X4_KR8, "qai8dxp4x4_qsi4c32p4x4_4x4", PACKING_4X4_KR8), (SCALAR_4X8_KR8, "qai8dxp4x4_qsi4c32p8x4_4x8", PACKING_4X8_KR8)],
            fallback: SCALAR_4X8
        );
    };
}
pub(crate) use qsi4c32p_catalogue;

qsi4c32p_catalogue!(Qai8dxpQsi4c32p, "qai8dxp_qsi4c32p", f32, "f32", all);
