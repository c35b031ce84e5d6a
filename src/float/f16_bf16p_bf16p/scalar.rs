//! Portable scalar tier of `f16_bf16p_bf16p`: the `BFMMLA` model of
//! [`f32_bf16p_bf16p`'s scalar tier](crate::float::f32_bf16p_bf16p) with f16 biases, the clamp
//! in f32 and the result rounded to f16 (docs/formats.md, §Arithmetic: float clamp and outputs).

use half::f16;

use crate::float::f32_bf16p_bf16p::scalar::{Bf16Op, bf16_unchecked};
use crate::matmul::{Packing, TileStrides, UncheckedArgs};

/// The scalar kernel of `f16_bf16p_bf16p` (any tile).
///
/// # Safety
///
/// See [`bf16_unchecked`] (f16 biases).
pub(crate) unsafe fn matmul_unchecked(p: &Packing, a: &UncheckedArgs<f16>, s: &TileStrides) {
    // SAFETY: forwarded.
    unsafe { bf16_unchecked::<f16, f16>(p, a, s, Bf16Op::Mmla) }
}
