//! Pieces shared by the i8mm (`SMMLA`) tiers: generators of `asm!` text (one 8-depth chunk, one
//! 32-depth group, the unpack, the output epilogue), the tile kernels of the per-block
//! (`qsi4c32p`) families and their catalogue entries, and the tile skeleton of the per-channel
//! families ([`per_channel_kernels!`]; the tiles are walked by the drivers both asm tiers share,
//! [`crate::matmul::arch::asm`]). The tier modules keep only what differs: per per-channel
//! family its K group (load, unpack if any, `SMMLA`), its constants and scaling order, and per
//! per-block family the block scales, the fold of a block into the float accumulators and the
//! output math.
//!
//! `SMMLA Vd.4S, Vn.16B, Vm.16B` adds a 2x8 by 8x2 int8 product to a 2x2 int32 block: lanes
//! `[n0m0, n0m1, n1m0, n1m1]` for rows `n` of `Vn` and `m` of `Vm`. With `mr = 4`, `kr = 16`,
//! `sr = 2` (`bd = 8`) both operands come straight from the packed tiles:
//!
//! * LHS (4 rows): chunk `c` (depths `8c..8c+8`) is 32 bytes, rows 0-1 then rows 2-3: one `LDP`
//!   gives two operands (v29, v30 in every kernel).
//! * RHS (columns): per 32-depth group, bytes 0-7 of every column, then bytes 8-15; one q
//!   register holds 2 columns x 8 bytes. Byte `q` holds a depth in its low nibble and the depth
//!   16 later (`bl / 2` later for `qsi8d32p`) in its high nibble. `SHL #4` turns a raw register
//!   into `16 * w` of the low depths, `AND 0xF0` into `16 * w` of the high ones.
//!
//! Register plan of the per-block kernels ([`block_kernels!`]), up to 4 LHS tiles x 4 columns:
//! float accumulators v0-v15 (4 per LHS tile, in the `SMMLA` lane order), int32 block sums
//! v16-v19 (one LHS tile at a time: register renaming overlaps the tiles), unpacked RHS v20-v27,
//! LHS chunks v29-v30, column scales v28 (columns 0-1) and v31 (columns 2-3) in the lane order.

#[cfg(target_arch = "aarch64")]
pub(crate) use aarch64::*;

/// The `asm!` generators and the per-block tile kernels (aarch64 only).
#[cfg(target_arch = "aarch64")]
#[macro_use]
mod aarch64 {
    /// `SMMLA` of one LHS register `$l` (2 rows x 8 depths) with each unpacked RHS register `$w`
    /// (2 columns x 8 depths) into the accumulator of that column pair: with `lr` the LHS is the
    /// first operand (lanes `[r0c0, r0c1, r1c0, r1c1]`), with `rl` the second (lanes
    /// `[c0r0, c0r1, c1r0, c1r1]`).
    macro_rules! smmla_rows {
        (lr, $l:tt, [$($acc:tt),+], [$($w:tt),+]) => {
            concat!($("smmla ", $acc, ".4s, ", $l, ".16b, ", $w, ".16b\n",)+)
        };
        (rl, $l:tt, [$($acc:tt),+], [$($w:tt),+]) => {
            concat!($("smmla ", $acc, ".4s, ", $w, ".16b, ", $l, ".16b\n",)+)
        };
    }

    /// One 8-depth chunk of one LHS tile: `LDP` of its 4 rows from `$addr` (rows 0-1 into v29,
    /// rows 2-3 into v30), then `SMMLA` (operand order `$mma`, see [`smmla_rows!`]) with the RHS
    /// registers `$w` into the accumulators of rows 0-1 (`$acc01`, one per column pair) and rows
    /// 2-3 (`$acc23`).
    macro_rules! smmla_chunk {
        ($mma:ident, $addr:expr, $w:tt, $acc01:tt, $acc23:tt) => {
            concat!(
                concat!("ldp q29, q30, ", $addr, "\n"),
                $crate::matmul::arch::i8mm::smmla_rows!($mma, "v29", $acc01, $w),
                $crate::matmul::arch::i8mm::smmla_rows!($mma, "v30", $acc23, $w),
            )
        };
    }

    /// Address text `[{ptr}` followed by `$suffix` (`"]"`, `", #32]"`, `"], #128"`).
    macro_rules! lhs_at {
        ($p:ident, $suffix:expr) => {
            concat!("[{", stringify!($p), "}", $suffix)
        };
    }

    /// `SHL #4` of each raw RHS register into its low-nibble register: `16 * w` of the low
    /// depths.
    macro_rules! unpack_lo {
        ([$($r:tt),+], [$($u:tt),+]) => {
            concat!($("shl ", $u, ".16b, ", $r, ".16b, #4\n",)+)
        };
    }

    /// `AND 0xF0` of each raw RHS register in place: `16 * w` of the high depths.
    macro_rules! unpack_hi {
        ([$($r:tt),+], $mask:tt) => {
            concat!($("and ", $r, ".16b, ", $r, ".16b, ", $mask, ".16b\n",)+)
        };
    }

    /// One 32-depth group: load + unpack + `SMMLA` (the reusable K step), as one template
    /// string.
    ///
    /// * `mma`: operand order of the `SMMLA` (see [`smmla_rows!`]).
    /// * `rhs_lo`, `rhs_hi`: the instructions loading the group's RHS bytes 0-7 and 8-15 of each
    ///   column into `raw` (one register per column pair); `rhs_lo` advances the RHS pointer by
    ///   one group.
    /// * `raw`, `unp`: per column pair, the raw register and the register for the `SHL` result.
    /// * `lhs`: address suffixes of the LHS chunks paired with the low nibbles of bytes 0-7,
    ///   their high nibbles, the low nibbles of bytes 8-15 and their high nibbles; the first one
    ///   advances the `lo` pointers by one group.
    /// * `lo`, `hi`: per LHS tile, `(pointer operand, [accumulators of rows 0-1 per column
    ///   pair], [accumulators of rows 2-3 per column pair])` for the low-nibble depths and the
    ///   high-nibble ones: the same registers, or a second set that shortens the accumulator
    ///   dependency chains of small tiles; `hi` may name another pointer.
    ///
    /// Also uses v24 (`0xF0` in every byte, set by the caller) and v29, v30 (LHS chunks).
    macro_rules! k_group {
        (
            mma = $mma:ident, rhs_lo = [$($ld_lo:expr),+], rhs_hi = [$($ld_hi:expr),+],
            raw = $raw:tt, unp = $unp:tt, lhs = [$l0:expr, $h0:expr, $l1:expr, $h1:expr],
            lo = [$(($a:ident, $acc01:tt, $acc23:tt)),+],
            hi = [$(($p:ident, $hacc01:tt, $hacc23:tt)),+] $(,)?
        ) => {
            concat!(
                // Bytes 0-7 of each column: the first low-nibble and high-nibble depths.
                $($ld_lo, "\n",)+
                $crate::matmul::arch::i8mm::unpack_lo!($raw, $unp),
                $($crate::matmul::arch::i8mm::smmla_chunk!(
                    $mma, $crate::matmul::arch::i8mm::lhs_at!($a, $l0), $unp, $acc01, $acc23),)+
                $crate::matmul::arch::i8mm::unpack_hi!($raw, "v24"),
                $($crate::matmul::arch::i8mm::smmla_chunk!(
                    $mma, $crate::matmul::arch::i8mm::lhs_at!($p, $h0), $raw, $hacc01, $hacc23),)+
                // Bytes 8-15 of each column.
                $($ld_hi, "\n",)+
                $crate::matmul::arch::i8mm::unpack_lo!($raw, $unp),
                $($crate::matmul::arch::i8mm::smmla_chunk!(
                    $mma, $crate::matmul::arch::i8mm::lhs_at!($a, $l1), $unp, $acc01, $acc23),)+
                $crate::matmul::arch::i8mm::unpack_hi!($raw, "v24"),
                $($crate::matmul::arch::i8mm::smmla_chunk!(
                    $mma, $crate::matmul::arch::i8mm::lhs_at!($p, $h1), $raw, $hacc01, $hacc23),)+
            )
        };
    }

    /// `{ $r0.4s, $r1.4s, ... }` register list body (`.4h` for the 16-bit outputs `$out`).
    macro_rules! st1_list {
        (f32; $first:tt $(, $rest:tt)*) => {
            concat!($first, ".4s" $(, ", ", $rest, ".4s")*)
        };
        ($out:ident; $first:tt $(, $rest:tt)*) => {
            concat!($first, ".4h" $(, ", ", $rest, ".4h")*)
        };
    }

    /// Converts the clamped f32 row registers `$r` to the output type `$out` in place (`f32`:
    /// nothing; `f16`: `FCVTN`; `bf16cvt`: `BFCVTN`, FEAT_BF16) and gives the arrangement they
    /// are then stored with.
    macro_rules! out_cvt {
        (f32, [$($r:tt),+]) => { "" };
        (f16, [$($r:tt),+]) => { concat!($("fcvtn ", $r, ".4h, ", $r, ".4s\n",)+) };
        (bf16cvt, [$($r:tt),+]) => { concat!($("bfcvtn ", $r, ".4h, ", $r, ".4s\n",)+) };
        (@arr f32) => { "4s" };
        (@arr $out:ident) => { "4h" };
        (@bytes f32) => { "16" };
        (@bytes $out:ident) => { "8" };
    }

    /// De-interleaves the 2x2 accumulator blocks `$x` (columns 0-1) and `$y` (columns 2-3) of one
    /// row pair into row 0 (`$s`) and row 1 (`$y`), for the lane order `$mma` (see
    /// [`smmla_rows!`]).
    macro_rules! deinterleave {
        (lr, $s:tt, $x:tt, $y:tt) => {
            concat!(
                concat!("zip1 ", $s, ".2d, ", $x, ".2d, ", $y, ".2d\n"),
                concat!("zip2 ", $y, ".2d, ", $x, ".2d, ", $y, ".2d\n"),
            )
        };
        (rl, $s:tt, $x:tt, $y:tt) => {
            concat!(
                concat!("uzp1 ", $s, ".4s, ", $x, ".4s, ", $y, ".4s\n"),
                concat!("uzp2 ", $y, ".4s, ", $x, ".4s, ", $y, ".4s\n"),
            )
        };
    }

    /// Epilogue of one row pair (lanes `$l0`, `$l1` of the LHS tile): per 4 columns,
    /// de-interleave the two 2x2 blocks `($x, $y)` into row 0 (`$s`) and row 1 (`$y`), finish
    /// both with the family's `$math!(register, lane, column constants, scratch register)`,
    /// convert to the output type `$out` ([`out_cvt!`]), store row 1 at `{d1}` (advancing) and
    /// finally row 0 at `{d}`; `{d}` moves down two rows.
    macro_rules! epi_row_pair {
        (
            $out:ident, $mma:ident, $math:ident, ($l0:tt, $l1:tt), [$($x:tt, $y:tt),+], [$($cst:tt),+],
            [$($s:tt),+]
        ) => {
            concat!(
                "add {d1}, {d}, {stride}\n",
                $(
                    $crate::matmul::arch::i8mm::deinterleave!($mma, $s, $x, $y),
                    $math!($s, $l0, $cst, $x),
                    $math!($y, $l1, $cst, $x),
                    $crate::matmul::arch::i8mm::out_cvt!($out, [$y]),
                    "st1 {{", $y, ".", $crate::matmul::arch::i8mm::out_cvt!(@arr $out), "}}, [{d1}], #",
                    $crate::matmul::arch::i8mm::out_cvt!(@bytes $out), "\n",
                )+
                $crate::matmul::arch::i8mm::out_cvt!($out, [$($s),+]),
                "st1 {{", $crate::matmul::arch::i8mm::st1_list!($out; $($s),+), "}}, [{d}]\n",
                "add {d}, {d}, {stride}, lsl #1\n",
            )
        };
    }

    /// Epilogue of one LHS tile (pointer operand `$a`): the family's per-row loads
    /// `$consts!($a)`, then both row pairs (see [`epi_row_pair!`]).
    macro_rules! epi_tile {
        (
            $out:ident, $mma:ident, $math:ident, $consts:ident, $a:ident, $acc01:tt, $acc23:tt, $cst:tt,
            $s:tt
        ) => {
            concat!(
                $consts!($a),
                $crate::matmul::arch::i8mm::epi_row_pair!($out, $mma, $math, ("0", "1"), $acc01, $cst, $s),
                $crate::matmul::arch::i8mm::epi_row_pair!($out, $mma, $math, ("2", "3"), $acc23, $cst, $s),
            )
        };
    }

    /// The block sums v16-v19 (16 times the integer sums) to f32, exactly.
    macro_rules! scvtf_sums {
        () => {
            concat!(
                "scvtf v16.4s, v16.4s, #4\n",
                "scvtf v17.4s, v17.4s, #4\n",
                "scvtf v18.4s, v18.4s, #4\n",
                "scvtf v19.4s, v19.4s, #4\n",
            )
        };
    }

    /// The output clamp of row register `$v`: `FMAX` with the lower bound (v30), then `FMIN`
    /// with the upper one (v31).
    macro_rules! clamp {
        ($v:tt) => {
            concat!(
                concat!("fmax ", $v, ".4s, ", $v, ".4s, v30.4s\n"),
                concat!("fmin ", $v, ".4s, ", $v, ".4s, v31.4s\n"),
            )
        };
    }

    /// No text (a piece a family does not need).
    macro_rules! no_text {
        ($($x:tt)*) => {
            ""
        };
    }

    /// Declares a tile kernel `unsafe fn $name($t: &Tile)` with the i8mm target feature (and
    /// bf16 for the output type `bf16cvt`, whose stores use `BFCVTN`), never inlined (each one
    /// is a loop nest of its own), around `$body`.
    macro_rules! tile_fn {
        (bf16cvt; $(#[$meta:meta])* fn $name:ident($t:ident) $body:block) => {
            $(#[$meta])*
            ///
            /// # Safety
            ///
            /// The CPU has FEAT_I8MM and FEAT_BF16, and `t` describes valid buffers (see
            /// [`Tile`](crate::matmul::arch::asm::Tile)).
            #[target_feature(enable = "i8mm,bf16")]
            #[inline(never)]
            pub(crate) unsafe fn $name($t: &$crate::matmul::arch::asm::Tile) $body
        };
        ($out:ident; $(#[$meta:meta])* fn $name:ident($t:ident) $body:block) => {
            $(#[$meta])*
            ///
            /// # Safety
            ///
            /// The CPU has FEAT_I8MM, and `t` describes valid buffers (see
            /// [`Tile`](crate::matmul::arch::asm::Tile)).
            #[target_feature(enable = "i8mm")]
            #[inline(never)]
            pub(crate) unsafe fn $name($t: &$crate::matmul::arch::asm::Tile) $body
        };
    }

    /// Defines one tile kernel of a per-block family: `4R` rows (one entry of `tiles` per LHS
    /// tile) x 4 columns, the whole K loop (one iteration per block of `bl` depths) and the
    /// output epilogue in one `asm!` block.
    ///
    /// Per block: the family's `scales` (column scales into v28, v31), then
    /// * `fast` (`bl = 32`, one group per block): the RHS group is loaded and unpacked once into
    ///   v20-v27 and shared by every LHS tile;
    /// * `generic` (any `bl`): per LHS tile, a loop over the block's groups with [`k_group!`]
    ///   (the RHS is reloaded and unpacked for each tile);
    ///
    /// and per LHS tile: zero the block sums v16-v19 (loads from [`CONSTS`](crate::matmul::arch::asm::CONSTS): load pipes, not
    /// SIMD pipes), `SMMLA` the block, then the family's `tile_end!(tile pointer)` and
    /// `block_math!(float accumulators)` fold the sums into the float accumulators.
    ///
    /// * `ops`: the flavour's extra operands.
    /// * `rhs`: `(group stride, offset of bytes 8-15 after the post-increment, bytes to skip
    ///   after each block)` as string literals.
    /// * `fam`: the family's pieces: `mma` (operand order, see [`smmla_rows!`]), `scales`
    ///   (text), `lhs` (chunk address suffixes, see [`k_group!`]), `group_pre!(tile pointer)`
    ///   (text before each group of a tile), `tile_end`, `block_math`, `col_consts` (text
    ///   loading the column constants of the epilogue), `tile_consts!(tile pointer)`, `row_math`
    ///   (see [`epi_row_pair!`]) with its column constant registers `cst`, and the extra
    ///   `operands` its text uses.
    /// * `tiles`: per LHS tile, `(pointer operand, pointer of the high-nibble chunks, index in
    ///   Tile::lhs, [float accumulators of rows 0-1], [of rows 2-3])`.
    macro_rules! block_tile_kernel {
        (
            $(#[$meta:meta])*
            fn $name:ident($t:ident); $flavor:ident; out = $out:ident; ops = [$($fops:tt)*];
            rhs = ($stride:literal, $back:literal, $skip:literal),
            fam = {
                mma: $mma:ident,
                scales: $scales:expr,
                lhs: $lhs:tt,
                group_pre: $pre:ident,
                tile_end: $end:ident,
                block_math: $bm:ident,
                col_consts: $cc:expr,
                tile_consts: $tc:ident,
                row_math: $rm:ident,
                cst: $cst:tt,
                operands: [$($ops:tt)*] $(,)?
            },
            tiles = [$((
                $a:ident, $p:ident, $i:tt, [$f00:tt, $f01:tt], [$f10:tt, $f11:tt]
            )),+ $(,)?] $(,)?
        ) => {
            $crate::matmul::arch::i8mm::tile_fn! {
                $out;
                $(#[$meta])*
                fn $name($t) {
                    // SAFETY: the caller guarantees FEAT_I8MM (and FEAT_BF16 for `bf16cvt`) and
                    // that `t.lhs[..R]`, `t.rhs`,
                    // `t.scales` and `t.extras` point into whole packed tiles of `t.blocks`
                    // blocks of `t.groups` 32-depth groups, which is all the block reads (plus
                    // the zeros and the mask of `CONSTS`); it writes the `4R` rows of 4 outputs at `t.dst`,
                    // `t.dst_stride` bytes apart, which the caller made writable. Every
                    // register written is declared.
                    unsafe {
                        $crate::matmul::arch::asm::asm_v!(all;
                            // Float accumulators: +0.0.
                            concat!($(
                                "movi ", $f00, ".4s, #0\n", "movi ", $f01, ".4s, #0\n",
                                "movi ", $f10, ".4s, #0\n", "movi ", $f11, ".4s, #0\n",
                            )+),
                            $crate::matmul::arch::i8mm::block_tile_kernel!(@init $flavor),
                            // Block loop.
                            "2:",
                            $scales,
                            $crate::matmul::arch::i8mm::block_tile_kernel!(
                                @rhs_once $flavor, $stride, $back, $skip),
                            $(
                                // LHS tile: zero the block sums, `SMMLA` the block, fold it in.
                                "ldp q16, q17, [{z}]",
                                "ldp q18, q19, [{z}]",
                                $crate::matmul::arch::i8mm::block_tile_kernel!(
                                    @tile $flavor, $mma, $stride, $back, $lhs, $pre, $a, $p),
                                $end!($a),
                                $bm!($f00, $f01, $f10, $f11),
                            )+
                            $crate::matmul::arch::i8mm::block_tile_kernel!(@rhs_end $flavor, $skip),
                            "subs {cnt}, {cnt}, #1",
                            "b.ne 2b",
                            // Epilogue: clamp bounds, column constants, then tile by tile.
                            "dup v30.4s, {cmin:w}",
                            "dup v31.4s, {cmax:w}",
                            $cc,
                            $($crate::matmul::arch::i8mm::epi_tile!(
                                $out, $mma, $rm, $tc, $a, [$f00, $f01], [$f10, $f11], [$cst], ["v18"]),)+
                            $($a = inout(reg) $t.lhs[$i] => _,)+
                            b = inout(reg) $t.rhs => _,
                            s = inout(reg) $t.scales => _,
                            ss = in(reg) $t.block_bytes,
                            z = in(reg) $crate::matmul::arch::asm::CONSTS.0.as_ptr(),
                            cnt = inout(reg) $t.blocks => _,
                            d = inout(reg) $t.out => _,
                            d1 = out(reg) _,
                            stride = in(reg) $t.out_stride,
                            cmin = in(reg) $t.lo,
                            cmax = in(reg) $t.hi,
                            $($fops)*
                            $($ops)*
                        )
                    }
                }
            }
        };
        // `fast`: nothing before the loop.
        (@init fast) => { "" };
        // `generic`: the `AND` mask of `k_group!`.
        (@init generic) => { "movi v24.16b, #0xf0" };
        // `fast`: the block's RHS group, unpacked once (raw bytes 0-7 into v22-v23, 8-15 into
        // v26-v27; the `0xF0` mask loaded into v16, free until the first LHS tile: a load, not a
        // SIMD-pipe `MOVI`).
        (@rhs_once fast, $stride:literal, $back:literal, $skip:literal) => {
            concat!(
                "ldp q22, q23, [{b}], #", $stride, "\n",
                "ldp q26, q27, [{b}, #", $back, "]\n",
                "add {b}, {b}, #", $skip, "\n",
                "ldr q16, [{z}, #64]\n", // CONSTS at MASK_F0_AT
                $crate::matmul::arch::i8mm::unpack_lo!(
                    ["v22", "v23", "v26", "v27"], ["v20", "v21", "v24", "v25"]),
                $crate::matmul::arch::i8mm::unpack_hi!(["v22", "v23", "v26", "v27"], "v16"),
            )
        };
        (@rhs_once generic, $stride:literal, $back:literal, $skip:literal) => { "" };
        // `fast`: the 4 chunks of one LHS tile against the shared unpacked group.
        (
            @tile fast, $mma:ident, $stride:literal, $back:literal,
            [$l0:expr, $h0:expr, $l1:expr, $h1:expr], $pre:ident, $a:ident, $p:ident
        ) => {
            concat!(
                $pre!($a),
                $crate::matmul::arch::i8mm::smmla_chunk!(
                    $mma, $crate::matmul::arch::i8mm::lhs_at!($a, $l0),
                    ["v20", "v21"], ["v16", "v17"], ["v18", "v19"]),
                $crate::matmul::arch::i8mm::smmla_chunk!(
                    $mma, $crate::matmul::arch::i8mm::lhs_at!($a, $l1),
                    ["v24", "v25"], ["v16", "v17"], ["v18", "v19"]),
                $crate::matmul::arch::i8mm::smmla_chunk!(
                    $mma, $crate::matmul::arch::i8mm::lhs_at!($p, $h0),
                    ["v22", "v23"], ["v16", "v17"], ["v18", "v19"]),
                $crate::matmul::arch::i8mm::smmla_chunk!(
                    $mma, $crate::matmul::arch::i8mm::lhs_at!($p, $h1),
                    ["v26", "v27"], ["v16", "v17"], ["v18", "v19"]),
            )
        };
        // `generic`: the block's groups of one LHS tile, each loaded and unpacked.
        (
            @tile generic, $mma:ident, $stride:literal, $back:literal, $lhs:tt, $pre:ident,
            $a:ident, $p:ident
        ) => {
            concat!(
                "mov {bt}, {b}\n",
                "mov {gc}, {g}\n",
                "3:\n",
                $pre!($a),
                $crate::matmul::arch::i8mm::k_group!(
                    mma = $mma,
                    rhs_lo = [concat!("ldp q20, q21, [{bt}], #", $stride)],
                    rhs_hi = [concat!("ldp q20, q21, [{bt}, #", $back, "]")],
                    raw = ["v20", "v21"], unp = ["v22", "v23"], lhs = $lhs,
                    lo = [($a, ["v16", "v17"], ["v18", "v19"])],
                    hi = [($p, ["v16", "v17"], ["v18", "v19"])],
                ),
                "subs {gc}, {gc}, #1\n",
                "b.ne 3b\n",
            )
        };
        (@rhs_end fast, $skip:literal) => { "" };
        (@rhs_end generic, $skip:literal) => { concat!("add {b}, {bt}, #", $skip) };
    }

    /// Defines the tile kernels of a per-block family (`fast` and `generic`, for `nr = 4` and
    /// for 4 of the 8 columns of `nr = 8`, 1 to 4 LHS tiles), their tables and the family's
    /// `unsafe fn run(args: &UncheckedArgs, packing: &Packing, tiles: usize)`, which runs `tiles`
    /// LHS tiles per step through [`gemm`] with the family's layout
    /// `asm_layout(args, strides, packing) -> Option<Layout>` (`None`: nothing to run).
    ///
    /// `hi = same` when the high-nibble LHS chunks are addressed from the tile's own pointer,
    /// `hi = h` when from the operand `{h}` (set by the family's `group_pre`); `args` names the
    /// `Tile` parameter the family's operands use; `fam` as in [`block_tile_kernel!`].
    /// `hi = same, tiles = 3, skip = ("a", "b")`: at most 3 LHS tiles (v12-v15 are the family's:
    /// the asymmetric blocks need 4 more registers), and the RHS extras after each block's data
    /// are `a` bytes (`nr = 4`) or `b` bytes (`nr = 8`) instead of the 2-byte scales per column.
    macro_rules! block_kernels {
        (out = $out:ident, hi = same, tiles = 3, skip = ($s4:literal, $s8:literal), $($rest:tt)*) => {
            $crate::matmul::arch::i8mm::block_kernels!(@go $out, 3, ($s4, $s8), [
                (a0, a0, 0, ["v0", "v1"], ["v2", "v3"]),
                (a1, a1, 1, ["v4", "v5"], ["v6", "v7"]),
                (a2, a2, 2, ["v8", "v9"], ["v10", "v11"]),
            ], $($rest)*);
        };
        (out = $out:ident, hi = same, $($rest:tt)*) => {
            $crate::matmul::arch::i8mm::block_kernels!(@go $out, 4, ("8", "16"), [
                (a0, a0, 0, ["v0", "v1"], ["v2", "v3"]),
                (a1, a1, 1, ["v4", "v5"], ["v6", "v7"]),
                (a2, a2, 2, ["v8", "v9"], ["v10", "v11"]),
                (a3, a3, 3, ["v12", "v13"], ["v14", "v15"]),
            ], $($rest)*);
        };
        (out = $out:ident, hi = h, $($rest:tt)*) => {
            $crate::matmul::arch::i8mm::block_kernels!(@go $out, 4, ("8", "16"), [
                (a0, h, 0, ["v0", "v1"], ["v2", "v3"]),
                (a1, h, 1, ["v4", "v5"], ["v6", "v7"]),
                (a2, h, 2, ["v8", "v9"], ["v10", "v11"]),
                (a3, h, 3, ["v12", "v13"], ["v14", "v15"]),
            ], $($rest)*);
        };
        (@go $out:ident, $n:tt, ($s4:literal, $s8:literal), $tiles:tt, args = $t:ident, fam = $fam:tt $(,)?) => {
            $crate::matmul::arch::i8mm::block_kernels!(@set $out, $t, $fam, fast, [],
                ("64", "-32", $s4), [fast4_r1, fast4_r2, fast4_r3, fast4_r4], $tiles);
            $crate::matmul::arch::i8mm::block_kernels!(@set $out, $t, $fam, fast, [],
                ("128", "-64", $s8), [fast8_r1, fast8_r2, fast8_r3, fast8_r4], $tiles);
            $crate::matmul::arch::i8mm::block_kernels!(@set $out, $t, $fam, generic,
                [bt = out(reg) _, gc = out(reg) _, g = in(reg) $t.groups,],
                ("64", "-32", $s4), [gen4_r1, gen4_r2, gen4_r3, gen4_r4], $tiles);
            $crate::matmul::arch::i8mm::block_kernels!(@set $out, $t, $fam, generic,
                [bt = out(reg) _, gc = out(reg) _, g = in(reg) $t.groups,],
                ("128", "-64", $s8), [gen8_r1, gen8_r2, gen8_r3, gen8_r4], $tiles);

            /// Tile kernels by LHS tile count: `[bl = 32, any bl]` for `nr = 4`, then for
            /// `nr = 8`.
            const TABLES: [[[$crate::matmul::arch::asm::TileKernel; $n]; 2]; 2] = [
                [
                    $crate::matmul::arch::i8mm::block_kernels!(@table $n, [fast4_r1, fast4_r2, fast4_r3, fast4_r4]),
                    $crate::matmul::arch::i8mm::block_kernels!(@table $n, [gen4_r1, gen4_r2, gen4_r3, gen4_r4]),
                ],
                [
                    $crate::matmul::arch::i8mm::block_kernels!(@table $n, [fast8_r1, fast8_r2, fast8_r3, fast8_r4]),
                    $crate::matmul::arch::i8mm::block_kernels!(@table $n, [gen8_r1, gen8_r2, gen8_r3, gen8_r4]),
                ],
            ];

            /// Runs the rectangle `args` in steps of `tiles` LHS tiles (`1..=4`).
            ///
            /// # Safety
            ///
            /// The CPU has FEAT_I8MM (and FEAT_BF16 for `bf16cvt` outputs) and `args` satisfies
            /// [`Kernel::run_unchecked`](crate::Kernel::run_unchecked) for `packing` (`mr = 4`,
            /// `nr = 4` or `8`, `kr = 16`, `sr = 2`), `strides` its tile strides.
            #[inline(always)]
            pub(crate) unsafe fn run(
                args: &UncheckedArgs<$crate::matmul::arch::asm::out_type!($out)>,
                strides: &$crate::matmul::TileStrides,
                packing: &crate::matmul::Packing,
                tiles: usize,
            ) {
                if args.bl > $crate::matmul::MAX_SIMD_BLOCK_LEN {
                    // SAFETY: forwarded from the caller; the scalar kernel takes any packing.
                    return unsafe { fam::scalar::matmul_unchecked(packing, args, strides) };
                }
                let Some(layout) = fam::asm_layout(args, strides, packing) else {
                    return;
                };
                let table = &TABLES[usize::from(packing.nr != 4)][usize::from(args.bl != 32)];
                // SAFETY: forwarded from the caller; the layout is this family's packed layout
                // for `args` and `packing`, which the table's kernels read; each computes 4
                // columns (a divisor of `nr`).
                unsafe { $crate::matmul::arch::asm::gemm(args, &layout, &table[..tiles]) }
            }
        };
        // The table of the kernels for 1, 2, ... `$n` LHS tiles, each 4 columns wide.
        (@table 4, [$n1:ident, $n2:ident, $n3:ident, $n4:ident]) => {
            [($n1, 4), ($n2, 4), ($n3, 4), ($n4, 4)]
        };
        (@table 3, [$n1:ident, $n2:ident, $n3:ident, $n4:ident]) => {
            [($n1, 4), ($n2, 4), ($n3, 4)]
        };
        (
            @set $out:ident, $t:ident, $fam:tt, $flavor:ident, $ops:tt, $rhs:tt,
            [$n1:ident, $n2:ident, $n3:ident, $n4:ident], [$p0:tt, $p1:tt, $p2:tt $(,)?]
        ) => {
            $crate::matmul::arch::i8mm::block_kernels!(
                @def $out, $t, $fam, $flavor, $ops, $rhs, $n1, "4", [$p0]);
            $crate::matmul::arch::i8mm::block_kernels!(
                @def $out, $t, $fam, $flavor, $ops, $rhs, $n2, "8", [$p0, $p1]);
            $crate::matmul::arch::i8mm::block_kernels!(
                @def $out, $t, $fam, $flavor, $ops, $rhs, $n3, "12", [$p0, $p1, $p2]);
        };
        (
            @set $out:ident, $t:ident, $fam:tt, $flavor:ident, $ops:tt, $rhs:tt,
            [$n1:ident, $n2:ident, $n3:ident, $n4:ident], [$p0:tt, $p1:tt, $p2:tt, $p3:tt $(,)?]
        ) => {
            $crate::matmul::arch::i8mm::block_kernels!(
                @def $out, $t, $fam, $flavor, $ops, $rhs, $n1, "4", [$p0]);
            $crate::matmul::arch::i8mm::block_kernels!(
                @def $out, $t, $fam, $flavor, $ops, $rhs, $n2, "8", [$p0, $p1]);
            $crate::matmul::arch::i8mm::block_kernels!(
                @def $out, $t, $fam, $flavor, $ops, $rhs, $n3, "12", [$p0, $p1, $p2]);
            $crate::matmul::arch::i8mm::block_kernels!(
                @def $out, $t, $fam, $flavor, $ops, $rhs, $n4, "16", [$p0, $p1, $p2, $p3]);
        };
        (
            @def $out:ident, $t:ident, $fam:tt, $flavor:ident, $ops:tt, $rhs:tt, $name:ident,
            $rows:literal, $tiles:tt
        ) => {
            $crate::matmul::arch::i8mm::block_tile_kernel! {
                #[doc = concat!(
                    "Tile kernel: ", $rows, " rows x 4 columns (", stringify!($flavor), ")."
                )]
                fn $name($t); $flavor; out = $out; ops = $ops;
                rhs = $rhs,
                fam = $fam,
                tiles = $tiles,
            }
        };
    }

    /// The catalogue kernels of a per-block family ([`block_kernels!`]): `16x4`, `8x4`, `4x4` on
    /// `PACKING_4X4` and `16x8`, `8x8`, `4x8` on `PACKING_4X8` (4 of the 8 columns per tile
    /// call), named from the given prefixes (see `asm_catalogue!`).
    macro_rules! block_catalogue {
        (
            $run:ident; dst: $dst:literal, feature: $feature:literal, $(also: $extra:ident,)?
            nr4: $p4:literal, nr8: $p8:literal $(,)?
        ) => {
            asm_catalogue! {
                tier: I8mm, feature: $feature, dst: $dst, suffix: "_neon_i8mm" $(, also: $extra)?;
                PACKING_4X4, $p4, [
                    I8MM_16X4 matmul_16x4_unchecked (16, 4) => $run(4),
                    I8MM_8X4 matmul_8x4_unchecked (8, 4) => $run(2),
                    I8MM_4X4 matmul_4x4_unchecked (4, 4) => $run(1),
                ];
                PACKING_4X8, $p8, [
                    I8MM_16X8 matmul_16x8_unchecked (16, 8) => $run(4),
                    I8MM_8X8 matmul_8x8_unchecked (8, 8) => $run(2),
                    I8MM_4X8 matmul_4x8_unchecked (4, 8) => $run(1),
                ];
            }
        };
    }

    /// Per-channel families: output of one row and 4 columns in `$v` (int32 sums), lane `$lane`
    /// of the tile: `iacc += rsum * offset`, `f = scvtf`, then the scaling step in the family's
    /// order (plain form, `scale_dq`: `s = scale * dq` (int4: `scale16`) into `$tmp`, `f * s`;
    /// `then_dq;` form: `(f * scale) * dq`, the 2-bit GEMM packing's order), `+ bias`, clamp.
    /// Uses v28 (offsets), v29 (dq), v30 (clamp min), v31 (clamp max).
    #[rustfmt::skip]
    macro_rules! per_channel_row_math {
        ($v:tt, $lane:tt, $cst:tt, $tmp:tt) => {
            $crate::matmul::arch::i8mm::per_channel_row_math!(scale_dq; $v, $lane, $cst, $tmp)
        };
        ($order:ident; $v:tt, $lane:tt, ($rsum:tt, $scale:tt, $bias:tt), $tmp:tt) => {
            concat!(
                "mla ", $v, ".4s, ", $rsum, ".4s, v28.s[", $lane, "]\n",
                "scvtf ", $v, ".4s, ", $v, ".4s\n",
                $crate::matmul::arch::i8mm::per_channel_row_math!(@scale $order, $v, $lane, $scale, $tmp),
                "fadd ", $v, ".4s, ", $v, ".4s, ", $bias, ".4s\n",
                $crate::matmul::arch::i8mm::clamp!($v),
            )
        };
        (@scale scale_dq, $v:tt, $lane:tt, $scale:tt, $tmp:tt) => {
            concat!(
                "fmul ", $tmp, ".4s, ", $scale, ".4s, v29.s[", $lane, "]\n",
                "fmul ", $v, ".4s, ", $v, ".4s, ", $tmp, ".4s\n",
            )
        };
        (@scale then_dq, $v:tt, $lane:tt, $scale:tt, $tmp:tt) => {
            concat!(
                "fmul ", $v, ".4s, ", $v, ".4s, ", $scale, ".4s\n",
                "fmul ", $v, ".4s, ", $v, ".4s, v29.s[", $lane, "]\n",
            )
        };
    }

    /// [`per_channel_row_math!`] in the `then_dq` order (`(f * scale) * dq`).
    macro_rules! then_dq_row_math {
        ($v:tt, $lane:tt, $cst:tt, $tmp:tt) => {
            $crate::matmul::arch::i8mm::per_channel_row_math!(then_dq; $v, $lane, $cst, $tmp)
        };
    }

    /// Per-row loads of one LHS tile for [`per_channel_row_math!`]: offsets (v28) and dq (v29).
    macro_rules! per_channel_lhs_consts {
        ($a:ident) => {
            concat!("ld1 {{v28.4s, v29.4s}}, [{", stringify!($a), "}]\n")
        };
    }

    /// Defines tile kernels of a per-channel family, one per `name: shape` of `kernels`: `4R` rows
    /// (`R` LHS tiles) x `cols` columns (4, or 8 of an `nr = 8` tile), the K loop and the epilogue
    /// in one `asm!` block: the family's `init` text, zero the accumulators, the K loop (the
    /// family's `group!(args; lo, hi)` once per `{g}` 32-depth group; `lo`, `hi` as in
    /// [`k_group!`]), add the high-nibble accumulators into the others (`_split` shapes), then the
    /// epilogue: clamp bounds, the column constants (rsum, scale, bias: from `{e}`, `{es}` bytes
    /// apart) and per LHS tile [`epi_tile!`] with `row_math` ([`per_channel_row_math!`] or
    /// [`then_dq_row_math!`]) and [`per_channel_lhs_consts!`].
    ///
    /// * `args`: the name of the `Tile` parameter the family's `operands` use (extra operands
    ///   after `{b}`, `name = in(reg) value`).
    /// * `clobbers`: `all` (every vector register declared), or `used`: the accumulators and the
    ///   working registers of the width (4 columns: v24-v31, 8 columns: v16-v31), which is then
    ///   all the family's text may write.
    /// * Shapes (the register allocation, per LHS tile `(pointer, index in Tile::lhs,
    ///   [accumulators of rows 0-1 per column pair], [of rows 2-3])`): 4 columns `r1` ..= `r6`
    ///   (LHS tile `t` in v(4t)..v(4t+3)) and `r1_split`, `r2_split` (the same with a second set
    ///   for the high-nibble depths, v4-v7 / v8-v15, which shortens the accumulator dependency
    ///   chains of small tiles); 8 columns `r1`, `r2` (v(8t)..v(8t+7)).
    ///
    /// Column constants: 4 columns in v25-v27 (row 0 of a pair into v24), 8 columns in v16-v21
    /// (row 0 into v22, v23); clamp bounds v30/v31, the LHS tile's constants v28/v29.
    #[rustfmt::skip]
    macro_rules! per_channel_kernels {
        (
            out = $out:ident, args = $t:ident, cols = $cols:tt, clobbers = $clob:ident,
            fam = {
                init: $init:expr, group: $g:ident $ga:tt, row_math: $rm:ident,
                operands: $ops:tt $(,)?
            },
            kernels = [$($name:ident: $shape:ident),+ $(,)?] $(,)?
        ) => {
            $($crate::matmul::arch::i8mm::per_channel_kernels!(
                @shape $cols, $shape, $name, ($out, $t, $clob, $init, $g $ga, $rm, $ops));)+
        };
        // The register allocations.
        (@shape 4, r1, $name:ident, $c:tt) => {
            $crate::matmul::arch::i8mm::per_channel_kernels!(@width 4, $name, "4", $c,
                [(a0, 0, ["v0", "v1"], ["v2", "v3"])]);
        };
        (@shape 4, r1_split, $name:ident, $c:tt) => {
            $crate::matmul::arch::i8mm::per_channel_kernels!(@width 4, $name, "4", $c,
                [(a0, 0, ["v0", "v1"], ["v2", "v3"])],
                hi = [(a0, ["v4", "v5"], ["v6", "v7"])],
                merge = [("v0", "v4"), ("v1", "v5"), ("v2", "v6"), ("v3", "v7")]);
        };
        (@shape 4, r2, $name:ident, $c:tt) => {
            $crate::matmul::arch::i8mm::per_channel_kernels!(@width 4, $name, "8", $c, [
                (a0, 0, ["v0", "v1"], ["v2", "v3"]), (a1, 1, ["v4", "v5"], ["v6", "v7"]),
            ]);
        };
        (@shape 4, r2_split, $name:ident, $c:tt) => {
            $crate::matmul::arch::i8mm::per_channel_kernels!(@width 4, $name, "8", $c, [
                (a0, 0, ["v0", "v1"], ["v2", "v3"]), (a1, 1, ["v4", "v5"], ["v6", "v7"]),
            ],
                hi = [(a0, ["v8", "v9"], ["v10", "v11"]), (a1, ["v12", "v13"], ["v14", "v15"])],
                merge = [
                    ("v0", "v8"), ("v1", "v9"), ("v2", "v10"), ("v3", "v11"),
                    ("v4", "v12"), ("v5", "v13"), ("v6", "v14"), ("v7", "v15"),
                ]);
        };
        (@shape 4, r3, $name:ident, $c:tt) => {
            $crate::matmul::arch::i8mm::per_channel_kernels!(@width 4, $name, "12", $c, [
                (a0, 0, ["v0", "v1"], ["v2", "v3"]), (a1, 1, ["v4", "v5"], ["v6", "v7"]),
                (a2, 2, ["v8", "v9"], ["v10", "v11"]),
            ]);
        };
        (@shape 4, r4, $name:ident, $c:tt) => {
            $crate::matmul::arch::i8mm::per_channel_kernels!(@width 4, $name, "16", $c, [
                (a0, 0, ["v0", "v1"], ["v2", "v3"]), (a1, 1, ["v4", "v5"], ["v6", "v7"]),
                (a2, 2, ["v8", "v9"], ["v10", "v11"]), (a3, 3, ["v12", "v13"], ["v14", "v15"]),
            ]);
        };
        (@shape 4, r5, $name:ident, $c:tt) => {
            $crate::matmul::arch::i8mm::per_channel_kernels!(@width 4, $name, "20", $c, [
                (a0, 0, ["v0", "v1"], ["v2", "v3"]), (a1, 1, ["v4", "v5"], ["v6", "v7"]),
                (a2, 2, ["v8", "v9"], ["v10", "v11"]), (a3, 3, ["v12", "v13"], ["v14", "v15"]),
                (a4, 4, ["v16", "v17"], ["v18", "v19"]),
            ]);
        };
        (@shape 4, r6, $name:ident, $c:tt) => {
            $crate::matmul::arch::i8mm::per_channel_kernels!(@width 4, $name, "24", $c, [
                (a0, 0, ["v0", "v1"], ["v2", "v3"]), (a1, 1, ["v4", "v5"], ["v6", "v7"]),
                (a2, 2, ["v8", "v9"], ["v10", "v11"]), (a3, 3, ["v12", "v13"], ["v14", "v15"]),
                (a4, 4, ["v16", "v17"], ["v18", "v19"]), (a5, 5, ["v20", "v21"], ["v22", "v23"]),
            ]);
        };
        (@shape 8, r1, $name:ident, $c:tt) => {
            $crate::matmul::arch::i8mm::per_channel_kernels!(@width 8, $name, "4", $c,
                [(a0, 0, ["v0", "v1", "v2", "v3"], ["v4", "v5", "v6", "v7"])]);
        };
        (@shape 8, r2, $name:ident, $c:tt) => {
            $crate::matmul::arch::i8mm::per_channel_kernels!(@width 8, $name, "8", $c, [
                (a0, 0, ["v0", "v1", "v2", "v3"], ["v4", "v5", "v6", "v7"]),
                (a1, 1, ["v8", "v9", "v10", "v11"], ["v12", "v13", "v14", "v15"]),
            ]);
        };
        // The column constants of the width: loads, registers, row-0 registers, working set.
        (@width 4, $name:ident, $rows:literal, $c:tt, $tiles:tt $(, hi = $hi:tt, merge = $m:tt)?) => {
            $crate::matmul::arch::i8mm::per_channel_kernels!(@split $name, "4", $rows, $c, $tiles,
                [
                    "ld1 {{v25.4s}}, [{e}], {es}",
                    "ld1 {{v26.4s}}, [{e}], {es}",
                    "ld1 {{v27.4s}}, [{e}]",
                ],
                [("v25", "v26", "v27")], ["v24"],
                ["v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31"] $(, $hi, $m)?);
        };
        (@width 8, $name:ident, $rows:literal, $c:tt, $tiles:tt) => {
            $crate::matmul::arch::i8mm::per_channel_kernels!(@split $name, "8", $rows, $c, $tiles,
                [
                    "ld1 {{v16.4s, v17.4s}}, [{e}], {es}",
                    "ld1 {{v18.4s, v19.4s}}, [{e}], {es}",
                    "ld1 {{v20.4s, v21.4s}}, [{e}]",
                ],
                [("v16", "v18", "v20"), ("v17", "v19", "v21")], ["v22", "v23"],
                [
                    "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23",
                    "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31",
                ]);
        };
        // Without a second accumulator set, the high-nibble depths go to the same accumulators.
        (@split $name:ident, $cols:literal, $rows:literal, $c:tt,
         [$(($a:ident, $i:tt, $acc01:tt, $acc23:tt)),+ $(,)?], $cc:tt, $cst:tt, $row0:tt, $work:tt) => {
            $crate::matmul::arch::i8mm::per_channel_kernels!(@split $name, $cols, $rows, $c,
                [$(($a, $i, $acc01, $acc23)),+], $cc, $cst, $row0, $work,
                [$(($a, $acc01, $acc23)),+], []);
        };
        (@split $name:ident, $cols:literal, $rows:literal, $c:tt, $tiles:tt, $cc:tt, $cst:tt,
         $row0:tt, $work:tt, $hi:tt, $m:tt) => {
            $crate::matmul::arch::i8mm::per_channel_kernels!(@clob $c, $tiles, $m, $work,
                ($name, $cols, $rows, $c, $tiles, $cc, $cst, $row0, $hi, $m));
        };
        // The clobber list: every vector register, or those written.
        (@clob ($out:ident, $t:ident, all, $($x:tt)*), $tiles:tt, $m:tt, $work:tt, $k:tt) => {
            $crate::matmul::arch::i8mm::per_channel_kernels!(@fn all, $k);
        };
        (@clob ($out:ident, $t:ident, used, $($x:tt)*),
         [$(($a:ident, $i:tt, [$($acc01:tt),+], [$($acc23:tt),+])),+ $(,)?],
         [$(($md:tt, $ms:tt)),* $(,)?], [$($w:tt),+ $(,)?], $k:tt) => {
            $crate::matmul::arch::i8mm::per_channel_kernels!(
                @fn [$($($acc01,)+ $($acc23,)+)+ $($ms,)* $($w),+], $k);
        };
        (
            @fn $clobbers:tt, (
                $name:ident, $cols:literal, $rows:literal,
                ($out:ident, $t:ident, $clob:ident, $init:expr, $g:ident($($ga:tt)*), $rm:ident,
                 [$($o:ident = $dir:ident(reg) $ov:expr),*]),
                [$(($a:ident, $i:tt, [$($acc01:tt),+], [$($acc23:tt),+])),+ $(,)?],
                [$($cc:expr),+ $(,)?], $cst:tt, $row0:tt, $hi:tt,
                [$(($md:tt, $ms:tt)),* $(,)?]
            )
        ) => {
            $crate::matmul::arch::i8mm::tile_fn! {
                $out;
                #[doc = concat!("Tile kernel: ", $rows, " rows x ", $cols, " columns.")]
                fn $name($t) {
                    // SAFETY: the caller guarantees FEAT_I8MM (and FEAT_BF16 for `bf16cvt`) and
                    // that `t.lhs[..R]`, `t.rhs` and `t.extras` point at whole packed tiles of
                    // `t.groups` 32-depth groups: the K loop reads the data of each, nothing
                    // ahead (and the family's `Tile::consts` bytes where it reads them), the
                    // epilogue the extras that follow (LHS) and the 3 x 16 bytes per 4 columns
                    // at `extras`, `extras_step` apart (RHS). It writes the `4R` rows of
                    // `cols` outputs at `t.out`, `t.out_stride` bytes apart, which the caller
                    // made writable. Every register written is declared.
                    unsafe {
                        $crate::matmul::arch::asm::asm_v!($clobbers;
                            // The family's constants; zero the accumulators.
                            $init,
                            concat!(
                                $($("movi ", $acc01, ".4s, #0\n",)+ $("movi ", $acc23, ".4s, #0\n",)+)+
                                $("movi ", $ms, ".4s, #0\n",)*
                            ),
                            // K loop: one 32-depth group per iteration.
                            "2:",
                            $g!($($ga)*; [$(($a, [$($acc01),+], [$($acc23),+])),+], $hi),
                            "subs {g}, {g}, #1",
                            "b.ne 2b",
                            // Epilogue: merge the accumulator sets (int32, wrapping), clamp
                            // bounds, column constants, then tile by tile.
                            concat!($("add ", $md, ".4s, ", $md, ".4s, ", $ms, ".4s\n",)*),
                            "dup v30.4s, {cmin:w}",
                            "dup v31.4s, {cmax:w}",
                            $($cc,)+
                            $($crate::matmul::arch::i8mm::epi_tile!(
                                $out, lr, $rm, per_channel_lhs_consts, $a, [$($acc01),+],
                                [$($acc23),+], $cst, $row0),)+
                            $($a = inout(reg) $t.lhs[$i] => _,)+
                            b = inout(reg) $t.rhs => _,
                            $($o = $dir(reg) $ov,)*
                            e = inout(reg) $t.extras => _,
                            es = in(reg) $t.extras_step,
                            d = inout(reg) $t.out => _,
                            d1 = out(reg) _,
                            stride = in(reg) $t.out_stride,
                            g = inout(reg) $t.groups => _,
                            cmin = in(reg) $t.lo,
                            cmax = in(reg) $t.hi,
                        )
                    }
                }
            }
        };
    }

    pub(crate) use {
        block_kernels, block_tile_kernel, clamp, deinterleave, epi_row_pair, epi_tile, k_group, lhs_at, out_cvt,
        per_channel_kernels, per_channel_row_math, scvtf_sums, smmla_chunk, smmla_rows, st1_list, tile_fn, unpack_hi,
        unpack_lo,
    };
}
