//! CPU feature detection: the std path, the ID-register path and the caller-given path agree
//! with each other and with the raw Linux HWCAP words, and `without` forces lower tiers.

use qgemm::{CpuFeatures, Feature};

#[test]
fn detection_reports_the_qemu_cpu_model() {
    let cpu = CpuFeatures::detect();
    println!("detected: {cpu} (QEMU_CPU={:?})", std::env::var("QEMU_CPU").ok());
    #[cfg(target_arch = "aarch64")]
    {
        assert!(cpu.has(Feature::Neon));
        // The CI runs this binary under each model; check the model's known features.
        match std::env::var("QEMU_CPU").as_deref() {
            Ok("max") => assert!(
                cpu.has(Feature::I8mm) && cpu.has(Feature::Dotprod) && cpu.has(Feature::Sve) && cpu.has(Feature::Sme)
            ),
            Ok("cortex-a76") => assert!(cpu.has(Feature::Dotprod) && !cpu.has(Feature::I8mm) && !cpu.has(Feature::Sme)),
            Ok("cortex-a53") => assert!(!cpu.has(Feature::Dotprod) && !cpu.has(Feature::I8mm)),
            _ => {}
        }
    }
    #[cfg(not(target_arch = "aarch64"))]
    assert_eq!(cpu, CpuFeatures::NONE);
}

/// The features the raw Linux auxiliary vector reports, decoded here independently of the
/// library (bit numbers from the kernel's `uapi/asm/hwcap.h`).
#[cfg(all(target_arch = "aarch64", target_os = "linux"))]
fn raw_hwcaps() -> Vec<(Feature, bool)> {
    unsafe extern "C" {
        fn getauxval(kind: std::ffi::c_ulong) -> std::ffi::c_ulong;
    }
    // SAFETY: reads the process's auxiliary vector; no precondition.
    let (hw, hw2) = unsafe { (getauxval(16), getauxval(26)) };
    let bit = |w: u64, b: u32| w & (1 << b) != 0;
    vec![
        (Feature::Neon, bit(hw, 1)),     // HWCAP_ASIMD
        (Feature::Fp16, bit(hw, 10)),    // HWCAP_ASIMDHP
        (Feature::Dotprod, bit(hw, 20)), // HWCAP_ASIMDDP
        (Feature::Sve, bit(hw, 22)),     // HWCAP_SVE
        (Feature::I8mm, bit(hw2, 13)),   // HWCAP2_I8MM
        (Feature::Bf16, bit(hw2, 14)),   // HWCAP2_BF16
        (Feature::Sme, bit(hw2, 23)),    // HWCAP2_SME
    ]
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
