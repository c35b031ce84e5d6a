//! NEON tier of `qai8dxp_qsi4cxp`: stable `core::arch::aarch64` intrinsics, no `SDOT`/`SMMLA`,
//! for ARMv8.0 cores such as Cortex-A53/A72. Every packing of the family runs the shared
//! generic micro-kernel of `matmul::arch::neon` (integer K loop, operand layout, tile
//! driver); `m_step = mr`, `n_step = nr`.
//!
//! K pass: one run of `sum_groups` over all `Kp / 32` groups gives `sum q * w` modulo 2^32 per
//! row and column; `SHL #4` turns it into the arithmetic's `sum q * 16w` (multiplying by 16 commutes
//! with the reduction modulo 2^32).
//!
//! Epilogue per 4 columns (docs/formats.md, §Arithmetic: qai8dxp_qsi4cxp kernels, bit-identical to the scalar tier):
//! `iacc = (acc << 4) + rsum * offset` (`MLA`), `f = SCVTF(iacc)`, `s = FMUL(scale16, dq)`,
//! `out = FADD(FMUL(f, s), bias)`, then the shared clamp `FMIN(FMAX(out, min), max)`.
//!
//! A K pass covers `NB` blocks of 4 columns. The `mr = 4` kernels use one block per pass
//! (32 vector registers), so a 4x8 tile runs two passes over the same LHS tile; every RHS byte
//! is still loaded and unpacked once per tile.

use super::Descriptor;

/// The NEON kernels of the `qai8dxp x qsi4cxp` arithmetic with outputs of type `$dst`
/// (`"f32"`, `"f16"`, `"bf16"`), on [`scheme::PerChannel`]: every family of this arithmetic
/// (`qai8dxp_qsi4cxp`, `f16_qai8dxp_qsi4cxp`, `bf16_qai8dxp_qsi4cxp`) declares its NEON tier with this one table.
macro_rules! qsi4cxp_neon_kernels {
    ($dst:literal, $packings:ident) => {
        subset_tier_module!(
            Neon,
            $packings,
            [NEON_4X8, NEON_4X4, NEON_1X8, NEON_1X4],
            [NEON_4X8_KR8, NEON_4X4_KR8, NEON_1X4_KR8]
        );

        #[cfg(target_arch = "aarch64")]
        mod aarch64 {
            use super::super as fam;
            use super::super::Descriptor;
            use crate::matmul::arch::neon::neon_kernels;
            use crate::matmul::qai8dxp_qsi4cxp::neon::scheme::PerChannel;

            neon_kernels! {
                scheme: PerChannel,
                dst: $dst,
                bl: "`bl == 0`",
                (NEON_4X8, matmul_4x8_unchecked, "qai8dxp4x8_qsi4cxp8x8_4x8", PACKING_4X8),
                (NEON_4X4, matmul_4x4_unchecked, "qai8dxp4x8_qsi4cxp4x8_4x4", PACKING_4X4),
                (NEON_1X8, matmul_1x8_unchecked, "qai8dxp1x8_qsi4cxp8x8_1x8", PACKING_1X8),
                (NEON_1X4, matmul_1x4_unchecked, "qai8dxp1x8_qsi4cxp4x8_1x4", PACKING_1X4),
            }
            if_all_packings!(
                $packings,
                neon_kernels! {
                    scheme: PerChannel,
                    dst: $dst,
                    bl: "`bl == 0`",
                    (NEON_4X8_KR8, matmul_4x8_kr8_unchecked, "qai8dxp4x4_qsi4cxp8x4_4x8", PACKING_4X8_KR8),
                    (NEON_4X4_KR8, matmul_4x4_kr8_unchecked, "qai8dxp4x4_qsi4cxp4x4_4x4", PACKING_4X4_KR8),
                    (NEON_1X4_KR8, matmul_1x4_kr8_unchecked, "qai8dxp1x4_qsi4cxp4x4_1x4", PACKING_1X4_KR8),
                }
            );
        }
    };
}
pub(crate) use qsi4cxp_neon_kernels;

qsi4cxp_neon_kernels!("f32", all);

/// The family's part of the NEON kernels (one K pass and its epilogue; the output conversion is
/// the shared driver's).
#[cfg(target_arch = "aarch64")]
pub(crate) mod scheme {
    use crate::matmul::arch::neon::{GROUP, Group, Pass, Scheme, Values, per_channel_values, sum_groups};
    /// The family's [`Scheme`]: `qai8dxp` LHS tiles (`mr * (Kp + 8)` bytes), `qsi4cxp` RHS tiles
    /// (`nr * (Kp/2 + 12)` bytes), one integer sum over `Kp`.
    pub(crate) struct PerChannel;

    impl Scheme for PerChannel {
        type Params = ();

        #[target_feature(enable = "neon")]
        #[inline]
        unsafe fn pass<const MR: usize, const NR: usize, const BD: usize, const NB: usize>(
            p: Pass<Self::Params>,
        ) -> Values<MR, NB> {
            let (lhs, rhs, col0, k) = (p.lhs, p.rhs, p.col0, p.k);
            let groups = k.div_ceil(GROUP);
            let at = |g: usize| {
                let lo = lhs.wrapping_add(g * GROUP * MR);
                let rhs = rhs.wrapping_add(g * 16 * NR + BD * col0);
                Group { lo, hi: lo.wrapping_add(16 * MR), rhs }
            };
            // SAFETY: the `Kp / 32` groups of whole tiles (caller's contract); the LHS halves of a
            // group are contiguous.
            let acc = unsafe { sum_groups::<MR, NR, BD, NB, true>(groups, at) };

            let kp = groups * GROUP;
            let (lhs_x, rhs_x) = (lhs.wrapping_add(MR * kp), rhs.wrapping_add(NR * kp / 2 + 4 * col0));
            // SAFETY: the LHS extras follow the tile's data, and the RHS extras (rsum, scale16,
            // bias: NR values each) the RHS tile's; `col0 + 4 * NB <= NR`.
            unsafe { per_channel_values::<MR, NR, NB, 4>(acc, lhs_x, rhs_x) }
        }
    }
}
