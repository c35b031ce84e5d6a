//! CPU features and how to obtain them.
//!
//! A kernel tier runs only on a CPU that has its feature: every kernel checks
//! [`CpuFeatures`] before it executes, so a wrong dispatch is an [`Error`](crate::Error), never
//! a SIGILL. Because claiming a feature the CPU lacks would let a kernel execute an undefined
//! instruction, the only ways to *add* a feature are detection (`detect`, `from_id_registers`)
//! and the `unsafe` [`CpuFeatures::with`]. Removing features is always safe, which is how tests
//! and callers force a lower tier.

use core::fmt;

/// One architectural feature that some kernel tier needs or that callers may want to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u8)]
#[non_exhaustive]
pub enum Feature {
    /// Advanced SIMD (NEON). Baseline on every aarch64 target Rust supports with FP.
    Neon = 0,
    /// FEAT_DotProd: `SDOT`/`UDOT`.
    Dotprod = 1,
    /// FEAT_I8MM: `SMMLA`/`UMMLA`/`USMMLA`.
    I8mm = 2,
    /// FEAT_FP16: half-precision arithmetic.
    Fp16 = 3,
    /// FEAT_BF16: bfloat16 arithmetic.
    Bf16 = 4,
    /// FEAT_SVE.
    Sve = 5,
    /// FEAT_SME.
    Sme = 6,
}

impl Feature {
    /// All features, in declaration order.
    pub const ALL: [Feature; 7] =
        [Feature::Neon, Feature::Dotprod, Feature::I8mm, Feature::Fp16, Feature::Bf16, Feature::Sve, Feature::Sme];

    /// The lower-case name Rust and Linux use for the feature (`"dotprod"`, `"i8mm"`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            Feature::Neon => "neon",
            Feature::Dotprod => "dotprod",
            Feature::I8mm => "i8mm",
            Feature::Fp16 => "fp16",
            Feature::Bf16 => "bf16",
            Feature::Sve => "sve",
            Feature::Sme => "sme",
        }
    }

    const fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The set of CPU features the kernels may use.
///
/// Obtain it from [`CpuFeatures::detect`] (with the `std` feature), from
/// `CpuFeatures::from_id_registers` (aarch64 only: bare metal at EL1, or EL0 under Linux), from
/// [`CpuFeatures::from_target`] (what the binary was compiled for), or build it yourself with the
/// `unsafe` [`CpuFeatures::with`]. [`CpuFeatures::without`] removes features (safe), e.g. to force
/// the NEON tier on a CPU that also has i8mm.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CpuFeatures {
    bits: u8,
}

impl CpuFeatures {
    /// No features: only the portable scalar tier is available.
    pub const NONE: CpuFeatures = CpuFeatures { bits: 0 };

    /// The features the crate was compiled to assume (`cfg!(target_feature = ..)`), which the
    /// compiler may already use anywhere in the binary, so claiming them is sound.
    pub const fn from_target() -> CpuFeatures {
        let mut bits = 0;
        if cfg!(all(target_arch = "aarch64", target_feature = "neon")) {
            bits |= Feature::Neon.bit();
        }
        if cfg!(all(target_arch = "aarch64", target_feature = "dotprod")) {
            bits |= Feature::Dotprod.bit();
        }
        if cfg!(all(target_arch = "aarch64", target_feature = "i8mm")) {
            bits |= Feature::I8mm.bit();
        }
        if cfg!(all(target_arch = "aarch64", target_feature = "fp16")) {
            bits |= Feature::Fp16.bit();
        }
        if cfg!(all(target_arch = "aarch64", target_feature = "bf16")) {
            bits |= Feature::Bf16.bit();
        }
        if cfg!(all(target_arch = "aarch64", target_feature = "sve")) {
            bits |= Feature::Sve.bit();
        }
        CpuFeatures { bits }
    }

    /// Run-time detection through the operating system (`is_aarch64_feature_detected!`, which
    /// reads the Linux `HWCAP`s; SME from `AT_HWCAP2`). Executes no `MRS`, so it is safe on
    /// kernels that do not emulate EL0 ID-register reads. On other architectures this is
    /// [`CpuFeatures::NONE`].
    #[cfg(feature = "std")]
    pub fn detect() -> CpuFeatures {
        #[cfg(target_arch = "aarch64")]
        {
            let mut c = CpuFeatures::from_target();
            let found = [
                (Feature::Neon, std::arch::is_aarch64_feature_detected!("neon")),
                (Feature::Dotprod, std::arch::is_aarch64_feature_detected!("dotprod")),
                (Feature::I8mm, std::arch::is_aarch64_feature_detected!("i8mm")),
                (Feature::Fp16, std::arch::is_aarch64_feature_detected!("fp16")),
                (Feature::Bf16, std::arch::is_aarch64_feature_detected!("bf16")),
                (Feature::Sve, std::arch::is_aarch64_feature_detected!("sve")),
            ];
            for (f, present) in found {
                if present {
                    c.bits |= f.bit();
                }
            }
            // SME detection is not stable in std. Take it from the kernel's AT_HWCAP2 word
            // (HWCAP2_SME) rather than from ID_AA64PFR1_EL1: an EL0 `MRS` of an ID register
            // traps (SIGILL) on kernels without HWCAP_CPUID (Linux < 4.11), and this function
            // is safe, so it executes no `MRS` at all.
            #[cfg(any(target_os = "linux", target_os = "android"))]
            if hwcap::sme(hwcap::read(hwcap::AT_HWCAP2)) {
                c.bits |= Feature::Sme.bit();
            }
            c
        }
        #[cfg(not(target_arch = "aarch64"))]
        {
            CpuFeatures::NONE
        }
    }

    /// Detection from the AArch64 ID registers (`ID_AA64PFR0/1_EL1`, `ID_AA64ISAR0/1_EL1`),
    /// for firmware without an OS.
    ///
    /// # Safety
    ///
    /// The caller must run at EL1 or higher, or at EL0 under an OS that emulates EL0 reads of
    /// these registers (Linux does, and so does `qemu-aarch64`). At EL0 without such emulation
    /// the `MRS` instructions trap.
    #[cfg(target_arch = "aarch64")]
    pub unsafe fn from_id_registers() -> CpuFeatures {
        // SAFETY: the caller guarantees the privilege level (see `# Safety`).
        let regs = unsafe { id_regs::read() };
        regs.features()
    }

    /// Adds `feature` to the set.
    ///
    /// # Safety
    ///
    /// The CPU that runs the kernels must implement `feature` (and have it enabled, e.g. FP/SIMD
    /// access through `CPACR_EL1`); otherwise a kernel using it executes an undefined instruction.
    #[must_use]
    pub const unsafe fn with(self, feature: Feature) -> CpuFeatures {
        CpuFeatures { bits: self.bits | feature.bit() }
    }

    /// Removes `feature` from the set (always safe: fewer features only selects lower tiers).
    #[must_use]
    pub const fn without(self, feature: Feature) -> CpuFeatures {
        CpuFeatures { bits: self.bits & !feature.bit() }
    }

    /// Whether `feature` is in the set.
    pub const fn has(self, feature: Feature) -> bool {
        self.bits & feature.bit() != 0
    }

    /// The features in the set, in [`Feature::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = Feature> {
        Feature::ALL.into_iter().filter(move |f| self.has(*f))
    }
}

impl fmt::Debug for CpuFeatures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter().map(Feature::name)).finish()
    }
}

impl fmt::Display for CpuFeatures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for feat in self.iter() {
            if !first {
                f.write_str(",")?;
            }
            f.write_str(feat.name())?;
            first = false;
        }
        if first {
            f.write_str("(none)")?;
        }
        Ok(())
    }
}

/// The Linux auxiliary-vector words `detect` reads (`getauxval`), and their decoding.
#[cfg(all(feature = "std", target_arch = "aarch64", any(target_os = "linux", target_os = "android")))]
pub(crate) mod hwcap {
    /// `AT_HWCAP`: the first word of hardware capabilities.
    pub(crate) const AT_HWCAP: u64 = 16;
    /// `AT_HWCAP2`: the second word.
    pub(crate) const AT_HWCAP2: u64 = 26;
    /// `HWCAP_CPUID` (in `AT_HWCAP`): the kernel emulates EL0 `MRS` of the ID registers.
    pub(crate) const HWCAP_CPUID: u64 = 1 << 11;
    /// `HWCAP2_SME` (in `AT_HWCAP2`).
    pub(crate) const HWCAP2_SME: u64 = 1 << 23;

    unsafe extern "C" {
        /// glibc/bionic/musl: the value of an auxiliary-vector entry, 0 when absent.
        fn getauxval(kind: core::ffi::c_ulong) -> core::ffi::c_ulong;
    }

    /// The auxiliary-vector word `kind` (0 when the kernel does not provide it).
    pub(crate) fn read(kind: u64) -> u64 {
        // SAFETY: `getauxval` only reads the process's auxiliary vector; any `kind` is valid
        // (unknown ones give 0). `c_ulong` is 64 bits on aarch64 Linux.
        unsafe { getauxval(kind as core::ffi::c_ulong) as u64 }
    }

    /// Whether an `AT_HWCAP2` word reports SME.
    pub(crate) const fn sme(hwcap2: u64) -> bool {
        hwcap2 & HWCAP2_SME != 0
    }

    /// Whether an `AT_HWCAP` word says EL0 reads of the ID registers are emulated, so that
    /// [`CpuFeatures::from_id_registers`](super::CpuFeatures::from_id_registers) may run.
    pub(crate) const fn id_registers_readable(hwcap: u64) -> bool {
        hwcap & HWCAP_CPUID != 0
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn decodes_the_words() {
            assert!(sme(HWCAP2_SME) && !sme(0) && !sme(!HWCAP2_SME));
            assert!(id_registers_readable(HWCAP_CPUID | 1) && !id_registers_readable(!HWCAP_CPUID));
        }

        #[test]
        fn qemu_user_reports_cpuid() {
            // qemu-aarch64 and every Linux since 4.11 emulate the ID registers.
            assert!(id_registers_readable(read(AT_HWCAP)));
        }
    }
}

/// Whether EL0 `MRS` reads of the ID registers are emulated by the OS (Linux `HWCAP_CPUID`),
/// i.e. whether `CpuFeatures::from_id_registers` may be called at EL0. Always `false` on
/// targets other than aarch64 Linux/Android.
#[cfg(feature = "std")]
pub fn id_registers_readable_at_el0() -> bool {
    #[cfg(all(target_arch = "aarch64", any(target_os = "linux", target_os = "android")))]
    {
        hwcap::id_registers_readable(hwcap::read(hwcap::AT_HWCAP))
    }
    #[cfg(not(all(target_arch = "aarch64", any(target_os = "linux", target_os = "android"))))]
    {
        false
    }
}

/// Raw ID register values and their decoding (Arm ARM, D19.2).
#[cfg(target_arch = "aarch64")]
pub(crate) mod id_regs {
    use super::{CpuFeatures, Feature};

    /// The four ID registers the features are read from.
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct IdRegs {
        pub(crate) pfr0: u64,
        pub(crate) pfr1: u64,
        pub(crate) isar0: u64,
        pub(crate) isar1: u64,
    }

    const fn field(reg: u64, lsb: u32) -> u64 {
        (reg >> lsb) & 0xf
    }

    impl IdRegs {
        /// `ID_AA64PFR1_EL1.SME`, bits [27:24], non-zero when SME is implemented.
        pub(crate) const fn sme(&self) -> bool {
            field(self.pfr1, 24) != 0
        }

        pub(crate) const fn features(&self) -> CpuFeatures {
            let mut c = CpuFeatures::NONE;
            // ID_AA64PFR0_EL1.FP [19:16] and .AdvSIMD [23:20]: 0b1111 = not implemented,
            // 0b0001 = implemented with half-precision arithmetic.
            let fp = field(self.pfr0, 16);
            let simd = field(self.pfr0, 20);
            if simd != 0xf && fp != 0xf {
                c.bits |= Feature::Neon.bit();
                if simd == 1 && fp == 1 {
                    c.bits |= Feature::Fp16.bit();
                }
            }
            // ID_AA64PFR0_EL1.SVE [35:32].
            if field(self.pfr0, 32) != 0 {
                c.bits |= Feature::Sve.bit();
            }
            // ID_AA64ISAR0_EL1.DP [47:44] = 0b0001: SDOT/UDOT.
            if field(self.isar0, 44) >= 1 && c.has(Feature::Neon) {
                c.bits |= Feature::Dotprod.bit();
            }
            // ID_AA64ISAR1_EL1.I8MM [55:52] and .BF16 [47:44].
            if field(self.isar1, 52) >= 1 && c.has(Feature::Neon) {
                c.bits |= Feature::I8mm.bit();
            }
            if field(self.isar1, 44) >= 1 && c.has(Feature::Neon) {
                c.bits |= Feature::Bf16.bit();
            }
            if self.sme() {
                c.bits |= Feature::Sme.bit();
            }
            c
        }
    }

    /// Reads the four registers with `MRS`.
    ///
    /// # Safety
    ///
    /// Must run at EL1 or higher, or at EL0 where the OS emulates the reads (Linux, QEMU user).
    pub(crate) unsafe fn read() -> IdRegs {
        let (pfr0, pfr1, isar0, isar1): (u64, u64, u64, u64);
        // SAFETY: MRS of the ID registers has no side effect; it is legal at the privilege
        // levels the caller guarantees. The generic `S3_0_C0_C4_1` name of ID_AA64PFR1_EL1
        // avoids assemblers that do not know the SME-era name.
        unsafe {
            core::arch::asm!(
                "mrs {pfr0}, ID_AA64PFR0_EL1",
                "mrs {pfr1}, S3_0_C0_C4_1",
                "mrs {isar0}, ID_AA64ISAR0_EL1",
                "mrs {isar1}, ID_AA64ISAR1_EL1",
                pfr0 = out(reg) pfr0,
                pfr1 = out(reg) pfr1,
                isar0 = out(reg) isar0,
                isar1 = out(reg) isar1,
                options(nomem, nostack, preserves_flags),
            );
        }
        IdRegs { pfr0, pfr1, isar0, isar1 }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn decodes_cortex_a76_like_values() {
            // FP/AdvSIMD with FP16, DP = 1, no I8MM.
            let r = IdRegs { pfr0: 0x0011_0011, pfr1: 0, isar0: 1 << 44, isar1: 0 };
            let c = r.features();
            assert!(c.has(Feature::Neon) && c.has(Feature::Fp16) && c.has(Feature::Dotprod));
            assert!(!c.has(Feature::I8mm) && !c.has(Feature::Sve) && !c.has(Feature::Sme));
        }

        #[test]
        fn decodes_no_simd() {
            let r = IdRegs { pfr0: 0x00ff_0000, pfr1: 0, isar0: 1 << 44, isar1: 1 << 52 };
            assert_eq!(r.features(), CpuFeatures::NONE);
        }
    }
}
