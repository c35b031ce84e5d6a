//! Family `f16_qai8dxp_qsi4cxp`: f16 activations quantized per row at run time by the f16 `qai8dxp`
//! packer ([`lhs::qai8dxp::quantize_pack_f16`](crate::lhs::qai8dxp::quantize_pack_f16)) times
//! int4 weights with one f32 scale per output channel (`qsi4cxp`), packed by the packer of
//! [`qai8dxp_qsi4cxp`](crate::qai8dxp_qsi4cxp), f32 bias, **f16 output** with clamp (docs/kernels.md;
//! docs/formats.md, §Arithmetic: f16 and bf16 outputs).
//!
//! The arithmetic is [`qai8dxp_qsi4cxp`](crate::qai8dxp_qsi4cxp)'s up to the clamped f32 result, which is
//! then rounded to f16: FCVTN (round to nearest even, subnormals kept; base Armv8.0, so no FEAT_FP16 is needed). Clamping in f32 and then rounding equals rounding and then
//! clamping with the rounded bounds, so an output may exceed `clamp.max()` by half an f16 ulp
//! when the bound is not an f16 value. The kernels are that family's tiles (every packing,
//! tile and tier) with this conversion before the stores; KleidiAI's kernels of the family are
//! `qai8dxp1x4_qsi4cxp4x4_1x4` and `qai8dxp1x8_qsi4cxp4x8_1x4` (dotprod GEMV), `qai8dxp4x4_qsi4cxp4x4_16x4` (dotprod GEMM) and `qai8dxp4x8_qsi4cxp4x8_16x4` (i8mm).
//!
//! ```
//! use qgemm::half::f16;
//! use qgemm::{CpuFeatures, MatmulArgs};
//! use qgemm::f16_qai8dxp_qsi4cxp as fam;
//!
//! let (m, n, k) = (2, 8, 64);
//! let cpu = CpuFeatures::from_target();
//! let kernel = fam::select(&cpu, m);
//! let p = kernel.packing();
//! let weights = [0x99u8; 8 * 32]; // n x k nibbles, zero point 8: every weight +1
//! let mut rhs = vec![0u8; kernel.rhs_packed_size(n, k, 0)?];
//! let src = qgemm::rhs::Int4Source::nxk(&weights, k, qgemm::rhs::Int4Encoding::ZeroPoint8);
//! qgemm::rhs::qsi4cxp::pack(&p, n, k, &src, &[0.5f32; 8], None, &mut rhs)?;
//!
//! let x = [f16::from_f32(1.0); 2 * 64];
//! let mut lhs = vec![0u8; kernel.lhs_packed_size(m, k, 0)?];
//! qgemm::lhs::qai8dxp::quantize_pack_f16(&p, m, k, 0, &x, k, &mut lhs)?;
//!
//! let mut y = [f16::ZERO; 2 * 8];
//! kernel.run(&lhs, &rhs, &mut y, &MatmulArgs::new(m, n, k))?;
//! assert!(y.iter().all(|v| (v.to_f32() - 32.0).abs() < 0.5)); // 64 depths of weight 1, times 0.5
//! # Ok::<(), qgemm::Error>(())
//! ```

pub mod dotprod;
pub mod i8mm;
pub mod neon;
pub(crate) mod scalar;

use crate::matmul::qai8dxp_qsi4cxp::qsi4cxp_catalogue;

pub use crate::matmul::qai8dxp_qsi4cxp::{
    PACKING_1X4, PACKING_1X4_KR8, PACKING_1X8, PACKING_4X4, PACKING_4X4_KR8, PACKING_4X8, PACKING_4X8_KR8,
    PREFERRED_RHS,
};

/// Marker type of the family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct F16Qai8dxpQsi4cxp;

qsi4cxp_catalogue!(F16Qai8dxpQsi4cxp, "f16_qai8dxp_qsi4cxp", half::f16, "f16", all);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::CpuFeatures;

    #[test]
    fn names_say_the_output_type_and_select_prefers_gemv_for_one_row() {
        assert!(KERNELS.iter().all(|k| k.name().starts_with("matmul_clamp_f16_")));
        let cpu = CpuFeatures::NONE;
        assert_eq!(select(&cpu, 1).packing().mr, 1);
        assert_eq!(select(&cpu, 5).packing().mr, 4);
    }
}
