//! The per-block families' dotprod pieces: block loop, integer fold, tile skeletons and
//! register allocations of the GEMV and GEMM tiles.

// ---------------------------------------------------------------------------------------------
// Per-block families: block loop, integer fold, tile skeletons and register allocations.
// ---------------------------------------------------------------------------------------------

/// Zeroes integer accumulators by loading them from `{zero}` (the zeros of [`CONSTS`]), two per `LDP`.
#[rustfmt::skip]
macro_rules! blocked_reset {
    ($a:literal) => {
        concat!("ldr q", $a, ", [{zero}]\n")
    };
    ($($a0:literal, $a1:literal),+) => {
        concat!($("ldp q", $a0, ", q", $a1, ", [{zero}]\n",)+)
    };
}

/// GEMV block fold of one tile: the accumulators `[$a..]` become column sums (nr 8: columns
/// 0-3 in v`$a0`, 4-7 in v`$a1`; nr 4: columns 0-3 in v`$a0`), converted to f32 with
/// `SCVTF #4` (the sums are 16 * S, so this is float(S), exact), or with a plain `SCVTF`
/// (`exact16`: float(16 * S), for the arithmetic that multiplies `16 * S`). `k16` folds lane
/// pairs (`ADDP`); the `k8` accumulators already hold one column per lane.
#[rustfmt::skip]
macro_rules! blocked_fold {
    (exact16, k8, $nr:tt, [$($a:literal),+]) => {
        concat!($("scvtf v", $a, ".4s, v", $a, ".4s\n",)+)
    };
    (exact16, k16, 4, [$a0:literal, $a1:literal]) => {
        concat!(
            "addp v", $a0, ".4s, v", $a0, ".4s, v", $a1, ".4s\n",
            "scvtf v", $a0, ".4s, v", $a0, ".4s\n",
        )
    };
    (k8, $nr:tt, [$($a:literal),+]) => {
        concat!($("scvtf v", $a, ".4s, v", $a, ".4s, #4\n",)+)
    };
    (k16, 4, [$a0:literal, $a1:literal]) => {
        concat!(
            "addp v", $a0, ".4s, v", $a0, ".4s, v", $a1, ".4s\n",
            "scvtf v", $a0, ".4s, v", $a0, ".4s, #4\n",
        )
    };
    (k16, 8, [$a0:literal, $a1:literal, $a2:literal, $a3:literal]) => {
        concat!(
            "addp v", $a0, ".4s, v", $a0, ".4s, v", $a1, ".4s\n",
            "addp v", $a1, ".4s, v", $a2, ".4s, v", $a3, ".4s\n",
            "scvtf v", $a0, ".4s, v", $a0, ".4s, #4\n",
            "scvtf v", $a1, ".4s, v", $a1, ".4s, #4\n",
        )
    };
}

/// The groups of one block: `one` (`bl = 32`: the body once) or `many` (a loop of `{gpb}`
/// groups, counter `{gc}`).
#[rustfmt::skip]
macro_rules! blocked_groups {
    (one, $body:expr) => {
        concat!($body)
    };
    (many, $body:expr) => {
        concat!(
            "mov {gc}, {gpb}\n",
            "2:\n",
            $body,
            "subs {gc}, {gc}, #1\n",
            "b.ne 2b\n",
        )
    };
}

/// `MOVI #0` of the listed registers (integer 0, f32 +0.0).
#[rustfmt::skip]
macro_rules! zero_regs {
    ($($f:literal),+) => {
        concat!($("movi v", $f, ".16b, #0\n",)+)
    };
}

/// Stores one GEMV tile's results as output type `$out` (`{out}` advances past them; bf16
/// converts with v28/v29 as temporaries, free after the block loop).
#[rustfmt::skip]
macro_rules! blocked_gemv_store {
    ($out:ident, $nr:tt, [$($f:literal),+]) => {
        out_cols!($out, post, [$($f),+], "28", "29")
    };
}

/// One GEMV tile function of a per-block family (mr = 1): a block loop over `{nb}` blocks
/// around the groups (`$kind`: `k16` or `k8` packing; `$mode`: `one` for `bl = 32`, `many`
/// for any `bl`), over the RHS tiles `{ rhs: operand, tile: index, nr, low: [low-nibble
/// registers], acc: [integer accumulators], sums: [column sums after the fold], f32: [f32
/// accumulators], scale: register, scale_tmp: register }`. The family
/// hook `$fam` supplies (as asm text): `init`, `block_start` (with the tile list), `lhs` (one
/// group's LHS load), `block_end_lhs`, `block_scale` (one tile's `FMLA`s after the fold),
/// `finish_params` and `finish` (one tile's final epilogue);
/// `[$($ops)*]` are the family's extra `asm!` operands; `fold` (the block fold, usually
/// [`blocked_fold!`]) comes from the hook too. Registers: v28 belongs to the family
/// (f16: the LHS block scale, bf16: zero), v31 is the 0xF0 mask.
#[rustfmt::skip]
macro_rules! blocked_gemv_tile {
    ($name:ident($t:ident), $fam:ident, $out:ident, $kind:ident, one, $tiles:tt, [$($ops:tt)*]) => {
        blocked_gemv_tile!(@fn $name($t), $fam, $out, $kind, one, $tiles, [$($ops)*]);
    };
    ($name:ident($t:ident), $fam:ident, $out:ident, $kind:ident, many, $tiles:tt, [$($ops:tt)*]) => {
        blocked_gemv_tile!(@fn $name($t), $fam, $out, $kind, many, $tiles,
                           [gc = out(reg) _, gpb = in(reg) $t.groups, $($ops)*]);
    };
    (@fn $name:ident($t:ident), $fam:ident, $out:ident, $kind:ident, $mode:ident,
     [$({ rhs: $rhs:ident, tile: $i:literal, nr: $nr:tt, low: $tr:tt, acc: [$($a:literal),+],
          sums: [$($c:literal),+], f32: [$($f:literal),+], scale: $s:literal,
          scale_tmp: $u:literal }),+],
     [$($ops:tt)*]) => {
        #[doc = concat!("GEMV tile `", stringify!($name), "` (see [`TileFn`]), ",
                        stringify!($kind), ", ", stringify!($mode), " group(s) per block.")]
        ///
        /// # Safety
        ///
        /// As [`TileFn`]: one LHS row, the listed RHS tiles (`rhs_stride` apart), and
        /// writable outputs for all their columns.
        #[target_feature(enable = "dotprod")]
        pub(crate) unsafe fn $name($t: &Tile) {
            // SAFETY: dotprod is enabled by the caller's contract. The block loop reads the
            // row's `blocks` blocks and then its extras, each listed RHS tile's `blocks` blocks
            // (data and scales) and then its extras, and 64 bytes of the zeros of `CONSTS`; all inside the
            // packed buffers. The stores write the tiles' columns at `out`. Every vector
            // register is declared clobbered.
            unsafe {
                asm_v!(all;
                    // 0xF0 mask, family set-up, f32 accumulators = +0.0
                    "movi v31.16b, #0xf0",
                    $fam!(init),
                    $(zero_regs!($($f),+),)+
                    // block loop
                    "1:",
                    $(blocked_reset!($($a),+),)+
                    $fam!(block_start, $mode, [$(($rhs, $nr, $s)),+]),
                    blocked_groups!($mode, concat!(
                        $fam!(lhs, $mode, $kind),
                        $(gemv_kind_group!($kind, $nr, $rhs, $tr, [$($a),+]),)+
                    )),
                    $fam!(block_end_lhs, $mode),
                    // fold lanes into columns, float(S), one FMLA per column with the scale
                    $(
                        $fam!(fold, $kind, $nr, [$($a),+]),
                        $fam!(block_scale, $nr, $rhs, [$($c),+], [$($f),+], $s, $u),
                    )+
                    "subs {nb}, {nb}, #1",
                    "b.ne 1b",
                    // final epilogue and stores
                    $fam!(finish_params),
                    $($fam!(finish, $nr, $rhs, [$($f),+]),)+
                    $(blocked_gemv_store!($out, $nr, [$($f),+]),)+
                    lhs = inout(reg) $t.lhs[0] => _,
                    $($rhs = inout(reg) $t.rhs.wrapping_add($i * $t.rhs_stride) => _,)+
                    nb = inout(reg) $t.blocks => _,
                    zero = in(reg) $t.zero,
                    out = inout(reg) $t.out => _,
                    lo = in(reg) $t.lo,
                    hi = in(reg) $t.hi,
                    $($ops)*
                );
            }
        }
    };
}

/// The GEMV tile shapes of the per-block families and their registers (LHS v0-v3, RHS
/// v4-v11, low nibbles v12-v15 / v12-v19, integer accumulators v16-v23, f32 accumulators
/// v24-v27, block scales v29/v30 (nr 8) or beside the nr 4 RHS registers, v28 for the family,
/// v31 mask). kr 16: `x16_nr8` (2 tiles of 8), `x8_nr8`, `x16_nr4` (4 tiles of 4), `x8_nr4`,
/// `x4_nr4`; kr 8 (`_k8`, one accumulator per 4 columns): `x16_nr8_k8`, `x8_nr8_k8`,
/// `x16_nr4_k8`, `x4_nr4_k8`.
#[rustfmt::skip]
macro_rules! blocked_gemv_shape {
    (x16_nr8, $name:ident($t:ident), $fam:ident, $out:ident, $mode:ident, $ops:tt) => {
        blocked_gemv_tile!($name($t), $fam, $out, k16, $mode, [
            { rhs: rhs0, tile: 0, nr: 8, low: ["12", "13", "14", "15", "12", "13", "14", "15"],
              acc: ["16", "17", "18", "19"], sums: ["16", "17"], f32: ["24", "25"],
              scale: "29", scale_tmp: "4" },
            { rhs: rhs1, tile: 1, nr: 8, low: ["12", "13", "14", "15", "12", "13", "14", "15"],
              acc: ["20", "21", "22", "23"], sums: ["20", "21"], f32: ["26", "27"],
              scale: "30", scale_tmp: "5" }
        ], $ops);
    };
    (x8_nr8, $name:ident($t:ident), $fam:ident, $out:ident, $mode:ident, $ops:tt) => {
        blocked_gemv_tile!($name($t), $fam, $out, k16, $mode, [
            { rhs: rhs0, tile: 0, nr: 8, low: ["12", "16", "13", "17", "14", "18", "15", "19"],
              acc: ["20", "21", "22", "23"], sums: ["20", "21"], f32: ["24", "25"],
              scale: "29", scale_tmp: "4" }
        ], $ops);
    };
    (x16_nr4, $name:ident($t:ident), $fam:ident, $out:ident, $mode:ident, $ops:tt) => {
        blocked_gemv_tile!($name($t), $fam, $out, k16, $mode, [
            { rhs: rhs0, tile: 0, nr: 4, low: ["12", "13", "14", "15"],
              acc: ["16", "17"], sums: ["16"], f32: ["24"],
              scale: "6", scale_tmp: "6" },
            { rhs: rhs1, tile: 1, nr: 4, low: ["12", "13", "14", "15"],
              acc: ["18", "19"], sums: ["18"], f32: ["25"],
              scale: "7", scale_tmp: "7" },
            { rhs: rhs2, tile: 2, nr: 4, low: ["12", "13", "14", "15"],
              acc: ["20", "21"], sums: ["20"], f32: ["26"],
              scale: "10", scale_tmp: "10" },
            { rhs: rhs3, tile: 3, nr: 4, low: ["12", "13", "14", "15"],
              acc: ["22", "23"], sums: ["22"], f32: ["27"],
              scale: "11", scale_tmp: "11" }
        ], $ops);
    };
    (x8_nr4, $name:ident($t:ident), $fam:ident, $out:ident, $mode:ident, $ops:tt) => {
        blocked_gemv_tile!($name($t), $fam, $out, k16, $mode, [
            { rhs: rhs0, tile: 0, nr: 4, low: ["12", "13", "14", "15"],
              acc: ["16", "17"], sums: ["16"], f32: ["24"],
              scale: "6", scale_tmp: "6" },
            { rhs: rhs1, tile: 1, nr: 4, low: ["12", "13", "14", "15"],
              acc: ["18", "19"], sums: ["18"], f32: ["25"],
              scale: "7", scale_tmp: "7" }
        ], $ops);
    };
    (x4_nr4, $name:ident($t:ident), $fam:ident, $out:ident, $mode:ident, $ops:tt) => {
        blocked_gemv_tile!($name($t), $fam, $out, k16, $mode, [
            { rhs: rhs0, tile: 0, nr: 4, low: ["12", "16", "13", "17"],
              acc: ["20", "21"], sums: ["20"], f32: ["24"],
              scale: "6", scale_tmp: "6" }
        ], $ops);
    };
    (x16_nr8_k8, $name:ident($t:ident), $fam:ident, $out:ident, $mode:ident, $ops:tt) => {
        blocked_gemv_tile!($name($t), $fam, $out, k8, $mode, [
            { rhs: rhs0, tile: 0, nr: 8, low: ["12", "13", "14", "15"],
              acc: ["16", "17"], sums: ["16", "17"], f32: ["24", "25"],
              scale: "29", scale_tmp: "4" },
            { rhs: rhs1, tile: 1, nr: 8, low: ["12", "13", "14", "15"],
              acc: ["18", "19"], sums: ["18", "19"], f32: ["26", "27"],
              scale: "30", scale_tmp: "5" }
        ], $ops);
    };
    (x8_nr8_k8, $name:ident($t:ident), $fam:ident, $out:ident, $mode:ident, $ops:tt) => {
        blocked_gemv_tile!($name($t), $fam, $out, k8, $mode, [
            { rhs: rhs0, tile: 0, nr: 8, low: ["12", "13", "14", "15"],
              acc: ["16", "17"], sums: ["16", "17"], f32: ["24", "25"],
              scale: "29", scale_tmp: "4" }
        ], $ops);
    };
    (x16_nr4_k8, $name:ident($t:ident), $fam:ident, $out:ident, $mode:ident, $ops:tt) => {
        blocked_gemv_tile!($name($t), $fam, $out, k8, $mode, [
            { rhs: rhs0, tile: 0, nr: 4, low: ["12", "13", "14", "15"],
              acc: ["16"], sums: ["16"], f32: ["24"],
              scale: "8", scale_tmp: "8" },
            { rhs: rhs1, tile: 1, nr: 4, low: ["12", "13", "14", "15"],
              acc: ["17"], sums: ["17"], f32: ["25"],
              scale: "9", scale_tmp: "9" },
            { rhs: rhs2, tile: 2, nr: 4, low: ["12", "13", "14", "15"],
              acc: ["18"], sums: ["18"], f32: ["26"],
              scale: "10", scale_tmp: "10" },
            { rhs: rhs3, tile: 3, nr: 4, low: ["12", "13", "14", "15"],
              acc: ["19"], sums: ["19"], f32: ["27"],
              scale: "11", scale_tmp: "11" }
        ], $ops);
    };
    (x4_nr4_k8, $name:ident($t:ident), $fam:ident, $out:ident, $mode:ident, $ops:tt) => {
        blocked_gemv_tile!($name($t), $fam, $out, k8, $mode, [
            { rhs: rhs0, tile: 0, nr: 4, low: ["12", "13", "14", "15"],
              acc: ["16"], sums: ["16"], f32: ["24"],
              scale: "8", scale_tmp: "8" }
        ], $ops);
    };
}

/// One GEMM tile function of a per-block family (mr = 4): 1 or 2 LHS tiles `{ lhs: operand,
/// lhs_hi: operand of the second data half, tile: index, x01, x23: LHS block registers of rows
/// 0-1 / 2-3, acc: [integer accumulators], f32: [f32 accumulators], scale: LHS scale register }`
/// x one column quad, a block loop over `{nb}` blocks around a loop over `{gpb}` groups.
/// The family hook `$fam` supplies `init`, `block_start`, `group` (the `gemm_group` call with
/// the family's LHS addressing), `block_scales` (the quad's block scales into v8, from `{sc}`,
/// which then steps `{bb}` bytes to the next block's), `block_end` (converting them, the
/// `FMLA`s), `finish_params` and `finish` (one LHS tile's final epilogue and stores);
/// `[$($ops)*]` are its extra operands. Registers as for `gemm_group`, plus v16-v23 integer
/// and v24-v31 f32 accumulators, v8 the quad's 16-bit block scales, v9-v11 and v15 for the
/// family.
#[rustfmt::skip]
macro_rules! blocked_gemm_tile {
    ($name:ident($t:ident), $fam:ident, $out:ident, $rows:literal,
     [$({ lhs: $l:ident, lhs_hi: $h:ident, tile: $i:literal, x01: $x01:literal, x23: $x23:literal,
          acc: [$($a:literal),+], f32: [$($f:literal),+], scale: $ls:literal }),+],
     [$($ops:tt)*]) => {
        #[doc = concat!("GEMM tile ", $rows, " x 4 (one column quad; see [`TileFn`]).")]
        ///
        /// # Safety
        ///
        /// As [`TileFn`]: the tile's LHS tiles, its RHS quad (data, scales, extras), and a
        /// writable output tile with `out_stride` bytes between rows.
        #[target_feature(enable = "dotprod")]
        pub(crate) unsafe fn $name($t: &Tile) {
            // SAFETY: dotprod is enabled by the caller's contract. The loads stay inside the
            // listed LHS tiles (`blocks` blocks, then the extras) and the RHS tile: the quad's
            // chunks (`rhs`, stepping by `rhs_step`, skipping the block scales), its scales
            // (`scales`, `block_bytes` apart) and its extras; no chunk is read ahead. 64 bytes
            // of the zeros of `CONSTS` are read. The stores write the tile's rows at `out + i *
            // out_stride`. Every vector register is declared clobbered.
            unsafe {
                asm_v!(all;
                    // 0xF0 mask, family set-up, f32 accumulators = +0.0
                    "movi v12.16b, #0xf0",
                    $fam!(init),
                    $(zero_regs!($($f),+),)+
                    // block loop
                    "1:",
                    $(blocked_reset!($($a),+),)+
                    $fam!(block_start, $([$l, $h, $ls]),+),
                    // group loop: chunk 0, then the group
                    "mov {gc}, {gpb}",
                    "2:",
                    gemm_load!("0", "1"),
                    $fam!(group, $([$l, $h, $x01, $x23, [$($a),+]]),+),
                    "subs {gc}, {gc}, #1",
                    "b.ne 2b",
                    // the quad's scales of the block into v8 (and on), then the family's
                    // conversion and FMLA per row; skip the block's extras to the next data
                    $fam!(block_scales),
                    $fam!(block_end, $([$l, $h, $ls, [$($a),+], [$($f),+]]),+),
                    "add {rhs}, {rhs}, {skip}",
                    "subs {nb}, {nb}, #1",
                    "b.ne 1b",
                    // final epilogue, row by row
                    $fam!(finish_params),
                    $($fam!(finish, $out, $l, [$($f),+]),)+
                    $($l = inout(reg) $t.lhs[$i] => _,)+
                    rhs = inout(reg) $t.rhs => _,
                    rstep = in(reg) $t.rhs_step,
                    sc = inout(reg) $t.scales => _,
                    bb = in(reg) $t.block_bytes,
                    skip = in(reg) $t.skip,
                    nb = inout(reg) $t.blocks => _,
                    gc = out(reg) _,
                    gpb = in(reg) $t.groups,
                    zero = in(reg) $t.zero,
                    out = inout(reg) $t.out => _,
                    stride = in(reg) $t.out_stride,
                    lo = in(reg) $t.lo,
                    hi = in(reg) $t.hi,
                    $($ops)*
                );
            }
        }
    };
}

/// The GEMM tile shapes of the per-block families: `rows8` (2 LHS tiles) and `rows4` (1),
/// with the register allocation of `blocked_gemm_tile`; `$ops` as there.
#[rustfmt::skip]
macro_rules! blocked_gemm_shape {
    (rows4, $name:ident($t:ident), $fam:ident, $out:ident, $ops:tt) => {
        blocked_gemm_tile!($name($t), $fam, $out, 4, [
            { lhs: l0, lhs_hi: h0, tile: 0, x01: "4", x23: "5",
              acc: ["16", "17", "18", "19"], f32: ["24", "25", "26", "27"], scale: "10" }
        ], $ops);
    };
    (rows8, $name:ident($t:ident), $fam:ident, $out:ident, $ops:tt) => {
        blocked_gemm_tile!($name($t), $fam, $out, 8, [
            { lhs: l0, lhs_hi: h0, tile: 0, x01: "4", x23: "5",
              acc: ["16", "17", "18", "19"], f32: ["24", "25", "26", "27"], scale: "10" },
            { lhs: l1, lhs_hi: h1, tile: 1, x01: "6", x23: "7",
              acc: ["20", "21", "22", "23"], f32: ["28", "29", "30", "31"], scale: "11" }
        ], $ops);
    };
}

/// `SCVTF #4` of GEMM row accumulators (16 * S per lane, so float(S), exact).
#[rustfmt::skip]
macro_rules! blocked_scvtf {
    ($($a:literal),+) => {
        concat!($("scvtf v", $a, ".4s, v", $a, ".4s, #4\n",)+)
    };
}

/// GEMM epilogue clamp and store of one row (`{out}` advances by `{stride}`): v`$f` clamped to
/// v`$lo`/v`$hi` (FMAX first), stored as output type `$out` (bf16: v16, v17, the integer
/// accumulators, as temporaries).
#[rustfmt::skip]
macro_rules! blocked_clamp_store {
    ($out:ident, $f:literal, $lo:literal, $hi:literal) => {
        concat!(
            "fmax v", $f, ".4s, v", $f, ".4s, v", $lo, ".4s\n",
            "fmin v", $f, ".4s, v", $f, ".4s, v", $hi, ".4s\n",
            out_row4!($out, $f, "16", "17"),
        )
    };
}
