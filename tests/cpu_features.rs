//! CPU feature detection: the std path, the ID-register path and the caller-given path agree,
//! and `without` forces lower tiers.

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
            Ok("max") => assert!(cpu.has(Feature::I8mm) && cpu.has(Feature::Dotprod) && cpu.has(Feature::Sve)),
            Ok("cortex-a76") => assert!(cpu.has(Feature::Dotprod) && !cpu.has(Feature::I8mm)),
            Ok("cortex-a53") => assert!(!cpu.has(Feature::Dotprod) && !cpu.has(Feature::I8mm)),
            _ => {}
        }
    }
    #[cfg(not(target_arch = "aarch64"))]
    assert_eq!(cpu, CpuFeatures::NONE);
}

#[cfg(target_arch = "aarch64")]
#[test]
fn id_registers_agree_with_hwcaps() {
    // SAFETY: Linux (and qemu-aarch64) emulate EL0 reads of the ID registers.
    let regs = unsafe { CpuFeatures::from_id_registers() };
    let hw = CpuFeatures::detect();
    println!("ID registers: {regs}; HWCAP: {hw}");
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

#[test]
fn from_target_is_a_subset_of_detection() {
    let t = CpuFeatures::from_target();
    let d = CpuFeatures::detect();
    assert!(t.iter().all(|f| d.has(f)), "compiled-for {t} but detected {d}");
}
