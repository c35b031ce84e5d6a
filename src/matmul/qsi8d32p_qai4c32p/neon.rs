//! NEON tier of `qsi8d32p_qai4c32p`: stable `core::arch::aarch64` intrinsics, no `SDOT`/`SMMLA`,
//! for ARMv8.0 cores such as Cortex-A53/A72. Every packing of the family runs the shared
//! generic micro-kernel of `matmul::arch::neon` (integer sums per 32-deep group, operand
//! layout, tile driver); `m_step = mr`, `n_step = nr`, any `m` (KleidiAI's GEMV kernels of
//! this family take `m = 1` only).
//!
//! A block of `bl` depths: the LHS group is `mr * bl` int8 then `mr` f32 block sums and `mr`
//! f32 scales; the RHS area `bl / 2` bytes per column then `nr` f32 offsets and `nr` f32
//! scales (`scale * 1/16`). Byte `q` of a 32-deep group holds depths `q` and `q + 16`, so the
//! two LHS halves of a group are contiguous, as in the per-channel families.
//!
//! Arithmetic (docs/formats.md, §Arithmetic: qsi8d32p_qai4c32p kernels, bit-identical to the
//! scalar tier), per block from `+0.0`: `acc = FMLA(acc, zero, bsum)`, then
//! `acc = FMLA(acc, SCVTF(S_b << 4), FMUL(scale16, lhs scale))`; then `FADD` of the bias and the
//! shared clamp.

use super::Descriptor;

/// The NEON kernels of the `qsi8d32p x qai4c32p` arithmetic with outputs of type `$dst`
/// (`"f32"`, `"f16"`), on [`scheme::AsymBlocks`]: both families of this arithmetic declare their
/// NEON tier with this one table.
macro_rules! qai4c32p_neon_kernels {
    ($dst:literal) => {
        tier_module!(Neon, NEON_4X4, NEON_1X4, NEON_4X4_KR8, NEON_1X4_KR8);

        #[cfg(target_arch = "aarch64")]
        mod aarch64 {
            use super::super as fam;
            use super::super::Descriptor;
            use crate::matmul::arch::neon::neon_kernels;
            use crate::matmul::qsi8d32p_qai4c32p::neon::scheme::AsymBlocks;

            neon_kernels! {
                scheme: AsymBlocks,
                dst: $dst,
                bl: "`bl` a multiple of 32 dividing `k`",
                (NEON_4X4, matmul_4x4_unchecked, "qsi8d32p4x8_qai4c32p4x8_4x4", PACKING_4X4),
                (NEON_1X4, matmul_1x4_unchecked, "qsi8d32p1x8_qai4c32p4x8_1x4", PACKING_1X4),
                (NEON_4X4_KR8, matmul_4x4_kr8_unchecked, "qsi8d32p4x4_qai4c32p4x4_4x4", PACKING_4X4_KR8),
                (NEON_1X4_KR8, matmul_1x4_kr8_unchecked, "qsi8d32p1x4_qai4c32p4x4_1x4", PACKING_1X4_KR8),
            }
        }
    };
}
pub(crate) use qai4c32p_neon_kernels;

qai4c32p_neon_kernels!("f32");

/// The family's part of the NEON kernels (one K pass and its epilogue; the output conversion is
/// the shared driver's).
#[cfg(target_arch = "aarch64")]
pub(crate) mod scheme {
    use crate::matmul::arch::neon::{GROUP, Group, Pass, Scheme, Values, offset_block_loop};
    use core::arch::aarch64::*;

    /// Four f32 at `p` (loaded as bytes: the tiles give no f32 alignment).
    ///
    /// # Safety
    ///
    /// `p` is readable for 16 bytes.
    #[target_feature(enable = "neon")]
    #[inline]
    unsafe fn f32x4(p: *const u8) -> float32x4_t {
        // SAFETY: caller's contract.
        unsafe { vreinterpretq_f32_u8(vld1q_u8(p)) }
    }

    /// One f32 at `p`.
    ///
    /// # Safety
    ///
    /// `p` is readable for 4 bytes.
    #[inline]
    unsafe fn f32_at(p: *const u8) -> f32 {
        // SAFETY: caller's contract; unaligned read.
        unsafe { p.cast::<f32>().read_unaligned() }
    }

    /// The family's [`Scheme`]: `qsi8d32pscalef32` LHS tiles (`mr * k/bl * (bl + 8)` bytes),
    /// `qai4c32p` RHS tiles (`nr * (k/bl * (bl/2 + 8) + 4)` bytes).
    pub(crate) struct AsymBlocks;

    impl Scheme for AsymBlocks {
        type Params = ();

        #[target_feature(enable = "neon")]
        #[inline]
        unsafe fn pass<const MR: usize, const NR: usize, const BD: usize, const NB: usize>(
            p: Pass<Self::Params>,
        ) -> Values<MR, NB> {
            let (lhs, rhs, col0, k, bl) = (p.lhs, p.rhs, p.col0, p.k, p.bl);
            let (blocks, lhs_block, rhs_block) = (k / bl, MR * (bl + 8), NR * (bl / 2 + 8));
            let at = |b: usize, g: usize| {
                let lo = lhs.wrapping_add(b * lhs_block + g * GROUP * MR);
                let rhs = rhs.wrapping_add(b * rhs_block + g * 16 * NR + BD * col0);
                Group { lo, hi: lo.wrapping_add(16 * MR), rhs }
            };
            // The RHS extras of block `b` for the pass's columns: offsets at `NR * bl/2`, scales
            // after them; the LHS extras: block sums at `MR * bl`, scales after them.
            let rhs_x = |b: usize| rhs.wrapping_add(b * rhs_block + NR * bl / 2 + 4 * col0);
            let lhs_x = |b: usize| lhs.wrapping_add(b * lhs_block + MR * bl);
            // s[r][i] = fl(scale16[c] * lhs scale[r]).
            let scales = |b: usize| -> Values<MR, NB> {
                let (l, r) = (lhs_x(b), rhs_x(b));
                // SAFETY: the block's `MR` LHS scales and `NR` RHS scales lie inside its tiles'
                // block extras; `col0 + 4 * NB <= NR`.
                unsafe {
                    let rs: [float32x4_t; NB] = core::array::from_fn(|i| f32x4(r.add(4 * NR + 16 * i)));
                    core::array::from_fn(|row| rs.map(|x| vmulq_n_f32(x, f32_at(l.add(4 * MR + 4 * row)))))
                }
            };
            // acc[r][i] = fma(zero[c], bsum[r], acc), before the block's data term.
            let offset = |b: usize, acc: &mut Values<MR, NB>| {
                let (l, r) = (lhs_x(b), rhs_x(b));
                // SAFETY: as for `scales`: the block's `MR` sums and `NR` offsets.
                unsafe {
                    let zero: [float32x4_t; NB] = core::array::from_fn(|i| f32x4(r.add(16 * i)));
                    for (row, acc_r) in acc.iter_mut().enumerate() {
                        let bsum = f32_at(l.add(4 * row));
                        for (a, z) in acc_r.iter_mut().zip(zero) {
                            *a = vfmaq_n_f32(*a, z, bsum);
                        }
                    }
                }
            };
            // SAFETY: `k / bl` blocks of `bl / 32` groups of whole tiles (caller's contract); the
            // LHS halves of a group are contiguous.
            let mut acc =
                unsafe { offset_block_loop::<MR, NR, BD, NB, true, true>(blocks, bl / GROUP, at, scales, offset) };
            let bias = rhs.wrapping_add(blocks * rhs_block + 4 * col0);
            for acc_r in acc.iter_mut() {
                for (i, a) in acc_r.iter_mut().enumerate() {
                    // SAFETY: the tile's `NR` f32 bias values follow its blocks.
                    *a = vaddq_f32(*a, unsafe { f32x4(bias.add(16 * i)) });
                }
            }
            acc
        }
    }
}
