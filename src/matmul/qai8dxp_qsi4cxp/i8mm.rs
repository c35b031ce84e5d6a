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
//! second set and add the two after the K loop. The 32-depth group (`k_group!`), the epilogue
//! pieces, the tile driver and the catalogue macro are shared with the per-block families
//! (`matmul::arch::i8mm`).
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

    /// Defines one tile kernel: `4R` rows (one entry of `tiles` per LHS tile) x 4 or 8 columns.
    ///
    /// * `rhs_lo`, `rhs_hi`, `raw`, `unp`: see [`k_group!`].
    /// * `consts`: loads of the RHS column constants (rsum, scale16, bias) from `{e}`, `{es}` bytes
    ///   apart; `cst`: per 4 columns, the `(rsum, scale16, bias)` registers; `row0`: per 4 columns,
    ///   the register receiving row 0 of a pair (consecutive registers).
    /// * `work`: every register besides the accumulators (declared clobbered).
    /// * `tiles`: per LHS tile, `(pointer operand, index in Tile::lhs, [accumulators of rows
    ///   0-1], [of rows 2-3])`, one accumulator per column pair.
    /// * optional `hi` (same shape without the index) and `merge = [(acc, hi acc), ...]`: a second
    ///   accumulator set for the high-nibble depths, added into the first after the K loop.
    macro_rules! tile_kernel {
        (
            $out:ident;
            $(#[$meta:meta])*
            fn $name:ident;
            rhs_lo = $rhs_lo:tt, rhs_hi = $rhs_hi:tt, raw = $raw:tt, unp = $unp:tt,
            consts = $consts:tt, cst = $cst:tt, row0 = $row0:tt, work = $work:tt,
            tiles = [$(($a:ident, $i:tt, [$($acc01:tt),+], [$($acc23:tt),+])),+ $(,)?] $(,)?
        ) => {
            tile_kernel! {
                $out;
                $(#[$meta])*
                fn $name;
                rhs_lo = $rhs_lo, rhs_hi = $rhs_hi, raw = $raw, unp = $unp,
                consts = $consts, cst = $cst, row0 = $row0, work = $work,
                tiles = [$(($a, $i, [$($acc01),+], [$($acc23),+])),+],
                hi = [$(($a, [$($acc01),+], [$($acc23),+])),+],
                merge = [],
            }
        };
        (
            $out:ident;
            $(#[$meta:meta])*
            fn $name:ident;
            rhs_lo = $rhs_lo:tt, rhs_hi = $rhs_hi:tt, raw = $raw:tt, unp = $unp:tt,
            consts = [$($ld_c:tt),+ $(,)?], cst = $cst:tt, row0 = $row0:tt,
            work = [$($w:tt),+ $(,)?],
            tiles = [$(($a:ident, $i:tt, [$($acc01:tt),+], [$($acc23:tt),+])),+ $(,)?],
            hi = $hi:tt, merge = [$(($md:tt, $ms:tt)),* $(,)?] $(,)?
        ) => {
            $crate::matmul::arch::i8mm::tile_fn! {
            $out;
            $(#[$meta])*
            fn $name(t) {
                // SAFETY: the caller guarantees FEAT_I8MM and that `t.lhs[..R]`, `t.rhs` and
                // `t.extras` point at whole packed tiles of `t.groups` 32-depth groups, which is
                // all the block reads; it writes the `4R` rows of 4 or 8 f32 at `t.dst`,
                // `t.out_stride` bytes apart, which the caller made writable. Every register
                // written is declared.
                unsafe {
                    core::arch::asm!(
                        // 0xF0 in every byte: `AND` keeps 16 * the high nibble.
                        "movi v24.16b, #0xf0",
                        // Zero the accumulators.
                        concat!(
                            $($("movi ", $acc01, ".4s, #0\n",)+ $("movi ", $acc23, ".4s, #0\n",)+)+
                            $("movi ", $ms, ".4s, #0\n",)*
                        ),
                        // K loop: one 32-depth group per iteration.
                        "2:",
                        $crate::matmul::arch::i8mm::k_group!(
                            mma = lr,
                            rhs_lo = $rhs_lo, rhs_hi = $rhs_hi, raw = $raw, unp = $unp,
                            lhs = ["], #128", ", #-64]", ", #-96]", ", #-32]"],
                            lo = [$(($a, [$($acc01),+], [$($acc23),+])),+], hi = $hi,
                        ),
                        "subs {g}, {g}, #1",
                        "b.ne 2b",
                        // Epilogue: merge the accumulator sets (int32, wrapping), clamp bounds,
                        // column constants, then tile by tile.
                        concat!($("add ", $md, ".4s, ", $md, ".4s, ", $ms, ".4s\n",)*),
                        "dup v30.4s, {cmin:w}",
                        "dup v31.4s, {cmax:w}",
                        $($ld_c,)+
                        $($crate::matmul::arch::i8mm::epi_tile!(
                            $out, lr, per_channel_row_math, per_channel_lhs_consts, $a, [$($acc01),+], [$($acc23),+], $cst,
                            $row0),)+
                        $($a = inout(reg) t.lhs[$i] => _,)+
                        b = inout(reg) t.rhs => _,
                        e = inout(reg) t.extras => _,
                        es = in(reg) t.extras_step,
                        d = inout(reg) t.out => _,
                        d1 = out(reg) _,
                        stride = in(reg) t.out_stride,
                        g = inout(reg) t.groups => _,
                        cmin = in(reg) t.lo,
                        cmax = in(reg) t.hi,
                        $($(out($acc01) _,)+ $(out($acc23) _,)+)+
                        $(out($ms) _,)*
                        $(out($w) _,)+
                        options(nostack),
                    )
                }
            }
            }
        };
    }

    /// Defines 4-column tile kernels (accumulators `v0..v4R`, working registers v24-v31) for one
    /// RHS layout, given its two RHS load instructions: `[name: R, ...]` for `R` LHS tiles.
    macro_rules! tiles_4col {
        ($out:ident, $lo:tt, $hi:tt, [$($name:ident: $r:tt),+ $(,)?]) => {
            $(tiles_4col!(@tiles $out, $lo, $hi, $name, $r);)+
        };
        // 1 and 2 LHS tiles: a second accumulator set for the high nibbles, so that no
        // accumulator waits on itself more than twice per group.
        (@tiles $out:ident, $lo:tt, $hi:tt, $name:ident, 1) => {
            tiles_4col!(@def $out, $lo, $hi, $name, "4", [(a0, 0, ["v0", "v1"], ["v2", "v3"])],
                hi = [(a0, ["v4", "v5"], ["v6", "v7"])],
                merge = [("v0", "v4"), ("v1", "v5"), ("v2", "v6"), ("v3", "v7")],
            );
        };
        (@tiles $out:ident, $lo:tt, $hi:tt, $name:ident, 2) => {
            tiles_4col!(@def $out, $lo, $hi, $name, "8", [
                (a0, 0, ["v0", "v1"], ["v2", "v3"]), (a1, 1, ["v4", "v5"], ["v6", "v7"]),
            ],
                hi = [(a0, ["v8", "v9"], ["v10", "v11"]), (a1, ["v12", "v13"], ["v14", "v15"])],
                merge = [
                    ("v0", "v8"), ("v1", "v9"), ("v2", "v10"), ("v3", "v11"),
                    ("v4", "v12"), ("v5", "v13"), ("v6", "v14"), ("v7", "v15"),
                ],
            );
        };
        (@tiles $out:ident, $lo:tt, $hi:tt, $name:ident, 3) => {
            tiles_4col!(@def $out, $lo, $hi, $name, "12", [
                (a0, 0, ["v0", "v1"], ["v2", "v3"]), (a1, 1, ["v4", "v5"], ["v6", "v7"]),
                (a2, 2, ["v8", "v9"], ["v10", "v11"]),
            ]);
        };
        (@tiles $out:ident, $lo:tt, $hi:tt, $name:ident, 4) => {
            tiles_4col!(@def $out, $lo, $hi, $name, "16", [
                (a0, 0, ["v0", "v1"], ["v2", "v3"]), (a1, 1, ["v4", "v5"], ["v6", "v7"]),
                (a2, 2, ["v8", "v9"], ["v10", "v11"]), (a3, 3, ["v12", "v13"], ["v14", "v15"]),
            ]);
        };
        (@tiles $out:ident, $lo:tt, $hi:tt, $name:ident, 5) => {
            tiles_4col!(@def $out, $lo, $hi, $name, "20", [
                (a0, 0, ["v0", "v1"], ["v2", "v3"]), (a1, 1, ["v4", "v5"], ["v6", "v7"]),
                (a2, 2, ["v8", "v9"], ["v10", "v11"]), (a3, 3, ["v12", "v13"], ["v14", "v15"]),
                (a4, 4, ["v16", "v17"], ["v18", "v19"]),
            ]);
        };
        (@tiles $out:ident, $lo:tt, $hi:tt, $name:ident, 6) => {
            tiles_4col!(@def $out, $lo, $hi, $name, "24", [
                (a0, 0, ["v0", "v1"], ["v2", "v3"]), (a1, 1, ["v4", "v5"], ["v6", "v7"]),
                (a2, 2, ["v8", "v9"], ["v10", "v11"]), (a3, 3, ["v12", "v13"], ["v14", "v15"]),
                (a4, 4, ["v16", "v17"], ["v18", "v19"]), (a5, 5, ["v20", "v21"], ["v22", "v23"]),
            ]);
        };
        (@def $out:ident, $lo:tt, $hi:tt, $name:ident, $rows:literal, $tiles:tt $(, $($split:tt)+)?) => {
            tile_kernel! {
                $out;
                #[doc = concat!("Tile kernel: ", $rows, " rows x 4 columns.")]
                fn $name;
                rhs_lo = [$lo], rhs_hi = [$hi], raw = ["v25", "v26"], unp = ["v27", "v28"],
                consts = [
                    "ld1 {{v25.4s}}, [{e}], {es}",
                    "ld1 {{v26.4s}}, [{e}], {es}",
                    "ld1 {{v27.4s}}, [{e}]",
                ],
                cst = [("v25", "v26", "v27")], row0 = ["v24"],
                work = ["v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31"],
                tiles = $tiles,
                $($($split)+)?
            }
        };
    }

    /// Defines the 8-column tile kernels on `nr = 8` (accumulators `v0..v8R`, working registers
    /// v16-v31).
    macro_rules! tiles_8col {
        ($out:ident, [$($name:ident: $rows:literal, $tiles:tt;)+]) => {
            $(
                tile_kernel! {
                    $out;
                    #[doc = concat!("Tile kernel: ", $rows, " rows x 8 columns.")]
                    fn $name;
                    rhs_lo = ["ldp q16, q17, [{b}], #128", "ldp q18, q19, [{b}, #-96]"],
                    rhs_hi = ["ldp q16, q17, [{b}, #-64]", "ldp q18, q19, [{b}, #-32]"],
                    raw = ["v16", "v17", "v18", "v19"], unp = ["v20", "v21", "v22", "v23"],
                    consts = [
                        "ld1 {{v16.4s, v17.4s}}, [{e}], {es}",
                        "ld1 {{v18.4s, v19.4s}}, [{e}], {es}",
                        "ld1 {{v20.4s, v21.4s}}, [{e}]",
                    ],
                    cst = [("v16", "v18", "v20"), ("v17", "v19", "v21")], row0 = ["v22", "v23"],
                    work = [
                        "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23",
                        "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31",
                    ],
                    tiles = $tiles,
                }
            )+
        };
    }

    /// The tile kernels, their table and `run`, with outputs of kind `$out`.
    macro_rules! define_tiles {
        ($out:ident) => {
            // `nr = 4`: a group is 64 bytes, bytes 8-15 of the columns start 32 bytes in.
            tiles_4col!($out, "ldp q25, q26, [{b}], #64", "ldp q25, q26, [{b}, #-32]", [
                nr4_r1: 1, nr4_r2: 2, nr4_r3: 3, nr4_r4: 4, nr4_r5: 5, nr4_r6: 6,
            ]);

            // `nr = 8`, 4 of the 8 columns (the pointer starts at the half): a group is 128 bytes, bytes
            // 8-15 start 64 bytes in. Only for 3+ LHS tiles: below, whole 8-column tiles need the same
            // unpack work and half the LHS loads.
            tiles_4col!($out, "ldp q25, q26, [{b}], #128", "ldp q25, q26, [{b}, #-64]", [
                nr8h_r3: 3, nr8h_r4: 4, nr8h_r5: 5, nr8h_r6: 6,
            ]);

            tiles_8col!($out, [
                nr8_r1: "4", [(a0, 0, ["v0", "v1", "v2", "v3"], ["v4", "v5", "v6", "v7"])];
                nr8_r2: "8", [
                    (a0, 0, ["v0", "v1", "v2", "v3"], ["v4", "v5", "v6", "v7"]),
                    (a1, 1, ["v8", "v9", "v10", "v11"], ["v12", "v13", "v14", "v15"]),
                ];
            ]);

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
