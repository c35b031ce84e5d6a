//! Scalar models of the float families' instructions (docs/formats.md, §Arithmetic: FMA kernels,
//! §Arithmetic: BFloat16 dot product, §Arithmetic: float clamp and outputs): fused f32 and f16
//! multiply-add, the BFloat16 dot product of `BFDOT`/`BFMMLA` and the clamp. The scalar tier
//! computes with these, so a core without FEAT_FP16 or FEAT_BF16 gets the bits of one with it.
//!
//! The models compute in the host's f32 and f64 arithmetic, whose NaNs are the host's (x86's
//! invalid-operation NaN is negative): the kernels pass every result through [`default_nan`]
//! before the clamp, so that every NaN they produce is AArch64's.

use half::f16;

use crate::arith::{fmax_arm, fmin_arm};

/// `FMLA` (single precision): `a * b + c` rounded once to nearest even.
#[inline]
pub(crate) fn fma_f32(a: f32, b: f32, c: f32) -> f32 {
    libm::fmaf(a, b, c)
}

/// The exact `p + c` of two finite-or-not f64 values rounded to odd at 53 bits: rounding the
/// result once more to any format of at most 51 bits gives the correctly rounded sum (the
/// `TwoSum` error decides the sticky bit). Non-finite sums are returned as computed.
#[inline]
fn add_round_odd(p: f64, c: f64) -> f64 {
    let s = p + c;
    if !s.is_finite() {
        return s;
    }
    let bb = s - p;
    let err = (p - (s - bb)) + (c - bb);
    if err == 0.0 || s.to_bits() & 1 == 1 {
        return s;
    }
    // Inexact and even: step one ulp toward the exact value (`s != 0` since the sum is inexact).
    let away = (err > 0.0) == (s > 0.0);
    f64::from_bits(if away { s.to_bits() + 1 } else { s.to_bits() - 1 })
}

/// Half-precision `FMLA` (FEAT_FP16, FPCR.FZ16 = 0): `a * b + c` rounded once to f16
/// (`a * b` is exact in f64; the sum is rounded to odd at 53 bits, then to nearest even).
#[inline]
pub(crate) fn fma_f16(a: f16, b: f16, c: f16) -> f16 {
    let p = f64::from(a.to_f32()) * f64::from(b.to_f32());
    let s = add_round_odd(p, f64::from(c.to_f32()));
    let r = s.abs();
    if !s.is_finite() || r >= OVERFLOW {
        return f16::from_f32(s as f32);
    }
    if r < MIN_NORMAL {
        // Far below half of f16's smallest subnormal (2^-25): a zero of the sum's sign.
        return f16::from_f32(0.0f32.copysign(s as f32));
    }
    // Round to odd once more, to f32's 24 bits (still enough for one correct rounding to f16's
    // 11), then to nearest even.
    f16::from_f32(round_odd_24(s) as f32)
}

/// A normal-range f64 rounded to odd at 24 significant bits (exactly representable as f32):
/// truncate 29 bits and set the last kept one if anything was dropped.
#[inline]
fn round_odd_24(x: f64) -> f64 {
    const DROP: u64 = (1 << 29) - 1;
    let bits = x.to_bits();
    let kept = bits & !DROP;
    f64::from_bits(if bits & DROP != 0 { kept | (1 << 29) } else { kept })
}

/// AArch64's default NaN, `0x7FC00000` (positive, quiet, no payload): what an invalid operation
/// gives with FPCR.DN = 0, and every NaN of the BFloat16 operations.
pub(crate) const DEFAULT_NAN: f32 = f32::from_bits(0x7FC0_0000);

/// `x`, or the default NaN where `x` is any NaN. Applied to every result of a scalar float
/// kernel: a NaN that finite inputs produce is the default NaN on AArch64 (an invalid
/// operation creates it, and every later operation passes it on), so the scalar tier gives the
/// SIMD tiers' bits on every host (docs/formats.md, §Non-finite input and overflow).
#[inline]
pub(crate) fn default_nan(x: f32) -> f32 {
    if x.is_nan() { DEFAULT_NAN } else { x }
}

/// The clamp of every float kernel: `FMAX(FMIN(x, hi), lo)` (docs/formats.md, §Arithmetic: float
/// clamp and outputs): a NaN `x` passes unchanged (the bounds are never NaN).
#[inline]
pub(crate) fn clamp_float(x: f32, lo: f32, hi: f32) -> f32 {
    fmax_arm(fmin_arm(x, hi), lo)
}

/// f32 bits rounded to bf16, nearest even (`BFCVT`/`BFCVTN` with FPCR = 0: subnormals kept,
/// overflow to infinity, a NaN stays a NaN).
#[inline]
pub(crate) fn bf16_rne(x: f32) -> u16 {
    let u = x.to_bits();
    if x.is_nan() {
        return ((u >> 16) | 0x40) as u16;
    }
    ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) as u16
}

/// The value of bf16 bits, as f32 (exact).
#[inline]
pub(crate) fn bf16_value(b: u16) -> f32 {
    f32::from_bits(u32::from(b) << 16)
}

/// `2^-126`, the smallest normal f32.
const MIN_NORMAL: f64 = 1.1754943508222875e-38;
/// `2^128`, the first magnitude past the f32 range.
const OVERFLOW: f64 = 3.402823669209385e38;

/// Input flush of the BFloat16 operations: an f32 subnormal counts as a zero of its sign.
#[inline]
fn bf_flush(x: f64) -> f64 {
    if x != 0.0 && x.abs() < MIN_NORMAL { 0.0f64.copysign(x) } else { x }
}

/// A product of two bf16 values as `BFDOT`/`BFMMLA` form it (docs/formats.md, §Arithmetic:
/// BFloat16 dot product): inputs flushed, exact unless it underflows (signed zero) or overflows
/// (signed infinity). Held in f64.
#[inline]
fn bf_mul(a: f32, b: f32) -> f64 {
    let p = bf_flush(f64::from(a)) * bf_flush(f64::from(b));
    if !p.is_finite() {
        p
    } else if p.abs() < MIN_NORMAL {
        0.0f64.copysign(p)
    } else if p.abs() >= OVERFLOW {
        f64::INFINITY.copysign(p)
    } else {
        p
    }
}

/// The single-precision addition of `BFDOT`/`BFMMLA` (docs/formats.md, §Arithmetic: BFloat16 dot
/// product) of two f32 values held in f64: inputs flushed, the exact sum rounded to odd, results
/// below 2^-126 flushed, overflow to infinity, an exact zero is +0 unless both operands are -0.
#[inline]
fn bf_add(x: f64, y: f64) -> f64 {
    let (x, y) = (bf_flush(x), bf_flush(y));
    let s = x + y;
    if !s.is_finite() {
        return s;
    }
    if s == 0.0 {
        // An exact zero (`TwoSum` is exact when the rounded sum is zero).
        return if x.is_sign_negative() && y.is_sign_negative() { -0.0 } else { 0.0 };
    }
    let r = add_round_odd(x, y);
    let a = r.abs();
    // `r` lies strictly between the same two 24-bit neighbours as the exact sum (or equals it),
    // so these comparisons with the representable bounds decide as the exact value would.
    if a < MIN_NORMAL {
        return 0.0f64.copysign(r);
    }
    if a >= OVERFLOW {
        return f64::INFINITY.copysign(r);
    }
    round_odd_24(r)
}

/// One `BFDOT`/`BFMMLA` step: `acc + (a0 * b0 + a1 * b1)` with the BFloat16 rules
/// (docs/formats.md, §Arithmetic: BFloat16 dot product). `acc` holds an f32 value in f64; the
/// operands are bf16 values. A NaN result is the host's NaN ([`default_nan`] makes it the
/// architecture's).
#[inline]
pub(crate) fn bf_dot_add(acc: f64, a0: f32, a1: f32, b0: f32, b1: f32) -> f64 {
    bf_add(acc, bf_add(bf_mul(a0, b0), bf_mul(a1, b1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fma_f16_rounds_once() {
        // 1 + 2^-11 is a tie between 1 and 1 + 2^-10; a tiny product breaks it upward, which a
        // rounding of the sum at f32 followed by f16 would lose.
        let one = f16::ONE;
        let a = f16::from_f32(1.0 / 2048.0); // 2^-11
        let b = f16::from_f32(1.0 + 1.0 / 1024.0); // 1 + 2^-10
        // 1 + 2^-11 * (1 + 2^-10) = 1 + 2^-11 + 2^-21: just above the tie, rounds up.
        assert_eq!(fma_f16(a, b, one).to_f32(), 1.0 + 1.0 / 1024.0);
        // Exactly the tie: rounds to even (1).
        assert_eq!(fma_f16(a, one, one).to_f32(), 1.0);
    }

    #[test]
    fn bf_add_rounds_to_odd_and_flushes() {
        // 1 + 2^-30: inexact in f32, truncated to 1 with the last bit set.
        let r = bf_add(1.0, 2f64.powi(-30));
        assert_eq!(r as f32, f32::from_bits(0x3f80_0001));
        // Exact sums are kept.
        assert_eq!(bf_add(1.0, 2.0), 3.0);
        // Subnormal operands count as zero; a tiny result flushes.
        assert_eq!(bf_add(1e-40, 0.0), 0.0);
        assert!(bf_add(-0.0, -0.0).is_sign_negative());
        assert!(bf_add(1.0, -1.0).is_sign_positive());
        assert_eq!(bf_add(3.0e38, 3.0e38), f64::INFINITY);
    }

    #[test]
    fn bf16_rounding() {
        assert_eq!(bf16_rne(1.0), 0x3f80);
        assert_eq!(bf16_rne(f32::from_bits(0x3f80_8000)), 0x3f80); // tie to even
        assert_eq!(bf16_rne(f32::from_bits(0x3f81_8000)), 0x3f82);
        assert_eq!(bf16_rne(f32::MAX), 0x7f80);
        assert_eq!(bf16_value(0x3f80), 1.0);
    }
}
