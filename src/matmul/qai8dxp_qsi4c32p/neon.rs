//! NEON tier of `qai8dxp_qsi4c32p`: stable `core::arch::aarch64` intrinsics, no `SDOT`/`SMMLA`,
//! for ARMv8.0 cores such as Cortex-A53/A72. Every packing of the family runs the shared
//! generic micro-kernel of `matmul::arch::neon` (integer sums per 32-deep group, operand
//! layout, tile driver); `m_step = mr`, `n_step = nr`.
//!
//! A block of `bl` depths is `bl / 32` groups laid out exactly like the per-channel family's
//! (LHS `qai8dxp`, RHS byte `q` holding depths `32 (q/16) + q%16` and that `+ 16`), followed
//! in the RHS by the block's `nr` bf16 scales. Arithmetic (docs/formats.md, §Arithmetic: qai8dxp_qsi4c32p kernels, bit-identical
//! to the scalar tier): `S_b` exact in int32; `acc = FMLA(acc, SCVTF(S_b), bf16 -> f32 scale)`
//! per block from `+0.0` (the bf16 is widened with `USHLL #16`, exact); after the blocks
//! `acc = FMLA(acc, rsum, float(offset))`, `acc = FMUL(acc, dq)`, `acc = FADD(acc, bias)`, then
//! the shared clamp.

use super::Descriptor;

/// The NEON kernels of the `qai8dxp x qsi4c32p` arithmetic with outputs of type `$dst`
/// (`"f32"`, `"bf16"`), on [`scheme::Bf16Blocks`]: every family of this arithmetic
/// (`qai8dxp_qsi4c32p`, `bf16_qai8dxp_qsi4c32p`) declares its NEON tier with this one table.
macro_rules! qsi4c32p_neon_kernels {
    ($dst:literal, $packings:ident) => {
        subset_tier_module!(
            Neon,
            $packings,
            [NEON_4X8, NEON_4X4, NEON_1X8, NEON_1X4],
            [NEON_4X8_KR8, NEON_4X4_KR8, NEON_1X8_KR8, NEON_1X4_KR8]
        );

        #[cfg(target_arch = "aarch64")]
        mod aarch64 {
            use super::super as fam;
            use super::super::Descriptor;
            use crate::matmul::arch::neon::neon_kernels;
            use crate::matmul::qai8dxp_qsi4c32p::neon::scheme::Bf16Blocks;

            neon_kernels! {
                scheme: Bf16Blocks,
                dst: $dst,
                bl: "`bl` a multiple of 32 dividing `k`",
                (NEON_4X8, matmul_4x8_unchecked, "qai8dxp4x8_qsi4c32p8x8_4x8", PACKING_4X8),
                (NEON_4X4, matmul_4x4_unchecked, "qai8dxp4x8_qsi4c32p4x8_4x4", PACKING_4X4),
                (NEON_1X8, matmul_1x8_unchecked, "qai8dxp1x8_qsi4c32p8x8_1x8", PACKING_1X8),
                (NEON_1X4, matmul_1x4_unchecked, "qai8dxp1x8_qsi4c32p4x8_1x4", PACKING_1X4),
            }
            if_all_packings!(
                $packings,
                neon_kernels! {
                    scheme: Bf16Blocks,
                    dst: $dst,
                    bl: "`bl` a multiple of 32 dividing `k`",
                    (NEON_4X8_KR8, matmul_4x8_kr8_unchecked, "qai8dxp4x4_qsi4c32p8x4_4x8", PACKING_4X8_KR8),
                    (NEON_4X4_KR8, matmul_4x4_kr8_unchecked, "qai8dxp4x4_qsi4c32p4x4_4x4", PACKING_4X4_KR8),
                    (NEON_1X8_KR8, matmul_1x8_kr8_unchecked, "qai8dxp1x4_qsi4c32p8x4_1x8", PACKING_1X8_KR8),
                    (NEON_1X4_KR8, matmul_1x4_kr8_unchecked, "qai8dxp1x4_qsi4c32p4x4_1x4", PACKING_1X4_KR8),
                }
            );
        }
    };
}
pub(crate) use qsi4c32p_neon_kernels;

qsi4c32p_neon_kernels!("f32", all);

/// The family's part of the NEON kernels (one K pass and its epilogue; the output conversion is
/// the shared driver's).
#[cfg(target_arch = "aarch64")]
pub(crate) mod scheme {
    use crate::matmul::arch::neon::{GROUP, Group, Pass, Scheme, Values, block_loop};
    use core::arch::aarch64::*;

    /// The family's [`Scheme`]: `qai8dxp` LHS tiles (`mr * (k + 8)` bytes), `qsi4c32p` RHS tiles
    /// (`nr * ((bl/2 + 2) * k/bl + 8)` bytes).
    pub(crate) struct Bf16Blocks;

    impl Scheme for Bf16Blocks {
        type Params = ();

        #[target_feature(enable = "neon")]
        #[inline]
        unsafe fn pass<const MR: usize, const NR: usize, const BD: usize, const NB: usize>(
            p: Pass<Self::Params>,
        ) -> Values<MR, NB> {
            let (lhs, rhs, col0, k, bl) = (p.lhs, p.rhs, p.col0, p.k, p.bl);
            let (blocks, rhs_block) = (k / bl, NR * (bl / 2 + 2));
            let at = |b: usize, g: usize| {
                let lo = lhs.wrapping_add((b * bl + g * GROUP) * MR);
                let rhs = rhs.wrapping_add(b * rhs_block + g * 16 * NR + BD * col0);
                Group { lo, hi: lo.wrapping_add(16 * MR), rhs }
            };
            // bf16 -> f32 (exact): the 16 bits move to the top of each 32-bit lane.
            let scales = |b: usize| {
                let at = rhs.wrapping_add(b * rhs_block + NR * bl / 2 + 2 * col0);
                // SAFETY: the block's `NR` bf16 scales follow its data; `col0 + 4 * NB <= NR`. The
                // 8 bytes are loaded as bytes (no alignment promise) and reinterpreted.
                let s: [float32x4_t; NB] = core::array::from_fn(|i| unsafe {
                    vreinterpretq_f32_u32(vshll_n_u16::<16>(vreinterpret_u16_u8(vld1_u8(at.add(8 * i)))))
                });
                [s; MR]
            };
            // SAFETY: `k / bl` blocks of `bl / 32` groups of whole tiles (caller's contract); the LHS
            // halves of a group are contiguous.
            let acc = unsafe { block_loop::<MR, NR, BD, NB, true>(blocks, bl / GROUP, at, scales) };

            let lhs_x = lhs.wrapping_add(MR * k);
            let rhs_x = rhs.wrapping_add(blocks * rhs_block + 4 * col0);
            let mut out = acc;
            for (r, out_r) in out.iter_mut().enumerate() {
                // SAFETY: the LHS extras (offset[MR] i32, dq[MR] f32) follow the tile's data.
                let (offset, dq) = unsafe {
                    (
                        lhs_x.add(4 * r).cast::<i32>().read_unaligned(),
                        lhs_x.add(4 * MR + 4 * r).cast::<f32>().read_unaligned(),
                    )
                };
                for (b, o) in out_r.iter_mut().enumerate() {
                    // SAFETY: the RHS extras (rsum, bias: NR f32 each) follow the blocks and
                    // `col0 + 4 * b + 4 <= NR`; loaded as bytes (the tile gives no f32 alignment).
                    let (rsum, bias) = unsafe {
                        (
                            vreinterpretq_f32_u8(vld1q_u8(rhs_x.add(16 * b))),
                            vreinterpretq_f32_u8(vld1q_u8(rhs_x.add(4 * NR + 16 * b))),
                        )
                    };
                    *o = vaddq_f32(vmulq_n_f32(vfmaq_n_f32(*o, rsum, offset as f32), dq), bias);
                }
            }
            out
        }
    }
}
