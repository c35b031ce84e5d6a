//! Shared pieces of the dotprod (`SDOT`, FEAT_DotProd) tiers of the int4 families: the macros
//! that emit the asm text of one 32-deep K group (load, unpack, `SDOT`), of the block loop and
//! of the per-block float epilogue. The family files put these together into one `asm!` block
//! per output tile; the tiles are walked by the drivers both asm tiers share
//! ([`crate::matmul::asm`]).
//!
//! In a packed int4 RHS column, byte `t` of a 32-deep group carries depth `t` (low nibble) and
//! depth `t + 16` (high nibble) of that group (`qsi4cxp`, `qsi4c32p`; `qsi4c32p` with f16 scales
//! pairs depth `q` with `q + bl/2` of its block, the same for `bl = 32`). `SHL #4` turns a
//! register of such bytes into `16 * low nibble` as int8 and `AND #0xF0` into
//! `16 * high nibble`, so every unpacked register feeds `SDOT`s directly and the integer sums
//! come out multiplied by 16 (`SCVTF #4` divides it out exactly). The `kr = 16` packings
//! (`bd = 8`) store a column's group as two 8-byte chunks (bytes 0-7, then 8-15).
//!
//! * GEMV (`mr = 1`): one RHS register holds 2 columns x 8 bytes. `LD4R` (or two `LD2R`)
//!   copies each 8-depth slice of the LHS row into both halves of a register, so a plain
//!   vector `SDOT` gives lanes (c0: d0-3, c0: d4-7, c1: d0-3, c1: d4-7); `ADDP` folds the lane
//!   pairs into columns.
//! * GEMM (`mr = 4`): an output tile is up to 4 LHS tiles x one column quad. `LD2 .4s` splits
//!   a chunk into 4 columns x bytes 0-3 and 4 columns x bytes 4-7, and `SDOT` by element
//!   multiplies such a register by 4 depths of one LHS row, read from the LHS tile as stored.
//!   Each lane is one output column, each accumulator one row of the quad.
//!
//! The per-block families (`bl` a multiple of 32) run a block loop around the group loop:
//! zero the integer accumulators (loads from the zeros of [`CONSTS`]: load pipes, not SIMD ones), sum the
//! block's groups, fold the lanes once (`ADDP`), `SCVTF #4`, and one `FMLA` per column into an
//! f32 accumulator with the block's scale (docs/formats.md, §Arithmetic: qai8dxp_qsi4c32p / qsi8d32p_qsi4c32p kernels). The family supplies the
//! scale handling and the final epilogue through a "hook" macro; the tile skeletons
//! (`blocked_gemv_tile`, `blocked_gemm_tile`) and the register allocations are shared.
//!
//! Register numbers are passed to the macros as strings (`"4"` for v4 / q4 / d4).

#![cfg(target_arch = "aarch64")]

use crate::matmul::{Packing, TileStrides, UncheckedArgs};

pub(crate) use crate::matmul::asm::{Layout, Tile, TileFn, TileKernel, gemm, gemv};

pub(crate) use crate::matmul::MAX_SIMD_BLOCK_LEN as MAX_BL;

/// What the per-block drivers need from a family.
pub(crate) struct BlockedFamily {
    /// The family's packed layout of `args` for a packing, with the call's tile strides
    /// (`asm_layout` of the family module).
    pub(crate) layout: fn(&UncheckedArgs, &TileStrides, &Packing) -> Option<Layout>,
    /// The family's scalar kernel (for `bl > MAX_BL`).
    pub(crate) scalar: unsafe fn(&Packing, &UncheckedArgs, &TileStrides),
}

/// Per-block GEMV ([`gemv`]) on packing `p`: `wide[0]`/`narrow[0]` are the tile functions for
/// `bl = 32` (one group per block), `wide[1]`/`narrow[1]` those for any `bl`.
///
/// # Safety
///
/// The contract of [`Kernel::run_unchecked`](crate::Kernel::run_unchecked) for a kernel of
/// `fam` with packing `p` (`mr = 1`), `strides` its tile strides; the tile functions are of that packing, `wide` over
/// `tiles` RHS tiles, `nr * tiles <= 16`.
pub(crate) unsafe fn blocked_gemv(
    args: &UncheckedArgs,
    strides: &TileStrides,
    p: &Packing,
    fam: &BlockedFamily,
    tiles: usize,
    wide: [TileFn; 2],
    narrow: [TileFn; 2],
) {
    if args.bl > MAX_BL {
        // SAFETY: forwarded from the caller's contract; the scalar kernel takes any packing.
        return unsafe { (fam.scalar)(p, args, strides) };
    }
    let i = usize::from(args.bl != 32);
    let Some(layout) = (fam.layout)(args, strides, p) else { return };
    // SAFETY: forwarded from the caller's contract; the layout is the one of `p`.
    unsafe { gemv(args, &layout, tiles, wide[i], narrow[i]) }
}

/// Per-block GEMM ([`gemm`]) on packing `p` (`kr = 16`), `m_step` rows per step.
///
/// # Safety
///
/// The contract of [`Kernel::run_unchecked`](crate::Kernel::run_unchecked) for a kernel of
/// `fam` with packing `p` (`mr = 4`, `kr = 16`), `strides` its tile strides; `tiles` are that packing's tile functions
/// for 1, 2, ... LHS tiles, and `m_step <= 4 * tiles.len()`.
pub(crate) unsafe fn blocked_gemm(
    args: &UncheckedArgs,
    strides: &TileStrides,
    p: &Packing,
    fam: &BlockedFamily,
    m_step: usize,
    tiles: &[TileFn],
) {
    if args.bl > MAX_BL {
        // SAFETY: forwarded from the caller's contract; the scalar kernel takes any packing.
        return unsafe { (fam.scalar)(p, args, strides) };
    }
    let Some(layout) = (fam.layout)(args, strides, p) else { return };
    // SAFETY: forwarded from the caller's contract; the layout is the one of `p`; the tiles
    // compute 4 columns (a divisor of `nr`), at most `m_step / 4 <= tiles.len()` LHS tiles.
    unsafe { gemm(args, &layout, &quads(tiles)[..m_step / 4]) }
}

/// Per-channel GEMV ([`gemv`]) on packing `p` (`mr = 1`): `wide` over `tiles` RHS tiles per
/// step, `narrow` (one RHS tile) for the columns left over; `layout` is the family's
/// `asm_layout`.
///
/// # Safety
///
/// The contract of [`Kernel::run_unchecked`](crate::Kernel::run_unchecked) for a kernel with
/// packing `p` of the family whose layout `layout` gives, `strides` its tile strides; `wide`
/// and `narrow` are tile functions of that packing, `nr * tiles <= 16`.
#[inline(always)]
pub(crate) unsafe fn per_channel_gemv(
    args: &UncheckedArgs,
    strides: &TileStrides,
    p: &Packing,
    layout: impl Fn(&UncheckedArgs, &TileStrides, &Packing) -> Layout,
    tiles: usize,
    wide: TileFn,
    narrow: TileFn,
) {
    // SAFETY: forwarded from the caller's contract; the layout is the family's for `p`.
    unsafe { gemv(args, &layout(args, strides, p), tiles, wide, narrow) }
}

/// Per-channel GEMM ([`gemm`]) on packing `p` (`mr = 4`), `m_step` rows per step; `layout` is
/// the family's `asm_layout`.
///
/// # Safety
///
/// The contract of [`Kernel::run_unchecked`](crate::Kernel::run_unchecked) for a kernel with
/// packing `p` of the family whose layout `layout` gives, `strides` its tile strides; `tiles`
/// are that packing's tile functions for 1, 2, ... LHS tiles, `m_step <= 4 * tiles.len()`.
#[inline(always)]
pub(crate) unsafe fn per_channel_gemm(
    args: &UncheckedArgs,
    strides: &TileStrides,
    p: &Packing,
    layout: impl Fn(&UncheckedArgs, &TileStrides, &Packing) -> Layout,
    m_step: usize,
    tiles: &[TileFn],
) {
    // SAFETY: forwarded from the caller's contract; the layout is the family's for `p`; each
    // tile function computes one column quad (4 divides `nr`), at most `m_step / 4` LHS tiles.
    unsafe { gemm(args, &layout(args, strides, p), &quads(tiles)[..m_step / 4]) }
}

/// The GEMM table of the dotprod tile functions `tiles` (for 1, 2, ... LHS tiles, at most 4):
/// each computes one column quad.
pub(crate) fn quads(tiles: &[TileFn]) -> [TileKernel; 4] {
    let mut table = [(tiles[0], 4); 4];
    for (entry, f) in table.iter_mut().zip(tiles) {
        entry.0 = *f;
    }
    table
}

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
/// `SCVTF #4` (the sums are 16 * S, so this is float(S), exact). `k16` folds lane pairs
/// (`ADDP`); the `k8` accumulators already hold one column per lane.
#[rustfmt::skip]
macro_rules! blocked_fold {
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

/// Stores one GEMV tile's f32 results (`{out}` advances past them).
#[rustfmt::skip]
macro_rules! blocked_gemv_store {
    (4, [$f0:literal]) => {
        concat!("str q", $f0, ", [{out}], #16\n")
    };
    (8, [$f0:literal, $f1:literal]) => {
        concat!("stp q", $f0, ", q", $f1, ", [{out}], #32\n")
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
/// `[$($ops)*]` are the family's extra `asm!` operands. Registers: v28 belongs to the family
/// (f16: the LHS block scale, bf16: zero), v31 is the 0xF0 mask.
#[rustfmt::skip]
macro_rules! blocked_gemv_tile {
    ($name:ident($t:ident), $fam:ident, $kind:ident, one, $tiles:tt, [$($ops:tt)*]) => {
        blocked_gemv_tile!(@fn $name($t), $fam, $kind, one, $tiles, [$($ops)*]);
    };
    ($name:ident($t:ident), $fam:ident, $kind:ident, many, $tiles:tt, [$($ops:tt)*]) => {
        blocked_gemv_tile!(@fn $name($t), $fam, $kind, many, $tiles,
                           [gc = out(reg) _, gpb = in(reg) $t.groups, $($ops)*]);
    };
    (@fn $name:ident($t:ident), $fam:ident, $kind:ident, $mode:ident,
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
        unsafe fn $name($t: &Tile) {
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
                        blocked_fold!($kind, $nr, [$($a),+]),
                        $fam!(block_scale, $nr, $rhs, [$($c),+], [$($f),+], $s, $u),
                    )+
                    "subs {nb}, {nb}, #1",
                    "b.ne 1b",
                    // final epilogue and stores
                    $fam!(finish_params),
                    $($fam!(finish, $nr, $rhs, [$($f),+]),)+
                    $(blocked_gemv_store!($nr, [$($f),+]),)+
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
    (x16_nr8, $name:ident($t:ident), $fam:ident, $mode:ident, $ops:tt) => {
        blocked_gemv_tile!($name($t), $fam, k16, $mode, [
            { rhs: rhs0, tile: 0, nr: 8, low: ["12", "13", "14", "15", "12", "13", "14", "15"],
              acc: ["16", "17", "18", "19"], sums: ["16", "17"], f32: ["24", "25"],
              scale: "29", scale_tmp: "4" },
            { rhs: rhs1, tile: 1, nr: 8, low: ["12", "13", "14", "15", "12", "13", "14", "15"],
              acc: ["20", "21", "22", "23"], sums: ["20", "21"], f32: ["26", "27"],
              scale: "30", scale_tmp: "5" }
        ], $ops);
    };
    (x8_nr8, $name:ident($t:ident), $fam:ident, $mode:ident, $ops:tt) => {
        blocked_gemv_tile!($name($t), $fam, k16, $mode, [
            { rhs: rhs0, tile: 0, nr: 8, low: ["12", "16", "13", "17", "14", "18", "15", "19"],
              acc: ["20", "21", "22", "23"], sums: ["20", "21"], f32: ["24", "25"],
              scale: "29", scale_tmp: "4" }
        ], $ops);
    };
    (x16_nr4, $name:ident($t:ident), $fam:ident, $mode:ident, $ops:tt) => {
        blocked_gemv_tile!($name($t), $fam, k16, $mode, [
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
    (x8_nr4, $name:ident($t:ident), $fam:ident, $mode:ident, $ops:tt) => {
        blocked_gemv_tile!($name($t), $fam, k16, $mode, [
            { rhs: rhs0, tile: 0, nr: 4, low: ["12", "13", "14", "15"],
              acc: ["16", "17"], sums: ["16"], f32: ["24"],
              scale: "6", scale_tmp: "6" },
            { rhs: rhs1, tile: 1, nr: 4, low: ["12", "13", "14", "15"],
              acc: ["18", "19"], sums: ["18"], f32: ["25"],
              scale: "7", scale_tmp: "7" }
        ], $ops);
    };
    (x4_nr4, $name:ident($t:ident), $fam:ident, $mode:ident, $ops:tt) => {
        blocked_gemv_tile!($name($t), $fam, k16, $mode, [
            { rhs: rhs0, tile: 0, nr: 4, low: ["12", "16", "13", "17"],
              acc: ["20", "21"], sums: ["20"], f32: ["24"],
              scale: "6", scale_tmp: "6" }
        ], $ops);
    };
    (x16_nr8_k8, $name:ident($t:ident), $fam:ident, $mode:ident, $ops:tt) => {
        blocked_gemv_tile!($name($t), $fam, k8, $mode, [
            { rhs: rhs0, tile: 0, nr: 8, low: ["12", "13", "14", "15"],
              acc: ["16", "17"], sums: ["16", "17"], f32: ["24", "25"],
              scale: "29", scale_tmp: "4" },
            { rhs: rhs1, tile: 1, nr: 8, low: ["12", "13", "14", "15"],
              acc: ["18", "19"], sums: ["18", "19"], f32: ["26", "27"],
              scale: "30", scale_tmp: "5" }
        ], $ops);
    };
    (x8_nr8_k8, $name:ident($t:ident), $fam:ident, $mode:ident, $ops:tt) => {
        blocked_gemv_tile!($name($t), $fam, k8, $mode, [
            { rhs: rhs0, tile: 0, nr: 8, low: ["12", "13", "14", "15"],
              acc: ["16", "17"], sums: ["16", "17"], f32: ["24", "25"],
              scale: "29", scale_tmp: "4" }
        ], $ops);
    };
    (x16_nr4_k8, $name:ident($t:ident), $fam:ident, $mode:ident, $ops:tt) => {
        blocked_gemv_tile!($name($t), $fam, k8, $mode, [
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
    (x4_nr4_k8, $name:ident($t:ident), $fam:ident, $mode:ident, $ops:tt) => {
        blocked_gemv_tile!($name($t), $fam, k8, $mode, [
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
/// the family's LHS addressing), `block_end` (converting the block scales loaded into v8, the
/// `FMLA`s), `finish_params` and `finish` (one LHS tile's final epilogue and stores);
/// `[$($ops)*]` are its extra operands. Registers as for `gemm_group`, plus v16-v23 integer
/// and v24-v31 f32 accumulators, v8 the quad's 16-bit block scales, v9-v11 and v15 for the
/// family.
#[rustfmt::skip]
macro_rules! blocked_gemm_tile {
    ($name:ident($t:ident), $fam:ident, $rows:literal,
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
        unsafe fn $name($t: &Tile) {
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
                    // the quad's 4 scales of the block (16-bit) into v8, then the family's
                    // conversion and FMLA per row; skip the scales to the next block's data
                    "ld1 {{v8.4h}}, [{sc}], {bb}",
                    $fam!(block_end, $([$l, $h, $ls, [$($a),+], [$($f),+]]),+),
                    "add {rhs}, {rhs}, {skip}",
                    "subs {nb}, {nb}, #1",
                    "b.ne 1b",
                    // final epilogue, row by row
                    $fam!(finish_params),
                    $($fam!(finish, $l, [$($f),+]),)+
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
    (rows4, $name:ident($t:ident), $fam:ident, $ops:tt) => {
        blocked_gemm_tile!($name($t), $fam, 4, [
            { lhs: l0, lhs_hi: h0, tile: 0, x01: "4", x23: "5",
              acc: ["16", "17", "18", "19"], f32: ["24", "25", "26", "27"], scale: "10" }
        ], $ops);
    };
    (rows8, $name:ident($t:ident), $fam:ident, $ops:tt) => {
        blocked_gemm_tile!($name($t), $fam, 8, [
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
/// v`$lo`/v`$hi` (FMAX first).
#[rustfmt::skip]
macro_rules! blocked_clamp_store {
    ($f:literal, $lo:literal, $hi:literal) => {
        concat!(
            "fmax v", $f, ".4s, v", $f, ".4s, v", $lo, ".4s\n",
            "fmin v", $f, ".4s, v", $f, ".4s, v", $hi, ".4s\n",
            "st1 {{v", $f, ".4s}}, [{out}], {stride}\n",
        )
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
/// byte): the family's `init` text, zero the accumulators `zero`, the K loop over `{g}` groups
/// of `group` (LHS load, then load, unpack if int4, and `SDOT` per RHS tile), `fold` the accumulators into the pairs (or columns)
/// the epilogue takes, the row parameters, `epilogue` per RHS tile and `store`. `clobbers`
/// lists every vector register the text writes.
#[rustfmt::skip]
macro_rules! gemv_tile {
    ($name:ident($t:ident), $doc:literal, rhs: [$($rhs:ident = $rhs_at:expr),+],
     init: $init:expr, zero: [$($z:literal),+], group: $group:expr, fold: $fold:expr, epilogue: $epilogue:expr,
     store: $store:expr, clobbers: $clobbers:tt $(,)?) => {
        #[doc = concat!("GEMV tile ", $doc, " (see [`TileFn`]).")]
        ///
        /// # Safety
        ///
        /// As [`TileFn`]: one LHS row, the RHS tiles of the doc line, and writable outputs
        /// for all their columns.
        #[target_feature(enable = "dotprod")]
        unsafe fn $name($t: &Tile) {
            // SAFETY: dotprod is enabled by the caller's contract. The loads stay inside
            // the row (Kp + 8 bytes) and the listed RHS tiles (whole packed tiles,
            // `rhs_stride` apart); the store writes the tiles' columns at `out`. Every
            // vector register written is in `clobbers`.
            unsafe {
                asm_v!($clobbers;
                    // 0xF0 mask; zero the accumulators
                    "movi v31.16b, #0xf0",
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

/// GEMM epilogue of one output row (per-channel families, docs/formats.md, §Arithmetic) and its store (`{out}` advances by
/// `{stride}`): accumulator v`$a`, the row's offset in lane `$i` of v`$off`, dq in lane
/// `$i` of v`$dq`. Needs v0 = rsum, v1 = scale (int4: scale16), v2 = bias of the quad, v12/v13 = clamp.
#[rustfmt::skip]
macro_rules! gemm_row {
    ($a:literal, $off:literal, $dq:literal, $i:literal) => {
        concat!(
            // iacc += rsum * offset; f = float(iacc)
            "mla v", $a, ".4s, v0.4s, v", $off, ".s[", $i, "]\n",
            "scvtf v", $a, ".4s, v", $a, ".4s\n",
            // s = scale * dq; out = f * s + bias (two roundings)
            "fmul v14.4s, v1.4s, v", $dq, ".s[", $i, "]\n",
            "fmul v", $a, ".4s, v", $a, ".4s, v14.4s\n",
            "fadd v", $a, ".4s, v", $a, ".4s, v2.4s\n",
            // clamp, store
            "fmax v", $a, ".4s, v", $a, ".4s, v12.4s\n",
            "fmin v", $a, ".4s, v", $a, ".4s, v13.4s\n",
            "st1 {{v", $a, ".4s}}, [{out}], {stride}\n",
        )
    };
}

/// GEMM epilogue of one LHS tile: its (offset[4], dq[4]) into v`$x01`/v`$x23` (`{l}` at
/// the tile's extras after the K loop), then rows 0-3.
#[rustfmt::skip]
macro_rules! gemm_rows {
    ([$l:ident, $x01:literal, $x23:literal,
      [$a0:literal, $a1:literal, $a2:literal, $a3:literal]]) => {
        concat!(
            "ldp q", $x01, ", q", $x23, ", [{", stringify!($l), "}]\n",
            gemm_row!($a0, $x01, $x23, "0"),
            gemm_row!($a1, $x01, $x23, "1"),
            gemm_row!($a2, $x01, $x23, "2"),
            gemm_row!($a3, $x01, $x23, "3"),
        )
    };
}

/// Per-channel GEMM epilogue of one column quad: its `rsum`, `scale`, `bias` (`{x}` at the
/// quad's `rsum`, the arrays `{xs}` bytes apart) into v0-v2, the clamp bounds into v12/v13,
/// then per LHS tile `[pointer, offset register, dq register, [row accumulators]]` its rows
/// ([`gemm_rows!`]). Uses v14.
#[rustfmt::skip]
macro_rules! gemm_epilogue {
    ($($tile:tt),+) => {
        concat!(
            "ldr q0, [{x}]\n",
            "ldr q1, [{x}, {xs}]\n",
            "add {x}, {x}, {xs}\n",
            "ldr q2, [{x}, {xs}]\n",
            "dup v12.4s, {lo:w}\n",
            "dup v13.4s, {hi:w}\n",
            $(gemm_rows!($tile),)+
        )
    };
}
