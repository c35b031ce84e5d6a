//! The floating-point element types that cross the API: activations going in and outputs coming
//! out are `f32`, [`f16`](struct@half::f16) or [`bf16`] depending on the family ([`Family::Dst`],
//! [`Operator::Src`](crate::op::Operator::Src)).

use half::{bf16, f16};

use crate::error::{Buffer, Error, Result};

#[cfg(doc)]
use crate::Family;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for half::f16 {}
    impl Sealed for half::bf16 {}
}

/// An activation or output element type: `f32`, [`f16`](struct@half::f16) or [`bf16`]. Sealed.
///
/// The conversions are the ones the kernels and packers perform (docs/formats.md, §Numeric
/// model): widening to f32 is exact; narrowing from f32 rounds to nearest even, keeps f16
/// subnormals, gives infinity past the range and keeps a NaN a NaN (quieted, the top payload
/// bits kept: AArch64 `FCVTN`/`BFCVTN` with the default FPCR).
pub trait Element: sealed::Sealed + Copy + Default + PartialEq + core::fmt::Debug + Send + Sync + 'static {
    /// Bytes per element (4 or 2).
    const SIZE: usize;
    /// `"f32"`, `"f16"` or `"bf16"`.
    const NAME: &'static str;
    /// The largest finite value.
    const MAX: Self;
    /// Whether this is `bf16` (the packers' NEON widening: `SHLL #16` for bf16, `FCVTL` for f16).
    #[doc(hidden)]
    const BF16: bool = false;
    /// The value as f32 (exact).
    fn to_f32(self) -> f32;
    /// Neither infinite nor NaN.
    fn is_finite(self) -> bool;
    /// `out[j] = x[j].to_f32()` for `j < min(x.len(), out.len())` (the packers' widening; f16
    /// on aarch64: `FCVTL`, base Armv8.0).
    #[doc(hidden)]
    #[inline]
    fn widen(x: &[Self], out: &mut [f32]) {
        for (o, v) in out.iter_mut().zip(x) {
            *o = v.to_f32();
        }
    }
    /// `x` itself when the elements are f32 (the packers then read it in place), else `None`.
    #[doc(hidden)]
    #[inline]
    fn as_f32(_x: &[Self]) -> Option<&[f32]> {
        None
    }
    /// `x` rounded to this type (round to nearest, ties to even).
    fn from_f32(x: f32) -> Self;
    /// The bit pattern, zero-extended.
    fn to_bits32(self) -> u32;
    /// The value with bit pattern `bits` (its low `8 * SIZE` bits).
    fn from_bits32(bits: u32) -> Self;
}

impl Element for f32 {
    const SIZE: usize = 4;
    const NAME: &'static str = "f32";
    const MAX: f32 = f32::MAX;
    #[inline]
    fn as_f32(x: &[f32]) -> Option<&[f32]> {
        Some(x)
    }
    #[inline]
    fn to_f32(self) -> f32 {
        self
    }
    #[inline]
    fn is_finite(self) -> bool {
        f32::is_finite(self)
    }
    #[inline]
    fn from_f32(x: f32) -> f32 {
        x
    }
    #[inline]
    fn to_bits32(self) -> u32 {
        self.to_bits()
    }
    #[inline]
    fn from_bits32(bits: u32) -> f32 {
        f32::from_bits(bits)
    }
}

impl Element for f16 {
    const SIZE: usize = 2;
    const NAME: &'static str = "f16";
    const MAX: f16 = f16::MAX;
    #[inline]
    fn to_f32(self) -> f32 {
        f16_to_f32(self.to_bits())
    }
    #[inline]
    fn is_finite(self) -> bool {
        self.to_bits() & 0x7c00 != 0x7c00
    }
    #[inline]
    fn widen(x: &[f16], out: &mut [f32]) {
        let n = x.len().min(out.len());
        #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
        let done = {
            use core::arch::aarch64::*;
            let full = n / 8 * 8;
            for j in (0..full).step_by(8) {
                // SAFETY: NEON is enabled for the whole target (cfg above); `j + 8 <= full <= n`,
                // so the load reads 8 f16 values (16 bytes) of `x` and the stores write 8 f32
                // values of `out`; `f16` is a `repr(transparent)` u16, and FCVTL needs no
                // feature beyond the baseline.
                unsafe {
                    let v = vreinterpretq_f16_u16(vld1q_u16(x.as_ptr().add(j).cast::<u16>()));
                    vst1q_f32(out.as_mut_ptr().add(j), vcvt_f32_f16(vget_low_f16(v)));
                    vst1q_f32(out.as_mut_ptr().add(j + 4), vcvt_high_f32_f16(v));
                }
            }
            full
        };
        #[cfg(not(all(target_arch = "aarch64", target_feature = "neon")))]
        let done = 0;
        for j in done..n {
            out[j] = x[j].to_f32();
        }
    }
    /// `FCVT`: the `half` crate rounds to nearest even, keeps subnormals, overflows to
    /// infinity and quiets NaNs keeping the top 9 payload bits, as the instruction does (the
    /// golden f16 outputs check it, 736 of them subnormal).
    #[inline]
    fn from_f32(x: f32) -> f16 {
        f16::from_f32(x)
    }
    #[inline]
    fn to_bits32(self) -> u32 {
        u32::from(self.to_bits())
    }
    #[inline]
    fn from_bits32(bits: u32) -> f16 {
        f16::from_bits(bits as u16)
    }
}

impl Element for bf16 {
    const SIZE: usize = 2;
    const NAME: &'static str = "bf16";
    const MAX: bf16 = bf16::MAX;
    const BF16: bool = true;
    #[inline]
    fn to_f32(self) -> f32 {
        // A NaN is quieted, as `BFCVT`'s inverse in the `half` crate and `FCVTL` for f16.
        let b = self.to_bits();
        let quiet = if b & 0x7fff > 0x7f80 { 0x0040 } else { 0 };
        f32::from_bits(u32::from(b | quiet) << 16)
    }
    #[inline]
    fn is_finite(self) -> bool {
        self.to_bits() & 0x7f80 != 0x7f80
    }
    #[inline]
    fn from_f32(x: f32) -> bf16 {
        bf16::from_bits(bf16_bits_rne(x.to_bits()))
    }
    #[inline]
    fn to_bits32(self) -> u32 {
        u32::from(self.to_bits())
    }
    #[inline]
    fn from_bits32(bits: u32) -> bf16 {
        bf16::from_bits(bits as u16)
    }
}

/// The index of the first NaN or infinity of `values`, if any: a branch-free test of the
/// exponent bits of every element (all ones: the infinity's bits, `MAX` + 1, for each of the three
/// types), which vectorizes, and a search only when it finds one.
#[inline]
pub(crate) fn first_non_finite<T: Element>(values: &[T]) -> Option<usize> {
    let exponent = T::MAX.to_bits32() + 1;
    let mut any = false;
    for x in values {
        any |= (x.to_bits32() & exponent) == exponent;
    }
    if !any {
        return None;
    }
    values.iter().position(|x| !x.is_finite())
}

/// [`Error::NonFinite`] on `buffer` at the first NaN or infinity of the `rows` rows of `len`
/// values `stride` apart in `data` (row `i` at `data[i * stride..][..len]`; the caller has
/// checked the length), with its index in `data`. Values between the rows are not read.
pub(crate) fn check_finite_rows<T: Element>(
    data: &[T],
    rows: usize,
    len: usize,
    stride: usize,
    buffer: Buffer,
) -> Result<()> {
    for i in 0..rows {
        if let Some(j) = first_non_finite(&data[i * stride..][..len]) {
            return Err(Error::NonFinite { buffer, index: i * stride + j });
        }
    }
    Ok(())
}

/// f16 bits `h` widened to f32 (`FCVTL`), branch-free so that loops over it vectorize, and
/// without f32 subnormals on the way (so a flush-to-zero FPCR cannot change it): a normal value
/// is its bits shifted and rebiased; a subnormal `m * 2^-24` is `2^-14 * (1 + m / 1024) - 2^-14`,
/// both terms normal and the difference exact; infinities and NaNs (quieted, payload kept) are
/// selected separately.
#[inline]
const fn f16_to_f32(h: u16) -> f32 {
    const REBIAS: u32 = (127 - 15) << 23;
    const TWO_POW_M14: u32 = (127 - 14) << 23;
    let sign = ((h & 0x8000) as u32) << 16;
    let em = (h & 0x7fff) as u32;
    let normal = (em << 13) + REBIAS;
    let subnormal = (f32::from_bits((em << 13) + TWO_POW_M14) - f32::from_bits(TWO_POW_M14)).to_bits();
    let special = 0x7f80_0000 | if em & 0x3ff != 0 { 0x0040_0000 } else { 0 } | (em & 0x3ff) << 13;
    let mag = if em >= 0x7c00 {
        special
    } else if em < 0x0400 {
        subnormal
    } else {
        normal
    };
    f32::from_bits(sign | mag)
}

/// `BFCVT` with the default FPCR on the f32 bit pattern `u`, in integer operations only (the
/// formula every tier without FEAT_BF16 uses): a NaN keeps its top 16 bits with the quiet bit
/// set; anything else rounds to nearest even, `(u + 0x7FFF + ((u >> 16) & 1)) >> 16`, which
/// carries into the exponent (and up to infinity) exactly as the instruction rounds.
#[inline]
pub(crate) const fn bf16_bits_rne(u: u32) -> u16 {
    if u & 0x7fff_ffff > 0x7f80_0000 {
        return ((u | 0x0040_0000) >> 16) as u16;
    }
    (u.wrapping_add(0x7fff + ((u >> 16) & 1)) >> 16) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_rounding_ties_to_even_and_overflow() {
        assert_eq!(bf16_bits_rne(0x3f80_8000), 0x3f80); // tie, even stays
        assert_eq!(bf16_bits_rne(0x3f81_8000), 0x3f82); // tie, odd rounds up
        assert_eq!(bf16_bits_rne(0x3f80_8001), 0x3f81);
        assert_eq!(bf16_bits_rne(0x7f7f_ffff), 0x7f80); // f32::MAX -> inf
        assert_eq!(bf16_bits_rne(0xff7f_ffff), 0xff80);
        assert_eq!(bf16_bits_rne(0x7fc0_0000), 0x7fc0);
        assert_eq!(bf16_bits_rne(0x7fbf_ffff), 0x7fff); // signalling NaN: quieted, not rounded
        assert_eq!(bf16_bits_rne(0x0000_8000), 0x0000); // subnormal tie
        // The half crate agrees on every finite and NaN class sampled.
        for u in (0..=u32::MAX).step_by(65_537) {
            let want = bf16::from_f32(f32::from_bits(u)).to_bits();
            let got = bf16_bits_rne(u);
            if f32::from_bits(u).is_nan() {
                assert!(bf16::from_bits(got).is_nan());
            } else {
                assert_eq!(got, want, "{u:#x}");
            }
        }
    }

    #[test]
    fn f16_widening_is_exact_for_every_bit_pattern() {
        for h in 0..=u16::MAX {
            let (got, want) = (f16_to_f32(h), f16::from_bits(h).to_f32());
            assert_eq!(got.to_bits(), want.to_bits(), "{h:#06x}");
            assert_eq!(<f16 as Element>::is_finite(f16::from_bits(h)), want.is_finite(), "{h:#06x}");
            let b = bf16::from_bits(h);
            assert_eq!(Element::to_f32(b).to_bits(), b.to_f32().to_bits(), "{h:#06x}");
            assert_eq!(<bf16 as Element>::is_finite(b), b.to_f32().is_finite(), "{h:#06x}");
        }
    }

    #[test]
    fn f16_slice_widening_equals_the_scalar_one() {
        // Every bit pattern through `widen` (FCVTL on aarch64), at every alignment of the tail.
        let all: [f16; 65_536] = core::array::from_fn(|h| f16::from_bits(h as u16));
        let mut out = [0f32; 65_536];
        for skip in 0..9 {
            <f16 as Element>::widen(&all[skip..], &mut out);
            for (h, o) in all[skip..].iter().zip(&out) {
                assert_eq!(o.to_bits(), h.to_f32().to_bits(), "{:#06x}", h.to_bits());
            }
        }
    }

    #[test]
    fn f16_keeps_subnormals_and_overflows() {
        assert_eq!(<f16 as Element>::from_f32(65520.0).to_bits(), 0x7c00);
        assert_eq!(<f16 as Element>::from_f32(65519.0).to_bits(), 0x7bff);
        assert_eq!(<f16 as Element>::from_f32(5.960_464_5e-8).to_bits(), 0x0001);
        assert_eq!(<f16 as Element>::from_f32(2.980_232_2e-8).to_bits(), 0x0000); // tie to even
    }
}
