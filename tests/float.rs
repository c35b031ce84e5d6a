//! The float families (f32_f32_f32p, f16_f16_f16p, f32_bf16p_bf16p, f16_bf16p_bf16p) against
//! KleidiAI's golden vectors and against their scalar tier: packed bytes (minus the bytes the
//! spec leaves unspecified), interface numbers and output bits of every kernel available on the
//! CPU under test, with each of the three recorded clamps.

#[allow(unused_macros)] // family_suite!
mod common;

use common::{Case, Rng, cases, cpu, golden_available, required_tiers};
use qgemm::error::{Buffer, Param};
use qgemm::half::f16;
use qgemm::lhs::bf16p::{self, BF16P1X4, BF16P8X4};
use qgemm::op::{Linear, Operator};
use qgemm::rhs::f16p::{self, F16P16, F16P32};
use qgemm::rhs::f32p::{self, F32P8, F32P16};
use qgemm::rhs::{FloatSource, Layout, bf16p12};
use qgemm::{Clamp, CpuFeatures, Descriptor, Element, Error, Family, Feature, LhsStride, MatmulArgs, Tier};
use qgemm::{LhsFormat, LhsPacking, RhsFormat, RhsPacking};
use qgemm::{f16_bf16p_bf16p, f16_f16_f16p, f32_bf16p_bf16p, f32_f32_f32p};

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

/// The LHS "packing" of the kernels that read the f32/f16 rows in place (formerly no LHS
/// format at all): one row per tile, no packing.
const fn rows(format: LhsFormat) -> LhsPacking {
    LhsPacking { format, mr: 1, kr: 1, sr: 1 }
}

/// The operand layouts a catalogue entry reads (every float kernel has a fixed shape).
fn formats_of<F: Family>(d: &Descriptor<F>) -> (LhsPacking, RhsPacking) {
    let p = d.packing_on(&CpuFeatures::NONE).unwrap_or_else(|| panic!("{}: not a fixed shape", d.name()));
    (p.lhs(d.shape().lhs), p.rhs(d.shape().rhs))
}

/// The family parameters of a call with LHS row stride `s` (elements): the stride itself for
/// the families that read the rows in place, nothing for a packed LHS.
trait FromStride {
    fn from_stride(s: usize) -> Self;
}

impl FromStride for () {
    fn from_stride(_: usize) {}
}

impl FromStride for LhsStride {
    fn from_stride(s: usize) -> LhsStride {
        LhsStride(s)
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
fn pack_rhs(case: &Case, name: &str) -> (RhsPacking, Vec<u8>) {
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
    let mut out = vec![0xA5u8; fmt.packed_size(n, k, 0).unwrap()];
    let dtype = case.json["inputs"]["rhs"]["dtype"].as_str().unwrap();
    match (fmt.format, dtype) {
        (RhsFormat::F32p, _) => {
            let (v, layout, stride) = rhs_values::<f32>(case);
            let src = FloatSource { data: &v, layout, stride };
            f32p::pack(&fmt, n, k, &src, bias_values::<f32>(case).as_deref(), &mut out).unwrap();
        }
        (RhsFormat::F16p, _) => {
            let (v, layout, stride) = rhs_values::<f16>(case);
            let src = FloatSource { data: &v, layout, stride };
            f16p::pack(&fmt, n, k, &src, bias_values::<f16>(case).as_deref(), &mut out).unwrap();
        }
        (RhsFormat::Bf16pB32, "f32") => {
            let (v, layout, stride) = rhs_values::<f32>(case);
            let src = FloatSource { data: &v, layout, stride };
            bf16p12::pack_b32(n, k, &src, bias_values::<f32>(case).as_deref(), &mut out).unwrap();
        }
        (RhsFormat::Bf16pB32, _) => {
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
fn pack_lhs(case: &Case, name: &str) -> (LhsPacking, Vec<u8>) {
    let (m, k) = (case.m(), case.k());
    let lhs = &case.json["inputs"]["lhs"];
    let fmt = if name.contains("bf16p1x4") { BF16P1X4 } else { BF16P8X4 };
    let mut out = vec![0xA5u8; fmt.packed_size(m, k, 0).unwrap()];
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

/// The byte ranges of a packed RHS that are not part of the format (docs/formats.md, §Float
/// formats: padding bytes KleidiAI leaves unwritten or fills with a leftover): the ranges the
/// manifest lists as not written, and the padding-column values of the last tile of the f16
/// NxK packer.
fn unspecified(case: &Case, pj: &serde_json::Value, fmt: &RhsPacking) -> Vec<(usize, usize)> {
    let rp = &pj["rhs_packed"];
    let mut out: Vec<(usize, usize)> = rp["bytes_not_written"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r[0].as_u64().unwrap() as usize, r[1].as_u64().unwrap() as usize))
        .collect();
    let (n, k) = (case.n(), case.k());
    if pj["rhs_packer"]["name"] == "rhs_pack_nxk_x16p32x1bx16_x16_x16_neon" && !n.is_multiple_of(fmt.nr) {
        let ts = fmt.tile_stride(k, 0).unwrap();
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

/// The kernels of `F` that read `formats` (the BFDOT ones when `dot`), in catalogue order.
fn kernels_reading<F: Family>(formats: (LhsPacking, RhsPacking), dot: bool) -> Vec<&'static Descriptor<F>> {
    F::kernels().iter().copied().filter(|d| formats_of(d) == formats && d.name().contains("1x36") == dot).collect()
}

/// Runs every kernel of `F` on `formats` (available ones; others reported skipped) with the
/// case's three clamps and compares with the golden outputs of `kj`.
fn run_golden<F: Family>(
    case: &Case,
    kj: &serde_json::Value,
    formats: (LhsPacking, RhsPacking),
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
    let kernels = kernels_reading::<F>(formats, dot);
    assert!(kernels.iter().any(|d| d.tier() == Tier::Scalar), "{}: no scalar kernel", case.id);
    for d in kernels {
        let kn = match d.resolve(&cpu) {
            Ok(kn) => kn,
            Err(_) => {
                report.skipped.push((d.name(), d.tier()));
                continue;
            }
        };
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
            kn.run(lhs, rhs, &mut dst, &args).unwrap();
            let golden: Vec<F::Dst> = case.values(&kj["dst"][which]);
            let bad = dst.iter().zip(&golden).filter(|(a, b)| a.bits() != b.bits()).count();
            for (i, (a, b)) in dst.iter().zip(&golden).enumerate().filter(|(_, (a, b))| a.bits() != b.bits()).take(5) {
                println!("{} {which} [{},{}]: ours {:#x} golden {:#x}", kn.name(), i / n, i % n, a.bits(), b.bits());
            }
            assert_eq!(bad, 0, "{}: {} clamp {which}: {bad} outputs differ", case.id, kn.name());
        }
    }
}

fn golden_family<F: Family>(report: &mut Report)
where
    F::Dst: Bits,
{
    let family = F::NAME;
    for case in cases(family) {
        let k = case.k();
        for pj in case.packings() {
            let (fmt, rhs) = pack_rhs(&case, pj["rhs_packer"]["name"].as_str().unwrap());
            let rp = &pj["rhs_packed"];
            let golden = case.bytes(&rp["file"]);
            masked_eq(&case, "packed RHS", &rhs, &golden, &unspecified(&case, pj, &fmt));
            assert_eq!(fmt.tile_stride(k, 0).unwrap(), rp["tile_stride"].as_u64().unwrap() as usize, "{}", case.id);
            assert_eq!(
                fmt.packed_offset(fmt.nr, k, 0).unwrap(),
                rp["offset_at_n_idx_eq_nr"].as_u64().unwrap() as usize
            );
            let packed_lhs = if pj["lhs_packer"].is_null() {
                None
            } else {
                let (lf, lhs) = pack_lhs(&case, pj["lhs_packer"]["name"].as_str().unwrap());
                let lp = &pj["lhs_packed"];
                masked_eq(&case, "packed LHS", &lhs, &case.bytes(&lp["file"]), &[]);
                if let Some(off) = lp["offset_at_m_idx_eq_mr"].as_u64() {
                    assert_eq!(lf.packed_offset(lf.mr, k, 0).unwrap(), off as usize, "{}", case.id);
                }
                Some((lf, lhs))
            };
            for kj in pj["kernels"].as_array().unwrap() {
                match family {
                    "f32_f32_f32p" => {
                        assert!(packed_lhs.is_none(), "{}: an LHS packer for unpacked rows", case.id);
                        let x: Vec<f32> = case.values(&case.json["inputs"]["lhs"]["file"]);
                        let formats = (rows(f32_f32_f32p::LHS_FORMAT), fmt);
                        run_golden::<f32_f32_f32p::F32F32F32p>(&case, kj, formats, &x, &rhs, report);
                    }
                    "f16_f16_f16p" => {
                        assert!(packed_lhs.is_none(), "{}: an LHS packer for unpacked rows", case.id);
                        let x: Vec<f16> = case.values(&case.json["inputs"]["lhs"]["file"]);
                        let formats = (rows(f16_f16_f16p::LHS_FORMAT), fmt);
                        run_golden::<f16_f16_f16p::F16F16F16p>(&case, kj, formats, &x, &rhs, report);
                    }
                    "f32_bf16p_bf16p" => {
                        let (lf, lhs) = packed_lhs.as_ref().unwrap();
                        run_golden::<f32_bf16p_bf16p::F32Bf16pBf16p>(&case, kj, (*lf, fmt), lhs, &rhs, report);
                    }
                    _ => {
                        let (lf, lhs) = packed_lhs.as_ref().unwrap();
                        run_golden::<f16_bf16p_bf16p::F16Bf16pBf16p>(&case, kj, (*lf, fmt), lhs, &rhs, report);
                    }
                }
            }
        }
    }
}

#[test]
fn golden_vectors_in_every_tier() {
    if !golden_available("golden_vectors_in_every_tier") {
        return;
    }
    let mut report = Report::default();
    golden_family::<f32_f32_f32p::F32F32F32p>(&mut report);
    golden_family::<f16_f16_f16p::F16F16F16p>(&mut report);
    golden_family::<f32_bf16p_bf16p::F32Bf16pBf16p>(&mut report);
    golden_family::<f16_bf16p_bf16p::F16Bf16pBf16p>(&mut report);
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

/// [`value`]s in `T`, the large ones clamped to `T`'s finite range (the packers and the
/// kernels that read rows in place reject infinities).
fn values<T: Element>(rng: &mut Rng, len: usize) -> Vec<T> {
    let max = T::MAX.to_f32();
    (0..len).map(|_| T::from_f32(value(rng).clamp(-max, max))).collect()
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
/// strides. `lhs_stride` is the row stride (elements) of rows read in place; ignored for a
/// packed LHS.
fn check_against_scalar<F: Family>(
    shape: (usize, usize, usize),
    lhs: &[F::Lhs],
    lhs_stride: usize,
    rhs: &[u8],
    formats: (LhsPacking, RhsPacking),
    dot: bool,
    report: &mut Report,
) where
    F::Dst: Bits,
    F::Params: FromStride,
{
    let (m, n, k) = shape;
    let cpu = cpu();
    let ks = kernels_reading::<F>(formats, dot);
    let scalar = ks.iter().find(|d| d.tier() == Tier::Scalar).unwrap().resolve(&cpu).unwrap();
    let clamp = Clamp::new(-0.5, 0.75).unwrap();
    let args = MatmulArgs::new(m, n, k).with_params(F::Params::from_stride(lhs_stride)).with_clamp(clamp);
    let mut want = vec![F::Dst::default(); m * n];
    scalar.run(lhs, rhs, &mut want, &args).unwrap();
    for d in ks {
        let kn = match d.resolve(&cpu) {
            Ok(kn) => kn,
            Err(_) => {
                report.skipped.push((d.name(), d.tier()));
                continue;
            }
        };
        report.ran.push((kn.name(), kn.tier()));
        let mut got = vec![F::Dst::from_f32(f32::NAN); m * n];
        kn.run(lhs, rhs, &mut got, &args).unwrap();
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
                kn.run(lhs, rhs, &mut grid[off..], &a).unwrap();
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
            let mut rhs = vec![0u8; fmt.packed_size(n, k, 0).unwrap()];
            f32p::pack(&fmt, n, k, &FloatSource::nxk(&w, k), Some(&bias), &mut rhs).unwrap();
            check_against_scalar::<f32_f32_f32p::F32F32F32p>(
                (m, n, k),
                &x,
                stride,
                &rhs,
                (rows(LhsFormat::F32), fmt),
                false,
                &mut report,
            );
        }
        // f16 FMA.
        let x: Vec<f16> = values(&mut rng, m * stride);
        let w: Vec<f16> = values(&mut rng, k * n);
        let bias: Vec<f16> = values(&mut rng, n);
        for fmt in [F16P32, F16P16] {
            let mut rhs = vec![0u8; fmt.packed_size(n, k, 0).unwrap()];
            f16p::pack(&fmt, n, k, &FloatSource::kxn(&w, n), Some(&bias), &mut rhs).unwrap();
            check_against_scalar::<f16_f16_f16p::F16F16F16p>(
                (m, n, k),
                &x,
                stride,
                &rhs,
                (rows(LhsFormat::F16), fmt),
                false,
                &mut report,
            );
        }
        // bf16, f32 and f16 outputs.
        let x: Vec<f32> = values(&mut rng, m * stride);
        let w: Vec<f32> = values(&mut rng, n * k);
        let bias: Vec<f32> = values(&mut rng, n);
        let mut rhs = vec![0u8; bf16p12::BF16P12_B32.packed_size(n, k, 0).unwrap()];
        bf16p12::pack_b32(n, k, &FloatSource::nxk(&w, k), Some(&bias), &mut rhs).unwrap();
        for (lf, dot) in [(BF16P8X4, false), (BF16P1X4, true)] {
            let mut lhs = vec![0u8; lf.packed_size(m, k, 0).unwrap()];
            bf16p::pack(&lf, m, k, &x, stride, &mut lhs).unwrap();
            let formats = (lf, bf16p12::BF16P12_B32);
            check_against_scalar::<f32_bf16p_bf16p::F32Bf16pBf16p>((m, n, k), &lhs, 0, &rhs, formats, dot, &mut report);
        }
        let x: Vec<f16> = values(&mut rng, m * stride);
        let w: Vec<f16> = values(&mut rng, n * k);
        let bias: Vec<f16> = values(&mut rng, n);
        let mut rhs = vec![0u8; bf16p12::BF16P12_B16.packed_size(n, k, 0).unwrap()];
        bf16p12::pack_b16(n, k, &FloatSource::nxk(&w, k), Some(&bias), &mut rhs).unwrap();
        let mut lhs = vec![0u8; BF16P8X4.packed_size(m, k, 0).unwrap()];
        bf16p::pack(&BF16P8X4, m, k, &x, stride, &mut lhs).unwrap();
        let formats = (BF16P8X4, bf16p12::BF16P12_B16);
        check_against_scalar::<f16_bf16p_bf16p::F16Bf16pBf16p>((m, n, k), &lhs, 0, &rhs, formats, false, &mut report);
    }
    report.finish("tails");
}

// ---------------------------------------------------------------------------------------------
// Overflow: finite inputs whose products and sums overflow, one result on every tier.
// ---------------------------------------------------------------------------------------------

/// The AArch64 default NaN of an output type (positive, quiet, no payload): `0x7FC00000` (f32),
/// `0x7E00` (f16).
fn default_nan<T: Element>() -> u32 {
    if T::SIZE == 4 { 0x7FC0_0000 } else { 0x7E00 }
}

/// Output bits of every available kernel of `F` reading `formats` (scalar first), on one call
/// with `clamp`.
#[allow(clippy::too_many_arguments)]
fn outputs_of_every_tier<F: Family>(
    shape: (usize, usize, usize),
    lhs: &[F::Lhs],
    lhs_stride: usize,
    rhs: &[u8],
    formats: (LhsPacking, RhsPacking),
    dot: bool,
    clamp: Clamp,
    report: &mut Report,
) -> Vec<(&'static str, Vec<u32>)>
where
    F::Dst: Bits,
    F::Params: FromStride,
{
    let (m, n, k) = shape;
    let cpu = cpu();
    let args = MatmulArgs::new(m, n, k).with_params(F::Params::from_stride(lhs_stride)).with_clamp(clamp);
    let mut ks = kernels_reading::<F>(formats, dot);
    ks.sort_by_key(|d| d.tier() != Tier::Scalar);
    assert_eq!(ks[0].tier(), Tier::Scalar);
    let mut out = Vec::new();
    for d in ks {
        let Ok(kn) = d.resolve(&cpu) else {
            report.skipped.push((d.name(), d.tier()));
            continue;
        };
        report.ran.push((kn.name(), kn.tier()));
        let mut got = vec![F::Dst::from_f32(1.0); m * n];
        kn.run(lhs, rhs, &mut got, &args).unwrap();
        out.push((kn.name(), got.iter().map(|v| v.bits()).collect()));
    }
    out
}

/// Every tier gives the scalar kernel's bits, every NaN among them is the default NaN of the
/// output type; returns the number of (NaN, infinite) outputs.
fn one_result<T: Element>(what: &str, outputs: &[(&str, Vec<u32>)]) -> (usize, usize) {
    let (scalar, want) = &outputs[0];
    for (name, got) in &outputs[1..] {
        let bad = got.iter().zip(want).filter(|(a, b)| a != b).count();
        let first = got.iter().zip(want).find(|(a, b)| a != b);
        assert_eq!(bad, 0, "{what}: {name} differs from {scalar} in {bad} outputs, first {first:x?}");
    }
    let value = |b: u32| T::from_bits32(b).to_f32();
    for (name, got) in outputs {
        let nans: Vec<u32> = got.iter().copied().filter(|&b| value(b).is_nan()).collect();
        assert!(
            nans.iter().all(|&b| b == default_nan::<T>()),
            "{what}: {name}: NaN outputs other than the default NaN {:#x}: {:x?}",
            default_nan::<T>(),
            &nans[..nans.len().min(4)]
        );
    }
    let nans = want.iter().filter(|&&b| value(b).is_nan()).count();
    let infs = want.iter().filter(|&&b| value(b).is_infinite()).count();
    println!("{what}: {} outputs, {nans} NaN, {infs} infinite, {} kernels", want.len(), outputs.len());
    (nans, infs)
}

/// A finite value of magnitude `huge` or 1 (one in four), random sign and mantissa.
fn overflowing(rng: &mut Rng, huge: f32) -> f32 {
    let sign = if rng.next_u64() & 1 == 0 { 1.0 } else { -1.0 };
    let mag = if rng.below(4) == 0 { 1.0 } else { huge * rng.f32(0.5, 1.0) };
    sign * mag
}

/// Finite inputs chosen to overflow: f32 activations near 3e38, f16 ones near 65504, bf16
/// products beyond f32 (and f32 values that round to a bf16 infinity, so that the padding
/// depths multiply 0 by infinity). The FMA families' products are exact inside the fused
/// operation, so their accumulators overflow to infinity and stay there (no NaN); the bf16
/// families' products round on their own, and pairs of opposite infinities give NaN. Every
/// tier gives the scalar kernel's bits, and every NaN is the default NaN.
#[test]
fn overflow_gives_one_result_on_every_tier() {
    let mut rng = Rng(0x0F10);
    let mut report = Report::default();
    let open = Clamp::new(f32::NEG_INFINITY, f32::INFINITY).unwrap();
    for &(m, n, k) in &[(7, 20, 9), (1, 37, 5), (13, 50, 6), (9, 13, 1)] {
        let stride = k + 1;
        // f32 FMA: activations near 3e38 times weights up to 4.
        let x: Vec<f32> = (0..m * stride).map(|_| overflowing(&mut rng, 3.0e38)).collect();
        let w: Vec<f32> = (0..n * k).map(|_| overflowing(&mut rng, 4.0)).collect();
        let bias: Vec<f32> = (0..n).map(|_| overflowing(&mut rng, 3.0e38)).collect();
        for fmt in [F32P16, F32P8] {
            let mut rhs = vec![0u8; fmt.packed_size(n, k, 0).unwrap()];
            f32p::pack(&fmt, n, k, &FloatSource::nxk(&w, k), Some(&bias), &mut rhs).unwrap();
            for clamp in [open, Clamp::NONE] {
                let formats = (rows(LhsFormat::F32), fmt);
                let outs = outputs_of_every_tier::<f32_f32_f32p::F32F32F32p>(
                    (m, n, k),
                    &x,
                    stride,
                    &rhs,
                    formats,
                    false,
                    clamp,
                    &mut report,
                );
                let (nans, infs) = one_result::<f32>(&format!("f32 fma {m}x{n}x{k}"), &outs);
                assert_eq!(nans, 0, "f32 fma: a NaN from finite inputs");
                assert_eq!(infs > 0, clamp == open, "f32 fma {m}x{n}x{k}: {infs} infinite outputs");
            }
        }
        // f16 FMA: activations near 65504 times weights up to 4 (the f16 bounds of
        // `Clamp::NONE` are infinite).
        let x: Vec<f16> = (0..m * stride).map(|_| f16::from_f32(overflowing(&mut rng, 65504.0))).collect();
        let w: Vec<f16> = (0..k * n).map(|_| f16::from_f32(overflowing(&mut rng, 4.0))).collect();
        let bias: Vec<f16> = (0..n).map(|_| f16::from_f32(overflowing(&mut rng, 65504.0))).collect();
        for fmt in [F16P32, F16P16] {
            let mut rhs = vec![0u8; fmt.packed_size(n, k, 0).unwrap()];
            f16p::pack(&fmt, n, k, &FloatSource::kxn(&w, n), Some(&bias), &mut rhs).unwrap();
            let formats = (rows(LhsFormat::F16), fmt);
            let outs = outputs_of_every_tier::<f16_f16_f16p::F16F16F16p>(
                (m, n, k),
                &x,
                stride,
                &rhs,
                formats,
                false,
                Clamp::NONE,
                &mut report,
            );
            let (nans, infs) = one_result::<f16>(&format!("f16 fma {m}x{n}x{k}"), &outs);
            assert_eq!(nans, 0, "f16 fma: a NaN from finite inputs");
            assert!(infs > 0, "f16 fma {m}x{n}x{k}: no infinite output");
        }
        // bf16, f32 output: products of values near 1e38 overflow (+inf and -inf pairs give
        // NaN); f32::MAX rounds to a bf16 infinity (depth padding: 0 * inf).
        let big = |rng: &mut Rng| if rng.below(8) == 0 { f32::MAX } else { overflowing(rng, 2.0e38) };
        let x: Vec<f32> = (0..m * stride).map(|_| big(&mut rng)).collect();
        let w: Vec<f32> = (0..n * k).map(|_| big(&mut rng)).collect();
        let bias: Vec<f32> = (0..n).map(|_| overflowing(&mut rng, 3.0e38)).collect();
        let mut rhs = vec![0u8; bf16p12::BF16P12_B32.packed_size(n, k, 0).unwrap()];
        bf16p12::pack_b32(n, k, &FloatSource::nxk(&w, k), Some(&bias), &mut rhs).unwrap();
        for (lf, dot) in [(BF16P8X4, false), (BF16P1X4, true)] {
            let mut lhs = vec![0u8; lf.packed_size(m, k, 0).unwrap()];
            bf16p::pack(&lf, m, k, &x, stride, &mut lhs).unwrap();
            let formats = (lf, bf16p12::BF16P12_B32);
            let outs = outputs_of_every_tier::<f32_bf16p_bf16p::F32Bf16pBf16p>(
                (m, n, k),
                &lhs,
                0,
                &rhs,
                formats,
                dot,
                open,
                &mut report,
            );
            let (nans, _) = one_result::<f32>(&format!("bf16 f32 {} {m}x{n}x{k}", lf.mr), &outs);
            assert!(nans > 0, "bf16 f32 {m}x{n}x{k}: no NaN output");
        }
        // bf16, f16 output: the f32 accumulator of f16 values cannot overflow, the f16
        // conversion can (no NaN from finite f16 inputs).
        let x: Vec<f16> = (0..m * stride).map(|_| f16::from_f32(overflowing(&mut rng, 65504.0))).collect();
        let w: Vec<f16> = (0..n * k).map(|_| f16::from_f32(overflowing(&mut rng, 65504.0))).collect();
        let bias: Vec<f16> = (0..n).map(|_| f16::from_f32(overflowing(&mut rng, 65504.0))).collect();
        let mut rhs = vec![0u8; bf16p12::BF16P12_B16.packed_size(n, k, 0).unwrap()];
        bf16p12::pack_b16(n, k, &FloatSource::nxk(&w, k), Some(&bias), &mut rhs).unwrap();
        let mut lhs = vec![0u8; BF16P8X4.packed_size(m, k, 0).unwrap()];
        bf16p::pack(&BF16P8X4, m, k, &x, stride, &mut lhs).unwrap();
        let formats = (BF16P8X4, bf16p12::BF16P12_B16);
        let outs = outputs_of_every_tier::<f16_bf16p_bf16p::F16Bf16pBf16p>(
            (m, n, k),
            &lhs,
            0,
            &rhs,
            formats,
            false,
            Clamp::NONE,
            &mut report,
        );
        let (nans, infs) = one_result::<f16>(&format!("bf16 f16 {m}x{n}x{k}"), &outs);
        assert_eq!(nans, 0, "bf16 f16: a NaN from finite f16 inputs");
        assert!(infs > 0, "bf16 f16 {m}x{n}x{k}: no infinite output");
    }
    report.finish("overflow");
}

/// Little-endian bits `v` (`size` bytes) at `buf[at..]`.
fn patch(buf: &mut [u8], at: usize, v: u32, size: usize) {
    buf[at..at + size].copy_from_slice(&v.to_le_bytes()[..size]);
}

/// Packed bytes that did not come from qgemm's packers may hold infinities and NaNs
/// (`Linear::from_packed`, `run_unchecked`, KleidiAI's buffers). An invalid operation on them
/// (`inf - inf`, `0 * inf`) gives the default NaN on every tier; the bf16 instructions give the
/// default NaN for every NaN (a NaN operand too); a NaN operand of the FMA kernels gives some
/// NaN (the SIMD tiers propagate its payload, the scalar tier gives the default NaN).
#[test]
fn invalid_operations_on_foreign_packed_bytes_give_the_default_nan() {
    let mut report = Report::default();
    let (m, n, k) = (7, 40, 9);
    // Column 0: +inf bias, -inf weight at depth 0 (x = 1): inf - inf. Column 1: +inf weight
    // at depth 1 (x = 0): 0 * inf. Column 33 (second tile of 32, third of 16): -inf bias,
    // +inf weight at depth 0. Column 3: a signalling NaN weight at depth 2 (some NaN).
    let x32: Vec<f32> = (0..m * k).map(|i| if i % k == 1 { 0.0 } else { 1.0 }).collect();
    let x16: Vec<f16> = x32.iter().map(|&v| f16::from_f32(v)).collect();
    let invalid = [0, 1, 33];
    let check = |what: &str, outs: &[(&str, Vec<u32>)], nan: u32| {
        for (name, got) in outs {
            for r in 0..m {
                for c in 0..n {
                    let b = got[r * n + c];
                    if invalid.contains(&c) {
                        assert_eq!(b, nan, "{what}: {name} ({r}, {c}): {b:#x}");
                    } else if c == 3 {
                        let is_nan =
                            if nan > 0xFFFF { f32::from_bits(b).is_nan() } else { f16::from_bits(b as u16).is_nan() };
                        assert!(is_nan, "{what}: {name} ({r}, {c}): {b:#x} is not a NaN");
                    } else {
                        assert_eq!(b, outs[0].1[r * n + c], "{what}: {name} ({r}, {c})");
                    }
                }
            }
            println!("{what}: {name}: NaN operand gives {:#x}", got[3]);
        }
    };
    // The FMA families' packed weights (`size`-byte elements): +inf, -inf and a signalling NaN
    // of the element type at the places above.
    let fma_patches = |rhs: &mut [u8], fmt: &RhsPacking, size: usize, [inf, ninf, snan]: [u32; 3]| {
        let ts = fmt.tile_stride(k, 0).unwrap();
        let bias_at = |c: usize| c / fmt.nr * ts + c % fmt.nr * size;
        let w_at = |c: usize, j: usize| c / fmt.nr * ts + fmt.nr * size + (j * fmt.nr + c % fmt.nr) * size;
        patch(rhs, bias_at(0), inf, size);
        patch(rhs, w_at(0, 0), ninf, size);
        patch(rhs, w_at(1, 1), inf, size);
        patch(rhs, bias_at(33), ninf, size);
        patch(rhs, w_at(33, 0), inf, size);
        patch(rhs, w_at(3, 2), snan, size);
    };
    for fmt in [F32P16, F32P8] {
        let w = vec![0.5f32; n * k];
        let mut rhs = vec![0u8; fmt.packed_size(n, k, 0).unwrap()];
        f32p::pack(&fmt, n, k, &FloatSource::nxk(&w, k), Some(&[0.25; 40]), &mut rhs).unwrap();
        fma_patches(&mut rhs, &fmt, 4, [0x7F80_0000, 0xFF80_0000, 0x7F80_0001]);
        let formats = (rows(LhsFormat::F32), fmt);
        let outs = outputs_of_every_tier::<f32_f32_f32p::F32F32F32p>(
            (m, n, k),
            &x32,
            k,
            &rhs,
            formats,
            false,
            Clamp::NONE,
            &mut report,
        );
        check(&format!("f32 fma nr={}", fmt.nr), &outs, 0x7FC0_0000);
    }
    for fmt in [F16P32, F16P16] {
        let w = vec![f16::from_f32(0.5); n * k];
        let mut rhs = vec![0u8; fmt.packed_size(n, k, 0).unwrap()];
        f16p::pack(&fmt, n, k, &FloatSource::nxk(&w, k), Some(&[f16::from_f32(0.25); 40]), &mut rhs).unwrap();
        fma_patches(&mut rhs, &fmt, 2, [0x7C00, 0xFC00, 0x7C01]);
        let formats = (rows(LhsFormat::F16), fmt);
        let outs = outputs_of_every_tier::<f16_f16_f16p::F16F16F16p>(
            (m, n, k),
            &x16,
            k,
            &rhs,
            formats,
            false,
            Clamp::NONE,
            &mut report,
        );
        check(&format!("f16 fma nr={}", fmt.nr), &outs, 0x7E00);
    }
    // The bf16 families: every NaN is the default NaN, column 3 (a NaN bias) too.
    // Bias bits (+inf, -inf, a signalling NaN) of the bias type, `bias_size` bytes.
    let bf16_patches = |rhs: &mut [u8], fmt: &RhsPacking, bias_size: usize, bias: [u32; 3]| {
        let ts = fmt.tile_stride(k, 0).unwrap();
        let bias_at = |c: usize| c / 12 * ts + c % 12 * bias_size;
        let w_at = |c: usize, j: usize| c / 12 * ts + 12 * bias_size + ((j / 4 * 12 + c % 12) * 4 + j % 4) * 2;
        patch(rhs, bias_at(0), bias[0], bias_size);
        patch(rhs, w_at(0, 0), 0xFF80, 2);
        patch(rhs, w_at(1, 1), 0x7F80, 2);
        patch(rhs, bias_at(33), bias[1], bias_size);
        patch(rhs, w_at(33, 0), 0x7F80, 2);
        patch(rhs, bias_at(3), bias[2], bias_size);
    };
    let w = vec![0.5f32; n * k];
    let mut rhs = vec![0u8; bf16p12::BF16P12_B32.packed_size(n, k, 0).unwrap()];
    bf16p12::pack_b32(n, k, &FloatSource::nxk(&w, k), Some(&[0.25; 40]), &mut rhs).unwrap();
    bf16_patches(&mut rhs, &bf16p12::BF16P12_B32, 4, [0x7F80_0000, 0xFF80_0000, 0x7F80_0001]);
    for (lf, dot) in [(BF16P8X4, false), (BF16P1X4, true)] {
        let mut lhs = vec![0u8; lf.packed_size(m, k, 0).unwrap()];
        bf16p::pack(&lf, m, k, &x32, k, &mut lhs).unwrap();
        let formats = (lf, bf16p12::BF16P12_B32);
        let outs = outputs_of_every_tier::<f32_bf16p_bf16p::F32Bf16pBf16p>(
            (m, n, k),
            &lhs,
            0,
            &rhs,
            formats,
            dot,
            Clamp::NONE,
            &mut report,
        );
        check(&format!("bf16 f32 mr={}", lf.mr), &outs, 0x7FC0_0000);
        assert!(outs.iter().all(|(_, got)| got[3] == 0x7FC0_0000), "bf16 f32: a NaN bias gives the default NaN");
    }
    let w = vec![f16::from_f32(0.5); n * k];
    let mut rhs = vec![0u8; bf16p12::BF16P12_B16.packed_size(n, k, 0).unwrap()];
    bf16p12::pack_b16(n, k, &FloatSource::nxk(&w, k), Some(&[f16::from_f32(0.25); 40]), &mut rhs).unwrap();
    bf16_patches(&mut rhs, &bf16p12::BF16P12_B16, 2, [0x7C00, 0xFC00, 0x7C01]);
    let mut lhs = vec![0u8; BF16P8X4.packed_size(m, k, 0).unwrap()];
    bf16p::pack(&BF16P8X4, m, k, &x16, k, &mut lhs).unwrap();
    let formats = (BF16P8X4, bf16p12::BF16P12_B16);
    let outs = outputs_of_every_tier::<f16_bf16p_bf16p::F16Bf16pBf16p>(
        (m, n, k),
        &lhs,
        0,
        &rhs,
        formats,
        false,
        Clamp::NONE,
        &mut report,
    );
    check("bf16 f16", &outs, 0x7E00);
    assert!(outs.iter().all(|(_, got)| got[3] == 0x7E00), "bf16 f16: a NaN bias gives the default NaN");
    report.finish("foreign bytes");
}

// ---------------------------------------------------------------------------------------------
// Typed errors.
// ---------------------------------------------------------------------------------------------

#[test]
fn bad_calls_are_typed_errors() {
    let cpu = cpu();
    let (m, n, k) = (3, 5, 4);
    let kn = f32_f32_f32p::select(&cpu, m);
    let x = vec![1.0f32; m * k];
    let mut rhs = vec![0u8; F32P16.packed_size(n, k, 0).unwrap()];
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
    let mut lhs = vec![0u8; BF16P8X4.packed_size(m, k, 0).unwrap()];
    assert!(matches!(bf16p::pack(&BF16P8X4, m, k, &x, k - 1, &mut lhs), Err(Error::StrideTooSmall { .. })));
    assert!(matches!(bf16p::pack(&BF16P8X4, m, k, &x, k, &mut lhs[..1]), Err(Error::BufferTooShort { .. })));
    assert!(matches!(bf16p::pack(&BF16P8X4, 0, k, &x, k, &mut lhs), Err(Error::ZeroDim { .. })));
    // The bf16 and f16 packers share the checks: short outputs, short bias, bad formats.
    let w16 = vec![qgemm::half::f16::ONE; n * k];
    let mut b = vec![0u8; bf16p12::BF16P12_B32.packed_size(n, k, 0).unwrap()];
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
    let no_rows = LhsPacking { mr: 0, ..BF16P8X4 };
    assert!(matches!(bf16p::pack(&no_rows, m, k, &x, k, &mut lhs), Err(Error::Unsupported { .. })));
    // A kernel whose feature is missing cannot be had for that CPU (a `Kernel` exists only
    // for a CPU that runs it), and names the feature; the scalar ones resolve everywhere.
    let none = CpuFeatures::NONE;
    let mut simd = 0;
    for d in f32_bf16p_bf16p::KERNELS {
        if d.tier() == Tier::Scalar {
            assert!(d.resolve(&none).is_ok(), "{}", d.name());
            continue;
        }
        simd += 1;
        assert!(!d.is_available(&none), "{}", d.name());
        assert_eq!(d.missing_feature(&none), Some(Feature::Neon), "{}", d.name());
        assert!(matches!(d.resolve(&none), Err(Error::UnsupportedCpu { needs: Feature::Neon })), "{}", d.name());
        // SAFETY: only resolved, never run.
        let neon = unsafe { none.with(Feature::Neon) };
        assert!(matches!(d.resolve(&neon), Err(Error::UnsupportedCpu { needs: Feature::Bf16 })), "{}", d.name());
    }
    assert_eq!(simd, if cfg!(target_arch = "aarch64") { 2 } else { 0 });
}

/// The BFDOT kernel computes every row (KleidiAI's writes row 0 only, docs/formats.md, §Float
/// formats): each row
/// equals a one-row call on that row.
#[test]
fn bfdot_kernel_computes_every_row() {
    let cpu = cpu();
    let mut rng = Rng(0xB0D);
    let (m, n, k) = (5, 40, 11);
    let x: Vec<f32> = values(&mut rng, m * k);
    let w: Vec<f32> = values(&mut rng, k * n);
    let mut rhs = vec![0u8; bf16p12::BF16P12_B32.packed_size(n, k, 0).unwrap()];
    bf16p12::pack_b32(n, k, &FloatSource::kxn(&w, n), None, &mut rhs).unwrap();
    let mut lhs = vec![0u8; BF16P1X4.packed_size(m, k, 0).unwrap()];
    bf16p::pack(&BF16P1X4, m, k, &x, k, &mut lhs).unwrap();
    let mut checked = 0;
    for kn in f32_bf16p_bf16p::available(&cpu).into_iter().filter(|kn| kn.lhs_packing() == BF16P1X4) {
        let mut all = vec![f32::NAN; m * n];
        kn.run(&lhs, &rhs, &mut all, &MatmulArgs::new(m, n, k)).unwrap();
        let row = BF16P1X4.packed_size(1, k, 0).unwrap();
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
        checked += 1;
    }
    // At least the scalar BFDOT kernel, on every CPU.
    assert!(checked >= 1);
}

// ---------------------------------------------------------------------------------------------
// The operator: `Linear` of a float family.
// ---------------------------------------------------------------------------------------------

/// The float families' `Linear::packed_size` and `Linear::pack` (inherent functions of each
/// family's `Linear`), for the generic tests below.
trait FloatLayer: Operator<Dst: Bits, Src: Bits> {
    /// The bias type the family's packer takes.
    type Bias: Element;
    fn packed_size(n: usize, k: usize) -> qgemm::Result<usize>;
    fn pack<'w>(
        n: usize,
        k: usize,
        w: &FloatSource<'_, Self::Src>,
        bias: Option<&[Self::Bias]>,
        buf: &'w mut [u8],
    ) -> qgemm::Result<Linear<'w, Self>>;
}

macro_rules! float_layer {
    ($($fam:ty: $bias:ty),+ $(,)?) => {$(
        impl FloatLayer for $fam {
            type Bias = $bias;
            fn packed_size(n: usize, k: usize) -> qgemm::Result<usize> {
                Linear::<$fam>::packed_size(n, k)
            }
            fn pack<'w>(
                n: usize,
                k: usize,
                w: &FloatSource<'_, Self::Src>,
                bias: Option<&[$bias]>,
                buf: &'w mut [u8],
            ) -> qgemm::Result<Linear<'w, $fam>> {
                Linear::<$fam>::pack(n, k, w, bias, buf)
            }
        }
    )+};
}

float_layer!(
    f32_f32_f32p::F32F32F32p: f32,
    f16_f16_f16p::F16F16F16p: f16,
    f32_bf16p_bf16p::F32Bf16pBf16p: f32,
    f16_bf16p_bf16p::F16Bf16pBf16p: f16,
);

fn same_bits<T: Bits>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.bits() == y.bits())
}

/// The scalar kernel the layer's weights (the family's preferred packing) and activations (its
/// preferred LHS, where it fixes one) go to.
fn preferred_scalar<F: Family>() -> &'static Descriptor<F> {
    let found: Vec<_> = F::kernels()
        .iter()
        .copied()
        .filter(|d| {
            let (lhs, rhs) = formats_of(d);
            d.tier() == Tier::Scalar && rhs == F::PREFERRED_RHS && F::PREFERRED_LHS.is_none_or(|l| l == lhs)
        })
        .collect();
    assert_eq!(found.len(), 1, "{}: the scalar kernels of the preferred packings", F::NAME);
    found[0]
}

/// `Linear` of family `F` gives the bits of its kernel run directly on the same packed
/// operands, whole, in parts and on threads, for several `m`.
fn linear_matches_kernel<F: FloatLayer>(n: usize, k: usize, seed: u64) {
    let cpu = cpu();
    let mut rng = Rng(seed);
    let w: Vec<F::Src> = values(&mut rng, n * k);
    let bias: Vec<F::Bias> = values(&mut rng, n);
    let mut packed = vec![0u8; F::packed_size(n, k).unwrap()];
    let layer = F::pack(n, k, &FloatSource::nxk(&w, k), Some(&bias), &mut packed).unwrap();
    assert_eq!(layer.packing(), F::PREFERRED_RHS);
    let clamp = Clamp::new(-0.25, 0.5).unwrap();
    let scalar = preferred_scalar::<F>();
    for m in [1, 7, 13] {
        let x: Vec<F::Src> = values(&mut rng, m * k);
        let mut scratch = vec![0u8; layer.scratch_size(m).unwrap()];
        let mut whole = vec![F::Dst::from_f32(f32::NAN); m * n];
        let call = layer.prepare(&cpu, m, &x, &mut scratch).unwrap().with_clamp(clamp);
        call.run(&mut whole).unwrap();
        // The layer's kernel is the family's choice for `m`.
        let chosen = qgemm::matmul::select_for::<F>(&cpu, m, &F::PREFERRED_RHS).unwrap();
        assert_eq!(call.kernel(), chosen, "{} m={m}", F::NAME);
        // The scalar kernel of the same formats, on the same operands.
        let mut scratch2 = vec![0u8; layer.scratch_size(m).unwrap()];
        let reference = layer.prepare_with(&[scalar], &cpu, m, &x, &mut scratch2).unwrap().with_clamp(clamp);
        assert_eq!(reference.kernel().name(), scalar.name());
        let mut want = vec![F::Dst::default(); m * n];
        reference.run(&mut want).unwrap();
        assert!(same_bits(&whole, &want), "{} m={m}: {} differs from scalar", F::NAME, call.kernel().name());
        // `run_with` that kernel list: the same bits again.
        let mut with = vec![F::Dst::from_f32(f32::NAN); m * n];
        let mut scratch3 = vec![0u8; layer.scratch_size_with(&[scalar], m).unwrap()];
        layer.run_with(&[scalar], &cpu, m, &x, &mut with, &mut scratch3).unwrap();
        let mut want_unclamped = vec![F::Dst::default(); m * n];
        layer.prepare_with(&[scalar], &cpu, m, &x, &mut scratch2).unwrap().run(&mut want_unclamped).unwrap();
        assert!(same_bits(&with, &want_unclamped), "{} m={m}: run_with", F::NAME);
        for parts in [2, 3, 5] {
            let mut out = vec![F::Dst::from_f32(f32::NAN); m * n];
            for p in call.parts(&mut out, parts).unwrap() {
                p.run();
            }
            assert!(same_bits(&out, &whole), "{} m={m}: {parts} parts", F::NAME);
        }
        let mut out = vec![F::Dst::from_f32(f32::NAN); m * n];
        call.run_parallel(&mut out, 2).unwrap();
        assert!(same_bits(&out, &whole), "{} m={m}: threads", F::NAME);
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
        Linear::<F>::from_packed(n, k, 0, &weights[..weights.len() - 1]),
        Err(Error::BufferTooShort { .. })
    ));
    assert_eq!(Linear::<F>::from_packed(n, k, 0, weights).unwrap().weights(), weights);
    assert!(matches!(Linear::<F>::from_packed(n, k, 32, weights), Err(Error::Unsupported { .. })));
    assert!(matches!(F::packed_size(0, k), Err(Error::ZeroDim { .. })));
    // A kernel of other formats is refused: one that reads another weight packing with
    // `PackingMismatch` naming both packings; one that reads these weights but another LHS
    // packing than the family's preferred one (the BFDOT kernel) with `Unsupported` (`Mr`: its
    // LHS rows per tile) where this CPU runs it, else with the feature it lacks.
    let x: Vec<F::Src> = values(&mut rng, k);
    let mut scratch = vec![0u8; 4096];
    let mut others = 0;
    for &other in F::kernels().iter().filter(|d| d.name() != scalar.name() && formats_of(d).1 != F::PREFERRED_RHS) {
        let got = layer.prepare_with(&[other], &cpu, 1, &x, &mut scratch).map(|p| p.kernel().name());
        let want = formats_of(other).1;
        assert!(
            matches!(got, Err(Error::PackingMismatch { weights, kernel }) if weights == F::PREFERRED_RHS && kernel == want),
            "{}: {got:?}",
            other.name()
        );
        others += 1;
    }
    for &other in F::kernels().iter().filter(|d| {
        let (lhs, rhs) = formats_of(d);
        rhs == F::PREFERRED_RHS && F::PREFERRED_LHS.is_some_and(|l| l != lhs)
    }) {
        let got = layer.prepare_with(&[other], &cpu, 1, &x, &mut scratch).map(|p| p.kernel().name());
        match other.missing_feature(&cpu) {
            None => assert!(
                matches!(got, Err(Error::Unsupported { param: Param::Mr, value }) if Some(value) == other.packing_on(&cpu).map(|p| p.mr)),
                "{}: {got:?}",
                other.name()
            ),
            Some(f) => {
                assert!(matches!(got, Err(Error::UnsupportedCpu { needs }) if needs == f), "{}: {got:?}", other.name())
            }
        }
        others += 1;
    }
    // Every family but f16_bf16p_bf16p (one packing) has kernels of other formats.
    assert_eq!(others > 0, F::NAME != "f16_bf16p_bf16p", "{}: {others} kernels of other formats", F::NAME);
}

#[test]
fn float_linear_matches_its_kernels() {
    linear_matches_kernel::<f32_f32_f32p::F32F32F32p>(37, 29, 1);
    linear_matches_kernel::<f16_f16_f16p::F16F16F16p>(70, 9, 2);
    linear_matches_kernel::<f32_bf16p_bf16p::F32Bf16pBf16p>(25, 33, 3);
    linear_matches_kernel::<f16_bf16p_bf16p::F16Bf16pBf16p>(13, 6, 4);
}

/// Moderate values (no overflow when multiplied by the input scales below).
fn moderate<T: Element>(rng: &mut Rng, len: usize) -> Vec<T> {
    (0..len).map(|_| T::from_f32(rng.f32(-2.0, 2.0))).collect()
}

/// `Linear::with_input_scale` of a float family computes exactly what the layer computes on
/// the activations multiplied by the scales beforehand (`x[i][j] * scale[j]` in f32, rounded to
/// the activation type), whole and in parts, with the scaled copy in the scratch (also for the
/// families that read the rows in place, which need no scratch without a scale).
fn input_scale_matches_prescaled<F: FloatLayer>(n: usize, k: usize, seed: u64) {
    let cpu = cpu();
    let mut rng = Rng(seed);
    let w: Vec<F::Src> = moderate(&mut rng, n * k);
    let bias: Vec<F::Bias> = moderate(&mut rng, n);
    let mut packed = vec![0u8; F::packed_size(n, k).unwrap()];
    let layer = F::pack(n, k, &FloatSource::nxk(&w, k), Some(&bias), &mut packed).unwrap();
    let scale: Vec<f32> = (0..k).map(|j| 0.25 + (j % 7) as f32 * 0.375).collect();
    let scaled = layer.with_input_scale(&scale).unwrap();
    assert_eq!(scaled.input_scale(), Some(&scale[..]));
    assert_eq!(layer.input_scale(), None);
    for m in [1, 6, 13] {
        let x: Vec<F::Src> = moderate(&mut rng, m * k);
        let xs: Vec<F::Src> = x.iter().enumerate().map(|(i, v)| F::Src::from_f32(v.to_f32() * scale[i % k])).collect();
        let plain_scratch = layer.scratch_size(m).unwrap();
        let scaled_scratch = scaled.scratch_size(m).unwrap();
        assert!(scaled_scratch > plain_scratch, "{} m={m}: {scaled_scratch} vs {plain_scratch}", F::NAME);
        if qgemm::Params::lhs_stride(&<F::Params as qgemm::Params>::DEFAULT).is_some() {
            assert_eq!(plain_scratch, 0, "{}: rows read in place need no scratch", F::NAME);
        }
        let mut want = vec![F::Dst::from_f32(f32::NAN); m * n];
        layer.run(&cpu, m, &xs, &mut want, &mut vec![0u8; plain_scratch]).unwrap();
        let mut scratch = vec![0u8; scaled_scratch];
        let mut got = vec![F::Dst::from_f32(f32::NAN); m * n];
        scaled.run(&cpu, m, &x, &mut got, &mut scratch).unwrap();
        assert!(same_bits(&got, &want), "{} m={m}: scaled layer differs from prescaled activations", F::NAME);
        // The scale was applied: the unscaled layer gives other outputs on `x`.
        let mut unscaled = vec![F::Dst::from_f32(f32::NAN); m * n];
        layer.run(&cpu, m, &x, &mut unscaled, &mut vec![0u8; plain_scratch]).unwrap();
        assert!(!same_bits(&unscaled, &want), "{} m={m}: the scale changed nothing", F::NAME);
        // The same kernel, and the same bits in parts.
        let call = scaled.prepare(&cpu, m, &x, &mut scratch).unwrap();
        assert_eq!(call.kernel(), layer.kernel(&cpu, m).unwrap());
        let mut out = vec![F::Dst::from_f32(f32::NAN); m * n];
        for p in call.parts(&mut out, 3).unwrap() {
            p.run();
        }
        assert!(same_bits(&out, &want), "{} m={m}: scaled, in parts", F::NAME);
        // The scratch must hold the scaled copy.
        let short = scaled_scratch - 1;
        assert!(
            matches!(scaled.prepare(&cpu, m, &x, &mut scratch[..short]), Err(Error::BufferTooShort { .. })),
            "{} m={m}: short scratch",
            F::NAME
        );
    }
    // The scales: `k` finite values.
    assert!(matches!(
        layer.with_input_scale(&scale[..k - 1]),
        Err(Error::BufferTooShort { buffer: Buffer::InputScale, given, needed }) if given == k - 1 && needed == k
    ));
    for bad in [f32::NAN, f32::INFINITY] {
        let mut s = scale.clone();
        s[k / 2] = bad;
        assert!(matches!(
            layer.with_input_scale(&s),
            Err(Error::NonFinite { buffer: Buffer::InputScale, index }) if index == k / 2
        ));
    }
}

#[test]
fn float_linear_applies_input_scales() {
    input_scale_matches_prescaled::<f32_f32_f32p::F32F32F32p>(37, 29, 11);
    input_scale_matches_prescaled::<f16_f16_f16p::F16F16F16p>(70, 9, 12);
    input_scale_matches_prescaled::<f32_bf16p_bf16p::F32Bf16pBf16p>(25, 33, 13);
    input_scale_matches_prescaled::<f16_bf16p_bf16p::F16Bf16pBf16p>(13, 6, 14);
}

// ---------------------------------------------------------------------------------------------
// Non-finite inputs: rejected at every validated entry point.
// ---------------------------------------------------------------------------------------------

const NON_FINITE: [f32; 3] = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY];

/// `Err(NonFinite { buffer, index })`, and `out` still all `fill`.
fn rejected<T: PartialEq + core::fmt::Debug>(
    what: &str,
    got: qgemm::Result<()>,
    buffer: Buffer,
    index: usize,
    out: &[T],
    fill: T,
) {
    assert_eq!(got, Err(Error::NonFinite { buffer, index }), "{what}");
    assert!(out.iter().all(|v| *v == fill), "{what}: wrote its output");
}

/// A float RHS packer of `T` weights and biases, for fixed `n`, `k` and format.
type RhsPacker<'a, T> = dyn Fn(&FloatSource<'_, T>, Option<&[T]>, &mut [u8]) -> qgemm::Result<()> + 'a;

/// The float RHS packers with `T` weights: a non-finite weight (either layout, a row stride
/// past the row) or bias is rejected at its index in the caller's slice, nothing written; a
/// non-finite value in the stride's gap is not read, so it is accepted.
fn rhs_packers_reject<T: Element>(pack: &RhsPacker<'_, T>) {
    let (n, k) = (13, 6);
    for bad in NON_FINITE {
        for layout in [Layout::NxK, Layout::KxN] {
            let (rows, row) = if layout == Layout::NxK { (n, k) } else { (k, n) };
            let stride = row + 2;
            let mut data = vec![T::from_f32(0.5); rows * stride];
            let bias = vec![T::from_f32(0.25); n];
            let mut out = vec![0xA5u8; 4096];
            // In the gap: not part of the matrix.
            data[stride + row] = T::from_f32(bad);
            pack(&FloatSource { data: &data, layout, stride }, Some(&bias), &mut out).unwrap();
            data[stride + row] = T::from_f32(0.5);
            for at in [0, 2 * stride + 1, (rows - 1) * stride + row - 1] {
                let mut data = data.clone();
                data[at] = T::from_f32(bad);
                out.fill(0xA5);
                let got = pack(&FloatSource { data: &data, layout, stride }, Some(&bias), &mut out);
                rejected(&format!("{} {layout:?} {bad} at {at}", T::NAME), got, Buffer::Rhs, at, &out, 0xA5);
            }
            let mut bias = bias.clone();
            bias[n - 2] = T::from_f32(bad);
            out.fill(0xA5);
            let got = pack(&FloatSource { data: &data, layout, stride }, Some(&bias), &mut out);
            rejected(&format!("{} bias {bad}", T::NAME), got, Buffer::Bias, n - 2, &out, 0xA5);
        }
    }
}

#[test]
fn non_finite_inputs_are_rejected() {
    let (n, k) = (13, 6);
    for fmt in [F32P16, F32P8] {
        rhs_packers_reject::<f32>(&|src, b, out| f32p::pack(&fmt, n, k, src, b, out));
    }
    for fmt in [F16P32, F16P16] {
        rhs_packers_reject::<f16>(&|src, b, out| f16p::pack(&fmt, n, k, src, b, out));
    }
    rhs_packers_reject::<f32>(&|src, b, out| bf16p12::pack_b32(n, k, src, b, out));
    rhs_packers_reject::<f16>(&|src, b, out| bf16p12::pack_b16(n, k, src, b, out));
    // `pack_b32` with f16 weights and an f32 bias.
    for bad in NON_FINITE {
        let mut w = vec![f16::ONE; n * k];
        let mut out = vec![0xA5u8; 4096];
        let got = bf16p12::pack_b32(n, k, &FloatSource::nxk(&w, k), Some(&[bad; 13]), &mut out);
        rejected(&format!("pack_b32 f16 bias {bad}"), got, Buffer::Bias, 0, &out, 0xA5);
        w[n * k - 1] = f16::from_f32(bad);
        let got = bf16p12::pack_b32(n, k, &FloatSource::nxk(&w, k), Some(&[0.0; 13]), &mut out);
        rejected(&format!("pack_b32 f16 {bad}"), got, Buffer::Rhs, n * k - 1, &out, 0xA5);
    }
    // The bf16 LHS packer, f32 and f16 rows, both formats.
    let (m, stride) = (11, k + 3);
    for bad in NON_FINITE {
        for fmt in [BF16P8X4, BF16P1X4] {
            let mut out = vec![0xA5u8; fmt.packed_size(m, k, 0).unwrap()];
            for at in [0, 3 * stride + 2, (m - 1) * stride + k - 1] {
                let mut x = vec![1.0f32; m * stride];
                x[stride + k] = bad; // in the gap: not read
                bf16p::pack(&fmt, m, k, &x, stride, &mut out).unwrap();
                out.fill(0xA5);
                x[at] = bad;
                let got = bf16p::pack(&fmt, m, k, &x, stride, &mut out);
                rejected(&format!("bf16p f32 mr={} {bad} at {at}", fmt.mr), got, Buffer::Lhs, at, &out, 0xA5);
                let x: Vec<f16> = x.iter().map(|&v| f16::from_f32(v)).collect();
                let got = bf16p::pack(&fmt, m, k, &x, stride, &mut out);
                rejected(&format!("bf16p f16 mr={} {bad} at {at}", fmt.mr), got, Buffer::Lhs, at, &out, 0xA5);
            }
        }
    }
    // The kernels that read the rows in place (every one this CPU runs), from a later row
    // tile with a padded stride: the index is the one in the caller's slice.
    rows_kernels_reject::<f32_f32_f32p::F32F32F32p>(F32P16, F32P8);
    rows_kernels_reject::<f16_f16_f16p::F16F16F16p>(F16P32, F16P16);
    // The operator layer.
    layer_rejects::<f32_f32_f32p::F32F32F32p>();
    layer_rejects::<f16_f16_f16p::F16F16F16p>();
    layer_rejects::<f32_bf16p_bf16p::F32Bf16pBf16p>();
    layer_rejects::<f16_bf16p_bf16p::F16Bf16pBf16p>();
}

fn rows_kernels_reject<F: Family<Params = LhsStride, Dst: Bits, Lhs: Element>>(a: RhsPacking, b: RhsPacking) {
    let cpu = cpu();
    let (m, n, k, stride) = (13, 20, 7, 9);
    let rhs = vec![0u8; 1 << 14]; // zero weights and biases: the contents do not matter
    let mut ran = 0;
    for d in F::kernels().iter().filter(|d| [a, b].contains(&formats_of(d).1)) {
        let Ok(kn) = d.resolve(&cpu) else { continue };
        for bad in NON_FINITE {
            // Rows 6.. (the second row tile), 7 rows.
            let args = MatmulArgs::new(m, n, k).with_lhs_stride(stride).with_rect(6, 0, 7, n);
            let mut x = vec![F::Lhs::from_f32(1.0); m * stride];
            x[6 * stride - 1] = F::Lhs::from_f32(bad); // row 5: outside the call
            x[7 * stride + k] = F::Lhs::from_f32(bad); // in the gap of row 7
            let mut dst = vec![F::Dst::from_f32(7.0); 7 * n];
            kn.run(&x, &rhs, &mut dst, &args).unwrap();
            assert!(dst.iter().all(|v| v.to_f32() == 0.0), "{}", kn.name());
            for at in [6 * stride, 9 * stride + 3, 12 * stride + k - 1] {
                let mut x = x.clone();
                x[at] = F::Lhs::from_f32(bad);
                dst.fill(F::Dst::from_f32(7.0));
                let got = kn.run(&x, &rhs, &mut dst, &args);
                let what = format!("{} {bad} at {at}", kn.name());
                rejected(&what, got, Buffer::Lhs, at, &dst, F::Dst::from_f32(7.0));
            }
        }
        ran += 1;
    }
    assert!(ran >= 2, "{}: {ran} kernels", F::NAME);
}

/// `Linear::run` and `Linear::prepare` of a float family reject a non-finite activation at its
/// index, writing no output; with an input scale, an activation whose scaled value overflows is
/// rejected at its index too.
fn layer_rejects<F: FloatLayer>() {
    let cpu = cpu();
    let (n, k) = (13, 6);
    let w = vec![F::Src::from_f32(0.5); n * k];
    let mut packed = vec![0u8; F::packed_size(n, k).unwrap()];
    let layer = F::pack(n, k, &FloatSource::nxk(&w, k), None, &mut packed).unwrap();
    for m in [1, 9] {
        let mut scratch = vec![0u8; layer.scratch_size(m).unwrap()];
        for bad in NON_FINITE {
            for at in [0, m * k - 1] {
                let mut x = vec![F::Src::from_f32(1.0); m * k];
                x[at] = F::Src::from_f32(bad);
                let mut out = vec![F::Dst::from_f32(7.0); m * n];
                let got = layer.run(&cpu, m, &x, &mut out, &mut scratch);
                rejected(
                    &format!("{} run m={m} {bad} at {at}", F::NAME),
                    got,
                    Buffer::Lhs,
                    at,
                    &out,
                    F::Dst::from_f32(7.0),
                );
                let got = layer.prepare(&cpu, m, &x, &mut scratch).map(|_| ());
                assert_eq!(got, Err(Error::NonFinite { buffer: Buffer::Lhs, index: at }), "{} prepare", F::NAME);
            }
        }
        // The largest finite activation times 4 overflows.
        let scale = vec![4.0f32; k];
        let scaled = layer.with_input_scale(&scale).unwrap();
        let mut scratch = vec![0u8; scaled.scratch_size(m).unwrap()];
        let mut x = vec![F::Src::from_f32(1.0); m * k];
        let at = m * k - 2;
        x[at] = F::Src::MAX;
        let mut out = vec![F::Dst::from_f32(7.0); m * n];
        let got = scaled.run(&cpu, m, &x, &mut out, &mut scratch);
        rejected(&format!("{} scaled m={m}", F::NAME), got, Buffer::Lhs, at, &out, F::Dst::from_f32(7.0));
    }
}

// ---------------------------------------------------------------------------------------------
// Selection.
// ---------------------------------------------------------------------------------------------

/// CPUs to select for: none, this one, and every feature the float tiers use.
fn selection_cpus() -> Vec<(&'static str, CpuFeatures)> {
    // SAFETY: these sets are only passed to the selection functions, never used to run a
    // kernel.
    let all = unsafe { CpuFeatures::NONE.with(Feature::Neon).with(Feature::Fp16).with(Feature::Bf16) };
    vec![("none", CpuFeatures::NONE), ("detected", cpu()), ("neon+fp16+bf16", all)]
}

const MS: [usize; 10] = [0, 1, 2, 3, 7, 8, 9, 16, 33, 1000];

/// The bf16 families' `select` takes the BFMMLA kernel and its `bf16p8x4` LHS for every `m`
/// (`m = 1` too, though the BFDOT kernel is a GEMV one), so a row's result does not depend on
/// the batch; `select_for` does the same for the preferred packing, and the BFDOT kernel is
/// reached by asking for its LHS packing.
#[test]
fn bf16_select_takes_bfmmla_for_every_m() {
    for (what, c) in selection_cpus() {
        let bf16 = c.has(Feature::Neon) && c.has(Feature::Bf16) && cfg!(target_arch = "aarch64");
        let first = f32_bf16p_bf16p::select(&c, 1);
        for m in MS {
            let k = f32_bf16p_bf16p::select(&c, m);
            assert_eq!(k, first, "{what} m={m}");
            assert_eq!((k.lhs_packing(), k.rhs_packing()), (BF16P8X4, bf16p12::BF16P12_B32), "{what} m={m}");
            assert_eq!((k.m_step(), k.n_step()), (8, 12), "{what} m={m}: {}", k.name());
            assert_eq!(k.tier(), if bf16 { Tier::Bf16 } else { Tier::Scalar }, "{what} m={m}: {}", k.name());
            assert_eq!(f32_bf16p_bf16p::select_for(&c, m, &bf16p12::BF16P12_B32), Some(k), "{what} m={m}");
            assert_eq!(f32_bf16p_bf16p::select_for(&c, m, &bf16p12::BF16P12_B16), None, "{what} m={m}");
            let h = f16_bf16p_bf16p::select(&c, m);
            assert_eq!((h.lhs_packing(), h.rhs_packing()), (BF16P8X4, bf16p12::BF16P12_B16), "{what} m={m}");
            assert_eq!(h.tier(), k.tier(), "{what} m={m}: {}", h.name());
            assert_eq!(h, f16_bf16p_bf16p::select(&c, 1), "{what} m={m}");
            // The BFDOT kernel: named by its LHS packing.
            let dot = qgemm::matmul::select_from(
                f32_bf16p_bf16p::KERNELS,
                &c,
                m,
                Some(&bf16p12::BF16P12_B32),
                Some(&BF16P1X4),
            )
            .unwrap();
            assert_eq!((dot.m_step(), dot.n_step(), dot.tier()), (1, 36, k.tier()), "{what} m={m}: {}", dot.name());
        }
        if !bf16 {
            assert!(core::ptr::eq(first.descriptor(), &f32_bf16p_bf16p::SCALAR_8X12), "{what}: {}", first.name());
        }
        #[cfg(target_arch = "aarch64")]
        if bf16 {
            assert!(core::ptr::eq(first.descriptor(), &f32_bf16p_bf16p::bf16::BF16_8X12), "{what}: {}", first.name());
            let h = f16_bf16p_bf16p::select(&c, 1);
            assert!(core::ptr::eq(h.descriptor(), &f16_bf16p_bf16p::bf16::BF16_8X12), "{what}: {}", h.name());
        }
    }
}

/// The families that read the rows in place: one kernel for every `m` (they have no GEMV
/// kernels), reading the preferred packing, with the unpacked LHS reported as rows of one
/// (formerly "no LHS format"); `select_for` reaches the other packing.
#[test]
fn unpacked_select_is_the_same_for_every_m() {
    for (what, c) in selection_cpus() {
        let f = f32_f32_f32p::select(&c, 1);
        let h = f16_f16_f16p::select(&c, 1);
        for m in MS {
            assert_eq!(f32_f32_f32p::select(&c, m), f, "{what} m={m}");
            assert_eq!(f16_f16_f16p::select(&c, m), h, "{what} m={m}");
            let f8 = f32_f32_f32p::select_for(&c, m, &F32P8).unwrap();
            assert_eq!(f8.rhs_packing(), F32P8, "{what} m={m}");
            assert_eq!(f8.tier(), f.tier(), "{what} m={m}");
            let h16 = f16_f16_f16p::select_for(&c, m, &F16P16).unwrap();
            assert_eq!(h16.rhs_packing(), F16P16, "{what} m={m}");
            assert_eq!(h16.tier(), h.tier(), "{what} m={m}");
            assert_eq!(f32_f32_f32p::select_for(&c, m, &F16P32), None, "{what} m={m}");
        }
        assert_eq!((f.lhs_packing(), f.rhs_packing()), (rows(LhsFormat::F32), F32P16), "{what}");
        assert_eq!((h.lhs_packing(), h.rhs_packing()), (rows(LhsFormat::F16), F16P32), "{what}");
        assert_eq!(f32_f32_f32p::PREFERRED_RHS, F32P16);
        assert_eq!(f16_f16_f16p::PREFERRED_RHS, F16P32);
        let neon = c.has(Feature::Neon) && cfg!(target_arch = "aarch64");
        assert_eq!(f.tier(), if neon { Tier::Neon } else { Tier::Scalar }, "{what}: {}", f.name());
        let fp16 = neon && c.has(Feature::Fp16);
        assert_eq!(h.tier(), if fp16 { Tier::Fp16 } else { Tier::Scalar }, "{what}: {}", h.name());
    }
    // Every kernel of the unpacked families reads rows in place.
    for d in f32_f32_f32p::KERNELS {
        assert_eq!(formats_of(d).0, rows(LhsFormat::F32), "{}", d.name());
        assert_eq!(d.shape().lhs, f32_f32_f32p::LHS_FORMAT);
    }
    for d in f16_f16_f16p::KERNELS {
        assert_eq!(formats_of(d).0, rows(LhsFormat::F16), "{}", d.name());
        assert_eq!(d.shape().lhs, f16_f16_f16p::LHS_FORMAT);
    }
}

/// Sizes near `usize::MAX` are `SizeOverflow`, never a panic or a wrapped index.
#[test]
fn huge_strides_and_starts_are_size_overflow() {
    let cpu = CpuFeatures::NONE;
    let kn = f32_f32_f32p::SCALAR_6X16.resolve(&cpu).unwrap();
    let (x, rhs, mut dst) = (vec![0f32; 64], vec![0u8; 4096], vec![0f32; 64]);
    let huge = MatmulArgs::new(6, 1, 4).with_lhs_stride(usize::MAX / 2);
    assert!(matches!(kn.run(&x, &rhs, &mut dst, &huge), Err(Error::SizeOverflow)));
    let far = MatmulArgs::new(1, 1, 4).with_rect(usize::MAX / 6 * 6, 0, 1, 1).with_lhs_stride(4);
    assert!(matches!(kn.run(&x, &rhs, &mut dst, &far), Err(Error::SizeOverflow)));
    assert!(matches!(F32P16.packed_size(usize::MAX, 4, 0), Err(Error::SizeOverflow)));
    assert!(matches!(BF16P8X4.packed_size(8, usize::MAX, 0), Err(Error::SizeOverflow)));
}
