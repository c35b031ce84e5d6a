//! Family `f16_qsi8d32p_qai4c32p`: f16 activations quantized per block of `bl` values by the f16
//! `qsi8d32pscalef32` packer
//! ([`lhs::qsi8d32pscalef32::quantize_pack_f16`](crate::lhs::qsi8d32pscalef32::quantize_pack_f16),
//! ties away from zero) times asymmetric int4 weights (`qai4c32p`, packed by
//! [`rhs::qai4c32p::pack`](crate::rhs::qai4c32p::pack)), f32 bias, **f16 output** with clamp
//! (docs/kernels.md; docs/formats.md, §Arithmetic: qsi8d32p_qai4c32p kernels).
//!
//! The arithmetic is [`qsi8d32p_qai4c32p`](crate::qsi8d32p_qai4c32p)'s up to the clamped f32
//! result, which is then rounded to f16 (FCVTN: nearest even; base Armv8.0, no FEAT_FP16
//! needed). Unlike KleidiAI's f32 twins, KleidiAI's GEMV kernels of this family accept any `m`;
//! qgemm's kernels of both families do.
//!
//! ```
//! use qgemm::half::f16;
//! use qgemm::f16_qsi8d32p_qai4c32p as fam;
//! use qgemm::{CpuFeatures, MatmulArgs};
//!
//! let (m, n, k, bl) = (1, 4, 64, 64);
//! let cpu = CpuFeatures::from_target();
//! let kernel = fam::select(&cpu, m);
//! let p = kernel.packing();
//! let codes = [0x77u8; 4 * 32]; // every code 7: value -1
//! let (zero, scale) = ([2.0f32; 4], [0.5f32; 4]); // every weight 1.5
//! let mut rhs = vec![0u8; kernel.rhs_packed_size(n, k, bl)?];
//! qgemm::rhs::qai4c32p::pack(&p, n, k, bl, &codes, k / 2, &zero, &scale, Some(&[1.0; 4]), &mut rhs)?;
//!
//! let x = [f16::from_f32(0.5); 64];
//! let mut lhs = vec![0u8; kernel.lhs_packed_size(m, k, bl)?];
//! qgemm::lhs::qsi8d32pscalef32::quantize_pack_f16(&p, m, k, bl, 0, &x, k, &mut lhs)?;
//!
//! let mut y = [f16::ZERO; 4];
//! kernel.run(&lhs, &rhs, &mut y, &MatmulArgs::new(m, n, k).with_block_len(bl))?;
//! assert!(y.iter().all(|v| v.to_f32() == 49.0)); // 64 * 0.5 * 1.5 + bias 1
//! # Ok::<(), qgemm::Error>(())
//! ```

pub mod dotprod;
pub mod i8mm;
pub mod neon;
pub(crate) mod scalar;

use crate::matmul::qsi8d32p_qai4c32p::qai4c32p_catalogue;

pub use crate::matmul::qsi8d32p_qai4c32p::{PACKING_1X4, PACKING_1X4_KR8, PACKING_4X4, PACKING_4X4_KR8, PREFERRED_RHS};

/// Marker type of the family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct F16Qsi8d32pQai4c32p;

qai4c32p_catalogue!(F16Qsi8d32pQai4c32p, "f16_qsi8d32p_qai4c32p", half::f16, "f16");

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
