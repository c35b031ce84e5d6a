//! Family `qsi8d32p_qsi4c32p`: int8 activations quantized per block of `bl` values with an f16
//! scale (`qsi8d32p`, Q8_0-like) times int4 weights with one **f16** scale per block
//! (`qsi4c32p` with f16 scales, GGML `Q4_0` for `bl = 32`), f32 output with clamp, no bias
//! (docs/kernels.md; docs/formats.md, §Arithmetic: qsi8d32p_qsi4c32p kernels).
//!
//! Steps: pack GGML-style weight blocks once with
//! [`rhs::qsi4c32pscalef16::pack`](crate::rhs::qsi4c32pscalef16::pack), the activations per call
//! with [`lhs::qsi8d32p::quantize_pack`](crate::lhs::qsi8d32p::quantize_pack), then
//! [`Kernel::run`](crate::Kernel::run) with `MatmulArgs::new(m, n, k).with_block_len(bl)`.

pub mod dotprod;
pub mod i8mm;
pub mod neon;
pub(crate) mod scalar;

use crate::matmul::{self, Family, Packing, sealed};

/// Marker type of the family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Qsi8d32pQsi4c32p;

/// A kernel of this family, resolved for a CPU.
pub type Kernel = matmul::Kernel<Qsi8d32pQsi4c32p>;
/// A catalogue entry of this family.
pub type Descriptor = matmul::Descriptor<Qsi8d32pQsi4c32p>;

impl sealed::Sealed for Qsi8d32pQsi4c32p {}

impl Family for Qsi8d32pQsi4c32p {
    const NAME: &'static str = "qsi8d32p_qsi4c32p";
    const BLOCKED: bool = true;
    type Lhs = u8;
    type Dst = f32;
    type Params = ();
    const PREFERRED_RHS: crate::RhsPacking = PREFERRED_RHS;

    fn kernels() -> &'static [&'static Descriptor] {
        KERNELS
    }
}

/// `(mr 1, nr 4, kr 16)` (KleidiAI `qsi8d32p1x8_qsi4c32p4x8`).
pub const PACKING_1X4: Packing = Packing::int4(1, 4, 16);
/// `(mr 4, nr 4, kr 16)` (KleidiAI `qsi8d32p4x8_qsi4c32p4x8`, i8mm).
pub const PACKING_4X4: Packing = Packing::int4(4, 4, 16);
/// `(mr 1, nr 8, kr 16)`: GEMV over 8-channel tiles (qgemm's own; no KleidiAI kernel).
pub const PACKING_1X8: Packing = Packing::int4(1, 8, 16);
/// `(mr 4, nr 8, kr 16)`: GEMM over 8-channel tiles (qgemm's own; no KleidiAI kernel).
pub const PACKING_4X8: Packing = Packing::int4(4, 8, 16);
/// `(mr 1, nr 4, kr 8)` (KleidiAI `qsi8d32p1x4_qsi4c32p4x4`).
pub const PACKING_1X4_KR8: Packing = Packing::int4(1, 4, 8);
/// `(mr 4, nr 4, kr 8)` (KleidiAI `qsi8d32p4x4_qsi4c32p4x4`, dotprod 16x4).
pub const PACKING_4X4_KR8: Packing = Packing::int4(4, 4, 8);

/// The RHS packing `select` uses: `nr = 4, kr = 16, sr = 2`, KleidiAI's layout, shared by the
/// GEMV and GEMM kernels.
pub const PREFERRED_RHS: crate::RhsPacking = PACKING_4X4.rhs(crate::RhsFormat::Qsi4c32pscalef16);

/// Where the asm tiers find the data in this family's packed tiles for one call (docs/formats.md,
/// §LHS and §RHS): per block, LHS tiles hold the `mr` f16 row scales, then the data (`mr * bl`
/// bytes, low halves then high halves); RHS tiles the `nr` f16 scales, then the data; no
/// extras. `None` for a `bl` outside the kernels' contract.
#[cfg(target_arch = "aarch64")]
#[inline]
pub(crate) fn asm_layout<O, P>(
    args: &crate::UncheckedArgs<O, P>,
    strides: &crate::matmul::TileStrides,
    packing: &Packing,
) -> Option<crate::matmul::arch::asm::Layout> {
    let mut layout = crate::matmul::arch::asm::Layout::blocked(args, strides, packing, true)?;
    layout.lhs_data = 2 * packing.mr;
    layout.lhs_hi = packing.mr * args.bl / 2;
    layout.lhs_skip = layout.lhs_hi + layout.lhs_data;
    Some(layout)
}

/// The catalogue of a family of this arithmetic with outputs of type `$dst`: its scalar
/// kernels, `KERNELS` from its tier modules, and the dispatch functions. Every family of the
/// arithmetic declares its catalogue with this one table.
macro_rules! q4_0_catalogue {
    ($fam:ty, $dst:literal) => {
        family_catalogue!(
            $fam,
            dst: $dst,
            formats: (Qsi8d32p, Qsi4c32pscalef16),
            scalar: [
                (SCALAR_1X4, "qsi8d32p1x8_qsi4c32p4x8_1x4", PACKING_1X4),
                (SCALAR_4X4, "qsi8d32p4x8_qsi4c32p4x8_4x4", PACKING_4X4),
                (SCALAR_1X8, "qsi8d32p1x8_qsi4c32p8x8_1x8", PACKING_1X8),
                (SCALAR_4X8, "qsi8d32p4x8_qsi4c32p8x8_4x8", PACKING_4X8),
                (SCALAR_1X4_KR8, "qsi8d32p1x4_qsi4c32p4x4_1x4", PACKING_1X4_KR8),
                (SCALAR_4X4_KR8, "qsi8d32p4x4_qsi4c32p4x4_4x4", PACKING_4X4_KR8),
            ],
            fallback: SCALAR_4X4,
        );
    };
}

q4_0_catalogue!(Qsi8d32pQsi4c32p, "f32");
