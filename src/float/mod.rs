//! Float GEMM families (the spec's `float.md`): f32 and f16 `FMLA` kernels that read the LHS rows
//! unpacked, and bf16 `BFDOT`/`BFMMLA` kernels on a packed bf16 LHS.
//!
//! | family | LHS | RHS (packed, with bias) | output | fastest tier |
//! |---|---|---|---|---|
//! | [`f32_f32_f32p`] | f32 rows | [`F32P16`](crate::rhs::f32p::F32P16), [`F32P8`](crate::rhs::f32p::F32P8) | f32 | NEON `FMLA` |
//! | [`f16_f16_f16p`] | f16 rows | [`F16P32`](crate::rhs::f16p::F16P32), [`F16P16`](crate::rhs::f16p::F16P16) | f16 | FEAT_FP16 `FMLA` |
//! | [`f32_bf16p_bf16p`] | [`BF16P8X4`](crate::lhs::bf16p::BF16P8X4), [`BF16P1X4`](crate::lhs::bf16p::BF16P1X4) | [`BF16P12_B32`](crate::rhs::bf16p12::BF16P12_B32) | f32 | FEAT_BF16 `BFMMLA`, `BFDOT` |
//! | [`f16_bf16p_bf16p`] | [`BF16P8X4`](crate::lhs::bf16p::BF16P8X4) | [`BF16P12_B16`](crate::rhs::bf16p12::BF16P12_B16) | f16 | FEAT_BF16 `BFMMLA` |
//!
//! Every kernel has a scalar twin that models its instructions exactly (fused f32 and f16
//! multiply-add; the BFloat16 dot product's round-to-odd and flush to zero), so a Cortex-A53
//! or A76 computes the bits a core with FEAT_FP16 and FEAT_BF16 computes. A call takes the same
//! steps as the quantized families: pack the weights once ([`rhs::f32p`](crate::rhs::f32p),
//! [`rhs::f16p`](crate::rhs::f16p), [`rhs::bf16p12`](crate::rhs::bf16p12)), pack the LHS for the
//! bf16 families ([`lhs::bf16p`](crate::lhs::bf16p)), run a [`FloatKernel`].

pub(crate) mod arith;
pub(crate) mod fma;
mod kernel;

pub mod f16_bf16p_bf16p;
pub mod f16_f16_f16p;
pub mod f32_bf16p_bf16p;
pub mod f32_f32_f32p;

pub use kernel::{FloatArgs, FloatFamily, FloatKernel, LhsFormat, RhsFormat};
pub(crate) use kernel::{Tiles, available, sealed, select_for};

/// A float family's marker type, `FloatFamily` impl, scalar kernels, `KERNELS` (the SIMD tier
/// modules' lists first) and dispatch (`available`, `select`, `select_for`).
macro_rules! float_family {
    (
        $fam:ident, $name:literal, lhs: $lhs:ty, dst: $dst:ty, lhs_packed: $packed:literal,
        tiers: [$($tier:ident),*],
        scalar: [$($(#[$doc:meta])* ($ident:ident, $kname:literal, $steps:expr, $lfmt:expr, $rfmt:expr, $raw:path)),+ $(,)?],
        preferred: ($plhs:expr, $prhs:expr) $(,)?
    ) => {
        /// Marker type of the family.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $fam;

        impl crate::float::sealed::Sealed for $fam {}

        impl crate::float::FloatFamily for $fam {
            const NAME: &'static str = $name;
            type Lhs = $lhs;
            type Dst = $dst;
            const LHS_PACKED: bool = $packed;
            fn kernels() -> &'static [&'static Kernel] {
                KERNELS
            }
        }

        /// A kernel of this family.
        pub type Kernel = crate::float::FloatKernel<$fam>;

        $(
            $(#[$doc])*
            #[doc = concat!("Scalar kernel `", $kname, "` (portable, exact model of the SIMD tiers).")]
            pub static $ident: Kernel = Kernel::new($kname, crate::matmul::Tier::Scalar, $steps, $lfmt, $rfmt, $raw);
        )+

        /// Each tier's list (empty where the target lacks the tier), best tier first.
        const TIERS: &[&[&Kernel]] = &[$($tier::KERNELS,)* &[$(&$ident),+]];

        /// Every kernel of the family on this target, best first.
        pub static KERNELS: &[&Kernel] =
            &crate::matmul::concat_kernels::<_, { crate::matmul::total_len(TIERS) }>(TIERS);

        /// The kernels usable on `cpu`, best first.
        pub fn available(cpu: &crate::CpuFeatures) -> impl Iterator<Item = &'static Kernel> + '_ {
            crate::float::available::<$fam>(cpu)
        }

        /// The best kernel on `cpu` for the family's preferred formats ([`PREFERRED_LHS`],
        /// [`PREFERRED_RHS`]); the scalar kernel when no SIMD tier runs.
        pub fn select(cpu: &crate::CpuFeatures) -> &'static Kernel {
            crate::float::select_for::<$fam>(cpu, &PREFERRED_RHS, PREFERRED_LHS)
        }

        /// The best kernel on `cpu` that consumes `rhs` and `lhs` (`None` for an unpacked LHS),
        /// or `None` if no kernel of the family does.
        pub fn select_for(
            cpu: &crate::CpuFeatures,
            lhs: Option<crate::float::LhsFormat>,
            rhs: &crate::float::RhsFormat,
        ) -> Option<&'static Kernel> {
            KERNELS.iter().copied().find(|k| k.rhs_format() == *rhs && k.lhs_format() == lhs && k.is_available(cpu))
        }

        /// The LHS format [`select`] uses.
        pub const PREFERRED_LHS: Option<crate::float::LhsFormat> = $plhs;
        /// The RHS format [`select`] uses.
        pub const PREFERRED_RHS: crate::float::RhsFormat = $prhs;
    };
}
pub(crate) use float_family;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matmul::Tier;

    fn check<F: FloatFamily>() {
        let ks = F::kernels();
        for (i, a) in ks.iter().enumerate() {
            assert!(ks[i + 1..].iter().all(|b| b.name() != a.name()), "{} twice", a.name());
            assert!(a.name().contains(F::NAME.split('_').next().unwrap_or("")), "{}", a.name());
            assert_eq!(a.n_step() % a.rhs_format().nr, 0, "{}", a.name());
            assert_eq!(a.lhs_format().is_some(), F::LHS_PACKED, "{}", a.name());
            if let Some(l) = a.lhs_format() {
                assert_eq!(a.m_step() % l.mr, 0, "{}", a.name());
            }
            // Every format pair has a scalar kernel, so any packed buffer runs on any CPU.
            assert!(
                ks.iter().any(|s| s.tier() == Tier::Scalar
                    && s.rhs_format() == a.rhs_format()
                    && s.lhs_format() == a.lhs_format()),
                "{}",
                a.name()
            );
        }
    }

    #[test]
    fn catalogues_are_consistent() {
        check::<f32_f32_f32p::F32F32F32p>();
        check::<f16_f16_f16p::F16F16F16p>();
        check::<f32_bf16p_bf16p::F32Bf16pBf16p>();
        check::<f16_bf16p_bf16p::F16Bf16pBf16p>();
    }
}
