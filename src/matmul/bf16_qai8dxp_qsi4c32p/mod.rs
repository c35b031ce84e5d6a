//! Family `bf16_qai8dxp_qsi4c32p`: bf16 activations quantized per row at run time by the bf16 `qai8dxp`
//! packer ([`lhs::qai8dxp::quantize_pack_bf16`](crate::lhs::qai8dxp::quantize_pack_bf16)) times
//! int4 weights with one bf16 scale per block of `bl` (`qsi4c32p`), packed by the packer of
//! [`qai8dxp_qsi4c32p`](crate::qai8dxp_qsi4c32p), f32 bias, **bf16 output** with clamp (docs/kernels.md;
//! docs/formats.md, §Arithmetic: f16 and bf16 outputs).
//!
//! The arithmetic is [`qai8dxp_qsi4c32p`](crate::qai8dxp_qsi4c32p)'s up to the clamped f32 result, which is
//! then rounded to bf16: round to nearest even: `BFCVTN` in the i8mm tier (which therefore also needs FEAT_BF16), integer operations in the other tiers (every core). Clamping in f32 and then rounding equals rounding and then
//! clamping with the rounded bounds, so an output may exceed `clamp.max()` by half an bf16 ulp
//! when the bound is not an bf16 value. The kernels are that family's tiles (every packing,
//! tile and tier) with this conversion before the stores; KleidiAI's kernels of the family are
//! `qai8dxp1x8_qsi4c32p4x8_1x4` (dotprod) and `qai8dxp4x8_qsi4c32p4x8_16x4` (i8mm).
//!
//! ```
//! use qgemm::half::bf16;
//! use qgemm::{CpuFeatures, MatmulArgs};
//! use qgemm::bf16_qai8dxp_qsi4c32p as fam;
//!
//! let (m, n, k) = (2, 8, 64);
//! let cpu = CpuFeatures::from_target();
//! let kernel = fam::select(&cpu, m);
//! let p = kernel.packing();
//! let bl = 32;
//! let weights = [0x99u8; 8 * 32]; // n x k nibbles, zero point 8: every weight +1
//! let scales = [qgemm::half::bf16::from_f32(0.5); 8 * 2]; // one per channel and block
//! let mut rhs = vec![0u8; kernel.rhs_packed_size(n, k, bl)?];
//! let src = qgemm::rhs::Int4Source::nxk(&weights, k, qgemm::rhs::Int4Encoding::ZeroPoint8);
//! let sc = qgemm::rhs::qsi4c32p::BlockScales::dense(&scales, k / bl);
//! qgemm::rhs::qsi4c32p::pack(&p, n, k, bl, &src, &sc, None, &mut rhs)?;
//!
//! let x = [bf16::from_f32(1.0); 2 * 64];
//! let mut lhs = vec![0u8; kernel.lhs_packed_size(m, k, bl)?];
//! qgemm::lhs::qai8dxp::quantize_pack_bf16(&p, m, k, 0, &x, k, &mut lhs)?;
//!
//! let mut y = [bf16::ZERO; 2 * 8];
//! kernel.run(&lhs, &rhs, &mut y, &MatmulArgs::new(m, n, k).with_block_len(bl))?;
//! assert!(y.iter().all(|v| (v.to_f32() - 32.0).abs() < 0.5)); // 64 depths of weight 1, times 0.5
//! # Ok::<(), qgemm::Error>(())
//! ```

pub mod dotprod;
pub mod i8mm;
pub mod neon;
pub(crate) mod scalar;

use crate::matmul::qai8dxp_qsi4c32p::qsi4c32p_catalogue;

pub use crate::matmul::qai8dxp_qsi4c32p::{
    PACKING_1X4, PACKING_1X4_KR8, PACKING_1X8, PACKING_1X8_KR8, PACKING_4X4, PACKING_4X4_KR8, PACKING_4X8,
    PACKING_4X8_KR8, PREFERRED_RHS,
};

/// Marker type of the family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bf16Qai8dxpQsi4c32p;

qsi4c32p_catalogue!(Bf16Qai8dxpQsi4c32p, "bf16_qai8dxp_qsi4c32p", half::bf16, "bf16", kr16);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::CpuFeatures;

    #[test]
    fn names_say_the_output_type_and_select_prefers_gemv_for_one_row() {
        assert!(KERNELS.iter().all(|k| k.name().starts_with("matmul_clamp_bf16_")));
        let cpu = CpuFeatures::NONE;
        assert_eq!(select(&cpu, 1).packing().mr, 1);
        assert_eq!(select(&cpu, 5).packing().mr, 4);
    }
}
