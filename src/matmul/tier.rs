//! ISA tiers.

use core::fmt;

use crate::cpu::{CpuFeatures, Feature, FeatureSet};

/// ISA tier of a kernel: the instruction set its inner loop is written in. A kernel's
/// requirements are its tier's features plus any it adds
/// ([`Descriptor::requires`](crate::matmul::Descriptor::requires)). Tiers are ordered from the
/// most portable to the fastest; [`select`](crate::matmul::select_from) prefers later ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Tier {
    /// Portable Rust; runs on every target, including x86.
    Scalar,
    /// NEON intrinsics; any ARMv8-A (Cortex-A53/A72 class).
    Neon,
    /// Hand-written `asm!` with `SDOT` (FEAT_DotProd).
    Dotprod,
    /// Hand-written `asm!` with `SMMLA` (FEAT_I8MM).
    I8mm,
    /// Half-precision arithmetic (FEAT_FP16): the `FMLA` kernels of
    /// [`f16_f16_f16p`](crate::f16_f16_f16p).
    Fp16,
    /// BFloat16 arithmetic (FEAT_BF16): the `BFMMLA`/`BFDOT` kernels of the bf16 float
    /// families.
    Bf16,
}

impl Tier {
    /// Every tier, in order (the loops over tiers in the tests, the bare-metal image and the CI
    /// scripts take this list, through [`Tier::name`]).
    pub const ALL: [Tier; 6] = [Tier::Scalar, Tier::Neon, Tier::Dotprod, Tier::I8mm, Tier::Fp16, Tier::Bf16];

    /// The features every kernel of the tier needs (NEON and the tier's own; none for scalar).
    pub const fn features(self) -> FeatureSet {
        match self {
            Tier::Scalar => FeatureSet::EMPTY,
            Tier::Neon => FeatureSet::of(&[Feature::Neon]),
            Tier::Dotprod => FeatureSet::of(&[Feature::Neon, Feature::Dotprod]),
            Tier::I8mm => FeatureSet::of(&[Feature::Neon, Feature::I8mm]),
            Tier::Fp16 => FeatureSet::of(&[Feature::Neon, Feature::Fp16]),
            Tier::Bf16 => FeatureSet::of(&[Feature::Neon, Feature::Bf16]),
        }
    }

    /// The tier's own feature (what distinguishes it), `None` for the scalar tier.
    pub const fn required_feature(self) -> Option<Feature> {
        match self {
            Tier::Scalar => None,
            Tier::Neon => Some(Feature::Neon),
            Tier::Dotprod => Some(Feature::Dotprod),
            Tier::I8mm => Some(Feature::I8mm),
            Tier::Fp16 => Some(Feature::Fp16),
            Tier::Bf16 => Some(Feature::Bf16),
        }
    }

    /// Whether kernels of this tier may run on `cpu` (the tier's features; a kernel may need
    /// more).
    pub const fn is_available(self, cpu: &CpuFeatures) -> bool {
        cpu.features().contains(self.features())
    }

    /// Lower-case name (`"scalar"`, `"neon"`, `"dotprod"`, `"i8mm"`, `"fp16"`, `"bf16"`).
    pub const fn name(self) -> &'static str {
        match self {
            Tier::Scalar => "scalar",
            Tier::Neon => "neon",
            Tier::Dotprod => "dotprod",
            Tier::I8mm => "i8mm",
            Tier::Fp16 => "fp16",
            Tier::Bf16 => "bf16",
        }
    }

    /// The tier named `name` ([`Tier::name`]).
    pub fn from_name(name: &str) -> Option<Tier> {
        Tier::ALL.into_iter().find(|t| t.name() == name)
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
