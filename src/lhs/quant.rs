//! Row and block quantization primitives shared by the LHS packers, with a NEON path on aarch64
//! (the baseline of every aarch64 target, so chosen at compile time) and a portable path.
//! Both round exactly alike: `x * multiplier` (one f32 multiply), ties away from zero
//! (`FCVTAS` / `roundf`), saturating add of the zero point, clamp.

use crate::arith::{round_away_i32, round_even};
use crate::element::Element;

/// Values quantized per call of [`quantize_group`].
pub(crate) const GROUP: usize = 32;

/// `(min, max)` of a non-empty slice of any element type (each value widened exactly to f32), or
/// `None` if a value is NaN or infinite.
#[inline]
pub(crate) fn min_max_finite<S: Element>(x: &[S]) -> Option<(f32, f32)> {
    #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
    {
        neon::min_max_finite(x)
    }
    #[cfg(not(all(target_arch = "aarch64", target_feature = "neon")))]
    {
        x.iter().all(|v| v.is_finite()).then(|| portable::min_max_widened(x))
    }
}

/// `(min, max)` of the products `x[j] * scale[j]` (f32, one rounding each) of two slices of one
/// non-zero length, or `None` if a product is NaN or infinite.
#[inline]
pub(crate) fn min_max_finite_scaled(x: &[f32], scale: &[f32]) -> Option<(f32, f32)> {
    #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
    {
        neon::min_max_finite_scaled(x, scale)
    }
    #[cfg(not(all(target_arch = "aarch64", target_feature = "neon")))]
    {
        portable::min_max_scaled(x, scale)
    }
}

/// `max |x|` over a slice (0 for an empty slice), NaN or infinite if a value is not finite.
#[inline]
pub(crate) fn abs_max_finite(x: &[f32]) -> f32 {
    #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
    {
        neon::abs_max_finite(x)
    }
    #[cfg(not(all(target_arch = "aarch64", target_feature = "neon")))]
    {
        if x.iter().all(|v| v.is_finite()) { portable::abs_max(x) } else { f32::NAN }
    }
}

/// `max |x|` over a slice (0 for an empty slice).
#[inline]
pub(crate) fn abs_max(x: &[f32]) -> f32 {
    #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
    {
        neon::abs_max(x)
    }
    #[cfg(not(all(target_arch = "aarch64", target_feature = "neon")))]
    {
        portable::abs_max(x)
    }
}

/// `clamp(round_away(x[j] * multiplier) + zero_point, lo, hi)` for up to [`GROUP`] values;
/// entries past `x.len()` are 0.
#[inline]
pub(crate) fn quantize_group(x: &[f32], multiplier: f32, zero_point: i32, lo: i32, hi: i32) -> [i8; GROUP] {
    #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
    {
        neon::quantize_group(x, multiplier, zero_point, lo, hi)
    }
    #[cfg(not(all(target_arch = "aarch64", target_feature = "neon")))]
    {
        portable::quantize_group(x, multiplier, zero_point, lo, hi)
    }
}

/// How `x * multiplier` becomes an integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Round {
    /// Nearest, ties away from zero (`FCVTAS`).
    Away,
    /// Nearest, ties to even (`FCVTNS`).
    Even,
    /// Toward zero (`FCVTZS`).
    Zero,
}

impl Round {
    /// `v` rounded to an integer, saturating at the i32 range (as the instructions do).
    #[inline]
    pub(crate) fn apply(self, v: f32) -> i32 {
        match self {
            Round::Away => round_away_i32(v),
            Round::Even => round_even(v) as i32,
            Round::Zero => v as i32,
        }
    }
}

/// As [`quantize_group`], but values `x[j]` with `j < split` are rounded by `first` (the rest
/// away from zero): the f16 and bf16 packers' position-dependent rounding.
#[inline]
pub(crate) fn quantize_group_split(
    x: &[f32],
    multiplier: f32,
    zero_point: i32,
    lo: i32,
    hi: i32,
    first: Round,
    split: usize,
) -> [i8; GROUP] {
    if split == 0 || first == Round::Away {
        return quantize_group(x, multiplier, zero_point, lo, hi);
    }
    #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
    let mut q = neon::quantize_group_round(x, multiplier, zero_point, lo, hi, first);
    #[cfg(not(all(target_arch = "aarch64", target_feature = "neon")))]
    let mut q = portable::quantize_group_round(x, multiplier, zero_point, lo, hi, first);
    for j in split..x.len().min(GROUP) {
        q[j] = quantize_one(x[j], multiplier, zero_point, lo, hi);
    }
    q
}

/// One value, as [`quantize_group`] computes it.
#[inline]
pub(crate) fn quantize_one(x: f32, multiplier: f32, zero_point: i32, lo: i32, hi: i32) -> i8 {
    round_away_i32(x * multiplier).saturating_add(zero_point).clamp(lo, hi) as i8
}

pub(crate) mod portable {
    use super::{GROUP, Round, quantize_one};
    use crate::element::Element;

    /// `(min, max)` of a non-empty slice of finite values of any element type, widened.
    pub(crate) fn min_max_widened<S: Element>(x: &[S]) -> (f32, f32) {
        x.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), v| (lo.min(v.to_f32()), hi.max(v.to_f32())))
    }

    pub(crate) fn abs_max(x: &[f32]) -> f32 {
        x.iter().fold(0.0f32, |a, v| a.max(v.abs()))
    }

    /// `(min, max)` of `x[j] * scale[j]`, `None` if a product is not finite.
    pub(crate) fn min_max_scaled(x: &[f32], scale: &[f32]) -> Option<(f32, f32)> {
        let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
        for (&v, &s) in x.iter().zip(scale) {
            let p = v * s;
            if !p.is_finite() {
                return None;
            }
            (lo, hi) = (lo.min(p), hi.max(p));
        }
        Some((lo, hi))
    }

    #[cfg_attr(all(target_arch = "aarch64", target_feature = "neon"), allow(dead_code))]
    pub(crate) fn quantize_group(x: &[f32], multiplier: f32, zero_point: i32, lo: i32, hi: i32) -> [i8; GROUP] {
        let mut out = [0i8; GROUP];
        for (o, &v) in out.iter_mut().zip(x) {
            *o = quantize_one(v, multiplier, zero_point, lo, hi);
        }
        out
    }

    /// As `quantize_group`, every value rounded by `round`.
    #[cfg_attr(all(target_arch = "aarch64", target_feature = "neon"), allow(dead_code))]
    pub(crate) fn quantize_group_round(
        x: &[f32],
        multiplier: f32,
        zero_point: i32,
        lo: i32,
        hi: i32,
        round: Round,
    ) -> [i8; GROUP] {
        let mut out = [0i8; GROUP];
        for (o, &v) in out.iter_mut().zip(x) {
            *o = round.apply(v * multiplier).saturating_add(zero_point).clamp(lo, hi) as i8;
        }
        out
    }
}

#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
pub(crate) mod neon {
    use core::arch::aarch64::*;

    use super::{GROUP, Round, portable};
    use crate::element::Element;
    use crate::packing::{store_chunks, store_chunks_strided};

    /// The packers' NEON loads (and a 16-byte store) of any alignment. aarch64-unknown-none's LLVM
    /// target has `+strict-align`: there an intrinsic's access of unknown alignment becomes byte
    /// accesses or a `memcpy` call (about 40 instructions per 16 bytes), so `target_os = "none"`
    /// writes out `LD1`/`ST1`, whose alignment check is per element (met by any pointer into a
    /// slice). Elsewhere the intrinsics, one instruction each as well.
    mod mem {
        #[cfg(not(target_os = "none"))]
        use core::arch::aarch64::*;

        #[cfg(target_os = "none")]
        pub(crate) use super::strict::{ld1_f32, ld1_f32x4, ld1_u16x2, ld1_u16x4, st1_u8};

        /// 4 f32 at `p`.
        ///
        /// # Safety
        ///
        /// `p` is aligned for f32 and readable for 4 values.
        #[cfg(not(target_os = "none"))]
        #[inline(always)]
        pub(crate) unsafe fn ld1_f32(p: *const f32) -> float32x4_t {
            // SAFETY: NEON is enabled for the whole target; the caller's contract.
            unsafe { vld1q_f32(p) }
        }

        /// 16 f32 at `p`.
        ///
        /// # Safety
        ///
        /// `p` is aligned for f32 and readable for 16 values.
        #[cfg(not(target_os = "none"))]
        #[inline(always)]
        pub(crate) unsafe fn ld1_f32x4(p: *const f32) -> float32x4x4_t {
            // SAFETY: NEON is enabled for the whole target; the caller's contract.
            unsafe { vld1q_f32_x4(p) }
        }

        /// 16 u16 at `p`.
        ///
        /// # Safety
        ///
        /// `p` is aligned for u16 and readable for 16 values.
        #[cfg(not(target_os = "none"))]
        #[inline(always)]
        pub(crate) unsafe fn ld1_u16x2(p: *const u16) -> uint16x8x2_t {
            // SAFETY: NEON is enabled for the whole target; the caller's contract.
            unsafe { vld1q_u16_x2(p) }
        }

        /// 32 u16 at `p`.
        ///
        /// # Safety
        ///
        /// `p` is aligned for u16 and readable for 32 values.
        #[cfg(not(target_os = "none"))]
        #[inline(always)]
        pub(crate) unsafe fn ld1_u16x4(p: *const u16) -> uint16x8x4_t {
            // SAFETY: NEON is enabled for the whole target; the caller's contract.
            unsafe { vld1q_u16_x4(p) }
        }

        /// `v` stored at `p`.
        ///
        /// # Safety
        ///
        /// `p` is writable for 16 bytes.
        #[cfg(not(target_os = "none"))]
        #[inline(always)]
        pub(crate) unsafe fn st1_u8(p: *mut u8, v: uint8x16_t) {
            // SAFETY: NEON is enabled for the whole target; the caller's contract.
            unsafe { vst1q_u8(p, v) }
        }
    }

    /// [`mem`] for `target_os = "none"`: `LD1`/`ST1` in inline assembly (also built for the
    /// tests, which compare them with the intrinsics). The multi-register loads name `v0..v3`:
    /// `LD1` takes consecutive registers.
    #[cfg(any(target_os = "none", test))]
    mod strict {
        use core::arch::aarch64::*;
        use core::arch::asm;

        /// As `mem::ld1_f32`.
        ///
        /// # Safety
        ///
        /// `p` is aligned for f32 and readable for 4 values.
        #[inline(always)]
        pub(crate) unsafe fn ld1_f32(p: *const f32) -> float32x4_t {
            let v: float32x4_t;
            // SAFETY: NEON is enabled for the whole target; `LD1 {.4S}` reads the 16 bytes at `p`
            // as 4 elements, each 4-byte aligned since `p` is (the caller's contract); no other
            // state changes.
            unsafe {
                asm!("ld1 {{{v:v}.4s}}, [{p}]", p = in(reg) p, v = out(vreg) v, options(pure, readonly, nostack, preserves_flags))
            };
            v
        }

        /// As `mem::ld1_f32x4`.
        ///
        /// # Safety
        ///
        /// `p` is aligned for f32 and readable for 16 values.
        #[inline(always)]
        pub(crate) unsafe fn ld1_f32x4(p: *const f32) -> float32x4x4_t {
            let (a, b, c, d): (float32x4_t, float32x4_t, float32x4_t, float32x4_t);
            // SAFETY: NEON is enabled for the whole target; `LD1` reads the 64 bytes at `p` as 16
            // elements, each 4-byte aligned since `p` is (the caller's contract), into v0..v3.
            unsafe {
                asm!("ld1 {{v0.4s, v1.4s, v2.4s, v3.4s}}, [{p}]", p = in(reg) p,
                    out("v0") a, out("v1") b, out("v2") c, out("v3") d, options(pure, readonly, nostack, preserves_flags));
            }
            float32x4x4_t(a, b, c, d)
        }

        /// As `mem::ld1_u16x2`.
        ///
        /// # Safety
        ///
        /// `p` is aligned for u16 and readable for 16 values.
        #[inline(always)]
        pub(crate) unsafe fn ld1_u16x2(p: *const u16) -> uint16x8x2_t {
            let (a, b): (uint16x8_t, uint16x8_t);
            // SAFETY: NEON is enabled for the whole target; `LD1` reads the 32 bytes at `p` as 16
            // elements, each 2-byte aligned since `p` is (the caller's contract), into v0, v1.
            unsafe {
                asm!("ld1 {{v0.8h, v1.8h}}, [{p}]", p = in(reg) p, out("v0") a, out("v1") b,
                    options(pure, readonly, nostack, preserves_flags));
            }
            uint16x8x2_t(a, b)
        }

        /// As `mem::ld1_u16x4`.
        ///
        /// # Safety
        ///
        /// `p` is aligned for u16 and readable for 32 values.
        #[inline(always)]
        pub(crate) unsafe fn ld1_u16x4(p: *const u16) -> uint16x8x4_t {
            let (a, b, c, d): (uint16x8_t, uint16x8_t, uint16x8_t, uint16x8_t);
            // SAFETY: NEON is enabled for the whole target; `LD1` reads the 64 bytes at `p` as 32
            // elements, each 2-byte aligned since `p` is (the caller's contract), into v0..v3.
            unsafe {
                asm!("ld1 {{v0.8h, v1.8h, v2.8h, v3.8h}}, [{p}]", p = in(reg) p,
                    out("v0") a, out("v1") b, out("v2") c, out("v3") d, options(pure, readonly, nostack, preserves_flags));
            }
            uint16x8x4_t(a, b, c, d)
        }

        /// As `mem::st1_u8`.
        ///
        /// # Safety
        ///
        /// `p` is writable for 16 bytes.
        #[inline(always)]
        pub(crate) unsafe fn st1_u8(p: *mut u8, v: uint8x16_t) {
            // SAFETY: NEON is enabled for the whole target; `ST1 {.16B}` writes the 16 bytes at `p`
            // (the caller's contract), byte elements: no alignment needed.
            unsafe {
                asm!("st1 {{{v:v}.16b}}, [{p}]", p = in(reg) p, v = in(vreg) v, options(nostack, preserves_flags))
            };
        }
    }

    /// Rounding of `x * multiplier` in [`quantize_i8_chunks`] and [`quantize_block32_sum`]:
    /// ties away from zero (`FCVTAS`).
    pub(crate) const AWAY: u8 = 0;
    /// Ties to even (`FCVTNS`).
    pub(crate) const EVEN: u8 = 1;
    /// Toward zero (`FCVTZS`).
    pub(crate) const ZERO: u8 = 2;

    /// 16 values at `x` widened exactly to f32: f32 loaded as is, f16 by `FCVTL`/`FCVTL2` (base
    /// Armv8.0), bf16 by `SHLL #16` (exact for every value that is not a NaN).
    ///
    /// # Safety
    ///
    /// `x` is aligned for `S` and readable for 16 values.
    #[inline(always)]
    pub(crate) unsafe fn load16<S: Element>(x: *const S) -> float32x4x4_t {
        // SAFETY: NEON is enabled for the whole target; the load of 16 values (64 or 32 bytes)
        // is the caller's contract. `S` is `f32`, or a `repr(transparent)` u16 when `SIZE == 2`.
        unsafe {
            if S::SIZE == 4 {
                return mem::ld1_f32x4(x.cast::<f32>());
            }
            let h = mem::ld1_u16x2(x.cast::<u16>());
            widen16::<S>(h.0, h.1)
        }
    }

    /// 16 f16 or bf16 values (bit patterns in two registers) widened exactly to f32.
    #[inline(always)]
    fn widen16<S: Element>(lo: uint16x8_t, hi: uint16x8_t) -> float32x4x4_t {
        // SAFETY: NEON is enabled for the whole target; register operations only.
        unsafe {
            let widen = |v: uint16x8_t| {
                if S::BF16 {
                    (
                        vreinterpretq_f32_u32(vshll_n_u16::<16>(vget_low_u16(v))),
                        vreinterpretq_f32_u32(vshll_high_n_u16::<16>(v)),
                    )
                } else {
                    let f = vreinterpretq_f16_u16(v);
                    (vcvt_f32_f16(vget_low_f16(f)), vcvt_high_f32_f16(f))
                }
            };
            let ((a, b), (c, d)) = (widen(lo), widen(hi));
            float32x4x4_t(a, b, c, d)
        }
    }

    /// `(min, max)` of a non-empty slice (f16 and bf16 widened exactly), 16 values per step;
    /// `None` if a value is not finite (`FMIN`/`FMAX` and `FMINV`/`FMAXV` propagate NaN, an
    /// infinity is the min or the max; a NaN or an infinity widens to one).
    pub(super) fn min_max_finite<S: Element>(x: &[S]) -> Option<(f32, f32)> {
        let chunks = x.chunks_exact(16);
        let tail = chunks.remainder();
        if !tail.iter().all(|v| v.is_finite()) {
            return None;
        }
        let (mut lo, mut hi) =
            if tail.is_empty() { (x[0].to_f32(), x[0].to_f32()) } else { portable::min_max_widened(tail) };
        if x.len() >= 16 {
            // SAFETY: NEON is enabled for the whole target (cfg above); every load reads the 16
            // values of a `chunks_exact(16)` chunk.
            unsafe {
                let (mut l0, mut h0) = (vdupq_n_f32(lo), vdupq_n_f32(hi));
                let (mut l1, mut h1) = (l0, h0);
                for c in chunks {
                    let v = load16(c.as_ptr());
                    l0 = vminq_f32(l0, vminq_f32(v.0, v.1));
                    h0 = vmaxq_f32(h0, vmaxq_f32(v.0, v.1));
                    l1 = vminq_f32(l1, vminq_f32(v.2, v.3));
                    h1 = vmaxq_f32(h1, vmaxq_f32(v.2, v.3));
                }
                lo = vminvq_f32(vminq_f32(l0, l1));
                hi = vmaxvq_f32(vmaxq_f32(h0, h1));
            }
        }
        (lo.is_finite() && hi.is_finite()).then_some((lo, hi))
    }

    /// [`min_max_finite`] of the products `x[j] * scale[j]` (slices of one non-zero length):
    /// one `FMUL` per 4 values in the same pass.
    pub(super) fn min_max_finite_scaled(x: &[f32], scale: &[f32]) -> Option<(f32, f32)> {
        let n = x.len().min(scale.len());
        let whole = n / 16 * 16;
        let (mut lo, mut hi) = portable::min_max_scaled(&x[whole..n], &scale[whole..n])?;
        if whole > 0 {
            // SAFETY: NEON is enabled for the whole target (cfg above); chunk `c < whole / 16`
            // reads `x[16c..16c + 16]` and `scale[16c..16c + 16]`, inside both slices.
            unsafe {
                let (mut l0, mut h0) = (vdupq_n_f32(lo), vdupq_n_f32(hi));
                let (mut l1, mut h1) = (l0, h0);
                for c in 0..whole / 16 {
                    let v = mul16(load16(x.as_ptr().add(16 * c)), load16(scale.as_ptr().add(16 * c)));
                    l0 = vminq_f32(l0, vminq_f32(v.0, v.1));
                    h0 = vmaxq_f32(h0, vmaxq_f32(v.0, v.1));
                    l1 = vminq_f32(l1, vminq_f32(v.2, v.3));
                    h1 = vmaxq_f32(h1, vmaxq_f32(v.2, v.3));
                }
                lo = vminvq_f32(vminq_f32(l0, l1));
                hi = vmaxvq_f32(vmaxq_f32(h0, h1));
            }
        }
        (lo.is_finite() && hi.is_finite()).then_some((lo, hi))
    }

    /// The lane-wise products of two groups of 16 values.
    #[inline(always)]
    fn mul16(a: float32x4x4_t, b: float32x4x4_t) -> float32x4x4_t {
        // SAFETY: NEON is enabled for the whole target; register operations only.
        unsafe { float32x4x4_t(vmulq_f32(a.0, b.0), vmulq_f32(a.1, b.1), vmulq_f32(a.2, b.2), vmulq_f32(a.3, b.3)) }
    }

    /// [`quantize_i8_chunks`] `::<f32, BD, false, AWAY>` of the products `x[j] * scale[j]`
    /// (one `FMUL` per 4 values before the quantizer's own).
    ///
    /// # Safety
    ///
    /// `x` and `scale` are aligned for f32 and readable for `16 * blocks` values; `dst + t * step`
    /// is writable for `BD` bytes for every `t < 16 * blocks / BD`.
    #[inline]
    pub(crate) unsafe fn quantize_i8_chunks_scaled<const BD: usize>(
        x: *const f32,
        scale: *const f32,
        blocks: usize,
        multiplier: f32,
        zero_point: i16,
        dst: *mut u8,
        step: usize,
    ) {
        // SAFETY: NEON is enabled for the whole target; block `h < blocks` reads the 16 values
        // at `x + 16h` and `scale + 16h` and writes the `16 / BD` chunks from
        // `dst + (16h / BD) * step`, the caller's contract.
        unsafe {
            let (vm, vz) = (vdupq_n_f32(multiplier), vdupq_n_s16(zero_point));
            let advance = 16 / BD * step;
            let (mut x, mut scale, mut dst) = (x, scale, dst);
            for _ in 0..blocks {
                let v = mul16(load16(x), load16(scale));
                store_chunks::<BD>(q16::<false, AWAY, true>(v, vm, vz), dst, step);
                x = x.add(16);
                scale = scale.add(16);
                dst = dst.add(advance);
            }
        }
    }

    /// Quantizes the `16 * blocks` values at `x` (f32, or f16/bf16 widened exactly) as
    /// [`quantize_group`] does for `lo = -128, hi = 127` (`SYM`: `lo = -127`, an `SMAX` more),
    /// `x * multiplier` rounded by `MODE` ([`AWAY`]: `FCVTAS`, [`EVEN`]: `FCVTNS`, [`ZERO`]:
    /// `FCVTZS`; saturating narrowings to int16, `SQADD` of the zero point, saturating narrowing
    /// to int8: equal to the int32 saturating add and clamp for every input, since a sum past the
    /// int16 range is far past the int8 one), and stores value `j` at `dst + (j / BD) * step + j
    /// % BD` (`BD` 4 or 8; `step == BD`: plain 16-byte stores).
    ///
    /// # Safety
    ///
    /// `x` is aligned for `S` and readable for `16 * blocks` values; `dst + t * step` is writable
    /// for `BD` bytes for every `t < 16 * blocks / BD`.
    // Always inlined, with the test for contiguous chunks out of the loop: out of line, a call
    // with a known `blocks` unrolls into one copy per store pattern (the firmware-size table grew
    // by 21 KB when the f32 packer stopped inlining it).
    #[inline(always)]
    pub(crate) unsafe fn quantize_i8_chunks<S: Element, const BD: usize, const SYM: bool, const MODE: u8>(
        x: *const S,
        blocks: usize,
        multiplier: f32,
        zero_point: i16,
        dst: *mut u8,
        step: usize,
    ) {
        // SAFETY: the caller's contract; `step == BD` is the contiguous case.
        unsafe {
            if step == BD {
                chunks_run::<S, BD, SYM, MODE, true>(x, blocks, multiplier, zero_point, dst, step)
            } else {
                chunks_run::<S, BD, SYM, MODE, false>(x, blocks, multiplier, zero_point, dst, step)
            }
        }
    }

    /// [`quantize_i8_chunks`], its stores contiguous (`CONTIG`: `step == BD`, one 16-byte store)
    /// or strided.
    ///
    /// # Safety
    ///
    /// As [`quantize_i8_chunks`].
    #[inline(always)]
    unsafe fn chunks_run<S: Element, const BD: usize, const SYM: bool, const MODE: u8, const CONTIG: bool>(
        x: *const S,
        blocks: usize,
        multiplier: f32,
        zero_point: i16,
        dst: *mut u8,
        step: usize,
    ) {
        // SAFETY: NEON is enabled for the whole target; block `h < blocks` reads the 16 values
        // at `x + 16h` and writes the `16 / BD` chunks from `dst + (16h / BD) * step` (the 16
        // bytes at `dst + 16h` when `CONTIG`), the caller's contract.
        unsafe {
            let (vm, vz) = (vdupq_n_f32(multiplier), vdupq_n_s16(zero_point));
            let advance = 16 / BD * step;
            let (mut x, mut dst) = (x, dst);
            for _ in 0..blocks {
                let q = q16::<SYM, MODE, true>(load16(x), vm, vz);
                if CONTIG {
                    mem::st1_u8(dst, q)
                } else {
                    store_chunks_strided::<BD>(q, dst, step)
                }
                x = x.add(16);
                dst = dst.add(advance);
            }
        }
    }

    /// 32 values at `x`, loaded (and widened) once, and their absolute maximum (for
    /// [`quantize_block32_sym`] and [`quantize_block32_sum`]). f16 and bf16 take the maximum of
    /// the magnitude bits as integers (the same order for finite values) and widen only it.
    ///
    /// # Safety
    ///
    /// `x` is aligned for `S` and readable for 32 values, which are finite when `S` is f16 or bf16.
    #[inline(always)]
    pub(crate) unsafe fn load_block32<S: Element>(x: *const S) -> ([float32x4x4_t; 2], f32) {
        // SAFETY: NEON is enabled for the whole target; the loads are the caller's contract.
        unsafe {
            if S::SIZE == 2 {
                let h = mem::ld1_u16x4(x.cast::<u16>());
                let (a, b) = (widen16::<S>(h.0, h.1), widen16::<S>(h.2, h.3));
                let mag = vdupq_n_u16(0x7fff);
                let m = vmaxq_u16(
                    vmaxq_u16(vandq_u16(h.0, mag), vandq_u16(h.1, mag)),
                    vmaxq_u16(vandq_u16(h.2, mag), vandq_u16(h.3, mag)),
                );
                let bits = vmaxvq_u16(m);
                let amax = if S::BF16 {
                    f32::from_bits(u32::from(bits) << 16)
                } else {
                    vgetq_lane_f32::<0>(vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(bits))))
                };
                return ([a, b], amax);
            }
            let (a, b) = (load16(x), load16(x.add(16)));
            let m4 = |v: float32x4x4_t| {
                vmaxq_f32(vmaxq_f32(vabsq_f32(v.0), vabsq_f32(v.1)), vmaxq_f32(vabsq_f32(v.2), vabsq_f32(v.3)))
            };
            ([a, b], vmaxvq_f32(vmaxq_f32(m4(a), m4(b))))
        }
    }

    /// A block of 32 values from [`load_block32`] quantized symmetrically as by
    /// [`quantize_i8_chunks`] `::<_, BD, true, AWAY>` with multiplier `rep` and zero point 0,
    /// stored from `dst`.
    ///
    /// # Safety
    ///
    /// `dst + t * step` is writable for `BD` bytes for every `t < 32 / BD`.
    #[inline(always)]
    pub(crate) unsafe fn quantize_block32_sym<const BD: usize>(
        v: &[float32x4x4_t; 2],
        rep: f32,
        dst: *mut u8,
        step: usize,
    ) {
        // SAFETY: NEON is enabled for the whole target; the stores are the caller's contract
        // (the second 16 values' chunks start `16 / BD` chunks on).
        unsafe {
            let (vm, vz) = (vdupq_n_f32(rep), vdupq_n_s16(0));
            store_chunks::<BD>(q16::<true, AWAY, false>(v[0], vm, vz), dst, step);
            store_chunks::<BD>(q16::<true, AWAY, false>(v[1], vm, vz), dst.add(16 / BD * step), step);
        }
    }

    /// A block of 32 values from [`load_block32`] quantized with zero point 0, `x * mult`
    /// rounded by `MODE`, stored from `dst` as by [`quantize_i8_chunks`]; returns the sum of the
    /// 32 codes. The codes are narrowed without saturation (`UZP1`), so every `x * mult` must
    /// round into `[-128, 127]`: true for `mult = 127 / max |x|` rounded to f32 (then
    /// `|x * mult| <= 127 (1 + 2^-23)^2`) and for `mult = 0`.
    ///
    /// # Safety
    ///
    /// `dst + t * step` is writable for `BD` bytes for every `t < 32 / BD`.
    #[inline(always)]
    pub(crate) unsafe fn quantize_block32_sum<const BD: usize, const MODE: u8>(
        v: &[float32x4x4_t; 2],
        mult: f32,
        dst: *mut u8,
        step: usize,
    ) -> i32 {
        // SAFETY: NEON is enabled for the whole target; the stores are the caller's contract
        // (the second 16 values' chunks start `16 / BD` chunks on).
        unsafe {
            let vm = vdupq_n_f32(mult);
            let q = |v: float32x4_t| {
                let p = vmulq_f32(v, vm);
                vreinterpretq_s16_s32(match MODE {
                    EVEN => vcvtnq_s32_f32(p),
                    ZERO => vcvtq_s32_f32(p),
                    _ => vcvtaq_s32_f32(p),
                })
            };
            let n16 = |v: float32x4x4_t| {
                let (ab, cd) = (vuzp1q_s16(q(v.0), q(v.1)), vuzp1q_s16(q(v.2), q(v.3)));
                vreinterpretq_u8_s8(vuzp1q_s8(vreinterpretq_s8_s16(ab), vreinterpretq_s8_s16(cd)))
            };
            let (a, b) = (n16(v[0]), n16(v[1]));
            store_chunks::<BD>(a, dst, step);
            store_chunks::<BD>(b, dst.add(16 / BD * step), step);
            i32::from(vaddlvq_s8(vreinterpretq_s8_u8(a))) + i32::from(vaddlvq_s8(vreinterpretq_s8_u8(b)))
        }
    }

    /// 16 values quantized to int8 (see [`quantize_i8_chunks`]); `ZP`: add the zero point `vz`
    /// (else it is 0).
    #[inline(always)]
    fn q16<const SYM: bool, const MODE: u8, const ZP: bool>(
        v: float32x4x4_t,
        vm: float32x4_t,
        vz: int16x8_t,
    ) -> uint8x16_t {
        // SAFETY: NEON is enabled for the whole target; register operations only.
        unsafe {
            let q = |v: float32x4_t| {
                let p = vmulq_f32(v, vm);
                match MODE {
                    EVEN => vcvtnq_s32_f32(p),
                    ZERO => vcvtq_s32_f32(p),
                    _ => vcvtaq_s32_f32(p),
                }
            };
            let (ab, cd) = (vqmovn_high_s32(vqmovn_s32(q(v.0)), q(v.1)), vqmovn_high_s32(vqmovn_s32(q(v.2)), q(v.3)));
            // No `SQADD` when the zero point is 0.
            let (ab, cd) = if ZP { (vqaddq_s16(ab, vz), vqaddq_s16(cd, vz)) } else { (ab, cd) };
            let q8 = vqmovn_high_s16(vqmovn_s16(ab), cd);
            vreinterpretq_u8_s8(if SYM { vmaxq_s8(q8, vdupq_n_s8(-127)) } else { q8 })
        }
    }

    /// `max |x|`, 16 values per step; NaN or infinite if a value is not finite (`FMAX` and
    /// `FMAXV` propagate NaN).
    pub(super) fn abs_max_finite(x: &[f32]) -> f32 {
        let chunks = x.chunks_exact(16);
        let tail = chunks.remainder();
        if !tail.iter().all(|v| v.is_finite()) {
            return f32::NAN;
        }
        let mut m = portable::abs_max(tail);
        // SAFETY: NEON is enabled for the whole target; every load reads one 16-value chunk.
        unsafe {
            let (mut m0, mut m1) = (vdupq_n_f32(m), vdupq_n_f32(m));
            for c in chunks {
                let v = mem::ld1_f32x4(c.as_ptr());
                m0 = vmaxq_f32(m0, vmaxq_f32(vabsq_f32(v.0), vabsq_f32(v.1)));
                m1 = vmaxq_f32(m1, vmaxq_f32(vabsq_f32(v.2), vabsq_f32(v.3)));
            }
            m = vmaxvq_f32(vmaxq_f32(m0, m1));
        }
        m
    }

    pub(super) fn abs_max(x: &[f32]) -> f32 {
        let chunks = x.chunks_exact(4);
        let mut m = portable::abs_max(chunks.remainder());
        // SAFETY: NEON is enabled for the whole target; every load reads one 4-value chunk.
        unsafe {
            let mut vm = vdupq_n_f32(m);
            for c in chunks {
                vm = vmaxq_f32(vm, vabsq_f32(mem::ld1_f32(c.as_ptr())));
            }
            m = vmaxvq_f32(vm);
        }
        m
    }

    pub(super) fn quantize_group(x: &[f32], multiplier: f32, zero_point: i32, lo: i32, hi: i32) -> [i8; GROUP] {
        quantize_group_round(x, multiplier, zero_point, lo, hi, Round::Away)
    }

    /// Every value rounded by `round` (`FCVTAS`, `FCVTNS` or `FCVTZS`), as
    /// `portable::quantize_group_round`.
    #[inline]
    pub(super) fn quantize_group_round(
        x: &[f32],
        multiplier: f32,
        zero_point: i32,
        lo: i32,
        hi: i32,
        round: Round,
    ) -> [i8; GROUP] {
        let x = &x[..x.len().min(GROUP)];
        let full = x.len() / 8 * 8;
        let mut out = [0i8; GROUP];
        // SAFETY: NEON is enabled for the whole target. Each iteration loads 8 values at
        // `x[j..j + 8]` with `j + 8 <= full <= x.len()` and stores 8 bytes at `out[j..j + 8]`
        // with `j + 8 <= GROUP`.
        unsafe {
            let (vm, vz) = (vdupq_n_f32(multiplier), vdupq_n_s32(zero_point));
            let (vlo, vhi) = (vdupq_n_s32(lo), vdupq_n_s32(hi));
            let q4 = |p: *const f32| {
                let v = vmulq_f32(mem::ld1_f32(p), vm);
                // Saturating conversions, like `Round::apply`.
                let i = match round {
                    Round::Away => vcvtaq_s32_f32(v),
                    Round::Even => vcvtnq_s32_f32(v),
                    Round::Zero => vcvtq_s32_f32(v),
                };
                vminq_s32(vmaxq_s32(vqaddq_s32(i, vz), vlo), vhi)
            };
            let mut j = 0;
            while j < full {
                let a = vqmovn_s32(q4(x.as_ptr().add(j)));
                let b = vqmovn_s32(q4(x.as_ptr().add(j + 4)));
                vst1_s8(out.as_mut_ptr().add(j), vqmovn_s16(vcombine_s16(a, b)));
                j += 8;
            }
        }
        for j in full..x.len() {
            out[j] = round.apply(x[j] * multiplier).saturating_add(zero_point).clamp(lo, hi) as i8;
        }
        out
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn strict_loads_and_store_match_the_intrinsics() {
            let f: [f32; 24] = core::array::from_fn(|j| j as f32 * 1.25 - 9.0);
            let h: [u16; 40] = core::array::from_fn(|j| (j as u16).wrapping_mul(40_503) ^ 0x5a5a);
            // Every element offset within 16 bytes: `LD1` must not need more than element alignment.
            for o in 0..8 {
                // SAFETY: NEON is enabled for the whole target; `f[o..o + 16]` and `h[o..o + 32]`
                // are inside the arrays (o < 8), and every pointer is element-aligned.
                let (a, b) = unsafe {
                    let (p, q) = (f.as_ptr().add(o), h.as_ptr().add(o));
                    let a: ([u32; 4], [u32; 16], [u16; 16], [u16; 32]) = core::mem::transmute((
                        strict::ld1_f32(p),
                        strict::ld1_f32x4(p),
                        strict::ld1_u16x2(q),
                        strict::ld1_u16x4(q),
                    ));
                    let b: ([u32; 4], [u32; 16], [u16; 16], [u16; 32]) =
                        core::mem::transmute((vld1q_f32(p), vld1q_f32_x4(p), vld1q_u16_x2(q), vld1q_u16_x4(q)));
                    (a, b)
                };
                assert_eq!(a, b, "offset {o}");
                assert_eq!(a.1[0], f[o].to_bits());
                assert_eq!(a.3[31], h[o + 31]);
            }
            // The 16-byte store at every byte offset writes those 16 bytes and nothing else.
            let v: [u8; 16] = core::array::from_fn(|j| 0xa0 + j as u8);
            for o in 0..16 {
                let mut buf = [0x11u8; 48];
                // SAFETY: NEON is enabled for the whole target; `buf[o..o + 16]` is inside `buf`.
                unsafe { strict::st1_u8(buf.as_mut_ptr().add(o), vld1q_u8(v.as_ptr())) };
                assert_eq!(buf[o..o + 16], v, "offset {o}");
                assert!(buf[..o].iter().chain(&buf[o + 16..]).all(|&b| b == 0x11), "offset {o}");
            }
        }

        #[test]
        fn neon_and_portable_paths_agree() {
            let mut s = 1u32;
            let mut next = || {
                s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                f32::from_bits(0x3f80_0000 | (s >> 9)) * if s & 1 == 0 { 3.0 } else { -7.5 }
            };
            let x: [f32; 37] = core::array::from_fn(|j| {
                if j == 9 {
                    127.5
                } else if j == 10 {
                    -0.5
                } else {
                    next()
                }
            });
            assert_eq!(min_max_finite(&x), Some(portable::min_max_widened(&x)));
            assert_eq!(min_max_finite(&x[..3]), Some(portable::min_max_widened(&x[..3])));
            assert_eq!(abs_max(&x), portable::abs_max(&x));
            for (m, z, lo, hi) in
                [(1.0, -1, -128, 127), (17.3, 5, -128, 127), (3.0e9, 0, -127, 127), (0.0, 127, -128, 127)]
            {
                for len in [0, 5, 8, 31, 32] {
                    let a = quantize_group(&x[..len], m, z, lo, hi);
                    let b = portable::quantize_group(&x[..len], m, z, lo, hi);
                    assert_eq!(a, b, "{m} {z} {len}");
                    for round in [Round::Away, Round::Even, Round::Zero] {
                        let a = quantize_group_round(&x[..len], m, z, lo, hi, round);
                        let b = portable::quantize_group_round(&x[..len], m, z, lo, hi, round);
                        assert_eq!(a, b, "{m} {z} {len} {round:?}");
                    }
                }
            }
        }
    }
}
