//! NEON tier of `qai8dxp_qsi8cxp`: stable `core::arch::aarch64` intrinsics, no `SDOT`/`SMMLA`,
//! for ARMv8.0 cores such as Cortex-A53/A72. Every packing of the family runs the shared
//! generic micro-kernel of `matmul::arch::neon` (tile driver, int8 K loop `sum_i8`, per-channel
//! epilogue); `m_step = mr`, `n_step = nr`.
//!
//! K pass: `sum_i8` over the `Kp / bd` chunks gives `sum q * w` modulo 2^32 per row and column
//! (`SMULL`/`SMULL2` + `SADALP`). Epilogue per 4 columns (docs/formats.md, §Arithmetic:
//! qai8dxp_qsi8cxp kernels, bit-identical to the scalar tier): `iacc = acc + rsum * offset`
//! (`MLA`), `f = SCVTF(iacc)`, `s = FMUL(scale, dq)`, `out = FADD(FMUL(f, s), bias)`, then the
//! shared clamp `FMIN(FMAX(out, min), max)`.

use super::Descriptor;

/// The NEON kernels of the `qai8dxp x qsi8cxp` arithmetic with outputs of type `$dst`
/// (`"f32"`, `"f16"`), on [`scheme::PerChannelInt8`]: every family of this arithmetic
/// (`qai8dxp_qsi8cxp`, `f16_qai8dxp_qsi8cxp`) declares its NEON tier with this one table.
macro_rules! qsi8cxp_neon_kernels {
    ($dst:literal) => {
        tier_module!(Neon, NEON_4X4, NEON_1X4, NEON_4X4_KR4, NEON_1X4_KR4);

        #[cfg(target_arch = "aarch64")]
        mod aarch64 {
            use super::super as fam;
            use super::super::Descriptor;
            use crate::matmul::arch::neon::neon_kernels;
            use crate::matmul::qai8dxp_qsi8cxp::neon::scheme::PerChannelInt8;

            neon_kernels! {
                scheme: PerChannelInt8,
                dst: $dst,
                bl: "`bl == 0`",
                (NEON_4X4, matmul_4x4_unchecked, "qai8dxp4x8_qsi8cxp4x8_4x4", PACKING_4X4),
                (NEON_1X4, matmul_1x4_unchecked, "qai8dxp1x8_qsi8cxp4x8_1x4", PACKING_1X4),
                (NEON_4X4_KR4, matmul_4x4_kr4_unchecked, "qai8dxp4x4_qsi8cxp4x4_4x4", PACKING_4X4_KR4),
                (NEON_1X4_KR4, matmul_1x4_kr4_unchecked, "qai8dxp1x4_qsi8cxp4x4_1x4", PACKING_1X4_KR4),
            }
        }
    };
}
pub(crate) use qsi8cxp_neon_kernels;

qsi8cxp_neon_kernels!("f32");

/// The family's part of the NEON kernels (one K pass and its epilogue; the output conversion is
/// the shared driver's).
#[cfg(target_arch = "aarch64")]
pub(crate) mod scheme {
    use crate::matmul::arch::neon::{Pass, Scheme, Values, per_channel_values, sum_i8};
    /// The family's [`Scheme`]: `qai8dxp` LHS tiles (`mr * (Kp + 8)` bytes), `qsi8cxp` RHS tiles
    /// (`nr * (Kp + 12)` bytes), one integer sum over `Kp`.
    pub(crate) struct PerChannelInt8;

    impl Scheme for PerChannelInt8 {
        type Params = ();

        #[target_feature(enable = "neon")]
        #[inline]
        unsafe fn pass<const MR: usize, const NR: usize, const BD: usize, const NB: usize>(
            p: Pass<Self::Params>,
        ) -> Values<MR, NB> {
            let kp = p.k.div_ceil(32) * 32;
            // SAFETY: the `Kp / BD` chunks of whole tiles (caller's contract), from the pass's
            // first column (`BD` bytes per column in a chunk).
            let acc = unsafe { sum_i8::<MR, NR, BD, NB>(kp / BD, p.lhs, p.rhs.wrapping_add(BD * p.col0)) };
            let (lhs_x, rhs_x) = (p.lhs.wrapping_add(MR * kp), p.rhs.wrapping_add(NR * kp + 4 * p.col0));
            // SAFETY: the LHS extras follow the tile's data, and the RHS extras (rsum, scale,
            // bias: NR values each) the RHS tile's; `col0 + 4 * NB <= NR`.
            unsafe { per_channel_values::<MR, NR, NB, 0>(acc, lhs_x, rhs_x) }
        }
    }
}
