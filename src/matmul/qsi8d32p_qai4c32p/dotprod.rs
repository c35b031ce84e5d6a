//! dotprod tier of `qsi8d32p_qai4c32p`: hand-written `asm!` kernels built on `SDOT`
//! (FEAT_DotProd), from the shared pieces of `matmul::arch::dotprod` (K-group load, unpack and
//! `SDOT`; block loop; tile drivers).
//!
//! Inside each block of `bl` depths the packed RHS data is laid out as for `qsi4cxp` (byte `t`
//! of a 32-deep group: depth `t` low, `t + 16` high), and the LHS block's data as a `qai8dxp`
//! row's, so the kernels run the per-channel K-group bodies `bl / 32` times per block. After
//! a block's data come its extras: the LHS rows' f32 block sums and scales, the RHS columns'
//! f32 offsets and `scale / 16`. Each block follows docs/formats.md, §Arithmetic:
//! qsi8d32p_qai4c32p kernels:
//!
//! ```text
//! GEMV: ADDP (lane pairs -> columns); SCVTF (the sums are 16 * S: float(16 * S), exact);
//!       FMLA acc, zero, bsum; s = FMUL scale16, lhs scale; FMLA acc, float(16 * S), s
//! GEMM: the same per row (FMLA / FMUL by element)
//! ```
//!
//! The integer accumulators are reset by loads from a zero buffer (load pipes), the f32 ones
//! start at +0.0. After the blocks: `FADD bias`, `FMAX`/`FMIN` clamp.
//!
//! * GEMV on [`PACKING_1X4`](super::PACKING_1X4) (the preferred RHS packing): 1x16 (four RHS
//!   tiles share the LHS loads), 1x8, 1x4; on [`PACKING_1X4_KR8`](super::PACKING_1X4_KR8):
//!   1x16, 1x4. `bl = 32` runs tiles without a group loop, other `bl` tiles with one. Any `m`
//!   (KleidiAI's f32 GEMV kernels of this family compute row 0 only).
//! * GEMM on [`PACKING_4X4`](super::PACKING_4X4): 8x4, 4x4 (up to 2 LHS tiles x the tile's
//!   4 columns per `asm!` block). The `kr = 8` GEMM packing runs the NEON tier.

use super::Descriptor;

/// The dotprod kernels of the `qsi8d32p x qai4c32p` arithmetic with outputs of type `$dst`
/// (`"f32"`, `"f16"`), on the tile functions of [`tiles`]`::$out`: both families of the
/// arithmetic declare their dotprod tier with this one table.
macro_rules! qai4c32p_dotprod_kernels {
    ($dst:literal, $out:ident) => {
        tier_module!(
            Dotprod,
            DOTPROD_1X16,
            DOTPROD_1X8,
            DOTPROD_1X4,
            DOTPROD_8X4,
            DOTPROD_4X4,
            DOTPROD_1X16_KR8,
            DOTPROD_1X4_KR8,
        );

        #[cfg(target_arch = "aarch64")]
        mod aarch64 {
            use super::super as fam;
            use super::super::Descriptor;
            use crate::matmul::arch::dotprod::{BlockedFamily, blocked_gemm, blocked_gemv};
            use crate::matmul::qsi8d32p_qai4c32p::{asm_layout, scalar};

            /// The family as the shared drivers see it.
            const FAMILY: BlockedFamily<fam::Dst> = BlockedFamily { layout: asm_layout, scalar: scalar::matmul_unchecked };

            use crate::matmul::qsi8d32p_qai4c32p::dotprod::tiles::$out::*;
            use crate::matmul::{Tier, UncheckedArgs};

            asm_catalogue! {
                tier: Dotprod, feature: "FEAT_DotProd", dst: $dst, suffix: "_neon_dotprod";
                PACKING_1X4, "qsi8d32p1x8_qai4c32p4x8_", [
                    /// GEMV over four `nr = 4` RHS tiles at a time (1 x 16 outputs per step).
                    DOTPROD_1X16 matmul_1x16_unchecked (1, 16) => blocked_gemv(&FAMILY, 4, [tile_1x16_bl32, tile_1x16], [tile_1x4_bl32, tile_1x4]),
                    /// GEMV over two `nr = 4` RHS tiles at a time.
                    DOTPROD_1X8 matmul_1x8_unchecked (1, 8) => blocked_gemv(&FAMILY, 2, [tile_1x8_bl32, tile_1x8], [tile_1x4_bl32, tile_1x4]),
                    /// GEMV over one `nr = 4` RHS tile at a time (KleidiAI's 1x4).
                    DOTPROD_1X4 matmul_1x4_unchecked (1, 4) => blocked_gemv(&FAMILY, 1, [tile_1x4_bl32, tile_1x4], [tile_1x4_bl32, tile_1x4]),
                ];
                PACKING_4X4, "qsi8d32p4x8_qai4c32p4x8_", [
                    /// GEMM, 8 rows (2 LHS tiles) x 4 columns per step.
                    DOTPROD_8X4 matmul_8x4_unchecked (8, 4) => blocked_gemm(&FAMILY, 8, &[tile_4x4, tile_8x4]),
                    /// GEMM, 4 rows x 4 columns per step.
                    DOTPROD_4X4 matmul_4x4_unchecked (4, 4) => blocked_gemm(&FAMILY, 4, &[tile_4x4]),
                ];
                PACKING_1X4_KR8, "qsi8d32p1x4_qai4c32p4x4_", [
                    /// GEMV on the kr 8 packing over four `nr = 4` RHS tiles at a time (1 x 16 per step).
                    DOTPROD_1X16_KR8 matmul_1x16_kr8_unchecked (1, 16) => blocked_gemv(&FAMILY, 4, [tile_kr8_1x16_bl32, tile_kr8_1x16], [tile_kr8_1x4_bl32, tile_kr8_1x4]),
                    /// GEMV on the kr 8 packing, one `nr = 4` RHS tile at a time (KleidiAI's 1x4).
                    DOTPROD_1X4_KR8 matmul_1x4_kr8_unchecked (1, 4) => blocked_gemv(&FAMILY, 1, [tile_kr8_1x4_bl32, tile_kr8_1x4], [tile_kr8_1x4_bl32, tile_kr8_1x4]),
                ];
            }
        }
    };
}
pub(crate) use qai4c32p_dotprod_kernels;

qai4c32p_dotprod_kernels!("f32", f32_out);

/// The tile functions of the dotprod tier, one module per output type: the same `asm!`
/// text up to the conversion before the stores.
#[cfg(target_arch = "aarch64")]
pub(crate) mod tiles {
    use crate::matmul::arch::dotprod::Tile;

    /// GEMV hook of `blocked_gemv_tile` (see there): LHS `LD4R` / `LDP` of each group (the
    /// block's data is contiguous), then the row's block sum and scale into v28 (`s[0]`,
    /// `s[1]`); per tile the columns' offsets and `scale / 16` (v29, v30) after the block's
    /// data. After the loop v3/v0 = clamp bounds, v29 = a tile's bias.
    #[rustfmt::skip]
    macro_rules! asym_gemv {
        (init) => {
            ""
        };
        (fold, $kind:ident, $nr:tt, $a:tt) => {
            blocked_fold!(exact16, $kind, $nr, $a)
        };
        (block_start, $mode:ident, $tiles:tt) => {
            ""
        };
        (lhs, $mode:ident, $kind:ident) => {
            gemv_lhs!($kind, "lhs")
        };
        (block_end_lhs, $mode:ident) => {
            // bsum, lhs scale of the block ({lhs} is past its data); on to the next block
            "ldr d28, [{lhs}], #8\n"
        };
        (block_scale, 4, $rhs:ident, [$a0:literal], [$f0:literal], $s:literal, $u:literal) => {
            concat!(
                // offsets, scale16 of the tile's 4 columns; on to the next block's data
                "ldp q29, q30, [{", stringify!($rhs), "}], #32\n",
                // acc = fma(zero, bsum, acc); s = scale16 * lhs scale; acc = fma(float(16 S), s, acc)
                "fmla v", $f0, ".4s, v29.4s, v28.s[0]\n",
                "fmul v30.4s, v30.4s, v28.s[1]\n",
                "fmla v", $f0, ".4s, v", $a0, ".4s, v30.4s\n",
            )
        };
        (finish_params) => {
            concat!("dup v3.4s, {lo:w}\n", "dup v0.4s, {hi:w}\n")
        };
        (finish, 4, $rhs:ident, [$f0:literal]) => {
            concat!(
                // + bias ({rhs} is at the tile's bias), clamp
                "ldr q29, [{", stringify!($rhs), "}]\n",
                "fadd v", $f0, ".4s, v", $f0, ".4s, v29.4s\n",
                "fmax v", $f0, ".4s, v", $f0, ".4s, v3.4s\n",
                "fmin v", $f0, ".4s, v", $f0, ".4s, v0.4s\n",
            )
        };
    }

    /// GEMM hook of `blocked_gemm_tile` (see there): one LHS pointer per tile (a 32-deep group of
    /// 4 rows is 128 bytes: blocks at +0, +64, +32, +96), the block's 4 row sums and scales
    /// after its data (v4 / v5), the quad's offsets and `scale / 16` (v8 / v9) after the RHS
    /// block's data. v6 holds a row's `s`; after the loop v0 = the quad's bias, v12/v13 clamp
    /// bounds.
    #[rustfmt::skip]
    macro_rules! asym_gemm {
        (init) => {
            ""
        };
        (block_start, $($tile:tt),+) => {
            ""
        };
        (group, $([$l:ident, $h:ident, $x01:literal, $x23:literal, $a:tt]),+) => {
            gemm_group!(last, ["], #128", ", #-64]", ", #-96]", ", #-32]"],
                        $([$l, $l, $x01, $x23, $a, $a]),+)
        };
        (block_scales) => {
            // the quad's 4 offsets and 4 scales16
            "ld1 {{v8.4s, v9.4s}}, [{sc}], {bb}\n"
        };
        (block_end, $([$l:ident, $h:ident, $ls:literal,
                       [$a0:literal, $a1:literal, $a2:literal, $a3:literal],
                       [$f0:literal, $f1:literal, $f2:literal, $f3:literal]]),+) => {
            concat!(
                $(
                    // the rows' block sums and scales; {l} on to the next block's data
                    "ldp q4, q5, [{", stringify!($l), "}], #32\n",
                    "scvtf v", $a0, ".4s, v", $a0, ".4s\n",
                    "scvtf v", $a1, ".4s, v", $a1, ".4s\n",
                    "scvtf v", $a2, ".4s, v", $a2, ".4s\n",
                    "scvtf v", $a3, ".4s, v", $a3, ".4s\n",
                    asym_gemm!(row, $a0, $f0, "0"),
                    asym_gemm!(row, $a1, $f1, "1"),
                    asym_gemm!(row, $a2, $f2, "2"),
                    asym_gemm!(row, $a3, $f3, "3"),
                )+
            )
        };
        (row, $a:literal, $f:literal, $i:literal) => {
            concat!(
                // acc = fma(zero, bsum, acc); s = scale16 * lhs scale; acc = fma(float(16 S), s, acc)
                "fmla v", $f, ".4s, v8.4s, v4.s[", $i, "]\n",
                "fmul v6.4s, v9.4s, v5.s[", $i, "]\n",
                "fmla v", $f, ".4s, v", $a, ".4s, v6.4s\n",
            )
        };
        (finish_params) => {
            concat!(
                "ldr q0, [{x}]\n",
                "dup v12.4s, {lo:w}\n",
                "dup v13.4s, {hi:w}\n",
            )
        };
        (finish, $out:ident, $l:ident, [$f0:literal, $f1:literal, $f2:literal, $f3:literal]) => {
            concat!(
                asym_gemm!(out_row, $out, $f0),
                asym_gemm!(out_row, $out, $f1),
                asym_gemm!(out_row, $out, $f2),
                asym_gemm!(out_row, $out, $f3),
            )
        };
        (out_row, $out:ident, $f:literal) => {
            concat!(
                "fadd v", $f, ".4s, v", $f, ".4s, v0.4s\n",
                blocked_clamp_store!($out, $f, "12", "13"),
            )
        };
    }

    /// Every tile function, with outputs of type `$out`.
    macro_rules! define_tiles {
        ($out:ident) => {
            blocked_gemv_shape!(x16_nr4, tile_1x16_bl32(t), asym_gemv, $out, one, []);
            blocked_gemv_shape!(x16_nr4, tile_1x16(t), asym_gemv, $out, many, []);
            blocked_gemv_shape!(x8_nr4, tile_1x8_bl32(t), asym_gemv, $out, one, []);
            blocked_gemv_shape!(x8_nr4, tile_1x8(t), asym_gemv, $out, many, []);
            blocked_gemv_shape!(x4_nr4, tile_1x4_bl32(t), asym_gemv, $out, one, []);
            blocked_gemv_shape!(x4_nr4, tile_1x4(t), asym_gemv, $out, many, []);
            blocked_gemv_shape!(x16_nr4_k8, tile_kr8_1x16_bl32(t), asym_gemv, $out, one, []);
            blocked_gemv_shape!(x16_nr4_k8, tile_kr8_1x16(t), asym_gemv, $out, many, []);
            blocked_gemv_shape!(x4_nr4_k8, tile_kr8_1x4_bl32(t), asym_gemv, $out, one, []);
            blocked_gemv_shape!(x4_nr4_k8, tile_kr8_1x4(t), asym_gemv, $out, many, []);
            blocked_gemm_shape!(rows8, tile_8x4(t), asym_gemm, $out, [x = in(reg) t.extras,]);
            blocked_gemm_shape!(rows4, tile_4x4(t), asym_gemm, $out, [x = in(reg) t.extras,]);
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
