//! dotprod tier of `qai8dxp_qsi4c32p`: hand-written `asm!` kernels built on `SDOT`
//! (FEAT_DotProd), from the shared pieces of `matmul::arch::dotprod` (K-group load, unpack and
//! `SDOT`; block loop; tile drivers).
//!
//! Inside each block of `bl` depths the packed RHS data is laid out as for `qsi4cxp` (byte `t`
//! of a 32-deep group: depth `t` low, `t + 16` high), so the kernels run the per-channel
//! K-group bodies `bl / 32` times per block: GEMV tiles with `LD4R`-duplicated LHS slices and
//! plain vector `SDOT`s, GEMM tiles with `LD2`-split RHS chunks and `SDOT` by element. Each
//! block then follows docs/formats.md, §Arithmetic: qai8dxp_qsi4c32p kernels:
//!
//! ```text
//! GEMV: ADDP (lane pairs -> columns); SCVTF #4 (the sums are 16 * S); bf16 scales -> f32 by
//!       ZIP with zero halves (a 16-bit left shift); FMLA acc, float(S), scale
//! GEMM: SCVTF #4 per row; ZIP the quad's scales; FMLA per row
//! ```
//!
//! The integer accumulators are reset by loads from a zero buffer (load pipes), the f32 ones
//! start at +0.0. After the blocks: `FMLA acc, rsum, float(offset)`, `FMUL dq`, `FADD bias`,
//! `FMAX`/`FMIN` clamp.
//!
//! * GEMV on [`PACKING_1X8`](super::PACKING_1X8): 1x16 (two RHS tiles share the LHS loads),
//!   1x8; on [`PACKING_1X4`](super::PACKING_1X4): 1x4. `bl = 32` runs tiles without a group
//!   loop (one group per block), other `bl` tiles with one.
//! * GEMM on [`PACKING_4X8`](super::PACKING_4X8) (8x8, 4x8) and
//!   [`PACKING_4X4`](super::PACKING_4X4) (8x4, 4x4): up to 2 LHS tiles (8 rows) x one column
//!   quad per `asm!` block (8 integer + 8 f32 accumulators), so dotprod-only CPUs prefill the
//!   weights packed for the i8mm kernels.

use super::Descriptor;

/// The dotprod kernels of the `qai8dxp x qsi4c32p` arithmetic with outputs of type `$dst`
/// (`"f32"`, `"bf16"`), on the tile functions of [`tiles`]`::$out`: every family of this
/// arithmetic (`qai8dxp_qsi4c32p`, `bf16_qai8dxp_qsi4c32p`) declares its dotprod tier with this one
/// table: `all` packings, or `kr16` only (without the `kr = 8` packings, which the bf16 LHS
/// packer does not take); `also: Bf16`: its kernels also need FEAT_BF16.
macro_rules! qsi4c32p_dotprod_kernels {
    ($dst:literal, $out:ident, $packings:ident $(, also: $extra:ident)?) => {
        subset_tier_module!(Dotprod, $packings, [DOTPROD_1X16, DOTPROD_1X8, DOTPROD_8X8, DOTPROD_4X8, DOTPROD_1X4, DOTPROD_8X4, DOTPROD_4X4], [DOTPROD_1X16_KR8, DOTPROD_1X8_KR8, DOTPROD_1X4_KR8]);

        #[cfg(target_arch = "aarch64")]
        mod aarch64 {
            use super::super as fam;
            use super::super::Descriptor;
            use crate::matmul::arch::dotprod::{BlockedFamily, blocked_gemm, blocked_gemv};
            use crate::matmul::qai8dxp_qsi4c32p::{asm_layout, scalar};

            /// The family as the shared drivers see it.
            const FAMILY: BlockedFamily<fam::Dst> = BlockedFamily { layout: asm_layout, scalar: scalar::matmul_unchecked };

            use crate::matmul::qai8dxp_qsi4c32p::dotprod::tiles::$out::*;
            use crate::matmul::{Tier, UncheckedArgs};

            asm_catalogue! {
                tier: Dotprod, feature: "FEAT_DotProd", dst: $dst, suffix: "_neon_dotprod" $(, also: $extra)?;
                PACKING_1X8, "qai8dxp1x8_qsi4c32p8x8_", [
                    /// GEMV over two `nr = 8` RHS tiles at a time (1 x 16 outputs per step).
                    DOTPROD_1X16 matmul_1x16_unchecked (1, 16) => blocked_gemv(&FAMILY, 2, [tile_1x16_bl32, tile_1x16], [tile_1x8_bl32, tile_1x8]),
                    /// GEMV over one `nr = 8` RHS tile at a time.
                    DOTPROD_1X8 matmul_1x8_unchecked (1, 8) => blocked_gemv(&FAMILY, 1, [tile_1x8_bl32, tile_1x8], [tile_1x8_bl32, tile_1x8]),
                ];
                PACKING_1X4, "qai8dxp1x8_qsi4c32p4x8_", [
                    /// GEMV over one `nr = 4` RHS tile at a time.
                    DOTPROD_1X4 matmul_1x4_unchecked (1, 4) => blocked_gemv(&FAMILY, 1, [tile_1x4_bl32, tile_1x4], [tile_1x4_bl32, tile_1x4]),
                ];
                PACKING_4X8, "qai8dxp4x8_qsi4c32p8x8_", [
                    /// GEMM, 8 rows (2 LHS tiles) x 8 columns per step, as two 8 x 4 column quads.
                    DOTPROD_8X8 matmul_8x8_unchecked (8, 8) => blocked_gemm(&FAMILY, 8, &[tile_4x4, tile_8x4]),
                    /// GEMM, 4 rows x 8 columns per step.
                    DOTPROD_4X8 matmul_4x8_unchecked (4, 8) => blocked_gemm(&FAMILY, 4, &[tile_4x4]),
                ];
                PACKING_4X4, "qai8dxp4x8_qsi4c32p4x8_", [
                    /// GEMM, 8 rows (2 LHS tiles) x 4 columns per step.
                    DOTPROD_8X4 matmul_8x4_unchecked (8, 4) => blocked_gemm(&FAMILY, 8, &[tile_4x4, tile_8x4]),
                    /// GEMM, 4 rows x 4 columns per step.
                    DOTPROD_4X4 matmul_4x4_unchecked (4, 4) => blocked_gemm(&FAMILY, 4, &[tile_4x4]),
                ];
            }
            if_all_packings!($packings, asm_catalogue! {
                tier: Dotprod, feature: "FEAT_DotProd", dst: $dst, suffix: "_neon_dotprod" $(, also: $extra)?;
                PACKING_1X8_KR8, "qai8dxp1x4_qsi4c32p8x4_", [
                    /// GEMV on the kr 8 packing over two `nr = 8` RHS tiles at a time (1 x 16 per step).
                    DOTPROD_1X16_KR8 matmul_1x16_kr8_unchecked (1, 16) => blocked_gemv(&FAMILY, 2, [tile_kr8_1x16_bl32, tile_kr8_1x16], [tile_kr8_1x8_bl32, tile_kr8_1x8]),
                    /// GEMV on the kr 8 packing, one `nr = 8` RHS tile at a time.
                    DOTPROD_1X8_KR8 matmul_1x8_kr8_unchecked (1, 8) => blocked_gemv(&FAMILY, 1, [tile_kr8_1x8_bl32, tile_kr8_1x8], [tile_kr8_1x8_bl32, tile_kr8_1x8]),
                ];
                PACKING_1X4_KR8, "qai8dxp1x4_qsi4c32p4x4_", [
                    /// GEMV on the kr 8 packing, one `nr = 4` RHS tile at a time.
                    DOTPROD_1X4_KR8 matmul_1x4_kr8_unchecked (1, 4) => blocked_gemv(&FAMILY, 1, [tile_kr8_1x4_bl32, tile_kr8_1x4], [tile_kr8_1x4_bl32, tile_kr8_1x4]),
                ];
            });
        }
    };
}
pub(crate) use qsi4c32p_dotprod_kernels;

qsi4c32p_dotprod_kernels!("f32", f32_out, all);

/// The tile functions of the dotprod tier, one module per output type: the same `asm!`
/// text up to the conversion before the stores.
#[cfg(target_arch = "aarch64")]
pub(crate) mod tiles {
    use crate::matmul::arch::dotprod::Tile;

    /// GEMV hook of `blocked_gemv_tile` (see there): LHS `LD4R`, bf16 block scales after the
    /// block's data, the qai8dxp epilogue. Registers: v28 zero halves for the bf16 -> f32 `ZIP`;
    /// after the loop v1 = (offset, dq), v2 = float(offset), v3/v0 = clamp bounds.
    #[rustfmt::skip]
    macro_rules! bf16_gemv {
        (init) => {
            "movi v28.16b, #0\n"
        };
        (fold, $kind:ident, $nr:tt, $a:tt) => {
            blocked_fold!($kind, $nr, $a)
        };
        (block_start, $mode:ident, $tiles:tt) => {
            ""
        };
        (lhs, $mode:ident, $kind:ident) => {
            gemv_lhs!($kind, "lhs")
        };
        (block_end_lhs, $mode:ident) => {
            ""
        };
        (block_scale, 8, $rhs:ident, [$a0:literal, $a1:literal], [$f0:literal, $f1:literal],
         $s:literal, $u:literal) => {
            concat!(
                // bf16 scales of columns 0-7 -> f32 (bits << 16)
                "ldr q", $s, ", [{", stringify!($rhs), "}], #16\n",
                "zip2 v", $u, ".8h, v28.8h, v", $s, ".8h\n",
                "zip1 v", $s, ".8h, v28.8h, v", $s, ".8h\n",
                // acc = fma(float(S), scale, acc)
                "fmla v", $f0, ".4s, v", $a0, ".4s, v", $s, ".4s\n",
                "fmla v", $f1, ".4s, v", $a1, ".4s, v", $u, ".4s\n",
            )
        };
        (block_scale, 4, $rhs:ident, [$a0:literal], [$f0:literal], $s:literal, $u:literal) => {
            concat!(
                "ldr d", $s, ", [{", stringify!($rhs), "}], #8\n",
                "zip1 v", $s, ".8h, v28.8h, v", $s, ".8h\n",
                "fmla v", $f0, ".4s, v", $a0, ".4s, v", $s, ".4s\n",
            )
        };
        (finish_params) => {
            concat!(
                // offset (int32) and dq of the row: {lhs} is at the row's extras
                "ldr d1, [{lhs}]\n",
                "scvtf s2, s1\n",
                "dup v3.4s, {lo:w}\n",
                "dup v0.4s, {hi:w}\n",
            )
        };
        (finish, 8, $rhs:ident, [$f0:literal, $f1:literal]) => {
            concat!(
                // rsum, bias of columns 0-7 ({rhs} is at the tile's extras)
                "ldp q4, q5, [{", stringify!($rhs), "}]\n",
                "ldp q6, q7, [{", stringify!($rhs), "}, #32]\n",
                bf16_gemv!(finish_math, $f0, "4", "6"),
                bf16_gemv!(finish_math, $f1, "5", "7"),
            )
        };
        (finish, 4, $rhs:ident, [$f0:literal]) => {
            concat!(
                "ldp q4, q6, [{", stringify!($rhs), "}]\n",
                bf16_gemv!(finish_math, $f0, "4", "6"),
            )
        };
        (finish_math, $f:literal, $rsum:literal, $bias:literal) => {
            concat!(
                // acc = fma(rsum, float(offset), acc); acc * dq; + bias; clamp
                "fmla v", $f, ".4s, v", $rsum, ".4s, v2.s[0]\n",
                "fmul v", $f, ".4s, v", $f, ".4s, v1.s[1]\n",
                "fadd v", $f, ".4s, v", $f, ".4s, v", $bias, ".4s\n",
                "fmax v", $f, ".4s, v", $f, ".4s, v3.4s\n",
                "fmin v", $f, ".4s, v", $f, ".4s, v0.4s\n",
            )
        };
    }

    /// GEMM hook of `blocked_gemm_tile` (see there): one qai8dxp LHS pointer per tile (blocks
    /// of a 128-byte group at +0, +64, +32, +96), bf16 quad scales, the qai8dxp epilogue.
    /// Registers: v15 zero halves, v8/v9 the quad's scales (bf16 / f32); after the loop
    /// v0 = rsum, v2 = bias of the quad, v4/v5 = float(offset) / dq of an LHS tile's rows,
    /// v12/v13 clamp bounds.
    #[rustfmt::skip]
    macro_rules! bf16_gemm {
        (init) => {
            "movi v15.16b, #0\n"
        };
        (block_scales) => {
            // the quad's 4 scales (16-bit)
            "ld1 {{v8.4h}}, [{sc}], {bb}\n"
        };
        (block_start, $($tile:tt),+) => {
            ""
        };
        (group, $([$l:ident, $h:ident, $x01:literal, $x23:literal, $a:tt]),+) => {
            gemm_group!(last, ["], #128", ", #-64]", ", #-96]", ", #-32]"],
                        $([$l, $l, $x01, $x23, $a, $a]),+)
        };
        (block_end, $([$l:ident, $h:ident, $ls:literal,
                       [$a0:literal, $a1:literal, $a2:literal, $a3:literal],
                       [$f0:literal, $f1:literal, $f2:literal, $f3:literal]]),+) => {
            concat!(
                // the quad's bf16 scales (v8) -> f32
                "zip1 v9.8h, v15.8h, v8.8h\n",
                $(
                    blocked_scvtf!($a0, $a1, $a2, $a3),
                    "fmla v", $f0, ".4s, v", $a0, ".4s, v9.4s\n",
                    "fmla v", $f1, ".4s, v", $a1, ".4s, v9.4s\n",
                    "fmla v", $f2, ".4s, v", $a2, ".4s, v9.4s\n",
                    "fmla v", $f3, ".4s, v", $a3, ".4s, v9.4s\n",
                )+
            )
        };
        (finish_params) => {
            concat!(
                "ldr q0, [{x}]\n",
                "ldr q2, [{x}, {xs}]\n",
                "dup v12.4s, {lo:w}\n",
                "dup v13.4s, {hi:w}\n",
            )
        };
        (finish, $out:ident, $l:ident, [$f0:literal, $f1:literal, $f2:literal, $f3:literal]) => {
            concat!(
                // offsets and dq of rows 0-3 ({l} is at the LHS tile's extras)
                "ldp q4, q5, [{", stringify!($l), "}]\n",
                "scvtf v4.4s, v4.4s\n",
                bf16_gemm!(row, $out, $f0, "0"),
                bf16_gemm!(row, $out, $f1, "1"),
                bf16_gemm!(row, $out, $f2, "2"),
                bf16_gemm!(row, $out, $f3, "3"),
            )
        };
        (row, $out:ident, $f:literal, $i:literal) => {
            concat!(
                "fmla v", $f, ".4s, v0.4s, v4.s[", $i, "]\n",
                "fmul v", $f, ".4s, v", $f, ".4s, v5.s[", $i, "]\n",
                "fadd v", $f, ".4s, v", $f, ".4s, v2.4s\n",
                blocked_clamp_store!($out, $f, "12", "13"),
            )
        };
    }

    /// Every tile function and table, with outputs of type `$out`.
    macro_rules! define_tiles {
        ($out:ident) => {
            blocked_gemv_shape!(x16_nr8, tile_1x16_bl32(t), bf16_gemv, $out, one, []);

            blocked_gemv_shape!(x16_nr8, tile_1x16(t), bf16_gemv, $out, many, []);

            blocked_gemv_shape!(x8_nr8, tile_1x8_bl32(t), bf16_gemv, $out, one, []);

            blocked_gemv_shape!(x8_nr8, tile_1x8(t), bf16_gemv, $out, many, []);

            blocked_gemv_shape!(x4_nr4, tile_1x4_bl32(t), bf16_gemv, $out, one, []);

            blocked_gemv_shape!(x4_nr4, tile_1x4(t), bf16_gemv, $out, many, []);

            blocked_gemv_shape!(x16_nr8_k8, tile_kr8_1x16_bl32(t), bf16_gemv, $out, one, []);

            blocked_gemv_shape!(x16_nr8_k8, tile_kr8_1x16(t), bf16_gemv, $out, many, []);

            blocked_gemv_shape!(x8_nr8_k8, tile_kr8_1x8_bl32(t), bf16_gemv, $out, one, []);

            blocked_gemv_shape!(x8_nr8_k8, tile_kr8_1x8(t), bf16_gemv, $out, many, []);

            blocked_gemv_shape!(x4_nr4_k8, tile_kr8_1x4_bl32(t), bf16_gemv, $out, one, []);

            blocked_gemv_shape!(x4_nr4_k8, tile_kr8_1x4(t), bf16_gemv, $out, many, []);

            blocked_gemm_shape!(rows8, tile_8x4(t), bf16_gemm, $out, [
                x = in(reg) t.extras,
                xs = in(reg) t.extras_step,
            ]);

            blocked_gemm_shape!(rows4, tile_4x4(t), bf16_gemm, $out, [
                x = in(reg) t.extras,
                xs = in(reg) t.extras_step,
            ]);



        };
    }

    /// f32 outputs.
    pub(crate) mod f32_out {
        use super::*;
        define_tiles!(f32);
    }

    /// bf16 outputs (integer round to nearest even).
    // The kr 8 tiles serve no bf16 kernel: the bf16 LHS packer takes `kr / sr = 8` only.
    #[allow(dead_code)]
    pub(crate) mod bf16_out {
        use super::*;
        define_tiles!(bf16);
    }
}
