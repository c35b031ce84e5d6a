//! NEON tier of `qai8dxp_qsi4cxp`: stable `core::arch::aarch64` intrinsics, no `SDOT`/`SMMLA`,
//! for ARMv8.0 cores such as Cortex-A53/A72. One generic micro-kernel
//! (`matmul::<MR, NR, BD, NB>`) serves every packing of the family; `m_step = mr`,
//! `n_step = nr`.
//!
//! Integer part (exact, wrapping like the hardware). The nibbles are unpacked to the plain
//! weights `w` in `-8..=7` (low nibble `SHL #4` + `SSHR #4`, high nibble `SSHR #4`), so one
//! product `q * w` lies in `-1016..=1024` and up to 31 of them fit an int16 lane exactly.
//! `SMULL`/`SMLAL(2)` (8 products per instruction) sum 4 (`bd = 8`) or 8 (`bd = 4`) products
//! per int16 lane and 32-deep group; the lanes are widened into int32 with `SADALP` before they
//! can overflow:
//!
//! * `mr = 4`: after every group, `ADDP` first folds the lanes of 4 columns into
//!   `[c0 c0 c1 c1 c2 c2 c3 c3]` (16 products per lane) and one `SADALP` adds them to the
//!   accumulator `[c0 c1 c2 c3]`;
//! * `mr = 1`: the int16 lanes run for 7 (`bd = 8`) or 3 (`bd = 4`) groups, then each is
//!   widened into its own int32 register; those are folded once after the K loop.
//!
//! The int32 sums hold `sum q * w` modulo 2^32; `SHL #4` turns them into the spec's
//! `sum q * 16w` (multiplying by 16 commutes with the reduction modulo 2^32).
//!
//! Epilogue per 4 columns (arithmetic.md §4.1, bit-identical to the scalar tier):
//! `iacc = (acc << 4) + rsum * offset` (`MLA`), `f = SCVTF(iacc)`, `s = FMUL(scale16, dq)`,
//! `out = FADD(FMUL(f, s), bias)`, `FMIN(FMAX(out, min), max)`.
//!
//! Operand layout per group (no replicating moves in the K loop):
//!
//! * `bd = 8, mr = 1`: `LD4R` replicates the row's 4 chunks of 8 depths; an RHS register
//!   `[even column, odd column]` feeds `SMULL` (low half) and `SMULL2` (high half) as packed.
//! * `bd = 8, mr = 4`: `LD4` de-interleaves the LHS into `[chunk 0, chunk 1]` and
//!   `[chunk 2, chunk 3]` per row and `ZIP1`/`ZIP2` pair each column's chunks 0 and 1 the same
//!   way, so both halves of one multiply pair belong to one column.
//! * `bd = 4`: `LD4R` replicates 4-byte LHS chunks (4 rows of one chunk, or 4 chunks of the
//!   one row); an RHS register holds 4 columns, low half columns 0-1, high half 2-3.
//!
//! Alignment: the structure loads (`LD4`, `LD4R`) take the byte pointer without any Rust-level
//! dereference and, like `LDR`, need no alignment while `SCTLR_EL1.A = 0` (Linux, and the usual
//! bare-metal setup). With alignment checking enabled they need their element size (8 or 4
//! bytes); every LHS offset they use is a multiple of 8, so an 8-byte-aligned LHS buffer is
//! enough. Every other access is byte-granular (`LD1`/`ST1` of bytes, unaligned scalar reads).
//!
//! A K pass covers `NB` blocks of 4 columns. The `mr = 4` kernels use one block per pass
//! (32 vector registers), so a 4x8 tile runs two passes over the same LHS tile; every RHS byte
//! is still loaded and unpacked once per tile.

use super::Kernel;
use crate::cpu::CpuFeatures;
use crate::matmul::Tier;
#[cfg(target_arch = "aarch64")]
use crate::matmul::{RawKernel, UncheckedArgs};

#[cfg(target_arch = "aarch64")]
use core::arch::aarch64::*;

/// Whether this tier may run on `cpu` (it needs NEON only).
pub const fn is_available(cpu: &CpuFeatures) -> bool {
    Tier::Neon.is_available(cpu)
}

/// Depths per packed group: the K loop steps one 32-deep group (`16 * nr` RHS bytes,
/// `32 * mr` LHS bytes) at a time.
#[cfg(target_arch = "aarch64")]
const GROUP: usize = 32;

/// Int16 partial sums of one K pass: `[row][block][slot]`. `bd = 8`: slot `i` is column `i` of
/// the block (8 depth lanes); `bd = 4`: slot 0 holds columns 0-1, slot 1 columns 2-3 (4 depth
/// lanes each), slots 2-3 are unused.
#[cfg(target_arch = "aarch64")]
type Partial<const MR: usize, const NB: usize> = [[[int16x8_t; 4]; NB]; MR];

/// Loads 16 RHS bytes.
///
/// # Safety
///
/// `p` is readable for 16 bytes.
#[cfg(target_arch = "aarch64")]
#[target_feature(enable = "neon")]
#[inline]
unsafe fn load16(p: *const u8) -> int8x16_t {
    // SAFETY: caller's contract; LD1 of bytes has no alignment requirement.
    unsafe { vld1q_s8(p.cast()) }
}

/// Splits packed bytes into `(low, high)` nibble weights in `-8..=7` (`SHL`+`SSHR`, `SSHR`).
#[cfg(target_arch = "aarch64")]
#[target_feature(enable = "neon")]
#[inline]
fn unpack(x: int8x16_t) -> (int8x16_t, int8x16_t) {
    (vshrq_n_s8::<4>(vshlq_n_s8::<4>(x)), vshrq_n_s8::<4>(x))
}

/// `t + a.low * b.low` (`SMLAL`, 8 int8 products into int16 lanes).
#[cfg(target_arch = "aarch64")]
#[target_feature(enable = "neon")]
#[inline]
fn mla_lo(t: int16x8_t, a: int8x16_t, b: int8x16_t) -> int16x8_t {
    vmlal_s8(t, vget_low_s8(a), vget_low_s8(b))
}

/// `t + a.high * b.high` (`SMLAL2`).
#[cfg(target_arch = "aarch64")]
#[target_feature(enable = "neon")]
#[inline]
fn mla_hi(t: int16x8_t, a: int8x16_t, b: int8x16_t) -> int16x8_t {
    vmlal_high_s8(t, a, b)
}

/// Adds one group of a `bd = 8`, `mr = 1` pass to `t` (4 products per lane). RHS chunk `c`
/// pairs its low nibbles with LHS chunk `c` and its high nibbles with chunk `c + 2`.
///
/// # Safety
///
/// `MR == 1`; `lhs_g` is a 32-byte LHS group of a 1-row tile; `rhs_g` is an RHS group of an
/// `NR`-column tile advanced to the pass's first column (`8 * first_column` bytes), with `NB`
/// blocks of 4 columns left.
#[cfg(target_arch = "aarch64")]
#[target_feature(enable = "neon")]
#[inline]
unsafe fn group_bd8_gemv<const MR: usize, const NR: usize, const NB: usize>(
    t: &mut Partial<MR, NB>,
    lhs_g: *const u8,
    rhs_g: *const u8,
) {
    // SAFETY: the 32-byte group (caller's contract); alignment: see the module docs.
    let l = unsafe { vld4q_dup_s64(lhs_g.cast()) };
    let l = [l.0, l.1, l.2, l.3];
    let [l0, l1, l2, l3] = [0, 1, 2, 3].map(|j| vreinterpretq_s8_s64(l[j]));
    for (b, t_b) in t[0].iter_mut().enumerate() {
        for v in 0..2 {
            let at = 32 * b + 16 * v;
            // SAFETY: chunks 0 and 1 of columns `4b+2v` and `4b+2v+1`: inside the group.
            let (r0, r1) = unsafe { (load16(rhs_g.add(at)), load16(rhs_g.add(8 * NR + at))) };
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

/// Adds one group of a `bd = 8`, `mr = 4` pass to `t` (4 products per lane): per row and
/// column, `[chunk 0, chunk 1]` of the low nibbles times the row's LHS chunks 0, 1 and of the
/// high nibbles times chunks 2, 3.
///
/// # Safety
///
/// `MR == 4`; `lhs_g` is a 128-byte LHS group of a 4-row tile; `rhs_g` as for
/// [`group_bd8_gemv`].
#[cfg(target_arch = "aarch64")]
#[target_feature(enable = "neon")]
#[inline]
unsafe fn group_bd8_gemm<const MR: usize, const NR: usize, const NB: usize>(
    t: &mut Partial<MR, NB>,
    lhs_g: *const u8,
    rhs_g: *const u8,
) {
    // SAFETY: the 128-byte group (caller's contract); alignment: see the module docs.
    let (la, lb) = unsafe { (vld4q_s64(lhs_g.cast()), vld4q_s64(lhs_g.add(64).cast())) };
    let (la, lb) = ([la.0, la.1, la.2, la.3], [lb.0, lb.1, lb.2, lb.3]);
    let la = [0, 1, 2, 3].map(|r| vreinterpretq_s8_s64(la[r]));
    let lb = [0, 1, 2, 3].map(|r| vreinterpretq_s8_s64(lb[r]));
    for b in 0..NB {
        // Low and high nibbles of [chunk 0, chunk 1] of the block's 4 columns.
        let mut w = [(vdupq_n_s8(0), vdupq_n_s8(0)); 4];
        for v in 0..2 {
            let at = 32 * b + 16 * v;
            // SAFETY: chunks 0 and 1 of columns `4b+2v` and `4b+2v+1`: inside the group.
            let (r0, r1) = unsafe { (load16(rhs_g.add(at)), load16(rhs_g.add(8 * NR + at))) };
            let (r0, r1) = (vreinterpretq_s64_s8(r0), vreinterpretq_s64_s8(r1));
            w[2 * v] = unpack(vreinterpretq_s8_s64(vzip1q_s64(r0, r1)));
            w[2 * v + 1] = unpack(vreinterpretq_s8_s64(vzip2q_s64(r0, r1)));
        }
        for (t_r, (&l01, &l23)) in t.iter_mut().zip(la.iter().zip(&lb)) {
            for (x, &(lo, hi)) in t_r[b].iter_mut().zip(&w) {
                let mut y = mla_lo(*x, lo, l01); // depths 0..8
                y = mla_hi(y, lo, l01); // 8..16
                y = mla_lo(y, hi, l23); // 16..24
                *x = mla_hi(y, hi, l23); // 24..32
            }
        }
    }
}

/// Adds one group of a `bd = 4` pass (`mr` 1 or 4) to `t` (8 products per lane). RHS chunk `c`
/// (4 columns x 4 bytes) pairs its low nibbles with LHS chunk `c` and its high nibbles with
/// chunk `c + 4`.
///
/// # Safety
///
/// `MR` is 1 or 4; `lhs_g` is a `32 * MR`-byte LHS group of an `MR`-row tile; `rhs_g` is an RHS
/// group of an `NR`-column tile advanced to the pass's first column (`4 * first_column` bytes),
/// with `NB` blocks of 4 columns left.
#[cfg(target_arch = "aarch64")]
#[target_feature(enable = "neon")]
#[inline]
unsafe fn group_bd4<const MR: usize, const NR: usize, const NB: usize>(
    t: &mut Partial<MR, NB>,
    lhs_g: *const u8,
    rhs_g: *const u8,
) {
    // 4 replicated 4-byte LHS chunks from `lhs_g + at` (`at + 16 <= 32 * MR`).
    let dup4 = |at: usize| {
        // SAFETY: 16 bytes inside the group (`at` is 0 or 16 for MR = 1, `16 * j` with `j < 8`
        // for MR = 4); alignment: see the module docs.
        let l = unsafe { vld4q_dup_s32(lhs_g.add(at).cast()) };
        let l = [l.0, l.1, l.2, l.3];
        [0, 1, 2, 3].map(|i| vreinterpretq_s8_s32(l[i]))
    };
    // mr = 1: the row's chunks 0..3 and 4..7, for the whole group.
    let (row_lo, row_hi) = if MR == 1 {
        (dup4(0), dup4(16))
    } else {
        ([vdupq_n_s8(0); 4], [vdupq_n_s8(0); 4])
    };
    for b in 0..NB {
        for (c, (&rl, &rh)) in row_lo.iter().zip(&row_hi).enumerate() {
            // SAFETY: chunk `c` of columns `4b..4b+4`: inside the group.
            let (lo, hi) = unpack(unsafe { load16(rhs_g.add(c * 4 * NR + 16 * b)) });
            // Per row: LHS chunks c and c + 4 (mr = 4: rows 0..3 of each chunk).
            let (lc, lh) = if MR == 1 {
                ([rl; 4], [rh; 4])
            } else {
                (dup4(16 * c), dup4(16 * (c + 4)))
            };
            for (r, t_r) in t.iter_mut().enumerate() {
                let x = &mut t_r[b];
                x[0] = mla_lo(mla_lo(x[0], lo, lc[r]), hi, lh[r]);
                x[1] = mla_hi(mla_hi(x[1], lo, lc[r]), hi, lh[r]);
            }
        }
    }
}

/// Adds one group of the pass to `t`.
///
/// # Safety
///
/// As for the `group_*` function the parameters select: `MR` is 1 or 4, `BD` 8 or 4, and the
/// pointers are groups of tiles with these parameters.
#[cfg(target_arch = "aarch64")]
#[target_feature(enable = "neon")]
#[inline]
unsafe fn group<const MR: usize, const NR: usize, const BD: usize, const NB: usize>(
    t: &mut Partial<MR, NB>,
    lhs_g: *const u8,
    rhs_g: *const u8,
) {
    // SAFETY: forwarded (the caller guarantees the `MR` each function requires).
    unsafe {
        if BD == 4 {
            group_bd4::<MR, NR, NB>(t, lhs_g, rhs_g);
        } else if MR == 1 {
            group_bd8_gemv::<MR, NR, NB>(t, lhs_g, rhs_g);
        } else {
            group_bd8_gemm::<MR, NR, NB>(t, lhs_g, rhs_g);
        }
    }
}

/// The K loop of one pass: `sum q * w` (mod 2^32) per row and column as int32
/// `[row][block] = [c0 c1 c2 c3]`.
///
/// # Safety
///
/// `lhs` is a whole packed LHS tile (`MR` rows, `BD`, `groups` groups); `rhs_p` is a whole
/// packed RHS tile (`NR` columns) advanced to the pass's first column (`BD * first_column`
/// bytes), with `NB` blocks of 4 columns left.
#[cfg(target_arch = "aarch64")]
#[target_feature(enable = "neon")]
#[inline]
unsafe fn k_loop<const MR: usize, const NR: usize, const BD: usize, const NB: usize>(
    lhs: *const u8,
    rhs_p: *const u8,
    groups: usize,
) -> [[int32x4_t; NB]; MR] {
    let zero16 = [[[vdupq_n_s16(0); 4]; NB]; MR];
    let mut acc = [[vdupq_n_s32(0); NB]; MR];
    let at = |g: usize| {
        (
            lhs.wrapping_add(g * GROUP * MR),
            rhs_p.wrapping_add(g * 16 * NR),
        )
    };
    if MR > 1 {
        // Fold every group: ADDP to [c0 c0 c1 c1 c2 c2 c3 c3] (16 products), SADALP.
        for g in 0..groups {
            let mut t = zero16;
            let (lhs_g, rhs_g) = at(g);
            // SAFETY: group `g < groups` of both tiles (caller's contract).
            unsafe { group::<MR, NR, BD, NB>(&mut t, lhs_g, rhs_g) };
            for (acc_r, t_r) in acc.iter_mut().zip(t) {
                for (a, x) in acc_r.iter_mut().zip(t_r) {
                    let folded = if BD == 8 {
                        vpaddq_s16(vpaddq_s16(x[0], x[1]), vpaddq_s16(x[2], x[3]))
                    } else {
                        vpaddq_s16(x[0], x[1])
                    };
                    *a = vpadalq_s16(*a, folded);
                }
            }
        }
        return acc;
    }
    // GEMV: let the int16 lanes run for 7 (bd = 8: 28 products) or 3 (bd = 4: 24) groups, then
    // widen each into its own int32 register; fold those after the K loop.
    let run = if BD == 8 { 7 } else { 3 };
    let slots = if BD == 8 { 4 } else { 2 };
    let mut wide = [[[vdupq_n_s32(0); 4]; NB]; MR];
    let mut g = 0;
    while g < groups {
        let mut t = zero16;
        let whole = groups - g >= run;
        // The run's first group starts from the constant zero, so it compiles to SMULL
        // without zeroing `t` first.
        let (lhs_g, rhs_g) = at(g);
        // SAFETY: group `g < groups` of both tiles (caller's contract).
        unsafe { group::<MR, NR, BD, NB>(&mut t, lhs_g, rhs_g) };
        g += 1;
        // A whole run has a constant trip count (unrolled where short), the last one not.
        if whole {
            for _ in 1..run {
                let (lhs_g, rhs_g) = at(g);
                // SAFETY: group `g < groups` of both tiles (caller's contract).
                unsafe { group::<MR, NR, BD, NB>(&mut t, lhs_g, rhs_g) };
                g += 1;
            }
        } else {
            while g < groups {
                let (lhs_g, rhs_g) = at(g);
                // SAFETY: group `g < groups` of both tiles (caller's contract).
                unsafe { group::<MR, NR, BD, NB>(&mut t, lhs_g, rhs_g) };
                g += 1;
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

/// Output geometry of one tile: valid rows and columns, destination and clamp.
#[cfg(target_arch = "aarch64")]
#[derive(Clone, Copy)]
struct Out {
    dst: *mut f32,
    stride: usize,
    rows: usize,
    cols: usize,
    min: float32x4_t,
    max: float32x4_t,
}

/// One K pass over `NB` blocks of 4 columns (columns `4*NB*pass ..`) of an `MR x NR` tile,
/// then the epilogue and the store of the valid part.
///
/// # Safety
///
/// `lhs` is a whole packed LHS tile (`MR` rows, `BD`, `groups` groups), `rhs` a whole packed RHS
/// tile (`NR` columns); `4*NB*(pass+1) <= NR`; `out.dst` is element (0, 0) of the tile and is
/// writable for `out.rows` rows of `out.cols` elements at `out.stride` bytes.
#[cfg(target_arch = "aarch64")]
#[target_feature(enable = "neon")]
#[inline]
unsafe fn tile_pass<const MR: usize, const NR: usize, const BD: usize, const NB: usize>(
    lhs: *const u8,
    rhs: *const u8,
    groups: usize,
    pass: usize,
    out: Out,
) {
    // SAFETY: whole tiles (caller's contract); the pass's first column is
    // `4*NB*pass < NR`, `BD` bytes per column in a chunk.
    let acc =
        unsafe { k_loop::<MR, NR, BD, NB>(lhs, rhs.wrapping_add(4 * NB * pass * BD), groups) };

    let kp = groups * GROUP;
    let lhs_x = lhs.wrapping_add(MR * kp);
    let rhs_x = rhs.wrapping_add(NR * kp / 2);
    for (r, acc_r) in acc.iter().enumerate() {
        // SAFETY: the LHS extras (offset[MR] i32, dq[MR] f32) follow the tile's data.
        let (offset, dq) = unsafe {
            (
                lhs_x.add(4 * r).cast::<i32>().read_unaligned(),
                lhs_x.add(4 * MR + 4 * r).cast::<f32>().read_unaligned(),
            )
        };
        for (b, &a) in acc_r.iter().enumerate() {
            let c0 = 4 * (NB * pass + b);
            // SAFETY: the RHS extras (rsum, scale16, bias: NR values each) follow the tile's
            // data and `c0 + 4 <= NR`.
            let (rsum, scale, bias) = unsafe {
                (
                    vreinterpretq_s32_u8(vld1q_u8(rhs_x.add(4 * c0))),
                    vreinterpretq_f32_u8(vld1q_u8(rhs_x.add(4 * NR + 4 * c0))),
                    vreinterpretq_f32_u8(vld1q_u8(rhs_x.add(8 * NR + 4 * c0))),
                )
            };
            let iacc = vmlaq_n_s32(vshlq_n_s32::<4>(a), rsum, offset);
            let s = vmulq_n_f32(scale, dq);
            let mut v = vaddq_f32(vmulq_f32(vcvtq_f32_s32(iacc), s), bias);
            v = vminq_f32(vmaxq_f32(v, out.min), out.max);
            if r < out.rows && c0 < out.cols {
                let row = out.dst.wrapping_byte_add(r * out.stride).wrapping_add(c0);
                if c0 + 4 <= out.cols {
                    // SAFETY: row `r < rows`, columns `c0..c0+4 <= cols`: inside the
                    // rectangle the caller made writable.
                    unsafe { vst1q_u8(row.cast(), vreinterpretq_u8_f32(v)) };
                } else {
                    let mut tmp = [0f32; 4];
                    // SAFETY: `tmp` is a local array of 4 f32.
                    unsafe { vst1q_f32(tmp.as_mut_ptr(), v) };
                    for (i, &x) in tmp.iter().enumerate().take(out.cols - c0) {
                        // SAFETY: column `c0 + i < cols` of row `r < rows`.
                        unsafe { row.add(i).write_unaligned(x) };
                    }
                }
            }
        }
    }
}

/// The generic micro-kernel: `MR x NR` tiles, block depth `BD` (8 or 4), `NB` blocks of 4
/// columns per K pass (`NR / 4` must be a multiple of `NB`).
///
/// # Safety
///
/// The contract of [`Kernel::run_unchecked`](crate::Kernel::run_unchecked) for a kernel whose
/// packing is `(MR, NR, 2*BD, 2)`; the CPU has NEON.
#[cfg(target_arch = "aarch64")]
#[target_feature(enable = "neon")]
unsafe fn matmul<const MR: usize, const NR: usize, const BD: usize, const NB: usize>(
    args: &UncheckedArgs,
) {
    let kp = args.k.div_ceil(GROUP) * GROUP;
    let groups = kp / GROUP;
    // Tile strides (qai8dxp: MR*(Kp+8); qsi4cxp: NR*(Kp/2+12)); the caller's buffers hold
    // these tiles, so the products cannot overflow.
    let (lts, rts) = (MR * (kp + 8), NR * (kp / 2 + 12));
    let min = vdupq_n_f32(args.clamp_min);
    let max = vdupq_n_f32(args.clamp_max);
    for nt in 0..args.n.div_ceil(NR) {
        let cols = (args.n - nt * NR).min(NR);
        let rhs = args.rhs_packed.wrapping_add(nt * rts);
        for mt in 0..args.m.div_ceil(MR) {
            let rows = (args.m - mt * MR).min(MR);
            let lhs = args.lhs_packed.wrapping_add(mt * lts);
            let dst = args
                .dst
                .wrapping_byte_add(mt * MR * args.dst_stride_row)
                .wrapping_add(nt * NR);
            let out = Out {
                dst,
                stride: args.dst_stride_row,
                rows,
                cols,
                min,
                max,
            };
            for pass in 0..NR / (4 * NB) {
                if 4 * NB * pass >= cols {
                    break;
                }
                // SAFETY: tile `mt < ceil(m/MR)` of the LHS and `nt < ceil(n/NR)` of the RHS are
                // readable; the rectangle's rows `mt*MR..+rows` and columns `nt*NR..+cols` are
                // writable (caller's contract).
                unsafe { tile_pass::<MR, NR, BD, NB>(lhs, rhs, groups, pass, out) };
            }
        }
    }
}

macro_rules! neon_kernels {
    ($(($ident:ident, $entry:ident, $name:literal, $p:ident, $mr:literal, $nr:literal, $bd:literal, $nb:literal)),* $(,)?) => {
        $(
            #[cfg(target_arch = "aarch64")]
            const _: () = assert!(
                ($mr == 1 || $mr == 4)
                    && super::$p.mr == $mr && super::$p.nr == $nr && super::$p.block_depth() == $bd
                    && $nr % (4 * $nb) == 0
            );

            #[doc = concat!("`", $name, "`: ", stringify!($mr), "x", stringify!($nr),
                " tiles of [`", stringify!($p), "`](super::", stringify!($p), ").")]
            ///
            /// # Safety
            ///
            /// The contract of [`Kernel::run_unchecked`](crate::Kernel::run_unchecked) for this
            /// kernel: the CPU has NEON, `m, n, k >= 1`, `bl == 0`, `lhs_packed`/`rhs_packed`
            /// hold `ceil(m/mr)` / `ceil(n/nr)` tiles packed with this packing and `k`, `dst` is
            /// writable for `m` rows of `n` f32 at `dst_stride_row` bytes and does not overlap
            /// them, `clamp_min <= clamp_max`.
            #[cfg(target_arch = "aarch64")]
            #[target_feature(enable = "neon")]
            pub unsafe fn $entry(args: &UncheckedArgs) {
                // SAFETY: forwarded from the caller's contract; the packing matches the
                // const parameters (checked at compile time above).
                unsafe { matmul::<$mr, $nr, $bd, $nb>(args) }
            }

            #[doc = concat!("NEON kernel `", $name, "`.")]
            #[cfg(target_arch = "aarch64")]
            pub static $ident: Kernel = super::kernel(
                $name,
                Tier::Neon,
                (super::$p.mr, super::$p.nr),
                super::$p,
                RawKernel::Fixed($entry),
            );
        )*
    };
}

neon_kernels! {
    (NEON_4X8, matmul_4x8_unchecked, "matmul_clamp_f32_qai8dxp4x8_qsi4cxp8x8_4x8_neon", PACKING_4X8, 4, 8, 8, 1),
    (NEON_4X4, matmul_4x4_unchecked, "matmul_clamp_f32_qai8dxp4x8_qsi4cxp4x8_4x4_neon", PACKING_4X4, 4, 4, 8, 1),
    (NEON_1X8, matmul_1x8_unchecked, "matmul_clamp_f32_qai8dxp1x8_qsi4cxp8x8_1x8_neon", PACKING_1X8, 1, 8, 8, 2),
    (NEON_1X4, matmul_1x4_unchecked, "matmul_clamp_f32_qai8dxp1x8_qsi4cxp4x8_1x4_neon", PACKING_1X4, 1, 4, 8, 1),
    (NEON_4X8_KR8, matmul_4x8_kr8_unchecked, "matmul_clamp_f32_qai8dxp4x4_qsi4cxp8x4_4x8_neon", PACKING_4X8_KR8, 4, 8, 4, 1),
    (NEON_4X4_KR8, matmul_4x4_kr8_unchecked, "matmul_clamp_f32_qai8dxp4x4_qsi4cxp4x4_4x4_neon", PACKING_4X4_KR8, 4, 4, 4, 1),
    (NEON_1X4_KR8, matmul_1x4_kr8_unchecked, "matmul_clamp_f32_qai8dxp1x4_qsi4cxp4x4_1x4_neon", PACKING_1X4_KR8, 1, 4, 4, 1),
}

/// This tier's kernels, best first.
#[cfg(target_arch = "aarch64")]
pub(super) const KERNELS: &[&Kernel] = &[
    &NEON_4X8,
    &NEON_4X4,
    &NEON_1X8,
    &NEON_1X4,
    &NEON_4X8_KR8,
    &NEON_4X4_KR8,
    &NEON_1X4_KR8,
];

/// This tier's kernels: none on this architecture.
#[cfg(not(target_arch = "aarch64"))]
pub(super) const KERNELS: &[&Kernel] = &[];
