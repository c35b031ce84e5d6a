//! The one-call path `Linear::quantize_pack` (`op::QuantizePack`) of every family: the packed
//! bytes equal the format's quantizer followed by the family's `Linear::pack` done by hand (NxK
//! and KxN weights, f32, f16 and bf16 elements, every method, a workspace at any alignment);
//! the layer's output is within the error bound of the two quantizations of the f32 matmul
//! (docs/model.md, "Weight quantization"); bad calls are rejected with nothing written to the
//! packed buffer.

use qgemm::error::{Buffer, Dim, Param};
use qgemm::half::{bf16, f16};
use qgemm::op::{Linear, QuantizePack};
use qgemm::quant::{self, Method, Weights};
use qgemm::rhs::qsi4c32p::BlockScales;
use qgemm::rhs::qsi8cxp::Int8Source;
use qgemm::rhs::{Int4Encoding, Int4Source};
use qgemm::{CpuFeatures, Element, Error};

use qgemm::bf16_qai8dxp_qsi4c32p::Bf16Qai8dxpQsi4c32p;
use qgemm::bf16_qai8dxp_qsi4cxp::Bf16Qai8dxpQsi4cxp;
use qgemm::f16_qai8dxp_qsi4cxp::F16Qai8dxpQsi4cxp;
use qgemm::f16_qai8dxp_qsi8cxp::F16Qai8dxpQsi8cxp;
use qgemm::f16_qsi8d32p_qai4c32p::F16Qsi8d32pQai4c32p;
use qgemm::qai8dxp_qsi4c32p::Qai8dxpQsi4c32p;
use qgemm::qai8dxp_qsi4cxp::Qai8dxpQsi4cxp;
use qgemm::qai8dxp_qsi8cxp::Qai8dxpQsi8cxp;
use qgemm::qai8dxp_qsu2cxp::Qai8dxpQsu2cxp;
use qgemm::qsi8d32p_qai4c32p::Qsi8d32pQai4c32p;
use qgemm::qsi8d32p_qsi4c32p::Qsi8d32pQsi4c32p;

#[path = "common/lcg.rs"]
mod lcg;
use lcg::Rng;

const N: usize = 13;
const K: usize = 128;
const M: usize = 5;

/// Random weights, per-channel magnitudes over 3 decades, a few outliers and a zero channel.
fn weights(rng: &mut Rng) -> Vec<f32> {
    let mut w = vec![0f32; N * K];
    for c in 0..N {
        let mag = 10f32.powi(c as i32 % 3 - 2);
        for j in 0..K {
            let v = rng.unit() * mag * if rng.next().is_multiple_of(41) { 6.0 } else { 1.0 };
            w[c * K + j] = if c == 4 { 0.0 } else { v };
        }
    }
    w
}

fn transpose<T: Copy>(w: &[T]) -> Vec<T> {
    (0..K * N).map(|i| w[(i % N) * K + i / N]).collect()
}

fn signed_nibble(b: u8, high: bool) -> f32 {
    f32::from((((if high { b >> 4 } else { b }) & 0xf) << 4) as i8 >> 4)
}

/// What the activation quantization of a family costs at most, per depth: a full step of the
/// row (`qai8dxp`) or of the block of `bl` (`qsi8d32p`, `qsi8d32pscalef32`).
#[derive(Clone, Copy)]
enum Act {
    Row,
    Block(usize),
}

impl Act {
    fn step(self, x: &[f32], j: usize) -> f32 {
        match self {
            Act::Row => (x.iter().fold(0f32, |a, &v| a.max(v)) - x.iter().fold(0f32, |a, &v| a.min(v))) / 255.0,
            Act::Block(bl) => x[j / bl * bl..(j / bl + 1) * bl].iter().fold(0f32, |a, v| a.max(v.abs())) / 127.0,
        }
    }
}

/// A workspace of `size` bytes starting 1 byte past an 8-byte boundary (so every typed part
/// needs its alignment slack), filled with `fill`.
fn workspace(size: usize, fill: u8) -> (Vec<u64>, usize) {
    (vec![u64::from_ne_bytes([fill; 8]); size / 8 + 2], size)
}

fn ws_bytes(v: &mut [u64], size: usize) -> &mut [u8] {
    // A view of the u64 storage as bytes, from byte 1.
    let bytes: &mut [u8] = bytemuck_bytes(v);
    &mut bytes[1..1 + size]
}

fn bytemuck_bytes(v: &mut [u64]) -> &mut [u8] {
    let len = v.len() * 8;
    // SAFETY: the u64 slice is `len` initialized bytes, u8 has no alignment, and the returned
    // slice borrows `v` mutably for its lifetime.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), len) }
}

/// Checks family `F` with block length `bl` (0: per channel): for each method, `quantize_pack`
/// against `hand` (quantizer + `Linear::pack`; returns the packed bytes and the dequantized
/// weights) on NxK/KxN f32, f16 and bf16 weights, then the run against the f32 matmul, then the
/// errors.
fn check<'a, F: QuantizePack>(
    bl: usize,
    methods: &[F::Method<'a>],
    bias: Option<&[f32]>,
    act: Act,
    hand: impl Fn(&Weights<'_, f32>, F::Method<'a>, &mut [u8]) -> Vec<f32>,
) {
    let name = F::NAME;
    let mut rng = Rng(7 + bl as u64);
    let w = weights(&mut rng);
    let x: Vec<F::Src> = (0..M * K).map(|_| F::Src::from_f32(rng.unit() * 2.0)).collect();
    let xf: Vec<f32> = x.iter().map(|v| v.to_f32()).collect();
    let size = Linear::<F>::weights_size(N, K, bl).unwrap();
    let ws_size = F::quantize_workspace_size(N, K, bl).unwrap();
    let cpu = CpuFeatures::detect();
    let w16: Vec<f16> = w.iter().map(|&v| f16::from_f32(v)).collect();
    let wb16: Vec<bf16> = w.iter().map(|&v| bf16::from_f32(v)).collect();
    let (wt, w16t, wb16t) = (transpose(&w), transpose(&w16), transpose(&wb16));
    for &method in methods {
        // The hand path, from f32 weights and from the f16 and bf16 weights widened.
        let mut want = vec![0u8; size];
        let wq = hand(&Weights::nxk(&w, K), method, &mut want);
        let mut want16 = vec![0u8; size];
        let w16f: Vec<f32> = w16.iter().map(|v| v.to_f32()).collect();
        hand(&Weights::nxk(&w16f, K), method, &mut want16);
        let mut wantb16 = vec![0u8; size];
        let wb16f: Vec<f32> = wb16.iter().map(|v| v.to_f32()).collect();
        hand(&Weights::nxk(&wb16f, K), method, &mut wantb16);
        let (mut ws, _) = workspace(ws_size, 0xa5);
        let mut buf = vec![0x5au8; size + 3];
        macro_rules! same {
            ($w:expr, $want:expr, $what:literal) => {{
                buf.fill(0x5a);
                let layer =
                    F::quantize_pack_weights(&$w, N, K, bl, method, bias, ws_bytes(&mut ws, ws_size), &mut buf[..size])
                        .unwrap();
                assert_eq!((layer.n(), layer.k(), layer.bl()), (N, K, bl));
                assert!(buf[..size] == $want[..], "{name} {}: bytes differ from the hand path", $what);
            }};
        }
        same!(Weights::nxk(&w16, K), want16, "f16 nxk");
        same!(Weights::kxn(&wb16t, N), wantb16, "bf16 kxn");
        same!(Weights::kxn(&w16t, N), want16, "f16 kxn");
        same!(Weights::kxn(&wt, N), want, "f32 kxn");
        same!(Weights::nxk(&w, K), want, "f32 nxk");
        assert!(buf[size..].iter().all(|&b| b == 0x5a), "{name}: wrote past the packed size");

        // The run against the f32 matmul: the weight error plus one activation step per depth.
        let layer = requantized::<F>(&w, bl, method, bias, &mut buf[..size]);
        let mut scratch = vec![0u8; layer.scratch_size(M).unwrap()];
        let mut y = vec![F::Dst::default(); M * N];
        layer.run(&cpu, M, &x, &mut y, &mut scratch).unwrap();
        let out_rel = 1.0
            / f64::from(
                1u32 << (if F::Dst::SIZE == 4 {
                    23
                } else if F::Dst::NAME == "f16" {
                    10
                } else {
                    7
                }),
            );
        for i in 0..M {
            let xr = &xf[i * K..(i + 1) * K];
            for c in 0..N {
                let (mut exact, mut bound, mut mag) = (bias.map_or(0.0, |b| f64::from(b[c])), 0f64, 0f64);
                for j in 0..K {
                    let (xv, wv, qv) = (f64::from(xr[j]), f64::from(w[c * K + j]), f64::from(wq[c * K + j]));
                    exact += xv * wv;
                    bound += xv.abs() * (wv - qv).abs() + qv.abs() * f64::from(act.step(xr, j));
                    mag += (xv * qv).abs();
                }
                let got = f64::from(y[i * N + c].to_f32());
                let slack = bound * 1.0001 + mag * 1e-5 + (exact.abs() + bound) * out_rel + 1e-30;
                assert!((got - exact).abs() <= slack, "{name}: y[{i}][{c}] = {got}, f32 {exact}, bound {slack}");
            }
        }
    }

    // Errors; nothing written to `buf` by any of them.
    let method = methods[0];
    let (mut ws, _) = workspace(ws_size, 0);
    let mut buf = vec![0x5au8; size];
    let ww = Weights::nxk(&w, K);
    let e =
        F::quantize_pack_weights(&ww, N, K, bl, method, bias, &mut ws_bytes(&mut ws, ws_size)[..ws_size - 1], &mut buf);
    assert_eq!(
        e.unwrap_err(),
        Error::BufferTooShort { buffer: Buffer::Workspace, given: ws_size - 1, needed: ws_size }
    );
    let e = F::quantize_pack_weights(&ww, N, K, bl, method, bias, ws_bytes(&mut ws, ws_size), &mut buf[..size - 1]);
    assert_eq!(e.unwrap_err(), Error::BufferTooShort { buffer: Buffer::RhsPacked, given: size - 1, needed: size });
    let mut bad = w.clone();
    bad[K + 3] = f32::NAN;
    let e =
        F::quantize_pack_weights(&Weights::nxk(&bad, K), N, K, bl, method, bias, ws_bytes(&mut ws, ws_size), &mut buf);
    assert_eq!(e.unwrap_err(), Error::NonFinite { buffer: Buffer::Rhs, index: K + 3 }, "{name}");
    let badt = transpose(&bad);
    let e =
        F::quantize_pack_weights(&Weights::kxn(&badt, N), N, K, bl, method, bias, ws_bytes(&mut ws, ws_size), &mut buf);
    assert_eq!(e.unwrap_err(), Error::NonFinite { buffer: Buffer::Rhs, index: 3 * N + 1 }, "{name}");
    let e = F::quantize_pack_weights(&ww, N, 0, bl, method, bias, ws_bytes(&mut ws, ws_size), &mut buf);
    assert_eq!(e.unwrap_err(), Error::ZeroDim { dim: Dim::K }, "{name}");
    let e = F::quantize_pack_weights(&ww, 0, K, bl, method, bias, ws_bytes(&mut ws, ws_size), &mut buf);
    assert_eq!(e.unwrap_err(), Error::ZeroDim { dim: Dim::N });
    // A bad block length: 16 for the per-block families, any for the per-channel ones.
    let bad_bl = if F::BLOCKED { 16 } else { 32 };
    let want = if F::BLOCKED {
        Error::NotMultiple { dim: Dim::BlockLen, value: 16, multiple_of: 32 }
    } else {
        Error::Unsupported { param: Param::BlockLen, value: 32 }
    };
    assert_eq!(F::quantize_workspace_size(N, K, bad_bl), Err(want));
    let e = F::quantize_pack_weights(&ww, N, K, bad_bl, method, bias, ws_bytes(&mut ws, ws_size), &mut buf);
    assert_eq!(e.unwrap_err(), want, "{name}");
    // A short or non-finite bias.
    if let Some(b) = bias {
        let e =
            F::quantize_pack_weights(&ww, N, K, bl, method, Some(&b[..N - 1]), ws_bytes(&mut ws, ws_size), &mut buf);
        assert_eq!(e.unwrap_err(), Error::BufferTooShort { buffer: Buffer::Bias, given: N - 1, needed: N });
        let mut nb = b.to_vec();
        nb[2] = f32::INFINITY;
        let e = F::quantize_pack_weights(&ww, N, K, bl, method, Some(&nb), ws_bytes(&mut ws, ws_size), &mut buf);
        assert_eq!(e.unwrap_err(), Error::NonFinite { buffer: Buffer::Bias, index: 2 });
    }
    assert!(buf.iter().all(|&b| b == 0x5a), "{name}: a rejected call wrote the packed buffer");
}

/// The layer `quantize_pack` gives for f32 NxK weights (the one the run check uses).
fn requantized<'w, F: QuantizePack>(
    w: &[f32],
    bl: usize,
    method: F::Method<'_>,
    bias: Option<&[f32]>,
    buf: &'w mut [u8],
) -> Linear<'w, F> {
    let mut ws = vec![0u8; F::quantize_workspace_size(N, K, bl).unwrap()];
    F::quantize_pack_weights(&Weights::nxk(w, K), N, K, bl, method, bias, &mut ws, buf).unwrap()
}

fn importance() -> Vec<f32> {
    (0..K).map(|j| 0.1 + (j % 7) as f32).collect()
}

fn bias() -> Vec<f32> {
    (0..N).map(|c| c as f32 * 0.01 - 0.05).collect()
}

/// The hand path of the int4 per-channel families.
macro_rules! qsi4cxp_hand {
    ($fam:ty, $bias:expr) => {
        |w, m, out| {
            let (mut codes, mut scale) = (vec![0u8; N * K / 2], vec![0f32; N]);
            quant::qsi4cxp::quantize(m, N, K, w, &mut codes, &mut scale).unwrap();
            let src = Int4Source::nxk(&codes, K, Int4Encoding::Signed);
            Linear::<$fam>::pack(N, K, &src, &scale, $bias, out).unwrap();
            (0..N * K).map(|e| signed_nibble(codes[e / 2], e % 2 == 1) * scale[e / K]).collect()
        }
    };
}

/// The hand path of the int8 per-channel families.
macro_rules! qsi8cxp_hand {
    ($fam:ty, $bias:expr) => {
        |w, m, out| {
            let (mut codes, mut scale) = (vec![0i8; N * K], vec![0f32; N]);
            quant::qsi8cxp::quantize(m, N, K, w, &mut codes, &mut scale).unwrap();
            Linear::<$fam>::pack(N, K, &Int8Source::nxk(&codes, K), &scale, $bias, out).unwrap();
            (0..N * K).map(|e| f32::from(codes[e]) * scale[e / K]).collect()
        }
    };
}

/// The hand path of the int4 per-block families with bf16 scales.
macro_rules! qsi4c32p_hand {
    ($fam:ty, $bl:expr, $bias:expr) => {
        |w, m, out| {
            let bl = $bl;
            let (mut codes, mut scale) = (vec![0u8; N * K / 2], vec![bf16::ZERO; N * K / bl]);
            quant::qsi4c32p::quantize(m, N, K, bl, w, &mut codes, &mut scale).unwrap();
            let src = Int4Source::nxk(&codes, K, Int4Encoding::Signed);
            Linear::<$fam>::pack(N, K, bl, &src, &BlockScales::dense(&scale, K / bl), $bias, out).unwrap();
            (0..N * K).map(|e| signed_nibble(codes[e / 2], e % 2 == 1) * scale[e / bl].to_f32()).collect()
        }
    };
}

/// The hand path of the asymmetric int4 families.
macro_rules! qai4c32p_hand {
    ($fam:ty, $bl:expr, $bias:expr) => {
        |w: &Weights<'_, f32>, m, out| {
            let bl = $bl;
            let (mut codes, mut zero, mut scale) =
                (vec![0u8; N * K / 2], vec![0f32; N * K / bl], vec![0f32; N * K / bl]);
            quant::qai4c32p::quantize(m, N, K, bl, w.data, w.stride, &mut codes, &mut zero, &mut scale).unwrap();
            Linear::<$fam>::pack(N, K, bl, &codes, K / 2, &zero, &scale, $bias, out).unwrap();
            (0..N * K)
                .map(|e| {
                    let u = if e % 2 == 0 { codes[e / 2] >> 4 } else { codes[e / 2] & 0xf };
                    (f32::from(u) - 8.0) * scale[e / bl] + zero[e / bl]
                })
                .collect()
        }
    };
}

#[test]
fn qai8dxp_qsi4cxp() {
    let (imp, b) = (importance(), bias());
    let methods = [Method::RoundToNearest, Method::SignedMax, Method::Search, Method::WeightedSearch(&imp)];
    check::<Qai8dxpQsi4cxp>(0, &methods, Some(&b), Act::Row, qsi4cxp_hand!(Qai8dxpQsi4cxp, Some(&b)));
    check::<F16Qai8dxpQsi4cxp>(0, &methods, None, Act::Row, qsi4cxp_hand!(F16Qai8dxpQsi4cxp, None));
    check::<Bf16Qai8dxpQsi4cxp>(0, &methods, Some(&b), Act::Row, qsi4cxp_hand!(Bf16Qai8dxpQsi4cxp, Some(&b)));
}

#[test]
fn qai8dxp_qsi8cxp() {
    let (imp, b) = (importance(), bias());
    let methods = [Method::RoundToNearest, Method::SignedMax, Method::Search, Method::WeightedSearch(&imp)];
    check::<Qai8dxpQsi8cxp>(0, &methods, Some(&b), Act::Row, qsi8cxp_hand!(Qai8dxpQsi8cxp, Some(&b)));
    check::<F16Qai8dxpQsi8cxp>(0, &methods, Some(&b), Act::Row, qsi8cxp_hand!(F16Qai8dxpQsi8cxp, Some(&b)));
}

#[test]
fn qai8dxp_qsi4c32p() {
    let (imp, b) = (importance(), bias());
    let methods = [Method::RoundToNearest, Method::SignedMax, Method::Search, Method::WeightedSearch(&imp)];
    for bl in [32, 64] {
        check::<Qai8dxpQsi4c32p>(bl, &methods, Some(&b), Act::Row, qsi4c32p_hand!(Qai8dxpQsi4c32p, bl, Some(&b)));
        check::<Bf16Qai8dxpQsi4c32p>(bl, &methods, None, Act::Row, qsi4c32p_hand!(Bf16Qai8dxpQsi4c32p, bl, None));
    }
}

#[test]
fn qsi8d32p_qsi4c32p() {
    let imp = importance();
    let methods = [Method::RoundToNearest, Method::SignedMax, Method::Search, Method::WeightedSearch(&imp)];
    for bl in [32, 64] {
        let rb = 2 + bl / 2;
        check::<Qsi8d32pQsi4c32p>(bl, &methods, None, Act::Block(bl), |w, m, out| {
            let mut blocks = vec![0u8; quant::q4_0::size(N, K, bl).unwrap()];
            quant::q4_0::quantize(m, N, K, bl, w, &mut blocks).unwrap();
            Linear::<Qsi8d32pQsi4c32p>::pack(N, K, bl, &blocks, K / bl * rb, out).unwrap();
            (0..N * K)
                .map(|e| {
                    let blk = &blocks[e / bl * rb..];
                    let (d, j) = (f16::from_le_bytes([blk[0], blk[1]]).to_f32(), e % bl);
                    let u = (blk[2 + j % (bl / 2)] >> (4 * (j / (bl / 2)))) & 0xf;
                    (f32::from(u) - 8.0) * d
                })
                .collect()
        });
    }
    // This family's packing has no bias.
    let w = vec![0.5f32; N * K];
    let mut ws = vec![0u8; Linear::<Qsi8d32pQsi4c32p>::quantize_workspace_size(N, K, 32).unwrap()];
    let mut buf = vec![0x5au8; Linear::<Qsi8d32pQsi4c32p>::packed_size(N, K, 32).unwrap()];
    let b = bias();
    let e = <Qsi8d32pQsi4c32p as QuantizePack>::quantize_pack_weights(
        &Weights::nxk(&w, K),
        N,
        K,
        32,
        Method::RoundToNearest,
        Some(&b),
        &mut ws,
        &mut buf,
    );
    assert_eq!(e.unwrap_err(), Error::Unsupported { param: Param::Bias, value: N });
    assert!(buf.iter().all(|&v| v == 0x5a));
}

#[test]
fn qsi8d32p_qai4c32p() {
    let b = bias();
    let methods = [quant::qai4c32p::Method::MinMax, quant::qai4c32p::Method::Fitted];
    for bl in [32, 128] {
        check::<Qsi8d32pQai4c32p>(
            bl,
            &methods,
            Some(&b),
            Act::Block(bl),
            qai4c32p_hand!(Qsi8d32pQai4c32p, bl, Some(&b)),
        );
        check::<F16Qsi8d32pQai4c32p>(bl, &methods, None, Act::Block(bl), qai4c32p_hand!(F16Qsi8d32pQai4c32p, bl, None));
    }
}

#[test]
fn qai8dxp_qsu2cxp() {
    let b = bias();
    let table = [-3, -1, 1, 3];
    let luts = [None, Some(&table)];
    check::<Qai8dxpQsu2cxp>(0, &luts, Some(&b), Act::Row, |w: &Weights<'_, f32>, lut: Option<&[i32; 4]>, out| {
        let (mut codes, mut scale) = (vec![0u8; N * K / 4], vec![0f32; N]);
        quant::qsu2cxp::quantize(N, K, w.data, w.stride, lut, &mut codes, &mut scale).unwrap();
        Linear::<Qai8dxpQsu2cxp>::pack(N, K, &codes, K / 4, &scale, Some(&b), lut, out).unwrap();
        let lut = lut.copied().unwrap_or(qgemm::rhs::qsu2cxp::DEFAULT_LUT);
        (0..N * K).map(|e| scale[e / K] * lut[usize::from((codes[e / 4] >> (2 * (e % 4))) & 3)] as f32).collect()
    });
    // The layer carries the table; a bad table is rejected before anything is written.
    let w = vec![0.25f32; N * K];
    let mut ws = vec![0u8; Linear::<Qai8dxpQsu2cxp>::quantize_workspace_size(N, K).unwrap()];
    let mut buf = vec![0x5au8; Linear::<Qai8dxpQsu2cxp>::packed_size(N, K).unwrap()];
    for (lut, want) in [(None, qgemm::rhs::qsu2cxp::DEFAULT_LUT), (Some(&table), table)] {
        let l = Linear::<Qai8dxpQsu2cxp>::quantize_pack(&Weights::nxk(&w, K), N, K, None, lut, &mut ws, &mut buf);
        assert_eq!(l.unwrap().lut(), want);
    }
    buf.fill(0x5a);
    let wt = transpose(&w);
    for (bad, index, value) in [([0, 0, 0, 0], 0, 0), ([1, 64, 0, 0], 1, 64)] {
        let l =
            Linear::<Qai8dxpQsu2cxp>::quantize_pack(&Weights::kxn(&wt, N), N, K, None, Some(&bad), &mut ws, &mut buf);
        assert_eq!(l.unwrap_err(), Error::LutOutOfRange { index, value });
    }
    assert!(buf.iter().all(|&v| v == 0x5a));
}

/// The inherent functions are the trait's (one family of each signature shape).
#[test]
fn inherent_functions_are_the_traits() {
    let mut rng = Rng(11);
    let w = weights(&mut rng);
    let b = bias();
    let ww = Weights::nxk(&w, K);
    type A<'w> = Linear<'w, Qai8dxpQsi4cxp>;
    let mut ws = vec![0u8; A::quantize_workspace_size(N, K).unwrap()];
    assert_eq!(ws.len(), <Qai8dxpQsi4cxp as QuantizePack>::quantize_workspace_size(N, K, 0).unwrap());
    let (mut b1, mut b2) = (vec![0u8; A::packed_size(N, K).unwrap()], vec![1u8; A::packed_size(N, K).unwrap()]);
    A::quantize_pack(&ww, N, K, Method::Search, Some(&b), &mut ws, &mut b1).unwrap();
    Qai8dxpQsi4cxp::quantize_pack_weights(&ww, N, K, 0, Method::Search, Some(&b), &mut ws, &mut b2).unwrap();
    assert_eq!(b1, b2);
    type B<'w> = Linear<'w, F16Qsi8d32pQai4c32p>;
    let mut ws = vec![0u8; B::quantize_workspace_size(N, K, 32).unwrap()];
    let (mut b1, mut b2) = (vec![0u8; B::packed_size(N, K, 32).unwrap()], vec![1u8; B::packed_size(N, K, 32).unwrap()]);
    B::quantize_pack(&ww, N, K, 32, quant::qai4c32p::Method::Fitted, None, &mut ws, &mut b1).unwrap();
    F16Qsi8d32pQai4c32p::quantize_pack_weights(&ww, N, K, 32, quant::qai4c32p::Method::Fitted, None, &mut ws, &mut b2)
        .unwrap();
    assert_eq!(b1, b2);
    // The workspace sizes count the codes, the scales and the alignment slack.
    assert_eq!(A::quantize_workspace_size(N, K).unwrap(), N * K / 2 + 4 * N + 3);
    assert_eq!(Linear::<Qai8dxpQsi8cxp>::quantize_workspace_size(N, K).unwrap(), N * K + 4 * N + 3);
    assert_eq!(Linear::<Qai8dxpQsi4c32p>::quantize_workspace_size(N, K, 32).unwrap(), N * K / 2 + 2 * N * K / 32 + 1);
    assert_eq!(
        Linear::<Qsi8d32pQsi4c32p>::quantize_workspace_size(N, K, 32).unwrap(),
        quant::q4_0::size(N, K, 32).unwrap()
    );
}
