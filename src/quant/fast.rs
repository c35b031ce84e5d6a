//! Round to nearest ([`Method::RoundToNearest`]) on contiguous f32 rows: the same scales and codes
//! as the scalar rule of [`symmetric`](super::symmetric) (`s = round_scale(max |w| / L)`,
//! `code = round(w / s)` ties away from zero, clamped to `[-L - 1, L]`), with the maximum and the
//! codes 16 values a step on NEON (`FDIV`, `FCVTAS`, saturating narrowings, `SMAX`/`SMIN`).

use super::symmetric::{Method, Weights};
use crate::element::Element;
use crate::rhs::Layout;

/// Codes computed per call of [`rtn_codes`] at most (a multiple of 32).
pub(crate) const CHUNK: usize = 256;

/// Values `j0 .. j0 + len` of channel `c` as f32 when the fast path applies: round to nearest, f32
/// weights, NxK.
pub(crate) fn rtn_row<'w, S: Element>(
    method: &Method<'_>,
    w: &Weights<'w, S>,
    c: usize,
    j0: usize,
    len: usize,
) -> Option<&'w [f32]> {
    if *method != Method::RoundToNearest || w.layout != Layout::NxK {
        return None;
    }
    S::as_f32(w.data).map(|x| &x[c * w.stride + j0..c * w.stride + j0 + len])
}

/// The stored scale of a group: `round_scale(max |x| / levels)`, 0 for an all-zero group.
pub(crate) fn rtn_scale(x: &[f32], levels: i32, round_scale: impl Fn(f32) -> f32) -> f32 {
    let amax = abs_max(x);
    if amax == 0.0 { 0.0 } else { round_scale(amax / levels as f32) }
}

/// `max |x|` of finite values: 32 a step for a whole number of 32-value blocks (NEON), else 16 a
/// step with a tail.
fn abs_max(x: &[f32]) -> f32 {
    #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
    if !x.is_empty() && x.len().is_multiple_of(32) {
        use core::arch::aarch64::*;
        // SAFETY: NEON is enabled for the whole target; step `i` reads `x[i..i + 32]`
        // (`i + 32 <= x.len()`).
        unsafe {
            let (mut m0, mut m1) = (vdupq_n_f32(0.0), vdupq_n_f32(0.0));
            for i in (0..x.len()).step_by(32) {
                let (a, b) = (vld1q_f32_x4(x.as_ptr().add(i)), vld1q_f32_x4(x.as_ptr().add(i + 16)));
                let m = |v: float32x4x4_t| {
                    vmaxq_f32(vmaxq_f32(vabsq_f32(v.0), vabsq_f32(v.1)), vmaxq_f32(vabsq_f32(v.2), vabsq_f32(v.3)))
                };
                m0 = vmaxq_f32(m0, m(a));
                m1 = vmaxq_f32(m1, m(b));
            }
            return vmaxvq_f32(vmaxq_f32(m0, m1));
        }
    }
    // 16 values a step (the values are finite: checked before).
    crate::lhs::quant::abs_max_finite(x)
}

/// `out[i] = clamp(round(x[i] / s), -levels - 1, levels)` (0 when `s` is 0), `x.len() <= out.len()`.
pub(crate) fn rtn_codes(x: &[f32], s: f32, levels: i32, out: &mut [i8]) {
    let out = &mut out[..x.len()];
    if s == 0.0 {
        out.fill(0);
        return;
    }
    let l = levels as f32;
    #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
    let done = {
        use core::arch::aarch64::*;
        let whole = x.len() / 16 * 16;
        // SAFETY: NEON is enabled for the whole target; step `i` reads `x[16i..16i + 16]` and
        // writes `out[16i..16i + 16]`, both inside the slices (`16i + 16 <= whole`).
        unsafe {
            let (vs, lo, hi) = (vdupq_n_f32(s), vdupq_n_s8(-(levels as i8) - 1), vdupq_n_s8(levels as i8));
            for i in (0..whole).step_by(16) {
                let v = vld1q_f32_x4(x.as_ptr().add(i));
                let q = |v: float32x4_t| vcvtaq_s32_f32(vdivq_f32(v, vs));
                let ab = vqmovn_high_s32(vqmovn_s32(q(v.0)), q(v.1));
                let cd = vqmovn_high_s32(vqmovn_s32(q(v.2)), q(v.3));
                let c = vminq_s8(vmaxq_s8(vqmovn_high_s16(vqmovn_s16(ab), cd), lo), hi);
                vst1q_s8(out.as_mut_ptr().add(i), c);
            }
        }
        whole
    };
    #[cfg(not(all(target_arch = "aarch64", target_feature = "neon")))]
    let done = 0;
    for (o, &v) in out[done..].iter_mut().zip(&x[done..]) {
        *o = (crate::arith::round_away_i32(v / s) as f32).clamp(-l - 1.0, l) as i8;
    }
}

/// Signed nibble pairs, the first code of a pair in the low nibble:
/// `out[i] = (q[2i] & 0xf) | (q[2i + 1] << 4)` for `i < q.len() / 2` (`q.len()` even).
pub(crate) fn pack_pairs(q: &[i8], out: &mut [u8]) {
    let out = &mut out[..q.len() / 2];
    #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
    let done = {
        use core::arch::aarch64::*;
        let whole = q.len() / 32 * 32;
        // SAFETY: NEON is enabled for the whole target; step `i` reads `q[i..i + 32]` and writes
        // `out[i / 2..i / 2 + 16]`, inside the slices (`i + 32 <= whole`).
        unsafe {
            for i in (0..whole).step_by(32) {
                let v = vld2q_u8(q.as_ptr().add(i).cast::<u8>());
                vst1q_u8(out.as_mut_ptr().add(i / 2), vsliq_n_u8::<4>(vandq_u8(v.0, vdupq_n_u8(0x0f)), v.1));
            }
        }
        whole
    };
    #[cfg(not(all(target_arch = "aarch64", target_feature = "neon")))]
    let done = 0;
    for (o, p) in out[done / 2..].iter_mut().zip(q[done..].chunks_exact(2)) {
        *o = (p[0] as u8 & 0x0f) | ((p[1] as u8) << 4);
    }
}

/// GGML `Q4_0` block data: `out[i] = (q[i] + 8) | ((q[i + h] + 8) << 4)` for `i < h`, `h = q.len() / 2`.
pub(crate) fn pack_halves(q: &[i8], out: &mut [u8]) {
    let h = q.len() / 2;
    let (lo, hi) = q.split_at(h);
    let out = &mut out[..h];
    #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
    let done = {
        use core::arch::aarch64::*;
        let whole = h / 16 * 16;
        // SAFETY: NEON is enabled for the whole target; step `i` reads `lo[i..i + 16]` and
        // `hi[i..i + 16]` and writes `out[i..i + 16]` (`i + 16 <= whole <= h`).
        unsafe {
            let eight = vdupq_n_u8(8);
            for i in (0..whole).step_by(16) {
                let l = vaddq_u8(vld1q_u8(lo.as_ptr().add(i).cast::<u8>()), eight);
                let u = vaddq_u8(vld1q_u8(hi.as_ptr().add(i).cast::<u8>()), eight);
                vst1q_u8(out.as_mut_ptr().add(i), vsliq_n_u8::<4>(l, u));
            }
        }
        whole
    };
    #[cfg(not(all(target_arch = "aarch64", target_feature = "neon")))]
    let done = 0;
    for ((o, &l), &u) in out[done..].iter_mut().zip(&lo[done..]).zip(&hi[done..]) {
        *o = ((l + 8) as u8) | (((u + 8) as u8) << 4);
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    #[test]
    fn f16_bits_is_half_s_rounding() {
        let mut x = 0x1234_5678u32;
        let mut values: Vec<f32> = (0..20000)
            .map(|_| {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                // Exponents over the whole f16 range and beyond, either sign.
                f32::from_bits((x & 0x807f_ffff) | ((97 + (x >> 23) % 50) << 23))
            })
            .collect();
        // Rounding boundaries: ties at the subnormal, normal and overflow ends.
        values.extend([
            0.0,
            -0.0,
            5.960_464_5e-8,
            2.980_232_2e-8,
            6.103_515_6e-5,
            65504.0,
            65519.99,
            65520.0,
            -65520.0,
            1.0e9,
        ]);
        values.extend((1..=2047).map(|m| m as f32 * 2.0f32.powi(-25)));
        for v in values {
            assert_eq!(crate::arith::f16_bits(v), half::f16::from_f32(v).to_bits(), "{v:e}");
        }
    }

    #[test]
    fn neon_and_scalar_codes_agree() {
        let x: Vec<f32> = (0..100).map(|i| (i as f32 - 50.0) * 0.37 + if i % 7 == 0 { 0.5 } else { 0.0 }).collect();
        for (s, levels) in [(1.0f32, 7), (0.37, 7), (0.5, 127), (1.0e-3, 7), (0.0, 7)] {
            let mut q = [0i8; 100];
            rtn_codes(&x, s, levels, &mut q);
            for (v, c) in x.iter().zip(q) {
                let want = if s == 0.0 { 0.0 } else { (v / s).round().clamp(-(levels as f32) - 1.0, levels as f32) };
                assert_eq!(f32::from(c), want, "{v} / {s}");
            }
        }
        let q: Vec<i8> = (0..64).map(|i| (i % 16) as i8 - 8).collect();
        let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
        pack_pairs(&q, &mut a);
        pack_halves(&q, &mut b);
        for i in 0..32 {
            assert_eq!(a[i], (q[2 * i] as u8 & 0xf) | ((q[2 * i + 1] as u8) << 4));
            assert_eq!(b[i], ((q[i] + 8) as u8) | (((q[i + 32] + 8) as u8) << 4));
        }
    }
}
