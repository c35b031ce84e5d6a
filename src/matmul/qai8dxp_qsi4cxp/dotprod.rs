//! dotprod tier of `qai8dxp_qsi4cxp`: hand-written `asm!` kernels built on `SDOT` (FEAT_DotProd).
//!
//! In a packed RHS column, byte `t` of a 32-deep K group carries depth `t` (low nibble) and
//! depth `t + 16` (high nibble). `SHL #4` turns a register of such bytes into `16 * low nibble`
//! as int8 and `AND #0xF0` into `16 * high nibble` (docs/formats.md, §Arithmetic: qai8dxp_qsi4cxp kernels), so every unpacked
//! register feeds `SDOT`s directly. The `kr = 16` packings (`bd = 8`) store a column's group as
//! two 8-byte chunks (bytes 0-7, then 8-15), the `kr = 8` ones (`bd = 4`) as four 4-byte
//! chunks.
//!
//! * GEMV, `kr = 16` (1x4, 1x8, 1x16): one RHS register holds 2 columns x 8 bytes. `LD4R`
//!   copies each 8-depth slice of the LHS row into both halves of a register, so a plain vector
//!   `SDOT` gives lanes (c0: d0-3, c0: d4-7, c1: d0-3, c1: d4-7); `ADDP` folds the lane pairs
//!   after the K loop. 1x16 walks two `nr = 8` tiles with one LHS load.
//! * GEMV, `kr = 8` (1x4): one RHS register is 4 columns x 4 bytes as stored, so `SDOT` by
//!   element multiplies it by 4 depths of the plain LHS row: no duplication, no folding.
//! * GEMM (16x8, 4x8 on [`PACKING_4X8`](super::PACKING_4X8); 16x4, 4x4 on
//!   [`PACKING_4X4`](super::PACKING_4X4); 16x8 and 16x4 on the `kr = 8` packings): an output
//!   tile is up to 4 LHS tiles (16 rows) x one column quad. With `kr = 16`, `LD2 .4s` splits a
//!   chunk into 4 columns x bytes 0-3 and 4 columns x bytes 4-7; with `kr = 8` a chunk
//!   register already is 4 columns x 4 bytes. `SDOT` by element multiplies such a register by
//!   4 depths of one LHS row, read from the LHS tile as stored. Each lane is one output
//!   column, each accumulator one row of the quad, and each unpacked RHS register feeds 4 `SDOT`s
//!   per LHS tile (16 for 16 rows).
//!
//! The unpack (`SHL`/`AND`) runs on the same SIMD pipes as `SDOT`. A GEMV uses every unpacked
//! register once, so at most half of the SIMD issue slots can be `SDOT`s (less the LHS
//! duplication of the `kr = 16` GEMV); the GEMM tiles reuse each one 16 times.
//!
//! The epilogue follows docs/formats.md, §Arithmetic: qai8dxp_qsi4cxp kernels step by step: `MLA` of `rsum * offset`, `SCVTF`,
//! `s = scale16 * dq`, `FMUL`, `FADD` of the bias, `FMAX`/`FMIN` clamp.

use super::Descriptor;

/// The dotprod kernels of the `qai8dxp x qsi4cxp` arithmetic with outputs of type `$dst`
/// (`"f32"`, `"f16"`, `"bf16"`), on the tile functions of [`tiles`]`::$out`: every family of this
/// arithmetic (`qai8dxp_qsi4cxp`, `f16_qai8dxp_qsi4cxp`, `bf16_qai8dxp_qsi4cxp`) declares its
/// dotprod tier with this one table: `all` packings, or `kr16` only (without the `kr = 8`
/// packings, which the bf16 LHS packer does not take).
macro_rules! qsi4cxp_dotprod_kernels {
    ($dst:literal, $out:ident, $packings:ident) => {
        subset_tier_module!(Dotprod, $packings, [DOTPROD_1X16, DOTPROD_1X8, DOTPROD_16X8, DOTPROD_4X8, DOTPROD_1X4, DOTPROD_16X4, DOTPROD_4X4], [DOTPROD_1X4_KR8, DOTPROD_16X8_KR8, DOTPROD_16X4_KR8]);

        #[cfg(target_arch = "aarch64")]
        mod aarch64 {
            use super::super as fam;
            use super::super::Descriptor;
            use crate::matmul::arch::dotprod::{per_channel_gemm, per_channel_gemv};
            use crate::matmul::qai8dxp_qsi4cxp::asm_layout;
            use crate::matmul::qai8dxp_qsi4cxp::dotprod::tiles::$out::*;
            use crate::matmul::{Tier, UncheckedArgs};

            asm_catalogue! {
                tier: Dotprod, feature: "FEAT_DotProd", dst: $dst, suffix: "_neon_dotprod";
                PACKING_1X8, "qai8dxp1x8_qsi4cxp8x8_", [
                    /// GEMV over two `nr = 8` RHS tiles at a time (1 x 16 outputs per step).
                    DOTPROD_1X16 matmul_1x16_unchecked (1, 16) => per_channel_gemv(asm_layout, 2, tile_1x16, tile_1x8),
                    /// GEMV over one `nr = 8` RHS tile at a time.
                    DOTPROD_1X8 matmul_1x8_unchecked (1, 8) => per_channel_gemv(asm_layout, 1, tile_1x8, tile_1x8),
                ];
                PACKING_1X4, "qai8dxp1x8_qsi4cxp4x8_", [
                    /// GEMV over one `nr = 4` RHS tile at a time.
                    DOTPROD_1X4 matmul_1x4_unchecked (1, 4) => per_channel_gemv(asm_layout, 1, tile_1x4, tile_1x4),
                ];
                PACKING_4X8, "qai8dxp4x8_qsi4cxp8x8_", [
                    /// GEMM, 16 rows (4 LHS tiles) x 8 columns per step, as two 16 x 4 column quads.
                    DOTPROD_16X8 matmul_16x8_unchecked (16, 8) => per_channel_gemm(asm_layout, 16, &GEMM_TILES),
                    /// GEMM, 4 rows x 8 columns per step.
                    DOTPROD_4X8 matmul_4x8_unchecked (4, 8) => per_channel_gemm(asm_layout, 4, &GEMM_TILES),
                ];
                PACKING_4X4, "qai8dxp4x8_qsi4cxp4x8_", [
                    /// GEMM, 16 rows (4 LHS tiles) x 4 columns per step.
                    DOTPROD_16X4 matmul_16x4_unchecked (16, 4) => per_channel_gemm(asm_layout, 16, &GEMM_TILES),
                    /// GEMM, 4 rows x 4 columns per step.
                    DOTPROD_4X4 matmul_4x4_unchecked (4, 4) => per_channel_gemm(asm_layout, 4, &GEMM_TILES),
                ];
            }
            if_all_packings!($packings, asm_catalogue! {
                tier: Dotprod, feature: "FEAT_DotProd", dst: $dst, suffix: "_neon_dotprod";
                PACKING_1X4_KR8, "qai8dxp1x4_qsi4cxp4x4_", [
                    /// GEMV on the kr 8 packing, one `nr = 4` RHS tile at a time.
                    DOTPROD_1X4_KR8 matmul_1x4_kr8_unchecked (1, 4) => per_channel_gemv(asm_layout, 1, tile_1x4_kr8, tile_1x4_kr8),
                ];
                PACKING_4X8_KR8, "qai8dxp4x4_qsi4cxp8x4_", [
                    /// GEMM on the kr 8 packing, 16 rows (4 LHS tiles) x 8 columns per step, as two
                    /// 16 x 4 column quads.
                    DOTPROD_16X8_KR8 matmul_16x8_kr8_unchecked (16, 8) => per_channel_gemm(asm_layout, 16, &GEMM8_TILES),
                ];
                PACKING_4X4_KR8, "qai8dxp4x4_qsi4cxp4x4_", [
                    /// GEMM on the kr 8 packing, 16 rows (4 LHS tiles) x 4 columns per step.
                    DOTPROD_16X4_KR8 matmul_16x4_kr8_unchecked (16, 4) => per_channel_gemm(asm_layout, 16, &GEMM8_TILES),
                ];
            });
        }
    };
}
pub(crate) use qsi4cxp_dotprod_kernels;

qsi4cxp_dotprod_kernels!("f32", f32_out, all);

/// The tile functions of the dotprod tier, one module per output type (`f32_out`, `f16_out`,
/// `bf16_out`): the same `asm!` text up to the conversion before the stores.
#[cfg(target_arch = "aarch64")]
pub(crate) mod tiles {
    use crate::matmul::arch::dotprod::{Tile, TileFn};

    // -----------------------------------------------------------------------------------------
    // GEMV pieces (mr = 1). Registers:
    //   v0-v3    LHS depths 0-7, 8-15, 16-23, 24-31 of the group, each in both 64-bit halves
    //   v4-v7    RHS group bytes 0-7 of column pairs (0,1), (2,3), (4,5), (6,7)
    //   v8-v11   RHS group bytes 8-15 of the same pairs
    //   v12-v19  16 * low nibbles of v4-v11 (the high nibbles stay in v4-v11)
    //   v20-v27  accumulators, lanes (even column: d+0..3, d+4..7; odd column: d+0..3, d+4..7)
    //   v31      0xF0 bytes
    // -----------------------------------------------------------------------------------------

    // The GEMV tiles. kr 16: one accumulator per column pair and nibble (1x4, 1x8, added after
    // the K loop) or per pair (1x16); kr 8: one per chunk and nibble, added into columns 0-3.

    // -----------------------------------------------------------------------------------------
    // GEMM pieces (mr = 4): one output tile is up to 4 LHS tiles (16 rows) x one column quad
    // (4 columns of an RHS tile). Registers:
    //   v0/v1    chunk 0 of the quad after LD2 (columns 0-3 x group bytes 0-3 / bytes 4-7);
    //            after the unpack they hold 16 * high nibbles
    //   v13/v14  chunk 1 (group bytes 8-11 / 12-15), the same way
    //   v2/v3    16 * low nibbles of the chunk in use
    //   v4-v11   one 8-deep LHS block: LHS tile t in v(4+2t) (rows 0-1) and v(5+2t) (rows 2-3)
    //   v12      0xF0 bytes
    //   v16-v31  accumulators, one per row (two per row with at most 2 LHS tiles: low-nibble
    //            and high-nibble blocks apart, which halves the SDOT dependency chains); each
    //            lane is one output column
    // Each chunk is loaded one block ahead of its use (chunk 0 of the next group during this
    // group's second half), so the LD2 latency hides behind SDOTs.
    // Register numbers are passed to the macros as strings ("4" for v4 / q4).
    // -----------------------------------------------------------------------------------------

    /// The family hook of the GEMM tiles ([`per_channel_gemm_tiles!`]): `init` the 0xF0 mask
    /// (v12), `k_loop(16)` / `k_loop(8)` the whole K loop over `{g}` groups of the kr 16 / kr 8
    /// packing. kr 16 loads chunk 0 of each group ahead (during the previous group's second
    /// half), so one 32-byte chunk is read after the last group: at offset `nr*Kp/2 + 32*quad`,
    /// inside the `12 * nr`-byte extras (nr 4: quad 0 only; nr 8: quad <= 1). kr 8 reads the
    /// next group's chunks ahead in all groups but the last, which reads nothing ahead.
    #[rustfmt::skip]
    macro_rules! gemm_hook {
        (init) => {
            "movi v12.16b, #0xf0\n"
        };
        (k_loop(16); $([$l:ident, $x01:literal, $x23:literal, $lo:tt, $hi:tt]),+) => {
            concat!(
                gemm_load!("0", "1"),
                // LHS blocks of a 128-byte group: depths 0-7, 16-23, 8-15, 24-31
                gemm_loop!(gemm_group!(ahead, ["], #128", ", #-64]", ", #-96]", ", #-32]"],
                                       $([$l, $l, $x01, $x23, $lo, $hi]),+)),
            )
        };
        (k_loop(8); $($tile:tt),+) => {
            concat!(
                // chunks 0-1 and 2-3 of the first group
                gemm8_load!("0"), gemm8_load!("1"), gemm8_load!("13"), gemm8_load!("14"),
                "subs {g}, {g}, #1\n",
                "b.eq 4f\n",
                // all groups but the last load the next group's chunks ahead
                "3:\n",
                gemm8_group!(ahead, $($tile),+),
                "subs {g}, {g}, #1\n",
                "b.ne 3b\n",
                "4:\n",
                gemm8_group!(last, $($tile),+),
            )
        };
    }

    // GEMM pieces for the kr 8 packings (`bd = 4`): a group is 4 chunks of 4 bytes per
    // column, chunk c holding depths 4c..4c+3 (low nibbles) and 16+4c.. (high); a quad's chunk
    // is one register of 4 columns x 4 bytes as stored, and LHS block b (depths 4b..4b+3) is
    // one register with row r in element r. Registers as for kr 16, except: v0/v1 = chunks
    // 0/1, v13/v14 = chunks 2/3 (each loaded one half-group ahead), v4-v11 hold two LHS
    // blocks of each tile (v(4+2t) the even block, v(5+2t) the odd one).

    /// kr 8 RHS chunk load into v`$r` (`{rhs}` advances by `{rstep}` = `4 * nr`).
    #[rustfmt::skip]
    macro_rules! gemm8_load {
        ($r:literal) => {
            concat!("ld1 {{v", $r, ".16b}}, [{rhs}], {rstep}\n")
        };
    }

    /// Two consecutive 4-deep LHS blocks of every LHS tile (`$at` completes the address as in
    /// `gemm_block`), times the weights of the even (v`$we`) and odd (v`$wo`) chunk.
    #[rustfmt::skip]
    macro_rules! gemm8_block {
        ($we:literal, $wo:literal, $at:literal,
         $([$l:ident, $x0:literal, $x1:literal, $acc:tt]),+) => {
            concat!(
                $("ldp q", $x0, ", q", $x1, ", [{", stringify!($l), "}", $at, "\n",)+
                $(sdot_rows!($we, $x0, $acc),)+
                $(sdot_rows!($wo, $x1, $acc),)+
            )
        };
    }

    /// kr 8 read-ahead of two chunks of the next group (`ahead`), or nothing (`last`).
    #[rustfmt::skip]
    macro_rules! gemm8_ahead {
        (ahead, $r0:literal, $r1:literal) => {
            concat!(gemm8_load!($r0), gemm8_load!($r1))
        };
        (last, $r0:literal, $r1:literal) => {
            ""
        };
    }

    /// kr 8 GEMM K-group body, chunks already in v0/v1/v13/v14: blocks 0-1 (chunks 0-1, low
    /// nibbles), 4-5 (chunks 0-1, high), 2-3 (chunks 2-3, low), 6-7 (chunks 2-3, high).
    #[rustfmt::skip]
    macro_rules! gemm8_group {
        ($ahead:tt, $([$l:ident, $x0:literal, $x1:literal, $lo:tt, $hi:tt]),+) => {
            concat!(
                gemm_unpack!("0", "1"),
                gemm8_block!("2", "3", "], #128", $([$l, $x0, $x1, $lo]),+),
                gemm8_block!("0", "1", ", #-64]", $([$l, $x0, $x1, $hi]),+),
                gemm8_ahead!($ahead, "0", "1"),
                gemm_unpack!("13", "14"),
                gemm8_block!("2", "3", ", #-96]", $([$l, $x0, $x1, $lo]),+),
                gemm8_block!("13", "14", ", #-32]", $([$l, $x0, $x1, $hi]),+),
                gemm8_ahead!($ahead, "13", "14"),
            )
        };
    }

    /// Every tile function and table, with outputs of type `$out`.
    macro_rules! define_tiles {
        ($out:ident) => {
            gemv_tile! { tile_1x4(t), "`1 x 4` (one `nr = 4` tile)",
                rhs: [rhs = t.rhs],
                init: "movi v31.16b, #0xf0",
                zero: ["20", "21", "24", "25"],
                group: concat!(
                    gemv_lhs!(k16, "lhs"),
                    gemv_tile_group!(4, rhs, ["12", "16", "13", "17"], ["20", "21"], ["24", "25"]),
                ),
                fold: concat!("add v20.4s, v20.4s, v24.4s\n", "add v21.4s, v21.4s, v25.4s\n"),
                epilogue: gemv_epilogue!(4, "rhs", "v20", "v21"),
                out: $out, store: ["20"],
                clobbers: ["v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v12", "v13",
                           "v16", "v17", "v20", "v21", "v24", "v25", "v31"],
            }
            gemv_tile! { tile_1x4_kr8(t), "`1 x 4` on the kr 8 packing (one `nr = 4, kr = 8` tile)",
                rhs: [rhs = t.rhs],
                init: "movi v31.16b, #0xf0",
                zero: ["20", "21", "22", "23", "24", "25", "26", "27"],
                // a group is 4 chunks of 4 columns x 4 bytes, each unpacked chunk meets 4 depths of
                // the plain LHS row (SDOT by element): no LHS duplication, no lane folding
                group: concat!(
                    gemv_lhs!(k8, "lhs"),
                    gemv8_tile_group!(4, rhs, ["12", "13", "14", "15"],
                                      ["20", "21", "22", "23", "24", "25", "26", "27"]),
                ),
                fold: concat!(
                    "add v20.4s, v20.4s, v21.4s\n", "add v22.4s, v22.4s, v23.4s\n",
                    "add v24.4s, v24.4s, v25.4s\n", "add v26.4s, v26.4s, v27.4s\n",
                    "add v20.4s, v20.4s, v22.4s\n", "add v24.4s, v24.4s, v26.4s\n",
                    "add v20.4s, v20.4s, v24.4s\n",
                ),
                epilogue: gemv_epilogue!(4, "rhs", "v20"),
                out: $out, store: ["20"],
                clobbers: ["v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v12", "v13", "v14",
                           "v15", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v31"],
            }
            gemv_tile! { tile_1x8(t), "`1 x 8` (one `nr = 8` tile)",
                rhs: [rhs = t.rhs],
                init: "movi v31.16b, #0xf0",
                zero: ["20", "21", "22", "23", "24", "25", "26", "27"],
                group: concat!(
                    gemv_lhs!(k16, "lhs"),
                    gemv_tile_group!(8, rhs, ["12", "16", "13", "17", "14", "18", "15", "19"],
                                     ["20", "21", "22", "23"], ["24", "25", "26", "27"]),
                ),
                fold: concat!(
                    "add v20.4s, v20.4s, v24.4s\n", "add v21.4s, v21.4s, v25.4s\n",
                    "add v22.4s, v22.4s, v26.4s\n", "add v23.4s, v23.4s, v27.4s\n",
                ),
                epilogue: gemv_epilogue!(8, "rhs", "v20", "v21", "v22", "v23"),
                out: $out, store: ["20", "21"],
                clobbers: ["v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11",
                           "v12", "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22",
                           "v23", "v24", "v25", "v26", "v27", "v31"],
            }
            gemv_tile! { tile_1x16(t), "`1 x 16` (two consecutive `nr = 8` tiles sharing the LHS loads)",
                rhs: [rhs0 = t.rhs, rhs1 = t.rhs.wrapping_add(t.rhs_stride)],
                init: "movi v31.16b, #0xf0",
                zero: ["20", "21", "22", "23", "24", "25", "26", "27"],
                group: concat!(
                    gemv_lhs!(k16, "lhs"),
                    gemv_tile_group!(8, rhs0, ["12", "16", "13", "17", "14", "18", "15", "19"],
                                     ["20", "21", "22", "23"], ["20", "21", "22", "23"]),
                    gemv_tile_group!(8, rhs1, ["12", "16", "13", "17", "14", "18", "15", "19"],
                                     ["24", "25", "26", "27"], ["24", "25", "26", "27"]),
                ),
                fold: "",
                epilogue: concat!(
                    gemv_epilogue!(8, "rhs0", "v20", "v21", "v22", "v23"),
                    gemv_epilogue!(8, "rhs1", "v24", "v25", "v26", "v27"),
                ),
                out: $out, store: ["20", "21", "24", "25"],
                clobbers: ["v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11",
                           "v12", "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22",
                           "v23", "v24", "v25", "v26", "v27", "v31"],
            }
            // The GEMM tiles, kr 16 and kr 8 on the same registers: up to 2 LHS tiles with the
            // low- and high-nibble blocks in separate accumulators.
            per_channel_gemm_tiles! { t, gemm_hook, $out, ops: [rstep = in(reg) t.rhs_step],
                order: scale_dq,
                rows4_split: [tile_4x4(16), tile8_4x4(8)],
                rows8_split: [tile_8x4(16), tile8_8x4(8)],
                rows12: [tile_12x4(16), tile8_12x4(8)],
                rows16: [tile_16x4(16), tile8_16x4(8)],
            }

            /// The GEMM tile functions by LHS tile count: kr 16, kr 8.
            pub(crate) const GEMM_TILES: [TileFn; 4] = [tile_4x4, tile_8x4, tile_12x4, tile_16x4];
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

    /// bf16 outputs (integer round to nearest even).
    // The kr 8 tiles serve no bf16 kernel: the bf16 LHS packer takes `kr / sr = 8` only.
    #[allow(dead_code)]
    pub(crate) mod bf16_out {
        use super::*;
        define_tiles!(bf16);
    }
}
