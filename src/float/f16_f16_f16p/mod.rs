//! Family `f16_f16_f16p`: f16 activations read unpacked × f16 weights packed with their f16
//! bias ([`F16P32`], [`F16P16`]), f16 output with clamp (docs/formats.md, §Arithmetic: FMA
//! kernels). Each output is a
//! chain of half-precision fused multiply-adds from the bias, in increasing depth, each rounded
//! once to f16 (KleidiAI's FEAT_FP16 `FMLA` kernels); the clamp bounds are rounded to f16.
//! Cores without FEAT_FP16 run the scalar tier, which models that arithmetic exactly.

pub mod fp16;
pub(crate) mod scalar;

use half::f16;

#[cfg(doc)]
use crate::rhs::f16p::{F16P16, F16P32};

crate::float::float_family!(
    F16F16F16p, "f16_f16_f16p", lhs: f16, dst: f16, params: crate::matmul::LhsStride, finite_rows: true,
    formats: (F16, F16p), preferred_lhs: None,
    packings: [
        /// f16 rows read in place, [`F16P32`] weights (tiles of 32 columns): the 6x32 kernels.
        PACKING_1X32 = (1, 32, 1),
        /// f16 rows read in place, [`F16P16`] weights (tiles of 16 columns): the 6x16 kernels.
        PACKING_1X16 = (1, 16, 1),
    ],
    preferred: PACKING_1X32,
    tiers: [fp16],
    scalar: [
        (SCALAR_6X32, "matmul_clamp_f16_f16_f16p32x1b_6x32_scalar", (6, 32), PACKING_1X32, scalar::matmul_unchecked),
        (SCALAR_6X16, "matmul_clamp_f16_f16_f16p16x1biasf16_6x16_scalar", (6, 16), PACKING_1X16, scalar::matmul_unchecked),
    ],
    fallback: SCALAR_6X32,
);
