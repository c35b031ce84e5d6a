//! Register preservation: every SIMD kernel (every kernel whose tier is not scalar, of every
//! family, that the CPU has) runs through `Kernel::run` from an assembly trampoline that loads
//! random patterns into the AAPCS64 callee-saved registers (x19-x28, x29, the low 64 bits of
//! v8-v15, i.e. d8-d15) and then compares them, and sp, after the call. An `asm!` block that
//! writes one of them without declaring it (so the compiler neither saves nor restores it) fails
//! the test; the outputs are compared with the scalar kernel too.
//!
//! NZCV is not callee-saved in AAPCS64, so a function call may change it and the trampoline
//! only records it. The one promise about flags the crate makes is `options(preserves_flags)`
//! on an `asm!` block, which lets the compiler keep a comparison's result in NZCV across the
//! block; a runtime check cannot isolate one block, so
//! [`callee_saved_preserves_flags_blocks_write_no_flags`] checks the text of every such block
//! in `src/` for flag-writing instructions instead.
//!
//! The trampoline is aarch64-only; elsewhere the register test prints why it is skipped.
#![deny(clippy::undocumented_unsafe_blocks)]

use std::path::Path;

/// Flag-writing mnemonics of A64 (integer, FP compares, flag manipulation, `msr nzcv`).
const FLAG_WRITERS: &[&str] = &[
    "adds", "adcs", "subs", "sbcs", "negs", "ngcs", "ands", "bics", "cmp", "cmn", "tst", "ccmp", "ccmn", "fcmp",
    "fcmpe", "fccmp", "fccmpe", "setf8", "setf16", "rmif", "cfinv", "axflag", "xaflag",
];

/// Whether one template line writes NZCV.
fn writes_flags(line: &str) -> bool {
    let mnemonic = line.split_whitespace().next().unwrap_or("");
    FLAG_WRITERS.contains(&mnemonic) || (mnemonic == "msr" && line.contains("nzcv"))
}

/// The `asm!` invocation around byte `at` of `src`: from the last `asm!(` before it to `at`.
fn enclosing_asm(src: &str, at: usize) -> &str {
    let start = src[..at].rfind("asm!(").expect("preserves_flags outside an asm! block");
    &src[start..at]
}

/// The string literals of a Rust fragment (the asm template pieces), concatenated.
fn string_literals(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(i) = rest.find('"') {
        let after = &rest[i + 1..];
        let j = after.find('"').unwrap_or(after.len());
        out.push_str(&after[..j]);
        out.push('\n');
        rest = after.get(j + 1..).unwrap_or("");
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every `asm!` block of the crate that claims `preserves_flags` contains no instruction that
/// writes NZCV (`msr nzcv` included). Checked as text, on every host.
#[test]
fn callee_saved_preserves_flags_blocks_write_no_flags() {
    let mut files = Vec::new();
    rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    let mut blocks = 0;
    for f in files {
        let src = std::fs::read_to_string(&f).unwrap();
        for (at, _) in src.match_indices("preserves_flags") {
            let text = string_literals(enclosing_asm(&src, at)).to_lowercase();
            blocks += 1;
            for line in text.lines() {
                assert!(
                    !writes_flags(line),
                    "{}: an asm! block claims preserves_flags but has `{}`",
                    f.display(),
                    line.trim()
                );
            }
        }
    }
    println!("{blocks} asm! block(s) claim preserves_flags; none writes NZCV");
}

#[test]
fn callee_saved_flag_scan_sees_flag_writers() {
    // The scanner itself: a block with `subs` is flagged, one with `mrs` is not.
    let bad = "asm!(\"subs {x}, {x}, #1\", x = inout(reg) x, options(preserves_flags))";
    let text = string_literals(enclosing_asm(bad, bad.find("preserves_flags").unwrap()));
    assert!(text.lines().any(writes_flags));
    assert!(writes_flags("msr NZCV, x0".to_lowercase().as_str()));
    let good = "asm!(\"mrs {r}, ID_AA64PFR0_EL1\", r = out(reg) r, options(nomem, preserves_flags))";
    let text = string_literals(enclosing_asm(good, good.find("preserves_flags").unwrap()));
    assert!(!text.lines().any(writes_flags));
}

#[cfg(not(target_arch = "aarch64"))]
#[test]
fn callee_saved_registers_skipped() {
    println!("callee_saved: skipped: the register trampoline is aarch64 assembly (run it under qemu-aarch64)");
}

#[cfg(target_arch = "aarch64")]
#[allow(unused_macros)] // family_suite!
mod common;

#[cfg(target_arch = "aarch64")]
#[path = "../examples/support/families.rs"]
#[allow(dead_code)]
mod families;

#[cfg(target_arch = "aarch64")]
mod aarch64 {
    use std::ffi::c_void;

    use crate::common::Rng;
    use crate::families::{
        Bf16Qsi4c32p, Bf16Qsi4cxp, F16Qai4c32p, F16Qsi4cxp, F16Qsi8cxp, Fam, Q40, Qai4c32p, Qsi4c32p, Qsi4cxp, Qsi8cxp,
        Qsu2cxp, ScaleStyle, WeightStyle, args_with_lut, cycle_lut, packings, to_src,
    };
    use qgemm::rhs::Layout;
    use qgemm::{Clamp, CpuFeatures, Element, Family, MatmulArgs, Tier};

    /// What the trampoline reads and writes (offsets are hard-coded in the assembly).
    #[repr(C)]
    #[derive(Default, Debug)]
    struct Frame {
        /// Patterns loaded before the call: x19-x28 (0..80), x29 (80), d8-d15 (88..152).
        expect: [u64; 19],
        /// The same registers after the call (152..304).
        got: [u64; 19],
        /// sp just before the call (304) and just after it (312).
        sp_before: u64,
        sp_after: u64,
        /// NZCV set before the call (320) and found after it (328): recorded, not checked.
        nzcv_before: u64,
        nzcv_after: u64,
    }

    const NAMES: [&str; 19] = [
        "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28", "x29", "d8", "d9", "d10", "d11", "d12",
        "d13", "d14", "d15",
    ];

    // The trampoline `qgemm_callee_saved_trampoline(shim, ctx, frame)`: saves its caller's
    // callee-saved registers, loads the patterns of `frame.expect`, sets NZCV to N|V, calls
    // `shim(ctx)`, stores the registers into `frame.got` (and sp, NZCV), restores its caller's
    // registers and returns. It follows AAPCS64 itself, so its Rust caller sees a normal call.
    //
    // `qgemm_callee_saved_bad_x19` and `qgemm_callee_saved_bad_d12` are shims that break the
    // convention on purpose (they write x19 / d12 and return): the controls showing the check
    // fails. Calling them through the trampoline is sound, because the trampoline restores its
    // own caller's registers.
    core::arch::global_asm!(
        ".text",
        ".p2align 2",
        ".global qgemm_callee_saved_trampoline",
        ".type qgemm_callee_saved_trampoline, %function",
        "qgemm_callee_saved_trampoline:",
        "stp x29, x30, [sp, #-176]!",
        "stp x19, x20, [sp, #16]",
        "stp x21, x22, [sp, #32]",
        "stp x23, x24, [sp, #48]",
        "stp x25, x26, [sp, #64]",
        "stp x27, x28, [sp, #80]",
        "stp d8, d9, [sp, #96]",
        "stp d10, d11, [sp, #112]",
        "stp d12, d13, [sp, #128]",
        "stp d14, d15, [sp, #144]",
        "str x2, [sp, #160]",
        "mov x9, sp",
        "str x9, [x2, #304]",
        "mov x16, x0",
        "mov x0, x1",
        "ldp x19, x20, [x2, #0]",
        "ldp x21, x22, [x2, #16]",
        "ldp x23, x24, [x2, #32]",
        "ldp x25, x26, [x2, #48]",
        "ldp x27, x28, [x2, #64]",
        "ldr x29, [x2, #80]",
        "ldp d8, d9, [x2, #88]",
        "ldp d10, d11, [x2, #104]",
        "ldp d12, d13, [x2, #120]",
        "ldp d14, d15, [x2, #136]",
        "movz x9, #0x9000, lsl #16",
        "msr nzcv, x9",
        "mrs x9, nzcv",
        "str x9, [x2, #320]",
        "blr x16",
        "mrs x9, nzcv",
        "mov x10, sp",
        "ldr x2, [sp, #160]",
        "str x9, [x2, #328]",
        "str x10, [x2, #312]",
        "stp x19, x20, [x2, #152]",
        "stp x21, x22, [x2, #168]",
        "stp x23, x24, [x2, #184]",
        "stp x25, x26, [x2, #200]",
        "stp x27, x28, [x2, #216]",
        "str x29, [x2, #232]",
        "stp d8, d9, [x2, #240]",
        "stp d10, d11, [x2, #256]",
        "stp d12, d13, [x2, #272]",
        "stp d14, d15, [x2, #288]",
        "ldp d8, d9, [sp, #96]",
        "ldp d10, d11, [sp, #112]",
        "ldp d12, d13, [sp, #128]",
        "ldp d14, d15, [sp, #144]",
        "ldp x19, x20, [sp, #16]",
        "ldp x21, x22, [sp, #32]",
        "ldp x23, x24, [sp, #48]",
        "ldp x25, x26, [sp, #64]",
        "ldp x27, x28, [sp, #80]",
        "ldp x29, x30, [sp], #176",
        "ret",
        ".size qgemm_callee_saved_trampoline, . - qgemm_callee_saved_trampoline",
        "",
        ".p2align 2",
        ".global qgemm_callee_saved_bad_x19",
        ".type qgemm_callee_saved_bad_x19, %function",
        "qgemm_callee_saved_bad_x19:",
        "mov x19, #1",
        "ret",
        ".size qgemm_callee_saved_bad_x19, . - qgemm_callee_saved_bad_x19",
        "",
        ".p2align 2",
        ".global qgemm_callee_saved_bad_d12",
        ".type qgemm_callee_saved_bad_d12, %function",
        "qgemm_callee_saved_bad_d12:",
        "fmov d12, xzr",
        "ret",
        ".size qgemm_callee_saved_bad_d12, . - qgemm_callee_saved_bad_d12",
    );

    unsafe extern "C" {
        fn qgemm_callee_saved_trampoline(shim: unsafe extern "C" fn(*mut c_void), ctx: *mut c_void, frame: *mut Frame);
        fn qgemm_callee_saved_bad_x19(ctx: *mut c_void);
        fn qgemm_callee_saved_bad_d12(ctx: *mut c_void);
    }

    /// Runs the `&mut dyn FnMut()` that `ctx` points to.
    unsafe extern "C" fn shim(ctx: *mut c_void) {
        // SAFETY: `call_through_trampoline` passes a pointer to a live `&mut dyn FnMut()` and
        // nothing else uses it during the call.
        let f = unsafe { &mut *ctx.cast::<&mut dyn FnMut()>() };
        f();
    }

    /// Calls `shim(&mut f)` from the trampoline with patterns drawn from `seed`; returns the
    /// frame (registers before and after).
    fn call_with(shim: unsafe extern "C" fn(*mut c_void), f: &mut dyn FnMut(), seed: u64) -> Frame {
        let mut rng = Rng(seed);
        let mut frame = Frame::default();
        for (i, e) in frame.expect.iter_mut().enumerate() {
            // Distinct, never 0, never a plausible pointer: the register number in the top byte.
            *e = (rng.next_u64() & 0x00ff_ffff_ffff_fff0) | ((0xa0 + i as u64) << 56) | 0x5;
        }
        let mut f = f;
        let ctx = (&mut f as *mut &mut dyn FnMut()).cast::<c_void>();
        // SAFETY: the trampoline follows AAPCS64 (it saves and restores every callee-saved
        // register it changes, keeps sp 16-byte aligned and returns normally), `frame` is a
        // valid `Frame` for its whole run, and `ctx` is what `shim` expects. The shims it calls
        // are AAPCS64 functions taking one pointer.
        unsafe { qgemm_callee_saved_trampoline(shim, ctx, &mut frame) };
        frame
    }

    /// The registers whose value changed, as `(name, expected, found)`.
    fn changed(frame: &Frame) -> Vec<(&'static str, u64, u64)> {
        let mut v: Vec<_> = (0..19)
            .filter(|&i| frame.expect[i] != frame.got[i])
            .map(|i| (NAMES[i], frame.expect[i], frame.got[i]))
            .collect();
        if frame.sp_before != frame.sp_after {
            v.push(("sp", frame.sp_before, frame.sp_after));
        }
        v
    }

    /// The check has teeth: shims that write x19 or d12 are caught, one that keeps the
    /// convention is not, and the patterns reach the callee.
    #[test]
    fn callee_saved_trampoline_catches_clobbers() {
        let mut nothing = || {};
        let ok = call_with(shim, &mut nothing, 1);
        assert!(changed(&ok).is_empty(), "{:?}", changed(&ok));
        assert_eq!(ok.nzcv_before, 0x9000_0000);
        let bad = call_with(qgemm_callee_saved_bad_x19, &mut nothing, 2);
        assert_eq!(changed(&bad).iter().map(|c| c.0).collect::<Vec<_>>(), ["x19"]);
        assert_eq!(bad.got[0], 1);
        let bad = call_with(qgemm_callee_saved_bad_d12, &mut nothing, 3);
        assert_eq!(changed(&bad).iter().map(|c| c.0).collect::<Vec<_>>(), ["d12"]);
        // A Rust closure that uses many registers itself still preserves them.
        let mut busy = || {
            let v: Vec<f64> = (0..64).map(|i| (i as f64).sqrt()).collect();
            std::hint::black_box(v.iter().sum::<f64>());
        };
        let ok = call_with(shim, &mut busy, 4);
        assert!(changed(&ok).is_empty(), "{:?}", changed(&ok));
    }

    /// Every SIMD kernel of family `X` the CPU has, through the trampoline, on shapes with
    /// tails, whole output and a sub-rectangle grid; returns the kernels run and the look-up
    /// tables the raw weights had.
    fn family<X: Fam>() -> (Vec<&'static str>, Vec<[i32; 4]>) {
        let cpu = CpuFeatures::detect();
        let mut rng = Rng(0xca11);
        let (mut ran, mut luts) = (Vec::new(), Vec::new());
        let shapes: &[(usize, usize, usize, usize)] = if <X::F as Family>::BLOCKED {
            &[(1, 5, 64, 32), (27, 21, 128, 64)]
        } else if <X::F as Family>::K_MULTIPLE > 1 {
            // The 2-bit family: k a multiple of 32, an odd number of 32-groups.
            &[(1, 5, 96, 0), (27, 21, 160, 0)]
        } else {
            &[(1, 5, 33, 0), (27, 21, 100, 0)]
        };
        let mut seed = 100;
        for p in packings::<X>() {
            let kernels: Vec<_> = <X::F as Family>::kernels()
                .iter()
                .filter(|kn| kn.packing_on(&CpuFeatures::NONE) == Some(p))
                .filter_map(|kn| kn.resolve(&cpu).ok())
                .collect();
            let Some(scalar) = kernels.iter().find(|kn| kn.tier() == Tier::Scalar) else {
                panic!("no scalar kernel for {p:?}");
            };
            for &(m, n, k, bl) in shapes {
                let x: Vec<X::Src> = to_src(&(0..m * k).map(|_| rng.f32(-2.0, 2.0)).collect::<Vec<_>>());
                let mut next = || rng.next_u64();
                let mut raw =
                    X::random_rhs(&mut next, n, k, bl, Layout::NxK, WeightStyle::Random, ScaleStyle::Normal, true);
                cycle_lut::<X>(&mut raw, luts.len());
                luts.push(raw.lut);
                let mut lhs = vec![0u8; X::lhs_packed_size(&p, m, k, bl).unwrap()];
                X::pack_lhs(&p, m, k, bl, 0, &x, k, &mut lhs).unwrap();
                let mut rhs = vec![0u8; X::rhs_packed_size(&p, n, k, bl).unwrap()];
                X::pack_rhs(&p, n, k, bl, &raw.view(), &mut rhs).unwrap();
                let clamp = Clamp::new(-3.0, 3.0).unwrap();
                // The kernels take the table the weights were packed with (2-bit family).
                let args =
                    args_with_lut::<X::F>(MatmulArgs::new(m, n, k).with_block_len(bl).with_clamp(clamp), raw.lut);
                let mut want = vec![<X::F as Family>::Dst::default(); m * n];
                scalar.run(&lhs, &rhs, &mut want, &args).unwrap();
                for kn in kernels.iter().filter(|kn| kn.tier() != Tier::Scalar) {
                    // Whole output, then the grid cut at the last tile.
                    let cut = |len: usize, step: usize| (len - 1) / step * step;
                    let (mc, nc) = (cut(m, kn.m_step()), cut(n, kn.n_step()));
                    let mut rects = vec![(0, 0, m, n)];
                    for (mi, mm) in [(0, mc), (mc, m - mc)] {
                        for (ni, nn) in [(0, nc), (nc, n - nc)] {
                            if mm > 0 && nn > 0 {
                                rects.push((mi, ni, mm, nn));
                            }
                        }
                    }
                    let nan = <X::F as Family>::Dst::from_f32(f32::NAN);
                    let mut got = vec![nan; m * n];
                    for (i, &(mi, ni, mm, nn)) in rects.iter().enumerate() {
                        let a = args.with_rect(mi, ni, mm, nn);
                        let off = kn.dst_offset(mi, ni, n).unwrap();
                        let mut result = Ok(());
                        let mut call = || result = kn.run(&lhs, &rhs, &mut got[off..], &a);
                        seed += 1;
                        let frame = call_with(shim, &mut call, seed);
                        result.unwrap_or_else(|e| panic!("{}: {e}", kn.name()));
                        let bad = changed(&frame);
                        assert!(
                            bad.is_empty(),
                            "{} m={m} n={n} k={k} bl={bl} rectangle {:?}: callee-saved registers changed \
                             (name, before, after): {bad:x?}",
                            kn.name(),
                            (mi, ni, mm, nn)
                        );
                        if i == 0 {
                            assert!(
                                got.iter().zip(&want).all(|(g, w)| g.to_bits32() == w.to_bits32()),
                                "{}: differs from {}",
                                kn.name(),
                                scalar.name()
                            );
                            got.fill(nan);
                        }
                    }
                    assert!(got.iter().zip(&want).all(|(g, w)| g.to_bits32() == w.to_bits32()), "{} grid", kn.name());
                    if !ran.contains(&kn.name()) {
                        ran.push(kn.name());
                    }
                }
            }
        }
        (ran, luts)
    }

    fn report<X: Fam>() {
        let cpu = CpuFeatures::detect();
        let (ran, luts) = family::<X>();
        let simd: Vec<_> = <X::F as Family>::kernels().iter().filter(|kn| kn.tier() != Tier::Scalar).collect();
        println!("{}: {} of {} SIMD kernels checked (cpu {cpu})", X::F::NAME, ran.len(), simd.len());
        for kn in simd.iter().filter(|kn| !ran.contains(&kn.name())) {
            let lacks = kn.missing_feature(&cpu).map_or("?", |f| f.name());
            println!("  not run (cpu lacks {lacks}): {}", kn.name());
        }
        assert_eq!(ran.len(), simd.iter().filter(|kn| kn.is_available(&cpu)).count());
        // A family with a look-up table ran with the default one and with others.
        let takes_lut = args_with_lut::<X::F>(MatmulArgs::new(1, 1, 32), [-3, -1, 1, 3]) != MatmulArgs::new(1, 1, 32);
        if takes_lut {
            println!("  look-up tables: {luts:?}");
            let default = qgemm::rhs::qsu2cxp::DEFAULT_LUT;
            assert!(luts.contains(&default) && luts.iter().any(|l| *l != default), "{luts:?}");
        }
    }

    // The float families.
    use qgemm::half::f16;
    use qgemm::lhs::bf16p;
    use qgemm::rhs::{FloatSource, bf16p12, f16p, f32p};

    /// The operand layouts a float catalogue entry reads (fixed shapes).
    fn float_formats_of<F: Family>(d: &qgemm::Descriptor<F>) -> (qgemm::LhsPacking, qgemm::RhsPacking) {
        let p = d.packing_on(&CpuFeatures::NONE).unwrap_or_else(|| panic!("{}: not a fixed shape", d.name()));
        (p.lhs(d.shape().lhs), p.rhs(d.shape().rhs))
    }

    /// Every SIMD kernel of float family `F` among `ks` the CPU has, through the trampoline on
    /// the whole output and a grid cut at the last tile; compared with `scalar`. Returns the
    /// kernels run.
    fn float_family<F: Family>(
        (m, n, k): (usize, usize, usize),
        lhs: &[F::Lhs],
        rhs: &[u8],
        scalar: &'static qgemm::Descriptor<F>,
        ks: &[&'static qgemm::Descriptor<F>],
        seed: &mut u64,
    ) -> Vec<&'static str> {
        let cpu = CpuFeatures::detect();
        let args = MatmulArgs::new(m, n, k).with_clamp(Clamp::new(-3.0, 3.0).unwrap());
        let mut want = vec![F::Dst::default(); m * n];
        scalar.resolve(&cpu).unwrap().run(lhs, rhs, &mut want, &args).unwrap();
        let mut ran = Vec::new();
        let simd = ks.iter().filter(|d| d.tier() != Tier::Scalar);
        for kn in simd.filter_map(|d| d.resolve(&cpu).ok()) {
            let cut = |len: usize, step: usize| (len - 1) / step * step;
            let (mc, nc) = (cut(m, kn.m_step()), cut(n, kn.n_step()));
            let mut rects = vec![(0, 0, m, n)];
            for (mi, mm) in [(0, mc), (mc, m - mc)] {
                for (ni, nn) in [(0, nc), (nc, n - nc)] {
                    if mm > 0 && nn > 0 {
                        rects.push((mi, ni, mm, nn));
                    }
                }
            }
            let nan = F::Dst::from_f32(f32::NAN);
            for (i, &(mi, ni, mm, nn)) in rects.iter().enumerate() {
                let mut got = if i == 0 { vec![nan; m * n] } else { want.clone() };
                let a = args.with_rect(mi, ni, mm, nn);
                let off = kn.dst_offset(mi, ni, n).unwrap();
                let mut result = Ok(());
                let mut call = || result = kn.run(lhs, rhs, &mut got[off..], &a);
                *seed += 1;
                let frame = call_with(shim, &mut call, *seed);
                result.unwrap_or_else(|e| panic!("{}: {e}", kn.name()));
                let bad = changed(&frame);
                assert!(
                    bad.is_empty(),
                    "{} {:?}: callee-saved registers changed: {bad:x?}",
                    kn.name(),
                    (mi, ni, mm, nn)
                );
                assert!(got.iter().zip(&want).all(|(g, w)| g.to_bits32() == w.to_bits32()), "{}", kn.name());
            }
            ran.push(kn.name());
        }
        ran
    }

    fn vals<T: Element>(rng: &mut Rng, len: usize) -> Vec<T> {
        (0..len).map(|_| T::from_f32(rng.f32(-2.0, 2.0))).collect()
    }

    #[test]
    fn callee_saved_float_families() {
        use qgemm::{f16_bf16p_bf16p as h16, f16_f16_f16p as h, f32_bf16p_bf16p as b16, f32_f32_f32p as f};
        let cpu = CpuFeatures::detect();
        let mut rng = Rng(0xf1ca);
        let mut seed = 500;
        let mut ran = Vec::new();
        for (m, n, k) in [(1, 5, 33), (27, 37, 100)] {
            let x: Vec<f32> = vals(&mut rng, m * k);
            let w: Vec<f32> = vals(&mut rng, n * k);
            for fmt in [f32p::F32P16, f32p::F32P8] {
                let mut rhs = vec![0u8; fmt.packed_size(n, k, 0).unwrap()];
                f32p::pack(&fmt, n, k, &FloatSource::nxk(&w, k), None, &mut rhs).unwrap();
                let ks: Vec<_> = f::KERNELS.iter().copied().filter(|kn| float_formats_of(kn).1 == fmt).collect();
                let scalar = *ks.iter().find(|kn| kn.tier() == Tier::Scalar).unwrap();
                ran.extend(float_family((m, n, k), &x, &rhs, scalar, &ks, &mut seed));
            }
            let x16: Vec<f16> = vals(&mut rng, m * k);
            let w16: Vec<f16> = vals(&mut rng, n * k);
            for fmt in [f16p::F16P32, f16p::F16P16] {
                let mut rhs = vec![0u8; fmt.packed_size(n, k, 0).unwrap()];
                f16p::pack(&fmt, n, k, &FloatSource::nxk(&w16, k), None, &mut rhs).unwrap();
                let ks: Vec<_> = h::KERNELS.iter().copied().filter(|kn| float_formats_of(kn).1 == fmt).collect();
                let scalar = *ks.iter().find(|kn| kn.tier() == Tier::Scalar).unwrap();
                ran.extend(float_family((m, n, k), &x16, &rhs, scalar, &ks, &mut seed));
            }
            let mut rhs = vec![0u8; bf16p12::BF16P12_B32.packed_size(n, k, 0).unwrap()];
            bf16p12::pack_b32(n, k, &FloatSource::nxk(&w, k), None, &mut rhs).unwrap();
            for lf in [bf16p::BF16P8X4, bf16p::BF16P1X4] {
                let mut lhs = vec![0u8; lf.packed_size(m, k, 0).unwrap()];
                bf16p::pack(&lf, m, k, &x, k, &mut lhs).unwrap();
                let ks: Vec<_> = b16::KERNELS.iter().copied().filter(|kn| float_formats_of(kn).0 == lf).collect();
                let scalar = *ks.iter().find(|kn| kn.tier() == Tier::Scalar).unwrap();
                ran.extend(float_family((m, n, k), &lhs, &rhs, scalar, &ks, &mut seed));
            }
            let mut rhs = vec![0u8; bf16p12::BF16P12_B16.packed_size(n, k, 0).unwrap()];
            bf16p12::pack_b16(n, k, &FloatSource::nxk(&w16, k), None, &mut rhs).unwrap();
            let mut lhs = vec![0u8; bf16p::BF16P8X4.packed_size(m, k, 0).unwrap()];
            bf16p::pack(&bf16p::BF16P8X4, m, k, &x16, k, &mut lhs).unwrap();
            let ks: Vec<_> = h16::KERNELS.to_vec();
            let scalar = *ks.iter().find(|kn| kn.tier() == Tier::Scalar).unwrap();
            ran.extend(float_family((m, n, k), &lhs, &rhs, scalar, &ks, &mut seed));
        }
        ran.sort_unstable();
        ran.dedup();
        let simd: Vec<(&str, bool)> = [
            f::KERNELS.iter().map(|k| (k.name(), k.tier() != Tier::Scalar && k.is_available(&cpu))).collect::<Vec<_>>(),
            h::KERNELS.iter().map(|k| (k.name(), k.tier() != Tier::Scalar && k.is_available(&cpu))).collect(),
            b16::KERNELS.iter().map(|k| (k.name(), k.tier() != Tier::Scalar && k.is_available(&cpu))).collect(),
            h16::KERNELS.iter().map(|k| (k.name(), k.tier() != Tier::Scalar && k.is_available(&cpu))).collect(),
        ]
        .concat();
        println!("float families: {} SIMD kernels checked (cpu {cpu}): {ran:?}", ran.len());
        assert_eq!(ran.len(), simd.iter().filter(|(_, avail)| *avail).count());
    }

    #[test]
    fn callee_saved_qai8dxp_qsi4cxp() {
        report::<Qsi4cxp>();
    }

    #[test]
    fn callee_saved_qai8dxp_qsi4c32p() {
        report::<Qsi4c32p>();
    }

    #[test]
    fn callee_saved_qsi8d32p_qsi4c32p() {
        report::<Q40>();
    }

    #[test]
    fn callee_saved_qai8dxp_qsi8cxp() {
        report::<Qsi8cxp>();
    }

    #[test]
    fn callee_saved_f16_qai8dxp_qsi4cxp() {
        report::<F16Qsi4cxp>();
    }

    #[test]
    fn callee_saved_f16_qai8dxp_qsi8cxp() {
        report::<F16Qsi8cxp>();
    }

    #[test]
    fn callee_saved_bf16_qai8dxp_qsi4cxp() {
        report::<Bf16Qsi4cxp>();
    }

    #[test]
    fn callee_saved_bf16_qai8dxp_qsi4c32p() {
        report::<Bf16Qsi4c32p>();
    }

    #[test]
    fn callee_saved_qsi8d32p_qai4c32p() {
        report::<Qai4c32p>();
    }

    #[test]
    fn callee_saved_f16_qsi8d32p_qai4c32p() {
        report::<F16Qai4c32p>();
    }

    #[test]
    fn callee_saved_qai8dxp_qsu2cxp() {
        report::<Qsu2cxp>();
    }
}
