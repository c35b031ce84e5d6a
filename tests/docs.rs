//! Keeps `docs/kernels.md` true: its catalogue tables are generated from the kernel catalogues
//! and compared here. After changing a catalogue, regenerate them with
//! `QGEMM_BLESS=1 cargo test --features std --target aarch64-unknown-linux-gnu --test docs`
//! (the aarch64 catalogue holds every tier; on other targets only the scalar tier exists, so
//! the comparison runs on aarch64).

use std::fmt::Write as _;

use qgemm::float::{FloatFamily, FloatKernel};
use qgemm::{CpuFeatures, Family, Feature, Kernel, Tier};

/// The CPU classes the dispatch table describes.
fn cpu_classes() -> Vec<(&'static str, CpuFeatures)> {
    // SAFETY: these sets are only passed to `select`, never used to run a kernel.
    let (neon, dot, mm, mm_bf16) = unsafe {
        let neon = CpuFeatures::NONE.with(Feature::Neon);
        let dot = neon.with(Feature::Dotprod).with(Feature::Fp16);
        let mm = dot.with(Feature::I8mm);
        (neon, dot, mm, mm.with(Feature::Bf16))
    };
    vec![
        ("no SIMD (x86 host)", CpuFeatures::NONE),
        ("NEON only (Cortex-A53/A72)", neon),
        ("+dotprod +fp16 (Cortex-A76, N1)", dot),
        ("+i8mm, no BF16", mm),
        ("+i8mm +bf16 (Neoverse V1/N2/V2)", mm_bf16),
    ]
}

fn family_tables<F: Family>(out: &mut String, select: fn(&CpuFeatures, usize) -> &'static Kernel<F>) {
    writeln!(out, "### `{}`\n", F::NAME).unwrap();
    writeln!(out, "| kernel | tier | m_step x n_step | mr | nr | kr | sr | use |").unwrap();
    writeln!(out, "|---|---|--:|--:|--:|--:|--:|---|").unwrap();
    let tier_text = |k: &Kernel<F>| match k.extra_feature() {
        Some(f) => format!("{} + {}", k.tier(), f.name()),
        None => k.tier().to_string(),
    };
    for k in F::kernels() {
        let p = k.packing();
        let usage = if p.mr == 1 {
            "decode (GEMV)"
        } else if k.tier() == Tier::Scalar {
            "reference, any m"
        } else {
            "prefill (GEMM)"
        };
        writeln!(
            out,
            "| `{}` | {} | {}x{} | {} | {} | {} | {} | {} |",
            k.name(),
            tier_text(k),
            k.m_step(),
            k.n_step(),
            p.mr,
            p.nr,
            p.kr,
            p.sr,
            usage
        )
        .unwrap();
    }
    writeln!(out, "\nWhat `{}::select` picks (preferred RHS packing):\n", F::NAME).unwrap();
    writeln!(out, "| CPU | m = 1 | m >= 2 |").unwrap();
    writeln!(out, "|---|---|---|").unwrap();
    for (class, cpu) in cpu_classes() {
        writeln!(out, "| {class} | `{}` | `{}` |", select(&cpu, 1).name(), select(&cpu, 16).name()).unwrap();
    }
    writeln!(out).unwrap();
}

fn float_tables<F: FloatFamily>(out: &mut String, select: fn(&CpuFeatures) -> &'static FloatKernel<F>) {
    writeln!(out, "### `{}`\n", F::NAME).unwrap();
    writeln!(out, "| kernel | tier | m_step x n_step | LHS | RHS | use |").unwrap();
    writeln!(out, "|---|---|--:|---|---|---|").unwrap();
    for k in F::kernels() {
        let lhs = k.lhs_format().map_or("unpacked rows", |f| f.name);
        let usage = match (k.tier(), k.m_step()) {
            (_, 1) => "one row per step, any m (BFDOT)",
            (Tier::Scalar, _) => "reference, any m",
            _ => "any m",
        };
        let (ms, ns) = (k.m_step(), k.n_step());
        writeln!(out, "| `{}` | {} | {ms}x{ns} | `{lhs}` | `{}` | {usage} |", k.name(), k.tier(), k.rhs_format().name)
            .unwrap();
    }
    writeln!(out, "\nWhat `{}::select` picks (for every m):\n", F::NAME).unwrap();
    writeln!(out, "| CPU | kernel |").unwrap();
    writeln!(out, "|---|---|").unwrap();
    for (class, cpu) in cpu_classes() {
        writeln!(out, "| {class} | `{}` |", select(&cpu).name()).unwrap();
    }
    writeln!(out).unwrap();
}

fn generated() -> String {
    let mut s = String::new();
    family_tables::<qgemm::qai8dxp_qsi4cxp::Qai8dxpQsi4cxp>(&mut s, qgemm::qai8dxp_qsi4cxp::select);
    family_tables::<qgemm::qai8dxp_qsi4c32p::Qai8dxpQsi4c32p>(&mut s, qgemm::qai8dxp_qsi4c32p::select);
    family_tables::<qgemm::qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p>(&mut s, qgemm::qsi8d32p_qsi4c32p::select);
    family_tables::<qgemm::qai8dxp_qsi8cxp::Qai8dxpQsi8cxp>(&mut s, qgemm::qai8dxp_qsi8cxp::select);
    family_tables::<qgemm::f16_qai8dxp_qsi4cxp::F16Qai8dxpQsi4cxp>(&mut s, qgemm::f16_qai8dxp_qsi4cxp::select);
    family_tables::<qgemm::f16_qai8dxp_qsi8cxp::F16Qai8dxpQsi8cxp>(&mut s, qgemm::f16_qai8dxp_qsi8cxp::select);
    family_tables::<qgemm::bf16_qai8dxp_qsi4cxp::Bf16Qai8dxpQsi4cxp>(&mut s, qgemm::bf16_qai8dxp_qsi4cxp::select);
    family_tables::<qgemm::bf16_qai8dxp_qsi4c32p::Bf16Qai8dxpQsi4c32p>(&mut s, qgemm::bf16_qai8dxp_qsi4c32p::select);
    family_tables::<qgemm::qsi8d32p_qai4c32p::Qsi8d32pQai4c32p>(&mut s, qgemm::qsi8d32p_qai4c32p::select);
    family_tables::<qgemm::f16_qsi8d32p_qai4c32p::F16Qsi8d32pQai4c32p>(&mut s, qgemm::f16_qsi8d32p_qai4c32p::select);
    family_tables::<qgemm::qai8dxp_qsu2cxp::Qai8dxpQsu2cxp>(&mut s, qgemm::qai8dxp_qsu2cxp::select);
    float_tables::<qgemm::f32_f32_f32p::F32F32F32p>(&mut s, qgemm::f32_f32_f32p::select);
    float_tables::<qgemm::f16_f16_f16p::F16F16F16p>(&mut s, qgemm::f16_f16_f16p::select);
    float_tables::<qgemm::f32_bf16p_bf16p::F32Bf16pBf16p>(&mut s, qgemm::f32_bf16p_bf16p::select);
    float_tables::<qgemm::f16_bf16p_bf16p::F16Bf16pBf16p>(&mut s, qgemm::f16_bf16p_bf16p::select);
    s
}

const BEGIN: &str = "<!-- BEGIN GENERATED CATALOGUE (tests/docs.rs) -->\n";
const END: &str = "<!-- END GENERATED CATALOGUE -->\n";

#[test]
fn kernels_md_lists_the_current_catalogue() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs").join("kernels.md");
    let doc = std::fs::read_to_string(&path).expect("docs/kernels.md");
    let (Some(b), Some(e)) = (doc.find(BEGIN), doc.find(END)) else {
        panic!("docs/kernels.md lacks the generated-catalogue markers")
    };
    let want = generated();
    if !cfg!(target_arch = "aarch64") {
        // The host catalogue has the scalar tier only: check that each of its kernels is listed.
        for line in want.lines().filter(|l| l.starts_with("| `")) {
            let name = line.split('`').nth(1).unwrap();
            assert!(doc.contains(name), "docs/kernels.md does not list {name}");
        }
        return;
    }
    let have = &doc[b + BEGIN.len()..e];
    if have != want {
        if std::env::var_os("QGEMM_BLESS").is_some() {
            let new = format!("{}{BEGIN}{want}{}", &doc[..b], &doc[e..]);
            std::fs::write(&path, new).unwrap();
            return;
        }
        panic!("docs/kernels.md is out of date; regenerate with QGEMM_BLESS=1 (see tests/docs.rs). Expected:\n{want}");
    }
}
