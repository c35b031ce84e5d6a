//! i8mm tier of `qai8dxp_qsi4c32p`: hand-written `SMMLA` kernels (FEAT_I8MM) on the packings
//! [`PACKING_4X8`](super::PACKING_4X8) and [`PACKING_4X4`](super::PACKING_4X4)
//! (`mr = 4`, `kr = 16`, `sr = 2`, so `bd = 8`).
//!
//! Inside each 32-depth group the data are those of `qsi4cxp` (byte `q` holds depths
//! `32 * (q / 16) + q % 16` and 16 later), so the group is the per-channel family's; what
//! differs is the block loop. Per block of `bl` depths and LHS tile: `SMMLA` into int32 sums
//! v16-v19 (reset by loads from a zero buffer), `SCVTF #4` (the sums are `16 * S`, exact), then
//! one `FMLA` per sum into the float accumulators with the bf16 column scales. The scales are
//! widened to f32 and duplicated into the `SMMLA` lane order `(c0, c1, c0, c1)` on the integer
//! pipes and moved in with `DUP` (general register), so the block costs the SIMD pipes only the
//! `SMMLA`, the unpack, `SCVTF` and `FMLA`. After the last block: `FMLA` with
//! `rsum * float(offset)` (by element), `FMUL` by `dq`, `FADD` bias, clamp (docs/formats.md, §Arithmetic: qai8dxp_qsi4c32p kernels).
//!
//! The tile kernels (`block_kernels!` in `matmul::arch::i8mm`) take up to 4 LHS tiles
//! (16 rows) x 4 columns: 16 float accumulators, 4 int32 sums, 8 unpacked RHS registers. With
//! `bl = 32` the RHS group is unpacked once per block and shared by the 4 LHS tiles; other block
//! lengths reload and unpack it per tile. On `nr = 8` a call covers 4 of the 8 columns.

use super::Descriptor;

/// The i8mm kernels of the `qai8dxp x qsi4c32p` arithmetic with outputs of type `$dst`
/// (`"f32"`, `"bf16"`), on the tile kernels of [`tiles`]`::$out`: every family of this arithmetic
/// (`qai8dxp_qsi4c32p`, `bf16_qai8dxp_qsi4c32p`) declares its i8mm tier with this one table
/// (`$feature`: what the kernels need, for their docs; `also: Bf16`: they also need FEAT_BF16).
macro_rules! qsi4c32p_i8mm_kernels {
    ($dst:literal, $out:ident, $feature:literal $(, also: $extra:ident)?) => {
        tier_module!(I8mm, I8MM_16X8, I8MM_8X8, I8MM_4X8, I8MM_16X4, I8MM_8X4, I8MM_4X4);

        #[cfg(target_arch = "aarch64")]
        mod aarch64 {
            use super::super as fam;
            use super::super::Descriptor;
            use crate::matmul::qai8dxp_qsi4c32p::i8mm::tiles::$out::run;
            use crate::matmul::{Tier, UncheckedArgs};

            block_catalogue! {
                run;
                dst: $dst,
                feature: $feature,
                $(also: $extra,)?
                nr4: "qai8dxp4x8_qsi4c32p4x8_",
                nr8: "qai8dxp4x8_qsi4c32p8x8_",
            }
        }
    };
}
pub(crate) use qsi4c32p_i8mm_kernels;

qsi4c32p_i8mm_kernels!("f32", f32_out, "FEAT_I8MM");

/// The tile kernels of the i8mm tier, one module per output type (`f32_out`; `bf16_out`, whose
/// stores convert with `BFCVTN`).
#[cfg(target_arch = "aarch64")]
pub(crate) mod tiles {
    use crate::matmul::UncheckedArgs;
    use crate::matmul::qai8dxp_qsi4c32p as fam;

    /// The block's 4 bf16 column scales (at `{s}`, which moves to the next block) as the f32
    /// vectors `(c0, c1, c0, c1)` in v28 and `(c2, c3, c2, c3)` in v31, built in `{sx}`,
    /// `{sy}`, `{sz}` (a bf16 is the top half of its f32).
    #[rustfmt::skip]
    macro_rules! bf16_scales {
        () => {
            concat!(
                "ldr {sx}, [{s}]\n",
                "add {s}, {s}, {ss}\n",
                // c0 << 16 | c1 << 48.
                "ubfiz {sy}, {sx}, #16, #16\n",
                "lsl {sz}, {sx}, #32\n",
                "and {sz}, {sz}, #0xffff000000000000\n",
                "orr {sy}, {sy}, {sz}\n",
                "dup v28.2d, {sy}\n",
                // c2 << 16 | c3 << 48.
                "lsr {sy}, {sx}, #16\n",
                "and {sy}, {sy}, #0xffff0000\n",
                "and {sz}, {sx}, #0xffff000000000000\n",
                "orr {sy}, {sy}, {sz}\n",
                "dup v31.2d, {sy}\n",
            )
        };
    }

    /// Folds the block sums v16-v19 of one LHS tile into its float accumulators:
    /// `acc = FMLA(acc, float(S), bf16 scale)`.
    #[rustfmt::skip]
    macro_rules! fold_block {
        ($f00:tt, $f01:tt, $f10:tt, $f11:tt) => {
            concat!(
                $crate::matmul::arch::i8mm::scvtf_sums!(),
                "fmla ", $f00, ".4s, v16.4s, v28.4s\n",
                "fmla ", $f01, ".4s, v17.4s, v31.4s\n",
                "fmla ", $f10, ".4s, v18.4s, v28.4s\n",
                "fmla ", $f11, ".4s, v19.4s, v31.4s\n",
            )
        };
    }

    /// Per-row loads of one LHS tile for [`row_math!`]: `float(offset)` (v28) and dq (v29).
    #[rustfmt::skip]
    macro_rules! lhs_consts {
        ($a:ident) => {
            concat!(
                "ld1 {{v28.4s, v29.4s}}, [{", stringify!($a), "}]\n",
                "scvtf v28.4s, v28.4s\n",
            )
        };
    }

    /// Output of one row and 4 columns in `$v` (lane `$lane` of the tile):
    /// `FMLA(acc, rsum, float(offset))`, `FMUL` by dq, `FADD` bias, clamp.
    #[rustfmt::skip]
    macro_rules! row_math {
        ($v:tt, $lane:tt, ($rsum:tt, $bias:tt), $tmp:tt) => {
            concat!(
                "fmla ", $v, ".4s, ", $rsum, ".4s, v28.s[", $lane, "]\n",
                "fmul ", $v, ".4s, ", $v, ".4s, v29.s[", $lane, "]\n",
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
                args = t,
                fam = {
                    mma: lr,
                    scales: bf16_scales!(),
                    // Chunks 0 (pointer to the next group), 2, 1, 3 of the group.
                    lhs: ["], #128", ", #-64]", ", #-96]", ", #-32]"],
                    group_pre: no_text,
                    tile_end: no_text,
                    block_math: fold_block,
                    col_consts: concat!("ld1 {{v16.4s}}, [{e}], {es}\n", "ld1 {{v17.4s}}, [{e}]\n"),
                    tile_consts: lhs_consts,
                    row_math: row_math,
                    cst: ("v16", "v17"),
                    operands: [
                        e = inout(reg) t.extras => _,
                        es = in(reg) t.extras_step,
                        sx = out(reg) _,
                        sy = out(reg) _,
                        sz = out(reg) _,
                    ],
                },
            }
        };
    }

    /// f32 outputs.
    pub(crate) mod f32_out {
        use super::*;
        define_tiles!(f32);
    }

    /// bf16 outputs (`BFCVTN`, FEAT_BF16).
    pub(crate) mod bf16_out {
        use super::*;
        define_tiles!(bf16cvt);
    }
}
