//! Shared pieces of the dotprod (`SDOT`, FEAT_DotProd) tiers of the int4 families: the macros
//! that emit the asm text of one 32-deep K group (load, unpack, `SDOT`), of the block loop and
//! of the per-block float epilogue. The family files put these together into one `asm!` block
//! per output tile; the tiles are walked by the drivers both asm tiers share
//! ([`crate::matmul::arch::asm`]).
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
//!
//! The per-channel families (`qsi4cxp`, `qsi8cxp`, `qsu2cxp`) build their tiles on the skeletons
//! `gemv_tile` (with the `nr = 4` shapes `per_channel_gemv_tiles`) and `per_channel_gemm_tiles`
//! (register allocations by LHS tile count), giving through hooks only what differs: the K-group
//! text (int4 unpack, int8 as stored, 2-bit `TBL` unpack), the constants set up before the K
//! loop (0xF0 mask, `TBL` tables) with their extra operands, and the GEMM scaling order.
//!
//! Files: this one holds the drivers the family tiers call; [`gemv`] the GEMV K-group text and
//! the per-channel GEMV skeleton and shapes, [`gemm`] the GEMM K-group text, the per-channel GEMM
//! skeleton and epilogue, [`blocked`] the block loop and tile skeletons of the per-block
//! families.

#![cfg(target_arch = "aarch64")]

#[macro_use]
mod gemv;
#[macro_use]
mod gemm;
#[macro_use]
mod blocked;

use crate::element::Element;
use crate::matmul::{Packing, TileStrides, UncheckedArgs};

pub(crate) use crate::matmul::arch::asm::{Layout, Tile, TileFn, TileKernel, gemm, gemv};

pub(crate) use crate::matmul::MAX_SIMD_BLOCK_LEN as MAX_BL;

/// What the per-block drivers need from a family.
pub(crate) struct BlockedFamily<O> {
    /// The family's packed layout of `args` for a packing, with the call's tile strides
    /// (`asm_layout` of the family module).
    pub(crate) layout: fn(&UncheckedArgs<O>, &TileStrides, &Packing) -> Option<Layout>,
    /// The family's scalar kernel (for `bl > MAX_BL`).
    pub(crate) scalar: unsafe fn(&Packing, &UncheckedArgs<O>, &TileStrides),
}
// (The per-block families take no parameters: `UncheckedArgs<O>` is `UncheckedArgs<O, ()>`.)

/// Per-block GEMV ([`gemv`]) on packing `p`: `wide[0]`/`narrow[0]` are the tile functions for
/// `bl = 32` (one group per block), `wide[1]`/`narrow[1]` those for any `bl`.
///
/// # Safety
///
/// The contract of [`Kernel::run_unchecked`](crate::Kernel::run_unchecked) for a kernel of
/// `fam` with packing `p` (`mr = 1`), `strides` its tile strides; the tile functions are of that packing, `wide` over
/// `tiles` RHS tiles, `nr * tiles <= 16`.
pub(crate) unsafe fn blocked_gemv<O: Element>(
    args: &UncheckedArgs<O>,
    strides: &TileStrides,
    p: &Packing,
    fam: &BlockedFamily<O>,
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
pub(crate) unsafe fn blocked_gemm<O: Element>(
    args: &UncheckedArgs<O>,
    strides: &TileStrides,
    p: &Packing,
    fam: &BlockedFamily<O>,
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
pub(crate) unsafe fn per_channel_gemv<O: Element, P>(
    args: &UncheckedArgs<O, P>,
    strides: &TileStrides,
    p: &Packing,
    layout: impl Fn(&UncheckedArgs<O, P>, &TileStrides, &Packing) -> Layout,
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
pub(crate) unsafe fn per_channel_gemm<O: Element, P>(
    args: &UncheckedArgs<O, P>,
    strides: &TileStrides,
    p: &Packing,
    layout: impl Fn(&UncheckedArgs<O, P>, &TileStrides, &Packing) -> Layout,
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
