//! CPU features as C bit sets, their sources (Linux HWCAP words, the ID registers, the build
//! target) and the feature set layer 2 runs with.

use core::sync::atomic::{AtomicU32, Ordering};

use qgemm::{CpuFeatures, Feature, FeatureSet};

use crate::status::qgemm_status;

/// FEAT_AdvSIMD (NEON): the NEON tier.
pub const QGEMM_FEATURE_NEON: u32 = 1 << 0;
/// FEAT_DotProd (`SDOT`): the dotprod tier.
pub const QGEMM_FEATURE_DOTPROD: u32 = 1 << 1;
/// FEAT_I8MM (`SMMLA`): the i8mm tier.
pub const QGEMM_FEATURE_I8MM: u32 = 1 << 2;
/// FEAT_FP16.
pub const QGEMM_FEATURE_FP16: u32 = 1 << 3;
/// FEAT_BF16.
pub const QGEMM_FEATURE_BF16: u32 = 1 << 4;
/// FEAT_SVE.
pub const QGEMM_FEATURE_SVE: u32 = 1 << 5;
/// FEAT_SME. With this bit the library reads the streaming vector length (`RDSVL`) when it
/// resolves a kernel of a family that has a kernel whose tile scales with it: on Linux only
/// where the kernel reports SME, on bare metal wherever set.
pub const QGEMM_FEATURE_SME: u32 = 1 << 6;
/// FEAT_SVE2 (implies `QGEMM_FEATURE_SVE`).
pub const QGEMM_FEATURE_SVE2: u32 = 1 << 7;
/// FEAT_SME2 (implies `QGEMM_FEATURE_SME`).
pub const QGEMM_FEATURE_SME2: u32 = 1 << 8;
/// FEAT_SME2p1 (implies `QGEMM_FEATURE_SME2`).
pub const QGEMM_FEATURE_SME2P1: u32 = 1 << 9;
/// FEAT_SME_F16F16: non-widening half-precision ZA arithmetic (implies `QGEMM_FEATURE_SME`).
pub const QGEMM_FEATURE_SME_F16F16: u32 = 1 << 10;
/// FEAT_SME_B16B16: non-widening bfloat16 ZA arithmetic (implies `QGEMM_FEATURE_SME`).
pub const QGEMM_FEATURE_SME_B16B16: u32 = 1 << 11;
/// FEAT_SME_I16I64: 16-bit integer outer products into 64-bit tiles (implies `QGEMM_FEATURE_SME`).
pub const QGEMM_FEATURE_SME_I16I64: u32 = 1 << 12;
/// FEAT_SME_MOP4: quarter-tile outer products (implies `QGEMM_FEATURE_SME`).
pub const QGEMM_FEATURE_SME_MOP4: u32 = 1 << 13;
/// Every defined feature bit. Later versions add bits above these; the values of these never
/// change, so a mask built with an older header means the same.
pub const QGEMM_FEATURE_ALL: u32 = (1 << 14) - 1;

// Each C bit is its Rust feature's (`Feature::bit`), and `QGEMM_FEATURE_ALL` is every feature.
const _: () = {
    let named = [
        (QGEMM_FEATURE_NEON, Feature::Neon),
        (QGEMM_FEATURE_DOTPROD, Feature::Dotprod),
        (QGEMM_FEATURE_I8MM, Feature::I8mm),
        (QGEMM_FEATURE_FP16, Feature::Fp16),
        (QGEMM_FEATURE_BF16, Feature::Bf16),
        (QGEMM_FEATURE_SVE, Feature::Sve),
        (QGEMM_FEATURE_SME, Feature::Sme),
        (QGEMM_FEATURE_SVE2, Feature::Sve2),
        (QGEMM_FEATURE_SME2, Feature::Sme2),
        (QGEMM_FEATURE_SME2P1, Feature::Sme2p1),
        (QGEMM_FEATURE_SME_F16F16, Feature::SmeF16f16),
        (QGEMM_FEATURE_SME_B16B16, Feature::SmeB16b16),
        (QGEMM_FEATURE_SME_I16I64, Feature::SmeI16i64),
        (QGEMM_FEATURE_SME_MOP4, Feature::SmeMop4),
    ];
    assert!(named.len() == Feature::ALL.len());
    let mut all = 0;
    let mut i = 0;
    while i < named.len() {
        assert!(named[i].0 as u64 == named[i].1.bit());
        all |= named[i].0;
        i += 1;
    }
    assert!(all == QGEMM_FEATURE_ALL);
};

/// The C bits of a feature set (every `Feature` bit is below 32: checked above).
pub(crate) const fn set_to_bits(set: FeatureSet) -> u32 {
    set.bits() as u32
}

/// The bit set of `cpu`.
pub(crate) fn to_bits(cpu: CpuFeatures) -> u32 {
    set_to_bits(cpu.features())
}

/// The feature set of `bits` (and the features they imply), or `None` if a bit outside
/// [`QGEMM_FEATURE_ALL`] is set. The streaming vector length is not read here: only where a
/// kernel whose tile scales with it may be resolved ([`with_svl_where`]), so a core with SME
/// that firmware left disabled (`CPACR_EL1.SMEN`, docs/porting.md) runs the fixed-shape
/// kernels with the detected bits.
///
/// The caller of the C API claims the features: a claimed feature the CPU lacks makes a kernel
/// of that tier execute an undefined instruction (documented on every function that takes
/// features; the same contract as `CpuFeatures::with`). The streaming vector length is not
/// read here: [`with_svl_where`].
pub(crate) fn from_bits(bits: u32) -> Option<CpuFeatures> {
    if bits & !QGEMM_FEATURE_ALL != 0 {
        return None;
    }
    let mut cpu = CpuFeatures::NONE;
    for f in Feature::ALL {
        if bits & bit(f) != 0 {
            // SAFETY: the C caller asserts the CPU has every feature in `bits`, enabled (the
            // documented contract of the functions that take a feature set).
            cpu = unsafe { cpu.with(f) };
        }
    }
    Some(cpu)
}

/// `cpu` with the streaming vector length, read with `RDSVL`, where `needed` (a kernel whose
/// tile scales with it may be resolved) and the set claims SME; else `cpu` as it is. On Linux
/// only where the kernel reports SME too, so a caller that sets every bit (to ask which
/// kernels exist) never executes `RDSVL` on a CPU without SME.
pub(crate) fn with_svl_where(cpu: CpuFeatures, needed: bool) -> CpuFeatures {
    if !needed || !cpu.has(Feature::Sme) {
        return cpu;
    }
    #[cfg(target_os = "linux")]
    {
        let (hwcap, hwcap2) = crate::sys::hwcaps();
        if bits_from_hwcap(hwcap, hwcap2) & QGEMM_FEATURE_SME == 0 {
            return cpu;
        }
    }
    // SAFETY: the set claims SME for a family with an SME kernel, and on Linux the kernel
    // reports it (checked above; Linux enables SME for EL0 wherever it reports it): SME is
    // implemented and enabled (the documented contract of `QGEMM_FEATURE_SME`), so `RDSVL`
    // does not trap.
    unsafe { cpu.with_streaming_vl() }
}

/// The C bit of a feature.
const fn bit(f: Feature) -> u32 {
    f.bit() as u32
}

/// Decodes the Linux HWCAP words into feature bits (the core's table).
pub(crate) const fn bits_from_hwcap(hwcap: u64, hwcap2: u64) -> u32 {
    set_to_bits(FeatureSet::from_linux_hwcaps(hwcap, hwcap2))
}

/// The features of the running CPU: the HWCAP words on Linux (no `MRS`), the ID registers on
/// bare metal (which must then run at EL1 or higher, as firmware does).
pub(crate) fn detect_bits() -> u32 {
    #[cfg(target_os = "linux")]
    {
        let (hwcap, hwcap2) = crate::sys::hwcaps();
        bits_from_hwcap(hwcap, hwcap2) | to_bits(CpuFeatures::from_target())
    }
    #[cfg(all(not(target_os = "linux"), target_arch = "aarch64"))]
    {
        // SAFETY: bare metal: the library's documented contract is that detection runs at EL1
        // or higher (docs/c-api.md), where the ID registers are readable.
        to_bits(unsafe { CpuFeatures::from_id_registers() })
    }
    #[cfg(all(not(target_os = "linux"), not(target_arch = "aarch64")))]
    {
        to_bits(CpuFeatures::from_target())
    }
}

/// Layer 2's feature set: bit 31 set once it is known.
static LAYER2_FEATURES: AtomicU32 = AtomicU32::new(0);
const KNOWN: u32 = 1 << 31;

/// The features layer 2 runs with: set by [`qgemm_kai_set_cpu_features`], else detected once.
pub(crate) fn layer2() -> CpuFeatures {
    let mut v = LAYER2_FEATURES.load(Ordering::Relaxed);
    if v & KNOWN == 0 {
        v = detect_bits() | KNOWN;
        // A concurrent first call detects the same value; a concurrent setter wins.
        let _ = LAYER2_FEATURES.compare_exchange(0, v, Ordering::Relaxed, Ordering::Relaxed);
        v = LAYER2_FEATURES.load(Ordering::Relaxed);
    }
    from_bits(v & QGEMM_FEATURE_ALL).unwrap_or(CpuFeatures::NONE)
}

/// Writes the running CPU's features to `*out`: from `getauxval(AT_HWCAP/AT_HWCAP2)` on Linux
/// (no ID-register read), from the ID registers on bare metal (call at EL1 or higher).
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as in `api`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_cpu_detect(out: *mut u32) -> qgemm_status {
    // SAFETY: `out` is null or writable (this function's contract).
    unsafe { crate::api::write_out(out, detect_bits()) }
}

/// Writes the features read from the AArch64 ID registers (`ID_AA64PFR0/1_EL1`,
/// `ID_AA64ISAR0/1_EL1`) to `*out`. On Linux only where the kernel emulates EL0 reads of them
/// (`HWCAP_CPUID`, every kernel since 4.11), else `QGEMM_ERROR_UNSUPPORTED_CPU` and no `MRS` is
/// executed; on bare metal the caller must run at EL1 or higher.
///
/// # Safety
///
/// `out` is null or valid for a write; on bare metal, the caller runs at EL1 or higher.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_cpu_from_id_registers(out: *mut u32) -> qgemm_status {
    #[cfg(target_os = "linux")]
    {
        const HWCAP_CPUID: u64 = 1 << 11;
        if crate::sys::hwcaps().0 & HWCAP_CPUID == 0 {
            return qgemm_status::QGEMM_ERROR_UNSUPPORTED_CPU;
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        // SAFETY: on Linux the kernel emulates the reads (HWCAP_CPUID, checked above); on bare
        // metal the caller runs at EL1 or higher (this function's contract).
        let bits = to_bits(unsafe { CpuFeatures::from_id_registers() });
        // SAFETY: `out` is null or writable (this function's contract).
        unsafe { crate::api::write_out(out, bits) }
    }
    #[cfg(not(target_arch = "aarch64"))]
    {
        let _ = out;
        qgemm_status::QGEMM_ERROR_UNSUPPORTED_CPU
    }
}

/// Writes the features in Linux `AT_HWCAP` / `AT_HWCAP2` words (e.g. from a target's
/// `/proc/self/auxv`, or a test) to `*out`, with the features they imply. Pure decoding; reads
/// no register.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as in `api`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_cpu_from_hwcap(hwcap: u64, hwcap2: u64, out: *mut u32) -> qgemm_status {
    // SAFETY: `out` is null or writable (this function's contract).
    unsafe { crate::api::write_out(out, bits_from_hwcap(hwcap, hwcap2)) }
}

/// Writes the features the library was compiled to assume (`target_feature`) to `*out`.
///
/// # Safety
///
/// Every pointer argument is null or valid for the reads or writes of the length given with it
/// (one element for out pointers and structs), as in `api`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn qgemm_cpu_from_target(out: *mut u32) -> qgemm_status {
    // SAFETY: `out` is null or writable (this function's contract).
    unsafe { crate::api::write_out(out, to_bits(CpuFeatures::from_target())) }
}

/// Sets the features layer 2 (`kai_*`) runs with, instead of detecting them at the first
/// `kai_run_matmul_*` call. Use it on bare metal at EL0, or to force a tier (e.g.
/// `QGEMM_FEATURE_NEON` only). Every bit must be a feature the CPU has.
/// `QGEMM_ERROR_INVALID_ARGUMENT` for bits outside `QGEMM_FEATURE_ALL`.
#[unsafe(no_mangle)]
pub extern "C" fn qgemm_kai_set_cpu_features(features: u32) -> qgemm_status {
    if from_bits(features).is_none() {
        return qgemm_status::QGEMM_ERROR_INVALID_ARGUMENT;
    }
    LAYER2_FEATURES.store(features | KNOWN, Ordering::Relaxed);
    qgemm_status::QGEMM_OK
}
