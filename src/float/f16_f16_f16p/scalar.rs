//! Portable scalar tier of `f16_f16_f16p`: the FMA kernel of
//! [`f32_f32_f32p`'s scalar tier](crate::float::f32_f32_f32p) with half-precision `FMLA`
//! modelled exactly (each step rounded once to f16), so cores without FEAT_FP16 get the bits of
//! the FP16 tier.

use half::f16;

use crate::float::arith::fma_f16;
use crate::float::f32_f32_f32p::scalar::fma_unchecked;
use crate::matmul::{LhsStride, Packing, TileStrides, UncheckedArgs};

/// The scalar kernel of `f16_f16_f16p` (any `kr = 1` f16 format).
///
/// # Safety
///
/// See [`fma_unchecked`].
pub(crate) unsafe fn matmul_unchecked(p: &Packing, a: &UncheckedArgs<f16, LhsStride>, s: &TileStrides) {
    // SAFETY: forwarded.
    unsafe { fma_unchecked(p, a, s, fma_f16) }
}
