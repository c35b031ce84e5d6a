//! Weight quantization (`qgemm::quant`): the symmetric formats' codes and scales against their
//! written-out definitions on random and edge weights, NxK against KxN, input checks, and the
//! round trip quantize -> pack -> kernel against the f32 matmul of the same weights within the
//! error bound of the two quantizations (docs/model.md, "Weight quantization").

use qgemm::half::{bf16, f16};
use qgemm::op::Linear;
use qgemm::qai8dxp_qsi4c32p::Qai8dxpQsi4c32p;
use qgemm::qai8dxp_qsi4cxp::Qai8dxpQsi4cxp;
use qgemm::qai8dxp_qsi8cxp::Qai8dxpQsi8cxp;
use qgemm::qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p;
use qgemm::quant::gptq::{self, Hessian};
use qgemm::quant::{self, Method, Weights};
use qgemm::rhs::qsi4c32p::BlockScales;
use qgemm::rhs::qsi8cxp::Int8Source;
use qgemm::rhs::{Int4Encoding, Int4Source, Layout};
use qgemm::{CpuFeatures, Error, error::Buffer};

#[path = "common/lcg.rs"]
mod lcg;
use lcg::Rng;

/// Random weights with per-channel magnitudes over 4 decades, a few outliers, zero channels and
/// subnormals.
fn weights(rng: &mut Rng, n: usize, k: usize) -> Vec<f32> {
    let mut w = vec![0f32; n * k];
    for c in 0..n {
        let mag = 10f32.powi(c as i32 % 4 - 2);
        for j in 0..k {
            w[c * k + j] = match c % 7 {
                5 => 0.0,
                6 => rng.unit() * 1.0e-40,
                _ => rng.unit() * mag * if rng.next().is_multiple_of(61) { 8.0 } else { 1.0 },
            };
        }
    }
    w
}

fn transpose(w: &[f32], n: usize, k: usize) -> Vec<f32> {
    (0..k * n).map(|i| w[(i % n) * k + i / n]).collect()
}

fn nibble(codes: &[u8], row: usize, j: usize) -> i8 {
    (((codes[row + j / 2] >> (4 * (j % 2))) & 0xf) << 4) as i8 >> 4
}

/// The textbook round-to-nearest rule of a group with scale type rounding `round`.
fn rtn(g: &[f32], levels: f32, round: impl Fn(f32) -> f32) -> (f32, Vec<i8>) {
    let amax = g.iter().fold(0f32, |a, v| a.max(v.abs()));
    let s = if amax == 0.0 { 0.0 } else { round(amax / levels) };
    let q = g.iter().map(|v| if s == 0.0 { 0 } else { (v / s).round().clamp(-levels - 1.0, levels) as i8 }).collect();
    (s, q)
}

#[test]
fn per_channel_formats_follow_their_definitions() {
    let mut rng = Rng(1);
    for (n, k) in [(9, 64), (14, 33), (3, 1)] {
        let w = weights(&mut rng, n, k);
        let wt = transpose(&w, n, k);
        let (cb, ns) = quant::qsi4cxp::sizes(n, k).unwrap();
        let (mut codes, mut scale) = (vec![0u8; cb], vec![0f32; ns]);
        let (mut codes_t, mut scale_t) = (vec![0u8; cb], vec![0f32; ns]);
        for method in [Method::RoundToNearest, Method::SignedMax, Method::Search] {
            quant::qsi4cxp::quantize(method, n, k, &Weights::nxk(&w, k), &mut codes, &mut scale).unwrap();
            quant::qsi4cxp::quantize(method, n, k, &Weights::kxn(&wt, n), &mut codes_t, &mut scale_t).unwrap();
            assert_eq!((&codes, &scale), (&codes_t, &scale_t), "{method:?}: NxK and KxN agree");
            if method == Method::RoundToNearest {
                for c in 0..n {
                    let (s, q) = rtn(&w[c * k..(c + 1) * k], 7.0, |s| s);
                    assert_eq!(scale[c], s);
                    let got: Vec<i8> = (0..k).map(|j| nibble(&codes, c * k.div_ceil(2), j)).collect();
                    assert_eq!(got, q, "channel {c}");
                }
            }
        }
        let (cl, _) = quant::qsi8cxp::sizes(n, k).unwrap();
        let mut q8 = vec![0i8; cl];
        quant::qsi8cxp::quantize(Method::RoundToNearest, n, k, &Weights::nxk(&w, k), &mut q8, &mut scale).unwrap();
        for c in 0..n {
            let (s, q) = rtn(&w[c * k..(c + 1) * k], 127.0, |s| s);
            assert_eq!((scale[c], &q8[c * k..(c + 1) * k]), (s, &q[..]), "int8 channel {c}");
        }
    }
}

#[test]
fn q4_0_signed_max_is_ggml_bytes_and_block_formats_follow_their_definitions() {
    let mut rng = Rng(2);
    let (n, k, bl) = (7, 128, 32);
    let w = weights(&mut rng, n, k);
    let mut blocks = vec![0u8; quant::q4_0::size(n, k, bl).unwrap()];
    quant::q4_0::quantize(Method::SignedMax, n, k, bl, &Weights::nxk(&w, k), &mut blocks).unwrap();
    // ggml's quantize_row_q4_0_ref, written out.
    for (b, x) in w.chunks_exact(32).enumerate() {
        let (mut amax, mut max) = (0f32, 0f32);
        for &v in x {
            if amax < v.abs() {
                (amax, max) = (v.abs(), v);
            }
        }
        let d = max / -8.0;
        let id = if d != 0.0 { 1.0 / d } else { 0.0 };
        if !id.is_finite() {
            // Subnormal blocks: GGML's `x * id` is infinite or NaN (its cast undefined); qgemm
            // rounds `x / d` instead (checked in the library's unit tests).
            continue;
        }
        let mut want = f16::from_f32(d).to_le_bytes().to_vec();
        for j in 0..16 {
            let lo = ((x[j] * id + 8.5) as u8).min(15);
            let hi = ((x[j + 16] * id + 8.5) as u8).min(15);
            want.push(lo | (hi << 4));
        }
        assert_eq!(&blocks[b * 18..(b + 1) * 18], &want[..], "block {b}");
    }
    // bf16 blocks, round to nearest: the scale is rounded before the codes are chosen.
    let (cb, ns) = quant::qsi4c32p::sizes(n, k, bl).unwrap();
    let (mut codes, mut scale) = (vec![0u8; cb], vec![bf16::ZERO; ns]);
    quant::qsi4c32p::quantize(Method::RoundToNearest, n, k, bl, &Weights::nxk(&w, k), &mut codes, &mut scale).unwrap();
    for (g, x) in w.chunks_exact(bl).enumerate() {
        let (s, q) = rtn(x, 7.0, |s| bf16::from_f32(s).to_f32());
        assert_eq!(scale[g].to_f32(), s, "block {g}");
        let got: Vec<i8> = (0..bl).map(|j| nibble(&codes, g * bl / 2, j)).collect();
        assert_eq!(got, q, "block {g}");
    }
}

#[test]
fn bad_input_is_rejected_before_anything_is_written() {
    let (n, k, bl) = (2, 64, 32);
    let mut w = vec![0.5f32; n * k];
    let mut blocks = vec![0x5au8; quant::q4_0::size(n, k, bl).unwrap()];
    w[70] = f32::NAN;
    let e = quant::q4_0::quantize(Method::Search, n, k, bl, &Weights::nxk(&w, k), &mut blocks);
    assert_eq!(e, Err(Error::NonFinite { buffer: Buffer::Rhs, index: 70 }));
    w[70] = 1.0e6; // f16 scale 1.25e5: overflows
    let e = quant::q4_0::quantize(Method::SignedMax, n, k, bl, &Weights::nxk(&w, k), &mut blocks);
    assert_eq!(e, Err(Error::ScaleOverflow { buffer: Buffer::Rhs, index: 64 }));
    assert!(blocks.iter().all(|&b| b == 0x5a));
    w[70] = 1.0;
    let imp = vec![1.0f32; k - 1];
    let e = quant::q4_0::quantize(Method::WeightedSearch(&imp), n, k, bl, &Weights::nxk(&w, k), &mut blocks);
    assert_eq!(e, Err(Error::BufferTooShort { buffer: Buffer::Importance, given: k - 1, needed: k }));
    let mut imp = vec![1.0f32; k];
    imp[3] = -1.0;
    let e = quant::q4_0::quantize(Method::WeightedSearch(&imp), n, k, bl, &Weights::nxk(&w, k), &mut blocks);
    assert_eq!(e, Err(Error::NonFinite { buffer: Buffer::Importance, index: 3 }));
    let e = quant::q4_0::quantize(Method::Search, n, k, 48, &Weights::nxk(&w, k), &mut blocks);
    assert!(matches!(e, Err(Error::NotMultiple { .. })), "{e:?}");
    let e = quant::q4_0::quantize(Method::Search, n, k, bl, &Weights::nxk(&w[..100], k), &mut blocks);
    assert_eq!(e, Err(Error::BufferTooShort { buffer: Buffer::Rhs, given: 100, needed: 128 }));
    let e = quant::q4_0::quantize(Method::Search, n, k, bl, &Weights::nxk(&w, k), &mut blocks[..71]);
    assert_eq!(e, Err(Error::BufferTooShort { buffer: Buffer::Rhs, given: 71, needed: 72 }));
    assert!(blocks.iter().all(|&b| b == 0x5a));
}

#[test]
fn every_symmetric_quantizer_checks_its_buffers_and_strides() {
    use qgemm::error::Stride;
    let (n, k, bl) = (3, 64, 32);
    let w = vec![0.25f32; n * k];
    let (ww, m) = (Weights::nxk(&w, k), Method::RoundToNearest);
    let short_w = Weights::nxk(&w[..n * k - 1], k);
    let narrow = Weights { data: &w[..], layout: qgemm::rhs::Layout::KxN, stride: n - 1 };
    let (mut c4, mut c8, mut f) = (vec![0x5au8; n * k / 2], vec![0x5ai8; n * k], vec![7f32; n]);
    let rhs_short = |given, needed| Err(Error::BufferTooShort { buffer: Buffer::Rhs, given, needed });
    let scale_short = |given, needed| Err(Error::BufferTooShort { buffer: Buffer::Scale, given, needed });
    let stride = Err(Error::StrideTooSmall { stride: Stride::Rhs, given: n - 1, needed: n });
    // qsi4cxp
    assert_eq!(quant::qsi4cxp::quantize(m, n, k, &short_w, &mut c4, &mut f), rhs_short(n * k - 1, n * k));
    assert_eq!(quant::qsi4cxp::quantize(m, n, k, &narrow, &mut c4, &mut f), stride);
    assert_eq!(quant::qsi4cxp::quantize(m, n, k, &ww, &mut c4[..95], &mut f), rhs_short(95, 96));
    assert_eq!(quant::qsi4cxp::quantize(m, n, k, &ww, &mut c4, &mut f[..2]), scale_short(2, 3));
    // qsi8cxp
    assert_eq!(quant::qsi8cxp::quantize(m, n, k, &short_w, &mut c8, &mut f), rhs_short(n * k - 1, n * k));
    assert_eq!(quant::qsi8cxp::quantize(m, n, k, &narrow, &mut c8, &mut f), stride);
    assert_eq!(quant::qsi8cxp::quantize(m, n, k, &ww, &mut c8[..191], &mut f), rhs_short(191, 192));
    assert_eq!(quant::qsi8cxp::quantize(m, n, k, &ww, &mut c8, &mut f[..2]), scale_short(2, 3));
    // qsi4c32p
    let mut bs = vec![bf16::ONE; n * k / bl];
    assert_eq!(quant::qsi4c32p::quantize(m, n, k, bl, &short_w, &mut c4, &mut bs), rhs_short(n * k - 1, n * k));
    assert_eq!(quant::qsi4c32p::quantize(m, n, k, bl, &narrow, &mut c4, &mut bs), stride);
    assert_eq!(quant::qsi4c32p::quantize(m, n, k, bl, &ww, &mut c4[..95], &mut bs), rhs_short(95, 96));
    assert_eq!(quant::qsi4c32p::quantize(m, n, k, bl, &ww, &mut c4, &mut bs[..5]), scale_short(5, 6));
    assert!(matches!(quant::qsi4c32p::quantize(m, n, 48, bl, &ww, &mut c4, &mut bs), Err(Error::NotMultiple { .. })));
    // Zero dimensions.
    assert!(matches!(quant::qsi4cxp::quantize(m, 0, k, &ww, &mut c4, &mut f), Err(Error::ZeroDim { .. })));
    assert!(matches!(quant::qsi8cxp::quantize(m, n, 0, &ww, &mut c8, &mut f), Err(Error::ZeroDim { .. })));
    // Nothing was written by any rejected call.
    assert!(c4.iter().all(|&v| v == 0x5a) && c8.iter().all(|&v| v == 0x5a));
    assert!(f.iter().all(|&v| v == 7.0) && bs.iter().all(|&v| v == bf16::ONE));
}

/// `|y - y_f32| <= sum_j |x_j| * |w_cj - w^_cj| + sum_j |w^_cj| * dx_j + fp slack`, with `w^`
/// the dequantized weights and `dx_j` the largest activation quantization error of `x_j`.
#[allow(clippy::too_many_arguments)]
fn check_bound(
    name: &str,
    m: usize,
    n: usize,
    k: usize,
    x: &[f32],
    w: &[f32],
    wq: &[f32],
    step: impl Fn(usize, usize) -> f32,
    y: &[f32],
) {
    for i in 0..m {
        for c in 0..n {
            let (mut exact, mut bound, mut mag) = (0f64, 0f64, 0f64);
            for j in 0..k {
                let (xv, wv, qv) = (f64::from(x[i * k + j]), f64::from(w[c * k + j]), f64::from(wq[c * k + j]));
                exact += xv * wv;
                bound += xv.abs() * (wv - qv).abs() + qv.abs() * f64::from(step(i, j));
                mag += (xv * qv).abs();
            }
            let err = (f64::from(y[i * n + c]) - exact).abs();
            assert!(err <= bound * 1.0001 + mag * 1e-5 + 1e-30, "{name}: y[{i}][{c}] error {err} > bound {bound}");
        }
    }
}

#[test]
fn quantize_pack_run_is_within_the_error_bound() {
    let cpu = CpuFeatures::detect();
    let mut rng = Rng(3);
    let (m, n, k, bl) = (5, 24, 96, 32);
    let w: Vec<f32> = (0..n * k).map(|_| rng.unit() * 0.3).collect();
    let x: Vec<f32> = (0..m * k).map(|_| rng.unit() * 2.0).collect();
    // qai8dxp: at most one step per row, (max(x, 0) - min(x, 0)) / 255 (half a step of rounding,
    // up to half a step more where the rounded zero point clamps an extreme value).
    let row_step = |i: usize| {
        let r = &x[i * k..(i + 1) * k];
        (r.iter().fold(0f32, |a, &v| a.max(v)) - r.iter().fold(0f32, |a, &v| a.min(v))) / 255.0
    };
    let mut y = vec![0f32; m * n];
    for method in [Method::RoundToNearest, Method::SignedMax, Method::Search] {
        let ww = Weights::nxk(&w, k);
        // int4 per channel.
        let (mut codes, mut scale) = (vec![0u8; n * k / 2], vec![0f32; n]);
        quant::qsi4cxp::quantize(method, n, k, &ww, &mut codes, &mut scale).unwrap();
        let wq: Vec<f32> = (0..n * k).map(|e| f32::from(nibble(&codes, e / k * k / 2, e % k)) * scale[e / k]).collect();
        let mut buf = vec![0u8; Linear::<Qai8dxpQsi4cxp>::packed_size(n, k).unwrap()];
        let l = Linear::<Qai8dxpQsi4cxp>::pack(
            n,
            k,
            &Int4Source::nxk(&codes, k, Int4Encoding::Signed),
            &scale,
            None,
            &mut buf,
        )
        .unwrap();
        let mut s = vec![0u8; l.scratch_size(m).unwrap()];
        l.run(&cpu, m, &x, &mut y, &mut s).unwrap();
        check_bound("qsi4cxp", m, n, k, &x, &w, &wq, |i, _| row_step(i), &y);
        // int8 per channel.
        let (mut q8, mut scale) = (vec![0i8; n * k], vec![0f32; n]);
        quant::qsi8cxp::quantize(method, n, k, &ww, &mut q8, &mut scale).unwrap();
        let wq: Vec<f32> = (0..n * k).map(|e| f32::from(q8[e]) * scale[e / k]).collect();
        let mut buf = vec![0u8; Linear::<Qai8dxpQsi8cxp>::packed_size(n, k).unwrap()];
        let l = Linear::<Qai8dxpQsi8cxp>::pack(n, k, &Int8Source::nxk(&q8, k), &scale, None, &mut buf).unwrap();
        l.run(&cpu, m, &x, &mut y, &mut s).unwrap();
        check_bound("qsi8cxp", m, n, k, &x, &w, &wq, |i, _| row_step(i), &y);
        // int4 per block, bf16 scales.
        let (mut codes, mut scale) = (vec![0u8; n * k / 2], vec![bf16::ZERO; n * k / bl]);
        quant::qsi4c32p::quantize(method, n, k, bl, &ww, &mut codes, &mut scale).unwrap();
        let wq: Vec<f32> =
            (0..n * k).map(|e| f32::from(nibble(&codes, e / k * k / 2, e % k)) * scale[e / bl].to_f32()).collect();
        let mut buf = vec![0u8; Linear::<Qai8dxpQsi4c32p>::packed_size(n, k, bl).unwrap()];
        let src = Int4Source::nxk(&codes, k, Int4Encoding::Signed);
        let l = Linear::<Qai8dxpQsi4c32p>::pack(n, k, bl, &src, &BlockScales::dense(&scale, k / bl), None, &mut buf)
            .unwrap();
        let mut s = vec![0u8; l.scratch_size(m).unwrap()];
        l.run(&cpu, m, &x, &mut y, &mut s).unwrap();
        check_bound("qsi4c32p", m, n, k, &x, &w, &wq, |i, _| row_step(i), &y);
        // Q4_0 with qsi8d32p activations: step per block of 32 = max |x| / 127 (f16 scale).
        let mut blocks = vec![0u8; quant::q4_0::size(n, k, bl).unwrap()];
        quant::q4_0::quantize(method, n, k, bl, &ww, &mut blocks).unwrap();
        let wq: Vec<f32> = (0..n * k)
            .map(|e| {
                let (c, j) = (e / k, e % k);
                let blk = &blocks[(c * k / bl + j / bl) * 18..];
                let d = f16::from_le_bytes([blk[0], blk[1]]).to_f32();
                let jj = j % bl;
                let u = (blk[2 + jj % 16] >> (4 * (jj / 16))) & 0xf;
                (i32::from(u) - 8) as f32 * d
            })
            .collect();
        let mut buf = vec![0u8; Linear::<Qsi8d32pQsi4c32p>::packed_size(n, k, bl).unwrap()];
        let l = Linear::<Qsi8d32pQsi4c32p>::pack(n, k, bl, &blocks, k / bl * 18, &mut buf).unwrap();
        let mut s = vec![0u8; l.scratch_size(m).unwrap()];
        l.run(&cpu, m, &x, &mut y, &mut s).unwrap();
        let block_step = |i: usize, j: usize| {
            let b = &x[i * k + j / bl * bl..i * k + (j / bl + 1) * bl];
            // Half a step; the stored f16 scale may round up by 2^-11 relative.
            b.iter().fold(0f32, |a, v| a.max(v.abs())) / 127.0 * (1.0 + 1.0 / 1024.0) / 2.0
        };
        check_bound("q4_0", m, n, k, &x, &w, &wq, block_step, &y);
    }
}

/// `||X W^T - X Wq^T||_F` with `W` and `Wq` both `n x k`.
fn output_error(x: &[f32], m: usize, k: usize, w: &[f32], wq: &[f32], n: usize) -> f64 {
    let mut e = 0f64;
    for i in 0..m {
        for c in 0..n {
            let mut d = 0f64;
            for j in 0..k {
                d += f64::from(x[i * k + j]) * (f64::from(w[c * k + j]) - f64::from(wq[c * k + j]));
            }
            e += d * d;
        }
    }
    e.sqrt()
}

#[test]
fn gptq_beats_the_plain_quantizers_on_correlated_activations() {
    let mut rng = Rng(4);
    for (m, n, k) in [(256, 16, 64), (300, 12, 128)] {
        // x = A z: independent z of decaying variances (a few dominant directions, as in real
        // activations) and a random mixing A, so the inputs are strongly correlated.
        let a: Vec<f32> = (0..k * k).map(|_| rng.unit()).collect();
        let z: Vec<f32> = (0..m * k).map(|e| rng.unit() / (1.0 + (e % k) as f32 / 8.0)).collect();
        let x: Vec<f32> = (0..m * k)
            .map(|e| {
                let (i, j) = (e / k, e % k);
                (0..k).map(|p| a[j * k + p] * z[i * k + p]).sum::<f32>() / (k as f32).sqrt()
            })
            .collect();
        let w: Vec<f32> = (0..n * k).map(|_| rng.unit() * 0.1).collect();
        let ww = Weights::nxk(&w, k);
        let mut hb = vec![0f64; Hessian::buffer_len(k).unwrap()];
        let mut h = Hessian::new(&mut hb, k).unwrap();
        h.add(&x, m, k).unwrap();
        let mut diag = vec![0f32; k];
        h.diagonal(&mut diag).unwrap();
        let mut work = vec![0f64; gptq::workspace_len(n, k).unwrap()];
        let err = |wq: &[f32]| output_error(&x, m, k, &w, wq, n);

        // int4 per channel.
        let (mut codes, mut scale) = (vec![0u8; n * k / 2], vec![0f32; n]);
        let deq = |codes: &[u8], scale: &[f32]| -> Vec<f32> {
            (0..n * k).map(|e| f32::from(nibble(codes, e / k * k / 2, e % k)) * scale[e / k]).collect()
        };
        let mut plain = Vec::new();
        for method in [Method::RoundToNearest, Method::Search, Method::WeightedSearch(&diag)] {
            quant::qsi4cxp::quantize(method, n, k, &ww, &mut codes, &mut scale).unwrap();
            plain.push(err(&deq(&codes, &scale)));
        }
        gptq::qsi4cxp(None, n, k, &ww, &h, 0.01, &mut work, &mut codes, &mut scale).unwrap();
        let g = err(&deq(&codes, &scale));
        gptq::qsi4cxp(Some(Method::RoundToNearest), n, k, &ww, &h, 0.01, &mut work, &mut codes, &mut scale).unwrap();
        let g_rtn = err(&deq(&codes, &scale));
        eprintln!("k {k} qsi4cxp: plain (rtn, search, weighted) {plain:?}, gptq {g} (with rtn scales {g_rtn})");
        let best = plain.iter().fold(f64::INFINITY, |a, &b| a.min(b));
        assert!(g < 0.75 * best && g_rtn < 0.75 * best, "k {k} qsi4cxp: gptq {g} / {g_rtn}, plain {plain:?}");

        // int4 per block of 32, bf16 scales.
        let bl = 32;
        let mut bs = vec![bf16::ZERO; n * k / bl];
        let deq = |codes: &[u8], bs: &[bf16]| -> Vec<f32> {
            (0..n * k).map(|e| f32::from(nibble(codes, e / k * k / 2, e % k)) * bs[e / bl].to_f32()).collect()
        };
        let mut plain = Vec::new();
        for method in [Method::RoundToNearest, Method::Search, Method::WeightedSearch(&diag)] {
            quant::qsi4c32p::quantize(method, n, k, bl, &ww, &mut codes, &mut bs).unwrap();
            plain.push(err(&deq(&codes, &bs)));
        }
        gptq::qsi4c32p(None, n, k, bl, &ww, &h, 0.01, &mut work, &mut codes, &mut bs).unwrap();
        let g = err(&deq(&codes, &bs));
        gptq::qsi4c32p(Some(Method::RoundToNearest), n, k, bl, &ww, &h, 0.01, &mut work, &mut codes, &mut bs).unwrap();
        let g_rtn = err(&deq(&codes, &bs));
        eprintln!("k {k} qsi4c32p: plain (rtn, search, weighted) {plain:?}, gptq {g} (with rtn scales {g_rtn})");
        let best = plain.iter().fold(f64::INFINITY, |a, &b| a.min(b));
        assert!(g < 0.75 * best && g_rtn < 0.75 * best, "k {k} qsi4c32p: gptq {g} / {g_rtn}, plain {plain:?}");

        // Q4_0 (f16 blocks) and int8 per channel.
        let mut blocks = vec![0u8; quant::q4_0::size(n, k, bl).unwrap()];
        let deq = |blocks: &[u8]| -> Vec<f32> {
            (0..n * k)
                .map(|e| {
                    let (c, j) = (e / k, e % k);
                    let blk = &blocks[(c * k / bl + j / bl) * 18..];
                    let jj = j % bl;
                    let u = (blk[2 + jj % 16] >> (4 * (jj / 16))) & 0xf;
                    (i32::from(u) - 8) as f32 * f16::from_le_bytes([blk[0], blk[1]]).to_f32()
                })
                .collect()
        };
        quant::q4_0::quantize(Method::SignedMax, n, k, bl, &ww, &mut blocks).unwrap();
        let p = err(&deq(&blocks));
        gptq::q4_0(Some(Method::SignedMax), n, k, bl, &ww, &h, 0.01, &mut work, &mut blocks).unwrap();
        let g = err(&deq(&blocks));
        eprintln!("k {k} q4_0 (signed max): plain {p}, gptq {g}");
        assert!(g < 0.75 * p, "k {k} q4_0: gptq {g}, plain {p}");
        let mut q8 = vec![0i8; n * k];
        let deq =
            |q8: &[i8], scale: &[f32]| -> Vec<f32> { (0..n * k).map(|e| f32::from(q8[e]) * scale[e / k]).collect() };
        quant::qsi8cxp::quantize(Method::RoundToNearest, n, k, &ww, &mut q8, &mut scale).unwrap();
        let p = err(&deq(&q8, &scale));
        gptq::qsi8cxp(Some(Method::RoundToNearest), n, k, &ww, &h, 0.01, &mut work, &mut q8, &mut scale).unwrap();
        let g = err(&deq(&q8, &scale));
        eprintln!("k {k} qsi8cxp (rtn): plain {p}, gptq {g}");
        assert!(g < 0.75 * p, "k {k} qsi8cxp: gptq {g}, plain {p}");
    }
}

#[test]
fn divide_depths_checks_and_divides_both_layouts() {
    let mut rng = Rng(5);
    let (n, k) = (6, 40);
    let w = weights(&mut rng, n, k);
    let scale: Vec<f32> = (0..k).map(|j| 0.25 + j as f32 / 8.0).collect();
    let (mut a, mut b) = (w.clone(), transpose(&w, n, k));
    quant::divide_depths(n, k, &mut a, Layout::NxK, k, &scale).unwrap();
    quant::divide_depths(n, k, &mut b, Layout::KxN, n, &scale).unwrap();
    for c in 0..n {
        for j in 0..k {
            assert_eq!(a[c * k + j], w[c * k + j] / scale[j]);
            assert_eq!(b[j * n + c], a[c * k + j]);
        }
    }
    let mut bad = scale.clone();
    bad[3] = 0.0;
    let before = a.clone();
    let e = quant::divide_depths(n, k, &mut a, Layout::NxK, k, &bad).unwrap_err();
    assert_eq!(e, Error::NonFinite { buffer: Buffer::InputScale, index: 3 });
    bad[3] = f32::NAN;
    assert_eq!(quant::divide_depths(n, k, &mut a, Layout::NxK, k, &bad).unwrap_err(), e);
    assert_eq!(
        quant::divide_depths(n, k, &mut a, Layout::NxK, k, &scale[..k - 1]).unwrap_err(),
        Error::BufferTooShort { buffer: Buffer::InputScale, given: k - 1, needed: k }
    );
    assert!(matches!(
        quant::divide_depths(n, k, &mut a[1..], Layout::NxK, k, &scale),
        Err(Error::BufferTooShort { .. })
    ));
    assert!(matches!(
        quant::divide_depths(n, k, &mut a, Layout::NxK, k - 1, &scale),
        Err(Error::StrideTooSmall { .. })
    ));
    assert!(matches!(quant::divide_depths(0, k, &mut a, Layout::NxK, k, &scale), Err(Error::ZeroDim { .. })));
    assert_eq!(a, before, "a rejected call wrote");
}

/// GPTQ and AWQ through the kernels: weights quantized by GPTQ (with and without an input scale
/// folded in), packed and run by `Linear` (with the scale at run time) stay within the error
/// bound of both quantizations, and on activations with outlier channels both beat round to
/// nearest on the layer's output.
#[test]
fn gptq_and_input_scale_round_trip_through_the_kernels() {
    let cpu = CpuFeatures::detect();
    let mut rng = Rng(6);
    let (m, n, k, bl) = (96, 16, 128, 32);
    // Every 17th input channel is an outlier, 20 times larger.
    let x: Vec<f32> = (0..m * k).map(|e| rng.unit() * if e % k % 17 == 0 { 20.0 } else { 1.0 }).collect();
    let w: Vec<f32> = (0..n * k).map(|_| rng.unit() * 0.2).collect();
    let exact: Vec<f64> =
        (0..m * n).map(|e| (0..k).map(|j| f64::from(x[e / n * k + j]) * f64::from(w[e % n * k + j])).sum()).collect();
    let out_err = |y: &[f32]| y.iter().zip(&exact).map(|(&a, b)| (f64::from(a) - b).powi(2)).sum::<f64>().sqrt();
    let row_step = |x: &[f32], i: usize| {
        let r = &x[i * k..(i + 1) * k];
        (r.iter().fold(0f32, |a, &v| a.max(v)) - r.iter().fold(0f32, |a, &v| a.min(v))) / 255.0
    };
    let deq = |codes: &[u8], bs: &[bf16]| -> Vec<f32> {
        (0..n * k).map(|e| f32::from(nibble(codes, e / k * k / 2, e % k)) * bs[e / bl].to_f32()).collect()
    };
    // Quantizes `w` (int4 per block, bf16) by GPTQ over the activations `xs` (`None`: plain
    // round to nearest), packs it and runs the layer on `x` with `input_scale`.
    let run = |w: &[f32], xs: Option<&[f32]>, input_scale: Option<&[f32]>| -> (Vec<f32>, Vec<f32>) {
        let (mut codes, mut bs) = (vec![0u8; n * k / 2], vec![bf16::ZERO; n * k / bl]);
        let ww = Weights::nxk(w, k);
        match xs {
            None => quant::qsi4c32p::quantize(Method::RoundToNearest, n, k, bl, &ww, &mut codes, &mut bs).unwrap(),
            Some(xs) => {
                let mut hb = vec![0f64; Hessian::buffer_len(k).unwrap()];
                let mut h = Hessian::new(&mut hb, k).unwrap();
                h.add(xs, m, k).unwrap();
                let mut work = vec![0f64; gptq::workspace_len(n, k).unwrap()];
                gptq::qsi4c32p(None, n, k, bl, &ww, &h, 0.01, &mut work, &mut codes, &mut bs).unwrap();
            }
        }
        let mut buf = vec![0u8; Linear::<Qai8dxpQsi4c32p>::packed_size(n, k, bl).unwrap()];
        let src = Int4Source::nxk(&codes, k, Int4Encoding::Signed);
        let mut l =
            Linear::<Qai8dxpQsi4c32p>::pack(n, k, bl, &src, &BlockScales::dense(&bs, k / bl), None, &mut buf).unwrap();
        if let Some(s) = input_scale {
            l = l.with_input_scale(s).unwrap();
        }
        let mut s = vec![0u8; l.scratch_size(m).unwrap()];
        let mut y = vec![0f32; m * n];
        l.run(&cpu, m, &x, &mut y, &mut s).unwrap();
        (y, deq(&codes, &bs))
    };

    let (y_rtn, wq) = run(&w, None, None);
    check_bound("rtn", m, n, k, &x, &w, &wq, |i, _| row_step(&x, i), &y_rtn);
    let (y_gptq, wq) = run(&w, Some(&x), None);
    check_bound("gptq", m, n, k, &x, &w, &wq, |i, _| row_step(&x, i), &y_gptq);

    // AWQ: activations multiplied by `mult_j = mean|x_j|^-1/2` at run time, weights divided by it.
    let mean: Vec<f32> = (0..k).map(|j| (0..m).map(|i| x[i * k + j].abs()).sum::<f32>() / m as f32).collect();
    let mult: Vec<f32> = mean.iter().map(|a| 1.0 / a.sqrt()).collect();
    let xs: Vec<f32> = x.iter().enumerate().map(|(e, v)| v * mult[e % k]).collect();
    let mut ws = w.clone();
    quant::divide_depths(n, k, &mut ws, Layout::NxK, k, &mult).unwrap();
    let (y_awq, wq) = run(&ws, Some(&xs), Some(&mult));
    check_bound("awq + gptq", m, n, k, &xs, &ws, &wq, |i, _| row_step(&xs, i), &y_awq);

    let (e_rtn, e_gptq, e_awq) = (out_err(&y_rtn), out_err(&y_gptq), out_err(&y_awq));
    eprintln!("output error: rtn {e_rtn}, gptq {e_gptq}, awq + gptq {e_awq}");
    assert!(e_gptq < 0.8 * e_rtn && e_awq < 0.8 * e_rtn, "rtn {e_rtn}, gptq {e_gptq}, awq + gptq {e_awq}");
}
