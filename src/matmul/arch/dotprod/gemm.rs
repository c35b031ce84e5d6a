//! GEMM (`mr = 4`) pieces of the dotprod tier: the K-group text (RHS `LD2` split, unpack,
//! `SDOT` by element), the per-channel GEMM epilogue and tile skeleton
//! (`per_channel_gemm_tiles`).

// ---------------------------------------------------------------------------------------------
// GEMM K-group pieces (mr = 4, kr = 16): one output tile is up to 4 LHS tiles x one column
// quad (4 columns of an RHS tile). Registers:
//   v0/v1    chunk 0 of the quad after LD2 (columns 0-3 x group bytes 0-3 / bytes 4-7);
//            after the unpack they hold 16 * high nibbles
//   v13/v14  chunk 1 (group bytes 8-11 / 12-15), the same way
//   v2/v3    16 * low nibbles of the chunk in use
//   v4-v11   one 8-deep LHS block: LHS tile t in v(4+2t) (rows 0-1) and v(5+2t) (rows 2-3)
//   v12      0xF0 bytes
// ---------------------------------------------------------------------------------------------

/// GEMM RHS chunk load: `LD2` de-interleaves the 4-byte halves of the quad's 4 columns x
/// 8 bytes into v`$r0` (bytes 0-3) and v`$r1` (bytes 4-7); `{rhs}` advances by `{rstep}` =
/// `8 * nr`, the distance between consecutive chunks.
#[rustfmt::skip]
macro_rules! gemm_load {
    ($r0:literal, $r1:literal) => {
        concat!("ld2 {{v", $r0, ".4s, v", $r1, ".4s}}, [{rhs}], {rstep}\n")
    };
}

/// GEMM RHS unpack: 16 * low nibbles of v`$r0`/v`$r1` into v2/v3, 16 * high nibbles in place.
#[rustfmt::skip]
macro_rules! gemm_unpack {
    ($r0:literal, $r1:literal) => {
        concat!(
            "shl v2.16b, v", $r0, ".16b, #4\n",
            "shl v3.16b, v", $r1, ".16b, #4\n",
            "and v", $r0, ".16b, v", $r0, ".16b, v12.16b\n",
            "and v", $r1, ".16b, v", $r1, ".16b, v12.16b\n",
        )
    };
}

/// 4 `SDOT`s by element: weights v`$w` (4 columns x 4 depths) times the same 4 depths of rows
/// 0-3 of one LHS tile (v`$x01` = rows 0-1, v`$x23` = rows 2-3; element `$e0` of rows 0/2,
/// `$e1` of rows 1/3), into the rows' accumulators.
#[rustfmt::skip]
macro_rules! gemm_sdot4 {
    ($w:literal, $x01:literal, $x23:literal, $e0:literal, $e1:literal,
     [$a0:literal, $a1:literal, $a2:literal, $a3:literal]) => {
        concat!(
            "sdot v", $a0, ".4s, v", $w, ".16b, v", $x01, ".4b[", $e0, "]\n",
            "sdot v", $a1, ".4s, v", $w, ".16b, v", $x01, ".4b[", $e1, "]\n",
            "sdot v", $a2, ".4s, v", $w, ".16b, v", $x23, ".4b[", $e0, "]\n",
            "sdot v", $a3, ".4s, v", $w, ".16b, v", $x23, ".4b[", $e1, "]\n",
        )
    };
}

/// One 8-deep block of every LHS tile (operand `$l`, `$at` completes the address, e.g.
/// `"], #128"` for a post-increment or `", #-64]"` for an offset), times the quad's weights for
/// depths +0..3 (v`$wa`) and +4..7 (v`$wb`).
#[rustfmt::skip]
macro_rules! gemm_block {
    ($wa:literal, $wb:literal, $at:literal,
     $([$l:ident, $x01:literal, $x23:literal, $acc:tt]),+) => {
        concat!(
            $("ldp q", $x01, ", q", $x23, ", [{", stringify!($l), "}", $at, "\n",)+
            $(gemm_sdot4!($wa, $x01, $x23, "0", "2", $acc),)+
            $(gemm_sdot4!($wb, $x01, $x23, "1", "3", $acc),)+
        )
    };
}

/// kr 16 read-ahead of the next group's chunk 0 (`ahead`), or nothing (`last`).
#[rustfmt::skip]
macro_rules! gemm_ahead {
    (ahead) => { gemm_load!("0", "1") };
    (last) => { "" };
}

/// GEMM K-group body (32 depths), chunk 0 already loaded into v0/v1: chunk 0 gives the depths
/// of LHS block "low 0" (low nibbles) and "high 0" (high), chunk 1 those of "low 1" and
/// "high 1". Loads chunk 1, and with `ahead` the next group's chunk 0. Per LHS tile
/// `[low operand, high operand, x01, x23, low-nibble accumulators, high-nibble ones]`; the
/// four address suffixes `[$l0, $h0, $l1, $h1]` place the blocks (see `gemm_block`): with one
/// LHS pointer (qai8dxp, depths 0-7 / 16-23 / 8-15 / 24-31 of a 128-byte group) or two
/// (qsi8d32p with the block's low and high halves apart).
#[rustfmt::skip]
macro_rules! gemm_group {
    ($ahead:tt, [$sl0:literal, $sh0:literal, $sl1:literal, $sh1:literal],
     $([$l:ident, $h:ident, $x01:literal, $x23:literal, $lo:tt, $hi:tt]),+) => {
        concat!(
            gemm_unpack!("0", "1"),
            gemm_load!("13", "14"),
            gemm_block!("2", "3", $sl0, $([$l, $x01, $x23, $lo]),+),
            gemm_block!("0", "1", $sh0, $([$h, $x01, $x23, $hi]),+),
            gemm_unpack!("13", "14"),
            gemm_ahead!($ahead),
            gemm_block!("2", "3", $sl1, $([$l, $x01, $x23, $lo]),+),
            gemm_block!("13", "14", $sh1, $([$h, $x01, $x23, $hi]),+),
        )
    };
}

/// The scaling step of one GEMM output row `f` (v`$a`), dq in lane `$i` of v`$dq`, v1 = the
/// quad's scales. `scale_dq` (the per-channel families' order): `s = scale * dq` (in v14), then
/// `f * s`; `then_dq` (the 2-bit GEMM packing, KleidiAI's order there): `(f * scale) * dq`.
#[rustfmt::skip]
macro_rules! gemm_scale {
    (scale_dq, $a:literal, $dq:literal, $i:literal) => {
        concat!(
            "fmul v14.4s, v1.4s, v", $dq, ".s[", $i, "]\n",
            "fmul v", $a, ".4s, v", $a, ".4s, v14.4s\n",
        )
    };
    (then_dq, $a:literal, $dq:literal, $i:literal) => {
        concat!(
            "fmul v", $a, ".4s, v", $a, ".4s, v1.4s\n",
            "fmul v", $a, ".4s, v", $a, ".4s, v", $dq, ".s[", $i, "]\n",
        )
    };
}

#[rustfmt::skip]
/// GEMM epilogue of one output row (per-channel families, docs/formats.md, §Arithmetic) and its store (`{out}` advances by
/// `{stride}`): accumulator v`$a`, the row's offset in lane `$i` of v`$off`, dq in lane
/// `$i` of v`$dq`, scaled in `$order` ([`gemm_scale!`]). Needs v0 = rsum, v1 = scale (int4:
/// scale16), v2 = bias of the quad, v12/v13 = clamp.
macro_rules! gemm_row {
    ($order:ident, $out:ident, $a:literal, $off:literal, $dq:literal, $i:literal) => {
        concat!(
            // iacc += rsum * offset; f = float(iacc)
            "mla v", $a, ".4s, v0.4s, v", $off, ".s[", $i, "]\n",
            "scvtf v", $a, ".4s, v", $a, ".4s\n",
            // out = f * scale * dq (in the family's order) + bias (each step rounded)
            gemm_scale!($order, $a, $dq, $i),
            "fadd v", $a, ".4s, v", $a, ".4s, v2.4s\n",
            // clamp; convert to the output type (bf16: v3, v15 temporaries); store
            "fmax v", $a, ".4s, v", $a, ".4s, v12.4s\n",
            "fmin v", $a, ".4s, v", $a, ".4s, v13.4s\n",
            out_row4!($out, $a, "3", "15"),
        )
    };
}

/// GEMM epilogue of one LHS tile: its (offset[4], dq[4]) into v`$x01`/v`$x23` (`{l}` at
/// the tile's extras after the K loop), then rows 0-3.
#[rustfmt::skip]
macro_rules! gemm_rows {
    ($order:ident, $out:ident, [$l:ident, $x01:literal, $x23:literal,
      [$a0:literal, $a1:literal, $a2:literal, $a3:literal]]) => {
        concat!(
            "ldp q", $x01, ", q", $x23, ", [{", stringify!($l), "}]\n",
            gemm_row!($order, $out, $a0, $x01, $x23, "0"),
            gemm_row!($order, $out, $a1, $x01, $x23, "1"),
            gemm_row!($order, $out, $a2, $x01, $x23, "2"),
            gemm_row!($order, $out, $a3, $x01, $x23, "3"),
        )
    };
}

/// Per-channel GEMM epilogue of one column quad: its `rsum`, `scale`, `bias` (`{x}` at the
/// quad's `rsum`, the arrays `{xs}` bytes apart) into v0-v2, the clamp bounds into v12/v13,
/// then per LHS tile `[pointer, offset register, dq register, [row accumulators]]` its rows
/// ([`gemm_rows!`]), stored as output type `$out`. `then_dq; $out, ..` scales in the 2-bit
/// GEMM order ([`gemm_scale!`]). Uses v14 (and v3, v15 for bf16).
#[rustfmt::skip]
macro_rules! gemm_epilogue {
    ($out:ident, $($tile:tt),+) => {
        gemm_epilogue!(scale_dq; $out, $($tile),+)
    };
    ($order:ident; $out:ident, $($tile:tt),+) => {
        concat!(
            "ldr q0, [{x}]\n",
            "ldr q1, [{x}, {xs}]\n",
            "add {x}, {x}, {xs}\n",
            "ldr q2, [{x}, {xs}]\n",
            "dup v12.4s, {lo:w}\n",
            "dup v13.4s, {hi:w}\n",
            $(gemm_rows!($order, $out, $tile),)+
        )
    };
}

// ---------------------------------------------------------------------------------------------
// The per-channel GEMM tile skeleton: one column quad x 1-4 LHS tiles, the K loop the family's
// hook supplies, the shared epilogue. Registers: the K loop's (above, or the family's own), and
// per LHS tile t: v(4+2t)/v(5+2t) its block registers, v(16+4t)..v(19+4t) its row accumulators.
// ---------------------------------------------------------------------------------------------

/// 4 `SDOT`s by element: weights v`$w` (4 columns x 4 depths) times the same 4 depths of rows
/// 0-3 (elements 0-3 of LHS register v`$x`, 4 rows x 4 depths as stored), into the rows'
/// accumulators.
#[rustfmt::skip]
macro_rules! sdot_rows {
    ($w:literal, $x:literal, [$a0:literal, $a1:literal, $a2:literal, $a3:literal]) => {
        concat!(
            "sdot v", $a0, ".4s, v", $w, ".16b, v", $x, ".4b[0]\n",
            "sdot v", $a1, ".4s, v", $w, ".16b, v", $x, ".4b[1]\n",
            "sdot v", $a2, ".4s, v", $w, ".16b, v", $x, ".4b[2]\n",
            "sdot v", $a3, ".4s, v", $w, ".16b, v", $x, ".4b[3]\n",
        )
    };
}

/// The plain GEMM K loop: `$body` (one 32-deep group) per iteration, `{g}` iterations.
#[rustfmt::skip]
macro_rules! gemm_loop {
    ($($body:expr),+ $(,)?) => {
        concat!("3:\n", $($body,)+ "subs {g}, {g}, #1\n", "b.ne 3b\n")
    };
}

/// Accumulator set-up and fold of one LHS tile: `split` keeps the low- and high-nibble blocks
/// in separate accumulators (zero both, add them after the K loop), `joint` uses one set (the
/// second list repeats the first).
#[rustfmt::skip]
macro_rules! gemm_accs {
    (zero, split, [$($a:literal),+], [$($h:literal),+]) => {
        concat!($("movi v", $a, ".16b, #0\n",)+ $("movi v", $h, ".16b, #0\n",)+)
    };
    (zero, joint, [$($a:literal),+], $h:tt) => {
        concat!($("movi v", $a, ".16b, #0\n",)+)
    };
    (fold, split, [$($a:literal),+], [$($h:literal),+]) => {
        concat!($("add v", $a, ".4s, v", $a, ".4s, v", $h, ".4s\n",)+)
    };
    (fold, joint, $a:tt, $h:tt) => {
        ""
    };
}

/// The per-channel GEMM tile functions (mr = 4, one column quad; see [`TileFn`]): per `shape:
/// [name(k), ...]` entry, one function per name with the register allocation of `shape`
/// (`rows4`, `rows8`, `rows12`, `rows16`: 1-4 LHS tiles; `rows4_split`, `rows8_split`: the
/// same with a second accumulator set for the high-nibble blocks, see `gemm_accs`). Each: the
/// family's `$fam!(init)` text, zero the accumulators, `$fam!(k_loop(k); tiles)` (the whole K
/// loop over `{g}` groups; per LHS tile `[operand, x01, x23, [low accumulators], [high
/// accumulators]]`), fold the two sets (if apart), then the shared epilogue
/// ([`gemm_epilogue!`], scaled in `order`) stored as output type `$out`. `ops` are the
/// family's extra operands (`name = in(reg) value`, after `rhs`: `{rstep}` for the `LD2` K
/// loops, `{tab}` for a table); `$t` names the `Tile` argument they use.
#[rustfmt::skip]
macro_rules! per_channel_gemm_tiles {
    ($t:ident, $fam:ident, $out:ident, ops: $ops:tt, order: $order:ident,
     $($shape:ident: [$($name:ident($($k:tt)*)),+]),+ $(,)?) => {
        $($(per_channel_gemm_tiles!(@shape $shape, $name, [$($k)*], ($t, $fam, $out, $ops, $order));)+)+
    };
    // LHS tile t: operand l<t>, block registers v(4+2t)/v(5+2t), accumulators v(16+4t)..
    (@shape rows4, $name:ident, $k:tt, $c:tt) => {
        per_channel_gemm_tiles!(@joint $name, $k, $c, "4", [
            (l0, 0, "4", "5", ["16", "17", "18", "19"]),
        ]);
    };
    (@shape rows8, $name:ident, $k:tt, $c:tt) => {
        per_channel_gemm_tiles!(@joint $name, $k, $c, "8", [
            (l0, 0, "4", "5", ["16", "17", "18", "19"]),
            (l1, 1, "6", "7", ["20", "21", "22", "23"]),
        ]);
    };
    (@shape rows12, $name:ident, $k:tt, $c:tt) => {
        per_channel_gemm_tiles!(@joint $name, $k, $c, "12", [
            (l0, 0, "4", "5", ["16", "17", "18", "19"]),
            (l1, 1, "6", "7", ["20", "21", "22", "23"]),
            (l2, 2, "8", "9", ["24", "25", "26", "27"]),
        ]);
    };
    (@shape rows16, $name:ident, $k:tt, $c:tt) => {
        per_channel_gemm_tiles!(@joint $name, $k, $c, "16", [
            (l0, 0, "4", "5", ["16", "17", "18", "19"]),
            (l1, 1, "6", "7", ["20", "21", "22", "23"]),
            (l2, 2, "8", "9", ["24", "25", "26", "27"]),
            (l3, 3, "10", "11", ["28", "29", "30", "31"]),
        ]);
    };
    // Split: the high-nibble accumulators after the low ones.
    (@shape rows4_split, $name:ident, $k:tt, $c:tt) => {
        per_channel_gemm_tiles!(@fn $name, $k, $c, "4", split, [
            (l0, 0, "4", "5", ["16", "17", "18", "19"], ["20", "21", "22", "23"]),
        ]);
    };
    (@shape rows8_split, $name:ident, $k:tt, $c:tt) => {
        per_channel_gemm_tiles!(@fn $name, $k, $c, "8", split, [
            (l0, 0, "4", "5", ["16", "17", "18", "19"], ["24", "25", "26", "27"]),
            (l1, 1, "6", "7", ["20", "21", "22", "23"], ["28", "29", "30", "31"]),
        ]);
    };
    (@joint $name:ident, $k:tt, $c:tt, $rows:literal,
     [$(($l:ident, $i:literal, $x01:literal, $x23:literal, $acc:tt)),+ $(,)?]) => {
        per_channel_gemm_tiles!(@fn $name, $k, $c, $rows, joint,
                                [$(($l, $i, $x01, $x23, $acc, $acc)),+]);
    };
    (@fn $name:ident, [$($k:tt)*],
     ($t:ident, $fam:ident, $out:ident, [$($o:ident = $dir:ident(reg) $ov:expr),*], $order:ident),
     $rows:literal, $mode:ident,
     [$(($l:ident, $i:literal, $x01:literal, $x23:literal, [$($a:literal),+], [$($h:literal),+])),+
      $(,)?]) => {
        #[doc = concat!("GEMM tile ", $rows, " x 4 (one column quad), K loop `", stringify!($($k)*),
                        "` (see [`TileFn`]).")]
        ///
        /// # Safety
        ///
        /// As [`TileFn`]: the tile's LHS tiles, its RHS quad and extras (and `Tile::consts`
        /// where the family reads it), and a writable output tile with `out_stride` bytes
        /// between rows.
        #[target_feature(enable = "dotprod")]
        pub(crate) unsafe fn $name($t: &Tile) {
            // SAFETY: dotprod is enabled by the caller's contract. The K loop reads the data
            // of the listed LHS tiles (4 * Kp bytes each) and of the RHS quad (`rhs`), and at
            // most what the family's `k_loop` documents ahead of it, inside the RHS extras; the
            // epilogue reads the LHS tiles' extras where the loop leaves their pointers and the
            // RHS extras (`extras`, 3 x 16 bytes `extras_step` apart). The stores write the
            // tile's rows at `out + i * out_stride`. Every vector register is declared clobbered.
            unsafe {
                asm_v!(all;
                    // the family's constants; zero the accumulators
                    $fam!(init),
                    $(gemm_accs!(zero, $mode, [$($a),+], [$($h),+]),)+
                    // K loop
                    $fam!(k_loop($($k)*); $([$l, $x01, $x23, [$($a),+], [$($h),+]]),+),
                    // fold the high-nibble accumulators into the low ones (if apart); epilogue
                    $(gemm_accs!(fold, $mode, [$($a),+], [$($h),+]),)+
                    gemm_epilogue!($order; $out, $([$l, $x01, $x23, [$($a),+]]),+),
                    $($l = inout(reg) $t.lhs[$i] => _,)+
                    rhs = inout(reg) $t.rhs => _,
                    $($o = $dir(reg) $ov,)*
                    x = inout(reg) $t.extras => _,
                    xs = in(reg) $t.extras_step,
                    g = inout(reg) $t.groups => _,
                    out = inout(reg) $t.out => _,
                    stride = in(reg) $t.out_stride,
                    lo = in(reg) $t.lo,
                    hi = in(reg) $t.hi,
                );
            }
        }
    };
}
