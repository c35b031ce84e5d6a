//! Keeps `docs/kernels.md` true: its catalogue tables are generated from the kernel catalogues
//! and compared here. After changing a catalogue, regenerate them with
//! `QGEMM_BLESS=1 cargo test --features std --target aarch64-unknown-linux-gnu --test docs`
//! (the aarch64 catalogue holds every tier; on other targets only the scalar tier exists, so
//! the comparison runs on aarch64).

use std::fmt::Write as _;

use qgemm::{CpuFeatures, Descriptor, Extent, Family, Feature, Kernel, Packing, RhsFormat, RhsPacking, Tier};

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

/// A fixed extent of a catalogue entry's shape (every kernel the tables list has one).
fn fixed<F: Family>(d: &Descriptor<F>, e: Extent) -> usize {
    match e {
        Extent::Fixed(v) => v,
        Extent::Vl { .. } => panic!("{}: a shape scaled by the vector length", d.name()),
    }
}

/// `(m_step, n_step)` and the packing of a catalogue entry.
fn steps_and_packing<F: Family>(d: &Descriptor<F>) -> (usize, usize, Packing) {
    let s = d.shape();
    let p = d.packing_on(&CpuFeatures::NONE).unwrap_or_else(|| panic!("{}: not a fixed shape", d.name()));
    (fixed(d, s.m_step), fixed(d, s.n_step), p)
}

/// The features a kernel needs beyond its tier's (FEAT_BF16 for the i8mm kernels of the
/// `bf16_` families).
fn extra_features<F: Family>(d: &Descriptor<F>) -> Vec<Feature> {
    let tier = d.tier().features();
    d.requires().iter().filter(|&f| !tier.has(f)).collect()
}

fn family_tables<F: Family>(out: &mut String, select: fn(&CpuFeatures, usize) -> Kernel<F>) {
    writeln!(out, "### `{}`\n", F::NAME).unwrap();
    writeln!(out, "| kernel | tier | m_step x n_step | mr | nr | kr | sr | use |").unwrap();
    writeln!(out, "|---|---|--:|--:|--:|--:|--:|---|").unwrap();
    let tier_text = |k: &Descriptor<F>| {
        let mut text = k.tier().to_string();
        for f in extra_features(k) {
            write!(text, " + {}", f.name()).unwrap();
        }
        text
    };
    for k in F::kernels() {
        let (ms, ns, p) = steps_and_packing(k);
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
            ms,
            ns,
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

/// The float RHS formats under their spec names (`f32p16`, `bf16p12_b32`): the format's
/// name with the tile width (`nr`) inserted before the bias suffix.
fn float_rhs_name(p: &RhsPacking) -> String {
    match p.format {
        RhsFormat::F32p => format!("f32p{}", p.nr),
        RhsFormat::F16p => format!("f16p{}", p.nr),
        RhsFormat::Bf16pB32 => format!("bf16p{}_b32", p.nr),
        RhsFormat::Bf16pB16 => format!("bf16p{}_b16", p.nr),
        other => panic!("{other:?}: not a float RHS format"),
    }
}

fn float_tables<F: Family>(out: &mut String, select: fn(&CpuFeatures, usize) -> Kernel<F>) {
    writeln!(out, "### `{}`\n", F::NAME).unwrap();
    writeln!(out, "| kernel | tier | m_step x n_step | LHS | RHS | use |").unwrap();
    writeln!(out, "|---|---|--:|---|---|---|").unwrap();
    for k in F::kernels() {
        let (ms, ns, p) = steps_and_packing(k);
        let shape = k.shape();
        // Rows read in place (formerly no LHS format) keep their old wording.
        let lhs = if shape.lhs.is_packed() { p.lhs(shape.lhs).to_string() } else { "unpacked rows".to_string() };
        let rhs = float_rhs_name(&p.rhs(shape.rhs));
        let usage = match (k.tier(), ms) {
            (_, 1) => "one row per step, any m (BFDOT)",
            (Tier::Scalar, _) => "reference, any m",
            _ => "any m",
        };
        writeln!(out, "| `{}` | {} | {ms}x{ns} | `{lhs}` | `{rhs}` | {usage} |", k.name(), k.tier()).unwrap();
    }
    writeln!(out, "\nWhat `{}::select` picks (for every m):\n", F::NAME).unwrap();
    writeln!(out, "| CPU | kernel |").unwrap();
    writeln!(out, "|---|---|").unwrap();
    for (class, cpu) in cpu_classes() {
        // The table's claim: one kernel for every m.
        let one = select(&cpu, 1);
        for m in [0, 2, 7, 8, 16, 100] {
            assert_eq!(select(&cpu, m), one, "{}: select for m = {m} on {class}", F::NAME);
        }
        writeln!(out, "| {class} | `{}` |", one.name()).unwrap();
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
