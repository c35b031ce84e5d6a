//! i8mm tier of `qsi8d32p_qsi4c32p`: hand-written `SMMLA` kernels (FEAT_I8MM) on the packings
//! [`PACKING_4X4`](super::PACKING_4X4) (KleidiAI's) and [`PACKING_4X8`](super::PACKING_4X8)
//! (`mr = 4`, `kr = 16`, `sr = 2`, so `bd = 8`).
//!
//! A block of `bl` depths is `bl / 32` groups: group `g` takes RHS bytes `16g .. 16g + 16` of
//! each column, whose low nibbles pair with LHS depths `16g ..` and high nibbles with
//! `bl/2 + 16g ..` (the LHS chunks `2 * bl` bytes further: the operand `{h}`). Per block and LHS
//! tile: `SMMLA` into int32 sums v16-v19 (reset by loads from a zero buffer), `SCVTF #4` (the
//! sums are `16 * S`, exact), the scale products `s = rhs scale * lhs scale` (f16 widened by
//! `FCVTL`, `FMUL`: exact) and one `FMLA` per sum into the float accumulators. The `SMMLA` takes
//! the RHS as first operand (lanes `[c0r0, c0r1, c1r0, c1r1]`), so that the row scales a sum
//! needs, `(r0, r1, r0, r1)`, come from one `DUP` of two f16 from a general register (no SIMD
//! pipe; one `LDP` loads both pairs of a tile); the column scales `(c0, c0, c1, c1)` are built once per block and shared by the LHS
//! tiles. After the last block: clamp (docs/formats.md, §Arithmetic: qsi8d32p_qsi4c32p kernels).
//!
//! The tile kernels (`block_kernels!` in `matmul::arch::i8mm`) take up to 4 LHS tiles
//! (16 rows) x 4 columns. With `bl = 32` the RHS group is unpacked once per block and shared by
//! the 4 LHS tiles; other block lengths reload and unpack it per tile. On `nr = 8` a call covers
//! 4 of the 8 columns.

use super::Descriptor;

tier_module!(I8mm, I8MM_16X4, I8MM_8X4, I8MM_4X4, I8MM_16X8, I8MM_8X8, I8MM_4X8);

#[cfg(target_arch = "aarch64")]
mod aarch64 {
    use super::super as fam;
    use super::Descriptor;
    use crate::matmul::{Tier, UncheckedArgs};

    /// The block's 4 f16 column scales (at `{s}`, which moves to the next block) as the f32
    /// vectors `(c0, c0, c1, c1)` in v28 and `(c2, c2, c3, c3)` in v31.
    #[rustfmt::skip]
    macro_rules! f16_scales {
        () => {
            concat!(
                "ld1 {{v28.4h}}, [{s}], {ss}\n",
                "fcvtl v28.4s, v28.4h\n",
                "zip2 v31.4s, v28.4s, v28.4s\n",
                "zip1 v28.4s, v28.4s, v28.4s\n",
            )
        };
    }

    /// Before each group of an LHS tile: `{h}` = its high-nibble depths.
    #[rustfmt::skip]
    macro_rules! hi_chunks {
        ($a:ident) => {
            concat!("add {h}, {", stringify!($a), "}, {ho}\n")
        };
    }

    /// After the block of an LHS tile: its 4 f16 row scales (8 bytes before the block's data),
    /// rows 0 and 1 into `{sx}` and rows 2 and 3 into `{sy}`, and the tile pointer to the next
    /// block's data.
    #[rustfmt::skip]
    macro_rules! next_block {
        ($a:ident) => {
            concat!(
                "sub {h}, {", stringify!($a), "}, {ho}\n",
                "ldp {sx:w}, {sy:w}, [{h}, #-8]\n",
                "add {", stringify!($a), "}, {", stringify!($a), "}, {lskip}\n",
            )
        };
    }

    /// Folds the block sums v16-v19 of one LHS tile into its float accumulators:
    /// `acc = FMLA(acc, float(S), rhs scale * lhs scale)`, with the row scales
    /// `(r0, r1, r0, r1)` and `(r2, r3, r2, r3)` by `DUP` from `{sx}` / `{sy}` and `FCVTL` into
    /// v29, and each product in v30 or v29.
    #[rustfmt::skip]
    macro_rules! fold_block {
        ($f00:tt, $f01:tt, $f10:tt, $f11:tt) => {
            concat!(
                // rows 0, 1
                "dup v29.2s, {sx:w}\n",
                "fcvtl v29.4s, v29.4h\n",
                $crate::matmul::arch::i8mm::scvtf_sums!(),
                "fmul v30.4s, v29.4s, v28.4s\n",
                "fmla ", $f00, ".4s, v16.4s, v30.4s\n",
                "fmul v29.4s, v29.4s, v31.4s\n",
                "fmla ", $f01, ".4s, v17.4s, v29.4s\n",
                // rows 2, 3
                "dup v29.2s, {sy:w}\n",
                "fcvtl v29.4s, v29.4h\n",
                "fmul v30.4s, v29.4s, v28.4s\n",
                "fmla ", $f10, ".4s, v18.4s, v30.4s\n",
                "fmul v29.4s, v29.4s, v31.4s\n",
                "fmla ", $f11, ".4s, v19.4s, v29.4s\n",
            )
        };
    }

    /// Output of one row and 4 columns in `$v`: the clamp.
    macro_rules! row_math {
        ($v:tt, $lane:tt, $cst:tt, $tmp:tt) => {
            $crate::matmul::arch::i8mm::clamp!($v)
        };
    }

    block_kernels! {
        out = f32,
        hi = h,
        args = t,
        fam = {
            mma: rl,
            scales: f16_scales!(),
            // Low nibbles: chunks 0 (pointer to the next group) and 1 of `{a}`; high nibbles:
            // chunks 0 and 1 of `{h}`.
            lhs: ["], #64", "]", ", #-32]", ", #32]"],
            group_pre: hi_chunks,
            tile_end: next_block,
            block_math: fold_block,
            col_consts: "",
            tile_consts: no_text,
            row_math: row_math,
            cst: (),
            operands: [
                h = out(reg) _,
                ho = in(reg) t.lhs_hi,
                lskip = in(reg) t.lhs_skip,
                sx = out(reg) _,
                sy = out(reg) _,
            ],
        },
    }

    block_catalogue! {
        run;
        dst: "f32",
        feature: "FEAT_I8MM",
        nr4: "qsi8d32p4x8_qsi4c32p4x8_",
        nr8: "qsi8d32p4x8_qsi4c32p8x8_",
    }
}
