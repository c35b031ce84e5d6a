//! i8mm tier of `qsi8d32p_qai4c32p`: hand-written `SMMLA` kernels (FEAT_I8MM) on
//! [`PACKING_4X4`](super::PACKING_4X4) (`mr = 4`, `nr = 4`, `kr = 16`, `sr = 2`, so `bd = 8`).
//!
//! Inside each 32-depth group the RHS data are those of `qsi4cxp` and the LHS data a `qai8dxp`
//! tile's, so the group is the per-channel families'; what differs is the block loop
//! (`block_kernels!` in `matmul::arch::i8mm`). Per block of `bl` depths: the 4 columns' f32
//! offsets and `scale / 16` into column-ordered vectors (v12, v13, v28, v31); per LHS tile,
//! `SMMLA` into the int32 sums v16-v19 (`16 * S`), then the rows' block sums and scales
//! replicated into row-ordered vectors by `LD1R` (load pipes), and per sum, in the `SMMLA` lane
//! order `(c0 r0, c0 r1, c1 r0, c1 r1)` (docs/formats.md, §Arithmetic: qsi8d32p_qai4c32p
//! kernels):
//!
//! ```text
//! acc = FMLA(acc, zero, bsum)                         offset term first
//! acc = FMLA(acc, SCVTF(16 * S), FMUL(scale16, lhs scale))
//! ```
//!
//! After the last block: `FADD` bias, clamp. The offset term needs four registers more than the
//! symmetric families' fold, so a tile kernel takes at most 3 LHS tiles (12 rows) x 4 columns.
//! With `bl = 32` the RHS group is unpacked once per block and shared by the LHS tiles; other
//! block lengths reload and unpack it per tile.

use super::Descriptor;

/// The i8mm kernels of the `qsi8d32p x qai4c32p` arithmetic with outputs of type `$dst`
/// (`"f32"`, `"f16"`), on the tile kernels of [`tiles`]`::$out`: both families of the arithmetic
/// declare their i8mm tier with this one table.
macro_rules! qai4c32p_i8mm_kernels {
    ($dst:literal, $out:ident) => {
        tier_module!(I8mm, I8MM_12X4, I8MM_8X4, I8MM_4X4);

        #[cfg(target_arch = "aarch64")]
        mod aarch64 {
            use super::super as fam;
            use super::super::Descriptor;
            use crate::matmul::qsi8d32p_qai4c32p::i8mm::tiles::$out::run;
            use crate::matmul::{Tier, UncheckedArgs};

            asm_catalogue! {
                tier: I8mm, feature: "FEAT_I8MM", dst: $dst, suffix: "_neon_i8mm";
                PACKING_4X4, "qsi8d32p4x8_qai4c32p4x8_", [
                    /// GEMM, 12 rows (3 LHS tiles) x 4 columns per step.
                    I8MM_12X4 matmul_12x4_unchecked (12, 4) => run(3),
                    /// GEMM, 8 rows x 4 columns per step (KleidiAI's 8x4).
                    I8MM_8X4 matmul_8x4_unchecked (8, 4) => run(2),
                    /// GEMM, 4 rows x 4 columns per step.
                    I8MM_4X4 matmul_4x4_unchecked (4, 4) => run(1),
                ];
            }
        }
    };
}
pub(crate) use qai4c32p_i8mm_kernels;

qai4c32p_i8mm_kernels!("f32", f32_out);

/// The tile kernels of the i8mm tier, one module per output type.
#[cfg(target_arch = "aarch64")]
pub(crate) mod tiles {
    use crate::matmul::UncheckedArgs;
    use crate::matmul::qsi8d32p_qai4c32p as fam;

    /// The block's 4 column offsets and `scale / 16` (at `{s}`, which moves to the next block)
    /// in the `SMMLA` lane order: offsets `(c0, c0, c1, c1)` in v12, `(c2, c2, c3, c3)` in v13,
    /// scales likewise in v28 and v31 (v14, v15 as temporaries).
    #[rustfmt::skip]
    macro_rules! asym_scales {
        () => {
            concat!(
                "ld1 {{v14.4s, v15.4s}}, [{s}], {ss}\n",
                "zip1 v12.4s, v14.4s, v14.4s\n",
                "zip2 v13.4s, v14.4s, v14.4s\n",
                "zip1 v28.4s, v15.4s, v15.4s\n",
                "zip2 v31.4s, v15.4s, v15.4s\n",
            )
        };
    }

    /// After the block of an LHS tile (`{a}` at its extras): the rows' block sums
    /// `(r0, r1, r0, r1)` in v29, `(r2, r3, r2, r3)` in v30 and scales likewise in v14, v15; the
    /// tile pointer moves on to the next block's data.
    #[rustfmt::skip]
    macro_rules! next_block {
        ($a:ident) => {
            concat!(
                "ld1r {{v29.2d}}, [{", stringify!($a), "}], #8\n",
                "ld1r {{v30.2d}}, [{", stringify!($a), "}], #8\n",
                "ld1r {{v14.2d}}, [{", stringify!($a), "}], #8\n",
                "ld1r {{v15.2d}}, [{", stringify!($a), "}], #8\n",
            )
        };
    }

    /// Folds the block sums v16-v19 (`16 * S`) of one LHS tile into its float accumulators:
    /// the offset terms `FMLA(acc, zero, bsum)`, then `FMLA(acc, float(16 * S), scale16 * lhs
    /// scale)` with each product in v29 or v30.
    #[rustfmt::skip]
    macro_rules! fold_block {
        ($f00:tt, $f01:tt, $f10:tt, $f11:tt) => {
            concat!(
                "fmla ", $f00, ".4s, v12.4s, v29.4s\n",
                "fmla ", $f01, ".4s, v13.4s, v29.4s\n",
                "fmla ", $f10, ".4s, v12.4s, v30.4s\n",
                "fmla ", $f11, ".4s, v13.4s, v30.4s\n",
                "scvtf v16.4s, v16.4s\n",
                "scvtf v17.4s, v17.4s\n",
                "scvtf v18.4s, v18.4s\n",
                "scvtf v19.4s, v19.4s\n",
                "fmul v29.4s, v28.4s, v14.4s\n",
                "fmla ", $f00, ".4s, v16.4s, v29.4s\n",
                "fmul v29.4s, v31.4s, v14.4s\n",
                "fmla ", $f01, ".4s, v17.4s, v29.4s\n",
                "fmul v30.4s, v28.4s, v15.4s\n",
                "fmla ", $f10, ".4s, v18.4s, v30.4s\n",
                "fmul v30.4s, v31.4s, v15.4s\n",
                "fmla ", $f11, ".4s, v19.4s, v30.4s\n",
            )
        };
    }

    /// Output of one row and 4 columns in `$v`: `FADD` the bias (v16), clamp.
    #[rustfmt::skip]
    macro_rules! row_math {
        ($v:tt, $lane:tt, ($bias:tt), $tmp:tt) => {
            concat!(
                "fadd ", $v, ".4s, ", $v, ".4s, ", $bias, ".4s\n",
                $crate::matmul::arch::i8mm::clamp!($v),
            )
        };
    }

    /// The tile kernels, their tables and `run`, with outputs of kind `$out`.
    macro_rules! define_tiles {
        ($out:ident) => {
            block_kernels! {
                out = $out,
                hi = same,
                tiles = 3,
                // the offsets and scales after each block's data: 8 bytes per column
                skip = ("32", "64"),
                args = t,
                fam = {
                    mma: rl,
                    scales: asym_scales!(),
                    // Chunks 0 (pointer to the next group), 2, 1, 3 of the group.
                    lhs: ["], #128", ", #-64]", ", #-96]", ", #-32]"],
                    group_pre: no_text,
                    tile_end: next_block,
                    block_math: fold_block,
                    col_consts: "ld1 {{v16.4s}}, [{e}]\n",
                    tile_consts: no_text,
                    row_math: row_math,
                    cst: ("v16"),
                    operands: [e = in(reg) t.extras,],
                },
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
