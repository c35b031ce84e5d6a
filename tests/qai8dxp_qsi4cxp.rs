//! Family `qai8dxp_qsi4cxp`: golden vectors, every tier against the scalar reference, edge
//! inputs, clamps, split execution, canaries and every rejection of the safe API.

mod common;

use common::*;
use qgemm::lhs::qai8dxp;
use qgemm::qai8dxp_qsi4cxp::{self as fam, Qai8dxpQsi4cxp};
use qgemm::rhs::{Int4Encoding, Int4Source, Layout, qsi4cxp};
use qgemm::{Clamp, CpuFeatures, Error, MatmulArgs, Packing, Tier};
use serde_json::Value;

const FAMILY: &str = "qai8dxp_qsi4cxp";

fn packing_of(p: &Value) -> Packing {
    let g = |f: &str| p[f].as_u64().unwrap() as usize;
    Packing { mr: g("mr"), nr: g("nr"), kr: g("kr"), sr: g("sr") }
}

/// Packs a golden case's inputs with our packers.
fn pack_case(case: &Case, p: &Packing) -> (Vec<u8>, Vec<u8>) {
    let (m, n, k) = (case.m(), case.n(), case.k());
    let inp = &case.json["inputs"];
    let x = case.f32s(&inp["lhs"]["file"]);
    let mut lhs_packed = vec![0u8; qai8dxp::packed_size(m, k, p).unwrap()];
    qai8dxp::quantize_pack(p, m, k, 0, &x, k, &mut lhs_packed).unwrap();

    let raw = case.bytes(&inp["rhs"]["file"]);
    let stride = inp["rhs"]["row_stride_bytes"].as_u64().unwrap() as usize;
    let layout = if inp["rhs"]["layout"].as_str().unwrap().starts_with("nxk") { Layout::NxK } else { Layout::KxN };
    let zp = case.json["rhs_packer"]["params"]["rhs_zero_point"].as_u64().unwrap();
    let encoding = if zp == 8 { Int4Encoding::ZeroPoint8 } else { Int4Encoding::Signed };
    let src = Int4Source { data: &raw, layout, stride, encoding };
    let scale = case.f32s(&inp["rhs_scale"]["file"]);
    let bias = if inp["bias"].is_null() { None } else { Some(case.f32s(&inp["bias"]["file"])) };
    let mut rhs_packed = vec![0u8; qsi4cxp::packed_size(n, k, p).unwrap()];
    qsi4cxp::pack(p, n, k, &src, &scale, bias.as_deref(), &mut rhs_packed).unwrap();
    (lhs_packed, rhs_packed)
}

#[test]
fn qai8dxp_qsi4cxp_golden_packed_bytes_sizes_and_offsets() {
    let mut checked = 0;
    for case in cases(FAMILY) {
        let (m, n, k) = (case.m(), case.n(), case.k());
        for pj in case.packings() {
            let p = packing_of(pj);
            let (lhs, rhs) = pack_case(&case, &p);
            let tag = format!("{} {p:?}", case.id);
            assert_eq!(lhs, case.bytes(&pj["lhs_packed"]["file"]), "{tag}: packed LHS");
            assert_eq!(rhs, case.bytes(&pj["rhs_packed"]["file"]), "{tag}: packed RHS");
            let g = |a: &str, b: &str| pj[a][b].as_u64().unwrap() as usize;
            assert_eq!(qai8dxp::packed_size(m, k, &p).unwrap(), g("lhs_packed", "size"), "{tag}");
            assert_eq!(qai8dxp::packed_offset(p.mr, k, &p).unwrap(), g("lhs_packed", "offset_at_m_idx_eq_mr"), "{tag}");
            assert_eq!(qsi4cxp::packed_size(n, k, &p).unwrap(), g("rhs_packed", "size"), "{tag}");
            assert_eq!(qsi4cxp::tile_stride(k, p.nr).unwrap(), g("rhs_packed", "tile_stride"), "{tag}");
            assert_eq!(qsi4cxp::packed_offset(p.nr, k, &p).unwrap(), g("rhs_packed", "offset_at_n_idx_eq_nr"), "{tag}");
            checked += 1;
        }
    }
    assert!(checked >= 40);
}

#[test]
fn qai8dxp_qsi4cxp_golden_outputs_in_every_tier() {
    let cpu = cpu();
    let mut report = TierReport::default();
    let mut compared = 0;
    for case in cases(FAMILY) {
        let (m, n, k) = (case.m(), case.n(), case.k());
        for pj in case.packings() {
            let p = packing_of(pj);
            let lhs = case.bytes(&pj["lhs_packed"]["file"]);
            let rhs = case.bytes(&pj["rhs_packed"]["file"]);
            // Every KleidiAI kernel of this packing wrote the same bits (testing.md §3).
            let gk = &pj["kernels"][0];
            for kernel in fam::KERNELS.iter().filter(|kn| kn.packing() == p) {
                if !kernel.is_available(&cpu) {
                    if !report.skipped.iter().any(|(n, _)| *n == kernel.name()) {
                        report.skipped.push((kernel.name(), kernel.tier()));
                    }
                    continue;
                }
                for which in ["none", "tight"] {
                    let (lo, hi) = case.clamp(which);
                    let args = MatmulArgs::new(m, n, k).with_clamp(Clamp::new(lo, hi).unwrap());
                    let want = case.f32s(&gk["dst"][which]);
                    let what = format!("{} {} [{which}]", case.id, kernel.name());
                    assert_bits_eq(&run_guarded(*kernel, &lhs, &rhs, &args), &want, &what);
                    let split = run_split(*kernel, &lhs, &rhs, &args, m / 2, n / 2);
                    assert_bits_eq(&split, &want, &format!("{what} split 2x2"));
                    compared += 1;
                }
                if !report.ran.contains(&kernel.name()) {
                    report.ran.push(kernel.name());
                }
                assert_eq!(kernel.dst_size(m, n).unwrap() * 4, gk["dst_size"].as_u64().unwrap() as usize);
            }
        }
    }
    report.print("qai8dxp_qsi4cxp golden outputs");
    assert!(compared > 0);
    // Every kernel whose tier this CPU has ran on at least one golden case.
    for kernel in fam::KERNELS.iter().filter(|k| k.is_available(&cpu)) {
        assert!(report.ran.contains(&kernel.name()), "{} never met a golden case", kernel.name());
    }
}

#[test]
fn qai8dxp_qsi4cxp_golden_kernel_offsets() {
    // KleidiAI's offset functions at m_idx = m_step, n_idx = n_step for kernels with our tiles.
    for case in cases(FAMILY) {
        let (n, k) = (case.n(), case.k());
        for pj in case.packings() {
            let p = packing_of(pj);
            for gk in pj["kernels"].as_array().unwrap() {
                let (ms, ns) = (gk["m_step"].as_u64().unwrap() as usize, gk["n_step"].as_u64().unwrap() as usize);
                for kernel in fam::KERNELS.iter().filter(|kn| kn.packing() == p) {
                    let g = |f: &str| gk[f].as_u64().unwrap() as usize;
                    assert_eq!(kernel.lhs_packed_offset(ms, k, 0).unwrap(), g("lhs_packed_offset_at_m_step"));
                    assert_eq!(kernel.rhs_packed_offset(ns, k, 0).unwrap(), g("rhs_packed_offset_at_n_step"));
                    if ms % kernel.m_step() == 0 && ns % kernel.n_step() == 0 {
                        assert_eq!(kernel.dst_offset(ms, ns, n).unwrap() * 4, g("dst_offset_at_steps"));
                    }
                }
            }
        }
    }
}

#[test]
fn qai8dxp_qsi4cxp_lhs_packing_split_at_any_row() {
    let mut rng = Rng(11);
    for p in [fam::PACKING_4X8, fam::PACKING_1X8, fam::PACKING_4X4_KR8] {
        let (m, k) = (11, 70);
        let x: Vec<f32> = (0..m * k).map(|_| rng.f32(-3.0, 2.0)).collect();
        let size = qai8dxp::packed_size(m, k, &p).unwrap();
        let mut whole = vec![0u8; size];
        qai8dxp::quantize_pack(&p, m, k, 0, &x, k, &mut whole).unwrap();
        for m1 in 0..=m {
            let mut parts = vec![0u8; size];
            qai8dxp::quantize_pack(&p, m1, k, 0, &x, k, &mut parts).unwrap();
            let start = qai8dxp::packed_offset(m1 / p.mr * p.mr, k, &p).unwrap();
            qai8dxp::quantize_pack(&p, m - m1, k, m1, &x[m1 * k..], k, &mut parts[start..]).unwrap();
            assert_eq!(parts, whole, "{p:?} split at {m1}");
        }
    }
}

/// A random problem packed for `p`: returns `(lhs_packed, rhs_packed)`.
fn random_problem(rng: &mut Rng, p: &Packing, m: usize, n: usize, k: usize, x: Option<&[f32]>) -> (Vec<u8>, Vec<u8>) {
    let owned: Vec<f32>;
    let x = match x {
        Some(x) => x,
        None => {
            owned = (0..m * k).map(|_| rng.f32(-2.0, 1.5)).collect();
            &owned
        }
    };
    let mut lhs = vec![0u8; qai8dxp::packed_size(m, k, p).unwrap()];
    qai8dxp::quantize_pack(p, m, k, 0, x, k, &mut lhs).unwrap();
    let raw = rng.bytes(n * k.div_ceil(2));
    let scale: Vec<f32> = (0..n).map(|_| rng.f32(0.001, 0.1)).collect();
    let bias: Vec<f32> = (0..n).map(|_| rng.f32(-1.0, 1.0)).collect();
    let mut rhs = vec![0u8; qsi4cxp::packed_size(n, k, p).unwrap()];
    let src = Int4Source::nxk(&raw, k, Int4Encoding::ZeroPoint8);
    qsi4cxp::pack(p, n, k, &src, &scale, Some(&bias), &mut rhs).unwrap();
    (lhs, rhs)
}

fn all_packings() -> Vec<Packing> {
    let mut v: Vec<Packing> = Vec::new();
    for k in fam::KERNELS {
        if !v.contains(&k.packing()) {
            v.push(k.packing());
        }
    }
    v
}

#[test]
fn qai8dxp_qsi4cxp_every_tier_matches_scalar_on_shapes_with_tails() {
    let shapes = [
        (1, 1, 1),
        (1, 8, 32),
        (1, 9, 33),
        (1, 33, 100),
        (1, 64, 4096 / 16),
        (2, 3, 7),
        (3, 17, 96),
        (4, 8, 64),
        (5, 1, 47),
        (5, 12, 31),
        (7, 13, 64),
        (8, 16, 160),
        (9, 24, 65),
        (12, 8, 128),
        (13, 9, 32),
        (16, 32, 256),
        (17, 20, 99),
        (33, 40, 192),
    ];
    let mut rng = Rng(42);
    let mut report = TierReport::default();
    for p in all_packings() {
        for &(m, n, k) in &shapes {
            let (lhs, rhs) = random_problem(&mut rng, &p, m, n, k, None);
            let args = MatmulArgs::new(m, n, k);
            check_tiers_against_scalar::<Qai8dxpQsi4cxp>(&p, &lhs, &rhs, &args, &mut report);
        }
    }
    report.print("qai8dxp_qsi4cxp shapes with tails");
}

#[test]
fn qai8dxp_qsi4cxp_edge_inputs_defined_and_equal_in_every_tier() {
    let (m, n, k) = (8, 12, 96);
    let tiny = f32::from_bits(1); // smallest subnormal
    let mut rows: Vec<Vec<f32>> = vec![
        vec![0.0; k],                                                  // zero row
        vec![0.7; k],                                                  // constant row
        (0..k).map(|j| if j == k / 3 { 1e6 } else { 1.0 + j as f32 * 1e-3 }).collect(), // one huge value
        (0..k).map(|j| if j % 2 == 0 { f32::MAX } else { -f32::MAX }).collect(),
        (0..k).map(|j| tiny * (j as f32 - 40.0)).collect(),           // subnormals
        vec![-f32::MAX; k],
        (0..k).map(|j| if j == 5 { -3.0 } else { 0.0 }).collect(),
    ];
    rows.push((0..k).map(|j| (j as f32 - 48.0) * 0.25).collect());
    let x: Vec<f32> = rows.concat();
    assert_eq!(x.len(), m * k);
    let mut rng = Rng(7);
    let mut report = TierReport::default();
    for p in all_packings() {
        let (lhs, rhs) = random_problem(&mut rng, &p, m, n, k, Some(&x));
        let args = MatmulArgs::new(m, n, k);
        check_tiers_against_scalar::<Qai8dxpQsi4cxp>(&p, &lhs, &rhs, &args, &mut report);
        let scalar = fam::KERNELS.iter().find(|kn| kn.packing() == p && kn.tier() == Tier::Scalar).unwrap();
        let out = run_guarded(*scalar, &lhs, &rhs, &args);
        let bias: Vec<f32> = (0..n).map(|c| {
            let tile = c / p.nr * qsi4cxp::tile_stride(k, p.nr).unwrap();
            let at = tile + p.nr * 96 / 2 + 8 * p.nr + 4 * (c % p.nr);
            f32::from_le_bytes(rhs[at..at + 4].try_into().unwrap())
        }).collect();
        // Zero row: q = 127 and offset = -127 cancel exactly, the output is the bias.
        assert_bits_eq(&out[0..n], &bias, "zero row");
        // ±f32::MAX rows: the range overflows, the multiplier and dq scale are 0: output = bias.
        assert_bits_eq(&out[3 * n..4 * n], &bias, "±MAX row");
        // A constant -f32::MAX row is representable (multiplier 255/MAX): no NaN anywhere; a
        // result beyond the f32 range may round to infinity like any f32 product.
        assert!(out.iter().all(|v| !v.is_nan()), "no NaN outputs");
    }
    report.print("qai8dxp_qsi4cxp edge inputs");
}

#[test]
fn qai8dxp_qsi4cxp_non_finite_activations_are_rejected_before_any_write() {
    let p = fam::PACKING_4X8;
    let (m, k) = (3, 40);
    for (bad, at) in [(f32::NAN, 45), (f32::INFINITY, 0), (f32::NEG_INFINITY, 119)] {
        let mut x = vec![0.5f32; m * k];
        x[at] = bad;
        let mut out = vec![0xeeu8; qai8dxp::packed_size(m, k, &p).unwrap()];
        let e = qai8dxp::quantize_pack(&p, m, k, 0, &x, k, &mut out).unwrap_err();
        assert_eq!(e, Error::NonFinite { buffer: qgemm::error::Buffer::Lhs, index: at });
        assert!(out.iter().all(|&b| b == 0xee), "nothing written");
    }
}

#[test]
fn qai8dxp_qsi4cxp_clamp_ranges() {
    let (m, n, k) = (9, 17, 64);
    let mut rng = Rng(5);
    for p in all_packings() {
        let (lhs, rhs) = random_problem(&mut rng, &p, m, n, k, None);
        let mut report = TierReport::default();
        let scalar = fam::KERNELS.iter().find(|kn| kn.packing() == p && kn.tier() == Tier::Scalar).unwrap();
        let free = run_guarded(*scalar, &lhs, &rhs, &MatmulArgs::new(m, n, k));
        for (lo, hi) in [(-f32::MAX, f32::MAX), (-0.25, 0.25), (0.0, 0.0), (0.1, 0.1000001), (f32::NEG_INFINITY, 0.0)] {
            let args = MatmulArgs::new(m, n, k).with_clamp(Clamp::new(lo, hi).unwrap());
            check_tiers_against_scalar::<Qai8dxpQsi4cxp>(&p, &lhs, &rhs, &args, &mut report);
            let clamped = run_guarded(*scalar, &lhs, &rhs, &args);
            for (c, f) in clamped.iter().zip(&free) {
                assert_eq!(c.to_bits(), f.max(lo).min(hi).to_bits());
            }
        }
    }
}

#[test]
fn qai8dxp_qsi4cxp_split_execution_matches_one_call() {
    let (m, n, k) = (21, 40, 96);
    let mut rng = Rng(9);
    let cpu = cpu();
    for p in all_packings() {
        let (lhs, rhs) = random_problem(&mut rng, &p, m, n, k, None);
        let args = MatmulArgs::new(m, n, k);
        for kernel in fam::KERNELS.iter().filter(|kn| kn.packing() == p && kn.is_available(&cpu)) {
            let whole = run_guarded(*kernel, &lhs, &rhs, &args);
            // Every legal row cut and column cut, one at a time, plus a fine grid.
            for mc in (0..=m).step_by(kernel.m_step()) {
                assert_bits_eq(&run_split(*kernel, &lhs, &rhs, &args, mc, n / 2), &whole, kernel.name());
            }
            for nc in (0..=n).step_by(kernel.n_step()) {
                assert_bits_eq(&run_split(*kernel, &lhs, &rhs, &args, m / 2, nc), &whole, kernel.name());
            }
            let mut dst = Canary::new(m * n, DST_CANARY);
            for m_idx in (0..m).step_by(kernel.m_step()) {
                for n_idx in (0..n).step_by(kernel.n_step()) {
                    let (mm, nn) = (kernel.m_step().min(m - m_idx), kernel.n_step().min(n - n_idx));
                    let off = kernel.dst_offset(m_idx, n_idx, n).unwrap();
                    let a = args.with_rect(m_idx, n_idx, mm, nn);
                    kernel.run(&cpu, &lhs, &rhs, &mut dst.inner()[off..], &a).unwrap();
                }
            }
            dst.check(kernel.name());
            assert_bits_eq(dst.get(), &whole, &format!("{} tile by tile", kernel.name()));
        }
    }
}

#[test]
fn qai8dxp_qsi4cxp_kxn_and_signed_weights_pack_like_nxk() {
    // The same weights given four ways must give identical packed bytes (formats.md §3.1),
    // except the KxN padding columns (n not a multiple of nr), so n is a multiple of 8 here.
    let (n, k): (usize, usize) = (16, 45);
    let mut rng = Rng(3);
    let w: Vec<i8> = (0..n * k).map(|_| (rng.below(16) as i8) - 8).collect();
    let enc = |v: i8, zp8: bool| if zp8 { (v + 8) as u8 } else { v as u8 & 0xf };
    let scale: Vec<f32> = (0..n).map(|_| rng.f32(0.01, 0.2)).collect();
    for p in all_packings() {
        let mut outs = Vec::new();
        for zp8 in [true, false] {
            let mut nxk = vec![0u8; n * k.div_ceil(2)];
            let mut kxn = vec![0u8; k * n.div_ceil(2)];
            for c in 0..n {
                for j in 0..k {
                    let e = enc(w[c * k + j], zp8);
                    nxk[c * k.div_ceil(2) + j / 2] |= e << (4 * (j % 2));
                    kxn[j * n.div_ceil(2) + c / 2] |= e << (4 * (c % 2));
                }
            }
            let encoding = if zp8 { Int4Encoding::ZeroPoint8 } else { Int4Encoding::Signed };
            for src in [Int4Source::nxk(&nxk, k, encoding), Int4Source::kxn(&kxn, n, encoding)] {
                let mut out = vec![0u8; qsi4cxp::packed_size(n, k, &p).unwrap()];
                qsi4cxp::pack(&p, n, k, &src, &scale, None, &mut out).unwrap();
                outs.push(out);
            }
        }
        assert!(outs.windows(2).all(|w| w[0] == w[1]), "{p:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Rejections of the safe API, one test each.
// ---------------------------------------------------------------------------------------------

fn small() -> (&'static fam::Kernel, Vec<u8>, Vec<u8>, MatmulArgs) {
    let kernel = &fam::SCALAR_4X8;
    let (m, n, k) = (5, 12, 40);
    let (lhs, rhs) = random_problem(&mut Rng(1), &kernel.packing(), m, n, k, None);
    (kernel, lhs, rhs, MatmulArgs::new(m, n, k))
}

fn run_err(kernel: &fam::Kernel, lhs: &[u8], rhs: &[u8], dst_len: usize, args: &MatmulArgs) -> Error {
    let mut dst = vec![0f32; dst_len];
    kernel.run(&CpuFeatures::NONE, lhs, rhs, &mut dst, args).unwrap_err()
}

#[test]
fn qai8dxp_qsi4cxp_rejects_k_zero() {
    let (kr, lhs, rhs, a) = small();
    assert_eq!(run_err(kr, &lhs, &rhs, 60, &MatmulArgs { k: 0, ..a }), Error::ZeroDim { dim: qgemm::error::Dim::K });
}

#[test]
fn qai8dxp_qsi4cxp_rejects_block_len() {
    let (kr, lhs, rhs, a) = small();
    let e = run_err(kr, &lhs, &rhs, 60, &a.with_block_len(32));
    assert_eq!(e, Error::Unsupported { param: qgemm::error::Param::BlockLen, value: 32 });
}

#[test]
fn qai8dxp_qsi4cxp_rejects_misaligned_m_idx() {
    let (kr, lhs, rhs, a) = small();
    let e = run_err(kr, &lhs, &rhs, 60, &a.with_rect(2, 0, 3, 12));
    assert_eq!(e, Error::MisalignedStart { dim: qgemm::error::Dim::MIdx, value: 2, step: 4 });
}

#[test]
fn qai8dxp_qsi4cxp_rejects_misaligned_n_idx() {
    let (kr, lhs, rhs, a) = small();
    let e = run_err(kr, &lhs, &rhs, 60, &a.with_rect(0, 4, 5, 8));
    assert_eq!(e, Error::MisalignedStart { dim: qgemm::error::Dim::NIdx, value: 4, step: 8 });
}

#[test]
fn qai8dxp_qsi4cxp_rejects_small_dst_stride() {
    let (kr, lhs, rhs, a) = small();
    let e = run_err(kr, &lhs, &rhs, 60, &a.with_dst_stride(11));
    assert_eq!(e, Error::StrideTooSmall { stride: qgemm::error::Stride::Dst, given: 11, needed: 12 });
}

#[test]
fn qai8dxp_qsi4cxp_rejects_short_lhs_packed() {
    let (kr, lhs, rhs, a) = small();
    let e = run_err(kr, &lhs[..lhs.len() - 1], &rhs, 60, &a);
    assert_eq!(e, Error::BufferTooShort { buffer: qgemm::error::Buffer::LhsPacked, given: lhs.len() - 1, needed: lhs.len() });
}

#[test]
fn qai8dxp_qsi4cxp_rejects_short_rhs_packed() {
    let (kr, lhs, rhs, a) = small();
    let e = run_err(kr, &lhs, &rhs[..rhs.len() - 1], 60, &a);
    assert_eq!(e, Error::BufferTooShort { buffer: qgemm::error::Buffer::RhsPacked, given: rhs.len() - 1, needed: rhs.len() });
}

#[test]
fn qai8dxp_qsi4cxp_rejects_short_dst() {
    let (kr, lhs, rhs, a) = small();
    let e = run_err(kr, &lhs, &rhs, 59, &a);
    assert_eq!(e, Error::BufferTooShort { buffer: qgemm::error::Buffer::Dst, given: 59, needed: 60 });
}

#[test]
fn qai8dxp_qsi4cxp_rejects_sub_rectangle_past_the_packed_buffers() {
    let (kr, lhs, rhs, a) = small();
    // Rows 4..12 need a third LHS tile the buffer does not have.
    let e = run_err(kr, &lhs, &rhs, 200, &a.with_rect(4, 0, 8, 12));
    assert!(matches!(e, Error::BufferTooShort { buffer: qgemm::error::Buffer::LhsPacked, .. }));
    let e = run_err(kr, &lhs, &rhs, 200, &a.with_rect(0, 8, 5, 9));
    assert!(matches!(e, Error::BufferTooShort { buffer: qgemm::error::Buffer::RhsPacked, .. }));
}

#[test]
fn qai8dxp_qsi4cxp_empty_rectangle_is_a_no_op() {
    let (kr, lhs, rhs, a) = small();
    let mut dst = vec![1.5f32; 4];
    kr.run(&CpuFeatures::NONE, &lhs, &rhs, &mut dst, &a.with_rect(0, 0, 0, 12)).unwrap();
    kr.run(&CpuFeatures::NONE, &lhs, &rhs, &mut dst, &a.with_rect(0, 0, 5, 0)).unwrap();
    assert_eq!(dst, [1.5; 4]);
}

#[test]
fn qai8dxp_qsi4cxp_rejects_bad_clamp() {
    assert!(Clamp::new(f32::NAN, 1.0).is_err());
    assert!(Clamp::new(0.0, f32::NAN).is_err());
    assert_eq!(Clamp::new(1.0, 0.0), Err(Error::Unsupported { param: qgemm::error::Param::Clamp, value: 0 }));
    assert!(Clamp::new(f32::NEG_INFINITY, f32::INFINITY).is_ok());
}

#[test]
fn qai8dxp_qsi4cxp_rejects_kernel_on_cpu_without_its_tier() {
    for kernel in fam::KERNELS.iter().filter(|k| k.tier() != Tier::Scalar) {
        let p = kernel.packing();
        let (m, n, k) = (4, 8, 32);
        let (lhs, rhs) = random_problem(&mut Rng(2), &p, m, n, k, None);
        let mut dst = vec![0f32; m * n];
        let e = kernel.run(&CpuFeatures::NONE, &lhs, &rhs, &mut dst, &MatmulArgs::new(m, n, k)).unwrap_err();
        assert_eq!(e, Error::UnsupportedCpu { needs: qgemm::Feature::Neon }, "{}", kernel.name());
        let only_neon = cpu().without(qgemm::Feature::Dotprod).without(qgemm::Feature::I8mm);
        if let Some(f) = kernel.tier().required_feature().filter(|f| *f != qgemm::Feature::Neon) {
            if only_neon.has(qgemm::Feature::Neon) {
                let e = kernel.run(&only_neon, &lhs, &rhs, &mut dst, &MatmulArgs::new(m, n, k)).unwrap_err();
                assert_eq!(e, Error::UnsupportedCpu { needs: f });
            }
        }
    }
}

#[test]
fn qai8dxp_qsi4cxp_rejects_misaligned_offsets() {
    let kernel = &fam::SCALAR_4X8;
    assert!(matches!(kernel.lhs_packed_offset(2, 64, 0), Err(Error::MisalignedStart { .. })));
    assert!(matches!(kernel.rhs_packed_offset(4, 64, 0), Err(Error::MisalignedStart { .. })));
    assert!(matches!(kernel.dst_offset(4, 3, 64), Err(Error::MisalignedStart { .. })));
    assert!(matches!(qai8dxp::packed_offset(3, 64, &kernel.packing()), Err(Error::MisalignedStart { .. })));
    assert!(matches!(qsi4cxp::packed_offset(12, 64, &kernel.packing()), Err(Error::MisalignedStart { .. })));
}

#[test]
fn qai8dxp_qsi4cxp_rejects_sizes_that_overflow() {
    let p = fam::PACKING_4X8;
    assert_eq!(qai8dxp::packed_size(usize::MAX, 64, &p), Err(Error::SizeOverflow));
    assert_eq!(qai8dxp::packed_size(4, usize::MAX - 3, &p), Err(Error::SizeOverflow));
    assert_eq!(qsi4cxp::packed_size(usize::MAX, 64, &p), Err(Error::SizeOverflow));
    let (kr, lhs, rhs, a) = small();
    assert_eq!(run_err(kr, &lhs, &rhs, 60, &a.with_dst_stride(usize::MAX)), Error::SizeOverflow);
}

#[test]
fn qai8dxp_qsi4cxp_lhs_packer_rejects_bad_input() {
    use qgemm::error::{Buffer, Dim, Param, Stride};
    let p = fam::PACKING_4X8;
    let x = vec![0.5f32; 3 * 40];
    let mut out = vec![0u8; qai8dxp::packed_size(3, 40, &p).unwrap()];
    assert_eq!(qai8dxp::quantize_pack(&p, 3, 0, 0, &x, 40, &mut out), Err(Error::ZeroDim { dim: Dim::K }));
    assert_eq!(
        qai8dxp::quantize_pack(&p, 3, 40, 0, &x, 39, &mut out),
        Err(Error::StrideTooSmall { stride: Stride::Lhs, given: 39, needed: 40 })
    );
    assert_eq!(
        qai8dxp::quantize_pack(&p, 3, 40, 0, &x[1..], 40, &mut out),
        Err(Error::BufferTooShort { buffer: Buffer::Lhs, given: 119, needed: 120 })
    );
    let short = out.len() - 1;
    assert_eq!(
        qai8dxp::quantize_pack(&p, 3, 40, 0, &x, 40, &mut out[..short]),
        Err(Error::BufferTooShort { buffer: Buffer::LhsPacked, given: short, needed: short + 1 })
    );
    // Starting in slot 2 of a tile, 3 rows need a second tile.
    assert!(matches!(
        qai8dxp::quantize_pack(&p, 3, 40, 2, &x, 40, &mut out),
        Err(Error::BufferTooShort { buffer: Buffer::LhsPacked, .. })
    ));
    for (bad, param) in [
        (Packing { mr: 0, ..p }, Param::Mr),
        (Packing { sr: 3, ..p }, Param::Sr),
        (Packing { kr: 15, ..p }, Param::Kr),
        (Packing { kr: 24, ..p }, Param::Kr),
    ] {
        let e = qai8dxp::quantize_pack(&bad, 3, 40, 0, &x, 40, &mut out).unwrap_err();
        assert!(matches!(e, Error::Unsupported { param: q, .. } if q == param), "{bad:?}: {e}");
    }
    assert_eq!(qai8dxp::quantize_pack(&p, 0, 40, 0, &x, 40, &mut out), Ok(()));
}

#[test]
fn qai8dxp_qsi4cxp_rhs_packer_rejects_bad_input() {
    use qgemm::error::{Buffer, Dim, Param, Stride};
    let p = fam::PACKING_4X8;
    let (n, k) = (5, 9);
    let raw = vec![0x88u8; n * 5];
    let scale = vec![0.1f32; n];
    let bias = vec![0.0f32; n];
    let mut out = vec![0u8; qsi4cxp::packed_size(n, k, &p).unwrap()];
    let src = Int4Source::nxk(&raw, k, Int4Encoding::ZeroPoint8);
    let pack = |p: &Packing, n, k, src: &Int4Source, s: &[f32], b: Option<&[f32]>, o: &mut [u8]| qsi4cxp::pack(p, n, k, src, s, b, o);
    assert_eq!(pack(&p, 0, k, &src, &scale, None, &mut out), Err(Error::ZeroDim { dim: Dim::N }));
    assert_eq!(pack(&p, n, 0, &src, &scale, None, &mut out), Err(Error::ZeroDim { dim: Dim::K }));
    let narrow = Int4Source { stride: 4, ..src };
    assert_eq!(
        pack(&p, n, k, &narrow, &scale, None, &mut out),
        Err(Error::StrideTooSmall { stride: Stride::Rhs, given: 4, needed: 5 })
    );
    let short = Int4Source::nxk(&raw[..24], k, Int4Encoding::ZeroPoint8);
    assert_eq!(
        pack(&p, n, k, &short, &scale, None, &mut out),
        Err(Error::BufferTooShort { buffer: Buffer::Rhs, given: 24, needed: 25 })
    );
    assert_eq!(
        pack(&p, n, k, &src, &scale[..4], None, &mut out),
        Err(Error::BufferTooShort { buffer: Buffer::Scale, given: 4, needed: 5 })
    );
    assert_eq!(
        pack(&p, n, k, &src, &scale, Some(&bias[..4]), &mut out),
        Err(Error::BufferTooShort { buffer: Buffer::Bias, given: 4, needed: 5 })
    );
    let mut nan_scale = scale.clone();
    nan_scale[2] = f32::NAN;
    assert_eq!(pack(&p, n, k, &src, &nan_scale, None, &mut out), Err(Error::NonFinite { buffer: Buffer::Scale, index: 2 }));
    let mut inf_bias = bias.clone();
    inf_bias[4] = f32::INFINITY;
    assert_eq!(
        pack(&p, n, k, &src, &scale, Some(&inf_bias), &mut out),
        Err(Error::NonFinite { buffer: Buffer::Bias, index: 4 })
    );
    let l = out.len();
    assert_eq!(
        pack(&p, n, k, &src, &scale, None, &mut out[..l - 1]),
        Err(Error::BufferTooShort { buffer: Buffer::RhsPacked, given: l - 1, needed: l })
    );
    assert_eq!(pack(&Packing { sr: 1, ..p }, n, k, &src, &scale, None, &mut out), Err(Error::Unsupported { param: Param::Sr, value: 1 }));
    assert_eq!(pack(&Packing { kr: 64, ..p }, n, k, &src, &scale, None, &mut out), Err(Error::Unsupported { param: Param::Kr, value: 64 }));
    let kxn = Int4Source { layout: Layout::KxN, stride: 2, ..src };
    assert_eq!(
        pack(&p, n, k, &kxn, &scale, None, &mut out),
        Err(Error::StrideTooSmall { stride: Stride::Rhs, given: 2, needed: 3 })
    );
}

#[test]
fn qai8dxp_qsi4cxp_select_follows_the_cpu() {
    let cpu = cpu();
    let decode = fam::select(&cpu, 1);
    let prefill = fam::select(&cpu, 64);
    assert!(decode.is_available(&cpu) && prefill.is_available(&cpu));
    assert_eq!(decode.packing().mr, 1);
    assert!(prefill.packing().mr > 1);
    // Same RHS packing: one packed weight matrix serves both.
    assert_eq!((decode.packing().nr, decode.packing().kr), (prefill.packing().nr, prefill.packing().kr));
    let best = |c: &CpuFeatures| fam::available(c).iter().map(|k| k.tier()).max().unwrap();
    println!("cpu {cpu}: decode {}, prefill {}", decode.name(), prefill.name());
    assert_eq!(prefill.tier(), best(&cpu));
    assert_eq!(fam::select(&CpuFeatures::NONE, 64).tier(), Tier::Scalar);
}
