//! dotprod tier of `qsi8d32p_qsi4c32p`: hand-written `asm!` kernels built on `SDOT`
//! (FEAT_DotProd), from the shared pieces of `matmul::arch::dotprod` (K-group load, unpack and
//! `SDOT`; block loop; tile drivers).
//!
//! Byte `q` of a packed column block holds depth `q` (low nibble) and `q + bl/2` (high), so
//! the 16-byte group `g` of a block pairs its low nibbles with LHS depths `16g..16g+15` and
//! its high nibbles with `bl/2 + 16g..`: for `bl = 32` the per-channel pairing, for longer
//! blocks the low and high halves of the LHS block are read through two pointers. Each block
//! follows docs/formats.md, §Arithmetic: qsi8d32p_qsi4c32p kernels:
//!
//! ```text
//! s   = FMUL(FCVTL(rhs f16 scales), FCVT(lhs f16 scale))       (exact)
//! GEMV: ADDP (lane pairs -> columns); SCVTF #4 (the sums are 16 * S); FMLA acc, float(S), s
//! GEMM: SCVTF #4 per row; s per row (FMUL by element); FMLA per row
//! ```
//!
//! then the clamp (no bias, no offset). The integer accumulators are reset by loads from a
//! zero buffer, the f32 ones start at +0.0.
//!
//! * GEMV on [`PACKING_1X4`](super::PACKING_1X4) (KleidiAI's layout, the family's preferred
//!   RHS packing): 1x16 (four RHS tiles share the LHS loads), 1x8, 1x4; on
//!   [`PACKING_1X8`](super::PACKING_1X8): 1x16, 1x8. `bl = 32` runs tiles without a group loop
//!   (`LD4R` of the block's 32 LHS values), other `bl` tiles with one (`LD2R` of the low and
//!   the high half).
//! * GEMM on [`PACKING_4X4`](super::PACKING_4X4) (8x4, 4x4) and
//!   [`PACKING_4X8`](super::PACKING_4X8) (8x8, 4x8): up to 2 LHS tiles (8 rows) x one column
//!   quad per `asm!` block.

use super::Descriptor;

tier_module!(
    Dotprod,
    DOTPROD_1X16,
    DOTPROD_1X8,
    DOTPROD_1X4,
    DOTPROD_8X4,
    DOTPROD_4X4,
    DOTPROD_1X16_NR8,
    DOTPROD_1X8_NR8,
    DOTPROD_8X8,
    DOTPROD_4X8,
    DOTPROD_1X16_KR8,
    DOTPROD_1X4_KR8,
);

#[cfg(target_arch = "aarch64")]
mod aarch64 {
    use super::super as fam;
    use super::super::{Descriptor, asm_layout, scalar};
    use crate::matmul::arch::dotprod::{BlockedFamily, Tile, blocked_gemm, blocked_gemv};
    use crate::matmul::{Tier, UncheckedArgs};

    /// The family as the shared drivers see it.
    const FAMILY: BlockedFamily<fam::Dst> = BlockedFamily { layout: asm_layout, scalar: scalar::matmul_unchecked };

    /// GEMV hook of `blocked_gemv_tile` (see there): the block's LHS f16 scale (v28, then f32)
    /// and RHS f16 scales (the tile's scale register) are loaded at the block start, before
    /// the data; `many` reads the block's low half through `{lhs}` and its high half through
    /// `{lh}`. After the loop v3/v0 = clamp bounds.
    #[rustfmt::skip]
    macro_rules! f16_gemv {
        (init) => {
            ""
        };
        (fold, $kind:ident, $nr:tt, $a:tt) => {
            blocked_fold!($kind, $nr, $a)
        };
        (block_start, one, [$(($rhs:ident, $nr:tt, $s:literal)),+]) => {
            concat!(
                "ldr h28, [{lhs}], #2\n",
                $(f16_gemv!(rhs_scales, $nr, $rhs, $s),)+
                "fcvt s28, h28\n",
            )
        };
        (block_start, many, [$(($rhs:ident, $nr:tt, $s:literal)),+]) => {
            concat!(
                // {lh} = the block's high half: bl/2 = 16 * groups bytes after the low one
                "ldr h28, [{lhs}], #2\n",
                "add {lh}, {lhs}, {gpb}, lsl #4\n",
                $(f16_gemv!(rhs_scales, $nr, $rhs, $s),)+
                "fcvt s28, h28\n",
            )
        };
        (rhs_scales, 4, $rhs:ident, $s:literal) => {
            concat!("ldr d", $s, ", [{", stringify!($rhs), "}], #8\n")
        };
        (rhs_scales, 8, $rhs:ident, $s:literal) => {
            concat!("ldr q", $s, ", [{", stringify!($rhs), "}], #16\n")
        };
        (lhs, one, $kind:ident) => {
            gemv_lhs!($kind, "lhs")
        };
        (lhs, many, $kind:ident) => {
            gemv_lhs!($kind, split, "lhs", "lh")
        };
        (block_end_lhs, one) => {
            ""
        };
        (block_end_lhs, many) => {
            // the next block starts after the high half
            "mov {lhs}, {lh}\n"
        };
        (block_scale, 8, $rhs:ident, [$a0:literal, $a1:literal], [$f0:literal, $f1:literal],
         $s:literal, $u:literal) => {
            concat!(
                // s = f32(rhs scale) * f32(lhs scale), columns 0-7
                "fcvtl2 v", $u, ".4s, v", $s, ".8h\n",
                "fcvtl v", $s, ".4s, v", $s, ".4h\n",
                "fmul v", $s, ".4s, v", $s, ".4s, v28.s[0]\n",
                "fmul v", $u, ".4s, v", $u, ".4s, v28.s[0]\n",
                // acc = fma(float(S), s, acc)
                "fmla v", $f0, ".4s, v", $a0, ".4s, v", $s, ".4s\n",
                "fmla v", $f1, ".4s, v", $a1, ".4s, v", $u, ".4s\n",
            )
        };
        (block_scale, 4, $rhs:ident, [$a0:literal], [$f0:literal], $s:literal, $u:literal) => {
            concat!(
                "fcvtl v", $s, ".4s, v", $s, ".4h\n",
                "fmul v", $s, ".4s, v", $s, ".4s, v28.s[0]\n",
                "fmla v", $f0, ".4s, v", $a0, ".4s, v", $s, ".4s\n",
            )
        };
        (finish_params) => {
            concat!("dup v3.4s, {lo:w}\n", "dup v0.4s, {hi:w}\n")
        };
        (finish, $nr:tt, $rhs:ident, [$($f:literal),+]) => {
            concat!(
                $("fmax v", $f, ".4s, v", $f, ".4s, v3.4s\n",)+
                $("fmin v", $f, ".4s, v", $f, ".4s, v0.4s\n",)+
            )
        };
    }

    /// GEMM hook of `blocked_gemm_tile` (see there): two LHS pointers per tile, `{l}` on the
    /// block's low half and `{h}` on its high half (each 8-deep LHS block is 32 bytes); the
    /// rows' f16 scales (v10 / v11, then f32) are loaded at the block start. Registers: v8 the
    /// quad's f16 scales, then a row's `s`; v9 the quad's f32 scales; after the loop v12/v13
    /// clamp bounds.
    #[rustfmt::skip]
    macro_rules! f16_gemm {
        (init) => {
            ""
        };
        (block_scales) => {
            // the quad's 4 scales (16-bit)
            "ld1 {{v8.4h}}, [{sc}], {bb}\n"
        };
        (block_start, $([$l:ident, $h:ident, $ls:literal]),+) => {
            concat!(
                // the rows' scales (the 8 bytes before the block's data, where `{l}` points),
                // then {h} = the high half: bl/2 * 4 = 64 * groups bytes on
                $(
                    "ldur d", $ls, ", [{", stringify!($l), "}, #-8]\n",
                    "add {", stringify!($h), "}, {", stringify!($l), "}, {gpb}, lsl #6\n",
                )+
            )
        };
        (group, $([$l:ident, $h:ident, $x01:literal, $x23:literal, $a:tt]),+) => {
            gemm_group!(last, ["], #64", "], #64", ", #-32]", ", #-32]"],
                        $([$l, $h, $x01, $x23, $a, $a]),+)
        };
        (block_end, $([$l:ident, $h:ident, $ls:literal,
                       [$a0:literal, $a1:literal, $a2:literal, $a3:literal],
                       [$f0:literal, $f1:literal, $f2:literal, $f3:literal]]),+) => {
            concat!(
                // the quad's f16 scales (v8) -> f32
                "fcvtl v9.4s, v8.4h\n",
                $(
                    "fcvtl v", $ls, ".4s, v", $ls, ".4h\n",
                    blocked_scvtf!($a0, $a1, $a2, $a3),
                    f16_gemm!(row, $a0, $f0, $ls, "0"),
                    f16_gemm!(row, $a1, $f1, $ls, "1"),
                    f16_gemm!(row, $a2, $f2, $ls, "2"),
                    f16_gemm!(row, $a3, $f3, $ls, "3"),
                    // the next block's data: past the high half and the next block's scales
                    "add {", stringify!($l), "}, {", stringify!($h), "}, #8\n",
                )+
            )
        };
        (row, $a:literal, $f:literal, $ls:literal, $i:literal) => {
            concat!(
                // s = rhs scale * lhs scale of row i; acc = fma(float(S), s, acc)
                "fmul v8.4s, v9.4s, v", $ls, ".s[", $i, "]\n",
                "fmla v", $f, ".4s, v", $a, ".4s, v8.4s\n",
            )
        };
        (finish_params) => {
            concat!("dup v12.4s, {lo:w}\n", "dup v13.4s, {hi:w}\n")
        };
        (finish, $out:ident, $l:ident, [$f0:literal, $f1:literal, $f2:literal, $f3:literal]) => {
            concat!(
                blocked_clamp_store!($out, $f0, "12", "13"),
                blocked_clamp_store!($out, $f1, "12", "13"),
                blocked_clamp_store!($out, $f2, "12", "13"),
                blocked_clamp_store!($out, $f3, "12", "13"),
            )
        };
    }

    blocked_gemv_shape!(x16_nr4, tile_1x16_bl32(t), f16_gemv, f32, one, []);
    blocked_gemv_shape!(x16_nr4, tile_1x16(t), f16_gemv, f32, many, [lh = out(reg) _,]);
    blocked_gemv_shape!(x8_nr4, tile_1x8_bl32(t), f16_gemv, f32, one, []);
    blocked_gemv_shape!(x8_nr4, tile_1x8(t), f16_gemv, f32, many, [lh = out(reg) _,]);
    blocked_gemv_shape!(x4_nr4, tile_1x4_bl32(t), f16_gemv, f32, one, []);
    blocked_gemv_shape!(x4_nr4, tile_1x4(t), f16_gemv, f32, many, [lh = out(reg) _,]);
    blocked_gemv_shape!(x16_nr8, tile_nr8_1x16_bl32(t), f16_gemv, f32, one, []);
    blocked_gemv_shape!(x16_nr8, tile_nr8_1x16(t), f16_gemv, f32, many, [lh = out(reg) _,]);
    blocked_gemv_shape!(x8_nr8, tile_nr8_1x8_bl32(t), f16_gemv, f32, one, []);
    blocked_gemv_shape!(x8_nr8, tile_nr8_1x8(t), f16_gemv, f32, many, [lh = out(reg) _,]);
    blocked_gemv_shape!(x16_nr4_k8, tile_kr8_1x16_bl32(t), f16_gemv, f32, one, []);
    blocked_gemv_shape!(x16_nr4_k8, tile_kr8_1x16(t), f16_gemv, f32, many, [lh = out(reg) _,]);
    blocked_gemv_shape!(x4_nr4_k8, tile_kr8_1x4_bl32(t), f16_gemv, f32, one, []);
    blocked_gemv_shape!(x4_nr4_k8, tile_kr8_1x4(t), f16_gemv, f32, many, [lh = out(reg) _,]);
    blocked_gemm_shape!(rows8, tile_8x4(t), f16_gemm, f32, [h0 = out(reg) _, h1 = out(reg) _,]);
    blocked_gemm_shape!(rows4, tile_4x4(t), f16_gemm, f32, [h0 = out(reg) _,]);

    asm_catalogue! {
        tier: Dotprod, feature: "FEAT_DotProd", dst: "f32", suffix: "_neon_dotprod";
        PACKING_1X4, "qsi8d32p1x8_qsi4c32p4x8_", [
            /// GEMV over four `nr = 4` RHS tiles at a time (1 x 16 outputs per step).
            DOTPROD_1X16 matmul_1x16_unchecked (1, 16) => blocked_gemv(&FAMILY, 4, [tile_1x16_bl32, tile_1x16], [tile_1x4_bl32, tile_1x4]),
            /// GEMV over two `nr = 4` RHS tiles at a time.
            DOTPROD_1X8 matmul_1x8_unchecked (1, 8) => blocked_gemv(&FAMILY, 2, [tile_1x8_bl32, tile_1x8], [tile_1x4_bl32, tile_1x4]),
            /// GEMV over one `nr = 4` RHS tile at a time.
            DOTPROD_1X4 matmul_1x4_unchecked (1, 4) => blocked_gemv(&FAMILY, 1, [tile_1x4_bl32, tile_1x4], [tile_1x4_bl32, tile_1x4]),
        ];
        PACKING_4X4, "qsi8d32p4x8_qsi4c32p4x8_", [
            /// GEMM, 8 rows (2 LHS tiles) x 4 columns per step.
            DOTPROD_8X4 matmul_8x4_unchecked (8, 4) => blocked_gemm(&FAMILY, 8, &[tile_4x4, tile_8x4]),
            /// GEMM, 4 rows x 4 columns per step.
            DOTPROD_4X4 matmul_4x4_unchecked (4, 4) => blocked_gemm(&FAMILY, 4, &[tile_4x4]),
        ];
        PACKING_1X8, "qsi8d32p1x8_qsi4c32p8x8_", [
            /// GEMV over two `nr = 8` RHS tiles at a time (1 x 16 outputs per step).
            DOTPROD_1X16_NR8 matmul_1x16_nr8_unchecked (1, 16) => blocked_gemv(&FAMILY, 2, [tile_nr8_1x16_bl32, tile_nr8_1x16], [tile_nr8_1x8_bl32, tile_nr8_1x8]),
            /// GEMV over one `nr = 8` RHS tile at a time.
            DOTPROD_1X8_NR8 matmul_1x8_nr8_unchecked (1, 8) => blocked_gemv(&FAMILY, 1, [tile_nr8_1x8_bl32, tile_nr8_1x8], [tile_nr8_1x8_bl32, tile_nr8_1x8]),
        ];
        PACKING_4X8, "qsi8d32p4x8_qsi4c32p8x8_", [
            /// GEMM, 8 rows (2 LHS tiles) x 8 columns per step, as two 8 x 4 column quads.
            DOTPROD_8X8 matmul_8x8_unchecked (8, 8) => blocked_gemm(&FAMILY, 8, &[tile_4x4, tile_8x4]),
            /// GEMM, 4 rows x 8 columns per step.
            DOTPROD_4X8 matmul_4x8_unchecked (4, 8) => blocked_gemm(&FAMILY, 4, &[tile_4x4]),
        ];
        PACKING_1X4_KR8, "qsi8d32p1x4_qsi4c32p4x4_", [
            /// GEMV on the kr 8 packing over four `nr = 4` RHS tiles at a time (1 x 16 per step).
            DOTPROD_1X16_KR8 matmul_1x16_kr8_unchecked (1, 16) => blocked_gemv(&FAMILY, 4, [tile_kr8_1x16_bl32, tile_kr8_1x16], [tile_kr8_1x4_bl32, tile_kr8_1x4]),
            /// GEMV on the kr 8 packing, one `nr = 4` RHS tile at a time.
            DOTPROD_1X4_KR8 matmul_1x4_kr8_unchecked (1, 4) => blocked_gemv(&FAMILY, 1, [tile_kr8_1x4_bl32, tile_kr8_1x4], [tile_kr8_1x4_bl32, tile_kr8_1x4]),
        ];
    }
}
