//! i8mm tier of `qai8dxp_qsu2cxp`: hand-written `SMMLA` kernels (FEAT_I8MM) on
//! [`PACKING_4X4`](super::PACKING_4X4), qgemm's own (KleidiAI has no i8mm kernel for 2-bit
//! weights): fewer instructions per MAC than the dotprod GEMM (docs/performance.md).
//!
//! `SMMLA Vd.4S, Vn.16B, Vm.16B` adds a 2x8 by 8x2 int8 product to a 2x2 int32 block
//! `[r0c0, r0c1, r1c0, r1c1]`. The packing stores 4-depth chunks (`kr = 4`), so both operands
//! are built per 16 depths:
//!
//! * RHS (4 columns): the 16 code bytes unpack as in the dotprod tier (`AND`/`USHR`, then one
//!   `TBL` per chunk through the call's table: chunks 0-3, 4 columns x 4 depths each), and
//!   `ZIP1`/`ZIP2 .4s` of chunks 0 and 1 give columns 0-1 and 2-3 x depths 0-7 (chunks 2 and 3:
//!   depths 8-15). Shared by every LHS tile of the output tile.
//! * LHS (4 rows): `LD1` of the tile's 4 chunks (64 bytes, 4 rows x 4 depths each) and the same
//!   `ZIP`s give rows 0-1 and 2-3 x depths 0-7 and 8-15.
//!
//! Per 16 depths, 4 columns and `R` LHS tiles: 11 RHS instructions, then per tile 1 load,
//! 4 `ZIP`s and 8 `SMMLA`s. A tile kernel covers `R <= 4` LHS tiles (accumulators `v0..v4R`);
//! the epilogue (de-interleave the 2x2 blocks into rows, clamp, stores) is the shared one of
//! `matmul::arch::i8mm`, with this family's GEMM scaling order `(f * scale) * dq` (KleidiAI's
//! `8x4` kernel's), bit-identical to the scalar tier.

use super::Descriptor;

tier_module!(I8mm, I8MM_16X4, I8MM_8X4, I8MM_4X4);

#[cfg(target_arch = "aarch64")]
mod aarch64 {
    use super::super as fam;
    use super::super::Descriptor;
    use super::tiles::f32_out::run;
    use crate::matmul::{Tier, UncheckedArgs};

    asm_catalogue! {
        tier: I8mm, feature: "FEAT_I8MM", dst: "f32", suffix: "_neon_i8mm";
        PACKING_4X4, "qai8dxp4x4_qsu2cxp4x4bf32sf32_", [
            I8MM_16X4 matmul_16x4_unchecked (16, 4) => run(4),
            I8MM_8X4 matmul_8x4_unchecked (8, 4) => run(2),
            I8MM_4X4 matmul_4x4_unchecked (4, 4) => run(1),
        ];
    }
}

/// The tile kernels of the i8mm tier and their `run`.
#[cfg(target_arch = "aarch64")]
pub(crate) mod tiles {
    use crate::matmul::arch::asm::{TileKernel, gemm};
    use crate::matmul::qai8dxp_qsu2cxp as fam;
    use crate::matmul::{Packing, TileStrides, UncheckedArgs};

    /// 16 depths of every LHS tile. RHS: codes into v16, unpack (index v17, chunks v18-v21,
    /// tables v26/v27, mask v28), then `ZIP`s into v22 (columns 0-1, depths 0-7), v23 (2-3,
    /// 0-7), v24 (0-1, 8-15), v25 (2-3, 8-15). Per LHS tile `(pointer, [accumulators of rows
    /// 0-1 for columns 0-1, 2-3], [of rows 2-3])`: its 4 chunks into v16-v19, `ZIP`s into v20
    /// (rows 0-1, depths 0-7), v21 (2-3, 0-7), v29 (0-1, 8-15), v30 (2-3, 8-15), 8 `SMMLA`s.
    #[rustfmt::skip]
    macro_rules! step16 {
        ($(($a:ident, [$c0:tt, $c1:tt], [$c2:tt, $c3:tt])),+) => {
            concat!(
                // load and unpack the RHS codes: chunks 0-3
                "ldr q16, [{b}], #16\n",
                "and v17.16b, v16.16b, v28.16b\n",
                "ushr v16.16b, v16.16b, #4\n",
                "tbl v18.16b, {{v26.16b}}, v17.16b\n",
                "tbl v19.16b, {{v27.16b}}, v17.16b\n",
                "tbl v20.16b, {{v26.16b}}, v16.16b\n",
                "tbl v21.16b, {{v27.16b}}, v16.16b\n",
                // column pairs x 8 depths
                "zip1 v22.4s, v18.4s, v19.4s\n",
                "zip2 v23.4s, v18.4s, v19.4s\n",
                "zip1 v24.4s, v20.4s, v21.4s\n",
                "zip2 v25.4s, v20.4s, v21.4s\n",
                $(
                    // LHS tile: 4 chunks, row pairs x 8 depths, multiply
                    "ld1 {{v16.4s, v17.4s, v18.4s, v19.4s}}, [{", stringify!($a), "}], #64\n",
                    "zip1 v20.4s, v16.4s, v17.4s\n",
                    "zip2 v21.4s, v16.4s, v17.4s\n",
                    "zip1 v29.4s, v18.4s, v19.4s\n",
                    "zip2 v30.4s, v18.4s, v19.4s\n",
                    "smmla ", $c0, ".4s, v20.16b, v22.16b\n",
                    "smmla ", $c1, ".4s, v20.16b, v23.16b\n",
                    "smmla ", $c2, ".4s, v21.16b, v22.16b\n",
                    "smmla ", $c3, ".4s, v21.16b, v23.16b\n",
                    "smmla ", $c0, ".4s, v29.16b, v24.16b\n",
                    "smmla ", $c1, ".4s, v29.16b, v25.16b\n",
                    "smmla ", $c2, ".4s, v30.16b, v24.16b\n",
                    "smmla ", $c3, ".4s, v30.16b, v25.16b\n",
                )+
            )
        };
    }

    /// One 32-depth group (2 steps of 16 depths) of every LHS tile; `lo` as in [`k_group!`]
    /// (no nibbles: `hi` is not used).
    macro_rules! group {
        (; $lo:tt, $hi:tt) => {
            concat!(step16! $lo, step16! $lo)
        };
    }

    /// f32 outputs (the family's only output type).
    pub(crate) mod f32_out {
        use super::*;

        // The epilogue scales `(f * scale) * dq` (KleidiAI's `8x4` kernel's order).
        per_channel_kernels! {
            out = f32, args = t, cols = 4, clobbers = all,
            fam = {
                // the `TBL` tables (v26/v27) and the 0x0F mask (v28)
                init: concat!("ldp q26, q27, [{tab}]\n", "movi v28.16b, #0x0f\n"),
                group: group(), row_math: then_dq_row_math,
                operands: [tab = in(reg) t.consts],
            },
            kernels = [r1: r1, r2: r2, r3: r3, r4: r4],
        }

        /// Tile kernels by LHS tile count.
        pub(crate) const TILES: [TileKernel; 4] = [(r1, 4), (r2, 4), (r3, 4), (r4, 4)];

        /// Runs the rectangle `args` in steps of `tiles` LHS tiles (`1..=4`).
        ///
        /// # Safety
        ///
        /// The CPU has FEAT_I8MM and `args` satisfies
        /// [`Kernel::run_unchecked`](crate::Kernel::run_unchecked) for `packing` (the family's
        /// [`PACKING_4X4`](fam::PACKING_4X4)), `strides` its tile strides.
        #[inline(always)]
        pub(crate) unsafe fn run(
            args: &UncheckedArgs<f32, crate::matmul::Lut>,
            strides: &TileStrides,
            packing: &Packing,
            tiles: usize,
        ) {
            let layout = fam::asm_layout(args, strides, packing);
            // SAFETY: forwarded from the caller; the layout is the family's for this `k`, packing
            // and table, which the kernels read; each computes the 4 columns of one RHS tile.
            unsafe { gemm(args, &layout, &TILES[..tiles]) }
        }
    }
}
