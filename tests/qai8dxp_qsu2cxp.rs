//! Family `qai8dxp_qsu2cxp`: 2-bit weight codes through a 4-entry look-up table. The generic
//! suite (golden vectors of both KleidiAI kernels with the default and a custom table, every
//! tier against the scalar reference, tails, clamps, split execution, canaries, rejections),
//! and this family's own checks: the two scaling orders (GEMV packing, GEMM packing), the
//! table given at run time and its rejection, the padding columns, the packer's rejections,
//! and the divergence from KleidiAI: its GEMV kernel writes only row 0 when `m > 1`, qgemm's
//! computes every row.

#[macro_use]
mod common;

use common::suite::{Fixture, all_packings, packing_of, scalar_kernel};
use common::{Case, Rng, RngBytes, TierReport, assert_bits_eq, check_tiers_against_scalar, info, run_guarded};
use qgemm::lhs::qai8dxp;
use qgemm::qai8dxp_qsu2cxp::{self as fam, PACKING_1X4, PACKING_4X4, Qai8dxpQsu2cxp};
use qgemm::rhs::qsu2cxp::{self, DEFAULT_LUT};
use qgemm::{CpuFeatures, Family, Lut, MatmulArgs, Packing, Result};
use serde_json::Value;

/// The table a golden case's packer got (`None`: the default).
fn case_lut(case: &Case) -> Option<[i32; 4]> {
    let lut = &case.json["rhs_packer"]["params"]["lut"];
    lut.as_array().map(|a| core::array::from_fn(|i| a[i].as_i64().unwrap() as i32))
}

fn golden_rhs(case: &Case, p: &Packing) -> Vec<u8> {
    let (n, k) = (case.n(), case.k());
    let (raw, stride) = case.rhs_raw();
    let scale = case.f32s(&case.json["inputs"]["rhs_scale"]["file"]);
    let bias = case.bias();
    let lut = case_lut(case);
    let mut out = vec![0u8; qsu2cxp::packed_size(n, k, p).unwrap()];
    qsu2cxp::pack(p, n, k, &raw, stride, &scale, bias.as_deref(), lut.as_ref(), &mut out).unwrap();
    out
}

/// Random codes, scales of either sign in [0.001, 0.1], a bias; packed with `lut`.
fn random_rhs(rng: &mut Rng, p: &Packing, n: usize, k: usize, lut: Option<&[i32; 4]>) -> Vec<u8> {
    let raw = rng.bytes(n * k / 4);
    let scale: Vec<f32> = (0..n).map(|c| rng.f32(0.001, 0.1) * if c % 3 == 1 { -1.0 } else { 1.0 }).collect();
    let bias: Vec<f32> = (0..n).map(|_| rng.f32(-1.0, 1.0)).collect();
    let mut out = vec![0u8; qsu2cxp::packed_size(n, k, p).unwrap()];
    qsu2cxp::pack(p, n, k, &raw, k / 4, &scale, Some(&bias), lut, &mut out).unwrap();
    out
}

/// Codes all from `byte` (four per byte), scales 1, no bias, packed with `lut`.
fn filled_rhs_into(p: &Packing, n: usize, k: usize, byte: u8, lut: Option<&[i32; 4]>, out: &mut [u8]) {
    let raw = vec![byte; n * k / 4];
    qsu2cxp::pack(p, n, k, &raw, k / 4, &vec![1.0; n], None, lut, out).unwrap();
}

fn packed_lhs(p: &Packing, m: usize, k: usize, x: &[f32]) -> Vec<u8> {
    let mut lhs = vec![0u8; qai8dxp::packed_size(m, k, p).unwrap()];
    qai8dxp::quantize_pack(p, m, k, 0, x, k, &mut lhs).unwrap();
    lhs
}

struct Fx;

impl Fixture for Fx {
    type Src = f32;
    type F = Qai8dxpQsu2cxp;
    const BLS: &'static [usize] = &[0];

    fn pack_lhs(
        p: &Packing,
        m: usize,
        k: usize,
        _bl: usize,
        start: usize,
        x: &[f32],
        stride: usize,
        out: &mut [u8],
    ) -> Result<()> {
        qai8dxp::quantize_pack(p, m, k, start, x, stride, out)
    }

    fn pack_golden_rhs(case: &Case, p: &Packing) -> Vec<u8> {
        golden_rhs(case, p)
    }

    fn pack_random_rhs(rng: &mut Rng, p: &Packing, n: usize, k: usize, _bl: usize) -> Vec<u8> {
        random_rhs(rng, p, n, k, None)
    }

    /// Four codes per byte with the default table: 0x00 every weight -2, 0xff every weight +1.
    fn pack_filled_rhs_into(p: &Packing, n: usize, k: usize, _bl: usize, byte: u8, out: &mut [u8]) {
        filled_rhs_into(p, n, k, byte, None, out)
    }

    fn check_golden_sizes(case: &Case, pj: &Value, p: &Packing) {
        let (n, k) = (case.n(), case.k());
        let g = |a: &str, b: &str| pj[a][b].as_u64().unwrap() as usize;
        common::rhs::check_qai8dxp_sizes(case, pj, p);
        assert_eq!(qsu2cxp::packed_size(n, k, p).unwrap(), g("rhs_packed", "size"));
        assert_eq!(qsu2cxp::tile_stride(k, p.nr).unwrap(), g("rhs_packed", "tile_stride"));
        assert_eq!(qsu2cxp::packed_offset(p.nr, k, p).unwrap(), g("rhs_packed", "offset_at_n_idx_eq_nr"));
    }

    /// The kernels take the packer's table.
    fn golden_args(case: &Case, args: MatmulArgs<Lut>) -> MatmulArgs<Lut> {
        args.with_lut(case_lut(case).unwrap_or(DEFAULT_LUT))
    }
}

mod qai8dxp_qsu2cxp {
    use super::*;
    use qgemm::error::{Buffer, Dim, Param, Stride};
    use qgemm::{Clamp, Error};

    family_suite!(super::Fx, qgemm::qai8dxp_qsu2cxp::select);

    const GEMV: &str = "matmul_clamp_f32_qai8dxp1x4_qsu2cxp4x4bf32sf32_1x4_neon_dotprod";
    const GEMM: &str = "matmul_clamp_f32_qai8dxp4x4_qsu2cxp4x4bf32sf32_8x4_neon_dotprod";

    #[test]
    fn edge_inputs_defined_and_equal_in_every_tier() {
        for (p, _bl, out, rhs) in suite::edge_inputs_equal_in_every_tier::<Fx>(true) {
            let (n, k) = (12, suite::EDGE_K);
            let ts = qsu2cxp::tile_stride(k, p.nr).unwrap();
            let bias: Vec<f32> = (0..n)
                .map(|c| {
                    let at = (c / p.nr) * ts + p.nr * k / 4 + 8 * p.nr + 4 * (c % p.nr);
                    f32::from_le_bytes(rhs[at..at + 4].try_into().unwrap())
                })
                .collect();
            // Zero row: q = 127 and offset = -127 cancel exactly; the output is the bias.
            assert_bits_eq(&out[0..n], &bias, &format!("{p:?} zero row"));
            // Alternating ±f32::MAX: the range overflows, multiplier and dq scale are 0.
            assert_bits_eq(&out[3 * n..4 * n], &bias, &format!("{p:?} ±MAX row"));
        }
    }

    /// Each golden packing lists the one KleidiAI kernel of its scaling order, so the suite's
    /// `pj["kernels"][0]` is the GEMV kernel's output for `mr = 1` and the GEMM kernel's for
    /// `mr = 4`; the two orders give different bits, and qgemm's scalar kernel of each packing
    /// reproduces its own kernel's (and not the other's).
    #[test]
    fn golden_outputs_follow_each_kernels_scaling_order() {
        if !common::golden_available("golden_outputs_follow_each_kernels_scaling_order") {
            return;
        }
        let (mut compared, mut differ) = (0usize, 0usize);
        for case in common::cases(Qai8dxpQsu2cxp::NAME) {
            let (m, n, k) = (case.m(), case.n(), case.k());
            let mut outs = Vec::new();
            for pj in case.packings() {
                let p = packing_of(pj);
                let kernels = pj["kernels"].as_array().unwrap();
                assert_eq!(kernels.len(), 1, "{}", case.id);
                let want_name = if p.mr == 1 { GEMV } else { GEMM };
                assert_eq!(kernels[0]["name"].as_str().unwrap(), want_name, "{} {p:?}", case.id);
                let want: Vec<f32> = case.f32s(&kernels[0]["dst"]["none"]);
                let lhs = case.bytes(&pj["lhs_packed"]["file"]);
                let rhs = case.bytes(&pj["rhs_packed"]["file"]);
                let args = Fx::golden_args(&case, MatmulArgs::new(m, n, k));
                let got = run_guarded(&scalar_kernel::<Fx>(&p), &lhs, &rhs, &args);
                assert_bits_eq(&got, &want, &format!("{} {p:?}", case.id));
                outs.push(want);
            }
            assert_eq!(outs.len(), 2, "{}: both packings", case.id);
            compared += m * n;
            differ += outs[0].iter().zip(&outs[1]).filter(|(a, b)| a.to_bits() != b.to_bits()).count();
        }
        // The expectation comes from the cases themselves (each packing's own golden output
        // above); the totals depend on which cases are published, so they are reported, not
        // asserted: only that the two orders differ somewhere (docs/formats.md, §Arithmetic:
        // qai8dxp_qsu2cxp kernels).
        println!("{differ} of {compared} unclamped elements differ between the GEMV and GEMM orders");
        assert!(compared > 0 && differ > 0, "the cases must show the two scaling orders");
    }

    /// The `_lut` cases pack and run with `{-3, -1, 1, 3}`: with the default table instead, the
    /// packed `rsum` and the outputs differ from KleidiAI's (so the table is really applied).
    #[test]
    fn golden_custom_table_cases_need_their_table() {
        if !common::golden_available("golden_custom_table_cases_need_their_table") {
            return;
        }
        let cases: Vec<Case> =
            common::cases(Qai8dxpQsu2cxp::NAME).into_iter().filter(|c| c.id.ends_with("_lut")).collect();
        // However many such cases are published: each records its table, which is not the default.
        assert!(!cases.is_empty(), "no _lut case");
        for case in &cases {
            let lut = case_lut(case).unwrap_or_else(|| panic!("{}: a _lut case without its table", case.id));
            assert_ne!(lut, DEFAULT_LUT, "{}", case.id);
            let (m, n, k) = (case.m(), case.n(), case.k());
            for pj in case.packings() {
                let p = packing_of(pj);
                let golden_rhs = case.bytes(&pj["rhs_packed"]["file"]);
                assert_eq!(super::golden_rhs(case, &p), golden_rhs, "{}", case.id);
                // The codes are stored unmapped: only the rsum of the default table differs.
                let (raw, stride) = case.rhs_raw();
                let scale = case.f32s(&case.json["inputs"]["rhs_scale"]["file"]);
                let mut default = vec![0u8; golden_rhs.len()];
                qsu2cxp::pack(&p, n, k, &raw, stride, &scale, None, None, &mut default).unwrap();
                let ts = qsu2cxp::tile_stride(k, p.nr).unwrap();
                for (t, (a, b)) in default.chunks(ts).zip(golden_rhs.chunks(ts)).enumerate() {
                    let data = p.nr * k / 4;
                    assert_eq!(a[..data], b[..data], "{} tile {t}: codes", case.id);
                    assert_eq!(a[data + 16..], b[data + 16..], "{} tile {t}: scale, bias", case.id);
                }
                assert_ne!(default, golden_rhs, "{}: rsum", case.id);
                let lhs = case.bytes(&pj["lhs_packed"]["file"]);
                let want = case.f32s(&pj["kernels"][0]["dst"]["none"]);
                let kernel = scalar_kernel::<Fx>(&p);
                let with_default = run_guarded(&kernel, &lhs, &golden_rhs, &MatmulArgs::new(m, n, k));
                assert!(with_default.iter().zip(&want).any(|(a, b)| a != b), "{} {p:?}", case.id);
            }
        }
    }

    #[test]
    fn run_rejects_tables_outside_the_int8_safe_range_before_any_write() {
        let (m, n, k) = (5, 12, 64);
        let mut rng = Rng(4);
        let x: Vec<f32> = (0..m * k).map(|_| rng.f32(-1.0, 1.0)).collect();
        let cpu = CpuFeatures::detect();
        for kernel in fam::available(&cpu) {
            let p = kernel.packing();
            let (lhs, rhs) = (packed_lhs(&p, m, k, &x), random_rhs(&mut rng, &p, n, k, None));
            for (lut, index, value) in
                [([-2, -1, 0, 64], 3, 64), ([-65, -1, 0, 1], 0, -65), ([-2, 1 << 20, 0, 1], 1, 1 << 20)]
            {
                let mut dst = vec![7.5f32; m * n];
                for args in [MatmulArgs::new(m, n, k), MatmulArgs::new(m, n, k).with_rect(0, 0, 0, 0)] {
                    let e = kernel.run(&lhs, &rhs, &mut dst, &args.with_lut(lut)).unwrap_err();
                    assert_eq!(e, Error::LutOutOfRange { index, value }, "{}", kernel.name());
                }
                assert!(dst.iter().all(|&v| v == 7.5), "{}: wrote on a rejected call", kernel.name());
            }
            // The ends of the range run.
            let mut dst = vec![0f32; m * n];
            kernel.run(&lhs, &rhs, &mut dst, &MatmulArgs::new(m, n, k).with_lut([-64, 63, -64, 63])).unwrap();
        }
        // The other families take no table at all: their parameters are `()` (a table is the
        // 2-bit family's own parameter type, `Lut`, so it cannot reach another family's run).
        let _: MatmulArgs<()> = MatmulArgs::<<qgemm::qai8dxp_qsi8cxp::Qai8dxpQsi8cxp as Family>::Params>::new(1, 4, 32);
    }

    /// `run_unchecked` takes any table and narrows it to int8, as KleidiAI's kernels do.
    #[test]
    fn run_unchecked_narrows_the_table_to_int8() {
        let (m, n, k) = (3, 8, 64);
        let mut rng = Rng(8);
        let x: Vec<f32> = (0..m * k).map(|_| rng.f32(-1.0, 1.0)).collect();
        for kernel in fam::available(&CpuFeatures::detect()) {
            let p = kernel.packing();
            let (lhs, rhs) = (packed_lhs(&p, m, k, &x), random_rhs(&mut rng, &p, n, k, None));
            let run = |lut: [i32; 4]| {
                let mut dst = vec![0f32; m * n];
                let args = qgemm::UncheckedArgs {
                    m,
                    n,
                    k,
                    bl: 0,
                    lhs: lhs.as_ptr(),
                    rhs_packed: rhs.as_ptr(),
                    dst: dst.as_mut_ptr(),
                    dst_stride_row: 4 * n,
                    clamp_min: -f32::MAX,
                    clamp_max: f32::MAX,
                    params: Lut(lut),
                };
                // SAFETY: the kernel runs on this CPU; `m, n, k >= 1`, `k % 32 == 0`; the packed
                // buffers hold the tiles of this packing and `k`; `dst` holds `m x n` dense f32.
                unsafe { kernel.run_unchecked(&args) };
                dst
            };
            let want = run(DEFAULT_LUT);
            let got = run([-2 + 256, -1 - 512, 1 << 16, 1 + (7 << 8)]);
            assert_bits_eq(&got, &want, kernel.name());
        }
    }

    /// The largest products the table allows (`q = ±127/-128` against `w = -64` or `63`) over a
    /// long K, and a random table on shapes with tails: every tier equals the scalar kernel,
    /// which has the sign of the exact result.
    #[test]
    fn custom_tables_agree_in_every_tier() {
        let mut report = TierReport::default();
        let (m, n, k) = (4, 9, 8192);
        let rows: Vec<f32> = (0..m * k)
            .map(|i| match i / k {
                0 => -1.0,
                1 => 1.0,
                2 => {
                    if i % 2 == 0 {
                        -1.0
                    } else {
                        1.0
                    }
                }
                _ => {
                    if i % 3 == 0 {
                        0.5
                    } else {
                        -1.0
                    }
                }
            })
            .collect();
        let lut = [-64, 63, 0, -1];
        for p in all_packings::<Fx>() {
            let lhs = packed_lhs(&p, m, k, &rows);
            for byte in [0x00u8, 0x55, 0x11, 0x1b] {
                let mut rhs = vec![0u8; qsu2cxp::packed_size(n, k, &p).unwrap()];
                filled_rhs_into(&p, n, k, byte, Some(&lut), &mut rhs);
                let args = MatmulArgs::new(m, n, k).with_lut(lut);
                check_tiers_against_scalar::<Qai8dxpQsu2cxp>(&p, &lhs, &rhs, &args, &mut report);
                let out = run_guarded(&scalar_kernel::<Fx>(&p), &lhs, &rhs, &args);
                if byte == 0x00 {
                    // Every weight -64: row 0 (-1) positive, row 1 (+1) negative, both ~64 * k.
                    assert!(out[..n].iter().all(|&v| (v - 64.0 * k as f32).abs() < 0.02 * 64.0 * k as f32));
                    assert!(out[n..2 * n].iter().all(|&v| (v + 64.0 * k as f32).abs() < 0.02 * 64.0 * k as f32));
                }
                if byte == 0x55 {
                    // Every weight 63.
                    assert!(out[..n].iter().all(|&v| (v + 63.0 * k as f32).abs() < 0.02 * 63.0 * k as f32));
                }
            }
        }
        let mut rng = Rng(17);
        for p in all_packings::<Fx>() {
            for (m, n, k) in suite::shapes(0) {
                let k = suite::depth::<Fx>(k);
                let lut: [i32; 4] = core::array::from_fn(|_| (rng.next_u64() % 128) as i32 - 64);
                let x: Vec<f32> = (0..m * k).map(|_| rng.f32(-2.0, 1.5)).collect();
                let (lhs, rhs) = (packed_lhs(&p, m, k, &x), random_rhs(&mut rng, &p, n, k, Some(&lut)));
                let args = MatmulArgs::new(m, n, k).with_lut(lut).with_clamp(Clamp::NONE);
                check_tiers_against_scalar::<Qai8dxpQsu2cxp>(&p, &lhs, &rhs, &args, &mut report);
            }
        }
        report.print("qai8dxp_qsu2cxp custom tables");
    }

    /// KleidiAI's GEMV kernel declares `m == 1` and writes row 0 only when given more rows
    /// (docs/kernels.md, 2-bit weights); qgemm's kernels of that packing compute every row: each
    /// row equals the same row computed alone.
    #[test]
    fn gemv_packing_computes_every_row() {
        let cpu = CpuFeatures::detect();
        let (m, n, k) = (5, 8, 128);
        let mut rng = Rng(11);
        let x: Vec<f32> = (0..m * k).map(|_| rng.f32(-2.0, 2.0)).collect();
        let lut = [-3, -1, 1, 3];
        let p = PACKING_1X4;
        let rhs = random_rhs(&mut rng, &p, n, k, Some(&lut));
        let lhs = packed_lhs(&p, m, k, &x);
        let row_bytes = lhs.len() / m;
        let kernels: Vec<_> = fam::available(&cpu).into_iter().filter(|kn| kn.packing() == p).collect();
        assert!(!kernels.is_empty());
        for kernel in kernels {
            let mut all = vec![f32::NAN; m * n];
            kernel.run(&lhs, &rhs, &mut all, &MatmulArgs::new(m, n, k).with_lut(lut)).unwrap();
            for r in 0..m {
                let one = &lhs[r * row_bytes..(r + 1) * row_bytes];
                let mut row = vec![0f32; n];
                kernel.run(one, &rhs, &mut row, &MatmulArgs::new(1, n, k).with_lut(lut)).unwrap();
                assert_bits_eq(&all[r * n..(r + 1) * n], &row, &format!("{} row {r}", kernel.name()));
            }
        }
    }

    /// Padding columns are not copies of column `n - 1`: codes 0xAA, `rsum`, scale and bias 0,
    /// whatever the table and the last column.
    #[test]
    fn padding_columns_are_code_two_and_zeros() {
        let mut rng = Rng(12);
        for n in 1..=8usize {
            let k = 96;
            let raw = rng.bytes(n * k / 4);
            let scale: Vec<f32> = (0..n).map(|_| rng.f32(0.5, 1.0)).collect();
            let bias: Vec<f32> = (0..n).map(|_| rng.f32(1.0, 2.0)).collect();
            for lut in [None, Some([-3, -1, 1, 3])] {
                let p = PACKING_4X4;
                let mut out = vec![0x11u8; qsu2cxp::packed_size(n, k, &p).unwrap()];
                qsu2cxp::pack(&p, n, k, &raw, k / 4, &scale, Some(&bias), lut.as_ref(), &mut out).unwrap();
                let ts = qsu2cxp::tile_stride(k, 4).unwrap();
                assert_eq!(ts, 4 * (k / 4 + 12));
                let tile = &out[(n - 1) / 4 * ts..];
                for c in n..n.div_ceil(4) * 4 {
                    let i = c % 4;
                    for g in 0..k / 16 {
                        assert_eq!(tile[16 * g + 4 * i..16 * g + 4 * i + 4], [0xaa; 4], "n {n} column {c}");
                    }
                    for extra in 0..3 {
                        let at = k + 16 * extra + 4 * i;
                        assert_eq!(tile[at..at + 4], [0; 4], "n {n} column {c} extra {extra}");
                    }
                }
                // The real columns: rsum = sum of the table values, scale and bias copied.
                let table = lut.unwrap_or(DEFAULT_LUT);
                for c in 0..n {
                    let t = &out[c / 4 * ts..];
                    let i = c % 4;
                    let want: i32 =
                        (0..k).map(|j| table[usize::from((raw[c * k / 4 + j / 4] >> (2 * (j % 4))) & 3)]).sum();
                    assert_eq!(i32::from_le_bytes(t[k + 4 * i..k + 4 * i + 4].try_into().unwrap()), want);
                    assert_eq!(f32::from_le_bytes(t[k + 16 + 4 * i..k + 20 + 4 * i].try_into().unwrap()), scale[c]);
                    assert_eq!(f32::from_le_bytes(t[k + 32 + 4 * i..k + 36 + 4 * i].try_into().unwrap()), bias[c]);
                }
            }
        }
    }

    #[test]
    fn rhs_packer_rejects_bad_input_before_any_write() {
        let p = PACKING_4X4;
        let (n, k) = (5usize, 64usize);
        let raw = vec![0x1bu8; n * k / 4];
        let scale = vec![0.5f32; n];
        let bias = vec![0.25f32; n];
        let mut out = vec![0xeeu8; qsu2cxp::packed_size(n, k, &p).unwrap()];
        let l = out.len();
        #[allow(clippy::type_complexity)]
        let pack = |p: &Packing,
                    n: usize,
                    k: usize,
                    raw: &[u8],
                    stride: usize,
                    s: &[f32],
                    b: Option<&[f32]>,
                    lut: Option<&[i32; 4]>,
                    o: &mut [u8]| qsu2cxp::pack(p, n, k, raw, stride, s, b, lut, o);
        assert_eq!(pack(&p, 0, k, &raw, 16, &scale, None, None, &mut out), Err(Error::ZeroDim { dim: Dim::N }));
        assert_eq!(pack(&p, n, 0, &raw, 16, &scale, None, None, &mut out), Err(Error::ZeroDim { dim: Dim::K }));
        for bad_k in [16, 48, 65, 100] {
            assert_eq!(
                pack(&p, n, bad_k, &raw, 64, &scale, None, None, &mut out),
                Err(Error::NotMultiple { dim: Dim::K, value: bad_k, multiple_of: 32 })
            );
        }
        assert_eq!(
            pack(&p, n, k, &raw, 15, &scale, None, None, &mut out),
            Err(Error::StrideTooSmall { stride: Stride::Rhs, given: 15, needed: 16 })
        );
        assert_eq!(
            pack(&p, n, k, &raw[..79], 16, &scale, None, None, &mut out),
            Err(Error::BufferTooShort { buffer: Buffer::Rhs, given: 79, needed: 80 })
        );
        // A padded stride needs (n - 1) * stride + k/4 bytes.
        assert_eq!(
            pack(&p, n, k, &raw, 17, &scale, None, None, &mut out),
            Err(Error::BufferTooShort { buffer: Buffer::Rhs, given: 80, needed: 84 })
        );
        assert_eq!(
            pack(&p, n, k, &raw, 16, &scale[..4], None, None, &mut out),
            Err(Error::BufferTooShort { buffer: Buffer::Scale, given: 4, needed: 5 })
        );
        assert_eq!(
            pack(&p, n, k, &raw, 16, &scale, Some(&bias[..4]), None, &mut out),
            Err(Error::BufferTooShort { buffer: Buffer::Bias, given: 4, needed: 5 })
        );
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            let mut s = scale.clone();
            s[3] = bad;
            assert_eq!(
                pack(&p, n, k, &raw, 16, &s, None, None, &mut out),
                Err(Error::NonFinite { buffer: Buffer::Scale, index: 3 })
            );
            let mut b = bias.clone();
            b[4] = bad;
            assert_eq!(
                pack(&p, n, k, &raw, 16, &scale, Some(&b), None, &mut out),
                Err(Error::NonFinite { buffer: Buffer::Bias, index: 4 })
            );
        }
        assert_eq!(
            pack(&p, n, k, &raw, 16, &scale, None, Some(&[-2, -1, 0, 100]), &mut out),
            Err(Error::LutOutOfRange { index: 3, value: 100 })
        );
        assert_eq!(
            pack(&p, n, k, &raw, 16, &scale, None, Some(&[i32::MIN, 0, 0, 0]), &mut out),
            Err(Error::LutOutOfRange { index: 0, value: i32::MIN })
        );
        assert_eq!(
            pack(&p, n, k, &raw, 16, &scale, None, None, &mut out[..l - 1]),
            Err(Error::BufferTooShort { buffer: Buffer::RhsPacked, given: l - 1, needed: l })
        );
        for (bad, param, value) in [
            (Packing::int8(4, 8, 4), Param::Nr, 8),
            (Packing::int8(4, 4, 8), Param::Kr, 8),
            (Packing::int4(4, 4, 8), Param::Sr, 2),
            (Packing::int8(4, 4, 3), Param::Kr, 3),
        ] {
            assert_eq!(
                pack(&bad, n, k, &raw, 16, &scale, None, None, &mut out),
                Err(Error::Unsupported { param, value }),
                "{bad:?}"
            );
        }
        assert!(out.iter().all(|&b| b == 0xee), "nothing written on a rejected call");
        assert_eq!(qsu2cxp::packed_size(usize::MAX, 64, &p), Err(Error::SizeOverflow));
        assert!(matches!(qsu2cxp::packed_offset(2, 64, &p), Err(Error::MisalignedStart { .. })));
        assert_eq!(qsu2cxp::packed_offset(4, 64, &p), Ok(4 * (16 + 12)));
        // The int8 family's packings are not this format's.
        let int8 = qgemm::qai8dxp_qsi8cxp::PACKING_4X4;
        assert_eq!(qsu2cxp::packed_size(n, k, &int8), Err(Error::Unsupported { param: Param::Kr, value: 8 }));
    }

    #[test]
    fn run_rejects_depth_off_the_granule() {
        let kernel = fam::select(&CpuFeatures::NONE, 4);
        let (lhs, rhs) = (vec![0u8; 4096], vec![0u8; 4096]);
        let mut dst = vec![0f32; 64];
        for k in [1, 31, 33, 48, 100] {
            let e = kernel.run(&lhs, &rhs, &mut dst, &MatmulArgs::new(4, 4, k)).unwrap_err();
            assert_eq!(e, Error::NotMultiple { dim: Dim::K, value: k, multiple_of: 32 });
            assert_eq!(kernel.rhs_packed_size(4, k, 0), Err(e));
            assert_eq!(kernel.lhs_packed_size(4, k, 0), Err(e));
            assert_eq!(fam::PREFERRED_RHS.tile_stride(k, 0), Err(e));
        }
        const { assert!(!<Qai8dxpQsu2cxp as Family>::BLOCKED) };
    }

    #[test]
    fn catalogue_names_and_packings() {
        let names: Vec<&str> = fam::KERNELS.iter().map(|k| k.name()).collect();
        assert!(names.contains(&"matmul_clamp_f32_qai8dxp1x4_qsu2cxp4x4bf32sf32_1x4_scalar"), "{names:?}");
        assert!(names.contains(&"matmul_clamp_f32_qai8dxp4x4_qsu2cxp4x4bf32sf32_4x4_scalar"), "{names:?}");
        for k in fam::KERNELS.iter().map(|d| info(d)) {
            assert!(k.packing() == PACKING_1X4 || k.packing() == PACKING_4X4, "{}", k.name());
            let (m_step, n_step) = (k.m_step(), k.n_step());
            assert!(m_step % k.packing().mr == 0 && n_step % 4 == 0, "{}", k.name());
        }
        #[cfg(target_arch = "aarch64")]
        {
            // The dotprod tier: KleidiAI's two kernels' packings, qgemm's own tiles.
            use qgemm::qai8dxp_qsu2cxp::dotprod;
            let steps: Vec<(usize, usize)> =
                dotprod::KERNELS.iter().map(|d| (info(d).m_step(), info(d).n_step())).collect();
            assert_eq!(steps, [(1, 16), (1, 4), (16, 4)]);
            assert_eq!(dotprod::DOTPROD_1X4.name(), "matmul_clamp_f32_qai8dxp1x4_qsu2cxp4x4bf32sf32_1x4_neon_dotprod");
            // qgemm's own i8mm GEMM tiles on the GEMM packing.
            use qgemm::qai8dxp_qsu2cxp::i8mm;
            let steps: Vec<(usize, usize)> =
                i8mm::KERNELS.iter().map(|d| (info(d).m_step(), info(d).n_step())).collect();
            assert_eq!(steps, [(16, 4), (8, 4), (4, 4)]);
            assert!(i8mm::KERNELS.iter().all(|d| info(d).packing() == PACKING_4X4));
        }
        assert_eq!(fam::PREFERRED_RHS, PACKING_4X4.rhs(qgemm::RhsFormat::Qsu2cxp));
    }
}
