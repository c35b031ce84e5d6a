//! i8mm tier of `qai8dxp_qsi4cxp`: hand-written `SMMLA` kernels (FEAT_I8MM) on the packings
//! [`PACKING_4X8`](super::PACKING_4X8) and [`PACKING_4X4`](super::PACKING_4X4)
//! (`mr = 4`, `kr = 16`, `sr = 2`, so `bd = 8`).
//!
//! `SMMLA Vd.4S, Vn.16B, Vm.16B` adds a 2x8 by 8x2 int8 product to a 2x2 int32 block
//! `[r0c0, r0c1, r1c0, r1c1]`. Per 32-depth group and tile:
//!
//! * LHS (4 rows, 128 bytes): chunk `c` (depths `8c..8c+8`) is 32 bytes, rows 0-1 then rows
//!   2-3: one `LDP` gives the two `Vn` operands.
//! * RHS (`nr` columns, `16 * nr` bytes): bytes 0-7 of every column come first, then bytes
//!   8-15; one q register holds 2 columns x 8 bytes. Bytes 0-7 hold depths 0-7 (low nibbles)
//!   and 16-23 (high), bytes 8-15 hold depths 8-15 and 24-31. `SHL #4` turns a raw register into
//!   `16 * w` of the low depths, `AND 0xF0` into `16 * w` of the high ones.
//!
//! The unpack runs on the same SIMD pipes as `SMMLA`, and each unpacked register feeds one
//! `SMMLA` per row pair of the tile, so tall tiles win: a tile of `4R` rows spends `4R/2`
//! `SMMLA` per unpack. The tile kernels (one `asm!` block each: the K loop and the epilogue):
//!
//! | RHS layout | columns | row tiles `R` | accumulators |
//! | --- | --- | --- | --- |
//! | `nr = 8`, whole tile | 8 | 1, 2 | `v0..v8R` |
//! | `nr = 8`, half tile (columns 0-3 or 4-7) | 4 | 3 ..= 6 | `v0..v4R` |
//! | `nr = 4` | 4 | 1 ..= 6 | `v0..v4R` (`R <= 2`: and a second set for the high nibbles) |
//!
//! Up to 2 LHS tiles the 8-column tile is the better one (same unpack work, half the LHS
//! loads); from 3 on, 4-column tiles leave room for up to 24 rows. Small 4-column tiles have too
//! few accumulators to hide the `SMMLA` latency, so they accumulate the high-nibble depths into a
//! second set and add the two after the K loop. The tile skeleton and register allocations
//! (`per_channel_kernels!`, with the other per-channel families), the 32-depth group
//! (`k_group!`), the epilogue pieces and the tile driver are shared (`matmul::arch::i8mm`).
//!
//! A catalogue kernel with `m_step = 4 * T` runs the `R = T` tile kernel and, for the last rows,
//! the tile kernel of the row tiles that remain (never a tile past `ceil(m / 4)`). Partial tiles
//! are computed whole into a stack scratch tile and copied.

use super::Descriptor;

/// The i8mm kernels of the `qai8dxp x qsi4cxp` arithmetic with outputs of type `$dst`
/// (`"f32"`, `"f16"`, `"bf16"`), on the tile kernels of [`tiles`]`::$out`: every family of this arithmetic
/// (`qai8dxp_qsi4cxp`, `f16_qai8dxp_qsi4cxp`, `bf16_qai8dxp_qsi4cxp`) declares its i8mm tier with this one table (`$feature`: what the
/// kernels need, for their docs; `also: Bf16`: they also need FEAT_BF16).
macro_rules! qsi4cxp_i8mm_kernels {
    ($dst:literal, $out:ident, $feature:literal $(, also: $extra:ident)?) => {
        tier_module!(I8mm, I8MM_24X8, I8MM_8X8, I8MM_4X8, I8MM_24X4, I8MM_16X4, I8MM_8X4, I8MM_4X4);

        #[cfg(target_arch = "aarch64")]
        mod aarch64 {
            use super::super as fam;
            use super::super::Descriptor;
            use crate::matmul::qai8dxp_qsi4cxp::i8mm::tiles::$out::run;
            use crate::matmul::{Tier, UncheckedArgs};

            asm_catalogue! {
                tier: I8mm, feature: $feature, dst: $dst, suffix: "_neon_i8mm" $(, also: $extra)?;
                PACKING_4X8, "qai8dxp4x8_qsi4cxp8x8_", [
                    I8MM_24X8 matmul_24x8_unchecked (24, 8) => run(6),
                    I8MM_8X8 matmul_8x8_unchecked (8, 8) => run(2),
                    I8MM_4X8 matmul_4x8_unchecked (4, 8) => run(1),
                ];
                PACKING_4X4, "qai8dxp4x8_qsi4cxp4x8_", [
                    I8MM_24X4 matmul_24x4_unchecked (24, 4) => run(6),
                    I8MM_16X4 matmul_16x4_unchecked (16, 4) => run(4),
                    I8MM_8X4 matmul_8x4_unchecked (8, 4) => run(2),
                    I8MM_4X4 matmul_4x4_unchecked (4, 4) => run(1),
                ];
            }
        }
    };
}
pub(crate) use qsi4cxp_i8mm_kernels;

qsi4cxp_i8mm_kernels!("f32", f32_out, "FEAT_I8MM");

/// The tile kernels of the i8mm tier and their `run`, one module per output type.
#[cfg(target_arch = "aarch64")]
pub(crate) mod tiles {
    use crate::matmul::arch::asm::{MAX_TILES, TileKernel, gemm};
    use crate::matmul::qai8dxp_qsi4cxp as fam;
    use crate::matmul::{Packing, TileStrides, UncheckedArgs};

    /// One 32-depth group ([`k_group!`]) of the tile kernels on the RHS layout `nr4` (`nr = 4`: a
    /// group is 64 bytes, bytes 8-15 of the columns start 32 bytes in), `nr8h` (4 of the 8
    /// columns of `nr = 8`, the pointer at the half: a group is 128 bytes, bytes 8-15 start 64
    /// bytes in) or `nr8` (all 8 columns); `lo`, `hi` as there. Uses v24 (mask), v25-v28 (4
    /// columns) or v16-v23 (8 columns), v29/v30 (LHS).
    #[rustfmt::skip]
    macro_rules! group {
        (nr4; $lo:tt, $hi:tt) => {
            group!(@4, "ldp q25, q26, [{b}], #64", "ldp q25, q26, [{b}, #-32]", $lo, $hi)
        };
        (nr8h; $lo:tt, $hi:tt) => {
            group!(@4, "ldp q25, q26, [{b}], #128", "ldp q25, q26, [{b}, #-64]", $lo, $hi)
        };
        (@4, $rhs_lo:literal, $rhs_hi:literal, $lo:tt, $hi:tt) => {
            k_group!(
                mma = lr, rhs_lo = [$rhs_lo], rhs_hi = [$rhs_hi],
                raw = ["v25", "v26"], unp = ["v27", "v28"],
                lhs = ["], #128", ", #-64]", ", #-96]", ", #-32]"], lo = $lo, hi = $hi,
            )
        };
        (nr8; $lo:tt, $hi:tt) => {
            k_group!(
                mma = lr,
                rhs_lo = ["ldp q16, q17, [{b}], #128", "ldp q18, q19, [{b}, #-96]"],
                rhs_hi = ["ldp q16, q17, [{b}, #-64]", "ldp q18, q19, [{b}, #-32]"],
                raw = ["v16", "v17", "v18", "v19"], unp = ["v20", "v21", "v22", "v23"],
                lhs = ["], #128", ", #-64]", ", #-96]", ", #-32]"], lo = $lo, hi = $hi,
            )
        };
    }

    /// The tile kernels of the RHS layout `$layout` (see `group`) and `$cols` columns, with
    /// outputs of kind `$out`: `[name: shape, ...]` as in [`per_channel_kernels!`].
    macro_rules! kernels {
        ($out:ident, $layout:ident, $cols:tt, $kernels:tt) => {
            per_channel_kernels! {
                out = $out, args = t, cols = $cols, clobbers = used,
                fam = {
                    // 0xF0 in every byte: `AND` keeps 16 * the high nibble.
                    init: "movi v24.16b, #0xf0",
                    group: group($layout), row_math: per_channel_row_math, operands: [],
                },
                kernels = $kernels,
            }
        };
    }

    /// The tile kernels, their table and `run`, with outputs of kind `$out`.
    macro_rules! define_tiles {
        ($out:ident) => {
            // Up to 2 LHS tiles on `nr = 4`: a second accumulator set for the high nibbles, so that
            // no accumulator waits on itself more than twice per group.
            kernels!($out, nr4, 4, [
                nr4_r1: r1_split, nr4_r2: r2_split, nr4_r3: r3, nr4_r4: r4, nr4_r5: r5, nr4_r6: r6,
            ]);

            // `nr = 8`, 4 of the 8 columns: only for 3+ LHS tiles: below, whole 8-column tiles
            // need the same unpack work and half the LHS loads.
            kernels!($out, nr8h, 4, [nr8h_r3: r3, nr8h_r4: r4, nr8h_r5: r5, nr8h_r6: r6]);

            kernels!($out, nr8, 8, [nr8_r1: r1, nr8_r2: r2]);

            /// Tile kernels on `nr = 4`, by LHS tile count.
            pub(crate) const NR4: [TileKernel; MAX_TILES] = [(nr4_r1, 4), (nr4_r2, 4), (nr4_r3, 4), (nr4_r4, 4), (nr4_r5, 4), (nr4_r6, 4)];

            /// Tile kernels on `nr = 8`, by LHS tile count: whole 8-column tiles up to 2 LHS tiles, half
            /// tiles (4 columns) from 3 on, where the unpack is shared by enough rows.
            pub(crate) const NR8: [TileKernel; MAX_TILES] =
                [(nr8_r1, 8), (nr8_r2, 8), (nr8h_r3, 4), (nr8h_r4, 4), (nr8h_r5, 4), (nr8h_r6, 4)];

            /// Runs the rectangle `args` in steps of `tiles` LHS tiles (`1..=6`).
            ///
            /// # Safety
            ///
            /// The CPU has FEAT_I8MM and `args` satisfies
            /// [`Kernel::run_unchecked`](crate::Kernel::run_unchecked) for `packing` (`mr = 4`,
            /// `nr = 4` or `8`, `kr = 16`, `sr = 2`), `strides` its tile strides.
            #[inline(always)]
            pub(crate) unsafe fn run(
                args: &UncheckedArgs<$crate::matmul::arch::asm::out_type!($out)>,
                strides: &TileStrides,
                packing: &Packing,
                tiles: usize,
            ) {
                let layout = fam::asm_layout(args, strides, packing);
                let table = if packing.nr == 4 { &NR4 } else { &NR8 };
                // SAFETY: forwarded from the caller; the layout is the family's for this `k` and
                // packing, which the table's kernels read; their column counts (8 or 4) divide `nr`.
                unsafe { gemm(args, &layout, &table[..tiles]) }
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

    /// bf16 outputs (`BFCVTN`, FEAT_BF16).
    pub(crate) mod bf16_out {
        use super::*;
        define_tiles!(bf16cvt);
    }
}
