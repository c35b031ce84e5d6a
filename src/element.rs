//! The floating-point element types that cross the API: activations going in and outputs coming
//! out are `f32`, [`f16`] or [`bf16`] depending on the family ([`Family::Dst`],
//! [`Operator::Src`](crate::op::Operator::Src)).

use half::{bf16, f16};

#[cfg(doc)]
use crate::Family;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for half::f16 {}
    impl Sealed for half::bf16 {}
}

/// An activation or output element type: `f32`, [`f16`] or [`bf16`]. Sealed.
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
    /// The value as f32 (exact).
    fn to_f32(self) -> f32;
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
    fn to_f32(self) -> f32 {
        self
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
        f16::to_f32(self)
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
    #[inline]
    fn to_f32(self) -> f32 {
        bf16::to_f32(self)
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
    fn f16_keeps_subnormals_and_overflows() {
        assert_eq!(<f16 as Element>::from_f32(65520.0).to_bits(), 0x7c00);
        assert_eq!(<f16 as Element>::from_f32(65519.0).to_bits(), 0x7bff);
        assert_eq!(<f16 as Element>::from_f32(5.960_464_5e-8).to_bits(), 0x0001);
        assert_eq!(<f16 as Element>::from_f32(2.980_232_2e-8).to_bits(), 0x0000); // tie to even
    }
}
