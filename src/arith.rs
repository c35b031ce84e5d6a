//! Scalar IEEE building blocks of the crate's arithmetic (docs/formats.md, §Numeric model), for
//! the portable tier and the packers. Every function here rounds exactly like the AArch64
//! instruction named in its doc, so the portable tier and the NEON/asm tiers agree bit for bit.

/// Nearest integer, ties away from zero (C `roundf`, AArch64 `FCVTAS`), saturated to `i32`
/// like `FCVTAS` (NaN gives 0).
#[inline]
pub(crate) fn round_away_i32(x: f32) -> i32 {
    #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
    {
        // SAFETY: the target has NEON and FP (cfg above); FCVTAS is a register operation.
        unsafe { core::arch::aarch64::vcvtas_s32_f32(x) }
    }
    #[cfg(not(all(target_arch = "aarch64", target_feature = "neon")))]
    {
        libm::roundf(x) as i32
    }
}

/// The bits of `half::f16::from_f32(s)` for a finite `s` (round to nearest even), by a few
/// integer operations below the overflow bound (`|s| < 65520`) and `half` past it.
// Out of line: inlined into the quantizers' closures it costs more than the call.
#[inline(never)]
pub(crate) fn f16_bits(s: f32) -> u16 {
    let sign = ((s.to_bits() >> 16) & 0x8000) as u16;
    sign | f16_bits_nonneg(s.abs())
}

/// [`f16_bits`] of a non-negative finite `s` (the packers' block scales).
#[inline]
pub(crate) fn f16_bits_nonneg(s: f32) -> u16 {
    if s < 65520.0 { f16_bits_below_overflow(s) } else { half::f16::from_f32(s).to_bits() }
}

/// The f16 bits of `s`, finite in `[0, 65520)`, rounded to nearest even (the bits of
/// `f16::from_f32(s)`, with a few integer operations instead of the general conversion).
#[inline]
fn f16_bits_below_overflow(s: f32) -> u16 {
    const F16_MIN_NORMAL: f32 = 6.103_515_6e-5; // 2^-14
    if s >= F16_MIN_NORMAL {
        // Drop 13 mantissa bits, ties to even (a carry moves into the exponent), then rebias
        // the exponent from 127 to 15.
        let b = s.to_bits();
        let r = b + 0xFFF + ((b >> 13) & 1);
        ((r >> 13) - (112 << 10)) as u16
    } else {
        // Subnormal f16: the mantissa is `s / 2^-24` rounded to even (exact scaling); 1024
        // is the smallest normal's encoding.
        round_even(s * 16_777_216.0) as u16
    }
}

/// Nearest integer, ties to even (C `rintf`, AArch64 `FRINTN`), as f32.
#[inline]
pub(crate) fn round_even(x: f32) -> f32 {
    libm::rintf(x)
}

/// Fused multiply-add `a * b + c`, rounded once (AArch64 `FMADD`/`FMLA`).
#[inline]
#[allow(dead_code)] // used by the per-block families
pub(crate) fn fma(a: f32, b: f32, c: f32) -> f32 {
    libm::fmaf(a, b, c)
}

/// `FPProcessNaNs` for two operands: the first signalling NaN (quieted), else the first quiet
/// NaN; `None` when neither operand is NaN.
#[inline]
fn process_nans(a: f32, b: f32) -> Option<f32> {
    const QUIET: u32 = 0x0040_0000;
    let is_snan = |x: f32| x.is_nan() && x.to_bits() & QUIET == 0;
    if is_snan(a) {
        Some(f32::from_bits(a.to_bits() | QUIET))
    } else if is_snan(b) {
        Some(f32::from_bits(b.to_bits() | QUIET))
    } else if a.is_nan() {
        Some(a)
    } else if b.is_nan() {
        Some(b)
    } else {
        None
    }
}

/// AArch64 `FMAX` (default FPCR): NaN-propagating, `max(-0, +0) = +0`.
#[inline]
pub(crate) fn fmax_arm(a: f32, b: f32) -> f32 {
    if let Some(nan) = process_nans(a, b) {
        return nan;
    }
    if a == 0.0 && b == 0.0 {
        return if a.is_sign_negative() { b } else { a };
    }
    if a > b { a } else { b }
}

/// AArch64 `FMIN` (default FPCR): NaN-propagating, `min(-0, +0) = -0`.
#[inline]
pub(crate) fn fmin_arm(a: f32, b: f32) -> f32 {
    if let Some(nan) = process_nans(a, b) {
        return nan;
    }
    if a == 0.0 && b == 0.0 {
        return if a.is_sign_negative() { a } else { b };
    }
    if a < b { a } else { b }
}

/// The kernels' clamp: `FMIN(FMAX(x, lo), hi)` (docs/formats.md, §Clamp).
#[inline]
pub(crate) fn clamp_arm(x: f32, lo: f32, hi: f32) -> f32 {
    fmin_arm(fmax_arm(x, lo), hi)
}

/// Little-endian `i32` at byte offset `at`. The caller has validated the range.
#[inline]
pub(crate) fn read_i32(buf: &[u8], at: usize) -> i32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&buf[at..at + 4]);
    i32::from_le_bytes(b)
}

/// Little-endian `f32` at byte offset `at`. The caller has validated the range.
#[inline]
pub(crate) fn read_f32(buf: &[u8], at: usize) -> f32 {
    f32::from_bits(read_i32(buf, at) as u32)
}

/// Little-endian `u16` at byte offset `at`. The caller has validated the range.
#[inline]
#[allow(dead_code)] // used by the per-block families
pub(crate) fn read_u16(buf: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([buf[at], buf[at + 1]])
}

/// Stores `v` little-endian at byte offset `at`.
#[inline]
pub(crate) fn write_u32(buf: &mut [u8], at: usize, v: u32) {
    buf[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_modes_differ_on_ties() {
        assert_eq!(round_away_i32(0.5), 1);
        assert_eq!(round_away_i32(-0.5), -1);
        assert_eq!(round_away_i32(2.5), 3);
        assert_eq!(round_even(0.5), 0.0);
        assert_eq!(round_even(-0.5), -0.0);
        assert_eq!(round_even(2.5), 2.0);
        assert_eq!(round_away_i32(f32::INFINITY), i32::MAX);
        assert_eq!(round_away_i32(f32::NAN), 0);
    }

    #[test]
    fn fma_rounds_once() {
        // (1 + 2^-23)^2 - (1 + 2^-22) = 2^-46 exactly; unfused it is 0.
        let a = 1.0 + f32::EPSILON;
        assert_eq!(fma(a, a, -(1.0 + 2.0 * f32::EPSILON)), f32::from_bits(0x2880_0000)); // 2^-46
    }

    #[test]
    fn arm_min_max_zero_signs_and_nans() {
        assert!(fmax_arm(-0.0, 0.0).is_sign_positive());
        assert!(fmax_arm(0.0, -0.0).is_sign_positive());
        assert!(fmin_arm(0.0, -0.0).is_sign_negative());
        assert!(fmin_arm(-0.0, 0.0).is_sign_negative());
        assert!(fmax_arm(f32::NAN, 1.0).is_nan());
        assert!(fmin_arm(1.0, f32::NAN).is_nan());
        assert_eq!(clamp_arm(5.0, 1.0, 0.5), 0.5);
    }
}
