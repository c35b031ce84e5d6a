//! NEON tier of `qsi8d32p_qsi4c32p`: stable `core::arch::aarch64` intrinsics, no `SDOT`/`SMMLA`,
//! for ARMv8.0 cores such as Cortex-A53/A72. Every packing of the family runs the shared
//! generic micro-kernel of `matmul::arch::neon` (integer sums per 32-deep group, operand
//! layout, tile driver); `m_step = mr`, `n_step = nr`.
//!
//! A block of `bl` depths: the LHS group is `mr` f16 scales then `mr * bl` int8, the RHS area
//! `nr` f16 scales then `bl / 2` bytes per column, byte `q` holding depth `q` (low nibble) and
//! `q + bl/2` (high). So RHS bytes `16 g .. 16 g + 16` pair with LHS depths `16 g ..` and
//! `bl/2 + 16 g ..`: for `bl = 32` the two LHS halves of a group are contiguous as in the
//! other families, for longer blocks they lie `bl / 2` depths apart (two `LD2R` instead of one
//! `LD4R` in the `bd = 8` GEMV).
//!
//! Arithmetic (docs/formats.md, §Arithmetic: qsi8d32p_qsi4c32p kernels, bit-identical to the scalar tier): `S_b` exact in int32;
//! `s = FMUL(f32(rhs f16), f32(lhs f16))` (`FCVTL`, exact, and the product is exact);
//! `acc = FMLA(acc, SCVTF(S_b), s)` per block from `+0.0`; then the shared clamp. No bias, no
//! zero-point term.

use super::Descriptor;

/// The NEON kernels of the `qsi8d32p x qsi4c32p` arithmetic with outputs of type `$dst`
/// (`"f32"`), on [`scheme::F16Blocks`]: every family of this arithmetic
/// (`qsi8d32p_qsi4c32p`) declares its NEON tier with this one table.
macro_rules! q4_0_neon_kernels {
    ($dst:literal) => {
        tier_module!(Neon, NEON_4X8, NEON_4X4, NEON_1X8, NEON_1X4, NEON_4X4_KR8, NEON_1X4_KR8);

        #[cfg(target_arch = "aarch64")]
        mod aarch64 {
            use super::super as fam;
            use super::super::Descriptor;
            use crate::matmul::arch::neon::neon_kernels;
            use crate::matmul::qsi8d32p_qsi4c32p::neon::scheme::F16Blocks;

            neon_kernels! {
                scheme: F16Blocks,
                dst: $dst,
                bl: "`bl` a multiple of 32 dividing `k`",
                (NEON_4X8, matmul_4x8_unchecked, "qsi8d32p4x8_qsi4c32p8x8_4x8", PACKING_4X8),
                (NEON_4X4, matmul_4x4_unchecked, "qsi8d32p4x8_qsi4c32p4x8_4x4", PACKING_4X4),
                (NEON_1X8, matmul_1x8_unchecked, "qsi8d32p1x8_qsi4c32p8x8_1x8", PACKING_1X8),
                (NEON_1X4, matmul_1x4_unchecked, "qsi8d32p1x8_qsi4c32p4x8_1x4", PACKING_1X4),
                (NEON_4X4_KR8, matmul_4x4_kr8_unchecked, "qsi8d32p4x4_qsi4c32p4x4_4x4", PACKING_4X4_KR8),
                (NEON_1X4_KR8, matmul_1x4_kr8_unchecked, "qsi8d32p1x4_qsi4c32p4x4_1x4", PACKING_1X4_KR8),
            }
        }
    };
}

q4_0_neon_kernels!("f32");

/// The family's part of the NEON kernels (one K pass and its epilogue; the output conversion is
/// the shared driver's).
#[cfg(target_arch = "aarch64")]
pub(crate) mod scheme {
    use crate::matmul::arch::neon::{GROUP, Group, Pass, Scheme, Values, block_loop};
    use core::arch::aarch64::*;

    /// Four f16 values at `p` widened to f32 (`FCVTL`, exact).
    ///
    /// # Safety
    ///
    /// `p` is readable for 8 bytes.
    #[target_feature(enable = "neon")]
    #[inline]
    unsafe fn f16x4(p: *const u8) -> float32x4_t {
        // SAFETY: caller's contract; loaded as bytes (`LD1 .8b`, no alignment promise at the Rust
        // level) and reinterpreted as four f16.
        unsafe { vcvt_f32_f16(vreinterpret_f16_u8(vld1_u8(p))) }
    }

    /// Lane `i` (`< 4`) of `v`.
    #[target_feature(enable = "neon")]
    #[inline]
    fn lane(v: float32x4_t, i: usize) -> f32 {
        match i {
            0 => vgetq_lane_f32::<0>(v),
            1 => vgetq_lane_f32::<1>(v),
            2 => vgetq_lane_f32::<2>(v),
            _ => vgetq_lane_f32::<3>(v),
        }
    }

    /// The family's [`Scheme`]: `qsi8d32p` LHS tiles (`mr * k/bl * (bl + 2)` bytes), `qsi4c32p`
    /// RHS tiles with f16 scales (`nr * k/bl * (bl/2 + 2)` bytes).
    pub(crate) struct F16Blocks;

    impl Scheme for F16Blocks {
        type Params = ();

        #[target_feature(enable = "neon")]
        #[inline]
        unsafe fn pass<const MR: usize, const NR: usize, const BD: usize, const NB: usize>(
            p: Pass<Self::Params>,
        ) -> Values<MR, NB> {
            let (lhs, rhs, col0, k, bl) = (p.lhs, p.rhs, p.col0, p.k, p.bl);
            let (lhs_block, rhs_block) = (MR * (bl + 2), NR * (bl / 2 + 2));
            let at = |b: usize, g: usize| {
                let data = lhs.wrapping_add(b * lhs_block + 2 * MR);
                Group {
                    lo: data.wrapping_add(16 * MR * g),
                    hi: data.wrapping_add(MR * (bl / 2 + 16 * g)),
                    rhs: rhs.wrapping_add(b * rhs_block + 2 * NR + g * 16 * NR + BD * col0),
                }
            };
            // s[r][i] = f32(rhs scale) * f32(lhs scale of row r): both exact.
            let scales = |b: usize| {
                let rs = rhs.wrapping_add(b * rhs_block + 2 * col0);
                // SAFETY: the group's `MR` f16 scales lead its `MR * (bl + 2) >= 8` bytes, the
                // area's `NR` f16 scales lead it and `col0 + 4 * NB <= NR`.
                let (ls, rs): (_, [float32x4_t; NB]) =
                    unsafe { (f16x4(lhs.wrapping_add(b * lhs_block)), core::array::from_fn(|i| f16x4(rs.add(8 * i)))) };
                core::array::from_fn(|r| rs.map(|x| vmulq_n_f32(x, lane(ls, r))))
            };
            let (blocks, groups) = (k / bl, bl / GROUP);
            // SAFETY: `k / bl` blocks of `bl / 32` groups of whole tiles (caller's contract); the
            // LHS halves of a group are contiguous for `bl = 32` (the only form that differs is
            // the `bd = 8` GEMV's, so only it gets a second copy).
            unsafe {
                if BD == 8 && MR == 1 && bl == GROUP {
                    block_loop::<MR, NR, BD, NB, true>(blocks, groups, at, scales)
                } else {
                    block_loop::<MR, NR, BD, NB, false>(blocks, groups, at, scales)
                }
            }
        }
    }
}
