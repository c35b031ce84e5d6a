//! Matmul micro-kernels: the types every family shares and the validated run path.
//!
//! A family (e.g. [`qai8dxp_qsi4cxp`]) is a pair of packed operand formats. It has a catalogue of
//! [`Kernel`]s, one per (tile, ISA tier); each kernel fixes the [`Packing`] both operands must be
//! packed with and the output tile `m_step x n_step` it works in. [`Kernel::run`] validates
//! everything and then calls the tier's `unsafe` entry, which takes raw pointers
//! ([`UncheckedArgs`]) exactly like KleidiAI's `run_matmul`.

#[macro_use]
mod catalogue;
mod args;
mod kernel;
mod tier;

#[macro_use]
mod arch;
pub mod bf16_qai8dxp_qsi4c32p;
pub mod bf16_qai8dxp_qsi4cxp;
pub mod f16_qai8dxp_qsi4cxp;
pub mod f16_qai8dxp_qsi8cxp;
pub mod f16_qsi8d32p_qai4c32p;
pub mod qai8dxp_qsi4c32p;
pub mod qai8dxp_qsi4cxp;
pub mod qai8dxp_qsi8cxp;
pub mod qai8dxp_qsu2cxp;
pub mod qsi8d32p_qai4c32p;
pub mod qsi8d32p_qsi4c32p;

pub use crate::packing::Packing;
pub use args::{Clamp, MatmulArgs, UncheckedArgs};
pub use catalogue::{MAX_KERNELS, available, select_for, select_from};
pub(crate) use catalogue::{concat_kernels, total_len};
pub use kernel::{Family, Kernel};
pub(crate) use kernel::{RawKernel, TileStrides, check_depth, sealed};
pub use tier::Tier;

/// Longest quantization block the SIMD tiers of the per-block families take: the asm tiers sum
/// `16 * S` per block in int32, which cannot wrap for `bl <= 2^16` (`|S| <= bl * 128 * 8`);
/// longer blocks run the family's scalar kernel, which sums `S` itself.
#[cfg_attr(not(target_arch = "aarch64"), allow(dead_code))]
pub(crate) const MAX_SIMD_BLOCK_LEN: usize = 1 << 16;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn check_catalogue<F: Family>() {
        let ks = F::kernels();
        assert!(ks.len() <= MAX_KERNELS, "{}: {} kernels", F::NAME, ks.len());
        for (i, a) in ks.iter().enumerate() {
            assert!(ks[i + 1..].iter().all(|b| b.name() != a.name()), "{} twice", a.name());
            assert_eq!(a.m_step() % a.packing().mr, 0, "{}", a.name());
            assert_eq!(a.n_step() % a.packing().nr, 0, "{}", a.name());
            assert!(a.name().contains(F::NAME.split('_').next().unwrap_or("")), "{}", a.name());
            // Every packing has a scalar kernel, so any packed buffer runs on any CPU.
            assert!(ks.iter().any(|s| s.tier() == Tier::Scalar && s.packing() == a.packing()), "{}", a.name());
        }
    }

    #[test]
    fn clamp_rejects_nan_and_inverted_bounds_with_the_bounds() {
        assert_eq!(Clamp::new(2.0, 1.0), Err(Error::InvalidClamp { min: 2.0, max: 1.0 }));
        let Err(Error::InvalidClamp { min, max }) = Clamp::new(f32::NAN, 1.0) else { panic!("NaN accepted") };
        assert!(min.is_nan() && max == 1.0);
        assert!(Clamp::new(f32::NEG_INFINITY, f32::INFINITY).is_ok());
    }

    #[test]
    fn catalogues_are_consistent() {
        check_catalogue::<qai8dxp_qsi4cxp::Qai8dxpQsi4cxp>();
        check_catalogue::<qai8dxp_qsi4c32p::Qai8dxpQsi4c32p>();
        check_catalogue::<qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p>();
        check_catalogue::<qai8dxp_qsi8cxp::Qai8dxpQsi8cxp>();
        check_catalogue::<f16_qai8dxp_qsi4cxp::F16Qai8dxpQsi4cxp>();
        check_catalogue::<f16_qai8dxp_qsi8cxp::F16Qai8dxpQsi8cxp>();
        check_catalogue::<bf16_qai8dxp_qsi4cxp::Bf16Qai8dxpQsi4cxp>();
        check_catalogue::<bf16_qai8dxp_qsi4c32p::Bf16Qai8dxpQsi4c32p>();
        check_catalogue::<qsi8d32p_qai4c32p::Qsi8d32pQai4c32p>();
        check_catalogue::<f16_qsi8d32p_qai4c32p::F16Qsi8d32pQai4c32p>();
        check_catalogue::<qai8dxp_qsu2cxp::Qai8dxpQsu2cxp>();
    }
}
