//! GEMV (`mr = 1`) pieces of the dotprod tier: the K-group text (LHS broadcast, RHS loads,
//! unpack, `SDOT`), the per-channel GEMV tile skeleton (`gemv_tile`), its `nr = 4` shapes
//! (`per_channel_gemv_tiles`) and epilogue.

// ---------------------------------------------------------------------------------------------
// GEMV K-group pieces (mr = 1, kr = 16). Registers:
//   v0-v3    LHS depths 0-7, 8-15 (low nibbles), 16-23, 24-31 (high nibbles) of the group,
//            each in both 64-bit halves
//   v4-v7    RHS group bytes 0-7 of column pairs (0,1), (2,3), (4,5), (6,7)
//   v8-v11   RHS group bytes 8-15 of the same pairs (nr 4: v4, v5, v8, v9 only)
//   t regs   16 * low nibbles of a pair (the high nibbles stay in place); given per pair
//   v31      0xF0 bytes
// ---------------------------------------------------------------------------------------------

/// GEMV LHS of one group. `k16`: `LD4R` of 4 x 8 bytes into v0-v3 (post-increments `$lhs`
/// by 32); `k16, split`: the low-nibble depths (16 bytes) from `$lo`, the high-nibble depths
/// from `$hi` (`LD2R` each, both post-incremented by 16). `k8`: the plain 32 bytes into
/// v0 (depths 0-15) and v1 (16-31); `k8, split`: v0 from `$lo`, v1 from `$hi`.
#[rustfmt::skip]
macro_rules! gemv_lhs {
    (k16, $lhs:literal) => {
        concat!("ld4r {{v0.2d, v1.2d, v2.2d, v3.2d}}, [{", $lhs, "}], #32\n")
    };
    (k16, split, $lo:literal, $hi:literal) => {
        concat!(
            "ld2r {{v0.2d, v1.2d}}, [{", $lo, "}], #16\n",
            "ld2r {{v2.2d, v3.2d}}, [{", $hi, "}], #16\n",
        )
    };
    (k8, $lhs:literal) => {
        concat!("ldp q0, q1, [{", $lhs, "}], #32\n")
    };
    (k8, split, $lo:literal, $hi:literal) => {
        concat!("ldr q0, [{", $lo, "}], #16\n", "ldr q1, [{", $hi, "}], #16\n")
    };
}

/// GEMV RHS loads of one group of an `nr`-column tile (post-increments `$rhs` by `8 * nr`).
#[rustfmt::skip]
macro_rules! gemv_rhs {
    (4, $rhs:ident) => {
        concat!(
            "ldp q8, q9, [{", stringify!($rhs), "}, #32]\n", // bytes 8-15, pairs (0,1), (2,3)
            "ldp q4, q5, [{", stringify!($rhs), "}], #64\n", // bytes 0-7
        )
    };
    (8, $rhs:ident) => {
        concat!(
            "ldp q6, q7, [{", stringify!($rhs), "}, #32]\n", // bytes 0-7, pairs (4,5), (6,7)
            "ldp q8, q9, [{", stringify!($rhs), "}, #64]\n", // bytes 8-15, pairs (0,1), (2,3)
            "ldp q10, q11, [{", stringify!($rhs), "}, #96]\n", // bytes 8-15, pairs (4,5), (6,7)
            "ldp q4, q5, [{", stringify!($rhs), "}], #128\n", // bytes 0-7, pairs (0,1), (2,3)
        )
    };
}

/// GEMV unpack of one column pair: v`$t0`/v`$t1` = 16 * low nibbles of v`$r0`/v`$r1` (depths
/// 0-7 / 8-15), v`$r0`/v`$r1` keep 16 * high nibbles (depths 16-23 / 24-31).
#[rustfmt::skip]
macro_rules! gemv_unpack {
    ($r0:literal, $r1:literal, $t0:literal, $t1:literal) => {
        concat!(
            "shl v", $t0, ".16b, v", $r0, ".16b, #4\n",
            "shl v", $t1, ".16b, v", $r1, ".16b, #4\n",
            "and v", $r0, ".16b, v", $r0, ".16b, v31.16b\n",
            "and v", $r1, ".16b, v", $r1, ".16b, v31.16b\n",
        )
    };
}

/// GEMV `SDOT`s of one unpacked column pair against v0-v3: low-nibble products into v`$alo`,
/// high-nibble products into v`$ahi` (may be the same register).
#[rustfmt::skip]
macro_rules! gemv_sdot {
    ($r0:literal, $r1:literal, $t0:literal, $t1:literal, $alo:literal, $ahi:literal) => {
        concat!(
            "sdot v", $alo, ".4s, v", $t0, ".16b, v0.16b\n",
            "sdot v", $ahi, ".4s, v", $r0, ".16b, v2.16b\n",
            "sdot v", $alo, ".4s, v", $t1, ".16b, v1.16b\n",
            "sdot v", $ahi, ".4s, v", $r1, ".16b, v3.16b\n",
        )
    };
}

/// GEMV K-group body of one RHS tile (LHS already in v0-v3): load, unpack, multiply, two
/// column pairs at a time. `[$t..]`: two low-nibble registers per pair (pairs 2-3 may reuse
/// those of pairs 0-1); `[$a..]`/`[$b..]`: the per-pair accumulators of the low / high
/// nibbles (may be the same).
#[rustfmt::skip]
macro_rules! gemv_tile_group {
    (4, $rhs:ident, [$t0:literal, $t1:literal, $t2:literal, $t3:literal],
     [$a0:literal, $a1:literal], [$b0:literal, $b1:literal]) => {
        concat!(
            gemv_rhs!(4, $rhs),
            gemv_unpack!("4", "8", $t0, $t1),
            gemv_unpack!("5", "9", $t2, $t3),
            gemv_sdot!("4", "8", $t0, $t1, $a0, $b0),
            gemv_sdot!("5", "9", $t2, $t3, $a1, $b1),
        )
    };
    (8, $rhs:ident,
     [$t0:literal, $t1:literal, $t2:literal, $t3:literal,
      $t4:literal, $t5:literal, $t6:literal, $t7:literal],
     [$a0:literal, $a1:literal, $a2:literal, $a3:literal],
     [$b0:literal, $b1:literal, $b2:literal, $b3:literal]) => {
        concat!(
            gemv_rhs!(8, $rhs),
            gemv_unpack!("4", "8", $t0, $t1),
            gemv_unpack!("5", "9", $t2, $t3),
            gemv_sdot!("4", "8", $t0, $t1, $a0, $b0),
            gemv_sdot!("5", "9", $t2, $t3, $a1, $b1),
            gemv_unpack!("6", "10", $t4, $t5),
            gemv_unpack!("7", "11", $t6, $t7),
            gemv_sdot!("6", "10", $t4, $t5, $a2, $b2),
            gemv_sdot!("7", "11", $t6, $t7, $a3, $b3),
        )
    };
}

/// GEMV kr 8 (`bd = 4`): unpack one RHS chunk register v`$r` (4 columns x 4 bytes: depths
/// `4e..4e+3` in the low nibbles, `16+4e..` in the high ones) into v`$t` (16 * low) and
/// itself (16 * high), and `SDOT` both by element `$e` of the plain LHS v0 (depths 0-15) /
/// v1 (16-31) into v`$alo` / v`$ahi`.
#[rustfmt::skip]
macro_rules! gemv8_chunk {
    ($r:literal, $t:literal, $e:literal, $alo:literal, $ahi:literal) => {
        concat!(
            "shl v", $t, ".16b, v", $r, ".16b, #4\n",
            "and v", $r, ".16b, v", $r, ".16b, v31.16b\n",
            "sdot v", $alo, ".4s, v", $t, ".16b, v0.4b[", $e, "]\n",
            "sdot v", $ahi, ".4s, v", $r, ".16b, v1.4b[", $e, "]\n",
        )
    };
}

/// GEMV K-group body of one kr 8 RHS tile (LHS already in v0/v1): a group is 4 chunks of
/// `4 * nr` bytes (chunk `e`: bytes `4e..4e+3` of every column). `nr = 4`: chunks in v4-v7,
/// `[$t..]` their low-nibble registers, `[$a..]` the low / high accumulators of chunks 0-3
/// (may repeat); `nr = 8`: chunk `e` in v(4+2e) (columns 0-3) and v(5+2e) (4-7), low-nibble
/// registers `[$t..]` reused by chunks 2-3, accumulators of columns 0-3 / 4-7.
#[rustfmt::skip]
macro_rules! gemv8_tile_group {
    (4, $rhs:ident, [$t0:literal, $t1:literal, $t2:literal, $t3:literal],
     [$a0:literal, $a1:literal, $a2:literal, $a3:literal,
      $b0:literal, $b1:literal, $b2:literal, $b3:literal]) => {
        concat!(
            "ldp q6, q7, [{", stringify!($rhs), "}, #32]\n",
            "ldp q4, q5, [{", stringify!($rhs), "}], #64\n",
            gemv8_chunk!("4", $t0, "0", $a0, $b0),
            gemv8_chunk!("5", $t1, "1", $a1, $b1),
            gemv8_chunk!("6", $t2, "2", $a2, $b2),
            gemv8_chunk!("7", $t3, "3", $a3, $b3),
        )
    };
    (8, $rhs:ident, [$t0:literal, $t1:literal, $t2:literal, $t3:literal],
     [$a0:literal, $a1:literal]) => {
        concat!(
            "ldp q6, q7, [{", stringify!($rhs), "}, #32]\n",
            "ldp q8, q9, [{", stringify!($rhs), "}, #64]\n",
            "ldp q10, q11, [{", stringify!($rhs), "}, #96]\n",
            "ldp q4, q5, [{", stringify!($rhs), "}], #128\n",
            gemv8_chunk!("4", $t0, "0", $a0, $a0),
            gemv8_chunk!("5", $t1, "0", $a1, $a1),
            gemv8_chunk!("6", $t2, "1", $a0, $a0),
            gemv8_chunk!("7", $t3, "1", $a1, $a1),
            gemv8_chunk!("8", $t0, "2", $a0, $a0),
            gemv8_chunk!("9", $t1, "2", $a1, $a1),
            gemv8_chunk!("10", $t2, "3", $a0, $a0),
            gemv8_chunk!("11", $t3, "3", $a1, $a1),
        )
    };
}

/// The K-group body of one GEMV tile of group kind `k16` or `k8` (see `gemv_tile_group`,
/// `gemv8_tile_group`), the accumulators shared by both nibbles.
#[rustfmt::skip]
macro_rules! gemv_kind_group {
    (k16, $nr:tt, $rhs:ident, $tr:tt, [$($a:literal),+]) => {
        gemv_tile_group!($nr, $rhs, $tr, [$($a),+], [$($a),+])
    };
    (k8, 4, $rhs:ident, $tr:tt, [$a:literal]) => {
        gemv8_tile_group!(4, $rhs, $tr, [$a, $a, $a, $a, $a, $a, $a, $a])
    };
    (k8, 8, $rhs:ident, $tr:tt, [$a0:literal, $a1:literal]) => {
        gemv8_tile_group!(8, $rhs, $tr, [$a0, $a1])
    };
}

/// Per-channel GEMV epilogue of one RHS tile (`$rhs` at its `rsum`): folds the pair
/// accumulators into columns (`$a0` = columns 0-3, nr 8: `$a1` = columns 4-7) and applies the
/// per-channel arithmetic (docs/formats.md, §Arithmetic: qai8dxp_qsi4cxp and qai8dxp_qsi8cxp
/// kernels; `scale` is `scale16` for int4 weights).
/// The 3-operand nr 4 form starts from columns 0-3 already in `$a0`. Needs v1 = (offset,
/// dq) of the row, v2/v3 = clamp bounds; uses v4-v9.
#[rustfmt::skip]
macro_rules! gemv_epilogue {
    (4, $rhs:literal, $a0:literal, $a1:literal) => {
        concat!(
            // lanes (c, c, c+1, c+1) -> columns 0-3
            "addp ", $a0, ".4s, ", $a0, ".4s, ", $a1, ".4s\n",
            gemv_epilogue!(4, $rhs, $a0),
        )
    };
    (4, $rhs:literal, $a0:literal) => {
        concat!(
            // rsum, scale, bias of columns 0-3
            "ldr q4, [{", $rhs, "}]\n",
            "ldr q6, [{", $rhs, "}, #16]\n",
            "ldr q8, [{", $rhs, "}, #32]\n",
            // iacc += rsum * offset; f = float(iacc)
            "mla ", $a0, ".4s, v4.4s, v1.s[0]\n",
            "scvtf ", $a0, ".4s, ", $a0, ".4s\n",
            // s = scale * dq; out = f * s + bias (two roundings)
            "fmul v6.4s, v6.4s, v1.s[1]\n",
            "fmul ", $a0, ".4s, ", $a0, ".4s, v6.4s\n",
            "fadd ", $a0, ".4s, ", $a0, ".4s, v8.4s\n",
            // clamp
            "fmax ", $a0, ".4s, ", $a0, ".4s, v2.4s\n",
            "fmin ", $a0, ".4s, ", $a0, ".4s, v3.4s\n",
        )
    };
    (8, $rhs:literal, $a0:literal, $a1:literal, $a2:literal, $a3:literal) => {
        concat!(
            // lanes (c, c, c+1, c+1) -> columns 0-3 in $a0, 4-7 in $a1
            "addp ", $a0, ".4s, ", $a0, ".4s, ", $a1, ".4s\n",
            "addp ", $a1, ".4s, ", $a2, ".4s, ", $a3, ".4s\n",
            // rsum, scale, bias of columns 0-7
            "ldp q4, q5, [{", $rhs, "}]\n",
            "ldp q6, q7, [{", $rhs, "}, #32]\n",
            "ldp q8, q9, [{", $rhs, "}, #64]\n",
            // iacc += rsum * offset; f = float(iacc)
            "mla ", $a0, ".4s, v4.4s, v1.s[0]\n",
            "mla ", $a1, ".4s, v5.4s, v1.s[0]\n",
            "scvtf ", $a0, ".4s, ", $a0, ".4s\n",
            "scvtf ", $a1, ".4s, ", $a1, ".4s\n",
            // s = scale * dq; out = f * s + bias (two roundings)
            "fmul v6.4s, v6.4s, v1.s[1]\n",
            "fmul v7.4s, v7.4s, v1.s[1]\n",
            "fmul ", $a0, ".4s, ", $a0, ".4s, v6.4s\n",
            "fmul ", $a1, ".4s, ", $a1, ".4s, v7.4s\n",
            "fadd ", $a0, ".4s, ", $a0, ".4s, v8.4s\n",
            "fadd ", $a1, ".4s, ", $a1, ".4s, v9.4s\n",
            // clamp
            "fmax ", $a0, ".4s, ", $a0, ".4s, v2.4s\n",
            "fmax ", $a1, ".4s, ", $a1, ".4s, v2.4s\n",
            "fmin ", $a0, ".4s, ", $a0, ".4s, v3.4s\n",
            "fmin ", $a1, ".4s, ", $a1, ".4s, v3.4s\n",
        )
    };
}

/// Epilogue prologue shared by the GEMV tiles: v1 = (offset, dq) of the row (`{lhs}` at the
/// row's extras after the K loop), v2/v3 = clamp bounds.
#[rustfmt::skip]
macro_rules! gemv_row_params {
    () => {
        concat!(
            "ldr d1, [{lhs}]\n",
            "dup v2.4s, {lo:w}\n",
            "dup v3.4s, {hi:w}\n",
        )
    };
}

/// The K loop, two groups per iteration (`$group` once first when the count is odd).
#[rustfmt::skip]
macro_rules! gemv_k_loop {
    ($group:expr) => {
        concat!(
            "tbz {g}, #0, 2f\n",
            $group,
            "2:\n",
            "lsr {g}, {g}, #1\n",
            "cbz {g}, 4f\n",
            "3:\n",
            $group,
            $group,
            "subs {g}, {g}, #1\n",
            "b.ne 3b\n",
            "4:\n",
        )
    };
}

/// One per-channel GEMV tile function (mr = 1) over the RHS tiles `rhs` (operand = its first
/// byte; the 2-bit family also passes its `TBL` tables there, as `tab`): the family's `init` text, zero the accumulators `zero`, the K loop over `{g}` groups
/// of `group` (LHS load, then load, unpack if int4, and `SDOT` per RHS tile), `fold` the accumulators into the pairs (or columns)
/// the epilogue takes, the row parameters, `epilogue` per RHS tile, then the conversion to the
/// output type `out` and the store of the `store` registers (4 columns each, in order; bf16
/// converts with v28/v29 as temporaries). `clobbers` lists every vector register the text
/// writes (`all`, or a list, to which v28 and v29 are added).
#[rustfmt::skip]
macro_rules! gemv_tile {
    ($name:ident($t:ident), $doc:literal, rhs: [$($rhs:ident = $rhs_at:expr),+],
     init: $init:expr, zero: [$($z:literal),+], group: $group:expr, fold: $fold:expr, epilogue: $epilogue:expr,
     out: $out:ident, store: [$($s:literal),+], clobbers: $clobbers:tt $(,)?) => {
        gemv_tile!(@clobbers $clobbers, {
            $name($t), $doc, rhs: [$($rhs = $rhs_at),+], init: $init, zero: [$($z),+],
            group: $group, fold: $fold, epilogue: $epilogue,
            store: out_cols!($out, keep, [$($s),+], "28", "29"),
        });
    };
    (@clobbers all, {$($body:tt)*}) => {
        gemv_tile!(@fn $($body)* clobbers: all);
    };
    (@clobbers [$($c:tt),+], {$($body:tt)*}) => {
        gemv_tile!(@fn $($body)* clobbers: [$($c,)+ "v28", "v29"]);
    };
    (@fn $name:ident($t:ident), $doc:literal, rhs: [$($rhs:ident = $rhs_at:expr),+],
     init: $init:expr, zero: [$($z:literal),+], group: $group:expr, fold: $fold:expr, epilogue: $epilogue:expr,
     store: $store:expr, clobbers: $clobbers:tt $(,)?) => {
        #[doc = concat!("GEMV tile ", $doc, " (see [`TileFn`]).")]
        ///
        /// # Safety
        ///
        /// As [`TileFn`]: one LHS row, the RHS tiles of the doc line, and writable outputs
        /// for all their columns.
        #[target_feature(enable = "dotprod")]
        pub(crate) unsafe fn $name($t: &Tile) {
            // SAFETY: dotprod is enabled by the caller's contract. The loads stay inside
            // the row (Kp + 8 bytes) and the listed RHS tiles (whole packed tiles,
            // `rhs_stride` apart; `tab`: the 32 bytes of `Tile::table`); the store writes the tiles' columns at `out`. Every
            // vector register written is in `clobbers`.
            unsafe {
                asm_v!($clobbers;
                    // the family's constants (int4: the 0xF0 mask); zero the accumulators
                    $init,
                    zero_regs!($($z),+),
                    // K loop: LHS, then per RHS tile its group
                    gemv_k_loop!($group),
                    // fold the accumulators; row parameters; epilogue per RHS tile; store
                    $fold,
                    gemv_row_params!(),
                    $epilogue,
                    $store,
                    lhs = inout(reg) $t.lhs[0] => _,
                    $($rhs = inout(reg) $rhs_at => _,)+
                    g = inout(reg) $t.groups => _,
                    out = in(reg) $t.out,
                    lo = in(reg) $t.lo,
                    hi = in(reg) $t.hi,
                );
            }
        }
    };
}

/// Per-channel GEMV tile functions over `nr = 4` RHS tiles on [`gemv_tile!`], one per `shape:
/// name = group` entry, `group` the family's K-group text (the LHS load, then per RHS tile its
/// loads and `SDOT`s into the shape's accumulators). RHS tile `t` is the operand `rhs` (`x4`
/// shapes) or `r0`..`r3` (`x16`: 4 consecutive RHS tiles sharing the LHS loads), with the
/// accumulators v(20+2t), v(21+2t):
///
/// * `x4_cols`, `x16_cols`: each lane one column (`SDOT` by element of the plain LHS row); the
///   two accumulators of a tile are added after the K loop;
/// * `x4_pairs`, `x16_pairs`: lanes (c, c, c+1, c+1) (vector `SDOT` of the LHS duplicated in
///   both halves), v(20+2t) columns 0-1, v(21+2t) columns 2-3, folded by the epilogue's `ADDP`;
///   `x4_pairs` has a second pair v22/v23 (odd chunks), added after the K loop.
///
/// `init`: the family's constants; `ops`: its extra operands, after the RHS tiles' (`tab =
/// t.consts`); `$t` names the `Tile` argument. Every vector register is declared clobbered.
#[rustfmt::skip]
macro_rules! per_channel_gemv_tiles {
    ($t:ident, $out:ident, init: $init:expr, ops: $ops:tt,
     $($shape:ident: $name:ident = $group:expr),+ $(,)?) => {
        $(per_channel_gemv_tiles!(@shape $shape, $name, $group, ($t, $out, $init, $ops));)+
    };
    (@shape x4_cols, $name:ident, $group:expr, $c:tt) => {
        per_channel_gemv_tiles!(@x4 $name, $group, $c, zero: ["20", "21"],
            fold: "add v20.4s, v20.4s, v21.4s\n",
            epilogue: gemv_epilogue!(4, "rhs", "v20"));
    };
    (@shape x4_pairs, $name:ident, $group:expr, $c:tt) => {
        per_channel_gemv_tiles!(@x4 $name, $group, $c, zero: ["20", "21", "22", "23"],
            fold: concat!("add v20.4s, v20.4s, v22.4s\n", "add v21.4s, v21.4s, v23.4s\n"),
            epilogue: gemv_epilogue!(4, "rhs", "v20", "v21"));
    };
    (@shape x16_cols, $name:ident, $group:expr, $c:tt) => {
        per_channel_gemv_tiles!(@x16 $name, $group, $c,
            fold: concat!(
                "add v20.4s, v20.4s, v21.4s\n", "add v22.4s, v22.4s, v23.4s\n",
                "add v24.4s, v24.4s, v25.4s\n", "add v26.4s, v26.4s, v27.4s\n",
            ),
            epilogue: concat!(
                gemv_epilogue!(4, "r0", "v20"), gemv_epilogue!(4, "r1", "v22"),
                gemv_epilogue!(4, "r2", "v24"), gemv_epilogue!(4, "r3", "v26"),
            ));
    };
    (@shape x16_pairs, $name:ident, $group:expr, $c:tt) => {
        per_channel_gemv_tiles!(@x16 $name, $group, $c,
            fold: "",
            epilogue: concat!(
                gemv_epilogue!(4, "r0", "v20", "v21"), gemv_epilogue!(4, "r1", "v22", "v23"),
                gemv_epilogue!(4, "r2", "v24", "v25"), gemv_epilogue!(4, "r3", "v26", "v27"),
            ));
    };
    (@x4 $name:ident, $group:expr, ($t:ident, $out:ident, $init:expr, [$($o:ident = $ov:expr),*]),
     zero: $zero:tt, fold: $fold:expr, epilogue: $epilogue:expr) => {
        gemv_tile! { $name($t), "`1 x 4` (one RHS tile)",
            rhs: [rhs = $t.rhs $(, $o = $ov)*],
            init: $init, zero: $zero, group: $group, fold: $fold, epilogue: $epilogue,
            out: $out, store: ["20"], clobbers: all,
        }
    };
    (@x16 $name:ident, $group:expr, ($t:ident, $out:ident, $init:expr, [$($o:ident = $ov:expr),*]),
     fold: $fold:expr, epilogue: $epilogue:expr) => {
        gemv_tile! { $name($t), "`1 x 16` (4 consecutive RHS tiles sharing the LHS loads)",
            rhs: [r0 = $t.rhs, r1 = $t.rhs.wrapping_add($t.rhs_stride),
                  r2 = $t.rhs.wrapping_add(2 * $t.rhs_stride),
                  r3 = $t.rhs.wrapping_add(3 * $t.rhs_stride) $(, $o = $ov)*],
            init: $init, zero: ["20", "21", "22", "23", "24", "25", "26", "27"],
            group: $group, fold: $fold, epilogue: $epilogue,
            out: $out, store: ["20", "22", "24", "26"], clobbers: all,
        }
    };
}
