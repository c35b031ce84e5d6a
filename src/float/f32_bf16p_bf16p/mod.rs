//! Family `f32_bf16p_bf16p`: f32 (or f16) activations packed as bf16 ([`BF16P8X4`],
//! [`BF16P1X4`]) × f32 (or f16) weights packed as bf16 with f32 biases ([`BF16P12_B32`]), f32
//! output with clamp. The arithmetic is the BFloat16 dot product of `BFMMLA` (8x12) or `BFDOT`
//! (1x36): products and sums rounded separately, round-to-odd, flush to zero (docs/formats.md,
//! §Arithmetic: BFloat16 dot product, §Arithmetic: bf16 kernels).
//!
//! The two kernels do not give the same bits (`BFDOT` keeps two accumulators per output and
//! adds them at the end): in KleidiAI's vectors 44% of the outputs differ, by up to 0.17%
//! relative. [`select`] always takes the `BFMMLA` kernel and its [`BF16P8X4`] LHS, for every
//! `m`, so a row's result does not depend on the batch it runs in; the `BFDOT` kernel is
//! available by name ([`SCALAR_1X36`], `bf16::BF16_1X36`) and accepts any `m` (one row per
//! step), unlike KleidiAI's, which writes row 0 only.
//!
//! ```
//! use qgemm::f32_bf16p_bf16p as fam;
//! use qgemm::lhs::bf16p;
//! use qgemm::rhs::{bf16p12, FloatSource};
//! use qgemm::{CpuFeatures, MatmulArgs};
//!
//! let (m, n, k) = (2, 3, 4);
//! let cpu = CpuFeatures::from_target();
//! let kernel = fam::select(&cpu, m);
//! let w = [0.5f32; 3 * 4]; // n x k
//! let mut rhs = [0u8; 12 * (4 + 2 * 4)];
//! bf16p12::pack_b32(n, k, &FloatSource::nxk(&w, k), Some(&[1.0, 2.0, 3.0]), &mut rhs)?;
//! let x = [1.0f32; 2 * 4];
//! let mut lhs = [0u8; 8 * 4 * 2];
//! bf16p::pack(&bf16p::BF16P8X4, m, k, &x, k, &mut lhs)?;
//! let mut y = [0f32; 2 * 3];
//! kernel.run(&lhs, &rhs, &mut y, &MatmulArgs::new(m, n, k))?;
//! assert_eq!(y, [3.0, 4.0, 5.0, 3.0, 4.0, 5.0]);
//! # Ok::<(), qgemm::Error>(())
//! ```

pub mod bf16;
pub(crate) mod scalar;

#[cfg(doc)]
use crate::lhs::bf16p::BF16P1X4;
use crate::lhs::bf16p::BF16P8X4;
#[cfg(doc)]
use crate::rhs::bf16p12::BF16P12_B32;

crate::float::float_family!(
    F32Bf16pBf16p, "f32_bf16p_bf16p", lhs: u8, dst: f32, params: (), finite_rows: false,
    formats: (Bf16p, Bf16pB32), preferred_lhs: Some(BF16P8X4),
    packings: [
        /// [`BF16P8X4`] activations, [`BF16P12_B32`] weights: the 8x12 `BFMMLA` kernels.
        PACKING_8X12 = (8, 12, 4),
        /// [`BF16P1X4`] activations, [`BF16P12_B32`] weights: the 1x36 `BFDOT` kernels.
        PACKING_1X12 = (1, 12, 4),
    ],
    preferred: PACKING_8X12,
    tiers: [bf16],
    scalar: [
        (SCALAR_8X12, "matmul_clamp_f32_bf16p8x4_bf16p12x4b_8x12_scalar", (8, 12), PACKING_8X12, scalar::mmla_unchecked),
        (SCALAR_1X36, "matmul_clamp_f32_bf16p1x4_bf16p12x4b_1x36_scalar", (1, 36), PACKING_1X12, scalar::dot_unchecked),
    ],
    fallback: SCALAR_8X12,
);
