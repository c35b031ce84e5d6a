//! dotprod tier of `qai8dxp_qsi8cxp`: hand-written `asm!` kernels built on `SDOT`
//! (FEAT_DotProd). The int8 weights feed `SDOT` as packed: no unpack, so every SIMD slot of
//! the K loop is an `SDOT`.
//!
//! * GEMV, `kr = 8` ([`PACKING_1X4`](super::PACKING_1X4)): one RHS register holds 2 columns x
//!   8 depths. `LD4R .2d` copies each 8-depth chunk of the LHS row into both halves of a
//!   register, so a vector `SDOT` gives lanes (c0: d0-3, c0: d4-7, c1: d0-3, c1: d4-7); `ADDP`
//!   folds the lane pairs after the K loop.
//! * GEMV, `kr = 4` ([`PACKING_1X4_KR4`](super::PACKING_1X4_KR4)): one RHS register is 4
//!   columns x 4 depths as stored, so `SDOT` by element multiplies it by 4 depths of the plain
//!   LHS row: no duplication, no folding.
//! * Both GEMVs come as `1x4` (one RHS tile, two accumulator sets to halve the `SDOT`
//!   dependency chains) and qgemm's own `1x16` (4 RHS tiles sharing each LHS load).
//! * GEMM (`mr = 4`, up to 4 LHS tiles = 16 rows x the 4 columns of an RHS tile): `SDOT` by
//!   element multiplies a register of 4 columns x 4 depths by 4 depths of one LHS row; each
//!   lane is one output column, each accumulator one row. With `kr = 4` both operands are in
//!   that form as stored; with `kr = 8` one `LD2 .4s` per operand splits a chunk into depths
//!   0-3 and 4-7 of its 4 rows or columns. Each RHS register feeds 4 `SDOT`s per LHS tile.
//!
//! The epilogue follows docs/formats.md, §Arithmetic: qai8dxp_qsi8cxp kernels, step by step:
//! `MLA` of `rsum * offset`, `SCVTF`, `s = scale * dq`, `FMUL`, `FADD` of the bias,
//! `FMAX`/`FMIN` clamp (the per-channel epilogue macros of `matmul::arch::dotprod`, shared with
//! `qai8dxp_qsi4cxp`).

use super::Descriptor;

/// The dotprod kernels of the `qai8dxp x qsi8cxp` arithmetic with outputs of type `$dst`
/// (`"f32"`, `"f16"`), on the tile functions of [`tiles`]`::$out`: every family of this
/// arithmetic (`qai8dxp_qsi8cxp`, `f16_qai8dxp_qsi8cxp`) declares its dotprod tier with this one
/// table (`also: Bf16`: its kernels also need FEAT_BF16).
macro_rules! qsi8cxp_dotprod_kernels {
    ($dst:literal, $out:ident $(, also: $extra:ident)?) => {
        tier_module!(Dotprod, DOTPROD_1X16, DOTPROD_1X4, DOTPROD_16X4, DOTPROD_1X16_KR4, DOTPROD_1X4_KR4, DOTPROD_16X4_KR4);

        #[cfg(target_arch = "aarch64")]
        mod aarch64 {
            use super::super as fam;
            use super::super::Descriptor;
            use crate::matmul::arch::dotprod::{per_channel_gemm, per_channel_gemv};
            use crate::matmul::qai8dxp_qsi8cxp::asm_layout;
            use crate::matmul::qai8dxp_qsi8cxp::dotprod::tiles::$out::*;
            use crate::matmul::{Tier, UncheckedArgs};

            asm_catalogue! {
                tier: Dotprod, feature: "FEAT_DotProd", dst: $dst, suffix: "_neon_dotprod" $(, also: $extra)?;
                PACKING_1X4, "qai8dxp1x8_qsi8cxp4x8_", [
                    DOTPROD_1X16 matmul_1x16_unchecked (1, 16) => per_channel_gemv(asm_layout, 4, tile8_1x16, tile8_1x4),
                    DOTPROD_1X4 matmul_1x4_unchecked (1, 4) => per_channel_gemv(asm_layout, 1, tile8_1x4, tile8_1x4),
                ];
                PACKING_4X4, "qai8dxp4x8_qsi8cxp4x8_", [
                    DOTPROD_16X4 matmul_16x4_unchecked (16, 4) => per_channel_gemm(asm_layout, 16, &GEMM8_TILES),
                ];
                PACKING_1X4_KR4, "qai8dxp1x4_qsi8cxp4x4_", [
                    DOTPROD_1X16_KR4 matmul_1x16_kr4_unchecked (1, 16) => per_channel_gemv(asm_layout, 4, tile4_1x16, tile4_1x4),
                    DOTPROD_1X4_KR4 matmul_1x4_kr4_unchecked (1, 4) => per_channel_gemv(asm_layout, 1, tile4_1x4, tile4_1x4),
                ];
                PACKING_4X4_KR4, "qai8dxp4x4_qsi8cxp4x4_", [
                    DOTPROD_16X4_KR4 matmul_16x4_kr4_unchecked (16, 4) => per_channel_gemm(asm_layout, 16, &GEMM4_TILES),
                ];
            }
        }
    };
}
pub(crate) use qsi8cxp_dotprod_kernels;

qsi8cxp_dotprod_kernels!("f32", f32_out);

/// The tile functions of the dotprod tier, one module per output type: the same `asm!`
/// text up to the conversion before the stores.
#[cfg(target_arch = "aarch64")]
pub(crate) mod tiles {
    use crate::matmul::arch::dotprod::{Tile, TileFn};

    // -----------------------------------------------------------------------------------------
    // GEMV (mr = 1). Registers: v0-v3 LHS of the group; RHS tile t in v(4+4t)..v(7+4t);
    // accumulators v20-v27 (two per RHS tile). The shared per-channel epilogue then uses v1-v9.
    // -----------------------------------------------------------------------------------------

    /// kr 8: the group's 4 LHS chunks of 8 depths, each copied into both halves of v0-v3.
    macro_rules! lhs8 {
        () => {
            "ld4r {{v0.2d, v1.2d, v2.2d, v3.2d}}, [{lhs}], #32\n"
        };
    }

    /// kr 4: the group's 32 LHS depths as stored, in v0 (depths 0-15) and v1 (16-31).
    macro_rules! lhs4 {
        () => {
            "ldp q0, q1, [{lhs}], #32\n"
        };
    }

    /// kr 8, one RHS tile (operand `$r`, 128 bytes a group): per chunk `c` the column pairs
    /// (0, 1) and (2, 3) into `$w[0], $w[1]` (chunks 0, 2) or `$w[2], $w[3]` (chunks 1, 3),
    /// `SDOT` with LHS chunk `c`; chunks 0, 2 accumulate into `$a`, chunks 1, 3 into `$b`
    /// (`[pair (0, 1), pair (2, 3)]` each).
    #[rustfmt::skip]
    macro_rules! group8 {
        ($r:ident, [$w0:literal, $w1:literal, $w2:literal, $w3:literal], [$a0:literal, $a1:literal],
         [$b0:literal, $b1:literal]) => {
            concat!(
                "ldp q", $w0, ", q", $w1, ", [{", stringify!($r), "}], #32\n",
                "ldp q", $w2, ", q", $w3, ", [{", stringify!($r), "}], #32\n",
                "sdot v", $a0, ".4s, v", $w0, ".16b, v0.16b\n",
                "sdot v", $a1, ".4s, v", $w1, ".16b, v0.16b\n",
                "sdot v", $b0, ".4s, v", $w2, ".16b, v1.16b\n",
                "sdot v", $b1, ".4s, v", $w3, ".16b, v1.16b\n",
                "ldp q", $w0, ", q", $w1, ", [{", stringify!($r), "}], #32\n",
                "ldp q", $w2, ", q", $w3, ", [{", stringify!($r), "}], #32\n",
                "sdot v", $a0, ".4s, v", $w0, ".16b, v2.16b\n",
                "sdot v", $a1, ".4s, v", $w1, ".16b, v2.16b\n",
                "sdot v", $b0, ".4s, v", $w2, ".16b, v3.16b\n",
                "sdot v", $b1, ".4s, v", $w3, ".16b, v3.16b\n",
            )
        };
    }

    /// kr 4, one RHS tile (operand `$r`, 128 bytes a group): chunks `c` (4 columns x 4 depths)
    /// into `$w[c % 4]`, `SDOT` by element with LHS depths `4c..4c+4`; even chunks accumulate
    /// into `$a`, odd ones into `$b` (one lane per column).
    #[rustfmt::skip]
    macro_rules! group4 {
        ($r:ident, [$w0:literal, $w1:literal, $w2:literal, $w3:literal], $a:literal, $b:literal) => {
            concat!(
                "ldp q", $w0, ", q", $w1, ", [{", stringify!($r), "}], #32\n",
                "ldp q", $w2, ", q", $w3, ", [{", stringify!($r), "}], #32\n",
                "sdot v", $a, ".4s, v", $w0, ".16b, v0.4b[0]\n",
                "sdot v", $b, ".4s, v", $w1, ".16b, v0.4b[1]\n",
                "sdot v", $a, ".4s, v", $w2, ".16b, v0.4b[2]\n",
                "sdot v", $b, ".4s, v", $w3, ".16b, v0.4b[3]\n",
                "ldp q", $w0, ", q", $w1, ", [{", stringify!($r), "}], #32\n",
                "ldp q", $w2, ", q", $w3, ", [{", stringify!($r), "}], #32\n",
                "sdot v", $a, ".4s, v", $w0, ".16b, v1.4b[0]\n",
                "sdot v", $b, ".4s, v", $w1, ".16b, v1.4b[1]\n",
                "sdot v", $a, ".4s, v", $w2, ".16b, v1.4b[2]\n",
                "sdot v", $b, ".4s, v", $w3, ".16b, v1.4b[3]\n",
            )
        };
    }

    // -----------------------------------------------------------------------------------------
    // GEMM (mr = 4): up to 4 LHS tiles x the 4 columns of one RHS tile. Registers: v0-v3 RHS
    // (4 columns x 4 depths each), LHS tile t in v(4+2t), v(5+2t) (4 rows x 4 depths each),
    // accumulators v16-v31 (4 per LHS tile, one per row). The epilogue (`gemm_epilogue!`)
    // then uses v0-v2, v12-v14 and the LHS registers.
    // -----------------------------------------------------------------------------------------

    /// 32 bytes into registers `$a`, `$b`, post-incrementing the pointer operand `$src`:
    /// `LDP` (kr 4: two 16-byte chunks as stored).
    macro_rules! ldp_pair {
        ($a:literal, $b:literal, $src:expr) => {
            concat!("ldp q", $a, ", q", $b, ", [{", $src, "}], #32\n")
        };
    }

    /// 32 bytes into registers `$a`, `$b`, post-incrementing `$src`: `LD2 .4s` (kr 8: one
    /// 8-depth chunk of 4 rows or columns, split into depths 0-3 (`$a`) and 4-7 (`$b`)).
    macro_rules! ld2_pair {
        ($a:literal, $b:literal, $src:expr) => {
            concat!("ld2 {{v", $a, ".4s, v", $b, ".4s}}, [{", $src, "}], #32\n")
        };
    }

    /// 8 depths of every LHS tile: the RHS tile's 32 bytes into v0, v1 and each LHS tile's into
    /// `$x01`, `$x23`, both by `$load` (`ldp_pair` for kr 4, `ld2_pair` for kr 8), then 8
    /// `SDOT`s per LHS tile.
    #[rustfmt::skip]
    macro_rules! gemm_step {
        ($load:ident, $([$l:ident, $x01:literal, $x23:literal, $acc:tt]),+) => {
            concat!(
                $load!("0", "1", "rhs"),
                $(
                    $load!($x01, $x23, stringify!($l)),
                    sdot_rows!("0", $x01, $acc),
                    sdot_rows!("1", $x23, $acc),
                )+
            )
        };
    }

    /// The family hook of the GEMM tiles ([`per_channel_gemm_tiles!`]): no constants (`init`),
    /// and the K loop of `k_loop($load)` (`ldp_pair` for kr 4, `ld2_pair` for kr 8; see
    /// `gemm_step`): a group is 4 steps of 8 depths, nothing read ahead.
    #[rustfmt::skip]
    macro_rules! gemm_hook {
        (init) => {
            ""
        };
        (k_loop($load:ident); $([$l:ident, $x01:literal, $x23:literal, $acc:tt, $hi:tt]),+) => {
            gemm_loop!(
                gemm_step!($load, $([$l, $x01, $x23, $acc]),+),
                gemm_step!($load, $([$l, $x01, $x23, $acc]),+),
                gemm_step!($load, $([$l, $x01, $x23, $acc]),+),
                gemm_step!($load, $([$l, $x01, $x23, $acc]),+),
            )
        };
    }

    /// Every tile function and table, with outputs of type `$out`.
    macro_rules! define_tiles {
        ($out:ident) => {
            per_channel_gemv_tiles! { t, $out, init: "", ops: [],
                // kr 8: lane pairs, chunks 0, 2 / 1, 3 apart in 1x4
                x4_pairs: tile8_1x4 = concat!(
                    lhs8!(),
                    group8!(rhs, ["4", "5", "6", "7"], ["20", "21"], ["22", "23"]),
                ),
                x16_pairs: tile8_1x16 = concat!(
                    lhs8!(),
                    group8!(r0, ["4", "5", "6", "7"], ["20", "21"], ["20", "21"]),
                    group8!(r1, ["8", "9", "10", "11"], ["22", "23"], ["22", "23"]),
                    group8!(r2, ["12", "13", "14", "15"], ["24", "25"], ["24", "25"]),
                    group8!(r3, ["16", "17", "18", "19"], ["26", "27"], ["26", "27"]),
                ),
                // kr 4: one column per lane
                x4_cols: tile4_1x4 = concat!(lhs4!(), group4!(rhs, ["4", "5", "6", "7"], "20", "21")),
                x16_cols: tile4_1x16 = concat!(
                    lhs4!(),
                    group4!(r0, ["4", "5", "6", "7"], "20", "21"),
                    group4!(r1, ["8", "9", "10", "11"], "22", "23"),
                    group4!(r2, ["12", "13", "14", "15"], "24", "25"),
                    group4!(r3, ["16", "17", "18", "19"], "26", "27"),
                ),
            }

            per_channel_gemm_tiles! { t, gemm_hook, $out, ops: [], order: scale_dq,
                rows4: [tile4_4x4(ldp_pair), tile8_4x4(ld2_pair)],
                rows8: [tile4_8x4(ldp_pair), tile8_8x4(ld2_pair)],
                rows12: [tile4_12x4(ldp_pair), tile8_12x4(ld2_pair)],
                rows16: [tile4_16x4(ldp_pair), tile8_16x4(ld2_pair)],
            }

            pub(crate) const GEMM4_TILES: [TileFn; 4] = [tile4_4x4, tile4_8x4, tile4_12x4, tile4_16x4];

            pub(crate) const GEMM8_TILES: [TileFn; 4] = [tile8_4x4, tile8_8x4, tile8_12x4, tile8_16x4];
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
