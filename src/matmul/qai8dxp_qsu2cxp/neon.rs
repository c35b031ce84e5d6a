//! NEON tier of `qai8dxp_qsu2cxp`: stable `core::arch::aarch64` intrinsics, no `SDOT`/`SMMLA`,
//! for ARMv8.0 cores such as Cortex-A53/A72. Both packings run the shared generic micro-kernel
//! of `matmul::arch::neon` (tile driver, int8 K loop, per-channel epilogue); `m_step = mr`,
//! `n_step = nr = 4`, any `m` (KleidiAI's GEMV kernel takes `m = 1` only).
//!
//! K loop: the 16 code bytes of a 16-depth group hold, for 4 columns x 4 depths, the codes of
//! depths `4s .. 4s + 4` of the group in bits `2s, 2s + 1`: shifted right by `2s` and masked
//! (`USHL`, `AND`) they are the codes of chunk `s` in the int8 layout of the `kr = 4` int8
//! family, and `TBL` through the call's table (narrowed to int8, 4 entries in a 16-byte
//! register) turns them into the weights. The int8 sums are then those of `qai8dxp_qsi8cxp`
//! (`SMULL`/`SMULL2` + `SADALP`, exact modulo 2^32).
//!
//! Epilogue (bit-identical to the scalar tier): `iacc = sum + rsum * offset` (`MLA`),
//! `f = SCVTF(iacc)`; GEMV packing (`mr = 1`): `out = FADD(FMUL(f, FMUL(scale, dq)), bias)`;
//! GEMM packing (`mr = 4`): `out = FADD(FMUL(FMUL(f, scale), dq), bias)` (KleidiAI's two
//! orders); then the shared clamp `FMIN(FMAX(out, min), max)`.

use super::Descriptor;

tier_module!(Neon, NEON_4X4, NEON_1X4);

#[cfg(target_arch = "aarch64")]
mod aarch64 {
    use super::super as fam;
    use super::super::Descriptor;
    use super::scheme::TwoBit;
    use crate::matmul::arch::neon::neon_kernels;

    neon_kernels! {
        scheme: TwoBit,
        dst: "f32",
        bl: "`bl == 0`, `k` a multiple of 32",
        (NEON_4X4, matmul_4x4_unchecked, "qai8dxp4x4_qsu2cxp4x4bf32sf32_4x4", PACKING_4X4),
        (NEON_1X4, matmul_1x4_unchecked, "qai8dxp1x4_qsu2cxp4x4bf32sf32_1x4", PACKING_1X4),
    }
}

/// The family's part of the NEON kernels (one K pass and its epilogue).
#[cfg(target_arch = "aarch64")]
mod scheme {
    use crate::matmul::arch::neon::{Pass, Scheme, Values, per_channel_values_with, sum_i8_with};
    use core::arch::aarch64::*;

    /// The family's [`Scheme`]: `qai8dxp` LHS tiles (`mr * (k + 8)` bytes), `qsu2cxp` RHS
    /// tiles (`nr * (k/4 + 12)` bytes), one integer sum over `k`.
    pub(crate) struct TwoBit;

    impl Scheme for TwoBit {
        type Params = crate::matmul::Lut;

        #[target_feature(enable = "neon")]
        #[inline]
        unsafe fn pass<const MR: usize, const NR: usize, const BD: usize, const NB: usize>(
            p: Pass<Self::Params>,
        ) -> Values<MR, NB> {
            const { assert!((MR == 1 || MR == 4) && BD == 4 && NR == 4) };
            let k = p.k;
            // The table narrowed to int8 (KleidiAI's kernels narrow it the same way), in the
            // first 4 bytes of a TBL register; the other indices never occur (codes are 0..=3).
            let mut bytes = [0i8; 16];
            for (b, &v) in bytes.iter_mut().zip(&p.params.0) {
                *b = v as i8;
            }
            // SAFETY: a local array of 16 bytes.
            let table = unsafe { vld1q_s8(bytes.as_ptr()) };
            let three = vdupq_n_u8(3);
            // Column `col0 + i`'s 4 bytes of group `g` are at `g * 4 * NR + 4 * (col0 + i)`.
            let codes = p.rhs.wrapping_add(4 * p.col0);
            let weights = |c: usize, b: usize, _v: usize| {
                let at = codes.wrapping_add((c / 4) * 4 * NR + 16 * b);
                // SAFETY: the 16 code bytes of columns `col0 + 4b .. col0 + 4b + 4` of group
                // `c / 4 < k / 16`: inside the pass's RHS tile (the caller's contract of `pass`).
                let x = unsafe { vld1q_u8(at) };
                let shift = vdupq_n_s8(-2 * (c % 4) as i8);
                vqtbl1q_s8(table, vandq_u8(vshlq_u8(x, shift), three))
            };
            // SAFETY: `MR` is 1 or 4 and `BD` 4 (asserted above); the LHS tile holds
            // `k / 4` chunks of `MR` rows, and `weights` reads inside the RHS tile.
            let acc = unsafe { sum_i8_with::<MR, NR, BD, NB>(k / BD, p.lhs, weights) };
            let (lhs_x, rhs_x) = (p.lhs.wrapping_add(MR * k), p.rhs.wrapping_add(NR * k / 4 + 4 * p.col0));
            // SAFETY: the LHS extras (offsets, dq) follow the tile's data, and the RHS extras
            // (rsum, scale, bias: NR values each) the RHS tile's codes; `col0 + 4 * NB <= NR`.
            unsafe {
                per_channel_values_with::<MR, NR, NB, 0>(acc, lhs_x, rhs_x, |f, scale, dq| {
                    if MR == 1 {
                        // GEMV order: f * (dq * scale).
                        vmulq_f32(f, vmulq_n_f32(scale, dq))
                    } else {
                        // GEMM order: (f * scale) * dq.
                        vmulq_n_f32(vmulq_f32(f, scale), dq)
                    }
                })
            }
        }
    }
}
