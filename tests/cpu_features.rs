//! CPU feature detection: the std path, the ID-register path and the caller-given path agree
//! with each other and with the raw Linux HWCAP words, and `without` forces lower tiers.
//!
//! Under the SME2 QEMU (`cargo make test-qemu-sme2`: QEMU 11 from ci/fetch_qemu_sme2.sh, which
//! sets `QGEMM_QEMU_SME2=1`) the SME2 family must be detected, and the streaming vector length
//! must be the one QEMU was started with (`QEMU_CPU=max,sme-default-vector-length=N`) and follow
//! `prctl(PR_SME_SET_VL)` within a thread.

use qgemm::{CpuFeatures, Feature, FeatureSet};

#[cfg(target_arch = "aarch64")]
/// The QEMU CPU model, without its properties (`max` for `QEMU_CPU=max,sme-default-vector-length=64`).
fn qemu_model() -> Option<String> {
    let v = std::env::var("QEMU_CPU").ok()?;
    Some(v.split(',').next().unwrap_or("").to_string())
}

#[cfg(all(target_arch = "aarch64", target_os = "linux"))]
/// Whether the runner is the SME2 QEMU (set by `cargo make test-qemu-sme2`).
fn sme2_qemu() -> bool {
    std::env::var("QGEMM_QEMU_SME2").as_deref() == Ok("1")
}

#[cfg(all(target_arch = "aarch64", target_os = "linux"))]
/// The streaming vector length (bytes) QEMU was started with: the `sme-default-vector-length`
/// property of `QEMU_CPU`, else QEMU's linux-user default (256 bits).
fn qemu_start_svl_bytes() -> usize {
    let v = std::env::var("QEMU_CPU").unwrap_or_default();
    v.split(',')
        .find_map(|p| p.strip_prefix("sme-default-vector-length="))
        .map(|n| n.parse().unwrap_or_else(|_| panic!("QEMU_CPU={v}: sme-default-vector-length is not a number")))
        .unwrap_or(32)
}

#[test]
fn detection_reports_the_qemu_cpu_model() {
    let cpu = CpuFeatures::detect();
    println!("detected: {cpu} (QEMU_CPU={:?})", std::env::var("QEMU_CPU").ok());
    #[cfg(target_arch = "aarch64")]
    {
        assert!(cpu.has(Feature::Neon));
        // The CI runs this binary under each model; check the model's known features.
        match qemu_model().as_deref() {
            Some("max") => assert!(
                cpu.has(Feature::I8mm) && cpu.has(Feature::Dotprod) && cpu.has(Feature::Sve) && cpu.has(Feature::Sme)
            ),
            Some("cortex-a76") => {
                assert!(cpu.has(Feature::Dotprod) && !cpu.has(Feature::I8mm) && !cpu.has(Feature::Sme))
            }
            Some("cortex-a53") => assert!(!cpu.has(Feature::Dotprod) && !cpu.has(Feature::I8mm)),
            _ => {}
        }
    }
    #[cfg(not(target_arch = "aarch64"))]
    assert_eq!(cpu, CpuFeatures::NONE);
}

/// The raw `AT_HWCAP` and `AT_HWCAP2` words of this process.
#[cfg(all(target_arch = "aarch64", target_os = "linux"))]
fn raw_words() -> (u64, u64) {
    unsafe extern "C" {
        fn getauxval(kind: std::ffi::c_ulong) -> std::ffi::c_ulong;
    }
    // SAFETY: getauxval has no precondition; it reads the process's auxiliary vector and
    // returns 0 for an absent entry (16 = AT_HWCAP, 26 = AT_HWCAP2).
    unsafe { (getauxval(16), getauxval(26)) }
}

/// The features named by raw Linux HWCAP words, decoded here independently of the library:
/// (feature, word, bit), with the bit numbers of the kernel's `uapi/asm/hwcap.h`.
const RAW_BITS: [(Feature, u8, u32); 14] = [
    (Feature::Neon, 1, 1),       // HWCAP_ASIMD
    (Feature::Fp16, 1, 10),      // HWCAP_ASIMDHP (the library also wants HWCAP_FPHP, bit 9)
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

#[cfg(all(target_arch = "aarch64", target_os = "linux"))]
fn raw_decode(hw: u64, hw2: u64) -> Vec<(Feature, bool)> {
    RAW_BITS.iter().map(|&(f, word, b)| (f, (if word == 1 { hw } else { hw2 }) >> b & 1 != 0)).collect()
}

/// The features the raw Linux auxiliary vector reports.
#[cfg(all(target_arch = "aarch64", target_os = "linux"))]
fn raw_hwcaps() -> Vec<(Feature, bool)> {
    let (hw, hw2) = raw_words();
    raw_decode(hw, hw2)
}

#[test]
fn from_linux_hwcaps_decodes_each_kernel_bit() {
    // One bit at a time: the feature it names and the ones that feature implies, nothing else
    // (FP16 takes HWCAP_FPHP with it).
    for &(f, word, b) in &RAW_BITS {
        let (mut hw, hw2) = if word == 1 { (1u64 << b, 0) } else { (0, 1u64 << b) };
        if f == Feature::Fp16 {
            hw |= 1 << 9;
        }
        let set = FeatureSet::from_linux_hwcaps(hw, hw2);
        assert!(set.has(f), "bit {b} of AT_HWCAP{}: {set:?} lacks {f}", if word == 1 { "" } else { "2" });
        let implied: &[Feature] = match f {
            Feature::Sme2p1 => &[Feature::Sme2, Feature::Sme],
            Feature::Sme2 | Feature::SmeF16f16 | Feature::SmeB16b16 | Feature::SmeI16i64 | Feature::SmeMop4 => {
                &[Feature::Sme]
            }
            Feature::Sve2 => &[Feature::Sve],
            _ => &[],
        };
        let want = implied.iter().fold(FeatureSet::of(&[f]), |s, &g| s.and(g));
        assert_eq!(set, want, "bit {b} of AT_HWCAP{}", if word == 1 { "" } else { "2" });
    }
    // The HWCAP2 bits next to the SME2 ones name features the library does not model
    // (HWCAP2_SVE2P1 36, HWCAP2_SME_I16I32 39, HWCAP2_SME_BI32I32 40, HWCAP2_MOPS 43): nothing.
    for b in [36, 39, 40, 43] {
        assert_eq!(FeatureSet::from_linux_hwcaps(0, 1 << b), FeatureSet::EMPTY, "HWCAP2 bit {b}");
    }
}

#[cfg(all(target_arch = "aarch64", target_os = "linux"))]
#[test]
fn detection_agrees_with_the_raw_hwcaps() {
    let d = CpuFeatures::detect();
    for (f, present) in raw_hwcaps() {
        assert_eq!(d.has(f), present, "{f}: detect() says {}, the HWCAP bit says {present}", d.has(f));
    }
}

#[cfg(all(target_arch = "aarch64", target_os = "linux"))]
#[test]
fn feature_set_decoding_agrees_with_the_raw_hwcaps() {
    // The pure decoder on this process's words, without from_target's compile-time features.
    let (hw, hw2) = raw_words();
    let set = FeatureSet::from_linux_hwcaps(hw, hw2);
    println!("AT_HWCAP={hw:#x} AT_HWCAP2={hw2:#x}: {set}");
    for (f, present) in raw_decode(hw, hw2) {
        let present = present && (f != Feature::Fp16 || hw >> 9 & 1 != 0);
        assert_eq!(set.has(f), present, "{f}: from_linux_hwcaps says {}, the HWCAP bit says {present}", set.has(f));
    }
}

#[cfg(all(target_arch = "aarch64", target_os = "linux"))]
#[test]
fn from_target_is_a_subset_of_the_raw_hwcaps() {
    // Independent of `detect` (which starts from `from_target`): every feature the binary was
    // compiled to assume must be one the kernel reports.
    let t = CpuFeatures::from_target();
    for (f, present) in raw_hwcaps() {
        assert!(!t.has(f) || present, "compiled for {f}, which the HWCAPs lack");
    }
}

#[cfg(target_arch = "aarch64")]
#[test]
fn id_registers_agree_with_hwcaps() {
    // The ID registers are read with MRS, which traps at EL0 unless the kernel emulates it.
    if !qgemm::cpu::id_registers_readable_at_el0() {
        println!("skipped: the kernel does not emulate EL0 ID-register reads (no HWCAP_CPUID)");
        return;
    }
    // SAFETY: HWCAP_CPUID is set, so the kernel (or qemu-aarch64) emulates EL0 reads of the
    // ID registers.
    let regs = unsafe { CpuFeatures::from_id_registers() };
    let hw = CpuFeatures::detect();
    println!("ID registers: {regs}; HWCAP: {hw}");
    // SME: detect() takes it from AT_HWCAP2, from_id_registers() from ID_AA64PFR1_EL1: two
    // independent sources.
    for f in [Feature::Neon, Feature::Dotprod, Feature::I8mm, Feature::Bf16, Feature::Sve, Feature::Sme] {
        assert_eq!(regs.has(f), hw.has(f), "{f}");
    }
    // The SME2 family: ID_AA64PFR1_EL1.SME and ID_AA64SMFR0_EL1 against AT_HWCAP/AT_HWCAP2.
    for f in [Feature::Sve2, Feature::Sme2, Feature::Sme2p1, Feature::SmeF16f16, Feature::SmeB16b16, Feature::SmeI16i64]
    {
        assert_eq!(regs.has(f), hw.has(f), "{f}: ID registers {}, HWCAP {}", regs.has(f), hw.has(f));
    }
    // SMOP4 (ID_AA64SMFR0_EL1 bit 0) only one way: QEMU 11's EL0 view of ID_AA64SMFR0_EL1 reads
    // bits [31:0] as zero (0x82f15cff00000000 under -cpu max) while its AT_HWCAP has
    // HWCAP_SME_SMOP4; Linux exposes the field. An ID-register claim must still be in the HWCAPs.
    assert!(!regs.has(Feature::SmeMop4) || hw.has(Feature::SmeMop4), "sme-mop4: ID registers only");
}

/// `prctl(2)`: PR_SME_SET_VL = 63 and PR_SME_GET_VL = 64 (Linux `uapi/linux/prctl.h`); the
/// length in bytes is the low 16 bits (PR_SME_VL_LEN_MASK) of the result.
#[cfg(all(target_arch = "aarch64", target_os = "linux"))]
mod sme_vl {
    unsafe extern "C" {
        fn prctl(option: std::ffi::c_int, ...) -> std::ffi::c_int;
    }
    const PR_SME_SET_VL: std::ffi::c_int = 63;
    const PR_SME_GET_VL: std::ffi::c_int = 64;
    const PR_SME_VL_LEN_MASK: std::ffi::c_int = 0xffff;

    /// This thread's streaming vector length in bytes, or `None` where the kernel has no SME.
    pub fn get() -> Option<usize> {
        // SAFETY: PR_SME_GET_VL only reads the calling thread's setting; the unused arguments
        // are zero, as prctl(2) asks. It fails with EINVAL (returns -1) without SME.
        let r = unsafe {
            prctl(
                PR_SME_GET_VL,
                0 as std::ffi::c_ulong,
                0 as std::ffi::c_ulong,
                0 as std::ffi::c_ulong,
                0 as std::ffi::c_ulong,
            )
        };
        (r >= 0).then_some((r & PR_SME_VL_LEN_MASK) as usize)
    }

    /// Sets this thread's streaming vector length to `bytes` (the kernel picks the largest
    /// supported length not above it) and returns the length now in effect.
    ///
    /// # Safety
    ///
    /// The calling thread holds no SME state (not in streaming mode, ZA off) and no
    /// `CpuFeatures` carrying the old length that will still run kernels.
    pub unsafe fn set(bytes: usize) -> Option<usize> {
        // SAFETY: PR_SME_SET_VL changes only the calling thread's length (no flags: not
        // inherited, effective now) and discards its streaming/ZA state, which the caller
        // guarantees is not in use.
        let r = unsafe {
            prctl(
                PR_SME_SET_VL,
                bytes as std::ffi::c_ulong,
                0 as std::ffi::c_ulong,
                0 as std::ffi::c_ulong,
                0 as std::ffi::c_ulong,
            )
        };
        (r >= 0).then_some((r & PR_SME_VL_LEN_MASK) as usize)
    }
}

#[cfg(all(target_arch = "aarch64", target_os = "linux"))]
#[test]
fn sme2_qemu_reports_the_sme2_family() {
    if !sme2_qemu() {
        println!("skipped: not the SME2 QEMU (QGEMM_QEMU_SME2 unset; `cargo make test-qemu-sme2` sets it)");
        return;
    }
    let cpu = CpuFeatures::detect();
    println!("detected: {cpu} (QEMU_CPU={:?})", std::env::var("QEMU_CPU").ok());
    assert_eq!(qemu_model().as_deref(), Some("max"), "the SME2 run uses -cpu max");
    let (hw, hw2) = raw_words();
    // The raw bits first, so that a QEMU without them fails here, named.
    for (name, b) in [("SME", 23), ("SME2", 37), ("SME2P1", 38), ("SME_B16B16", 41), ("SME_F16F16", 42)] {
        assert!(hw2 >> b & 1 != 0, "AT_HWCAP2={hw2:#x} lacks HWCAP2_{name} (bit {b}): is the runner QEMU 11?");
    }
    assert!(hw >> 47 & 1 != 0, "AT_HWCAP={hw:#x} lacks HWCAP_SME_SMOP4 (bit 47)");
    for f in [
        Feature::Sme,
        Feature::Sme2,
        Feature::Sme2p1,
        Feature::SmeF16f16,
        Feature::SmeB16b16,
        Feature::SmeI16i64,
        Feature::SmeMop4,
        Feature::Sve2,
    ] {
        assert!(cpu.has(f), "detect() lacks {f}: {cpu}");
    }
}

#[cfg(all(target_arch = "aarch64", target_os = "linux"))]
#[test]
fn streaming_vl_is_the_threads_length() {
    let cpu = CpuFeatures::detect();
    let Some(prctl_vl) = sme_vl::get() else {
        assert!(!cpu.has(Feature::Sme), "SME detected, but PR_SME_GET_VL fails");
        assert_eq!(cpu.svl_bytes(), None);
        println!("skipped: no SME");
        return;
    };
    assert!(cpu.has(Feature::Sme), "PR_SME_GET_VL works, but SME is not detected");
    println!("svl: {:?} bytes (PR_SME_GET_VL: {prctl_vl})", cpu.svl_bytes());
    assert_eq!(cpu.svl_bytes(), Some(prctl_vl), "RDSVL and PR_SME_GET_VL disagree");
    // SAFETY: the words are this process's auxiliary vector, and Linux enables SME for EL0
    // wherever it reports HWCAP2_SME (which `with_streaming_vl` checks before RDSVL).
    let again = unsafe {
        let (hw, hw2) = raw_words();
        CpuFeatures::from_linux_hwcaps(hw, hw2).with_streaming_vl()
    };
    assert_eq!(again.svl_bytes(), Some(prctl_vl));
    if sme2_qemu() {
        let want = qemu_start_svl_bytes();
        assert_eq!(cpu.svl_bytes(), Some(want), "QEMU_CPU={:?}", std::env::var("QEMU_CPU").ok());
    }
}

#[cfg(all(target_arch = "aarch64", target_os = "linux"))]
#[test]
fn streaming_vl_follows_pr_sme_set_vl() {
    if !CpuFeatures::detect().has(Feature::Sme) {
        println!("skipped: no SME");
        return;
    }
    // A thread of its own: the length is per thread, and this one holds no SME state.
    std::thread::spawn(|| {
        let start = sme_vl::get().expect("PR_SME_GET_VL");
        for bytes in [16, 32, 64, 128, 256, 16] {
            // SAFETY: this thread never enters streaming mode nor enables ZA, and the only
            // CpuFeatures it holds are detected after the change, to be compared.
            let got = unsafe { sme_vl::set(bytes) }.expect("PR_SME_SET_VL");
            let cpu = CpuFeatures::detect();
            println!("PR_SME_SET_VL({bytes}) -> {got}; detect(): {:?}", cpu.svl_bytes());
            assert!(got <= bytes && got.is_power_of_two(), "PR_SME_SET_VL({bytes}) gave {got}");
            assert_eq!(sme_vl::get(), Some(got));
            assert_eq!(cpu.svl_bytes(), Some(got), "RDSVL after PR_SME_SET_VL({bytes})");
            if sme2_qemu() {
                // QEMU's -cpu max implements every length from 128 to 2048 bits.
                assert_eq!(got, bytes, "QEMU -cpu max lacks a {bytes}-byte streaming vector");
            }
        }
        // SAFETY: as above.
        assert_eq!(unsafe { sme_vl::set(start) }, Some(start));
    })
    .join()
    .expect("the PR_SME_SET_VL thread panicked");
}

#[test]
fn without_removes_and_with_adds() {
    let all = Feature::ALL.iter().fold(CpuFeatures::NONE, |c, &f| {
        // SAFETY: this set is only inspected, never used to run a kernel.
        unsafe { c.with(f) }
    });
    assert!(Feature::ALL.iter().all(|&f| all.has(f)));
    let fewer = all.without(Feature::I8mm);
    assert!(!fewer.has(Feature::I8mm) && fewer.has(Feature::Dotprod));
    assert_eq!(format!("{}", CpuFeatures::NONE), "(none)");
    assert_eq!(
        format!("{}", fewer.without(Feature::Sve).without(Feature::Sme).without(Feature::Bf16).without(Feature::Fp16)),
        "neon,dotprod"
    );
}
