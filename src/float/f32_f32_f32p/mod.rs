//! Family `f32_f32_f32p`: f32 activations read unpacked × f32 weights packed with their f32
//! bias ([`F32P16`], [`F32P8`]), f32 output with clamp (docs/formats.md, §Arithmetic: FMA
//! kernels). Each output is
//! `fma(x[k-1], w[k-1], ... fma(x[0], w[0], bias))`, one fused multiply-add per depth in
//! increasing order: the bits of KleidiAI's `FMLA` kernels on every tier.
//!
//! ```
//! use qgemm::f32_f32_f32p as fam;
//! use qgemm::rhs::{f32p, FloatSource};
//! use qgemm::{CpuFeatures, MatmulArgs};
//!
//! let (m, n, k) = (2, 3, 4);
//! let cpu = CpuFeatures::from_target();
//! let kernel = fam::select(&cpu, m);
//! let w = [0.5f32; 3 * 4]; // n x k
//! let bias = [1.0f32, 2.0, 3.0];
//! let mut rhs = [0u8; 16 * (4 + 4 * 4)];
//! let size = kernel.rhs_packed_size(n, k, 0)?;
//! f32p::pack(&kernel.rhs_packing(), n, k, &FloatSource::nxk(&w, k), Some(&bias), &mut rhs[..size])?;
//!
//! let x = [1.0f32; 2 * 4];
//! let mut y = [0f32; 2 * 3];
//! kernel.run(&x, &rhs, &mut y, &MatmulArgs::new(m, n, k))?;
//! assert_eq!(y, [3.0, 4.0, 5.0, 3.0, 4.0, 5.0]);
//! # Ok::<(), qgemm::Error>(())
//! ```

pub mod neon;
pub(crate) mod scalar;

#[cfg(doc)]
use crate::rhs::f32p::{F32P8, F32P16};

crate::float::float_family!(
    F32F32F32p, "f32_f32_f32p", lhs: f32, dst: f32, params: crate::matmul::LhsStride, finite_rows: true,
    formats: (F32, F32p), preferred_lhs: None,
    packings: [
        /// f32 rows read in place, [`F32P16`] weights (tiles of 16 columns): the 6x16 kernels.
        PACKING_1X16 = (1, 16, 1),
        /// f32 rows read in place, [`F32P8`] weights (tiles of 8 columns): the 6x8 kernels.
        PACKING_1X8 = (1, 8, 1),
    ],
    preferred: PACKING_1X16,
    tiers: [neon],
    scalar: [
        (SCALAR_6X16, "matmul_clamp_f32_f32_f32p16x1b_6x16_scalar", (6, 16), PACKING_1X16, scalar::matmul_unchecked),
        (SCALAR_6X8, "matmul_clamp_f32_f32_f32p8x1biasf32_6x8_scalar", (6, 8), PACKING_1X8, scalar::matmul_unchecked),
    ],
    fallback: SCALAR_6X16,
);
