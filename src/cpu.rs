//! CPU features and how to obtain them.
//!
//! A kernel runs only on a CPU that has every feature it requires: every kernel checks
//! [`CpuFeatures`] before it executes, so a wrong dispatch is an [`Error`](crate::Error), never
//! a SIGILL. Because claiming a feature the CPU lacks would let a kernel execute an undefined
//! instruction, the only ways to *add* a feature are detection (`detect`, `from_id_registers`,
//! `from_linux_hwcaps`) and the `unsafe` [`CpuFeatures::with`]. Removing features is always
//! safe, which is how tests and callers force a lower tier.
//!
//! Besides the feature bits, a [`CpuFeatures`] carries the streaming vector length (SVL) of SME,
//! the unit of the tile shapes of kernels whose tiles scale with the vector
//! ([`Extent::Vl`](crate::matmul::Extent)).

use core::fmt;

/// One architectural feature that some kernel needs or that callers may want to know.
///
/// The discriminant is the feature's bit in [`FeatureSet`] (and in the C library's
/// `QGEMM_FEATURE_*` masks): new features take new bits, old bits never move.
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
    /// FEAT_SVE2.
    Sve2 = 7,
    /// FEAT_SME2.
    Sme2 = 8,
    /// FEAT_SME2p1.
    Sme2p1 = 9,
    /// FEAT_SME_F16F16: non-widening half-precision ZA arithmetic.
    SmeF16f16 = 10,
    /// FEAT_SME_B16B16: non-widening bfloat16 ZA arithmetic.
    SmeB16b16 = 11,
    /// FEAT_SME_I16I64: 16-bit integer outer products into 64-bit ZA tiles.
    SmeI16i64 = 12,
    /// FEAT_SME_MOP4: quarter-tile outer products (`MOP4A`).
    SmeMop4 = 13,
}

impl Feature {
    /// All features, in declaration (bit) order.
    pub const ALL: [Feature; 14] = [
        Feature::Neon,
        Feature::Dotprod,
        Feature::I8mm,
        Feature::Fp16,
        Feature::Bf16,
        Feature::Sve,
        Feature::Sme,
        Feature::Sve2,
        Feature::Sme2,
        Feature::Sme2p1,
        Feature::SmeF16f16,
        Feature::SmeB16b16,
        Feature::SmeI16i64,
        Feature::SmeMop4,
    ];

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
            Feature::Sve2 => "sve2",
            Feature::Sme2 => "sme2",
            Feature::Sme2p1 => "sme2p1",
            Feature::SmeF16f16 => "sme-f16f16",
            Feature::SmeB16b16 => "sme-b16b16",
            Feature::SmeI16i64 => "sme-i16i64",
            Feature::SmeMop4 => "sme-mop4",
        }
    }

    /// The feature's bit in a [`FeatureSet`].
    pub const fn bit(self) -> u64 {
        1 << (self as u8)
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of [`Feature`]s as plain data: what a kernel requires (not a claim that a CPU has
/// them, so building one is safe; only [`CpuFeatures`] claims features).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FeatureSet(u64);

impl FeatureSet {
    /// The empty set.
    pub const EMPTY: FeatureSet = FeatureSet(0);

    /// The set of the listed features.
    pub const fn of(features: &[Feature]) -> FeatureSet {
        let mut bits = 0;
        let mut i = 0;
        while i < features.len() {
            bits |= features[i].bit();
            i += 1;
        }
        FeatureSet(bits)
    }

    /// The set with `feature` added.
    #[must_use]
    pub const fn and(self, feature: Feature) -> FeatureSet {
        FeatureSet(self.0 | feature.bit())
    }

    /// The union of two sets.
    #[must_use]
    pub const fn union(self, other: FeatureSet) -> FeatureSet {
        FeatureSet(self.0 | other.0)
    }

    /// Whether `feature` is in the set.
    pub const fn has(self, feature: Feature) -> bool {
        self.0 & feature.bit() != 0
    }

    /// Whether every feature of `other` is in the set.
    pub const fn contains(self, other: FeatureSet) -> bool {
        self.0 & other.0 == other.0
    }

    /// The first feature of the set (in [`Feature::ALL`] order) that `other` lacks.
    pub const fn first_missing_in(self, other: FeatureSet) -> Option<Feature> {
        let mut i = 0;
        while i < Feature::ALL.len() {
            let f = Feature::ALL[i];
            if self.has(f) && !other.has(f) {
                return Some(f);
            }
            i += 1;
        }
        None
    }

    /// The raw bits (bit `f as u8` for feature `f`).
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// The set with every feature its features imply (SME2p1 implies SME2, SME2 and the SME_*
    /// extensions imply SME, SVE2 implies SVE).
    pub const fn with_implied(self) -> FeatureSet {
        let mut set = self;
        let mut i = 0;
        while i < Feature::ALL.len() {
            let f = Feature::ALL[i];
            if self.has(f) {
                let mut j = 0;
                while j < Feature::ALL.len() {
                    if implies(f, Feature::ALL[j]) {
                        set = set.and(Feature::ALL[j]);
                    }
                    j += 1;
                }
            }
            i += 1;
        }
        set
    }

    /// The features named in Linux's `AT_HWCAP` and `AT_HWCAP2` words (the bit numbers of the
    /// kernel's `uapi/asm/hwcap.h`; FP16 needs both `HWCAP_FPHP` and `HWCAP_ASIMDHP`), with the
    /// features they imply. Pure decoding: a set is a description, not a claim
    /// ([`CpuFeatures::from_linux_hwcaps`] is the claim).
    pub const fn from_linux_hwcaps(hwcap: u64, hwcap2: u64) -> FeatureSet {
        const fn bit(w: u64, b: u32) -> bool {
            w & (1 << b) != 0
        }
        // (feature, word, bit): AT_HWCAP when the word is 1, AT_HWCAP2 when 2.
        let table: [(Feature, u8, u32); 14] = [
            (Feature::Neon, 1, 1),       // HWCAP_ASIMD
            (Feature::Fp16, 1, 10),      // HWCAP_ASIMDHP (with HWCAP_FPHP, bit 9, below)
            (Feature::Dotprod, 1, 20),   // HWCAP_ASIMDDP
            (Feature::Sve, 1, 22),       // HWCAP_SVE
            (Feature::SmeMop4, 1, 47),   // HWCAP_SME_SMOP4
            (Feature::Sve2, 2, 1),       // HWCAP2_SVE2
            (Feature::I8mm, 2, 13),      // HWCAP2_I8MM
            (Feature::Bf16, 2, 14),      // HWCAP2_BF16
            (Feature::Sme, 2, 23),       // HWCAP2_SME
            (Feature::SmeI16i64, 2, 24), // HWCAP2_SME_I16I64
            (Feature::Sme2, 2, 37),      // HWCAP2_SME2
            (Feature::Sme2p1, 2, 38),    // HWCAP2_SME2P1
            (Feature::SmeB16b16, 2, 41), // HWCAP2_SME_B16B16
            (Feature::SmeF16f16, 2, 42), // HWCAP2_SME_F16F16
        ];
        let mut set = FeatureSet::EMPTY;
        let mut i = 0;
        while i < table.len() {
            let (f, word, b) = table[i];
            let present = if word == 1 { bit(hwcap, b) } else { bit(hwcap2, b) };
            let fp16_ok = !matches!(f, Feature::Fp16) || bit(hwcap, 9);
            if present && fp16_ok {
                set = set.and(f);
            }
            i += 1;
        }
        set.with_implied()
    }

    /// The features in the set, in [`Feature::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = Feature> {
        Feature::ALL.into_iter().filter(move |f| self.has(*f))
    }
}

impl fmt::Debug for FeatureSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter().map(Feature::name)).finish()
    }
}

impl fmt::Display for FeatureSet {
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

/// The features the kernels may use, and SME's streaming vector length.
///
/// Obtain it from [`CpuFeatures::detect`] (with the `std` feature), from
/// `CpuFeatures::from_id_registers` (aarch64 only: bare metal at EL1, or EL0 under Linux), from
/// [`CpuFeatures::from_target`] (what the binary was compiled for), or build it yourself with the
/// `unsafe` [`CpuFeatures::with`]. [`CpuFeatures::without`] removes features (safe), e.g. to force
/// the NEON tier on a CPU that also has i8mm.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CpuFeatures {
    set: FeatureSet,
    /// Streaming vector length in bytes; 0 when unknown or without SME.
    svl: u16,
}

/// Largest streaming vector length the architecture allows: 2048 bits.
pub const MAX_SVL_BYTES: usize = 256;

impl CpuFeatures {
    /// No features: only the portable scalar tier is available.
    pub const NONE: CpuFeatures = CpuFeatures { set: FeatureSet::EMPTY, svl: 0 };

    /// The features the crate was compiled to assume (`cfg!(target_feature = ..)`), which the
    /// compiler may already use anywhere in the binary, so claiming them is sound.
    pub const fn from_target() -> CpuFeatures {
        let mut set = FeatureSet::EMPTY;
        if cfg!(all(target_arch = "aarch64", target_feature = "neon")) {
            set = set.and(Feature::Neon);
        }
        if cfg!(all(target_arch = "aarch64", target_feature = "dotprod")) {
            set = set.and(Feature::Dotprod);
        }
        if cfg!(all(target_arch = "aarch64", target_feature = "i8mm")) {
            set = set.and(Feature::I8mm);
        }
        if cfg!(all(target_arch = "aarch64", target_feature = "fp16")) {
            set = set.and(Feature::Fp16);
        }
        if cfg!(all(target_arch = "aarch64", target_feature = "bf16")) {
            set = set.and(Feature::Bf16);
        }
        if cfg!(all(target_arch = "aarch64", target_feature = "sve")) {
            set = set.and(Feature::Sve);
        }
        if cfg!(all(target_arch = "aarch64", target_feature = "sve2")) {
            set = set.and(Feature::Sve2);
        }
        CpuFeatures { set, svl: 0 }
    }

    /// Run-time detection through the operating system. On Linux and Android: the `AT_HWCAP`
    /// and `AT_HWCAP2` words of the auxiliary vector ([`CpuFeatures::from_linux_hwcaps`]) and,
    /// where they report SME, the streaming vector length read with `RDSVL`; no `MRS`, so it is
    /// safe on kernels that do not emulate EL0 ID-register reads. Elsewhere on aarch64:
    /// `is_aarch64_feature_detected!`. On other architectures this is [`CpuFeatures::NONE`].
    #[cfg(feature = "std")]
    pub fn detect() -> CpuFeatures {
        #[cfg(all(target_arch = "aarch64", any(target_os = "linux", target_os = "android")))]
        {
            let (hw, hw2) = (hwcap::read(hwcap::AT_HWCAP), hwcap::read(hwcap::AT_HWCAP2));
            // SAFETY: the words come from the kernel's auxiliary vector, which reports only
            // features the kernel found and enabled for this process.
            let cpu = unsafe { CpuFeatures::from_linux_hwcaps(hw, hw2) };
            // SAFETY: Linux enables SME for EL0 (on first use) wherever it reports HWCAP2_SME,
            // so `RDSVL` executes; `with_streaming_vl` reads it only when SME is in the set.
            unsafe { cpu.with_streaming_vl() }
        }
        #[cfg(all(target_arch = "aarch64", not(any(target_os = "linux", target_os = "android"))))]
        {
            let mut c = CpuFeatures::from_target();
            let found = [
                (Feature::Neon, std::arch::is_aarch64_feature_detected!("neon")),
                (Feature::Dotprod, std::arch::is_aarch64_feature_detected!("dotprod")),
                (Feature::I8mm, std::arch::is_aarch64_feature_detected!("i8mm")),
                (Feature::Fp16, std::arch::is_aarch64_feature_detected!("fp16")),
                (Feature::Bf16, std::arch::is_aarch64_feature_detected!("bf16")),
                (Feature::Sve, std::arch::is_aarch64_feature_detected!("sve")),
                (Feature::Sve2, std::arch::is_aarch64_feature_detected!("sve2")),
            ];
            for (f, present) in found {
                if present {
                    c.set = c.set.and(f);
                }
            }
            c
        }
        #[cfg(not(target_arch = "aarch64"))]
        {
            CpuFeatures::NONE
        }
    }

    /// The features Linux reports in the `AT_HWCAP` and `AT_HWCAP2` words of the auxiliary
    /// vector (`getauxval`), decoded with the bit numbers of the kernel's
    /// `uapi/asm/hwcap.h`, together with [`CpuFeatures::from_target`]. The streaming vector
    /// length is unknown (see [`CpuFeatures::with_streaming_vl`]).
    ///
    /// # Safety
    ///
    /// The words are the ones the running kernel reported to this process (or describe
    /// features the CPU has and that are enabled): the result claims every feature they name.
    pub const unsafe fn from_linux_hwcaps(hwcap: u64, hwcap2: u64) -> CpuFeatures {
        let c = CpuFeatures::from_target();
        CpuFeatures { set: c.set.union(FeatureSet::from_linux_hwcaps(hwcap, hwcap2)), svl: 0 }.normalized()
    }

    /// Detection from the AArch64 ID registers (`ID_AA64PFR0/1_EL1`, `ID_AA64ISAR0/1_EL1`,
    /// `ID_AA64ZFR0_EL1`, `ID_AA64SMFR0_EL1`), for firmware without an OS. The streaming vector
    /// length is unknown: on a core with SME, add it with [`CpuFeatures::with_streaming_vl`] once
    /// SME is enabled.
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

    /// The same set with SME's streaming vector length, read with `RDSVL`, when the set has
    /// [`Feature::Sme`] (else unchanged).
    ///
    /// # Safety
    ///
    /// Where the set has SME, SME instructions must not trap at the current exception level:
    /// at EL1 `CPACR_EL1.SMEN` must be `0b11` (and not trapped at EL2/EL3); Linux enables SME
    /// for EL0 wherever it reports it. (Reading the length has no other effect.)
    #[must_use]
    pub unsafe fn with_streaming_vl(self) -> CpuFeatures {
        if !self.has(Feature::Sme) {
            return self;
        }
        #[cfg(target_arch = "aarch64")]
        {
            // SAFETY: the set claims SME (so the CPU implements `RDSVL`) and the caller
            // guarantees SME does not trap here.
            let bytes = unsafe { rdsvl() };
            // SAFETY: the length the CPU itself reports.
            unsafe { self.with_svl(bytes) }.unwrap_or(self)
        }
        #[cfg(not(target_arch = "aarch64"))]
        {
            self
        }
    }

    /// The same set with streaming vector length `bytes` (16 to [`MAX_SVL_BYTES`], a power of
    /// two), or `None` for another length or a set without [`Feature::Sme`].
    ///
    /// # Safety
    ///
    /// `bytes` is the streaming vector length of every thread that runs the kernels with this
    /// set (a kernel whose tile scales with the vector would otherwise read and write a
    /// different amount of memory than was checked).
    pub const unsafe fn with_svl(self, bytes: usize) -> Option<CpuFeatures> {
        if !self.has(Feature::Sme) || bytes < 16 || bytes > MAX_SVL_BYTES || !bytes.is_power_of_two() {
            return None;
        }
        Some(CpuFeatures { set: self.set, svl: bytes as u16 })
    }

    /// SME's streaming vector length in bytes, when the set has SME and the length is known.
    pub const fn svl_bytes(&self) -> Option<usize> {
        if self.svl == 0 || !self.has(Feature::Sme) { None } else { Some(self.svl as usize) }
    }

    /// Adds `feature` to the set (and the features it implies: SME2p1 implies SME2, SME2 and
    /// the SME_* extensions imply SME, SVE2 implies SVE).
    ///
    /// # Safety
    ///
    /// The CPU that runs the kernels must implement `feature` (and have it enabled, e.g. FP/SIMD
    /// access through `CPACR_EL1`); otherwise a kernel using it executes an undefined instruction.
    #[must_use]
    pub const unsafe fn with(self, feature: Feature) -> CpuFeatures {
        CpuFeatures { set: self.set.and(feature), svl: self.svl }.normalized()
    }

    /// Removes `feature` from the set (always safe: fewer features only selects lower tiers),
    /// and the features that imply it (without SME: no SME2, no streaming vector length).
    #[must_use]
    pub const fn without(self, feature: Feature) -> CpuFeatures {
        let mut set = FeatureSet(self.set.0 & !feature.bit());
        let mut i = 0;
        while i < Feature::ALL.len() {
            let f = Feature::ALL[i];
            if implies(f, feature) {
                set = FeatureSet(set.0 & !f.bit());
            }
            i += 1;
        }
        let svl = if set.has(Feature::Sme) { self.svl } else { 0 };
        CpuFeatures { set, svl }
    }

    /// Whether `feature` is in the set.
    pub const fn has(self, feature: Feature) -> bool {
        self.set.has(feature)
    }

    /// The features as a [`FeatureSet`].
    pub const fn features(self) -> FeatureSet {
        self.set
    }

    /// The features in the set, in [`Feature::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = Feature> {
        self.set.iter()
    }

    /// Adds the features the set's features imply.
    const fn normalized(mut self) -> CpuFeatures {
        self.set = self.set.with_implied();
        self
    }
}

/// Whether feature `a` implies feature `b` (`a != b`): the SME extensions imply SME, SME2p1
/// implies SME2, SVE2 implies SVE.
const fn implies(a: Feature, b: Feature) -> bool {
    matches!(
        (a, b),
        (Feature::Sme2p1, Feature::Sme2)
            | (
                Feature::Sme2
                    | Feature::Sme2p1
                    | Feature::SmeF16f16
                    | Feature::SmeB16b16
                    | Feature::SmeI16i64
                    | Feature::SmeMop4,
                Feature::Sme,
            )
            | (Feature::Sve2, Feature::Sve)
    )
}

/// `RDSVL x, #1`: the streaming vector length in bytes.
///
/// # Safety
///
/// The CPU implements SME and SME instructions do not trap at the current exception level.
#[cfg(target_arch = "aarch64")]
unsafe fn rdsvl() -> usize {
    let bytes: usize;
    // SAFETY: the caller's contract; `RDSVL` only reads the vector length (no memory, no
    // flags, no mode change: it is legal outside streaming mode).
    unsafe {
        core::arch::asm!(
            ".arch_extension sme",
            "rdsvl {bytes}, #1",
            bytes = out(reg) bytes,
            options(nomem, nostack, preserves_flags),
        );
    }
    bytes
}

impl fmt::Debug for CpuFeatures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("CpuFeatures");
        s.field("features", &self.set);
        if let Some(b) = self.svl_bytes() {
            s.field("svl_bytes", &b);
        }
        s.finish()
    }
}

impl fmt::Display for CpuFeatures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.set, f)?;
        if let Some(b) = self.svl_bytes() {
            write!(f, " (svl {} bits)", 8 * b)?;
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
#[cfg_attr(not(target_arch = "aarch64"), allow(dead_code))]
pub(crate) mod id_regs {
    use super::{CpuFeatures, Feature};

    /// The six ID registers the features are read from.
    #[derive(Clone, Copy, Debug, Default)]
    pub(crate) struct IdRegs {
        pub(crate) pfr0: u64,
        pub(crate) pfr1: u64,
        pub(crate) isar0: u64,
        pub(crate) isar1: u64,
        pub(crate) zfr0: u64,
        pub(crate) smfr0: u64,
    }

    const fn field(reg: u64, lsb: u32) -> u64 {
        (reg >> lsb) & 0xf
    }

    const fn bit(reg: u64, b: u32) -> bool {
        (reg >> b) & 1 != 0
    }

    impl IdRegs {
        pub(crate) const fn features(&self) -> CpuFeatures {
            let mut c = CpuFeatures::NONE;
            // ID_AA64PFR0_EL1.FP [19:16] and .AdvSIMD [23:20]: 0b1111 = not implemented,
            // 0b0001 = implemented with half-precision arithmetic.
            let fp = field(self.pfr0, 16);
            let simd = field(self.pfr0, 20);
            let neon = simd != 0xf && fp != 0xf;
            const fn add(c: &mut CpuFeatures, on: bool, f: Feature) {
                if on {
                    c.set = c.set.and(f);
                }
            }
            add(&mut c, neon, Feature::Neon);
            add(&mut c, neon && simd == 1 && fp == 1, Feature::Fp16);
            // ID_AA64PFR0_EL1.SVE [35:32]; ID_AA64ZFR0_EL1.SVEver [3:0] >= 1: SVE2.
            let sve = field(self.pfr0, 32) != 0;
            add(&mut c, sve, Feature::Sve);
            add(&mut c, sve && field(self.zfr0, 0) >= 1, Feature::Sve2);
            // ID_AA64ISAR0_EL1.DP [47:44] = 0b0001: SDOT/UDOT.
            add(&mut c, neon && field(self.isar0, 44) >= 1, Feature::Dotprod);
            // ID_AA64ISAR1_EL1.I8MM [55:52] and .BF16 [47:44].
            add(&mut c, neon && field(self.isar1, 52) >= 1, Feature::I8mm);
            add(&mut c, neon && field(self.isar1, 44) >= 1, Feature::Bf16);
            // ID_AA64PFR1_EL1.SME [27:24]: 1 = SME, 2 = SME2. ID_AA64SMFR0_EL1: SMEver
            // [59:56] (1 = SME2, 2 = SME2p1), I16I64 [55:52] = 0b1111, B16B16 [43],
            // F16F16 [42], SMOP4 [0].
            let sme = field(self.pfr1, 24);
            let smever = field(self.smfr0, 56);
            add(&mut c, sme >= 1, Feature::Sme);
            add(&mut c, sme >= 2 || (sme >= 1 && smever >= 1), Feature::Sme2);
            add(&mut c, sme >= 1 && smever >= 2, Feature::Sme2p1);
            add(&mut c, sme >= 1 && field(self.smfr0, 52) == 0xf, Feature::SmeI16i64);
            add(&mut c, sme >= 1 && bit(self.smfr0, 43), Feature::SmeB16b16);
            add(&mut c, sme >= 1 && bit(self.smfr0, 42), Feature::SmeF16f16);
            add(&mut c, sme >= 1 && bit(self.smfr0, 0), Feature::SmeMop4);
            c.normalized()
        }
    }

    /// Reads the six registers with `MRS`.
    ///
    /// # Safety
    ///
    /// Must run at EL1 or higher, or at EL0 where the OS emulates the reads (Linux, QEMU user).
    #[cfg(target_arch = "aarch64")]
    pub(crate) unsafe fn read() -> IdRegs {
        let (pfr0, pfr1, isar0, isar1, zfr0, smfr0): (u64, u64, u64, u64, u64, u64);
        // SAFETY: MRS of the ID registers has no side effect; it is legal at the privilege
        // levels the caller guarantees (registers of features a core lacks read as zero: the
        // ID space is RAZ where unallocated). The generic names (`S3_0_C0_C4_1`
        // ID_AA64PFR1_EL1, `S3_0_C0_C4_4` ID_AA64ZFR0_EL1, `S3_0_C0_C4_5` ID_AA64SMFR0_EL1)
        // avoid assemblers that do not know the SVE- and SME-era names.
        unsafe {
            core::arch::asm!(
                "mrs {pfr0}, ID_AA64PFR0_EL1",
                "mrs {pfr1}, S3_0_C0_C4_1",
                "mrs {isar0}, ID_AA64ISAR0_EL1",
                "mrs {isar1}, ID_AA64ISAR1_EL1",
                "mrs {zfr0}, S3_0_C0_C4_4",
                "mrs {smfr0}, S3_0_C0_C4_5",
                pfr0 = out(reg) pfr0,
                pfr1 = out(reg) pfr1,
                isar0 = out(reg) isar0,
                isar1 = out(reg) isar1,
                zfr0 = out(reg) zfr0,
                smfr0 = out(reg) smfr0,
                options(nomem, nostack, preserves_flags),
            );
        }
        IdRegs { pfr0, pfr1, isar0, isar1, zfr0, smfr0 }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn decodes_cortex_a76_like_values() {
            // FP/AdvSIMD with FP16, DP = 1, no I8MM.
            let r = IdRegs { pfr0: 0x0011_0011, isar0: 1 << 44, ..IdRegs::default() };
            let c = r.features();
            assert!(c.has(Feature::Neon) && c.has(Feature::Fp16) && c.has(Feature::Dotprod));
            assert!(!c.has(Feature::I8mm) && !c.has(Feature::Sve) && !c.has(Feature::Sme));
        }

        #[test]
        fn decodes_no_simd() {
            let r = IdRegs { pfr0: 0x00ff_0000, isar0: 1 << 44, isar1: 1 << 52, ..IdRegs::default() };
            assert_eq!(r.features(), CpuFeatures::NONE);
        }

        #[test]
        fn decodes_sve2_and_the_sme_fields() {
            let r = IdRegs {
                pfr0: 0x0000_0001_0011_0011,
                pfr1: 2 << 24,
                zfr0: 1,
                smfr0: (2 << 56) | (0xf << 52) | (1 << 43) | (1 << 42) | 1,
                ..IdRegs::default()
            };
            let c = r.features();
            for f in [
                Feature::Sve,
                Feature::Sve2,
                Feature::Sme,
                Feature::Sme2,
                Feature::Sme2p1,
                Feature::SmeI16i64,
                Feature::SmeB16b16,
                Feature::SmeF16f16,
                Feature::SmeMop4,
            ] {
                assert!(c.has(f), "{f}");
            }
            // SME1 only: no SME2, and the SMFR0 feature bits need SME.
            let r = IdRegs { pfr1: 1 << 24, ..IdRegs::default() };
            assert!(r.features().has(Feature::Sme) && !r.features().has(Feature::Sme2));
            let r = IdRegs { pfr0: 0x00ff_0000, smfr0: !0, ..IdRegs::default() };
            assert_eq!(r.features(), CpuFeatures::NONE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hwcap_words_decode_with_the_kernel_bit_numbers() {
        // SAFETY: only inspected.
        let c = unsafe { CpuFeatures::from_linux_hwcaps((1 << 1) | (1 << 9) | (1 << 10) | (1 << 47), 1 << 37) };
        assert!(c.has(Feature::Neon) && c.has(Feature::Fp16) && c.has(Feature::SmeMop4));
        assert!(c.has(Feature::Sme2) && c.has(Feature::Sme), "SME2 implies SME");
        // FP16 needs both HWCAP_FPHP and HWCAP_ASIMDHP.
        // SAFETY: only inspected.
        let c = unsafe { CpuFeatures::from_linux_hwcaps(1 << 10, 0) };
        assert!(!c.has(Feature::Fp16));
    }

    #[test]
    fn the_streaming_vector_length_needs_sme() {
        // SAFETY: only inspected.
        let sme = unsafe { CpuFeatures::NONE.with(Feature::Sme) };
        assert_eq!(sme.svl_bytes(), None);
        // SAFETY: only inspected.
        let c = unsafe { sme.with_svl(64) }.unwrap();
        assert_eq!(c.svl_bytes(), Some(64));
        // SAFETY: only inspected.
        assert!(unsafe { sme.with_svl(48) }.is_none() && unsafe { sme.with_svl(512) }.is_none());
        // SAFETY: only inspected.
        assert!(unsafe { CpuFeatures::NONE.with_svl(64) }.is_none());
        assert_eq!(c.without(Feature::Sme).svl_bytes(), None);
        // SAFETY: only inspected.
        let c2 = unsafe { c.with(Feature::Sme2) };
        assert_eq!(c2.without(Feature::Sme), CpuFeatures::NONE, "no SME: no SME2, no length");
    }
}
