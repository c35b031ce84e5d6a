//! The float families (f32_f32_f32p, f16_f16_f16p, f32_bf16p_bf16p, f16_bf16p_bf16p) against
//! KleidiAI's golden vectors and against their scalar tier: packed bytes (minus the bytes the
//! spec leaves unspecified), interface numbers and output bits of every kernel available on the
//! CPU under test, with each of the three recorded clamps.

#[allow(unused_macros)] // family_suite!
mod common;

use common::{Case, Rng, cases, cpu, golden_available, required_tiers};
use qgemm::float::{FloatFamily, FloatKernel, LhsFormat, RhsFormat};
use qgemm::half::f16;
use qgemm::lhs::bf16p::{self, BF16P1X4, BF16P8X4};
use qgemm::rhs::f16p::{self, F16P16, F16P32};
use qgemm::rhs::f32p::{self, F32P8, F32P16};
use qgemm::rhs::{FloatSource, Layout, bf16p12};
use qgemm::{Clamp, Element, Error, MatmulArgs, Tier};
use qgemm::{f16_bf16p_bf16p, f16_f16_f16p, f32_bf16p_bf16p, f32_f32_f32p};

const FAMILIES: [&str; 4] = ["f32_f32_f32p", "f16_f16_f16p", "f32_bf16p_bf16p", "f16_bf16p_bf16p"];

/// Tiers run and skipped over a test, checked against `QGEMM_REQUIRE_TIERS`.
#[derive(Default)]
struct Report {
    ran: Vec<(&'static str, Tier)>,
    skipped: Vec<(&'static str, Tier)>,
}

impl Report {
    fn finish(&self, what: &str) {
        let required = required_tiers();
        println!("{what}: {} kernel runs", self.ran.len());
        let missed: Vec<_> = self.skipped.iter().filter(|(_, t)| required.contains(t)).collect();
        assert!(missed.is_empty(), "{what}: QGEMM_REQUIRE_TIERS names tiers whose kernels were skipped: {missed:?}");
        for t in &required {
            let has_kernels = self.ran.iter().chain(&self.skipped).any(|(_, kt)| kt == t);
            let ran = self.ran.iter().any(|(_, kt)| kt == t);
            assert!(!has_kernels || ran, "{what}: no {t} kernel ran");
        }
    }
}

/// The raw RHS of a case as a source of `T` (row stride from the manifest).
fn rhs_values<T: Element>(case: &Case) -> (Vec<T>, Layout, usize) {
    let rhs = &case.json["inputs"]["rhs"];
    let stride = rhs["row_stride_bytes"].as_u64().unwrap() as usize / T::SIZE;
    (case.values(&rhs["file"]), case.rhs_layout(), stride)
}

fn bias_values<T: Element>(case: &Case) -> Option<Vec<T>> {
    let b = &case.json["inputs"]["bias"];
    (!b.is_null()).then(|| case.values(&b["file"]))
}

fn bias_dtype(case: &Case) -> &str {
    case.json["inputs"]["bias"]["dtype"].as_str().unwrap_or("none")
}

/// Packs the case's RHS with our packer for KleidiAI packer `name`.
fn pack_rhs(case: &Case, name: &str) -> (RhsFormat, Vec<u8>) {
    let (n, k) = (case.n(), case.k());
    let fmt = match name {
        "rhs_pack_kxn_x32p16x1b_x32_x32_neon" | "rhs_pack_nxk_x32p16x1bx32_x32_x32_neon" => F32P16,
        "rhs_pack_kxn_f32p8x1biasf32_f32_f32_neon" => F32P8,
        "rhs_pack_kxn_x16p32x1b_x16_x16_neon" | "rhs_pack_nxk_x16p32x1bx16_x16_x16_neon" => F16P32,
        "rhs_pack_kxn_f16p16x1biasf16_f16_f16_neon" => F16P16,
        "rhs_quant_pack_kxn_bf16p12x4biasf32_f32_neon" | "rhs_pack_kxn_bf16p12x4biasf32_f16_neon" => {
            bf16p12::BF16P12_B32
        }
        "rhs_pack_kxn_bf16p12x4biasf16_f16_neon" => bf16p12::BF16P12_B16,
        other => panic!("{}: unknown RHS packer {other}", case.id),
    };
    let mut out = vec![0xA5u8; fmt.packed_size(n, k).unwrap()];
    let dtype = case.json["inputs"]["rhs"]["dtype"].as_str().unwrap();
    match (fmt.name, dtype) {
        ("f32p16" | "f32p8", _) => {
            let (v, layout, stride) = rhs_values::<f32>(case);
            let src = FloatSource { data: &v, layout, stride };
            f32p::pack(&fmt, n, k, &src, bias_values::<f32>(case).as_deref(), &mut out).unwrap();
        }
        ("f16p32" | "f16p16", _) => {
            let (v, layout, stride) = rhs_values::<f16>(case);
            let src = FloatSource { data: &v, layout, stride };
            f16p::pack(&fmt, n, k, &src, bias_values::<f16>(case).as_deref(), &mut out).unwrap();
        }
        ("bf16p12_b32", "f32") => {
            let (v, layout, stride) = rhs_values::<f32>(case);
            let src = FloatSource { data: &v, layout, stride };
            bf16p12::pack_b32(n, k, &src, bias_values::<f32>(case).as_deref(), &mut out).unwrap();
        }
        ("bf16p12_b32", _) => {
            assert!(bias_dtype(case) != "f16", "{}", case.id);
            let (v, layout, stride) = rhs_values::<f16>(case);
            let src = FloatSource { data: &v, layout, stride };
            bf16p12::pack_b32(n, k, &src, bias_values::<f32>(case).as_deref(), &mut out).unwrap();
        }
        _ => {
            let (v, layout, stride) = rhs_values::<f16>(case);
            let src = FloatSource { data: &v, layout, stride };
            bf16p12::pack_b16(n, k, &src, bias_values::<f16>(case).as_deref(), &mut out).unwrap();
        }
    }
    (fmt, out)
}

/// Packs the case's LHS with our packer for KleidiAI packer `name`.
fn pack_lhs(case: &Case, name: &str) -> (LhsFormat, Vec<u8>) {
    let (m, k) = (case.m(), case.k());
    let lhs = &case.json["inputs"]["lhs"];
    let fmt = if name.contains("bf16p1x4") { BF16P1X4 } else { BF16P8X4 };
    let mut out = vec![0xA5u8; fmt.packed_size(m, k).unwrap()];
    let stride_bytes = lhs["row_stride_bytes"].as_u64().unwrap() as usize;
    if lhs["dtype"] == "f16" {
        let x: Vec<f16> = case.values(&lhs["file"]);
        bf16p::pack(&fmt, m, k, &x, stride_bytes / 2, &mut out).unwrap();
    } else {
        let x: Vec<f32> = case.values(&lhs["file"]);
        bf16p::pack(&fmt, m, k, &x, stride_bytes / 4, &mut out).unwrap();
    }
    (fmt, out)
}

/// The byte ranges of a packed RHS the spec leaves unspecified (float.md §3.2): the ranges the
/// manifest lists as not written, and the padding-column values of the last tile of the f16
/// NxK packer.
fn unspecified(case: &Case, pj: &serde_json::Value, fmt: &RhsFormat) -> Vec<(usize, usize)> {
    let rp = &pj["rhs_packed"];
    let mut out: Vec<(usize, usize)> = rp["bytes_not_written"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r[0].as_u64().unwrap() as usize, r[1].as_u64().unwrap() as usize))
        .collect();
    let (n, k) = (case.n(), case.k());
    if pj["rhs_packer"]["name"] == "rhs_pack_nxk_x16p32x1bx16_x16_x16_neon" && !n.is_multiple_of(fmt.nr) {
        let ts = fmt.tile_stride(k).unwrap();
        let tile = (n / fmt.nr) * ts;
        for j in 0..k {
            let row = tile + fmt.nr * 2 + j * fmt.nr * 2;
            out.push((row + (n % fmt.nr) * 2, row + fmt.nr * 2));
        }
    }
    out
}

fn masked_eq(case: &Case, what: &str, ours: &[u8], golden: &[u8], skip: &[(usize, usize)]) {
    assert_eq!(ours.len(), golden.len(), "{}: {what} size", case.id);
    let free = |i: usize| skip.iter().any(|&(a, b)| a <= i && i < b);
    let bad: Vec<usize> = (0..ours.len()).filter(|&i| ours[i] != golden[i] && !free(i)).collect();
    assert!(bad.is_empty(), "{}: {what}: {} bytes differ, first at {}", case.id, bad.len(), bad[0]);
}

/// The float families' element bits, for bit-exact comparisons.
trait Bits: Element {
    fn bits(self) -> u32 {
        self.to_bits32()
    }
}
impl Bits for f32 {}
impl Bits for f16 {}

/// Runs every kernel of `F` on `formats` (available ones; others reported skipped) with the
/// case's three clamps and compares with the golden outputs of `kj`.
fn run_golden<F: FloatFamily>(
    case: &Case,
    kj: &serde_json::Value,
    formats: (Option<LhsFormat>, RhsFormat),
    lhs: &[F::Lhs],
    rhs: &[u8],
    report: &mut Report,
) where
    F::Dst: Bits,
{
    let (m, n, k) = (case.m(), case.n(), case.k());
    let cpu = cpu();
    // The BFDOT and BFMMLA kernels differ; the golden name says which one this is.
    let dot = kj["name"].as_str().unwrap().contains("_dot");
    let kernels: Vec<&FloatKernel<F>> = F::kernels()
        .iter()
        .copied()
        .filter(|kn| (kn.lhs_format(), kn.rhs_format()) == formats && kn.name().contains("1x36") == dot)
        .collect();
    assert!(kernels.iter().any(|kn| kn.tier() == Tier::Scalar), "{}: no scalar kernel", case.id);
    for kn in kernels {
        if !kn.is_available(&cpu) {
            report.skipped.push((kn.name(), kn.tier()));
            continue;
        }
        report.ran.push((kn.name(), kn.tier()));
        let esz = F::Dst::SIZE;
        let dst_offset_bytes = kj["dst_offset_at_steps"].as_u64().unwrap() as usize;
        if kn.m_step() == kj["m_step"].as_u64().unwrap() as usize {
            let (ms, ns) = (kn.m_step(), kn.n_step());
            assert_eq!(kn.dst_offset(ms, ns, n).unwrap() * esz, dst_offset_bytes, "{}: {}", case.id, kn.name());
        }
        for which in ["none", "tight", "relu"] {
            let (lo, hi) = case.clamp(which);
            let args = MatmulArgs::new(m, n, k).with_clamp(Clamp::new(lo, hi).unwrap());
            let mut dst = vec![F::Dst::from_f32(f32::NAN); m * n];
            kn.run(&cpu, lhs, rhs, &mut dst, &args).unwrap();
            let golden: Vec<F::Dst> = case.values(&kj["dst"][which]);
            let bad = dst.iter().zip(&golden).filter(|(a, b)| a.bits() != b.bits()).count();
            for (i, (a, b)) in dst.iter().zip(&golden).enumerate().filter(|(_, (a, b))| a.bits() != b.bits()).take(5) {
                println!("{} {which} [{},{}]: ours {:#x} golden {:#x}", kn.name(), i / n, i % n, a.bits(), b.bits());
            }
            assert_eq!(bad, 0, "{}: {} clamp {which}: {bad} outputs differ", case.id, kn.name());
        }
    }
}

fn golden_family<F: FloatFamily>(family: &str, report: &mut Report)
where
    F::Dst: Bits,
{
    for case in cases(family) {
        let (m, k) = (case.m(), case.k());
        for pj in case.packings() {
            let (fmt, rhs) = pack_rhs(&case, pj["rhs_packer"]["name"].as_str().unwrap());
            let rp = &pj["rhs_packed"];
            let golden = case.bytes(&rp["file"]);
            masked_eq(&case, "packed RHS", &rhs, &golden, &unspecified(&case, pj, &fmt));
            assert_eq!(fmt.tile_stride(k).unwrap(), rp["tile_stride"].as_u64().unwrap() as usize, "{}", case.id);
            assert_eq!(fmt.packed_offset(fmt.nr, k).unwrap(), rp["offset_at_n_idx_eq_nr"].as_u64().unwrap() as usize);
            let lhs_fmt = if pj["lhs_packer"].is_null() {
                None
            } else {
                let (lf, lhs) = pack_lhs(&case, pj["lhs_packer"]["name"].as_str().unwrap());
                let lp = &pj["lhs_packed"];
                masked_eq(&case, "packed LHS", &lhs, &case.bytes(&lp["file"]), &[]);
                if let Some(off) = lp["offset_at_m_idx_eq_mr"].as_u64() {
                    assert_eq!(lf.packed_offset(lf.mr, k).unwrap(), off as usize, "{}", case.id);
                }
                Some((lf, lhs))
            };
            for kj in pj["kernels"].as_array().unwrap() {
                let formats = (lhs_fmt.as_ref().map(|l| l.0), fmt);
                match family {
                    "f32_f32_f32p" => {
                        let x: Vec<f32> = case.values(&case.json["inputs"]["lhs"]["file"]);
                        run_golden::<f32_f32_f32p::F32F32F32p>(&case, kj, formats, &x, &rhs, report);
                    }
                    "f16_f16_f16p" => {
                        let x: Vec<f16> = case.values(&case.json["inputs"]["lhs"]["file"]);
                        run_golden::<f16_f16_f16p::F16F16F16p>(&case, kj, formats, &x, &rhs, report);
                    }
                    "f32_bf16p_bf16p" => {
                        let lhs = &lhs_fmt.as_ref().unwrap().1;
                        run_golden::<f32_bf16p_bf16p::F32Bf16pBf16p>(&case, kj, formats, lhs, &rhs, report);
                    }
                    _ => {
                        let lhs = &lhs_fmt.as_ref().unwrap().1;
                        run_golden::<f16_bf16p_bf16p::F16Bf16pBf16p>(&case, kj, formats, lhs, &rhs, report);
                    }
                }
            }
            let _ = m;
        }
    }
}

#[test]
fn golden_vectors_in_every_tier() {
    if !golden_available("golden_vectors_in_every_tier") {
        return;
    }
    let mut report = Report::default();
    golden_family::<f32_f32_f32p::F32F32F32p>(FAMILIES[0], &mut report);
    golden_family::<f16_f16_f16p::F16F16F16p>(FAMILIES[1], &mut report);
    golden_family::<f32_bf16p_bf16p::F32Bf16pBf16p>(FAMILIES[2], &mut report);
    golden_family::<f16_bf16p_bf16p::F16Bf16pBf16p>(FAMILIES[3], &mut report);
    report.finish("golden");
}

// ---------------------------------------------------------------------------------------------
// Every tier against the scalar one on random data with tails, split runs and strides.
// ---------------------------------------------------------------------------------------------

/// Values in the golden vectors' spirit: mostly uniform, a few exact zeros of both signs, tiny
/// and large magnitudes.
fn value(rng: &mut Rng) -> f32 {
    let u = (rng.next_u64() >> 32) as u32;
    let x = (u >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0;
    match u & 31 {
        0 => 0.0,
        1 => -0.0,
        2 => x * 1e-30,
        3 => x * 1e20,
        _ => x,
    }
}

fn values<T: Element>(rng: &mut Rng, len: usize) -> Vec<T> {
    (0..len).map(|_| T::from_f32(value(rng))).collect()
}

const SHAPES: [(usize, usize, usize); 21] = [
    (1, 1, 1),
    (1, 150, 9),
    (2, 130, 11),
    (3, 140, 10),
    (5, 80, 6),
    (4, 24, 9),
    (1, 37, 67),
    (2, 17, 3),
    (5, 9, 259),
    (6, 16, 16),
    (7, 33, 5),
    (9, 40, 33),
    (13, 50, 100),
    (17, 12, 8),
    (25, 70, 20),
    (3, 24, 7),
    (16, 72, 12),
    // Short row blocks of the BFMMLA kernels: 1, 2 and 4 rows on 48 + 48 + 12, 48 + 48 and
    // 24 + 24 + 12 columns; 3 rows (after a full block) on 24 + 24 + 12 with a column tail.
    (1, 100, 5),
    (2, 96, 13),
    (4, 60, 9),
    (11, 53, 17),
];

/// Runs every available kernel of `F` on `formats` and compares with the scalar kernel of the
/// same formats (and arithmetic), in one call, in a grid of sub-rectangles and with padded
/// strides.
fn check_against_scalar<F: FloatFamily>(
    shape: (usize, usize, usize),
    lhs: &[F::Lhs],
    lhs_stride: usize,
    rhs: &[u8],
    formats: (Option<LhsFormat>, RhsFormat),
    dot: bool,
    report: &mut Report,
) where
    F::Dst: Bits,
{
    let (m, n, k) = shape;
    let cpu = cpu();
    let ks: Vec<&FloatKernel<F>> = F::kernels()
        .iter()
        .copied()
        .filter(|kn| (kn.lhs_format(), kn.rhs_format()) == formats && kn.name().contains("1x36") == dot)
        .collect();
    let scalar = ks.iter().find(|kn| kn.tier() == Tier::Scalar).unwrap();
    let clamp = Clamp::new(-0.5, 0.75).unwrap();
    let args = MatmulArgs::new(m, n, k).with_lhs_stride(lhs_stride).with_clamp(clamp);
    let mut want = vec![F::Dst::default(); m * n];
    scalar.run(&cpu, lhs, rhs, &mut want, &args).unwrap();
    for kn in ks {
        if !kn.is_available(&cpu) {
            report.skipped.push((kn.name(), kn.tier()));
            continue;
        }
        report.ran.push((kn.name(), kn.tier()));
        let mut got = vec![F::Dst::from_f32(f32::NAN); m * n];
        kn.run(&cpu, lhs, rhs, &mut got, &args).unwrap();
        let same = |a: &[F::Dst], b: &[F::Dst]| a.iter().zip(b).all(|(x, y)| x.bits() == y.bits());
        assert!(same(&got, &want), "{} {shape:?}: differs from scalar", kn.name());
        // A 2x2 grid of sub-rectangles into a padded destination: the same bits, nothing
        // written outside.
        let stride = n + 3;
        let mut grid = vec![F::Dst::from_f32(7.0); m * stride];
        let (m0, n0) = (m / 2 / kn.m_step() * kn.m_step(), n / 2 / kn.n_step() * kn.n_step());
        for (mi, mm) in [(0, m0), (m0, m - m0)] {
            for (ni, nn) in [(0, n0), (n0, n - n0)] {
                if mm == 0 || nn == 0 {
                    continue;
                }
                let a = args.with_rect(mi, ni, mm, nn).with_dst_stride(stride);
                let off = kn.dst_offset(mi, ni, stride).unwrap();
                kn.run(&cpu, lhs, rhs, &mut grid[off..], &a).unwrap();
            }
        }
        for r in 0..m {
            assert!(same(&grid[r * stride..][..n], &want[r * n..][..n]), "{} {shape:?}: split run, row {r}", kn.name());
            assert!(grid[r * stride + n..][..3].iter().all(|v| v.to_f32() == 7.0), "{}: wrote padding", kn.name());
        }
    }
}

#[test]
fn every_tier_matches_scalar_on_shapes_with_tails() {
    let mut rng = Rng(0xF10A7);
    let mut report = Report::default();
    for &(m, n, k) in &SHAPES {
        let stride = k + 2;
        // f32 FMA.
        let x: Vec<f32> = values(&mut rng, m * stride);
        let w: Vec<f32> = values(&mut rng, n * k);
        let bias: Vec<f32> = values(&mut rng, n);
        for fmt in [F32P16, F32P8] {
            let mut rhs = vec![0u8; fmt.packed_size(n, k).unwrap()];
            f32p::pack(&fmt, n, k, &FloatSource::nxk(&w, k), Some(&bias), &mut rhs).unwrap();
            check_against_scalar::<f32_f32_f32p::F32F32F32p>(
                (m, n, k),
                &x,
                stride,
                &rhs,
                (None, fmt),
                false,
                &mut report,
            );
        }
        // f16 FMA.
        let x: Vec<f16> = values(&mut rng, m * stride);
        let w: Vec<f16> = values(&mut rng, k * n);
        let bias: Vec<f16> = values(&mut rng, n);
        for fmt in [F16P32, F16P16] {
            let mut rhs = vec![0u8; fmt.packed_size(n, k).unwrap()];
            f16p::pack(&fmt, n, k, &FloatSource::kxn(&w, n), Some(&bias), &mut rhs).unwrap();
            check_against_scalar::<f16_f16_f16p::F16F16F16p>(
                (m, n, k),
                &x,
                stride,
                &rhs,
                (None, fmt),
                false,
                &mut report,
            );
        }
        // bf16, f32 and f16 outputs.
        let x: Vec<f32> = values(&mut rng, m * stride);
        let w: Vec<f32> = values(&mut rng, n * k);
        let bias: Vec<f32> = values(&mut rng, n);
        let mut rhs = vec![0u8; bf16p12::BF16P12_B32.packed_size(n, k).unwrap()];
        bf16p12::pack_b32(n, k, &FloatSource::nxk(&w, k), Some(&bias), &mut rhs).unwrap();
        for (lf, dot) in [(BF16P8X4, false), (BF16P1X4, true)] {
            let mut lhs = vec![0u8; lf.packed_size(m, k).unwrap()];
            bf16p::pack(&lf, m, k, &x, stride, &mut lhs).unwrap();
            let formats = (Some(lf), bf16p12::BF16P12_B32);
            check_against_scalar::<f32_bf16p_bf16p::F32Bf16pBf16p>((m, n, k), &lhs, 0, &rhs, formats, dot, &mut report);
        }
        let x: Vec<f16> = values(&mut rng, m * stride);
        let w: Vec<f16> = values(&mut rng, n * k);
        let bias: Vec<f16> = values(&mut rng, n);
        let mut rhs = vec![0u8; bf16p12::BF16P12_B16.packed_size(n, k).unwrap()];
        bf16p12::pack_b16(n, k, &FloatSource::nxk(&w, k), Some(&bias), &mut rhs).unwrap();
        let mut lhs = vec![0u8; BF16P8X4.packed_size(m, k).unwrap()];
        bf16p::pack(&BF16P8X4, m, k, &x, stride, &mut lhs).unwrap();
        let formats = (Some(BF16P8X4), bf16p12::BF16P12_B16);
        check_against_scalar::<f16_bf16p_bf16p::F16Bf16pBf16p>((m, n, k), &lhs, 0, &rhs, formats, false, &mut report);
    }
    report.finish("tails");
}

// ---------------------------------------------------------------------------------------------
// Typed errors.
// ---------------------------------------------------------------------------------------------

#[test]
fn bad_calls_are_typed_errors() {
    let cpu = cpu();
    let kn = f32_f32_f32p::select(&cpu);
    let (m, n, k) = (3, 5, 4);
    let x = vec![1.0f32; m * k];
    let mut rhs = vec![0u8; F32P16.packed_size(n, k).unwrap()];
    let w = vec![1.0f32; n * k];
    f32p::pack(&F32P16, n, k, &FloatSource::nxk(&w, k), None, &mut rhs).unwrap();
    let mut dst = vec![0f32; m * n];
    let args = MatmulArgs::new(m, n, k);
    assert!(matches!(kn.run(&x[..m * k - 1], &rhs, &mut dst, &args), Err(Error::BufferTooShort { .. })));
    assert!(matches!(kn.run(&x, &rhs[..rhs.len() - 1], &mut dst, &args), Err(Error::BufferTooShort { .. })));
    assert!(matches!(kn.run(&x, &rhs, &mut dst[..m * n - 1], &args), Err(Error::BufferTooShort { .. })));
    assert!(matches!(kn.run(&x, &rhs, &mut dst, &args.with_lhs_stride(k - 1)), Err(Error::StrideTooSmall { .. })));
    assert!(matches!(kn.run(&x, &rhs, &mut dst, &args.with_dst_stride(n - 1)), Err(Error::StrideTooSmall { .. })));
    assert!(matches!(kn.run(&x, &rhs, &mut dst, &MatmulArgs::new(m, n, 0)), Err(Error::ZeroDim { .. })));
    assert!(matches!(kn.run(&x, &rhs, &mut dst, &args.with_block_len(32)), Err(Error::Unsupported { .. })));
    let misaligned = args.with_rect(1, 0, 2, n);
    assert!(matches!(kn.run(&x, &rhs, &mut dst, &misaligned), Err(Error::MisalignedStart { .. })));
    // Packers.
    let mut small = vec![0u8; rhs.len() - 1];
    assert!(matches!(
        f32p::pack(&F32P16, n, k, &FloatSource::nxk(&w, k), None, &mut small),
        Err(Error::BufferTooShort { .. })
    ));
    assert!(matches!(
        f32p::pack(&F32P16, n, k, &FloatSource::nxk(&w[..n * k - 1], k), None, &mut rhs),
        Err(Error::BufferTooShort { .. })
    ));
    assert!(matches!(
        f32p::pack(&F32P16, n, k, &FloatSource::nxk(&w, k), Some(&[0.0; 4]), &mut rhs),
        Err(Error::BufferTooShort { .. })
    ));
    assert!(matches!(
        f32p::pack(&F16P32, n, k, &FloatSource::nxk(&w, k), None, &mut rhs),
        Err(Error::Unsupported { .. })
    ));
    let mut lhs = vec![0u8; BF16P8X4.packed_size(m, k).unwrap()];
    assert!(matches!(bf16p::pack(&BF16P8X4, m, k, &x, k - 1, &mut lhs), Err(Error::StrideTooSmall { .. })));
    assert!(matches!(bf16p::pack(&BF16P8X4, m, k, &x, k, &mut lhs[..1]), Err(Error::BufferTooShort { .. })));
    assert!(matches!(bf16p::pack(&BF16P8X4, 0, k, &x, k, &mut lhs), Err(Error::ZeroDim { .. })));
    // The bf16 and f16 packers share the checks: short outputs, short bias, bad formats.
    let w16 = vec![qgemm::half::f16::ONE; n * k];
    let mut b = vec![0u8; bf16p12::BF16P12_B32.packed_size(n, k).unwrap()];
    let short = b.len() - 1;
    assert!(matches!(
        bf16p12::pack_b32(n, k, &FloatSource::nxk(&w, k), None, &mut b[..short]),
        Err(Error::BufferTooShort { .. })
    ));
    assert!(matches!(
        bf16p12::pack_b16(n, k, &FloatSource::kxn(&w16, n), Some(&[qgemm::half::f16::ONE; 2]), &mut b),
        Err(Error::BufferTooShort { .. })
    ));
    assert!(matches!(bf16p12::pack_b32(0, k, &FloatSource::nxk(&w, k), None, &mut b), Err(Error::ZeroDim { .. })));
    let bad_stride = FloatSource { data: &w16[..], layout: Layout::KxN, stride: n - 1 };
    assert!(matches!(f16p::pack(&F16P32, n, k, &bad_stride, None, &mut b), Err(Error::StrideTooSmall { .. })));
    let no_rows = LhsFormat { mr: 0, ..BF16P8X4 };
    assert!(matches!(bf16p::pack(&no_rows, m, k, &x, k, &mut lhs), Err(Error::Unsupported { .. })));
    // A kernel whose feature is missing refuses to run.
    let none = qgemm::CpuFeatures::NONE;
    for kn in f32_bf16p_bf16p::KERNELS.iter().filter(|kn| kn.tier() != Tier::Scalar) {
        assert!(matches!(kn.run(&none, &lhs, &rhs, &mut dst, &args), Err(Error::UnsupportedCpu { .. })));
    }
}

/// The BFDOT kernel computes every row (KleidiAI's writes row 0 only, float.md §2.2): each row
/// equals a one-row call on that row.
#[test]
fn bfdot_kernel_computes_every_row() {
    let cpu = cpu();
    let mut rng = Rng(0xB0D);
    let (m, n, k) = (5, 40, 11);
    let x: Vec<f32> = values(&mut rng, m * k);
    let w: Vec<f32> = values(&mut rng, k * n);
    let mut rhs = vec![0u8; bf16p12::BF16P12_B32.packed_size(n, k).unwrap()];
    bf16p12::pack_b32(n, k, &FloatSource::kxn(&w, n), None, &mut rhs).unwrap();
    let mut lhs = vec![0u8; BF16P1X4.packed_size(m, k).unwrap()];
    bf16p::pack(&BF16P1X4, m, k, &x, k, &mut lhs).unwrap();
    for kn in f32_bf16p_bf16p::available(&cpu).filter(|kn| kn.lhs_format() == Some(BF16P1X4)) {
        let mut all = vec![f32::NAN; m * n];
        kn.run(&lhs, &rhs, &mut all, &MatmulArgs::new(m, n, k)).unwrap();
        let row = BF16P1X4.packed_size(1, k).unwrap();
        for r in 0..m {
            let mut one = vec![f32::NAN; n];
            kn.run(&lhs[r * row..], &rhs, &mut one, &MatmulArgs::new(1, n, k)).unwrap();
            assert_eq!(
                one.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                all[r * n..][..n].iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                "{}: row {r}",
                kn.name()
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The operator: FloatLinear.
// ---------------------------------------------------------------------------------------------

/// `FloatLinear` of family `F` gives the bits of its kernel run directly on the same packed
/// operands, whole, in parts and on threads, for several `m`.
fn linear_matches_kernel<F>(n: usize, k: usize, seed: u64)
where
    F: qgemm::op::FloatOperator,
    F::Dst: Bits,
{
    use qgemm::op::FloatLinear;
    let cpu = cpu();
    let mut rng = Rng(seed);
    let w: Vec<F::Src> = values(&mut rng, n * k);
    let bias: Vec<F::Bias> = values(&mut rng, n);
    let mut packed = vec![0u8; FloatLinear::<F>::packed_size(n, k).unwrap()];
    let layer = FloatLinear::<F>::pack(n, k, &FloatSource::nxk(&w, k), Some(&bias), &mut packed).unwrap();
    let clamp = Clamp::new(-0.25, 0.5).unwrap();
    for m in [1, 7, 13] {
        let x: Vec<F::Src> = values(&mut rng, m * k);
        let mut scratch = vec![0u8; layer.scratch_size(m).unwrap()];
        let mut whole = vec![F::Dst::from_f32(f32::NAN); m * n];
        let call = layer.prepare(&cpu, m, &x, &mut scratch).unwrap().with_clamp(clamp);
        call.run(&mut whole).unwrap();
        // The scalar kernel of the same formats, on the same operands.
        let scalar = F::kernels()
            .iter()
            .find(|kn| kn.tier() == Tier::Scalar && kn.rhs_format() == F::RHS && kn.lhs_format() == F::LHS)
            .unwrap();
        let mut scratch2 = vec![0u8; layer.scratch_size(m).unwrap()];
        let reference = layer.prepare_with(scalar, &cpu, m, &x, &mut scratch2).unwrap().with_clamp(clamp);
        let mut want = vec![F::Dst::default(); m * n];
        reference.run(&mut want).unwrap();
        let same = |a: &[F::Dst], b: &[F::Dst]| a.iter().zip(b).all(|(x, y)| x.bits() == y.bits());
        assert!(same(&whole, &want), "{} m={m}: {} differs from scalar", F::NAME, call.kernel().name());
        for parts in [2, 3, 5] {
            let mut out = vec![F::Dst::from_f32(f32::NAN); m * n];
            for p in call.parts(&mut out, parts).unwrap() {
                p.run();
            }
            assert!(same(&out, &whole), "{} m={m}: {parts} parts", F::NAME);
        }
        let mut out = vec![F::Dst::from_f32(f32::NAN); m * n];
        call.run_parallel(&mut out, 2).unwrap();
        assert!(same(&out, &whole), "{} m={m}: threads", F::NAME);
        // Typed errors.
        assert!(matches!(layer.prepare(&cpu, m, &x[..m * k - 1], &mut scratch), Err(Error::BufferTooShort { .. })));
        if !scratch.is_empty() {
            let short = scratch.len() - 1;
            assert!(matches!(layer.prepare(&cpu, m, &x, &mut scratch[..short]), Err(Error::BufferTooShort { .. })));
        }
        let call = layer.prepare(&cpu, m, &x, &mut scratch).unwrap();
        assert!(matches!(call.run(&mut whole[..m * n - 1]), Err(Error::BufferTooShort { .. })));
    }
    let weights = layer.weights();
    assert!(matches!(
        FloatLinear::<F>::from_packed(n, k, &weights[..weights.len() - 1]),
        Err(Error::BufferTooShort { .. })
    ));
    assert_eq!(FloatLinear::<F>::from_packed(n, k, weights).unwrap().weights(), weights);
    assert!(matches!(FloatLinear::<F>::packed_size(0, k), Err(Error::ZeroDim { .. })));
    // A kernel of other formats is refused.
    if let Some(other) = F::kernels().iter().find(|kn| kn.rhs_format() != F::RHS || kn.lhs_format() != F::LHS) {
        let x: Vec<F::Src> = values(&mut rng, k);
        let mut scratch = vec![0u8; 4096];
        assert!(matches!(layer.prepare_with(other, &cpu, 1, &x, &mut scratch), Err(Error::Unsupported { .. })));
    }
}

#[test]
fn float_linear_matches_its_kernels() {
    linear_matches_kernel::<f32_f32_f32p::F32F32F32p>(37, 29, 1);
    linear_matches_kernel::<f16_f16_f16p::F16F16F16p>(70, 9, 2);
    linear_matches_kernel::<f32_bf16p_bf16p::F32Bf16pBf16p>(25, 33, 3);
    linear_matches_kernel::<f16_bf16p_bf16p::F16Bf16pBf16p>(13, 6, 4);
}

/// Sizes near `usize::MAX` are `SizeOverflow`, never a panic or a wrapped index.
#[test]
fn huge_strides_and_starts_are_size_overflow() {
    let cpu = qgemm::CpuFeatures::NONE;
    let kn = &f32_f32_f32p::SCALAR_6X16;
    let (x, rhs, mut dst) = (vec![0f32; 64], vec![0u8; 4096], vec![0f32; 64]);
    let huge = MatmulArgs::new(6, 1, 4).with_lhs_stride(usize::MAX / 2);
    assert!(matches!(kn.run(&x, &rhs, &mut dst, &huge), Err(Error::SizeOverflow)));
    let far = MatmulArgs::new(1, 1, 4).with_rect(usize::MAX / 6 * 6, 0, 1, 1).with_lhs_stride(4);
    assert!(matches!(kn.run(&x, &rhs, &mut dst, &far), Err(Error::SizeOverflow)));
    assert!(matches!(F32P16.packed_size(usize::MAX, 4), Err(Error::SizeOverflow)));
    assert!(matches!(BF16P8X4.packed_size(8, usize::MAX), Err(Error::SizeOverflow)));
}
