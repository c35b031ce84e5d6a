//! The machinery the NEON-intrinsics tiers of the int4 families share (`qai8dxp_qsi4cxp`,
//! `qai8dxp_qsi4c32p`, `qsi8d32p_qsi4c32p`): stable `core::arch::aarch64` intrinsics, no
//! `SDOT`/`SMMLA`, for ARMv8.0 cores such as Cortex-A53/A72.
//!
//! One generic tile driver ([`matmul`]) runs `MR x NR` tiles in K passes of `NB` blocks of 4
//! columns; a family ([`Scheme`]) supplies the tile strides and one pass (its K loop and
//! epilogue), built from the pieces here:
//!
//! * [`sum_groups`]: the exact int32 sums `sum q * w` over a run of 32-deep groups;
//! * [`sum_i8_with`] (and [`sum_i8`]): the same for int8 weights, given as registers (the int8
//!   families load them, the 2-bit family expands its codes through its table);
//! * [`per_channel_values_with`] (and [`per_channel_values`]): the per-channel epilogue, with
//!   the family's order of the scale multiplications;
//! * [`block_loop`]: the per-block families' `acc = fma(float(S_b), scale_b, acc)` over blocks
//!   ([`offset_block_loop`]: with the asymmetric families' block offset term first);
//! * the clamp and the store of the valid part of a tile.
//!
//! Integer part (exact, wrapping like the hardware). The nibbles are unpacked to the plain
//! weights `w` in `-8..=7` (low nibble `SHL #4` + `SSHR #4`, high nibble `SSHR #4`), so one
//! product `q * w` lies in `-1016..=1024` and up to 31 of them fit an int16 lane exactly.
//! `SMULL`/`SMLAL(2)` (8 products per instruction) sum 4 (`bd = 8`) or 8 (`bd = 4`) products
//! per int16 lane and group; the lanes are widened into int32 with `SADALP` before they can
//! overflow:
//!
//! * per group (`mr = 4`, or a single group): `ADDP` first folds the lanes of 4 columns into
//!   `[c0 c0 c1 c1 c2 c2 c3 c3]` (16 products per lane) and one `SADDLP` (first group) or
//!   `SADALP` widens them into the sums `[c0 c1 c2 c3]`; the `mr = 4`, `bd = 8` group folds
//!   each row as soon as its partials are complete;
//! * `mr = 1`, two groups or more: the int16 lanes run for up to 7 (`bd = 8`) or 3 (`bd = 4`)
//!   groups, then each is widened into its own int32 register; those are folded at the end.
//!
//! Operand layout per group. A group pairs 16 RHS bytes per column (low and high nibbles) with
//! two 16-depth LHS halves of `16 * mr` bytes each ([`Group`]); no replicating moves in the
//! K loop:
//!
//! * `bd = 8, mr = 1`: `LD4R` (contiguous halves) or two `LD2R` replicate the row's 4 chunks of
//!   8 depths; an RHS register `[even column, odd column]` feeds `SMULL` (low half) and
//!   `SMULL2` (high half) as packed.
//! * `bd = 8, mr = 4`: `LD4` de-interleaves each LHS half into `[chunk 0, chunk 1]` per row
//!   and `ZIP1`/`ZIP2` pair each column's chunks 0 and 1 the same way, so both halves of one
//!   multiply pair belong to one column.
//! * `bd = 4`: `LD4R` replicates 4-byte LHS chunks (4 rows of one chunk, or 4 chunks of the
//!   one row); an RHS register holds 4 columns, low half columns 0-1, high half 2-3.
//!
//! Alignment: the structure loads (`LD4`, `LD2R`, `LD4R`) take the byte pointer without any
//! Rust-level dereference and, like `LDR`, need no alignment while `SCTLR_EL1.A = 0` (Linux,
//! and the usual bare-metal setup, including ci/baremetal). With alignment checking enabled
//! they need their element size (8 or 4 bytes), which `qai8dxp` data meets in an 8-byte
//! aligned buffer but `qsi8d32p` data with `mr = 1` (at `2 + 34 b` for `bl = 32`) does not.
//! Every other access is byte-granular (`LD1`/`ST1` of bytes, unaligned scalar reads).
#![cfg(target_arch = "aarch64")]

use core::arch::aarch64::*;

use half::{bf16, f16};

use crate::element::Element;
use crate::matmul::{Packing, TileStrides, UncheckedArgs};

/// Depths per packed group: the RHS holds `16 * nr` bytes per 32 depths.
pub(crate) const GROUP: usize = 32;

/// Int16 partial sums of one group: `[row][block][slot]`. `bd = 8`: slot `i` is column `i` of
/// the block (8 depth lanes); `bd = 4`: slot 0 holds columns 0-1, slot 1 columns 2-3 (4 depth
/// lanes each), slots 2-3 are unused.
type Partial<const MR: usize, const NB: usize> = [[[int16x8_t; 4]; NB]; MR];

/// Exact int32 sums per row and block of 4 columns: `[row][block] = [c0 c1 c2 c3]`.
pub(crate) type Sums<const MR: usize, const NB: usize> = [[int32x4_t; NB]; MR];

/// F32 values per row and block of 4 columns (`[row][block] = [c0 c1 c2 c3]`).
pub(crate) type Values<const MR: usize, const NB: usize> = [[float32x4_t; NB]; MR];

/// The operands of one group of a K pass (32 depths; `MR`, `NR`, `BD` of the tiles).
#[derive(Clone, Copy)]
pub(crate) struct Group {
    /// The 16 depths the low nibbles multiply: `16 * MR` bytes, chunk-interleaved.
    pub(crate) lo: *const u8,
    /// The 16 depths the high nibbles multiply: `16 * MR` bytes, chunk-interleaved.
    pub(crate) hi: *const u8,
    /// The group's `16 * NR` RHS bytes, advanced to the pass's first column
    /// (`BD * first_column` bytes).
    pub(crate) rhs: *const u8,
}

/// Loads 16 RHS bytes.
///
/// # Safety
///
/// `p` is readable for 16 bytes.
#[target_feature(enable = "neon")]
#[inline]
unsafe fn load16(p: *const u8) -> int8x16_t {
    // SAFETY: caller's contract; LD1 of bytes has no alignment requirement.
    unsafe { vld1q_s8(p.cast()) }
}

/// Splits packed bytes into `(low, high)` nibble weights in `-8..=7` (`SHL`+`SSHR`, `SSHR`).
#[target_feature(enable = "neon")]
#[inline]
fn unpack(x: int8x16_t) -> (int8x16_t, int8x16_t) {
    (vshrq_n_s8::<4>(vshlq_n_s8::<4>(x)), vshrq_n_s8::<4>(x))
}

/// `t + a.low * b.low` (`SMLAL`, 8 int8 products into int16 lanes).
#[target_feature(enable = "neon")]
#[inline]
fn mla_lo(t: int16x8_t, a: int8x16_t, b: int8x16_t) -> int16x8_t {
    vmlal_s8(t, vget_low_s8(a), vget_low_s8(b))
}

/// `t + a.high * b.high` (`SMLAL2`).
#[target_feature(enable = "neon")]
#[inline]
fn mla_hi(t: int16x8_t, a: int8x16_t, b: int8x16_t) -> int16x8_t {
    vmlal_high_s8(t, a, b)
}

/// Adds one `bd = 8`, `mr = 1` group to `t` (4 products per lane). RHS chunk `c` pairs its
/// low nibbles with LHS chunk `c` and its high nibbles with chunk `c + 2`. `CONTIG`:
/// `g.hi == g.lo + 16` (one `LD4R`).
///
/// # Safety
///
/// `MR == 1`; `g` is a group of a 1-row LHS tile and an `NR`-column RHS tile with `NB` blocks
/// of 4 columns left from the pass's first column.
#[target_feature(enable = "neon")]
#[inline]
unsafe fn group_bd8_gemv<const MR: usize, const NR: usize, const NB: usize, const CONTIG: bool>(
    t: &mut Partial<MR, NB>,
    g: Group,
) {
    let [l0, l1, l2, l3] = if CONTIG {
        // SAFETY: the 32 bytes of both halves (caller's contract); alignment: module docs.
        let l = unsafe { vld4q_dup_s64(g.lo.cast()) };
        [l.0, l.1, l.2, l.3]
    } else {
        // SAFETY: 16 bytes each (caller's contract); alignment: module docs.
        let (a, b) = unsafe { (vld2q_dup_s64(g.lo.cast()), vld2q_dup_s64(g.hi.cast())) };
        [a.0, a.1, b.0, b.1]
    }
    .map(|x| vreinterpretq_s8_s64(x));
    for (b, t_b) in t[0].iter_mut().enumerate() {
        for v in 0..2 {
            let at = 32 * b + 16 * v;
            // SAFETY: chunks 0 and 1 of columns `4b+2v` and `4b+2v+1`: inside the group.
            let (r0, r1) = unsafe { (load16(g.rhs.add(at)), load16(g.rhs.add(8 * NR + at))) };
            let ((lo0, hi0), (lo1, hi1)) = (unpack(r0), unpack(r1));
            // Even column: low register halves; odd column: high halves.
            let mut even = mla_lo(t_b[2 * v], lo0, l0); // depths 0..8
            even = mla_lo(even, lo1, l1); // 8..16
            even = mla_lo(even, hi0, l2); // 16..24
            t_b[2 * v] = mla_lo(even, hi1, l3); // 24..32
            let mut odd = mla_hi(t_b[2 * v + 1], lo0, l0);
            odd = mla_hi(odd, lo1, l1);
            odd = mla_hi(odd, hi0, l2);
            t_b[2 * v + 1] = mla_hi(odd, hi1, l3);
        }
    }
}

/// Adds one `bd = 8`, `mr = 4` group to the sums (`FIRST`: sets them): per row and column,
/// `[chunk 0, chunk 1]` of the low nibbles times the row's chunks 0, 1 (low half) and of the
/// high nibbles times chunks 2, 3 (high half), 4 products per int16 lane; each row's partials
/// are folded right away, so only one row's are live.
///
/// # Safety
///
/// `MR == 4`; `g` as for [`group_bd8_gemv`] with a 4-row LHS tile.
#[target_feature(enable = "neon")]
#[inline]
unsafe fn group_bd8_gemm<const MR: usize, const NR: usize, const NB: usize, const FIRST: bool>(
    acc: &mut Sums<MR, NB>,
    g: Group,
) {
    // SAFETY: 64 bytes each (caller's contract); alignment: see the module docs.
    let (la, lb) = unsafe { (vld4q_s64(g.lo.cast()), vld4q_s64(g.hi.cast())) };
    let la = [la.0, la.1, la.2, la.3].map(|x| vreinterpretq_s8_s64(x));
    let lb = [lb.0, lb.1, lb.2, lb.3].map(|x| vreinterpretq_s8_s64(x));
    for b in 0..NB {
        // Low and high nibbles of [chunk 0, chunk 1] of the block's 4 columns.
        let mut w = [(vdupq_n_s8(0), vdupq_n_s8(0)); 4];
        for v in 0..2 {
            let at = 32 * b + 16 * v;
            // SAFETY: chunks 0 and 1 of columns `4b+2v` and `4b+2v+1`: inside the group.
            let (r0, r1) = unsafe { (load16(g.rhs.add(at)), load16(g.rhs.add(8 * NR + at))) };
            let (r0, r1) = (vreinterpretq_s64_s8(r0), vreinterpretq_s64_s8(r1));
            w[2 * v] = unpack(vreinterpretq_s8_s64(vzip1q_s64(r0, r1)));
            w[2 * v + 1] = unpack(vreinterpretq_s8_s64(vzip2q_s64(r0, r1)));
        }
        for (acc_r, (&l01, &l23)) in acc.iter_mut().zip(la.iter().zip(&lb)) {
            let t = w.map(|(lo, hi)| {
                let mut y = vmull_s8(vget_low_s8(lo), vget_low_s8(l01)); // depths 0..8
                y = mla_hi(y, lo, l01); // 8..16
                y = mla_lo(y, hi, l23); // 16..24
                mla_hi(y, hi, l23) // 24..32
            });
            acc_r[b] = widen::<FIRST>(acc_r[b], fold::<8>(t));
        }
    }
}

/// Adds one `bd = 4` group (`mr` 1 or 4) to `t` (8 products per lane). RHS chunk `c`
/// (4 columns x 4 bytes) pairs its low nibbles with LHS chunk `c` (low half) and its high
/// nibbles with chunk `c + 4` (high half).
///
/// # Safety
///
/// `MR` is 1 or 4; `g` as for [`group_bd8_gemv`] with an `MR`-row LHS tile.
#[target_feature(enable = "neon")]
#[inline]
unsafe fn group_bd4<const MR: usize, const NR: usize, const NB: usize>(t: &mut Partial<MR, NB>, g: Group) {
    // 4 replicated 4-byte LHS chunks from `p`, 16 bytes inside one half.
    let dup4 = |p: *const u8| {
        // SAFETY: `p` is a half plus 0 (MR = 1) or `16 * c`, `c < 4` (MR = 4): 16 bytes inside
        // the half; alignment: see the module docs.
        let l = unsafe { vld4q_dup_s32(p.cast()) };
        [l.0, l.1, l.2, l.3].map(|x| vreinterpretq_s8_s32(x))
    };
    // mr = 1: the row's chunks 0..3 and 4..7, for the whole group.
    let (row_lo, row_hi) = if MR == 1 { (dup4(g.lo), dup4(g.hi)) } else { ([vdupq_n_s8(0); 4], [vdupq_n_s8(0); 4]) };
    for b in 0..NB {
        for (c, (&rl, &rh)) in row_lo.iter().zip(&row_hi).enumerate() {
            // SAFETY: chunk `c` of columns `4b..4b+4`: inside the group.
            let (lo, hi) = unpack(unsafe { load16(g.rhs.add(c * 4 * NR + 16 * b)) });
            // Per row: LHS chunks c and c + 4 (mr = 4: rows 0..3 of each chunk).
            let (lc, lh) = if MR == 1 {
                ([rl; 4], [rh; 4])
            } else {
                (dup4(g.lo.wrapping_add(16 * c)), dup4(g.hi.wrapping_add(16 * c)))
            };
            for (r, t_r) in t.iter_mut().enumerate() {
                let x = &mut t_r[b];
                x[0] = mla_lo(mla_lo(x[0], lo, lc[r]), hi, lh[r]);
                x[1] = mla_hi(mla_hi(x[1], lo, lc[r]), hi, lh[r]);
            }
        }
    }
}

/// Adds one group of a 1-row tile to `t` (the int16 runs of [`sum_groups`]).
///
/// # Safety
///
/// `MR == 1`, `BD` 8 or 4, and `g` is a group of tiles with these parameters; `CONTIG` only if
/// `g.hi == g.lo + 16`.
#[target_feature(enable = "neon")]
#[inline]
unsafe fn group<const MR: usize, const NR: usize, const BD: usize, const NB: usize, const CONTIG: bool>(
    t: &mut Partial<MR, NB>,
    g: Group,
) {
    // SAFETY: forwarded (the caller guarantees the `MR` each function requires).
    unsafe {
        if BD == 4 {
            group_bd4::<MR, NR, NB>(t, g);
        } else {
            group_bd8_gemv::<MR, NR, NB, CONTIG>(t, g);
        }
    }
}

/// Folds the int16 lanes of one row and block of 4 columns (`BD = 8`: 4 slots of one column
/// each; `BD = 4`: 2 slots of two columns) into `[c0 c0 c1 c1 c2 c2 c3 c3]` (`ADDP`).
#[target_feature(enable = "neon")]
#[inline]
fn fold<const BD: usize>(x: [int16x8_t; 4]) -> int16x8_t {
    if BD == 8 { vpaddq_s16(vpaddq_s16(x[0], x[1]), vpaddq_s16(x[2], x[3])) } else { vpaddq_s16(x[0], x[1]) }
}

/// `a + pairwise(f)` as int32 (`SADALP`); `FIRST`: just `pairwise(f)` (`SADDLP`).
#[target_feature(enable = "neon")]
#[inline]
fn widen<const FIRST: bool>(a: int32x4_t, f: int16x8_t) -> int32x4_t {
    if FIRST { vpaddlq_s16(f) } else { vpadalq_s16(a, f) }
}

/// Adds one group to the sums (`FIRST`: sets them), folding its int16 lanes (at most 16
/// products each) right away.
///
/// # Safety
///
/// `MR` is 1 or 4, `BD` 8 or 4, and `g` is a group of tiles with these parameters; `CONTIG`
/// only if `g.hi == g.lo + 16 * MR`.
#[target_feature(enable = "neon")]
#[inline]
unsafe fn add_group<
    const MR: usize,
    const NR: usize,
    const BD: usize,
    const NB: usize,
    const CONTIG: bool,
    const FIRST: bool,
>(
    acc: &mut Sums<MR, NB>,
    g: Group,
) {
    if BD == 8 && MR > 1 {
        // SAFETY: forwarded (`MR == 4`, `BD == 8`).
        return unsafe { group_bd8_gemm::<MR, NR, NB, FIRST>(acc, g) };
    }
    let mut t = [[[vdupq_n_s16(0); 4]; NB]; MR];
    // SAFETY: forwarded (`MR == 1` or `BD == 4`).
    unsafe {
        if MR == 1 {
            group::<MR, NR, BD, NB, CONTIG>(&mut t, g);
        } else {
            group_bd4::<MR, NR, NB>(&mut t, g);
        }
    }
    for (acc_r, t_r) in acc.iter_mut().zip(t) {
        for (a, x) in acc_r.iter_mut().zip(t_r) {
            *a = widen::<FIRST>(*a, fold::<BD>(x));
        }
    }
}

/// Exact `sum q * w` (mod 2^32) over `groups >= 1` groups, `at(i)` giving group `i`.
///
/// # Safety
///
/// Every `at(i)`, `i < groups`, is a group as [`add_group`] requires, for the same `CONTIG`.
#[target_feature(enable = "neon")]
#[inline]
pub(crate) unsafe fn sum_groups<
    const MR: usize,
    const NR: usize,
    const BD: usize,
    const NB: usize,
    const CONTIG: bool,
>(
    groups: usize,
    at: impl Fn(usize) -> Group,
) -> Sums<MR, NB> {
    let zero16 = [[[vdupq_n_s16(0); 4]; NB]; MR];
    let mut acc = [[vdupq_n_s32(0); NB]; MR];
    if MR > 1 || groups == 1 {
        // Fold every group: ADDP to [c0 c0 c1 c1 c2 c2 c3 c3] (16 products), SADDLP/SADALP.
        // SAFETY: groups `0 < groups` and `i < groups` (caller's contract).
        unsafe {
            add_group::<MR, NR, BD, NB, CONTIG, true>(&mut acc, at(0));
            for i in 1..groups {
                add_group::<MR, NR, BD, NB, CONTIG, false>(&mut acc, at(i));
            }
        }
        return acc;
    }
    // GEMV: let the int16 lanes run for 7 (bd = 8: 28 products) or 3 (bd = 4: 24) groups, then
    // widen each into its own int32 register; fold those at the end.
    let run = if BD == 8 { 7 } else { 3 };
    let slots = if BD == 8 { 4 } else { 2 };
    let mut wide = [[[vdupq_n_s32(0); 4]; NB]; MR];
    let mut i = 0;
    while i < groups {
        let mut t = zero16;
        let whole = groups - i >= run;
        // The run's first group starts from the constant zero, so it compiles to SMULL
        // without zeroing `t` first.
        // SAFETY: group `i < groups` (caller's contract).
        unsafe { group::<MR, NR, BD, NB, CONTIG>(&mut t, at(i)) };
        i += 1;
        // A whole run has a constant trip count (unrolled where short), the last one not.
        if whole {
            for _ in 1..run {
                // SAFETY: group `i < groups` (caller's contract).
                unsafe { group::<MR, NR, BD, NB, CONTIG>(&mut t, at(i)) };
                i += 1;
            }
        } else {
            while i < groups {
                // SAFETY: group `i < groups` (caller's contract).
                unsafe { group::<MR, NR, BD, NB, CONTIG>(&mut t, at(i)) };
                i += 1;
            }
        }
        for (w_r, t_r) in wide.iter_mut().zip(t) {
            for (w_b, t_b) in w_r.iter_mut().zip(t_r) {
                for (w, x) in w_b.iter_mut().zip(t_b).take(slots) {
                    *w = vpadalq_s16(*w, x);
                }
            }
        }
    }
    for (acc_r, w_r) in acc.iter_mut().zip(wide) {
        for (a, w) in acc_r.iter_mut().zip(w_r) {
            // bd = 8: [c0 x4], .., [c3 x4]; bd = 4: [c0 c0 c1 c1], [c2 c2 c3 c3].
            *a = if BD == 8 {
                vpaddq_s32(vpaddq_s32(w[0], w[1]), vpaddq_s32(w[2], w[3]))
            } else {
                vpaddq_s32(w[0], w[1])
            };
        }
    }
    acc
}

/// Exact `sum q * w` (mod 2^32) of int8 weights (`qsi8cxp`, `sr = 1`) over `chunks` chunks
/// of `BD` depths: `lhs` is the packed LHS tile (`MR` rows, chunk-interleaved), `rhs` the
/// first data byte of the pass's first column in its RHS tile (columns `BD` bytes apart,
/// chunks `BD * NR` bytes apart). [`sum_i8_with`] with the weights loaded as packed.
///
/// # Safety
///
/// `MR` is 1 or 4, `BD` 4 or 8; `lhs` holds `chunks` chunks of an `MR`-row tile and `rhs` the
/// same chunks of `4 * NB` columns of an `NR`-column tile.
#[target_feature(enable = "neon")]
#[inline]
pub(crate) unsafe fn sum_i8<const MR: usize, const NR: usize, const BD: usize, const NB: usize>(
    chunks: usize,
    lhs: *const u8,
    rhs: *const u8,
) -> Sums<MR, NB> {
    // SAFETY: the LHS chunks (caller's contract); each weight register is 16 bytes of chunk
    // `c < chunks` from column `4b + 2v` (`BD = 8`) or `4b` (`BD = 4`): inside the `4 * NB`
    // columns the caller made readable.
    unsafe {
        sum_i8_with::<MR, NR, BD, NB>(chunks, lhs, |c, b, v| {
            load16(rhs.wrapping_add(c * NR * BD + BD * 4 * b + 16 * v))
        })
    }
}

/// Exact `sum q * w` (mod 2^32) of int8 weights over `chunks` chunks of `BD` depths: `lhs` is
/// the packed LHS tile (`MR` rows, chunk-interleaved); `weights(c, b, v)` gives the int8
/// weights of chunk `c` in the `qsi8cxp` register layout: `BD = 4`, `v = 0`: columns
/// `4b .. 4b + 4`, 4 depths each; `BD = 8`, `v` 0 or 1: columns `4b + 2v` and `4b + 2v + 1`,
/// 8 depths each. The 2-bit family computes them from its codes.
///
/// One product lies in `-16256..=16384`, so two of them can overflow an int16 lane: every
/// `SMULL`/`SMULL2` (8 products) is widened at once by `SADALP` into int32 lanes of pair sums.
/// `BD = 4`: an RHS register is 4 columns x 4 depths, the LHS chunk is replicated 4 times, the
/// lanes of the low half are `[c0 c0 c1 c1]`, of the high half `[c2 c2 c3 c3]`. `BD = 8`: an
/// RHS register is 2 columns x 8 depths, the LHS chunk is replicated twice, one register of
/// lane sums per column.
///
/// # Safety
///
/// `MR` is 1 or 4, `BD` 4 or 8; `lhs` holds `chunks` chunks of an `MR`-row tile.
#[target_feature(enable = "neon")]
#[inline]
pub(crate) unsafe fn sum_i8_with<const MR: usize, const NR: usize, const BD: usize, const NB: usize>(
    chunks: usize,
    lhs: *const u8,
    weights: impl Fn(usize, usize, usize) -> int8x16_t,
) -> Sums<MR, NB> {
    let mut part = [[[vdupq_n_s32(0); 4]; NB]; MR];
    for c in 0..chunks {
        let l = lhs.wrapping_add(c * MR * BD);
        // Each row's chunk, replicated to 16 bytes.
        let rows: [int8x16_t; MR] = core::array::from_fn(|i| {
            let p = l.wrapping_add(i * BD);
            // SAFETY: `BD` bytes of row `i < MR` of chunk `c < chunks` (caller's contract); the
            // replicating loads take bytes (`LD1R` of 4 or 8 bytes needs no alignment while
            // `SCTLR_EL1.A = 0`: see the module docs).
            unsafe {
                if BD == 4 {
                    vreinterpretq_s8_u32(vld1q_dup_u32(p.cast()))
                } else {
                    vreinterpretq_s8_u64(vld1q_dup_u64(p.cast()))
                }
            }
        });
        for b in 0..NB {
            for v in 0..BD / 4 {
                let w = weights(c, b, v);
                for (row, part_r) in rows.iter().zip(part.iter_mut()) {
                    let lo = vmull_s8(vget_low_s8(w), vget_low_s8(*row));
                    let hi = vmull_high_s8(w, *row);
                    let x = &mut part_r[b];
                    x[2 * v] = vpadalq_s16(x[2 * v], lo);
                    x[2 * v + 1] = vpadalq_s16(x[2 * v + 1], hi);
                }
            }
        }
    }
    // BD = 4: [c0 c0 c1 c1], [c2 c2 c3 c3]; BD = 8: [c0 x4], [c1 x4], [c2 x4], [c3 x4].
    part.map(|p_r| {
        p_r.map(|x| {
            if BD == 4 { vpaddq_s32(x[0], x[1]) } else { vpaddq_s32(vpaddq_s32(x[0], x[1]), vpaddq_s32(x[2], x[3])) }
        })
    })
}

/// The per-channel families' epilogue of one pass (docs/formats.md, §Arithmetic): per row `r`
/// and column `c`, `iacc = (acc << SHL) + rsum * offset` (`MLA`), `f = SCVTF(iacc)`,
/// `s = FMUL(scale, dq)`, `out = FADD(FMUL(f, s), bias)`. `lhs_x` points at the LHS tile's
/// extras (`offset[MR]` i32, `dq[MR]` f32), `rhs_x` at the pass's first column's `rsum` in the
/// RHS extras (`rsum`, `scale`, `bias`: `NR` values each). `SHL` is 4 for int4 weights (the
/// sums are `sum q * w`, the arithmetic's `sum q * 16w`), 0 for int8.
///
/// # Safety
///
/// `lhs_x` is readable for `8 * MR` bytes, `rhs_x` for the `4 * NB` columns' values of all
/// three arrays.
#[target_feature(enable = "neon")]
#[inline]
pub(crate) unsafe fn per_channel_values<const MR: usize, const NR: usize, const NB: usize, const SHL: i32>(
    acc: Sums<MR, NB>,
    lhs_x: *const u8,
    rhs_x: *const u8,
) -> Values<MR, NB> {
    // SAFETY: forwarded from the caller's contract.
    unsafe {
        per_channel_values_with::<MR, NR, NB, SHL>(acc, lhs_x, rhs_x, |f, scale, dq| {
            vmulq_f32(f, vmulq_n_f32(scale, dq))
        })
    }
}

/// [`per_channel_values`] with the scaling of `f` given: `out = FADD(scaled(f, scale, dq),
/// bias)`, `scaled` taking the converted sums of 4 columns, their scales and the row's `dq`.
///
/// # Safety
///
/// As for [`per_channel_values`].
#[target_feature(enable = "neon")]
#[inline]
pub(crate) unsafe fn per_channel_values_with<const MR: usize, const NR: usize, const NB: usize, const SHL: i32>(
    acc: Sums<MR, NB>,
    lhs_x: *const u8,
    rhs_x: *const u8,
    scaled: impl Fn(float32x4_t, float32x4_t, f32) -> float32x4_t,
) -> Values<MR, NB> {
    let mut out = [[vdupq_n_f32(0.0); NB]; MR];
    for (r, (acc_r, out_r)) in acc.iter().zip(&mut out).enumerate() {
        // SAFETY: the LHS extras of row `r < MR` (caller's contract).
        let (offset, dq) = unsafe {
            (lhs_x.add(4 * r).cast::<i32>().read_unaligned(), lhs_x.add(4 * MR + 4 * r).cast::<f32>().read_unaligned())
        };
        for (b, (&a, o)) in acc_r.iter().zip(out_r).enumerate() {
            // SAFETY: block `b < NB` of the three arrays (caller's contract).
            let (rsum, scale, bias) = unsafe {
                (
                    vreinterpretq_s32_u8(vld1q_u8(rhs_x.add(16 * b))),
                    vreinterpretq_f32_u8(vld1q_u8(rhs_x.add(4 * NR + 16 * b))),
                    vreinterpretq_f32_u8(vld1q_u8(rhs_x.add(8 * NR + 16 * b))),
                )
            };
            let a = if SHL == 4 { vshlq_n_s32::<4>(a) } else { a };
            let iacc = vmlaq_n_s32(a, rsum, offset);
            *o = vaddq_f32(scaled(vcvtq_f32_s32(iacc), scale, dq), bias);
        }
    }
    out
}

/// The per-block families' float accumulation: from `acc = +0.0`, for each block `b` in order,
/// `acc = fma(float(S_b), scale_b, acc)` (one `FMLA`), where `S_b` sums the block's
/// `groups_per_block` groups (`at(b, i)` gives group `i` of block `b`) and `scales(b)` gives
/// the f32 scales of block `b` per row and block of 4 columns.
///
/// # Safety
///
/// Every `at(b, i)`, `b < blocks`, `i < groups_per_block`, is a group as [`sum_groups`]
/// requires; `groups_per_block >= 1`.
#[target_feature(enable = "neon")]
#[inline]
pub(crate) unsafe fn block_loop<
    const MR: usize,
    const NR: usize,
    const BD: usize,
    const NB: usize,
    const CONTIG: bool,
>(
    blocks: usize,
    groups_per_block: usize,
    at: impl Fn(usize, usize) -> Group,
    scales: impl Fn(usize) -> Values<MR, NB>,
) -> Values<MR, NB> {
    // SAFETY: forwarded from the caller's contract.
    unsafe { offset_block_loop::<MR, NR, BD, NB, CONTIG, false>(blocks, groups_per_block, at, scales, |_, _| {}) }
}

/// [`block_loop`] with a block offset term: for each block `b`, `offset(b, &mut acc)` first
/// (the asymmetric families' `acc = fma(zero_b, bsum_b, acc)`), then
/// `acc = fma(float(S_b << 4), scale_b, acc)` if `SHL4` (`float(16 * S_b)`, the int32 shift
/// the asm tiers make), else `fma(float(S_b), scale_b, acc)`.
///
/// # Safety
///
/// As for [`block_loop`].
#[target_feature(enable = "neon")]
#[inline]
pub(crate) unsafe fn offset_block_loop<
    const MR: usize,
    const NR: usize,
    const BD: usize,
    const NB: usize,
    const CONTIG: bool,
    const SHL4: bool,
>(
    blocks: usize,
    groups_per_block: usize,
    at: impl Fn(usize, usize) -> Group,
    scales: impl Fn(usize) -> Values<MR, NB>,
    offset: impl Fn(usize, &mut Values<MR, NB>),
) -> Values<MR, NB> {
    // `bl = 32` (and `bl = 64` in a GEMV) get loops with a constant group count; unrolling two
    // groups of an `mr = 4` tile spills.
    // SAFETY: forwarded from the caller's contract.
    unsafe {
        match groups_per_block {
            1 => blocks_of::<MR, NR, BD, NB, CONTIG, SHL4, 1>(blocks, 1, &at, &scales, &offset),
            2 if MR == 1 => blocks_of::<MR, NR, BD, NB, CONTIG, SHL4, 2>(blocks, 2, &at, &scales, &offset),
            g => blocks_of::<MR, NR, BD, NB, CONTIG, SHL4, 0>(blocks, g, &at, &scales, &offset),
        }
    }
}

/// [`offset_block_loop`] with `G` groups per block (`G = 0`: `groups`, known at run time only).
///
/// # Safety
///
/// As for [`block_loop`], with `groups = G` unless `G = 0`.
#[target_feature(enable = "neon")]
#[inline]
unsafe fn blocks_of<
    const MR: usize,
    const NR: usize,
    const BD: usize,
    const NB: usize,
    const CONTIG: bool,
    const SHL4: bool,
    const G: usize,
>(
    blocks: usize,
    groups: usize,
    at: &impl Fn(usize, usize) -> Group,
    scales: &impl Fn(usize) -> Values<MR, NB>,
    offset: &impl Fn(usize, &mut Values<MR, NB>),
) -> Values<MR, NB> {
    let groups = if G == 0 { groups } else { G };
    let mut acc = [[vdupq_n_f32(0.0); NB]; MR];
    for b in 0..blocks {
        // SAFETY: the groups of block `b < blocks` (caller's contract).
        let sums = unsafe { sum_groups::<MR, NR, BD, NB, CONTIG>(groups, |i| at(b, i)) };
        offset(b, &mut acc);
        for ((acc_r, sums_r), s_r) in acc.iter_mut().zip(sums).zip(scales(b)) {
            for ((a, x), s) in acc_r.iter_mut().zip(sums_r).zip(s_r) {
                let x = if SHL4 { vshlq_n_s32::<4>(x) } else { x };
                *a = vfmaq_f32(*a, vcvtq_f32_s32(x), s);
            }
        }
    }
    acc
}

/// A family's part of the NEON kernels: one K pass with its epilogue (the tile strides come
/// from the call's [`TileStrides`], the family's single source).
pub(crate) trait Scheme {
    /// The family's parameters ([`Family::Params`](crate::Family::Params)), handed to every pass.
    type Params: Copy;

    /// The unclamped results of rows `0..MR` and columns `p.col0 .. p.col0 + 4 * NB` of a tile.
    ///
    /// # Safety
    ///
    /// `p.lhs` and `p.rhs` are whole packed tiles (`MR` rows, `NR` columns, block depth `BD`)
    /// for `p.k` and `p.bl`; `p.col0 + 4 * NB <= NR`.
    unsafe fn pass<const MR: usize, const NR: usize, const BD: usize, const NB: usize>(
        p: Pass<Self::Params>,
    ) -> Values<MR, NB>;
}

/// One K pass of a tile: its packed LHS and RHS tiles, the pass's first column, the depth, the
/// block length and the family's parameters of the call.
#[derive(Clone, Copy)]
pub(crate) struct Pass<P> {
    pub(crate) lhs: *const u8,
    pub(crate) rhs: *const u8,
    pub(crate) col0: usize,
    pub(crate) k: usize,
    pub(crate) bl: usize,
    pub(crate) params: P,
}

/// The generic micro-kernel: `MR x NR` tiles of scheme `S`, block depth `BD` (8 or 4), `NB`
/// blocks of 4 columns per K pass (`NR / 4` must be a multiple of `NB`). Each pass's values are
/// clamped (`FMAX` with the minimum first, then `FMIN`) and the valid part is stored.
///
/// # Safety
///
/// The contract of [`Kernel::run_unchecked`](crate::Kernel::run_unchecked) for a kernel whose
/// packing has `mr = MR`, `nr = NR`, `bd = BD`, with `strides` the family's tile strides of that call; the
/// CPU has NEON.
#[target_feature(enable = "neon")]
#[inline]
pub(crate) unsafe fn matmul<
    S: Scheme,
    O: NeonStore,
    const MR: usize,
    const NR: usize,
    const BD: usize,
    const NB: usize,
>(
    args: &UncheckedArgs<O, S::Params>,
    strides: &TileStrides,
) {
    // The caller's buffers hold tiles of these strides, so no product below overflows.
    let (lts, rts) = (strides.lhs, strides.rhs);
    let (min, max) = (vdupq_n_f32(args.clamp_min), vdupq_n_f32(args.clamp_max));
    for nt in 0..args.n.div_ceil(NR) {
        let cols = (args.n - nt * NR).min(NR);
        let rhs = args.rhs_packed.wrapping_add(nt * rts);
        for mt in 0..args.m.div_ceil(MR) {
            let rows = (args.m - mt * MR).min(MR);
            let lhs = args.lhs.wrapping_add(mt * lts);
            let dst = args.dst.wrapping_byte_add(mt * MR * args.dst_stride_row).wrapping_add(nt * NR);
            for col0 in (0..cols).step_by(4 * NB) {
                let pass = Pass { lhs, rhs, col0, k: args.k, bl: args.bl, params: args.params };
                // SAFETY: tile `mt < ceil(m/MR)` of the LHS and `nt < ceil(n/NR)` of the RHS are
                // readable (caller's contract) and `col0 + 4 * NB <= NR` (`NR` is a multiple of
                // `4 * NB`, `col0 < cols <= NR`).
                let v = unsafe { S::pass::<MR, NR, BD, NB>(pass) };
                for (r, v_r) in v.iter().enumerate().take(rows) {
                    let row = dst.wrapping_byte_add(r * args.dst_stride_row);
                    for (b, &x) in v_r.iter().enumerate() {
                        let c0 = col0 + 4 * b;
                        let x = vminq_f32(vmaxq_f32(x, min), max);
                        if c0 + 4 <= cols {
                            // SAFETY: row `r < rows`, columns `c0..c0+4 <= cols`: inside the
                            // rectangle the caller made writable.
                            unsafe { O::store4(row.add(c0), x) };
                        } else if c0 < cols {
                            let mut tmp = [O::default(); 4];
                            // SAFETY: `tmp` is a local array of 4 elements.
                            unsafe { O::store4(tmp.as_mut_ptr(), x) };
                            for (i, &y) in tmp.iter().enumerate().take(cols - c0) {
                                // SAFETY: column `c0 + i < cols` of row `r < rows`.
                                unsafe { row.add(c0 + i).write_unaligned(y) };
                            }
                        }
                    }
                }
            }
        }
    }
}

/// How the NEON tier stores 4 clamped results of one row in the output type: f32 as they are,
/// f16 with `FCVTN` (base Armv8.0; no FEAT_FP16 needed), bf16 by the integer rounding every
/// tier without FEAT_BF16 uses (`Element::from_f32`; NaN lanes, quiet after the clamp, keep
/// their top half).
pub(crate) trait NeonStore: Element {
    /// Stores the 4 lanes of `x`, converted, at `p` (no alignment needed).
    ///
    /// # Safety
    ///
    /// The CPU has NEON; `p` is writable for 4 elements.
    unsafe fn store4(p: *mut Self, x: float32x4_t);
}

impl NeonStore for f32 {
    #[inline(always)]
    unsafe fn store4(p: *mut f32, x: float32x4_t) {
        // SAFETY: NEON and 16 writable bytes (caller's contract); ST1 of bytes needs no
        // alignment.
        unsafe { vst1q_u8(p.cast(), vreinterpretq_u8_f32(x)) }
    }
}

impl NeonStore for f16 {
    #[inline(always)]
    unsafe fn store4(p: *mut f16, x: float32x4_t) {
        let h: uint16x4_t;
        // SAFETY: FCVTN is base AdvSIMD (the caller runs under the NEON target feature); it
        // rounds to nearest even with the default FPCR, keeping subnormals (FZ16 = 0).
        unsafe {
            core::arch::asm!(
                "fcvtn {h:v}.4h, {x:v}.4s",
                h = out(vreg) h,
                x = in(vreg) x,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        // SAFETY: NEON and 8 writable bytes (caller's contract); ST1 of bytes needs no
        // alignment.
        unsafe { vst1_u8(p.cast(), vreinterpret_u8_u16(h)) }
    }
}

impl NeonStore for bf16 {
    #[inline(always)]
    unsafe fn store4(p: *mut bf16, x: float32x4_t) {
        // SAFETY: NEON (caller's contract). u + 0x7FFF + bit 16, then the top half; NaN lanes
        // (not equal to themselves) add 0. The store: 8 writable bytes (caller's contract), ST1
        // of bytes needs no alignment.
        unsafe {
            let u = vreinterpretq_u32_f32(x);
            let bit = vandq_u32(vshrq_n_u32::<16>(u), vdupq_n_u32(1));
            let add = vandq_u32(vaddq_u32(bit, vdupq_n_u32(0x7fff)), vceqq_f32(x, x));
            let h = vshrn_n_u32::<16>(vaddq_u32(u, add));
            vst1_u8(p.cast(), vreinterpret_u8_u16(h));
        }
    }
}

/// Blocks of 4 columns per K pass of the kernel for packing `p`: the whole tile for `mr = 1`,
/// one for `mr = 4` (32 vector registers).
pub(crate) const fn blocks_per_pass(p: Packing) -> usize {
    if p.mr == 1 { p.nr / 4 } else { 1 }
}

/// Whether [`matmul`] supports packing `p`.
pub(crate) const fn supports(p: Packing) -> bool {
    (p.mr == 1 || p.mr == 4) && p.nr.is_multiple_of(4) && (p.block_depth() == 8 || p.block_depth() == 4)
}

/// Declares the NEON kernels of the invoking family module: per entry
/// `(IDENT, entry_fn, "name", PACKING_X)` (named `matmul_clamp_<dst>_<name>_neon`) an `unsafe fn entry_fn` running [`matmul`] for
/// scheme `$scheme` with the packing's `mr`, `nr`, `bd` and [`blocks_per_pass`], and a
/// `static IDENT: Descriptor` with `m_step = mr`, `n_step = nr`; then `KERNELS`, the entries in the
/// order given (best first). `bl` states the block-length part of the contract.
macro_rules! neon_kernels {
    (
        scheme: $scheme:ty,
        dst: $dst:literal,
        bl: $bl:literal,
        $(($ident:ident, $entry:ident, $name:literal, $p:ident)),* $(,)?
    ) => {
        $(
            const _: () = assert!($crate::matmul::arch::neon::supports(fam::$p));

            #[doc = concat!(
                "`", concat!("matmul_clamp_", $dst, "_", $name, "_neon"), "`: tiles of [`", stringify!($p), "`](fam::", stringify!($p), ")."
            )]
            ///
            /// # Safety
            ///
            /// The contract of [`Kernel::run_unchecked`](crate::Kernel::run_unchecked) for this
            /// kernel: the CPU has NEON, `m, n, k >= 1`,
            #[doc = concat!($bl, ",")]
            /// `lhs`/`rhs_packed` hold `ceil(m/mr)` / `ceil(n/nr)` tiles packed with this
            /// packing and `k` (whose tile strides `strides` are), `dst` is writable for `m` rows
            /// of `n` outputs at `dst_stride_row` bytes and does not overlap them,
            /// `clamp_min <= clamp_max`.
            #[target_feature(enable = "neon")]
            pub(crate) unsafe fn $entry(
                _packing: &$crate::Packing,
                args: &$crate::matmul::UncheckedArgs<fam::Dst, fam::Params>,
                strides: &$crate::matmul::TileStrides,
            ) {
                use $crate::matmul::arch::neon::{blocks_per_pass, matmul};
                const P: $crate::Packing = fam::$p;
                // SAFETY: forwarded from the caller's contract, for the kernel's own packing
                // (supported: checked at compile time above).
                unsafe {
                    matmul::<$scheme, fam::Dst, { P.mr }, { P.nr }, { P.block_depth() }, { blocks_per_pass(P) }>(
                        args, strides,
                    )
                }
            }

            #[doc = concat!("NEON kernel `", concat!("matmul_clamp_", $dst, "_", $name, "_neon"), "`.")]
            pub static $ident: Descriptor = fam::kernel(
                concat!("matmul_clamp_", $dst, "_", $name, "_neon"),
                $crate::matmul::Tier::Neon,
                (fam::$p.mr, fam::$p.nr),
                fam::$p,
                $entry,
            );
        )*
    };
}
pub(crate) use neon_kernels;
