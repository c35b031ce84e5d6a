//! Family `f16_bf16p_bf16p`: f16 activations packed as bf16 ([`BF16P8X4`]) × f16 weights packed
//! as bf16 with f16 biases ([`BF16P12_B16`]), f16 output with clamp: the `BFMMLA` arithmetic of
//! [`f32_bf16p_bf16p`](crate::f32_bf16p_bf16p), clamped in f32, then rounded to f16
//! (docs/formats.md, §Arithmetic: bf16 kernels, §Arithmetic: float clamp and outputs).

pub mod bf16;
pub(crate) mod scalar;

use half::f16;

use crate::lhs::bf16p::BF16P8X4;
#[cfg(doc)]
use crate::rhs::bf16p12::BF16P12_B16;

crate::float::float_family!(
    F16Bf16pBf16p, "f16_bf16p_bf16p", lhs: u8, dst: f16, params: (), finite_rows: false,
    formats: (Bf16p, Bf16pB16), preferred_lhs: Some(BF16P8X4),
    packings: [
        /// [`BF16P8X4`] activations, [`BF16P12_B16`] weights: the 8x12 `BFMMLA` kernels.
        PACKING_8X12 = (8, 12, 4),
    ],
    preferred: PACKING_8X12,
    tiers: [bf16],
    scalar: [
        (SCALAR_8X12, "matmul_clamp_f16_bf16p8x4_bf16p12x4b_8x12_scalar", (8, 12), PACKING_8X12, scalar::matmul_unchecked),
    ],
    fallback: SCALAR_8X12,
);
