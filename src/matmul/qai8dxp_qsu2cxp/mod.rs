//! Family `qai8dxp_qsu2cxp`: int8 activations quantized per row at run time (`qai8dxp`, from
//! f32) times **2-bit** weights (`qsu2cxp`): code `u` in `0..=3` stands for `lut[u]` of a
//! 4-entry look-up table, with one f32 scale per output channel; f32 bias, f32 output with
//! clamp. KleidiAI's `matmul_clamp_f32_qai8dxp{1x4,4x4}_qsu2cxp4x4bf32sf32_*`.
//!
//! Steps (every buffer the caller's):
//!
//! 1. once per weight matrix: [`rhs::qsu2cxp::pack`](crate::rhs::qsu2cxp::pack) with the
//!    kernel's [`Packing`], the raw codes, the scales (f32, one per channel), an optional f32
//!    bias and the table (`None`: the default `{-2, -1, 0, 1}`, i.e. `u - 2`);
//! 2. per call: [`lhs::qai8dxp::quantize_pack`](crate::lhs::qai8dxp::quantize_pack) of the f32
//!    activations;
//! 3. [`Kernel::run`](crate::Kernel::run) with `MatmulArgs::new(m, n, k)` and, for a table
//!    other than the default, [`with_lut`](crate::MatmulArgs::with_lut) with the table given to
//!    the packer (the packed weights keep the codes, the kernels apply the table).
//!
//! `k` must be a multiple of 32; every table entry must lie in `[-64, 63]`
//! ([`Error::LutOutOfRange`](crate::Error::LutOutOfRange), from the packer and from `run`).
//!
//! Arithmetic, per output `(r, c)`, with `w[j] = (int8) lut[u[c][j]]`:
//!
//! ```text
//! iacc = wrap32(sum_{j<k} qL[r][j] * w[j] + rsum[c] * offset[r]);   f = float(iacc)
//! GEMV packing (mr = 1):  out = fl(fl(f * fl(dq[r] * scale[c])) + bias[c])
//! GEMM packing (mr = 4):  out = fl(fl(fl(f * scale[c]) * dq[r]) + bias[c])
//! dst  = min(max(out, lo), hi)
//! ```
//!
//! The two scaling orders are KleidiAI's: its GEMV kernel (`qai8dxp1x4_..._1x4`) and its GEMM
//! kernel (`qai8dxp4x4_..._8x4`) multiply in different orders, so their outputs differ in the
//! last bits (by up to about 1,000 ulp where the bias cancels). qgemm reproduces each one's bits
//! for its own packing: the kernels of [`PACKING_1X4`] use the GEMV order, those of
//! [`PACKING_4X4`] the GEMM order, in every tier.
//!
//! Divergences from KleidiAI:
//!
//! * KleidiAI's GEMV kernel declares `m == 1` and writes only row 0 when given more rows;
//!   qgemm's kernels of [`PACKING_1X4`] compute every row.
//! * KleidiAI narrows the table to int8 in its kernels but sums it for `rsum` partly in int8
//!   (wrapping) and partly in int32, depending on the tile; qgemm rejects tables with entries
//!   outside `[-64, 63]`, where all of these agree.
//!
//! ```
//! use qgemm::qai8dxp_qsu2cxp as fam;
//! use qgemm::{CpuFeatures, MatmulArgs};
//!
//! let (m, n, k) = (2, 4, 64);
//! let cpu = CpuFeatures::from_target();
//! let kernel = fam::select(&cpu, m);
//! let p = kernel.packing();
//! // Every code 3: with the table {-3, -1, 1, 3} every weight is 3; scale 0.5.
//! let (codes, scales, lut) = ([0xffu8; 4 * 16], [0.5f32; 4], [-3, -1, 1, 3]);
//! let mut rhs = vec![0u8; kernel.rhs_packed_size(n, k, 0)?];
//! qgemm::rhs::qsu2cxp::pack(&p, n, k, &codes, k / 4, &scales, None, Some(&lut), &mut rhs)?;
//!
//! let x = [1.0f32; 2 * 64];
//! let mut lhs = vec![0u8; kernel.lhs_packed_size(m, k, 0)?];
//! qgemm::lhs::qai8dxp::quantize_pack(&p, m, k, 0, &x, k, &mut lhs)?;
//!
//! let mut y = [0f32; 2 * 4];
//! kernel.run(&lhs, &rhs, &mut y, &MatmulArgs::new(m, n, k).with_lut(lut))?;
//! assert!(y.iter().all(|v| (v - 96.0).abs() < 0.1)); // 64 depths of 1 * 3 * 0.5
//! # Ok::<(), qgemm::Error>(())
//! ```

pub mod dotprod;
pub mod i8mm;
pub mod neon;
pub(crate) mod scalar;

use crate::matmul::Packing;

/// Marker type of the family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Qai8dxpQsu2cxp;

/// `(mr 1, nr 4, kr 4)`: GEMV, KleidiAI's scaling order `f * (dq * scale)` (KleidiAI
/// `qai8dxp1x4_qsu2cxp4x4bf32sf32`, dotprod 1x4).
pub const PACKING_1X4: Packing = Packing::int8(1, 4, 4);
/// `(mr 4, nr 4, kr 4)`: GEMM, KleidiAI's scaling order `(f * scale) * dq` (KleidiAI
/// `qai8dxp4x4_qsu2cxp4x4bf32sf32`, dotprod 8x4).
pub const PACKING_4X4: Packing = Packing::int8(4, 4, 4);

/// The RHS packing `select` uses: `nr = 4, kr = 4, sr = 1`, the only one of the format, shared
/// by the GEMV (`mr = 1`) and GEMM (`mr = 4`) kernels.
pub const PREFERRED_RHS: crate::RhsPacking = PACKING_4X4.rhs(crate::RhsFormat::Qsu2cxp);

/// The packed layout of a call for the asm tiers: per-channel, 2-bit codes, with the `TBL`
/// tables of the call's look-up table.
#[cfg(target_arch = "aarch64")]
pub(crate) fn asm_layout<O>(
    args: &crate::UncheckedArgs<O, crate::matmul::Lut>,
    strides: &crate::matmul::TileStrides,
    packing: &Packing,
) -> crate::matmul::arch::asm::Layout {
    crate::matmul::arch::asm::Layout::per_channel(args, strides, packing, 2).with_consts(tbl_tables(&args.params))
}

/// The look-up table as the asm tiers' two 16-byte `TBL` tables of int8 (the 32 bytes of
/// [`Layout::consts`](crate::matmul::arch::asm::Layout)): `t[i] = lut[i & 3]` and
/// `t[16 + i] = lut[i >> 2]` for a 4-bit index `i` holding two codes, each entry narrowed to
/// int8 as the kernels use it.
#[cfg(target_arch = "aarch64")]
fn tbl_tables(lut: &crate::matmul::Lut) -> [u8; 32] {
    let mut t = [0u8; 32];
    for i in 0..16 {
        t[i] = lut.0[i & 3] as u8;
        t[16 + i] = lut.0[i >> 2] as u8;
    }
    t
}

/// A kernel of this family, resolved for a CPU.
pub type Kernel = crate::matmul::Kernel<Qai8dxpQsu2cxp>;
/// A catalogue entry of this family.
pub type Descriptor = crate::matmul::Descriptor<Qai8dxpQsu2cxp>;

impl crate::matmul::sealed::Sealed for Qai8dxpQsu2cxp {}

impl crate::Family for Qai8dxpQsu2cxp {
    const NAME: &'static str = "qai8dxp_qsu2cxp";
    const BLOCKED: bool = false;
    const K_MULTIPLE: usize = 32;
    type Lhs = u8;
    type Dst = f32;
    type Params = crate::matmul::Lut;
    const PREFERRED_RHS: crate::RhsPacking = PREFERRED_RHS;

    fn kernels() -> &'static [&'static Descriptor] {
        KERNELS
    }
}

family_catalogue!(
    Qai8dxpQsu2cxp,
    dst: "f32",
    formats: (Qai8dxp, Qsu2cxp),
    scalar: [
        (SCALAR_4X4, "qai8dxp4x4_qsu2cxp4x4bf32sf32_4x4", PACKING_4X4),
        (SCALAR_1X4, "qai8dxp1x4_qsu2cxp4x4bf32sf32_1x4", PACKING_1X4),
    ],
    fallback: SCALAR_4X4,
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::CpuFeatures;

    #[test]
    fn select_prefers_gemv_for_one_row() {
        let cpu = CpuFeatures::NONE;
        assert_eq!(select(&cpu, 1).packing().mr, 1);
        assert_eq!(select(&cpu, 5).packing().mr, 4);
    }
}
