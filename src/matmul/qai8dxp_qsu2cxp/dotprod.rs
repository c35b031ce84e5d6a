//! dotprod tier of `qai8dxp_qsu2cxp`: hand-written `asm!` kernels built on `SDOT`
//! (FEAT_DotProd).
//!
//! Unpack: the 16 code bytes of a 16-depth group hold 4 columns x 4 bytes, and bits `2s, 2s + 1`
//! of byte `4i + d` are the code of column `i`, depth `4s + d`. `AND #0x0F` keeps the codes of
//! chunks 0 and 1 (depths 0-3, 4-7) as a 4-bit index `u0 + 4 u1`, `USHR #4` those of chunks 2
//! and 3. Two `TBL` tables built from the call's look-up table once per call (the asm
//! driver's `Layout::with_lut`: `lo[i] = lut[i & 3]`, `hi[i] = lut[i >> 2]`, int8) then give
//! each chunk's weights in one `TBL`: 6 instructions
//! unpack 64 weights into 4 registers of 4 columns x 4 depths, the form `SDOT` by element takes.
//!
//! * GEMV (`mr = 1`, [`PACKING_1X4`](super::PACKING_1X4)): the plain LHS row (v0: depths 0-15,
//!   v1: 16-31 of a 32-deep group); `SDOT` by element multiplies chunk `s` by LHS depths
//!   `4s..4s+4`. `1x4` takes one RHS tile, qgemm's own `1x16` four tiles per LHS load.
//! * GEMM (`mr = 4`, [`PACKING_4X4`](super::PACKING_4X4); up to 4 LHS tiles = 16 rows x the 4
//!   columns of an RHS tile): an LHS chunk register is 4 rows x 4 depths as stored, so each
//!   unpacked RHS register feeds 4 `SDOT`s by element per LHS tile (16 for 16 rows).
//!
//! Epilogue (docs/formats.md, §Arithmetic: qai8dxp_qsu2cxp kernels; the shared per-channel
//! macros of `matmul::arch::dotprod`): `MLA` of `rsum * offset`, `SCVTF`, then the packing's
//! scaling order, KleidiAI's: GEMV `f * (scale * dq)`, GEMM `(f * scale) * dq`; `FADD` of the
//! bias, `FMAX`/`FMIN` clamp. Bit-identical to the scalar tier.

use super::Descriptor;

tier_module!(Dotprod, DOTPROD_1X16, DOTPROD_1X4, DOTPROD_16X4);

#[cfg(target_arch = "aarch64")]
mod aarch64 {
    use super::super as fam;
    use super::super::Descriptor;
    use super::tiles::f32_out::*;
    use crate::matmul::arch::dotprod::{per_channel_gemm, per_channel_gemv};
    use crate::matmul::qai8dxp_qsu2cxp::asm_layout;
    use crate::matmul::{Tier, UncheckedArgs};

    asm_catalogue! {
        tier: Dotprod, feature: "FEAT_DotProd", dst: "f32", suffix: "_neon_dotprod";
        PACKING_1X4, "qai8dxp1x4_qsu2cxp4x4bf32sf32_", [
            /// GEMV over 4 RHS tiles at a time (1 x 16 outputs per step).
            DOTPROD_1X16 matmul_1x16_unchecked (1, 16) => per_channel_gemv(asm_layout, 4, tile_1x16, tile_1x4),
            /// GEMV over one RHS tile at a time.
            DOTPROD_1X4 matmul_1x4_unchecked (1, 4) => per_channel_gemv(asm_layout, 1, tile_1x4, tile_1x4),
        ];
        PACKING_4X4, "qai8dxp4x4_qsu2cxp4x4bf32sf32_", [
            /// GEMM, 16 rows (4 LHS tiles) x 4 columns per step.
            DOTPROD_16X4 matmul_16x4_unchecked (16, 4) => per_channel_gemm(asm_layout, 16, &GEMM_TILES),
        ];
    }
}

/// The tile functions of the dotprod tier.
#[cfg(target_arch = "aarch64")]
mod tiles {
    use crate::matmul::arch::dotprod::{Tile, TileFn};

    /// The `TBL` tables (`{tab}`: `lo` into v`$lo`, `hi` into v`$hi`) and the 0x0F mask
    /// (v`$m`), once per tile before the K loop.
    #[rustfmt::skip]
    macro_rules! tables {
        ($lo:literal, $hi:literal, $m:literal) => {
            concat!(
                "ldp q", $lo, ", q", $hi, ", [{tab}]\n",
                "movi v", $m, ".16b, #0x0f\n",
            )
        };
    }

    /// Unpack of 16 code bytes v`$x` (4 columns x 16 depths) into the weights of chunks 0-3
    /// (v`$w0`..v`$w3`, 4 columns x 4 depths each), with the tables v`$lo`/v`$hi`, the mask
    /// v`$m` and the temporary v`$t`; v`$x` ends up overwritten. `$w3` may be `$t` or `$x`.
    #[rustfmt::skip]
    macro_rules! unpack2 {
        ($x:literal, $t:literal, [$w0:literal, $w1:literal, $w2:literal, $w3:literal],
         $lo:literal, $hi:literal, $m:literal) => {
            concat!(
                // codes of chunks 0, 1 (index u0 + 4 u1) and of chunks 2, 3
                "and v", $t, ".16b, v", $x, ".16b, v", $m, ".16b\n",
                "ushr v", $x, ".16b, v", $x, ".16b, #4\n",
                // look-up: weights of chunks 0-3
                "tbl v", $w0, ".16b, {{v", $lo, ".16b}}, v", $t, ".16b\n",
                "tbl v", $w1, ".16b, {{v", $hi, ".16b}}, v", $t, ".16b\n",
                "tbl v", $w2, ".16b, {{v", $lo, ".16b}}, v", $x, ".16b\n",
                "tbl v", $w3, ".16b, {{v", $hi, ".16b}}, v", $x, ".16b\n",
            )
        };
    }

    // -----------------------------------------------------------------------------------------
    // GEMV (mr = 1). Registers: v0/v1 LHS depths 0-15 / 16-31 of the group; per RHS tile v`x0`,
    // v`x1` its codes of depths 0-15 / 16-31, v`t` and v`w0`-v`w3` the unpack; accumulators
    // v20-v27 (two per RHS tile: even / odd chunks); tables v28/v29, mask v30. The shared
    // per-channel epilogue (`gemv_epilogue!`) then uses v1-v9.
    // -----------------------------------------------------------------------------------------

    /// One 32-deep group of one RHS tile (operand `$r`, 32 code bytes a group), LHS in v0/v1:
    /// load, unpack, 8 `SDOT`s by element; chunks 0, 2 into v`$a`, 1, 3 into v`$b`.
    #[rustfmt::skip]
    macro_rules! group2 {
        ($r:ident, [$x0:literal, $x1:literal, $t:literal, $w0:literal, $w1:literal, $w2:literal, $w3:literal],
         $a:literal, $b:literal) => {
            concat!(
                "ldp q", $x0, ", q", $x1, ", [{", stringify!($r), "}], #32\n",
                unpack2!($x0, $t, [$w0, $w1, $w2, $w3], "28", "29", "30"),
                "sdot v", $a, ".4s, v", $w0, ".16b, v0.4b[0]\n",
                "sdot v", $b, ".4s, v", $w1, ".16b, v0.4b[1]\n",
                "sdot v", $a, ".4s, v", $w2, ".16b, v0.4b[2]\n",
                "sdot v", $b, ".4s, v", $w3, ".16b, v0.4b[3]\n",
                unpack2!($x1, $t, [$w0, $w1, $w2, $w3], "28", "29", "30"),
                "sdot v", $a, ".4s, v", $w0, ".16b, v1.4b[0]\n",
                "sdot v", $b, ".4s, v", $w1, ".16b, v1.4b[1]\n",
                "sdot v", $a, ".4s, v", $w2, ".16b, v1.4b[2]\n",
                "sdot v", $b, ".4s, v", $w3, ".16b, v1.4b[3]\n",
            )
        };
    }

    /// The group's 32 LHS depths as stored, in v0 (depths 0-15) and v1 (16-31).
    macro_rules! lhs32 {
        () => {
            "ldp q0, q1, [{lhs}], #32\n"
        };
    }

    // -----------------------------------------------------------------------------------------
    // GEMM (mr = 4): up to 4 LHS tiles x the 4 columns of one RHS tile. Registers: v0 the codes
    // of 16 depths, v12 the low-nibble index, then chunk 3; v1-v3 chunks 0-2; LHS tile t in
    // v(4+2t), v(5+2t) (two chunks of 4 rows x 4 depths); accumulators v16-v31 (one per row);
    // tables v13/v14, mask v15. The epilogue (`gemm_epilogue!`) then uses v0-v3, v12-v15.
    // -----------------------------------------------------------------------------------------

    /// 16 depths of every LHS tile: the RHS codes into v0 and their unpack into v1, v2, v3,
    /// v12; per LHS tile its chunks 0-1, then 2-3, each pair followed by its 8 `SDOT`s.
    #[rustfmt::skip]
    macro_rules! gemm_step {
        ($([$l:ident, $x01:literal, $x23:literal, $acc:tt]),+) => {
            concat!(
                "ldr q0, [{rhs}], #16\n",
                unpack2!("0", "12", ["1", "2", "3", "12"], "13", "14", "15"),
                $(
                    "ldp q", $x01, ", q", $x23, ", [{", stringify!($l), "}], #32\n",
                    sdot_rows!("1", $x01, $acc),
                    sdot_rows!("2", $x23, $acc),
                )+
                $(
                    "ldp q", $x01, ", q", $x23, ", [{", stringify!($l), "}], #32\n",
                    sdot_rows!("3", $x01, $acc),
                    sdot_rows!("12", $x23, $acc),
                )+
            )
        };
    }

    /// The family hook of the GEMM tiles ([`per_channel_gemm_tiles!`]): the tables and mask
    /// (`init`, from the 32 bytes at `{tab}`), and the K loop: a 32-deep group is 2 steps of
    /// 16 depths, nothing read ahead.
    #[rustfmt::skip]
    macro_rules! gemm_hook {
        (init) => {
            tables!("13", "14", "15")
        };
        (k_loop(); $([$l:ident, $x01:literal, $x23:literal, $acc:tt, $hi:tt]),+) => {
            gemm_loop!(
                gemm_step!($([$l, $x01, $x23, $acc]),+),
                gemm_step!($([$l, $x01, $x23, $acc]),+),
            )
        };
    }

    /// f32 outputs (the family's only output type).
    pub(crate) mod f32_out {
        use super::*;

        per_channel_gemv_tiles! { t, f32, init: tables!("28", "29", "30"), ops: [tab = t.consts],
            x4_cols: tile_1x4 = concat!(
                lhs32!(),
                group2!(rhs, ["2", "3", "8", "4", "5", "6", "7"], "20", "21"),
            ),
            x16_cols: tile_1x16 = concat!(
                lhs32!(),
                group2!(r0, ["2", "3", "8", "4", "5", "6", "7"], "20", "21"),
                group2!(r1, ["9", "10", "15", "11", "12", "13", "14"], "22", "23"),
                group2!(r2, ["2", "3", "8", "4", "5", "6", "7"], "24", "25"),
                group2!(r3, ["9", "10", "15", "11", "12", "13", "14"], "26", "27"),
            ),
        }

        // The GEMM tiles, scaled `(f * scale) * dq` (KleidiAI's GEMM order).
        per_channel_gemm_tiles! { t, gemm_hook, f32, ops: [tab = in(reg) t.consts],
            order: then_dq,
            rows4: [tile_4x4()],
            rows8: [tile_8x4()],
            rows12: [tile_12x4()],
            rows16: [tile_16x4()],
        }

        /// The GEMM tiles for 1, 2, 3 and 4 LHS tiles.
        pub(crate) const GEMM_TILES: [TileFn; 4] = [tile_4x4, tile_8x4, tile_12x4, tile_16x4];
    }
}
