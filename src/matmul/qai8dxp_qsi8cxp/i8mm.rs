//! i8mm tier of `qai8dxp_qsi8cxp`: hand-written `SMMLA` kernels (FEAT_I8MM) on
//! [`PACKING_4X4`](super::PACKING_4X4) (`mr = 4`, `nr = 4`, `kr = 8`, `sr = 1`).
//!
//! `SMMLA Vd.4S, Vn.16B, Vm.16B` adds a 2x8 by 8x2 int8 product to a 2x2 int32 block
//! `[r0c0, r0c1, r1c0, r1c1]`. Both operands come straight from the packed tiles, with no
//! unpack (the weights are int8):
//!
//! * LHS (4 rows): an 8-depth chunk is 32 bytes, rows 0-1 then rows 2-3: one `LDP` gives the
//!   two `Vn` operands (v29, v30).
//! * RHS (4 columns): an 8-depth chunk is 32 bytes, columns 0-1 then 2-3: one `LDP` gives the
//!   two `Vm` operands. Two chunks (v24-v27) are loaded per half group and shared by every LHS
//!   tile of the output tile.
//!
//! So the K loop issues nothing on the SIMD pipes but `SMMLA`: 4 per chunk and LHS tile. A
//! tile kernel covers `R` LHS tiles (`4R` rows, accumulators `v0..v4R`, `R <= 6`) x the 4
//! columns of one RHS tile; a catalogue kernel with `m_step = 4R` runs the `R`-tile kernel and,
//! for the last rows, the kernel of the row tiles that remain. The epilogue (de-interleave the
//! 2x2 blocks into rows, the per-channel output math, clamp, stores) is shared with
//! `qai8dxp_qsi4cxp` (`matmul::arch::i8mm`).

use super::Descriptor;

/// The i8mm kernels of the `qai8dxp x qsi8cxp` arithmetic with outputs of type `$dst`
/// (`"f32"`, `"f16"`), on the tile kernels of [`tiles`]`::$out`: every family of this arithmetic
/// (`qai8dxp_qsi8cxp`, `f16_qai8dxp_qsi8cxp`) declares its i8mm tier with this one table (`$feature`: what the
/// kernels need, for their docs; `also: Bf16`: they also need FEAT_BF16).
macro_rules! qsi8cxp_i8mm_kernels {
    ($dst:literal, $out:ident, $feature:literal $(, also: $extra:ident)?) => {
        tier_module!(I8mm, I8MM_24X4, I8MM_16X4, I8MM_8X4, I8MM_4X4);

        #[cfg(target_arch = "aarch64")]
        mod aarch64 {
            use super::super as fam;
            use super::super::Descriptor;
            use crate::matmul::qai8dxp_qsi8cxp::i8mm::tiles::$out::run;
            use crate::matmul::{Tier, UncheckedArgs};

            asm_catalogue! {
                tier: I8mm, feature: $feature, dst: $dst, suffix: "_neon_i8mm" $(, also: $extra)?;
                PACKING_4X4, "qai8dxp4x8_qsi8cxp4x8_", [
                    I8MM_24X4 matmul_24x4_unchecked (24, 4) => run(6),
                    I8MM_16X4 matmul_16x4_unchecked (16, 4) => run(4),
                    I8MM_8X4 matmul_8x4_unchecked (8, 4) => run(2),
                    I8MM_4X4 matmul_4x4_unchecked (4, 4) => run(1),
                ];
            }
        }
    };
}
pub(crate) use qsi8cxp_i8mm_kernels;

qsi8cxp_i8mm_kernels!("f32", f32_out, "FEAT_I8MM");

/// The tile kernels of the i8mm tier and their `run`, one module per output type.
#[cfg(target_arch = "aarch64")]
pub(crate) mod tiles {
    use crate::matmul::arch::asm::{MAX_TILES, TileKernel, gemm};
    use crate::matmul::qai8dxp_qsi8cxp as fam;
    use crate::matmul::{Packing, TileStrides, UncheckedArgs};

    /// Two 8-depth chunks of every LHS tile: the RHS chunks into v24/v25 and v26/v27, then per
    /// LHS tile `(pointer, [accumulators of rows 0-1], [of rows 2-3])` one `SMMLA` chunk each.
    macro_rules! two_chunks {
        ($(($a:ident, $acc01:tt, $acc23:tt)),+) => {
            concat!(
                "ldp q24, q25, [{b}], #32\n",
                "ldp q26, q27, [{b}], #32\n",
                $(
                    smmla_chunk!(lr, lhs_at!($a, "], #32"), ["v24", "v25"], $acc01, $acc23),
                    smmla_chunk!(lr, lhs_at!($a, "], #32"), ["v26", "v27"], $acc01, $acc23),
                )+
            )
        };
    }

    /// One 32-depth group (4 chunks) of every LHS tile; `lo` as in [`k_group!`] (no nibbles: `hi`
    /// is not used).
    macro_rules! group {
        (; $lo:tt, $hi:tt) => {
            concat!(two_chunks! $lo, two_chunks! $lo)
        };
    }

    /// The tile kernels, their table and `run`, with outputs of kind `$out`.
    macro_rules! define_tiles {
        ($out:ident) => {
            per_channel_kernels! {
                out = $out, args = t, cols = 4, clobbers = all,
                fam = { init: "", group: group(), row_math: per_channel_row_math, operands: [] },
                kernels = [r1: r1, r2: r2, r3: r3, r4: r4, r5: r5, r6: r6],
            }

            /// Tile kernels by LHS tile count.
            pub(crate) const TILES: [TileKernel; MAX_TILES] = [(r1, 4), (r2, 4), (r3, 4), (r4, 4), (r5, 4), (r6, 4)];

            /// Runs the rectangle `args` in steps of `tiles` LHS tiles (`1..=6`).
            ///
            /// # Safety
            ///
            /// The CPU has FEAT_I8MM and `args` satisfies
            /// [`Kernel::run_unchecked`](crate::Kernel::run_unchecked) for `packing` (`mr = 4`, `nr = 4`,
            /// `kr = 8`, `sr = 1`), `strides` its tile strides.
            #[inline(always)]
            pub(crate) unsafe fn run(
                args: &UncheckedArgs<$crate::matmul::arch::asm::out_type!($out)>,
                strides: &TileStrides,
                packing: &Packing,
                tiles: usize,
            ) {
                let layout = fam::asm_layout(args, strides, packing);
                // SAFETY: forwarded from the caller; the layout is the family's for this `k` and
                // packing, which the kernels read; each computes the 4 columns of one RHS tile.
                unsafe { gemm(args, &layout, &TILES[..tiles]) }
            }
        };
    }

    /// f32 outputs.
    pub(crate) mod f32_out {
        use super::*;
        define_tiles!(f32);
    }

    /// f16 outputs (`FCVTN`).
    pub(crate) mod f16_out {
        use super::*;
        define_tiles!(f16);
    }
}
